#!/usr/bin/env bash
# Installed and out-of-place programs find their data and plotting scripts (issue 30): `cmake
# --install` into a fresh prefix, then the installed salus-sim runs the shipped trace and
# salus-experiment finds make_figures.py under <prefix>/share/salus/plots; a program copied where no
# data is says where it looked and names SALUS_DATA_DIR (exit 2).
# Usage: install_test.sh BUILD_DIR
set -u
build=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "install_test: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$tmp/prefix" > "$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; fail "cmake --install failed"; }
for f in bin/salus-sim bin/salus-experiment share/salus/profiles/catalog.json share/salus/long_trace_100.csv \
         share/salus/plots/make_figures.py share/salus/plots/plot_run.py share/salus/plots/atomic_file.py; do
  [ -e "$tmp/prefix/$f" ] || fail "not installed: $f"
done
# Run from elsewhere, with no SALUS_DATA_DIR: the installed tree alone.
cd "$tmp"
out=$(env -u SALUS_DATA_DIR "$tmp/prefix/bin/salus-sim" --quiet --policy fifo,pack 2>&1) || fail "installed salus-sim failed: $out"
echo "$out" | grep -q "$tmp/prefix/share/salus/long_trace_100.csv (native, 100 jobs)" || fail "installed salus-sim did not run the installed trace: $out"
# salus-experiment names the installed make_figures.py when it cannot draw (--plots auto without
# matplotlib) or draws with it; either way the path it uses is the installed one.
exp=$(env -u SALUS_DATA_DIR PATH=/nonexistent "$tmp/prefix/bin/salus-experiment" fair_three --out "$tmp/exp" --plots auto 2>&1)
[ -f "$tmp/exp/fair_three.json" ] || fail "installed salus-experiment wrote no JSON: $exp"
if echo "$exp" | grep -q "draw later with"; then
  echo "$exp" | grep -q "$tmp/prefix/share/salus/plots/make_figures.py" || fail "salus-experiment looks for the plots elsewhere: $exp"
fi
# A program with no data near it: exit 2, naming where it looked and SALUS_DATA_DIR.
mkdir -p "$tmp/lone/bin"
cp "$tmp/prefix/bin/salus-sim" "$tmp/lone/bin/"
lone=$(env -u SALUS_DATA_DIR "$tmp/lone/bin/salus-sim" --quiet 2>&1)
code=$?
[ "$code" -eq 2 ] || fail "a program without data exited $code, not 2: $lone"
echo "$lone" | grep -q "SALUS_DATA_DIR" || fail "the error does not name SALUS_DATA_DIR: $lone"
echo "$lone" | grep -q "$tmp/lone/share/salus" || fail "the error does not say where it looked: $lone"
echo "install_test: ok"
