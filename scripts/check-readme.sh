#!/usr/bin/env bash
# Checks that README.md says what works:
#  1. the set-up commands: exactly `bash scripts/run-main.sh` and `bash scripts/test.sh`, each script
#     installing with scripts/install-deps.sh, run-main.sh running salus-experiment, test.sh running
#     ctest, and .ci/run calling the test one (checked as text: CI runs the test one anyway, and the
#     install one takes minutes);
#  2. every ```sh block of README.md (the quick start), each command run as printed from a scratch
#     folder that sees the source tree's traces/, plots/ and tests/ and build/bin/; a command fails
#     the check when it exits non-zero or prints an error;
# Links, anchors and "see PAGE.md, \"Heading\"" are checked by scripts/check-docs.py refs (ctest
# docs/references), the commands shown with their output by check-docs.py run (docs/doc_tests).
# Usage: scripts/check-readme.sh BUILD_DIR     (the programs in BUILD_DIR/bin, else BUILD_DIR/experiments)
# Exit 0: all good; 1: something failed (each failure named); 2: bad usage;
# 77: everything ran passed, but a command needs what this machine lacks (matplotlib, salus-run).
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
[ $# -eq 1 ] || { echo "usage: $0 BUILD_DIR" >&2; exit 2; }
build=$(cd "$1" 2>/dev/null && pwd) || { echo "check-readme: $1: no such build folder" >&2; exit 2; }
if [ -x "$build/bin/salus-sim" ]; then bin=$build/bin
elif [ -x "$build/experiments/salus-sim" ]; then bin=$build/experiments
else echo "check-readme: no salus-sim in $build/bin or $build/experiments (build it first)" >&2; exit 2; fi
readme=$src/README.md
fail=0
skipped=()
bad() { echo "FAIL: $*"; fail=1; }

# 1. Set-up commands, as text.
setup=$(sed -n '/^## Set-up/,/^## /p' "$readme" | grep -E '^    bash ' | sed 's/^    //')
want=$'bash scripts/run-main.sh\nbash scripts/test.sh'
[ "$setup" = "$want" ] || bad "README's set-up commands are not exactly: $(tr '\n' ';' <<<"$want") (found: $(tr '\n' ';' <<<"$setup"))"
for s in run-main.sh test.sh; do
  [ -f "$src/scripts/$s" ] || { bad "scripts/$s (a set-up command) does not exist"; continue; }
  grep -q '^bash scripts/install-deps.sh' "$src/scripts/$s" || bad "scripts/$s does not run scripts/install-deps.sh"
done
grep -q 'salus-experiment' "$src/scripts/run-main.sh" || bad "scripts/run-main.sh does not run salus-experiment (the main job)"
grep -q '^ctest ' "$src/scripts/test.sh" || bad "scripts/test.sh does not run ctest"
grep -q '^bash scripts/test.sh' "$src/.ci/run" || bad ".ci/run does not call the README's test command (bash scripts/test.sh)"

# 2. The quick start, run as printed.
work=$(mktemp -d "${TMPDIR:-/tmp}/check-readme.XXXXXX")
trap 'rm -rf "$work"' EXIT
ln -s "$src/traces" "$src/plots" "$src/tests" "$work/"
mkdir -p "$work/build" && ln -s "$bin" "$work/build/bin"
# The Python module (python/), where it was built: <build>/python.
[ -d "$build/python/salus" ] && ln -s "$build/python" "$work/build/python"
# The ```sh blocks, one command a line (a line ending in \ continues), comments and blank lines dropped.
mapfile -t cmds < <(awk '
  /^```sh[[:space:]]*$/ { inblock = 1; next }
  /^```/ { inblock = 0; next }
  inblock {
    line = $0
    if (cont != "") { line = cont " " line; cont = "" }
    if (line ~ /\\$/) { sub(/\\$/, "", line); cont = line; next }
    if (line ~ /^[[:space:]]*(#|$)/) next
    print line
  }' "$readme")
[ ${#cmds[@]} -gt 0 ] || bad "README.md has no \`\`\`sh block (the quick start)"
for c in "${cmds[@]}"; do
  prog=${c%% *}
  if [[ $prog == build/bin/* ]] && [ ! -x "$work/$prog" ]; then
    [ "$prog" = build/bin/salus-run ] && { skipped+=("$c (no salus-run in this build)"); continue; }
    bad "$c: $prog is not built"; continue
  fi
  if [[ $c == */usr/bin/python3\ plots/* ]] && ! /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
    skipped+=("$c (no matplotlib for /usr/bin/python3)"); continue
  fi
  if [[ $c == PYTHONPATH=build/python\ * ]] && [ ! -d "$work/build/python" ]; then
    skipped+=("$c (the Python module is not built: pybind11-dev, python3-dev)"); continue
  fi
  t0=$(date +%s.%N)
  out=$(cd "$work" && bash -c "$c" 2>&1 </dev/null); rc=$?
  dt=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  if [ $rc -ne 0 ]; then
    bad "$c: exit status $rc"; tail -5 <<<"$out" | sed 's/^/    /'
  elif grep -Eiq '(^|[^a-z_])(error|traceback|terminate called|cannot open|unrecognised option|no such file)' <<<"$out"; then
    bad "$c: printed an error"; grep -Ei '(^|[^a-z_])(error|traceback|terminate called|cannot open|unrecognised option|no such file)' <<<"$out" | head -5 | sed 's/^/    /'
  else
    echo "ok   ${dt} s  $c"
  fi
done

if [ $fail -ne 0 ]; then echo "check-readme: FAILED"; exit 1; fi
if [ ${#skipped[@]} -gt 0 ]; then
  printf 'not checked here: %s\n' "${skipped[@]}"
  exit 77
fi
echo "check-readme: the README's ${#cmds[@]} commands ran as printed; set-up commands consistent"
