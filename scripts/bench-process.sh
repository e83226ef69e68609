#!/usr/bin/env bash
# Whole-process speed and memory of salus-sim, as a user runs it (trace parsing, simulation and
# output), measured with /usr/bin/time -v; the median of RUNS runs is reported.
#
#   bash scripts/bench-process.sh [BUILD_DIR]        # default BUILD_DIR: build
#   RUNS=7 bash scripts/bench-process.sh             # more runs (default 5)
#   OUT_RUNS=1 bash scripts/bench-process.sh         # runs of the slow FAIR --out case (default RUNS)
#   CASES=native bash scripts/bench-process.sh       # only the 200k-job cases (native|out|all)
#
# Cases:
#   native: a 200k-job native trace at 85 % offered load (salus-trace generate --jobs 200000
#           --seed 1 --mean-interarrival-s 326: the generator's mean solo time is 277 s, and
#           277 / 326 = 0.85; `salus-trace stats` prints "0.85 x the arrival span"), each of
#           fifo, srtf and pack with --summary-json, and fifo without it.
#   out:    FAIR with --out on the 1,000-job default generated trace (salus-trace generate
#           --jobs 1000 --seed 1), wall time, max resident memory and bytes written, with the
#           default --timeline runs and with --timeline off (when the build has the option).
# Traces and outputs go to a temporary directory that is removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
RUNS=${RUNS:-5}
OUT_RUNS=${OUT_RUNS:-$RUNS}
CASES=${CASES:-all}
SIM=$BUILD/bin/salus-sim
TRACE_TOOL=$BUILD/bin/salus-trace
CATALOG=traces/profiles/catalog.json
for b in "$SIM" "$TRACE_TOOL"; do
  [ -x "$b" ] || { echo "bench-process: $b not found (build it first: cmake --build $BUILD --target salus-sim salus-trace)" >&2; exit 2; }
done
[ -x /usr/bin/time ] || { echo "bench-process: /usr/bin/time not found (bash scripts/install-deps.sh installs it)" >&2; exit 2; }

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

# Runs "$@" RUNS times; prints the medians of wall time, CPU time (user + system: less sensitive
# than wall time to other processes on a shared machine) and max resident memory, and the bytes
# under $OUTDIR when it is set.
measure() {
  local label=$1; shift
  local walls=() cpus=() rss=() bytes=""
  for ((i = 0; i < RUNS; i++)); do
    [ -n "${OUTDIR:-}" ] && rm -rf "$OUTDIR"
    /usr/bin/time -v -o "$TMP/time.txt" "$@" > /dev/null
    walls+=("$(awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, p, ":"); s = 0; for (k = 1; k <= n; k++) s = s * 60 + p[k]; print s}' "$TMP/time.txt")")
    cpus+=("$(awk -F': ' '/User time|System time/ {s += $2} END {print s}' "$TMP/time.txt")")
    rss+=("$(awk -F': ' '/Maximum resident set size/ {print $2 / 1024}' "$TMP/time.txt")")
    [ -n "${OUTDIR:-}" ] && bytes=$(du -sb "$OUTDIR" | cut -f1)
  done
  local w c r
  w=$(printf '%s\n' "${walls[@]}" | median)
  c=$(printf '%s\n' "${cpus[@]}" | median)
  r=$(printf '%s\n' "${rss[@]}" | median)
  printf '%-36s wall %6.2f s  cpu %6.2f s  max RSS %7.1f MB' "$label" "$w" "$c" "$r"
  [ -n "$bytes" ] && printf '  written %7.1f MB' "$(awk -v b="$bytes" 'BEGIN {print b / 1e6}')"
  printf '   (median of %d; wall: %s s)\n' "$RUNS" "${walls[*]}"
}

echo "bench-process: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), median of $RUNS runs"
if [ "$CASES" = all ] || [ "$CASES" = native ]; then
  "$TRACE_TOOL" generate --jobs 200000 --seed 1 --mean-interarrival-s 326 --profiles "$CATALOG" --out "$TMP/native_200k.csv" > /dev/null
  common=(--trace "$TMP/native_200k.csv" --profiles "$CATALOG")
  for p in fifo srtf pack; do
    measure "200k jobs, $p, --summary-json" "$SIM" "${common[@]}" --policy "$p" --summary-json "$TMP/summary.json"
  done
  measure "200k jobs, fifo, no output file" "$SIM" "${common[@]}" --policy fifo
fi
if [ "$CASES" = all ] || [ "$CASES" = out ]; then
  "$TRACE_TOOL" generate --jobs 1000 --seed 1 --profiles "$CATALOG" --out "$TMP/gen_1000.csv" > /dev/null
  RUNS=$OUT_RUNS OUTDIR="$TMP/out" measure "1000 jobs, fair, --out" \
    "$SIM" --trace "$TMP/gen_1000.csv" --profiles "$CATALOG" --policy fair --out "$TMP/out"
  if "$SIM" --help | grep -q -- --timeline; then
    RUNS=$OUT_RUNS OUTDIR="$TMP/out" measure "1000 jobs, fair, --out, --timeline off" \
      "$SIM" --trace "$TMP/gen_1000.csv" --profiles "$CATALOG" --policy fair --out "$TMP/out" --timeline off
  fi
fi
