#!/usr/bin/env bash
# Runs Tiresias' own simulator (SymbioticLab/Tiresias, simulator/) on its 60_job.csv trace (and on
# gen300_job.csv, 300 generated jobs: scripts/peers/tiresias/make_gen_trace.py) under
# every configuration of tests/data/peers/tiresias/ and writes one per-job CSV per run.
#
#   scripts/peers/run-tiresias.sh [MIRROR [OUT]]
#     MIRROR  bare git repository of Tiresias (default /work/.mirror/SymbioticLab+Tiresias/repo)
#     OUT     output folder (default tests/data/peers/tiresias); it receives the CSVs and
#             wall_times.csv, nothing else. KEEP_RAW=1 keeps the peer's own logs (path printed).
#
# Exit 2 when the mirror, its commit or a Debian package is missing. Everything is described in
# scripts/peers/README.md; what the policies do is in docs/peers.md.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
MIRROR="${1:-/work/.mirror/SymbioticLab+Tiresias/repo}"
OUT="${2:-$root/tests/data/peers/tiresias}"
# The commit the committed fixtures were made from; TIRESIAS_COMMIT=HEAD takes the mirror's newest.
COMMIT="${TIRESIAS_COMMIT:-959f9b08f44fa1b4f2b3aed79b01e4d439264a94}"
PY=/usr/bin/python3

die2() { echo "run-tiresias: $*" >&2; exit 2; }
[ -d "$MIRROR" ] || die2 "no Tiresias mirror at $MIRROR (give its path as the first argument)"
COMMIT="$(git -C "$MIRROR" rev-parse --verify -q "$COMMIT^{commit}")" ||
  die2 "$MIRROR has no commit ${TIRESIAS_COMMIT:-959f9b08f44fa1b4f2b3aed79b01e4d439264a94}"
[ -x "$PY" ] || die2 "no $PY: apt-get install python3"
"$PY" -c 'import numpy' 2>/dev/null || die2 "Debian's python3-numpy is missing: apt-get install python3-numpy"

scratch="$(mktemp -d /tmp/peers-tiresias-run.XXXXXX)"
if [ "${KEEP_RAW:-0}" = 1 ]; then
  echo "run-tiresias: raw outputs kept in $scratch"
else
  trap 'rm -rf "$scratch"' EXIT
fi
git -C "$MIRROR" archive "$COMMIT" simulator LICENSE | tar -x -C "$scratch" ||
  die2 "could not extract simulator/ from $MIRROR at $COMMIT"
sim="$scratch/simulator"
# Our cluster specs (2 and 4 nodes of 4 GPUs; per-node CPUs and memory as the shipped n32g4.csv)
# are copied next to the shipped ones; the peer's own files are not changed.
cp "$here/tiresias/n2g4.csv" "$here/tiresias/n4g4.csv" "$sim/"

pyver="$("$PY" -c 'import platform; print(platform.python_version())')"
npver="$("$PY" -c 'import numpy; print(numpy.__version__)')"
mkdir -p "$OUT"
rm -f "$OUT"/60_job-*.csv "$OUT"/gen300_job-*.csv
# The traces beside the outputs, for the tests that replay them.
cp "$sim/60_job.csv" "$here/tiresias/gen300_job.csv" "$OUT/"
echo "file,wall_s" > "$OUT/wall_times.csv"

# run NAME SPEC SCHEME SCHEDULE [py2compat options]
run() {
  local name="$1" spec="$2" scheme="$3" schedule="$4"; shift 4
  local log="$scratch/$name"
  local args=(--cluster_spec="$spec" --scheme="$scheme" --trace_file="${TRACE:-60_job.csv}"
              --schedule="$schedule" --log_path="$log")
  local shown=("${args[@]/#--log_path=*/--log_path=LOG}")
  local cmd="cd SIM && /usr/bin/python3 REPO/scripts/peers/py2compat.py ${*:+$* }. run_sim.py ${shown[*]}"
  local t0 t1
  t0=$(date +%s.%N)
  (cd "$sim" && nice -n 10 "$PY" "$here/py2compat.py" "$@" . run_sim.py "${args[@]}") \
    > "$log.stdout" 2>&1 || { tail -20 "$log.stdout" >&2; echo "run-tiresias: $name failed" >&2; exit 1; }
  t1=$(date +%s.%N)
  {
    echo "# peer: Tiresias simulator (github.com/SymbioticLab/Tiresias, simulator/), commit $COMMIT, Apache-2.0"
    echo "# command: $cmd"
    echo "#   (SIM: simulator/ of the commit above, with our n2g4.csv and n4g4.csv from scripts/peers/tiresias/ added; REPO: this repository; LOG: the output folder)"
    echo "#   (py2compat.py runs the Python 2.7 code under Python 3 with 2.7's division, round and sys.maxint: scripts/peers/README.md)"
    echo "# cluster spec $spec: $(tail -n +2 "$sim/$spec" | tr -d '\r' | head -1) (num_switch,num_node_p_switch,num_gpu_p_node,num_cpu_p_node,mem_p_node)"
    echo "# python $pyver (Debian /usr/bin/python3), numpy $npver"
    echo "# source: the peer's job.csv (log.py:_Log.job_complete); wall time: wall_times.csv"
  } > "$scratch/$name.header"
  "$PY" "$here/convert.py" tiresias "$log/job.csv" "$OUT/$name.csv" "$scratch/$name.header"
  awk -v n="$name" -v a="$t0" -v b="$t1" 'BEGIN { printf "%s.csv,%.2f\n", n, b - a }' >> "$OUT/wall_times.csv"
  echo "run-tiresias: $name.csv ($(($(grep -vc '^#' "$OUT/$name.csv") - 1)) jobs)"
}

for spec in n2g4 n4g4; do
  for schedule in fifo dlas dlas-gpu dlas-gpu-gittins; do
    for scheme in count yarn; do
      run "60_job-$spec-$schedule-$scheme" "$spec.csv" "$scheme" "$schedule"
    done
  done
  # 2D-LAS with the queue thresholds divided by 10, so that demotions happen on this short trace.
  run "60_job-$spec-dlas-gpu-ql325_720-count" "$spec.csv" count dlas-gpu --queue-limit 325,720,1800
  # The same with time as the service (dlas), and with the starvation knob 2 (dlas-gpu-2).
  run "60_job-$spec-dlas-ql325_720-count" "$spec.csv" count dlas --queue-limit 325,720,1800
  run "60_job-$spec-dlas-gpu-2-ql325_720-count" "$spec.csv" count dlas-gpu-2 --queue-limit 325,720,1800
done
# The shipped 64-GPU spec (16 nodes x 4 GPUs): no job waits; scheme count only.
for schedule in fifo dlas dlas-gpu dlas-gpu-gittins; do
  run "60_job-cluster_spec-$schedule-count" cluster_spec.csv count "$schedule"
done
# 300 generated jobs (gangs of up to 8 GPUs, durations up to 20,000 s: many demotions under the
# default thresholds) on 16 and 64 GPUs.
cp "$here/tiresias/gen300_job.csv" "$sim/"
for spec in n4g4 cluster_spec; do
  for schedule in fifo dlas dlas-gpu dlas-gpu-2 dlas-gpu-05; do
    TRACE=gen300_job.csv run "gen300_job-$spec-$schedule-count" "$spec.csv" count "$schedule"
  done
done
echo "run-tiresias: done, $(ls "$OUT"/60_job-*.csv "$OUT"/gen300_job-*.csv | wc -l) files in $OUT"
