#!/usr/bin/env bash
# scripts/check-docs.py run on pages of its own: a block whose output is the page's passes, one
# that differs, exits otherwise or prints on the other stream fails, {{...}} matches what varies
# (within a line, and whole lines), long and public blocks are left out unless asked for.
# Usage: tests/docs/check_docs_test.sh SOURCE_DIR BUILD_DIR
set -uo pipefail
src=$1 build=$2
py=${PYTHON:-python3}
work=$(mktemp -d "${TMPDIR:-/tmp}/check-docs-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# Passing blocks: exact output, a wildcard in a line, a wildcard line, standard error and exit 2,
# several commands in one block sharing the scratch folder.
cat > "$work/good.md" <<'PAGE'
# good

    $ build/bin/salus-sim --trace traces/examples/hand.csv --policy fifo --interference none --switch-cost-ms 0
    salus-sim: traces/examples/hand.csv (native, 3 jobs), GPU 16 GiB, interference none, switch cost 0 ms
    Policy   Lanes          Makespan   Avg. Queuing     Avg. JCT      95% JCT   Done  Rejected  Failed  Interrupted
    fifo     exclusive        1.90 s         {{...}} s       1.08 s       1.40 s      3         0       0            0

    $ build/bin/salus-sim --policy fifo
    salus-sim: {{...}}traces/long_trace_100.csv (native, 100 jobs), GPU 16 GiB, interference profiled, switch cost 1 ms
    {{...}}

<!-- doc-test: exit 2; stderr -->
    $ build/bin/salus-sim --polcy fifo
    salus-sim: unrecognised option '--polcy' (did you mean --policy?) (see --help)

    $ mkdir -p out && echo one > out/a.txt
    $ cat out/a.txt
    one

<!-- doc-test: long -->
    $ false
    never run without --long

<!-- doc-test: public -->
    $ cat $PUBLIC/none.csv
    never run without --public
PAGE
out=$("$py" "$src/scripts/check-docs.py" run "$build" --page "$work/good.md" 2>&1); rc=$?
[ $rc -eq 0 ] || bad "good.md: exit $rc, expected 0: $out"
grep -q "doc tests: 5 ran, 0 failed, 2 not run" <<<"$out" || bad "good.md: expected 5 run and 2 left out: $out"

# Failing blocks, each alone: a wrong figure, a missing line, an extra line, a wrong exit status,
# the message expected on standard output, an unknown marker.
i=0
while IFS= read -r -d '' page; do
  i=$((i + 1))
  printf '%s' "$page" > "$work/bad$i.md"
  out=$("$py" "$src/scripts/check-docs.py" run "$build" --page "$work/bad$i.md" 2>&1); rc=$?
  [ $rc -ne 0 ] || bad "bad$i.md passed, expected a failure:
$page"
done < <(printf '%s\0' \
'    $ build/bin/salus-sim --trace traces/examples/hand.csv --policy fifo --interference none --switch-cost-ms 0 | tail -n 1
    fifo     exclusive        1.91 s         0.45 s       1.08 s       1.40 s      3         0       0            0
' \
'    $ build/bin/salus-sim --trace traces/examples/hand.csv --policy fifo --interference none --switch-cost-ms 0
    salus-sim: traces/examples/hand.csv (native, 3 jobs), GPU 16 GiB, interference none, switch cost 0 ms
' \
'    $ printf "a\nb\n"
    a
' \
'    $ build/bin/salus-sim --polcy fifo
' \
'<!-- doc-test: exit 2 -->
    $ build/bin/salus-sim --polcy fifo
    salus-sim: unrecognised option '"'"'--polcy'"'"' (did you mean --policy?) (see --help)
' \
'<!-- doc-test: sometimes -->
    $ true
')
[ $i -eq 6 ] || bad "ran $i failing pages, expected 6"

[ $fail -eq 0 ] && echo "check-docs.py run: passing and failing pages as expected"
exit $fail
