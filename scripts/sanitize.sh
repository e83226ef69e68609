#!/usr/bin/env bash
# Sanitizers over the test suite (tests/README.md, "Sanitizers").
#
#   bash scripts/sanitize.sh [asan|tsan|all|asan-ci] [BUILD_ROOT]
#
# asan: configures BUILD_ROOT/build-asan with SALUS_SANITIZE=address (AddressSanitizer, its leak
#       checker, and UBSan with -fno-sanitize-recover=undefined), builds everything and runs the
#       whole ctest suite.
# tsan: the same in BUILD_ROOT/build-tsan with SALUS_SANITIZE=thread (ThreadSanitizer): the real
#       executor's lane worker threads, its admission thread and its completion queue included.
# all:  asan, then tsan (the default).
# asan-ci: the fast ASan + UBSan subset CI runs after the normal suite (scripts/test.sh): only the
#       suites in CI_SUITES are built and run, in BUILD_ROOT/build-asan (core/ and traces/).
# BUILD_ROOT defaults to the repository root (/build-*/ is git-ignored).
#
# CUDA is off (SALUS_ENABLE_CUDA=OFF): the sanitizers instrument host code only and the machines
# this runs on have no GPU; the real executor runs on the CPU device (Eigen), with its threads.
# The compilers are the default ones (gcc on Debian 12). ccache is used when it is installed.
#
# Any report fails: every sanitizer aborts the process at its first report (halt_on_error,
# abort_on_error; UBSan cannot recover, as compiled), so the test that met it fails, and each report
# is also written under BUILD_DIR/sanitizer-reports/ (log_path), which catches reports from programs
# a test starts: the script fails when that folder is not empty after the run, and prints it.
# Exit status: 0 when every test passed with no report, 1 otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD
mode=${1:-all}
root=${2:-$src}
case "$mode" in
  asan|tsan|all|asan-ci) ;;
  *) echo "usage: scripts/sanitize.sh [asan|tsan|all|asan-ci] [BUILD_ROOT]" >&2; exit 2 ;;
esac
mkdir -p "$root"
root=$(cd "$root" && pwd)
jobs=$(nproc)

# The CI subset (asan-ci): core/ (the loop, lanes, Algorithm 1, the pending queue) and traces/ (the
# readers, the catalog, the generator), their test executables and ctest prefixes. Every other
# suite links salus_run, whose closure (run/, cluster/, sim/, traces/, policies/) costs more under
# ASan than CI's budget allows; tests/README.md ("Sanitizers") has the figures.
CI_SUITES=(test_core test_traces)
CI_TESTS='^(core|traces)/'

launcher=()
if command -v ccache > /dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi

supp=$src/scripts/sanitize-suppressions
# A test may have its own ASAN_OPTIONS (the fuzz build's libFuzzer runs turn leaks off); these are
# the defaults every other process inherits. allocator_may_return_null=1: an allocation the
# allocator cannot satisfy returns null, as glibc's does, instead of being a report; the CPU device
# turns that null into DeviceError ("cpu: cannot allocate N bytes", which gpu_backend/'s "an
# impossible allocation" test asks for 2^62 bytes to see). Without it TSan aborted that test
# (allocation-size-too-big in aligned_alloc, gpu_backend/cpu_device.cpp:44).
asan_env() {
  local reports=$1
  export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1:halt_on_error=1:abort_on_error=1:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1:log_path=$reports/asan"
  export UBSAN_OPTIONS="halt_on_error=1:abort_on_error=1:print_stacktrace=1:log_path=$reports/ubsan"
  export LSAN_OPTIONS="suppressions=$supp/lsan.txt"
}
tsan_env() {
  local reports=$1
  export TSAN_OPTIONS="allocator_may_return_null=1:halt_on_error=1:abort_on_error=1:second_deadlock_stack=1:suppressions=$supp/tsan.txt:log_path=$reports/tsan"
}

# build_and_test NAME SANITIZE TIMEOUT_S TESTS_REGEX [TARGET...]: configures, builds (the targets,
# or everything), runs ctest (the tests matching the regex, or all) and checks for reports.
build_and_test() {
  local name=$1 sanitize=$2 timeout=$3 tests=$4
  shift 4
  local dir=$root/build-$name reports
  reports=$dir/sanitizer-reports
  echo "== $name: $dir (SALUS_SANITIZE=$sanitize)"
  local t0=$SECONDS
  # Warnings are not errors here: GCC's manual advises against -Werror with sanitizers, which make
  # false -Wmaybe-uninitialized warnings (gcc 12 with ASan at -O3 stopped on one in
  # tests/sim/sim_runner_test.cpp, a std::function inside run::SimConfig). The normal build keeps
  # -Werror (scripts/test.sh).
  cmake -S "$src" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSALUS_ENABLE_CUDA=OFF \
    -DSALUS_WARNINGS_AS_ERRORS=OFF -DSALUS_SANITIZE="$sanitize" "${launcher[@]}" > /dev/null
  if [ $# -gt 0 ]; then
    cmake --build "$dir" --parallel "$jobs" --target "$@"
  else
    cmake --build "$dir" --parallel "$jobs"
  fi
  local t1=$SECONDS
  rm -rf "$reports"
  mkdir -p "$reports"
  local args=(--test-dir "$dir" --output-on-failure --parallel "$jobs" --timeout "$timeout")
  [ -n "$tests" ] && args+=(-R "$tests")
  local rc=0
  ( if [ "$sanitize" = thread ]; then tsan_env "$reports"; else asan_env "$reports"; fi
    ctest "${args[@]}" ) || rc=$?
  local t2=$SECONDS
  # A file holding only "WARNING: AddressSanitizer failed to allocate 0x... bytes" is not a
  # report: with allocator_may_return_null=1 ASan logs that line when an allocation returns null,
  # as gpu_backend/'s impossible-allocation test (2^62 bytes) asks. Every other file is one.
  local benign='^==[0-9]+==WARNING: (AddressSanitizer|ThreadSanitizer) failed to allocate 0x[0-9a-f]+ bytes$'
  local f
  for f in "$reports"/*; do
    [ -e "$f" ] || continue
    if ! grep -Evq "$benign" "$f"; then
      echo "== $name: $(basename "$f"): an allocation returned null, as asked ($(head -c 200 "$f"))"
      rm -f "$f"
    fi
  done
  if [ -n "$(ls -A "$reports")" ]; then
    echo "== $name: sanitizer reports (in $reports):" >&2
    for f in "$reports"/*; do echo "--- $f" >&2; cat "$f" >&2; done
    rc=1
  fi
  echo "== $name: build $((t1 - t0)) s, tests $((t2 - t1)) s, $([ $rc -eq 0 ] && echo 'no report, every test passed' || echo FAILED)"
  return $rc
}

status=0
case "$mode" in
  asan|all) build_and_test asan address 1800 "" || status=1 ;;&
  tsan|all) build_and_test tsan thread 3600 "" || status=1 ;;
  asan-ci) build_and_test asan address 1800 "$CI_TESTS" "${CI_SUITES[@]}" || status=1 ;;
esac
exit $status
