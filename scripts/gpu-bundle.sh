#!/usr/bin/env bash
# Builds a self-contained bundle for a GPU machine that has only a driver, CUDA 13 and a Python
# environment with NVIDIA's wheels (cuBLAS, cuDNN 9), no Debian packages and no network:
#
#   bash scripts/gpu-bundle.sh DIR        # then, on the GPU machine: DIR/validate.sh plan | call1 OUT | ...
#
# DIR/bin holds salus-run, salus-profile, salus-sim, salus-experiment, salus-trace, the CUDA test program
# (test_gpu_cuda) and the backend benchmark (backend_bench), built Release for sm_90 with PTX
# (compute_90, so newer GPUs JIT it). Boost.Program_options and Google Benchmark are linked
# statically, the CUDA runtime too; cuBLAS and cuDNN are found through a RUNPATH that names
# /usr/local/cuda and the usual places of the wheels (site-packages/nvidia/cu13/lib and
# site-packages/nvidia/cudnn/lib), and DIR/env.sh adds whatever python3's own nvidia packages
# hold. DIR/traces is the repository's traces/ folder (catalogs and traces). The build folder
# is build-gpu/ (reused between runs).
set -euo pipefail
if [ "$#" -ne 1 ]; then
  echo "usage: bash scripts/gpu-bundle.sh DIR" >&2
  exit 2
fi
cd "$(dirname "$0")/.."
root=$(pwd)
mkdir -p "$1"
dest=$(cd "$1" && pwd)
build="$root/build-gpu"
bash scripts/install-deps.sh

nvcc=${CUDACXX:-/usr/local/cuda/bin/nvcc}
if [ ! -x "$nvcc" ]; then
  echo "gpu-bundle: no nvcc at $nvcc (set CUDACXX)" >&2
  exit 2
fi

# Google Benchmark as a static library: Debian ships it shared only, so build Debian's own source
# of the installed version (the same code as libbenchmark-dev) once, into build-gpu/deps.
deps="$build/deps"
if [ ! -f "$deps/lib/libbenchmark.a" ]; then
  version=$(dpkg-query -W -f='${Version}' libbenchmark-dev)
  work="$build/deps-src"
  rm -rf "$work" && mkdir -p "$work/lists/partial"
  echo "deb-src http://deb.debian.org/debian bookworm main" >"$work/sources.list"
  apt_src=(-o "Dir::Etc::SourceList=$work/sources.list" -o Dir::Etc::SourceParts=/dev/null
           -o "Dir::State::Lists=$work/lists")
  apt-get "${apt_src[@]}" update >/dev/null
  (cd "$work" && apt-get "${apt_src[@]}" source --download-only "benchmark=$version" >/dev/null 2>&1)
  tar -xzf "$work"/benchmark_*.orig.tar.gz -C "$work"
  src=$(find "$work" -maxdepth 1 -type d -name 'benchmark-*' | head -1)
  cmake -S "$src" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
        -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DBENCHMARK_ENABLE_TESTING=OFF -DBENCHMARK_ENABLE_GTEST_TESTS=OFF \
        -DBENCHMARK_ENABLE_WERROR=OFF -DCMAKE_INSTALL_PREFIX="$deps" -DCMAKE_INSTALL_LIBDIR=lib >/dev/null
  cmake --build "$work/build" --parallel "$(nproc)" >/dev/null
  cmake --install "$work/build" >/dev/null
fi

# RUNPATH: the toolkit, then the wheels of the Python environments these machines use.
rpath='/usr/local/cuda/lib64'
for site in /opt/torch/.venv/lib/python3.12/site-packages /usr/local/lib/python3.12/dist-packages \
            /usr/lib/python3/dist-packages; do
  rpath="$rpath;$site/nvidia/cu13/lib;$site/nvidia/cudnn/lib;$site/nvidia/cublas/lib"
done

cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_CUDA_COMPILER="$nvcc" -DCMAKE_CUDA_ARCHITECTURES=90 \
      -DBoost_USE_STATIC_LIBS=ON -Dbenchmark_DIR="$deps/lib/cmake/benchmark" \
      -DCMAKE_SKIP_BUILD_RPATH=OFF -DCMAKE_BUILD_RPATH="$rpath" -DCMAKE_BUILD_RPATH_USE_ORIGIN=ON \
      -DCMAKE_EXE_LINKER_FLAGS="-Wl,--enable-new-dtags" >/dev/null
targets=(salus-run salus-profile salus-sim salus-experiment salus-trace test_gpu_cuda backend_bench)
cmake --build "$build" --parallel "$(nproc)" --target "${targets[@]}"

rm -rf "$dest/bin" "$dest/traces"
mkdir -p "$dest/bin"
for t in salus-run salus-profile salus-sim salus-experiment salus-trace; do cp "$build/bin/$t" "$dest/bin/"; done
cp "$build/tests/test_gpu_cuda" "$build/tests/bench/backend_bench" "$dest/bin/"
strip --strip-unneeded "$dest"/bin/*
cp -r traces "$dest/traces"
rm -f "$dest"/traces/*.cpp "$dest"/traces/*.h "$dest"/traces/CMakeLists.txt
cp scripts/gpu/validate.sh scripts/gpu/env.sh scripts/gpu/fidelity.py scripts/gpu/tables.py "$dest/"
chmod +x "$dest"/validate.sh
git -C "$root" rev-parse HEAD >"$dest/COMMIT" 2>/dev/null || echo unknown >"$dest/COMMIT"
git -C "$root" status --porcelain | grep -q . && echo "(with uncommitted changes)" >>"$dest/COMMIT" || true

# Checks: no Boost or benchmark library needed at run time, and the bundle fits a device call.
status=0
for b in "$dest"/bin/*; do
  if ldd "$b" | grep -Ei 'boost|benchmark'; then
    echo "gpu-bundle: $(basename "$b") still needs a shared Boost or benchmark library" >&2
    status=1
  fi
done
size=$(du -sb "$dest" | cut -f1)
echo "gpu-bundle: $dest, $((size / 1024 / 1024)) MiB ($size bytes), commit $(head -1 "$dest/COMMIT")"
if [ "$size" -ge $((64 * 1024 * 1024)) ]; then
  echo "gpu-bundle: the bundle is over 64 MiB" >&2
  status=1
fi
exit $status
