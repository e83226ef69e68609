#!/usr/bin/env bash
# scripts/gpu/validate.sh without a GPU: the plan fits 15-minute sessions, the call names are
# checked, a call packs one tarball and prints its table last, call3 finds call2's catalog in a
# tarball, and tables.py reads a committed GPU run. Binaries are stand-ins that fail at once (the
# phases that need a GPU end with their exit status, as they would on a machine without one).
#   validate_test.sh SOURCE_DIR
set -uo pipefail
src=${1:?usage: validate_test.sh SOURCE_DIR}
v=$src/scripts/gpu/validate.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
check() {  # check WHAT COND...: runs COND, reports WHAT when it fails
  local what=$1
  shift
  if ! "$@"; then
    echo "FAIL: $what" >&2
    fails=$((fails + 1))
  fi
}

# The plan: exit 0, three calls in order, each deadline <= 540 s; in 900-s sessions (the device
# time a session has) one call each, each within its session; all three in one 1800-s session.
plan=$(bash "$v" plan)
check "plan exits 0" test $? -eq 0
check "plan lists call1, call2, call3 in order" \
  test "$(echo "$plan" | awk '$1 ~ /^call[0-9]$/ { print $1 }' | uniq | tr '\n' ' ')" = "call1 call2 call3 "
while read -r est guard; do
  check "a call's deadline ($guard s) is at most 540 s" test "$guard" -le 540
  check "a call's estimate ($est s) is inside its deadline ($guard s)" test "$est" -lt "$guard"
done < <(echo "$plan" | awk '$2 == "=" && $3 == "call" { print $4, $5 }')
read -r est worst < <(echo "$plan" | awk '$1 == "one" && $2 == "session" { print $3, $4 }')
check "the three calls' estimate ($est s) and worst case ($worst s) in one session fit 1800 s" test "$est" -le "$worst" -a "$worst" -le 1800
check "900-s sessions: one call each, in order" \
  test "$(echo "$plan" | awk '$1 == "session" { print $3 }' | tr '\n' ' ')" = "call1 call2 call3 "
while read -r est guard; do
  check "a session's estimate ($est s) and worst case ($guard s) fit 900 s" test "$est" -lt "$guard" -a "$guard" -le 900
done < <(echo "$plan" | awk '$1 == "session" { print $4, $5 }')
check "the plan says one call per session" grep -q "one call per session, in order (3 sessions)" <<<"$plan"
plan=$(VALIDATE_WINDOW_S=1800 bash "$v" plan)
check "VALIDATE_WINDOW_S=1800: exit 0" test $? -eq 0
check "VALIDATE_WINDOW_S=1800: the three calls in one session" grep -q "the 3 calls fit one 1800-s session" <<<"$plan"
err=$(VALIDATE_WINDOW_S=600 bash "$v" plan 2>&1 >/dev/null)
check "VALIDATE_WINDOW_S=600: exit 1" test $? -eq 1
check "VALIDATE_WINDOW_S=600: says a call does not fit" test "$err" = "validate.sh plan: a call's deadline does not fit a 600-s session"
plan=$(bash "$v" plan)
check "the plan gives CROWD_SWEEP a guard" grep -q "^call2  crowd_sweep" <<<"$plan"
# Every phase a call runs has a row in the plan (its guard comes from there).
for p in cuda_tests sanitizer losses run_small run_mixed packing_alexnet_25 packing_resnet50_25 timeslice_salus \
         timeslice_alone timeslice_processes bench profile_all fid_profile h100 fid_real_a fid_sim_a fid_real_b fid_sim_b; do
  check "the plan has a row for $p" grep -qE "^call[0-9]  $p " <<<"$plan"
done

# Call names: unknown ones and missing arguments exit 2 with the valid names.
err=$(bash "$v" call9 "$tmp/out" 2>&1 >/dev/null)
check "an unknown call exits 2" test $? -eq 2
check "an unknown call lists the valid ones" \
  test "$err" = "validate.sh: unknown call 'call9' (valid: plan, call1, call2, call3, phases)"
for args in "" "call1" "call2 a b" "plan x"; do
  bash "$v" $args >/dev/null 2>&1
  check "'validate.sh $args' exits 2 (usage)" test $? -eq 2
done
err=$(bash "$v" call1 "$tmp/out" 2>&1 >/dev/null)
check "a call outside a bundle exits 2" test $? -eq 2
check "a call outside a bundle says how to make one" grep -q "gpu-bundle.sh" <<<"$err"

# A bundle of stand-ins: every program fails at once.
b=$tmp/bundle
mkdir -p "$b/bin"
cp "$src"/scripts/gpu/{validate.sh,env.sh,fidelity.py,tables.py} "$b/"
ln -s "$src/traces" "$b/traces"
echo "test" >"$b/COMMIT"
for p in salus-run salus-profile salus-sim salus-trace salus-experiment test_gpu_cuda backend_bench; do
  printf '#!/bin/sh\necho "%s: no GPU here" >&2\nexit 3\n' "$p" >"$b/bin/$p"
  chmod +x "$b/bin/$p"
done
export VALIDATE_STATE=$tmp/state

# call3 with call2's tarball: it takes the catalog from it, packs one tarball, and the table is last.
mkdir -p "$tmp/c2/call2"
cp "$src/docs/results/h100/run4/profiles_fidelity.json" "$tmp/c2/call2/"
tar -czf "$tmp/c2/call2.tgz" -C "$tmp/c2" call2
rm -rf "$tmp/c2/call2"
o=$(PATH="$b/bin:$PATH" bash "$b/validate.sh" call3 "$tmp/out" "$tmp/c2/call2.tgz" 2>/dev/null)
check "call3 ends (its phases failing) with exit 0" test $? -eq 0
check "call3 leaves one file, call3.tgz" test "$(ls "$tmp/out")" = "call3.tgz"
check "call3's tarball holds its catalog, steps and table" \
  test "$(tar -tzf "$tmp/out/call3.tgz" | grep -cE '^call3/(profiles_fidelity.json|steps.txt|table.txt|fid_catalog.log)$')" = 4
check "call3 took call2's catalog from the tarball" grep -q "^fid_catalog            call2 " <<<"$o"
check "call3 prints its table last" test "$(echo "$o" | tail -1 | grep -c 'checks pass')" = 1
check "call3 says the GPU run is missing" grep -q "^MISSING trace a" <<<"$o"
check "call3 passes the catalog check" grep -q "^PASS    fidelity catalog  *catalog: from call2 " <<<"$o"

# Again with no input on this machine: call2 was not run here, so it measures the catalog itself.
o=$(bash "$b/validate.sh" call3 "$tmp/out2" 2>/dev/null)
check "call3 without call2's catalog measures it (fid_profile runs)" grep -q "^fid_profile  *rc=3 " <<<"$o"
check "call3 without call2's catalog says so" \
  grep -q "^catalog: measured here (call2's not in: no input, " <(tar -xzOf "$tmp/out2/call3.tgz" call3/fid_catalog.log)
check "call3 without call2's catalog fails the catalog check" grep -q "^FAIL    fidelity catalog " <<<"$o"

# A warm machine: call2's folder in VALIDATE_STATE is found without an input.
mkdir -p "$VALIDATE_STATE/call2"
cp "$src/docs/results/h100/run4/profiles_fidelity.json" "$VALIDATE_STATE/call2/"
o=$(bash "$b/validate.sh" call3 "$tmp/out3" 2>/dev/null)
check "call3 on a warm machine takes call2's folder" grep -q "^fid_catalog            call2 " <<<"$o"

# The deadline: a call given 5 s runs no phase and says so.
o=$(DEADLINE_S=5 bash "$b/validate.sh" call1 "$tmp/out4" 2>/dev/null)
check "a call past its deadline marks its phases no-time" grep -q "^bench  *no-time" <<<"$o"

# tables.py on run4's committed measurements, laid out as call3 leaves them.
t=$tmp/t3
mkdir -p "$t"
r=$src/docs/results/h100/run4
cp "$r/fid_real.json" "$t/fid_real_a.json"
cp "$r/fidelity_shares.json" "$t/fidelity_a_auto.json"
cp "$r/fidelity_none.json" "$t/fidelity_a_none.json"
echo '{"interference": "shares"}' >"$t/fid_sim_a_auto.json"
o=$(python3 "$src/scripts/gpu/tables.py" call3 "$t")
check "tables.py: PACK ran 9 lanes at once in run4" grep -q "^PASS    trace a PACK lanes at once  *9 (>= 8)" <<<"$o"
check "tables.py: run4's PACK misses the target under shares" \
  grep -q "^FAIL    trace a pack (shares: default)  *median JCT 25.5 %, makespan 14.3 %" <<<"$o"
check "tables.py: every model beside the default" grep -qE "^pack +25\.5/14\.3 % +69\.8/39\.5 %" <<<"$o"
python3 "$src/scripts/gpu/tables.py" call7 "$t" >/dev/null 2>&1
check "tables.py: an unknown mode exits 2" test $? -eq 2

if [ "$fails" -gt 0 ]; then
  echo "$fails check(s) failed" >&2
  exit 1
fi
echo "validate.sh: all checks passed"
