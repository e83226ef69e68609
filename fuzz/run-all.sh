#!/bin/bash
# Fuzzes every reader in turn, SECONDS each (default 600), at the lowest priority, from a
# scratch copy of its seed corpus. Needs the SALUS_FUZZ=ON build in build-fuzz (fuzz/README.md).
# Prints one line per target; a crash or hang leaves crash-*/timeout-* files in WORK/<format>.
# Usage: run-all.sh [SECONDS [WORK [FORMAT...]]]; the targets default to all of them (every trace
# format, the catalog and the cluster file).
set -u
seconds=${1:-600}
work=${2:-/tmp/salus-fuzz}
shift $(( $# < 2 ? $# : 2 ))
formats=("$@")
[ ${#formats[@]} -gt 0 ] || formats=(native json tiresias gavel philly helios alibaba acme lucid pai2020 pollux catalog cluster bounded)
root=$(cd "$(dirname "$0")/.." && pwd)
# ASan returns freed memory to the OS now and then (madvise over the fuzzer's few hundred MB): at
# nice 19 on a busy machine that alone took over 10 s of wall time, which -timeout (wall clock)
# reported as a hang while the input replays in milliseconds. Keep the memory instead.
export ASAN_OPTIONS=${ASAN_OPTIONS:-allocator_release_to_os_interval_ms=-1}
status=0
for format in "${formats[@]}"; do
  mkdir -p "$work/$format"
  log="$work/$format.log"
  (cd "$work/$format" && nice -n 19 "$root/build-fuzz/fuzz/fuzz_$format" -max_total_time="$seconds" -timeout=10 \
     -rss_limit_mb=2048 -print_final_stats=1 "$work/$format" "$root/fuzz/corpus/$format" >"$log" 2>&1)
  rc=$?
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$')
  echo "$format: exit $rc, ${runs:-?} inputs in ${seconds} s"
  [ $rc -eq 0 ] || status=1
done
exit $status
