#!/usr/bin/env bash
# Installs the Debian 12 packages the project builds, tests and plots with.
# CUDA and cuDNN are not Debian packages: the build uses them when nvcc is found.
set -euo pipefail
pkgs=(build-essential cmake ninja-build git
      libboost-program-options-dev libeigen3-dev nlohmann-json3-dev
      libbenchmark-dev doctest-dev libglpk-dev python3 python3-matplotlib
      pybind11-dev python3-dev python3-pandas python3-distributed python3-pytest  # the Python module salus (python/)
      time)  # /usr/bin/time -v: scripts/bench-process.sh
# The fuzz build (fuzz/README.md, cmake -DSALUS_FUZZ=ON) needs clang and its libFuzzer runtime;
# only then: SALUS_FUZZ=1 bash scripts/install-deps.sh.
if [ "${SALUS_FUZZ:-0}" = 1 ]; then
  pkgs+=(clang)
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all packages present"
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends "${missing[@]}"
