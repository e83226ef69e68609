#!/usr/bin/env bash
# salus-run on the cpu-faults device: every policy x seeds x fault kinds (each alone and mixed) on
# traces/examples/real_small.csv at --time-scale 4, one salus-run per cell (a lost device stops later policies, so
# each policy runs alone); prints a Markdown table: the command's --inject-faults, policy, seed,
# exit status, done/failed/rejected/interrupted against the jobs, faults injected, and whether
# the run ended with every job accounted for. Usage: scripts/fault-runs.sh [BUILD_DIR] [SEEDS].
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
seeds=${2:-"1 2 3"}
bin="$build/bin/salus-run"
[ -x "$bin" ] || { echo "fault-runs: $bin is not built" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
kinds=("alloc=0.003" "iter=0.03" "lost=0.01" "alloc=0.002,iter=0.02,lost=0.005")
policies=(fifo srtf pack fair las priority)
echo "| --inject-faults | policy | seed | exit | done | failed | rejected | interrupted | jobs | injected (alloc/iter/lost) | complete |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for kind in "${kinds[@]}"; do
  for seed in $seeds; do
    for policy in "${policies[@]}"; do
      out="$tmp/$policy-$seed.json"
      set +e
      "$bin" --trace traces/examples/real_small.csv --gpu-mem 256MiB --time-scale 4 --warmup off \
        --device cpu-faults --inject-faults "$kind,seed=$seed" --policy "$policy" \
        --summary-json "$out" >"$tmp/stdout" 2>"$tmp/stderr"
      code=$?
      set -e
      python3 - "$out" "$kind" "$policy" "$seed" "$code" <<'PY'
import json, sys
path, kind, policy, seed, code = sys.argv[1:]
s = json.load(open(path))
r = s["results"][0]
jobs = r["jobs"]
n = len(jobs)
d, f, rj, i = r["jobs_done"], r["jobs_failed"], r["jobs_rejected"], r["jobs_interrupted"]
states_ok = all(j["status"] in ("done", "failed", "rejected") and (j["status"] == "done" or j["reason"]) for j in jobs)
want_code = 1 if f > 0 else 0
ok = d + f + rj == n and i == 0 and states_ok and int(code) == want_code
inj = r["injected_faults"]
print(f"| {kind} | {policy} | {seed} | {code} | {d} | {f} | {rj} | {i} | {n} | {inj['alloc']}/{inj['iter']}/{inj['lost']} | {'yes' if ok else 'NO'} |")
PY
    done
  done
done
