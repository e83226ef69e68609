#!/usr/bin/env bash
# Installs what is missing, builds, and runs the main job: the paper's long-running experiment
# (salus-experiment long_trace) on the shipped 100-job trace under FIFO, SRTF, PACK and FAIR. It
# prints Table 1 beside the paper's numbers and writes out/main/long_trace.json, the per-policy
# CSVs (out/main/long_trace/) and the figures (out/main/fig07_jct_cdf.png and .pdf).
# Extra arguments go to salus-experiment, e.g. `bash scripts/run-main.sh all` for every experiment.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build --parallel "$(nproc)" --target salus-experiment salus-sim salus-trace
if [ "$#" -eq 0 ]; then set -- long_trace; fi
./build/bin/salus-experiment "$@" --out out/main --plots on
