#!/usr/bin/env bash
# The GPU validation of the bundle made by scripts/gpu-bundle.sh, in one call:
#
#   DIR/validate.sh OUTDIR            # every phase
#   PHASES="tests run" DIR/validate.sh OUTDIR
#
# Phases (in this order): env (driver, GPU, what the binaries load), tests (the CUDA test
# program), run (salus-run on the small and a mixed trace under the four policies), sanitizer
# (compute-sanitizer memcheck on a short PACK run), profile (salus-profile on every implemented
# workload at the paper's batch sizes -> OUTDIR/profiles.json), bench (service against plain
# loops, backend_bench), fidelity (a generated trace of real workloads on the GPU and in
# salus-sim with the measured catalog; fidelity.py compares them), fidexp (not run unless named:
# salus-experiment fidelity --executor real --device cuda on the same trace and catalog, most of a
# call by itself), packing (many small jobs under
# FIFO and PACK, the paper's Fig. 11), timeslice (two alexnet_25 jobs in Salus lanes against the
# same two jobs as two processes sharing the GPU by the driver's time slicing, Fig. 13),
# bench_tf32 (not run unless named: the backend benchmark again with --math tf32).
#
# MATH (default fp32) is passed as --math to salus-run, salus-profile and backend_bench: fp32 is
# exact FP32 (what the CUDA-versus-CPU tests and every committed figure use), tf32 runs
# convolutions and GEMMs on TF32 tensor cores.
#
# The pool is capped at GPU_MEM (default 16GiB: an emulated P100). Each phase has a time limit and
# the whole script a deadline (DEADLINE_S, default 560 s), so it ends inside a 10-minute call;
# logs and JSON go to OUTDIR, and a short table is printed last. Nothing here changes the GPU's
# settings.
set -uo pipefail
if [ "$#" -ne 1 ]; then
  echo "usage: validate.sh OUTDIR" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
out=$1
mkdir -p "$out"
out=$(cd "$out" && pwd)
bin=$here/bin
traces=$here/traces
export SALUS_DATA_DIR=$traces
gpu_mem=${GPU_MEM:-16GiB}
math=${MATH:-fp32}
phases=${PHASES:-env tests run sanitizer profile fidelity packing timeslice bench}
deadline=$(( $(date +%s) + ${DEADLINE_S:-560} ))
summary=$out/summary.txt
: >"$summary"

# Libraries: RUNPATH first (ldd without help, recorded), then python3's NVIDIA wheels.
ldd_plain=$(ldd "$bin/salus-run" 2>&1)
. "$here/env.sh"

want() { [[ " $phases " == *" $1 "* ]]; }
left() { echo $(( deadline - $(date +%s) )); }
# run_step NAME LIMIT_S CMD...: runs CMD with its output in OUTDIR/NAME.log, at most LIMIT_S
# seconds (less when the deadline is nearer), and records NAME, status and seconds.
run_step() {
  local name=$1 limit=$2
  shift 2
  local rem
  rem=$(left)
  if [ "$rem" -lt 10 ]; then
    printf '%-26s %-10s %6s\n' "$name" "no-time" "-" >>"$summary"
    return 124
  fi
  [ "$limit" -gt $((rem - 5)) ] && limit=$((rem - 5))
  local t0=$SECONDS rc
  echo "=== $name (limit ${limit}s): $*" | tee -a "$out/commands.log" >&2
  timeout --kill-after=5 "$limit" "$@" >"$out/$name.log" 2>&1
  rc=$?
  local status=ok
  [ $rc -ne 0 ] && status="rc=$rc"
  [ $rc -eq 124 ] && status="timeout"
  printf '%-26s %-10s %5ss\n' "$name" "$status" "$((SECONDS - t0))" >>"$summary"
  tail -n 4 "$out/$name.log" >&2
  return $rc
}

if want env; then
  {
    echo "## nvidia-smi"; nvidia-smi 2>&1
    echo "## driver / runtime"; nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used --format=csv 2>&1
    echo "## python NVIDIA libraries"; echo "${LD_LIBRARY_PATH:-}"
    echo "## ldd salus-run (RUNPATH only)"; echo "$ldd_plain"
    echo "## ldd (with env.sh)"; for b in "$bin"/*; do echo "# $(basename "$b")"; ldd "$b"; done
    echo "## bundle commit"; cat "$here/COMMIT"
  } >"$out/env.log" 2>&1
  if grep -q "not found" <(for b in "$bin"/*; do ldd "$b"; done); then
    printf '%-26s %-10s %6s\n' "env" "missing-lib" "-" >>"$summary"
  else
    printf '%-26s %-10s %6s\n' "env" "ok" "-" >>"$summary"
  fi
fi

if want tests; then
  run_step cuda_tests 240 "$bin/test_gpu_cuda" --duration=true
fi

# A trace of bigger models than the small example, all implemented by the real backend.
mixed=$out/mixed.csv
cat >"$mixed" <<'EOF'
job_id,workload,arrival_s,iterations
r50,resnet50_25,0,30
alex,alexnet_25,0.2,60
goog,googlenet_25,0.4,40
vgg,vgg11_25,0.6,20
lenet,lenet_32,0.8,200
r101,resnet101_25,1.0,15
mlp,mlp_64,1.2,300
ofeat,overfeat_25,1.4,30
EOF

if want run; then
  run_step run_small 90 "$bin/salus-run" --device cuda --math "$math" --gpu-mem "$gpu_mem" --memory model \
    --trace "$traces/examples/real_small.csv" --summary-json "$out/run_small.json"
  run_step run_mixed 150 "$bin/salus-run" --device cuda --math "$math" --gpu-mem "$gpu_mem" --memory model \
    --trace "$mixed" --summary-json "$out/run_mixed.json"
fi

if want sanitizer; then
  short=$out/short.csv
  printf 'job_id,workload,arrival_s,iterations\na,resnet50_25,0,2\nb,googlenet_25,0,2\nc,lenet_32,0,3\nd,alexnet_25,0.1,2\n' >"$short"
  run_step sanitizer 150 compute-sanitizer --tool memcheck --error-exitcode 3 --print-limit 20 \
    "$bin/salus-run" --device cuda --math "$math" --gpu-mem 4GiB --memory model --policy pack --trace "$short"
fi

workloads="lenet_32,mlp_64"
for m in alexnet googlenet overfeat vgg11 vgg16 vgg19; do workloads="$workloads,${m}_25,${m}_50,${m}_100"; done
for m in resnet50 resnet101 resnet152; do workloads="$workloads,${m}_25,${m}_50,${m}_75"; done
if want profile; then
  run_step profile 240 "$bin/salus-profile" --device cuda --math "$math" --gpu-mem "$gpu_mem" --pairs off --switch off \
    --workloads "$workloads" --out "$out/profiles.json"
fi


# The fidelity trace and its catalog, shared by the fidelity and fidexp phases: the workloads
# profiled on the GPU, then FID_JOBS jobs of them generated from that catalog.
fid_ready=0
if want fidelity || want fidexp; then
  fid_workloads=${FID_WORKLOADS:-resnet50_25,alexnet_25,googlenet_25,vgg11_25,overfeat_25,lenet_32,mlp_64}
  catalog=$out/profiles_fidelity.json
  # Crowds of 3, 5 and 7 lanes (salus-profile's default) for the `crowds` model: the time limit
  # allows for them.
  if run_step fid_profile 150 "$bin/salus-profile" --device cuda --math "$math" --gpu-mem "$gpu_mem" --workloads "$fid_workloads" \
       --out "$catalog"; then
    "$bin/salus-trace" generate --profiles "$catalog" --workloads "$fid_workloads" --jobs "${FID_JOBS:-20}" \
      --seed "${FID_SEED:-7}" --mean-interarrival-s "${FID_GAP_S:-0.8}" --median-duration-s "${FID_MEDIAN_S:-1.5}" \
      --min-duration-s 0.5 --max-duration-s "${FID_MAX_S:-5}" --out "$out/fidelity_trace.csv" >"$out/fid_trace.log" 2>&1 &&
      fid_ready=1
  fi
fi

if want fidelity && [ "$fid_ready" = 1 ]; then
  run_step fid_real 260 "$bin/salus-run" --device cuda --math "$math" --gpu-mem "$gpu_mem" --profiles "$catalog" \
    --trace "$out/fidelity_trace.csv" --out "$out/fid_real" --summary-json "$out/fid_real.json"
  # The switching cost is the catalog's measured switch_ms (salus-sim's default with such a catalog).
  for interference in shares crowds pairs profiled none; do
    run_step "fid_sim_$interference" 30 "$bin/salus-sim" --profiles "$catalog" --gpu-mem "$gpu_mem" \
      --interference "$interference" --trace "$out/fidelity_trace.csv" \
      --out "$out/fid_sim_$interference" --summary-json "$out/fid_sim_$interference.json"
    python3 "$here/fidelity.py" "$out/fid_sim_$interference" "$out/fid_real" \
      --json "$out/fidelity_$interference.json" >"$out/fidelity_$interference.log" 2>&1
  done
fi

if want fidexp && [ "$fid_ready" = 1 ]; then
  if [ "$math" != fp32 ]; then
    # salus-experiment has no --math: its runs are exact FP32, which a TF32 catalog would not predict.
    printf '%-26s %-10s %6s\n' "fidexp" "fp32-only" "-" >>"$summary"
  else
    # The project's own fidelity experiment on the same trace and catalog: every policy run
    # FIDX_REPEAT times by salus-run on the GPU and predicted by salus-sim, fidelity.json under
    # OUTDIR/fidexp (no figure there: plots/make_figures.py draws fidelity_jct from it back home).
    # Its calibrations re-profile every workload (and, beside PACK, every pair) around each run,
    # minutes for seven GPU workloads, so they are off unless FIDX_CALIBRATE names a mode;
    # FIDX_SCALE shortens the runs (--time-scale) to fit the call.
    run_step fidexp 480 "$bin/salus-experiment" fidelity --executor real --device cuda --gpu-mem "$gpu_mem" \
      --trace "$out/fidelity_trace.csv" --profiles "$catalog" --repeat "${FIDX_REPEAT:-3}" \
      --time-scale "${FIDX_SCALE:-2}" --calibrate "${FIDX_CALIBRATE:-off}" --plots off --out "$out/fidexp"
  fi
fi

if want packing; then
  # The hyper-parameter case: many copies of one small job at once, FIFO against PACK.
  for w in alexnet_25:150 resnet50_25:20; do
    name=${w%%:*} iters=${w##*:}
    { echo "job_id,workload,arrival_s,iterations"; for i in $(seq -w 1 8); do echo "hp$i,$name,0,$iters"; done; } \
      >"$out/packing_$name.csv"
    run_step "packing_$name" 90 "$bin/salus-run" --device cuda --math "$math" --gpu-mem "$gpu_mem" --memory model \
      --policy fifo,pack --trace "$out/packing_$name.csv" --summary-json "$out/packing_$name.json"
  done
fi

if want timeslice; then
  # Two alexnet_25 jobs of TS_ITERS iterations each (the paper: one minute each; shortened here to
  # fit the call): Salus lanes (PACK, one process) against two processes started together, each
  # running one job alone, the GPU shared by the driver's time slicing (no MPS, nothing changed).
  ts_iters=${TS_ITERS:-2500}
  printf 'job_id,workload,arrival_s,iterations\na,alexnet_25,0,%s\nb,alexnet_25,0,%s\n' "$ts_iters" "$ts_iters" \
    >"$out/timeslice_two.csv"
  printf 'job_id,workload,arrival_s,iterations\na,alexnet_25,0,%s\n' "$ts_iters" >"$out/timeslice_one.csv"
  run_step timeslice_salus 90 "$bin/salus-run" --device cuda --math "$math" --gpu-mem "$gpu_mem" --memory model --policy pack \
    --trace "$out/timeslice_two.csv" --summary-json "$out/timeslice_salus.json"
  run_step timeslice_alone 60 "$bin/salus-run" --device cuda --math "$math" --gpu-mem "$gpu_mem" --memory model --policy fifo \
    --trace "$out/timeslice_one.csv" --summary-json "$out/timeslice_alone.json"
  ts_two() {
    "$bin/salus-run" --device cuda --math "$math" --gpu-mem "$gpu_mem" --memory model --policy fifo \
      --trace "$out/timeslice_one.csv" --summary-json "$out/timeslice_proc1.json" >"$out/timeslice_proc1.out" 2>&1 &
    local p1=$!
    "$bin/salus-run" --device cuda --math "$math" --gpu-mem "$gpu_mem" --memory model --policy fifo \
      --trace "$out/timeslice_one.csv" --summary-json "$out/timeslice_proc2.json" >"$out/timeslice_proc2.out" 2>&1
    local rc=$?
    wait $p1 || rc=$?
    return $rc
  }
  run_step timeslice_processes 120 bash -c "$(declare -f ts_two); bin='$bin' gpu_mem='$gpu_mem' out='$out' ts_two"
fi

if want bench; then
  SALUS_BENCH_DEVICE=cuda SALUS_BENCH_MODELS=${BENCH_MODELS:-resnet50_75,alexnet_100,googlenet_100,overfeat_100,lenet_32} \
    run_step bench 150 "$bin/backend_bench" --math "$math" --benchmark_min_time=0.3 --benchmark_format=console \
    --benchmark_out="$out/bench.json" --benchmark_out_format=json
fi
if want bench_tf32; then
  SALUS_BENCH_DEVICE=cuda SALUS_BENCH_MODELS=${BENCH_MODELS:-resnet50_75,alexnet_100,googlenet_100,overfeat_100,lenet_32} \
    run_step bench_tf32 150 "$bin/backend_bench" --math tf32 --benchmark_min_time=0.3 --benchmark_format=console \
    --benchmark_out="$out/bench_tf32.json" --benchmark_out_format=json
fi

echo
echo "=== results (logs in $out)"
for f in run_small run_mixed; do
  [ -f "$out/$f.log" ] && { echo "--- $f"; grep -E '^(Policy|fifo|srtf|pack|fair) ' "$out/$f.log"; }
done
[ -f "$out/cuda_tests.log" ] && grep -E '^\[doctest\] (test cases|assertions)' "$out/cuda_tests.log"
[ -f "$out/sanitizer.log" ] && grep -E 'ERROR SUMMARY' "$out/sanitizer.log"
for f in "$out"/fidelity_*.log; do [ -f "$f" ] && { echo "--- $(basename "$f" .log)"; cat "$f"; }; done
[ -f "$out/fidexp.log" ] && { echo "--- fidexp"; sed -n '/^fidelity on /,$p' "$out/fidexp.log"; }
for f in "$out"/packing_*.log "$out"/timeslice_salus.log "$out"/timeslice_alone.log; do
  [ -f "$f" ] && { echo "--- $(basename "$f" .log)"; grep -E '^(fifo|pack) ' "$f"; }
done
for f in "$out"/timeslice_proc*.out; do [ -f "$f" ] && { echo "--- $(basename "$f" .out)"; grep -E '^fifo ' "$f"; }; done
[ -f "$out/bench.log" ] && grep -E '^(plain|service)' "$out/bench.log"
[ -f "$out/bench_tf32.log" ] && { echo "--- bench_tf32"; grep -E '^(plain|service)' "$out/bench_tf32.log"; }
# What the process held outside the pool, and the switch latency's clock, per policy.
for f in run_small run_mixed; do
  [ -f "$out/$f.json" ] && python3 - "$out/$f.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["results"]:
    o, g = r.get("outside_pool_bytes"), r.get("outside_pool_growth_bytes")
    mib = lambda b: "-" if b is None else "%.1f MiB" % (b / 2**20)
    print("%s %s: outside the pool %s (grown since the context: %s), switch latency p50 %.3f ms p99 %.3f ms (%s), fatal %s"
          % (sys.argv[1].rsplit("/", 1)[-1], r["policy"], mib(o), mib(g), r["switch_latency"]["p50_ms"],
             r["switch_latency"]["p99_ms"], r["switch_latency"].get("clock"), r.get("fatal_error")))
PY
done
echo "--- steps"
cat "$summary"
