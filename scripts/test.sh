#!/usr/bin/env bash
# Installs what is missing, builds everything (tests and benchmarks included), builds a fast
# subset of the suites with AddressSanitizer and UBSan in build-asan and runs it (scripts/sanitize.sh
# asan-ci; tests/README.md, "Sanitizers"), then runs the whole test suite with ctest (last, so that
# its closing lines are the run's).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DSALUS_WARNINGS_AS_ERRORS=ON
cmake --build build --parallel "$(nproc)"
bash scripts/sanitize.sh asan-ci
ctest --test-dir build --output-on-failure --parallel "$(nproc)"
