#!/usr/bin/env bash
# Installs what is missing, builds, and runs the main job: salus-sim on the shipped example trace
# under FIFO, SRTF, PACK and FAIR, printing the Table 1 comparison and writing out/main/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build --parallel "$(nproc)" --target salus-sim
./build/experiments/salus-sim --out out/main "$@"
