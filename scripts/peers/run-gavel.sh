#!/usr/bin/env bash
# Runs Gavel's own simulator (stanford-futuredata/gavel, scheduler/) on its physical_cluster
# traces under every configuration of tests/data/peers/gavel/ and writes one per-job CSV per run:
# the FIFO policies, and the max-min fairness policies with the LP stand-in of scripts/peers/gavel_lp.
#
#   scripts/peers/run-gavel.sh [MIRROR [OUT]]
#     MIRROR  bare git repository of Gavel (default /work/.mirror/stanford-futuredata+gavel/repo)
#     OUT     output folder (default tests/data/peers/gavel); it receives the CSVs and
#             wall_times.csv, nothing else. KEEP_RAW=1 keeps the peer's own logs (path printed).
#   GEN=1 scripts/peers/run-gavel.sh [MIRROR [OUT]]
#     instead: max_min_fairness_perf (ipx) on the generated traces
#     tests/data/peers/gavel/inputs/gen/gen*.trace (scripts/peers/gavel/make_gen_traces.py, checked
#     to be what it writes from Gavel's throughputs), 16:0:0 and 8:4:4, and (lexmaxmin) 16:0:0;
#     writes OUT/gen/*.csv and OUT/gen/wall_times.csv and leaves OUT's other files alone.
#
# Exit 2 when the mirror, its commit or a Debian package is missing. Everything is described in
# scripts/peers/README.md; what the policies do is in docs/peers.md.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
MIRROR="${1:-/work/.mirror/stanford-futuredata+gavel/repo}"
OUT="${2:-$root/tests/data/peers/gavel}"
# The commit the committed fixtures were made from; GAVEL_COMMIT=HEAD takes the mirror's newest.
COMMIT="${GAVEL_COMMIT:-c4fa40097339e9608ab71fd64c8bdea96a5e4a4c}"
PY=/usr/bin/python3
ROUND=360   # --time_per_iteration: Gavel's default (scripts/drivers/simulate_scheduler_with_trace.py)
SEED=0      # --seed: as in Gavel's EXPERIMENTS.md; the driver's default (None) fails in _initialize_seeds

die2() { echo "run-gavel: $*" >&2; exit 2; }
GEN="${GEN:-0}"
case "$GEN" in 0|1) ;; *) die2 "GEN must be 0 or 1, not '$GEN'" ;; esac
[ -d "$MIRROR" ] || die2 "no Gavel mirror at $MIRROR (give its path as the first argument)"
COMMIT="$(git -C "$MIRROR" rev-parse --verify -q "$COMMIT^{commit}")" ||
  die2 "$MIRROR has no commit ${GAVEL_COMMIT:-c4fa40097339e9608ab71fd64c8bdea96a5e4a4c}"
[ -x "$PY" ] || die2 "no $PY: apt-get install python3"
command -v make > /dev/null || die2 "no make: apt-get install make"
for m in numpy:python3-numpy scipy:python3-scipy psutil:python3-psutil grpc:python3-grpcio \
         grpc_tools:python3-grpc-tools google.protobuf:python3-protobuf; do
  "$PY" -c "import ${m%%:*}" 2>/dev/null ||
    die2 "Debian's ${m#*:} is missing (Python module ${m%%:*}): apt-get install ${m#*:}"
done
# The LP stand-in (gavel_lp/cvxpy) calls scipy's HiGHS wrapper itself (Debian 12's scipy 1.10).
"$PY" -c "import scipy.optimize._highs._highs_wrapper" 2>/dev/null ||
  die2 "this scipy has no scipy.optimize._highs._highs_wrapper (HiGHS), which gavel_lp/cvxpy needs"

scratch="$(mktemp -d /tmp/peers-gavel-run.XXXXXX)"
if [ "${KEEP_RAW:-0}" = 1 ]; then
  echo "run-gavel: raw outputs kept in $scratch"
else
  trap 'rm -rf "$scratch"' EXIT
fi
# Only what the simulator needs: some large files of the repository (traces/msr/*/philly.trace,
# a workload's data) are absent from the mirror. git archive may warn about them; it is judged
# by the files below being there.
git -C "$MIRROR" archive "$COMMIT" -- LICENSE scheduler/Makefile 'scheduler/*.py' 'scheduler/*.json' \
    scheduler/policies scheduler/runtime scheduler/scripts/drivers scheduler/traces/physical_cluster \
    2> "$scratch/archive.err" | tar -x -C "$scratch" || true
sched="$scratch/scheduler"
for f in scheduler.py policies/fifo.py physical_cluster_throughputs.json \
         scripts/drivers/simulate_scheduler_with_trace.py traces/physical_cluster/max_min_fairness.trace; do
  [ -f "$sched/$f" ] || { cat "$scratch/archive.err" >&2; die2 "could not extract scheduler/$f from $MIRROR at $COMMIT"; }
done
# Gavel's own build step (scheduler/Makefile, rule rpc_stubs) with Debian's grpc_tools; its recipe
# calls `python`, which here is /usr/bin/python3.
mkdir -p "$scratch/bin" && ln -s "$PY" "$scratch/bin/python"
(cd "$sched" && PATH="$scratch/bin:$PATH" make rpc_stubs) > "$scratch/make.log" 2>&1 ||
  { cat "$scratch/make.log" >&2; die2 "make rpc_stubs failed (python3-grpc-tools?)"; }

pyver="$("$PY" -c 'import platform; print(platform.python_version())')"
npver="$("$PY" -c 'import numpy; print(numpy.__version__)')"
spver="$("$PY" -c 'import scipy; print(scipy.__version__)')"
gen_in="$root/tests/data/peers/gavel/inputs/gen"
if [ "$GEN" = 1 ]; then
  # The generated traces must be what make_gen_traces.py writes from this commit's throughputs.
  gen_seeds="$(cd "$gen_in" 2>/dev/null && ls gen*.trace 2>/dev/null | sed -n 's/^gen\([0-9][0-9]*\)\.trace$/\1/p' | sort -n)" || true
  [ -n "$gen_seeds" ] || die2 "no generated traces (genN.trace) in $gen_in"
  "$PY" "$here/gavel/make_gen_traces.py" "$sched/physical_cluster_throughputs.json" "$scratch/gen" $gen_seeds
  for s in $gen_seeds; do
    cmp -s "$gen_in/gen$s.trace" "$scratch/gen/gen$s.trace" ||
      { echo "run-gavel: $gen_in/gen$s.trace is not what scripts/peers/gavel/make_gen_traces.py writes" >&2; exit 1; }
  done
  OUT="$OUT/gen"
fi
mkdir -p "$OUT"
rm -f "$OUT"/*.csv
echo "file,wall_s" > "$OUT/wall_times.csv"

# run NAME TRACE CLUSTER_SPEC GPUS_PER_SERVER POLICY [LP_METHOD]
#   TRACE: the name of one of Gavel's traces/physical_cluster/*.trace, or gen/genN for
#   tests/data/peers/gavel/inputs/gen/genN.trace (the header names it as REPO/tests/...).
#   LP_METHOD (the LP policies only): GAVEL_LP_METHOD of the cvxpy stand-in in gavel_lp/.
run() {
  local name="$1" trace="$2" spec="$3" per_server="$4" policy="$5" lp="${6:-}"
  local trace_arg="traces/physical_cluster/$trace.trace" trace_file="$sched/traces/physical_cluster/$trace.trace"
  local trace_shown="$trace_arg"
  if [ "${trace#gen/}" != "$trace" ]; then
    trace_arg="$root/tests/data/peers/gavel/inputs/$trace.trace"
    trace_file="$trace_arg"
    trace_shown="REPO/tests/data/peers/gavel/inputs/$trace.trace"
  fi
  local args=(-t "$trace_arg" -p "$policy"
              --throughputs_file physical_cluster_throughputs.json -c "$spec"
              --num_gpus_per_server "$per_server" --seed "$SEED" --time_per_iteration "$ROUND")
  local shown=("${args[@]}")
  shown[1]="$trace_shown"
  local log="$scratch/$name.log" t0 t1
  # PYTHONPATH: inert stand-ins for cvxpy and matrix_completion (imported at load, not called by
  # the FIFO policies; any call stops the run). PYTHONHASHSEED only pins set order (minimize_makespan.trace:
  # the same output with other values). The LP policies put gavel_lp/ first: its cvxpy solves
  # their LP with scipy's HiGHS by the method GAVEL_LP_METHOD (matrix_completion stays inert).
  local pypath="$here/gavel_standins" env_text="PYTHONHASHSEED=0 PYTHONPATH=REPO/scripts/peers/gavel_standins"
  if [ -n "$lp" ]; then
    pypath="$here/gavel_lp:$here/gavel_standins"
    env_text="PYTHONHASHSEED=0 GAVEL_LP_METHOD=$lp PYTHONPATH=REPO/scripts/peers/gavel_lp:REPO/scripts/peers/gavel_standins"
  fi
  t0=$(date +%s.%N)
  (cd "$sched" && if [ -n "$lp" ]; then export GAVEL_LP_METHOD="$lp"; fi &&
      PYTHONHASHSEED=0 PYTHONPATH="$pypath" nice -n 10 \
      "$PY" scripts/drivers/simulate_scheduler_with_trace.py "${args[@]}") > "$log" 2>&1 ||
    { tail -20 "$log" >&2; echo "run-gavel: $name failed" >&2; exit 1; }
  t1=$(date +%s.%N)
  local avg
  avg="$(grep -a '^Average job completion time:' "$log" | head -1)"
  {
    echo "# peer: Gavel simulator (github.com/stanford-futuredata/gavel, scheduler/), commit $COMMIT, MIT licence"
    echo "# command: cd SCHED && $env_text /usr/bin/python3 scripts/drivers/simulate_scheduler_with_trace.py ${shown[*]}"
    echo "#   (SCHED: scheduler/ of the commit above after its 'make rpc_stubs'; REPO: this repository; stand-ins: scripts/peers/README.md)"
    if [ "$trace_shown" != "$trace_arg" ]; then
      echo "# trace: $trace_shown, written by REPO/scripts/peers/gavel/make_gen_traces.py (seed ${trace#gen/gen})"
    fi
    echo "# cluster: -c $spec is #v100:#p100:#k80 GPUs, $per_server GPUs per server; round (time_per_iteration) ${ROUND} s"
    if [ -n "$lp" ]; then
      echo "# python $pyver (Debian /usr/bin/python3), numpy $npver, scipy $spver"
      local lps
      lps="$(sed -n 's/^cvxpy stand-in: \([0-9]*\) LPs solved (GAVEL_LP_METHOD=[^)]*), \([0-9]*\) at a looser tolerance$/\1 LPs solved, \2 of them at a looser tolerance/p' "$log")"
      [ -n "$lps" ] || { echo "run-gavel: $name: no LP summary in the log" >&2; exit 1; }
      if [ "$lp" = lexmaxmin ]; then
        # Each of Gavel's LPs is answered by several LPs of the dual simplex (gavel_lp/cvxpy).
        local sub
        sub="$(sed -n 's/^cvxpy stand-in: lexmaxmin: \([0-9]*\) passes, \([0-9]*\) LPs of HiGHS. dual simplex$/\1 passes, \2 LPs of the dual simplex/p' "$log")"
        [ -n "$sub" ] || { echo "run-gavel: $name: no lexmaxmin summary in the log" >&2; exit 1; }
        lps="$lps (by $sub)"
      fi
      echo "# LP: Gavel's cvxpy call (solver ECOS) answered by REPO/scripts/peers/gavel_lp/cvxpy with HiGHS (scipy $spver), GAVEL_LP_METHOD=$lp: $(lp_text "$lp"); $lps"
    else
      echo "# python $pyver (Debian /usr/bin/python3), numpy $npver"
    fi
    echo "# peer's own summary: $avg"
    echo "# source: the peer's log ([Micro-task scheduled], 'Job N: JCT' lines) and the trace; wall time: wall_times.csv"
  } > "$scratch/$name.header"
  "$PY" "$here/convert.py" gavel "$trace_file" "$log" \
      "$OUT/$name.csv" "$scratch/$name.header"
  awk -v n="$name" -v a="$t0" -v b="$t1" 'BEGIN { printf "%s.csv,%.2f\n", n, b - a }' >> "$OUT/wall_times.csv"
  echo "run-gavel: $name.csv ($(($(grep -vc '^#' "$OUT/$name.csv") - 1)) jobs)"
}

# lp_text METHOD: what the method returns, for the fixtures' headers.
lp_text() {
  case "$1" in
    ipx) echo "interior point (IPX), presolve and crossover off: a point inside the LP's optimal face, the kind of answer ECOS gives (not ECOS' own point)" ;;
    highs-ds) echo "dual simplex: a vertex of the LP's optimal face" ;;
    lexmaxmin) echo "the lexicographic max-min optimum (progressive filling: the least job's value as large as possible, then the next, ...; a sequence of dual-simplex LPs), one point of the LP's optimal face that no solver choice changes; on one GPU type it is water-filling" ;;
    *) echo "$1" ;;
  esac
}

if [ "$GEN" = 1 ]; then
  # Generated traces (scripts/peers/gavel/make_gen_traces.py): max_min_fairness_perf with an
  # interior-point optimum (ipx), as the unsuffixed fixtures above.
  for s in $gen_seeds; do
    g="gen$s"
    run "$g-v100x16-max_min_fairness_perf" "gen/$g" 16:0:0 4:4:4 max_min_fairness_perf ipx
    run "$g-v100x8_p100x4_k80x4-max_min_fairness_perf" "gen/$g" 8:4:4 4:4:4 max_min_fairness_perf ipx
  done
  # The lexicographic max-min optimum (GAVEL_LP_METHOD=lexmaxmin), one GPU type: the allocation
  # salus-sim's max-min defines there (water-filling), which no solver choice changes.
  for s in $gen_seeds; do
    g="gen$s"
    run "$g-v100x16-max_min_fairness_perf-lexmaxmin" "gen/$g" 16:0:0 4:4:4 max_min_fairness_perf lexmaxmin
  done
  echo "run-gavel: done, $(ls "$OUT"/*-*.csv | wc -l) files in $OUT"
  exit 0
fi

traces="max_min_fairness minimize_makespan artifact_evaluation debug debug_v2 highmem_test medium_test small_test"
for trace in $traces; do
  for policy in fifo fifo_perf; do
    # 16 V100s in 4 servers of 4: homogeneous, like salus-sim's clusters.
    run "$trace-v100x16-$policy" "$trace" 16:0:0 4:4:4 "$policy"
    # 8 V100 + 4 P100 + 4 K80 (servers of 4): where fifo and fifo_perf differ by worker type.
    run "$trace-v100x8_p100x4_k80x4-$policy" "$trace" 8:4:4 4:4:4 "$policy"
  done
done
# The max-min fairness policies solve an LP at each allocation reset (cvxpy + ECOS in Gavel; here
# scripts/peers/gavel_lp, HiGHS). The LP's optimum is often not unique, and which optimum the
# solver returns changes Gavel's round priorities: the unsuffixed files use GAVEL_LP_METHOD=ipx
# (an interior point, as ECOS returns), the ...-highs_ds files the dual simplex's vertex.
for trace in $traces; do
  for policy in max_min_fairness_perf max_min_fairness; do
    for lp in ipx highs-ds; do
      sfx=""
      [ "$lp" = ipx ] || sfx="-${lp//-/_}"
      run "$trace-v100x16-$policy$sfx" "$trace" 16:0:0 4:4:4 "$policy" "$lp"
      run "$trace-v100x8_p100x4_k80x4-$policy$sfx" "$trace" 8:4:4 4:4:4 "$policy" "$lp"
    done
  done
done
# max_min_fairness_perf on one GPU type with the LP's lexicographic max-min optimum
# (GAVEL_LP_METHOD=lexmaxmin): the allocation salus-sim's max-min defines there (water-filling),
# the same whatever the solver.
for trace in $traces; do
  run "$trace-v100x16-max_min_fairness_perf-lexmaxmin" "$trace" 16:0:0 4:4:4 max_min_fairness_perf lexmaxmin
done
echo "run-gavel: done, $(ls "$OUT"/*-*.csv | wc -l) files in $OUT"
