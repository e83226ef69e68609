#!/usr/bin/env bash
# Installs what is missing, builds everything (tests and benchmarks included) and runs the
# whole test suite with ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DSALUS_WARNINGS_AS_ERRORS=ON
cmake --build build --parallel "$(nproc)"
ctest --test-dir build --output-on-failure --parallel "$(nproc)"
