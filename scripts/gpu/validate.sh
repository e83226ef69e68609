#!/usr/bin/env bash
# The GPU validation of the bundle made by scripts/gpu-bundle.sh, planned for GPU sessions of
# 15 minutes of device time (900 s, the machine's start-up included; VALIDATE_WINDOW_S sets
# another) of commands of at most 10 minutes each: the three calls in one session where they fit
# it, else one call per session (call3 then carries call2's tarball):
#
#   DIR/validate.sh plan                  # the calls in order, each phase's estimate and guard
#   DIR/validate.sh call1 OUT             # correctness, service overhead, the paper's figures
#   DIR/validate.sh call2 OUT             # the measured catalog (h100.json)
#   DIR/validate.sh call3 OUT [INPUT...]  # fidelity on two traces, with call2's catalog
#   PHASES="..." DIR/validate.sh phases OUT [INPUT...]   # named phases, outside the plan
#
# Each call has a deadline (DEADLINE_S, default the plan's: at most 540 s) and every phase a
# guard sized from runs 1-4 (docs/results/h100/run{1..4}/summary.txt; the plan cites the
# seconds). A call works in STATE/callN (VALIDATE_STATE, default /tmp/salus-validate, which a
# warm machine keeps between calls), packs it into ONE tarball OUT/callN.tgz (the device tool
# returns at most 8 files) and prints a short table last: each phase's status and seconds, then
# each check's measurement, target and verdict (scripts/gpu/tables.py; scripts/gpu/README.md
# says what each must show).
#
# call3 needs call2's catalog: it takes the first of INPUT (call2.tgz, or a folder holding
# call2.tgz or call2/), STATE/call2 (a warm machine), OUT/call2.tgz; on a fresh machine given
# none, it measures the fidelity catalog itself first (its own guard), and trace B may then be cut
# by the deadline.
#
# MATH (default fp32) is passed as --math to salus-run, salus-profile and backend_bench. The pool
# is capped at GPU_MEM (default 16GiB: an emulated P100). CROWD_SWEEP (default empty) is passed to
# call2's fidelity profile as extra salus-profile options (on a GPU salus-profile already measures
# homogeneous sweeps of 3, 5, 8 and 12 copies of each workload; e.g. CROWD_SWEEP="--sweeps
# 2,3,4,5,6,7,8,9,10,11,12" for k = 2..12), with the crowd_sweep guard added to that phase's. Nothing here changes
# the GPU's settings.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
valid_calls="plan, call1, call2, call3, phases"

# The plan, one row per phase: call, phase, estimated seconds, guard seconds, what it is sized
# from. A "deadline" row ends each call (its estimate is the sum of its phases'). Sources: docs/results/h100/runN/summary.txt
# (run1..run4, 2026-11-23), and for new phases what they were sized on.
plan_table() {
  cat <<'EOF'
call1 env                    1  10 not timed in runs 1-4 (nvidia-smi, ldd)
call1 cuda_tests            20  90 3 / 2 / 17 s (run1 / run2 / run3)
call1 sanitizer             15  90 13 / 12 / 12 s (run1 / run2 / run3)
call1 losses                70 150 new: 11 networks x CPU, CUDA fp32, CUDA tf32; the CPU side at once on 11 CPUs, its slowest (vgg19_2) 38 s on the 2-core dev machine
call1 run_small              5  60 2 s (run1)
call1 run_mixed             30  90 27 s (run1)
call1 packing_alexnet_25    15  60 13 s (run2)
call1 packing_resnet50_25   20  60 16 s (run2)
call1 timeslice_salus       25  60 24 s (run2)
call1 timeslice_alone       20  45 16 s (run2)
call1 timeslice_processes   35  75 32 s (run2)
call1 bench                105 150 104 s (run1; run4's second bench was cut by the deadline at 51 s)
call1 deadline               - 450 -
call2 profile_all          175 230 run3 measured 86 s; a model of profiler.cpp's solo phase over run3's profiles.json gives 87 s for run3's profiler and 175 s for today's (the self pair bracketed by solo runs, then re-timed through the executor)
call2 fid_profile          152 230 scripts/gpu/profile_cost.py on run4's profiles_fidelity.json: 152 s for today's default on a GPU (alone 20, pairs 67, crowds of 3,5,7 in one round 20, sweeps of 3,5,8,12 copies 27, switching 17 s); runs 1-4's older profile took 18-26 s
call2 crowd_sweep           36  50 CROWD_SWEEP on top of fid_profile, e.g. --sweeps 2,3,...,12 for k = 2..12: profile_cost.py 188 - 152 s; added to fid_profile's guard when set
call2 h100                   1  10 merging the two catalogs
call2 deadline               - 520 -
call3 fid_catalog            1  10 copying call2's catalog (or fid_profile and its guard without it)
call3 fid_real_a           190 230 186 / 187 / 174 s (run2 / run3 / run4: 20 jobs, 4 policies; run1 timed out at 300 s before the fixes)
call3 fid_sim_a              5  30 0 s per model (runs 1-4)
call3 fid_real_b           190 290 as fid_real_a; the larger guard takes what trace a left (a trace's time is about the sum of its 4 makespans, drawn by the generator)
call3 fid_sim_b              5  30 as fid_sim_a
call3 deadline               - 540 -
EOF
}
# Device time outside the calls (/work/.library/device/README.md): the machine's start, the
# transfers of each call, and the idle wait between calls (a warm machine goes back after 30 s).
# A session's device time: 15 minutes since 2026-11 (it was 30).
window_s=${VALIDATE_WINDOW_S:-900}
startup_s=120     # "a minute or more" to start; a failed start costs 1 to 2 minutes
transfer_s=15     # per call: the working tree with the bundle (15 MiB) out, one tarball back
gap_s=30          # per gap between calls: at most the 30 s a machine stays warm

plan_value() { plan_table | awk -v c="$1" -v p="$2" -v f="$3" '$1 == c && $2 == p { print $f; exit }'; }

print_plan() {
  local calls
  calls=$(plan_table | awk '{ print $1 }' | uniq | tr '\n' ' ')
  local n
  n=$(echo $calls | wc -w)
  echo "validate.sh plan: GPU sessions of ${window_s} s of device time (start-up included), calls in this order"
  echo "(est: expected seconds; guard: a phase's time limit, a call's deadline; sources: docs/results/h100/runN/summary.txt)"
  printf '%-6s %-21s %6s %6s  %s\n' call phase est guard "sized from"
  plan_table | awk '$2 != "deadline" {
      src = ""; for (i = 5; i <= NF; i++) src = src (i > 5 ? " " : "") $i
      printf "%-6s %-21s %6d %6d  %s\n", $1, $2, $3, $4, src
      sum += $3
    } $2 == "deadline" {
      printf "%-6s %-21s %6d %6d  the call: its phases, its deadline\n", $1, "= call", sum, $4
      sum = 0
    }'
  local est guard
  est=$(plan_table | awk '$2 != "deadline" { s += $3 } END { print s }')
  guard=$(plan_table | awk '$2 == "deadline" { s += $4 } END { print s }')
  local overhead=$((startup_s + n * transfer_s + (n - 1) * gap_s))
  printf '%-28s %6d %6d  %s\n' "machine start-up" "$startup_s" "$startup_s" "device README: a minute or more; a failed start costs 1-2 min"
  printf '%-28s %6d %6d  %s\n' "transfers ($n calls)" $((n * transfer_s)) $((n * transfer_s)) "the tree and bundle out, one tarball back, per call"
  printf '%-28s %6d %6d  %s\n' "gaps ($((n - 1)) between calls)" $(((n - 1) * gap_s)) $(((n - 1) * gap_s)) "send the next call within 30 s, or the machine goes back"
  printf '%-28s %6d %6d  %s\n' "one session" $((est + overhead)) $((guard + overhead)) "the $n calls back to back, of ${window_s} s (est; every deadline reached)"
  if [ $((guard + overhead)) -le "$window_s" ]; then
    echo "validate.sh plan: the $n calls fit one ${window_s}-s session"
    return 0
  fi
  # One call per session, each on a fresh machine (call3 carries call2's tarball: .vin/call2.tgz).
  local c ok=0 k=0
  for c in $calls; do
    k=$((k + 1))
    local ce cg
    ce=$(plan_table | awk -v c="$c" '$1 == c && $2 != "deadline" { s += $3 } END { print s }')
    cg=$(plan_value "$c" deadline 4)
    printf '%-28s %6d %6d  %s\n' "session $k: $c" $((startup_s + transfer_s + ce)) $((startup_s + transfer_s + cg)) \
      "start-up, one transfer, the call; of ${window_s} s"
    [ $((startup_s + transfer_s + cg)) -le "$window_s" ] || ok=1
  done
  if [ "$ok" -ne 0 ]; then
    echo "validate.sh plan: a call's deadline does not fit a ${window_s}-s session" >&2
    return 1
  fi
  echo "validate.sh plan: the $n calls do not fit one ${window_s}-s session: one call per session, in order ($n sessions)"
}

usage() {
  echo "usage: validate.sh plan | validate.sh call1|call2 OUT | validate.sh call3 OUT [INPUT...] | PHASES=\"...\" validate.sh phases OUT [INPUT...]" >&2
  exit 2
}

[ "$#" -ge 1 ] || usage
mode=$1
case "$mode" in
  plan)
    [ "$#" -eq 1 ] || usage
    print_plan
    exit $?
    ;;
  call1 | call2)
    [ "$#" -eq 2 ] || usage
    ;;
  call3 | phases)
    [ "$#" -ge 2 ] || usage
    ;;
  *)
    echo "validate.sh: unknown call '$mode' (valid: $valid_calls)" >&2
    exit 2
    ;;
esac
shift
dest=$1
shift
inputs=("$@")
bin=$here/bin
traces=$here/traces
if [ ! -x "$bin/salus-run" ]; then
  echo "validate.sh: no bundle beside this script (no $bin/salus-run): build one with bash scripts/gpu-bundle.sh DIR and run DIR/validate.sh" >&2
  exit 2
fi
mkdir -p "$dest"
dest=$(cd "$dest" && pwd)
state=${VALIDATE_STATE:-/tmp/salus-validate}
mkdir -p "$state"
state=$(cd "$state" && pwd)
out=$state/$mode
rm -rf "$out"
mkdir -p "$out"
export SALUS_DATA_DIR=$traces
gpu_mem=${GPU_MEM:-16GiB}
math=${MATH:-fp32}
if [ "$mode" = phases ]; then
  deadline_s=${DEADLINE_S:-540}
else
  deadline_s=${DEADLINE_S:-$(plan_value "$mode" deadline 4)}
fi
deadline=$(($(date +%s) + deadline_s))
summary=$out/steps.txt
: >"$summary"
echo "$mode, deadline ${deadline_s} s, math $math, pool $gpu_mem, bundle $(head -1 "$here/COMMIT" 2>/dev/null)" >"$out/call.txt"

# Libraries: RUNPATH first (ldd without help, recorded), then python3's NVIDIA wheels.
ldd_plain=$(ldd "$bin/salus-run" 2>&1)
. "$here/env.sh"

left() { echo $((deadline - $(date +%s))); }
# The guard of a phase of this call (0 when the plan has none).
guard_of() { local g; g=$(plan_value "$mode" "$1" 4); echo "${g:-0}"; }
# run_step NAME LIMIT_S CMD...: runs CMD with its output in OUT/NAME.log, at most LIMIT_S seconds
# (less when the deadline is nearer), and records NAME, status, seconds, estimate and guard.
run_step() {
  local name=$1 limit=$2
  shift 2
  local rem est
  rem=$(left)
  est=$(plan_value "$mode" "$name" 3)
  if [ "$rem" -lt 10 ]; then
    printf '%-22s %-11s %5s %5s %5s\n' "$name" "no-time" "-" "${est:--}" "$limit" >>"$summary"
    return 124
  fi
  local cap=$limit
  [ "$cap" -gt $((rem - 5)) ] && cap=$((rem - 5))
  local t0=$SECONDS rc
  echo "=== $name (limit ${cap}s): $*" | tee -a "$out/commands.log" >&2
  timeout --kill-after=5 "$cap" "$@" >"$out/$name.log" 2>&1
  rc=$?
  local status=ok
  [ $rc -ne 0 ] && status="rc=$rc"
  [ $rc -eq 124 ] && status="timeout"
  printf '%-22s %-11s %5s %5s %5s\n' "$name" "$status" "$((SECONDS - t0))" "${est:--}" "$limit" >>"$summary"
  tail -n 4 "$out/$name.log" >&2
  return $rc
}
# Phases run as `bash -c` under timeout: they read these.
export bin traces out gpu_mem math

phase_env() {
  {
    echo "## nvidia-smi"; nvidia-smi 2>&1
    echo "## driver / runtime"; nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used --format=csv 2>&1
    echo "## CPUs"; nproc
    echo "## python NVIDIA libraries"; echo "${LD_LIBRARY_PATH:-}"
    echo "## ldd salus-run (RUNPATH only)"; echo "$ldd_plain"
    echo "## ldd (with env.sh)"; for b in "$bin"/*; do echo "# $(basename "$b")"; ldd "$b"; done
    echo "## bundle commit"; cat "$here/COMMIT"
  } >"$out/env.log" 2>&1
  if grep -q "not found" <(for b in "$bin"/*; do ldd "$b"; done); then
    printf '%-22s %-11s %5s %5s %5s\n' "env" "missing-lib" "-" 1 10 >>"$summary"
  else
    printf '%-22s %-11s %5s %5s %5s\n' "env" "ok" "-" 1 10 >>"$summary"
  fi
}

# Losses of every runnable network on the CPU device and on CUDA (FP32, then TF32), each a job of
# LOSS_ITERS iterations alone in its own process (so every job is job 0 with the same seed, hence
# the same weights and batch): the CPU runs at once, one per CPU; meanwhile the CUDA runs, FP32 and
# TF32 side by side, each one network after another. The catalog only names the workloads: P and E come from the models (--memory model),
# and one FIFO job needs no iteration time.
losses_body() {
  local d=$out/losses nets=${LOSS_NETS:-lenet_8 mlp_8 alexnet_2 overfeat_2 googlenet_2 vgg11_2 vgg16_2 vgg19_2 resnet50_2 resnet101_2 resnet152_2}
  mkdir -p "$d"
  python3 - "$d/catalog.json" $nets <<'PY'
import json, sys
names = sys.argv[2:]
entry = lambda n: {"name": n, "persistent_mib": 1, "ephemeral_mib": 1, "iter_ms": 1000, "gpu_util": 1,
                   "source": "validate.sh losses: names the workload only (salus-run --memory model takes P and E from "
                             "the model; one FIFO job needs no iteration time)"}
json.dump({"format": "salus-catalog/1", "gpu": "any", "notes": "validate.sh losses", "workloads": [entry(n) for n in names]},
          open(sys.argv[1], "w"), indent=1)
PY
  local ncpu i=0 rc=0 pids=() n m
  ncpu=$(nproc)
  for n in $nets; do
    printf 'job_id,workload,arrival_s,iterations\n%s,%s,0,%s\n' "$n" "$n" "${LOSS_ITERS:-3}" >"$d/$n.csv"
    "$bin/salus-run" --device cpu --cpus $((i % ncpu)) --warmup off --memory model --gpu-mem 4GiB --policy fifo \
      --profiles "$d/catalog.json" --trace "$d/$n.csv" --summary-json "$d/cpu_$n.json" >"$d/cpu_$n.log" 2>&1 &
    pids+=($!)
    i=$((i + 1))
  done
  for m in fp32 tf32; do
    (
      r=0
      for n in $nets; do
        "$bin/salus-run" --device cuda --math $m --warmup off --memory model --gpu-mem 4GiB --policy fifo \
          --profiles "$d/catalog.json" --trace "$d/$n.csv" --summary-json "$d/cuda_${m}_$n.json" \
          >"$d/cuda_${m}_$n.log" 2>&1 || { echo "cuda $m $n failed (exit $?)"; r=1; }
      done
      exit $r
    ) &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || { echo "a run failed (logs in losses/)"; rc=1; }; done
  python3 "$here/tables.py" losses "$d"
  return $rc
}

# Two alexnet_25 jobs started together as two processes, the GPU shared by the driver's time
# slicing (no MPS, nothing changed), each running one job alone.
timeslice_processes_body() {
  "$bin/salus-run" --device cuda --math "$math" --gpu-mem "$gpu_mem" --memory model --policy fifo \
    --trace "$out/timeslice_one.csv" --summary-json "$out/timeslice_proc1.json" >"$out/timeslice_proc1.out" 2>&1 &
  local p1=$!
  "$bin/salus-run" --device cuda --math "$math" --gpu-mem "$gpu_mem" --memory model --policy fifo \
    --trace "$out/timeslice_one.csv" --summary-json "$out/timeslice_proc2.json" >"$out/timeslice_proc2.out" 2>&1
  local rc=$?
  wait $p1 || rc=$?
  return $rc
}
# fid_sims_body LABEL TRACE CATALOG: salus-sim on the trace under every model of FID_MODELS, each
# compared with the GPU run by fidelity.py.
fid_sims_body() {
  local label=$1 trace=$2 cat=$3 model rc=0
  for model in ${FID_MODELS:-auto capacity shares crowds pairs profiled none}; do
    "$bin/salus-sim" --profiles "$cat" --gpu-mem "$gpu_mem" --interference "$model" --policy fifo,srtf,pack,fair \
      --trace "$trace" --out "$out/fid_sim_${label}_$model" --summary-json "$out/fid_sim_${label}_$model.json" &&
      python3 "$here/fidelity.py" "$out/fid_sim_${label}_$model" "$out/fid_real_$label" \
        --json "$out/fidelity_${label}_$model.json" >"$out/fidelity_${label}_$model.log" 2>&1 ||
      { echo "model $model: salus-sim or fidelity.py failed"; rc=1; }
  done
  return $rc
}
export -f losses_body timeslice_processes_body fid_sims_body
export here

phase_cuda_tests() { run_step cuda_tests "$(guard_of cuda_tests)" "$bin/test_gpu_cuda" --duration=true; }

phase_sanitizer() {
  printf 'job_id,workload,arrival_s,iterations\na,resnet50_25,0,2\nb,googlenet_25,0,2\nc,lenet_32,0,3\nd,alexnet_25,0.1,2\n' \
    >"$out/short.csv"
  run_step sanitizer "$(guard_of sanitizer)" compute-sanitizer --tool memcheck --error-exitcode 3 --print-limit 20 \
    "$bin/salus-run" --device cuda --math "$math" --gpu-mem 4GiB --memory model --policy pack --trace "$out/short.csv"
}

phase_losses() { run_step losses "$(guard_of losses)" bash -c losses_body; }

phase_runs() {
  # A trace of bigger models than the small example, all implemented by the real backend.
  cat >"$out/mixed.csv" <<'EOF'
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
  run_step run_small "$(guard_of run_small)" "$bin/salus-run" --device cuda --math "$math" --gpu-mem "$gpu_mem" \
    --memory model --trace "$traces/examples/real_small.csv" --summary-json "$out/run_small.json"
  run_step run_mixed "$(guard_of run_mixed)" "$bin/salus-run" --device cuda --math "$math" --gpu-mem "$gpu_mem" \
    --memory model --trace "$out/mixed.csv" --summary-json "$out/run_mixed.json"
}

phase_packing() {
  # The hyper-parameter case (Fig. 11): eight copies of one small job at once, FIFO against PACK.
  local w name iters i
  for w in alexnet_25:150 resnet50_25:20; do
    name=${w%%:*} iters=${w##*:}
    { echo "job_id,workload,arrival_s,iterations"; for i in $(seq -w 1 8); do echo "hp$i,$name,0,$iters"; done; } \
      >"$out/packing_$name.csv"
    run_step "packing_$name" "$(guard_of "packing_$name")" "$bin/salus-run" --device cuda --math "$math" \
      --gpu-mem "$gpu_mem" --memory model --policy fifo,pack --trace "$out/packing_$name.csv" \
      --summary-json "$out/packing_$name.json"
  done
}

phase_timeslice() {
  # Fig. 13: two alexnet_25 jobs of TS_ITERS iterations each (the paper: one minute each;
  # shortened to fit) in Salus lanes (PACK, one process) against two processes.
  local ts_iters=${TS_ITERS:-2500}
  printf 'job_id,workload,arrival_s,iterations\na,alexnet_25,0,%s\nb,alexnet_25,0,%s\n' "$ts_iters" "$ts_iters" \
    >"$out/timeslice_two.csv"
  printf 'job_id,workload,arrival_s,iterations\na,alexnet_25,0,%s\n' "$ts_iters" >"$out/timeslice_one.csv"
  run_step timeslice_salus "$(guard_of timeslice_salus)" "$bin/salus-run" --device cuda --math "$math" \
    --gpu-mem "$gpu_mem" --memory model --policy pack --trace "$out/timeslice_two.csv" \
    --summary-json "$out/timeslice_salus.json"
  run_step timeslice_alone "$(guard_of timeslice_alone)" "$bin/salus-run" --device cuda --math "$math" \
    --gpu-mem "$gpu_mem" --memory model --policy fifo --trace "$out/timeslice_one.csv" \
    --summary-json "$out/timeslice_alone.json"
  run_step timeslice_processes "$(guard_of timeslice_processes)" bash -c timeslice_processes_body
}

phase_bench() {
  # Fig. 12 and the service overhead: one job alone under the service against plain loops.
  SALUS_BENCH_DEVICE=cuda SALUS_BENCH_MODELS=${BENCH_MODELS:-resnet50_75,alexnet_100,googlenet_100,overfeat_100,lenet_32} \
    run_step "${1:-bench}" "$(guard_of bench)" "$bin/backend_bench" --math "${2:-$math}" --benchmark_min_time=0.3 \
    --benchmark_format=console --benchmark_out="$out/${1:-bench}.json" --benchmark_out_format=json
}

all_workloads="lenet_32,mlp_64"
for m in alexnet googlenet overfeat vgg11 vgg16 vgg19; do all_workloads="$all_workloads,${m}_25,${m}_50,${m}_100"; done
for m in resnet50 resnet101 resnet152; do all_workloads="$all_workloads,${m}_25,${m}_50,${m}_75"; done
fid_workloads=${FID_WORKLOADS:-resnet50_25,alexnet_25,googlenet_25,vgg11_25,overfeat_25,lenet_32,mlp_64}

phase_profile_all() {
  # Every implemented workload at the paper's batch sizes, alone (and u from a copy beside itself).
  run_step profile_all "$(guard_of profile_all)" "$bin/salus-profile" --device cuda --math "$math" --gpu-mem "$gpu_mem" \
    --pairs off --switch off --workloads "$all_workloads" --out "$out/profiles_all.json"
}

phase_fid_profile() {
  # The fidelity workloads with everything the models read (salus-profile's defaults on a GPU):
  # pairs, crowds of 3, 5 and 7 lanes, sweeps of 3, 5, 8 and 12 copies of each workload for
  # `capacity`, each workload's switching cost; and CROWD_SWEEP's options.
  local guard
  guard=$(plan_value call2 fid_profile 4)
  local sweep=()
  if [ -n "${CROWD_SWEEP:-}" ]; then
    read -r -a sweep <<<"$CROWD_SWEEP"
    guard=$((guard + $(plan_value call2 crowd_sweep 4)))
  fi
  run_step fid_profile "$guard" "$bin/salus-profile" --device cuda --math "$math" --gpu-mem "$gpu_mem" \
    --workloads "$fid_workloads" "${sweep[@]}" --out "$out/profiles_fidelity.json"
}

phase_h100() {
  # traces/profiles/h100.json: the fidelity catalog (pairs, crowds, switching, interference) plus
  # every other workload's solo entry from profile_all.
  run_step h100 "$(guard_of h100)" python3 - "$out/profiles_fidelity.json" "$out/profiles_all.json" "$out/h100.json" <<'PY'
import json, sys
fid, every = (json.load(open(p)) for p in sys.argv[1:3])
have = sorted(w["name"] for w in fid["workloads"])
extra = [w for w in every["workloads"] if w["name"] not in have]
fid["workloads"] += extra
fid["notes"] += (". Merged by validate.sh: " + ", ".join(have) + " with pairs, crowds and switching from one salus-profile "
                 "run; the other workloads from a second run of every implemented workload at the paper's batch sizes "
                 "with --pairs off --switch off")
if ". Not measured" in every["notes"]:
    fid["notes"] += " (" + every["notes"][every["notes"].index(". Not measured") + 2:] + ")"
with open(sys.argv[3], "w") as f:
    json.dump(fid, f, indent=2)
    f.write("\n")
print(f"h100.json: {len(fid['workloads'])} workloads ({len(have)} with pairs, crowds and switching), "
      f"{len(fid.get('pairs', []))} pairs, {len(fid.get('crowds', []))} crowds, interference {fid.get('interference')}")
PY
}

# call3: the catalog (call2's, else measured here), then each trace on the GPU and in salus-sim
# under every model.
fid_catalog=$out/profiles_fidelity.json
phase_fid_catalog() {
  local src="" c
  for c in "${inputs[@]}"; do
    if [ -f "$c" ] || [ -f "$c/profiles_fidelity.json" ]; then
      src=$c
    elif [ -d "$c/call2" ]; then
      src=$c/call2
    elif [ -f "$c/call2.tgz" ]; then
      src=$c/call2.tgz
    fi
    [ -n "$src" ] && break
  done
  if [ -z "$src" ]; then
    if [ -f "$state/call2/profiles_fidelity.json" ]; then src=$state/call2; elif [ -f "$dest/call2.tgz" ]; then src=$dest/call2.tgz; fi
  fi
  local from=$src
  if [ -n "$src" ] && [ -f "$src" ]; then
    mkdir -p "$out/input"
    tar -xzf "$src" -C "$out/input" && src=$out/input/call2
  fi
  if [ -n "$src" ] && [ -f "$src/profiles_fidelity.json" ]; then
    cp "$src/profiles_fidelity.json" "$fid_catalog"
    [ -f "$src/h100.json" ] && cp "$src/h100.json" "$out/h100.json"
    echo "catalog: from call2 ($from)" >"$out/fid_catalog.log"
    printf '%-22s %-11s %5s %5s %5s\n' fid_catalog "call2" 0 1 10 >>"$summary"
  else
    echo "catalog: measured here (call2's not in: ${inputs[*]:-no input}, $state/call2, $dest/call2.tgz)" \
      >"$out/fid_catalog.log"
    mode=call2 phase_fid_profile
  fi
  rm -rf "$out/input"
  [ -f "$fid_catalog" ]
}

# fidelity LABEL SEED: trace LABEL drawn from the catalog, run on the GPU under the four policies
# and predicted by salus-sim under every model of FID_MODELS (auto: the catalog's choice).
fidelity() {
  local label=$1 seed=$2 trace=$out/fidelity_trace_$1.csv
  "$bin/salus-trace" generate --profiles "$fid_catalog" --workloads "$fid_workloads" --jobs "${FID_JOBS:-20}" \
    --seed "$seed" --mean-interarrival-s "${FID_GAP_S:-0.8}" --median-duration-s "${FID_MEDIAN_S:-1.5}" \
    --min-duration-s 0.5 --max-duration-s "${FID_MAX_S:-5}" --out "$trace" >"$out/fid_trace_$label.log" 2>&1 || return 1
  run_step "fid_real_$label" "$(guard_of "fid_real_$label")" "$bin/salus-run" --device cuda --math "$math" \
    --gpu-mem "$gpu_mem" --profiles "$fid_catalog" --trace "$trace" --policy fifo,srtf,pack,fair \
    --out "$out/fid_real_$label" --summary-json "$out/fid_real_$label.json"
  run_step "fid_sim_$label" "$(guard_of "fid_sim_$label")" bash -c 'fid_sims_body "$@"' _ "$label" "$trace" "$fid_catalog"
}

phase_fidelity() {
  # Trace A: seed FID_SEED (11, run4's), fixed before any measurement. Then the model is frozen
  # (the bundle's commit and this catalog: every model parameter comes from it), and trace B's
  # seed is drawn from it: a hash of the catalog, which nothing chose.
  fidelity a "${FID_SEED:-11}"
  local sha seed_b
  sha=$(cat "$here/COMMIT" "$fid_catalog" | sha256sum | cut -c1-64)
  seed_b=$((16#${sha:0:7}))
  {
    echo "model frozen: bundle $(tr '\n' ' ' <"$here/COMMIT"), catalog sha256 $(sha256sum <"$fid_catalog" | cut -c1-64)"
    echo "trace a: seed ${FID_SEED:-11} (chosen before any measurement)"
    echo "trace b: seed $seed_b (sha256 of the commit and the catalog, first 7 hex digits: drawn after the model was frozen)"
  } >"$out/frozen.txt"
  fidelity b "$seed_b"
}

phase_fidexp() {
  # Not in the plan: salus-experiment fidelity --executor real --device cuda on trace a and the
  # catalog (FIDX_REPEAT repeats, --time-scale FIDX_SCALE, --calibrate FIDX_CALIBRATE).
  if [ "$math" != fp32 ]; then
    printf '%-22s %-11s %5s %5s %5s\n' fidexp "fp32-only" "-" - - >>"$summary"
    return
  fi
  run_step fidexp 480 "$bin/salus-experiment" fidelity --executor real --device cuda --gpu-mem "$gpu_mem" \
    --trace "$out/fidelity_trace_a.csv" --profiles "$fid_catalog" --repeat "${FIDX_REPEAT:-3}" \
    --time-scale "${FIDX_SCALE:-2}" --calibrate "${FIDX_CALIBRATE:-off}" --plots off --out "$out/fidexp"
}

case "$mode" in
  call1)
    phase_env
    phase_cuda_tests
    phase_sanitizer
    phase_losses
    phase_runs
    phase_packing
    phase_timeslice
    phase_bench
    ;;
  call2)
    phase_profile_all
    phase_fid_profile
    [ -f "$out/profiles_fidelity.json" ] && [ -f "$out/profiles_all.json" ] && phase_h100
    ;;
  call3)
    phase_fid_catalog && phase_fidelity
    ;;
  phases)
    # Named phases, each with the guard its call gives it (480 s for fidexp); for re-runs and the
    # phases outside the plan: bench_tf32 (the benchmark with --math tf32), fidexp (needs
    # fid_catalog and fidelity first, or a catalog from INPUT via fid_catalog).
    for p in ${PHASES:-}; do
      case "$p" in
        env | cuda_tests | sanitizer | losses | runs | packing | timeslice | bench) mode=call1 "phase_$p" ;;
        bench_tf32) mode=call1 phase_bench bench_tf32 tf32 ;;
        profile_all | fid_profile | h100) mode=call2 "phase_$p" ;;
        fid_catalog | fidelity) mode=call3 "phase_$p" ;;
        fidexp) phase_fidexp ;;
        *)
          echo "validate.sh: unknown phase '$p' (valid: env, cuda_tests, sanitizer, losses, runs, packing, timeslice, bench, bench_tf32, profile_all, fid_profile, h100, fid_catalog, fidelity, fidexp)" >&2
          exit 2
          ;;
      esac
    done
    ;;
esac

python3 "$here/tables.py" "$mode" "$out" >"$out/table.txt" 2>&1
tar -czf "$dest/$mode.tgz" -C "$state" "$mode"
echo
echo "=== $mode: $(cat "$out/call.txt"); logs and JSON in $dest/$mode.tgz ($(du -k "$dest/$mode.tgz" | cut -f1) KiB)"
printf '%-22s %-11s %5s %5s %5s\n' phase status secs est guard
cat "$summary"
cat "$out/table.txt"
