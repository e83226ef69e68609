#pragma once
// The Executor contract (core/executor.h), written once and run against every executor: the fake
// executor and the discrete-event simulator (tests/sim/executor_contract_test.cpp, exact clocks)
// and the real executor on the CPU device (tests/real/executor_contract_test.cpp, a real clock).
//
// Include after defining SALUS_CONTRACT_EXECUTORS (the harness types). A harness has
//   static constexpr bool kExact;  // iterations take exactly their profiled time on its clock
//   core::Executor& executor();
//   void start(core::Dispatch d);  // fills in what the executor needs beyond the contract's fields
// constructed from the contract's jobs. Exact executors are checked to the nanosecond; the real
// one has the tolerances of a real clock: every count (iterations done, completions, lanes) is
// the same, times only keep their order (a run starts no earlier than start() and ends after it
// starts, no later than the wait that returns it, and a wait that returns nothing has reached its
// deadline). Cases whose point is an exact instant (a boundary that coincides with an event) run
// only where SALUS_CONTRACT_EXACT is defined.
#include <doctest/doctest.h>

#include <memory>
#include <stdexcept>
#include <vector>

#include "core/executor.h"
#include "support/jobs.h"

namespace salus::test::contract {

using core::Completion;
using core::Dispatch;
using core::JobIndex;
using core::kNever;
using core::LaneId;
using core::TimeNs;

// Job 0: 10 ms iterations; job 1: 20 ms; job 2: 7 ms.
inline std::vector<core::JobSpec> jobs3() {
  return trace({job("a", 0, 100, ms(10), 0, 0), job("b", 0, 100, ms(20), 0, 0), job("c", 0, 100, ms(7), 0, 0)});
}

inline Dispatch dispatch(JobIndex job, LaneId lane, std::int64_t iterations, TimeNs extra = 0) {
  Dispatch d;
  d.job = job;
  d.lane = lane;
  d.iterations = iterations;
  d.extra_ns = extra;
  return d;
}

/// The completion of `job` in `lane` with `iterations` done, from `start` to `end` on an exact
/// clock; on a real one, started no earlier than `started_after` and ended by `now`.
template <typename H>
void check_completion(H& h, const Completion& c, JobIndex job, LaneId lane, std::int64_t iterations, TimeNs start,
                      TimeNs end, TimeNs started_after = 0) {
  CHECK(c.job == job);
  CHECK(c.lane == lane);
  CHECK(c.iterations_done == iterations);
  CHECK_FALSE(c.failed);
  if constexpr (H::kExact) {
    CHECK(c.start_ns == start);
    CHECK(c.end_ns == end);
  } else {
    CHECK(c.start_ns >= started_after);
    CHECK(c.end_ns > c.start_ns);
    CHECK(c.end_ns <= h.executor().now());
  }
}

/// Waits until `n` completions have come (real executors may return early with none).
template <typename H>
std::vector<Completion> wait_for(H& h, std::size_t n) {
  std::vector<Completion> out;
  while (out.size() < n) h.executor().wait(kNever, out);
  return out;
}

}  // namespace salus::test::contract

namespace {
using namespace salus::test::contract;
using salus::test::ms;
}  // namespace

TEST_CASE_TEMPLATE("contract: a run of n iterations ends after n solo iterations", H, SALUS_CONTRACT_EXECUTORS) {
  const auto jobs = jobs3();
  H h(jobs);
  const TimeNs t0 = h.executor().now();
  if constexpr (H::kExact) CHECK(t0 == 0);
  h.start(dispatch(0, 0, 3));
  const auto out = wait_for(h, 1);
  REQUIRE(out.size() == 1);
  check_completion(h, out[0], 0, 0, 3, 0, ms(30), t0);
  if constexpr (H::kExact) CHECK(h.executor().now() == ms(30));
}

TEST_CASE_TEMPLATE("contract: wait returns at the deadline when nothing completes before it", H, SALUS_CONTRACT_EXECUTORS) {
  const auto jobs = jobs3();
  H h(jobs);
  h.start(dispatch(0, 0, 3));
  std::vector<Completion> out;
  const TimeNs deadline = h.executor().now() + ms(2);
  h.executor().wait(deadline, out);
  if constexpr (H::kExact) {
    CHECK(out.empty());
    CHECK(h.executor().now() == ms(2));
    // A completion exactly at the deadline is returned.
    h.executor().wait(ms(30), out);
    REQUIRE(out.size() == 1);
    check_completion(h, out[0], 0, 0, 3, 0, ms(30));
    CHECK(h.executor().now() == ms(30));
  } else {
    if (out.empty()) CHECK(h.executor().now() >= deadline);
    while (out.empty()) h.executor().wait(kNever, out);
    REQUIRE(out.size() == 1);
    check_completion(h, out[0], 0, 0, 3, 0, ms(30));
  }
  // Idle: waiting for an arrival moves the clock there.
  out.clear();
  const TimeNs arrival = h.executor().now() + ms(20);
  h.executor().wait(arrival, out);
  CHECK(out.empty());
  CHECK(h.executor().now() >= arrival);
  if constexpr (H::kExact) CHECK(h.executor().now() == arrival);
  // A run started later starts at the current time.
  const TimeNs later = h.executor().now();
  h.start(dispatch(2, 4, 2));
  out = wait_for(h, 1);
  REQUIRE(out.size() == 1);
  check_completion(h, out[0], 2, 4, 2, ms(50), ms(64), later);
}

TEST_CASE_TEMPLATE("contract: extra time lengthens only the first iteration", H, SALUS_CONTRACT_EXECUTORS) {
  // A real executor takes the time switching takes: extra_ns is for the simulated clocks only.
  const auto jobs = jobs3();
  H h(jobs);
  h.start(dispatch(0, 0, 3, ms(5)));
  const auto out = wait_for(h, 1);
  REQUIRE(out.size() == 1);
  check_completion(h, out[0], 0, 0, 3, 0, ms(35));
}

TEST_CASE_TEMPLATE("contract: runs in different lanes proceed together", H, SALUS_CONTRACT_EXECUTORS) {
  const auto jobs = jobs3();
  H h(jobs);
  h.start(dispatch(0, 0, 4));  // 0 - 40
  h.start(dispatch(1, 1, 2));  // 0 - 40
  h.start(dispatch(2, 2, 3));  // 0 - 21
  if constexpr (H::kExact) {
    // Simultaneous ends come back together.
    std::vector<Completion> out;
    h.executor().wait(kNever, out);
    REQUIRE(out.size() == 1);
    check_completion(h, out[0], 2, 2, 3, 0, ms(21));
    out.clear();
    h.executor().wait(kNever, out);
    REQUIRE(out.size() == 2);
    const bool first_is_a = out[0].job == 0;
    check_completion(h, out[first_is_a ? 0 : 1], 0, 0, 4, 0, ms(40));
    check_completion(h, out[first_is_a ? 1 : 0], 1, 1, 2, 0, ms(40));
  } else {
    // Together: every run overlaps another in time (an executor running lanes one after the other
    // overlaps none). Not "every run started before any ended": on a loaded machine a lane's
    // thread may start after the shortest run's end (CI saw 37 us after it), and that is not
    // serialisation. On a machine loaded enough a lane's thread may even start after the others
    // ended (seen under ctest -j2 beside two fuzzers): up to three tries, each on a fresh
    // executor; a serial executor fails all three.
    bool together = false;
    for (int attempt = 0; attempt < 3 && !together; ++attempt) {
      std::unique_ptr<H> fresh;
      if (attempt > 0) {
        fresh = std::make_unique<H>(jobs);
        fresh->start(dispatch(0, 0, 4));
        fresh->start(dispatch(1, 1, 2));
        fresh->start(dispatch(2, 2, 3));
      }
      H& run = attempt > 0 ? *fresh : h;
      auto out = wait_for(run, 3);
      REQUIRE(out.size() == 3);
      std::sort(out.begin(), out.end(), [](const Completion& a, const Completion& b) { return a.job < b.job; });
      check_completion(run, out[0], 0, 0, 4, 0, 0);
      check_completion(run, out[1], 1, 1, 2, 0, 0);
      check_completion(run, out[2], 2, 2, 3, 0, 0);
      together = true;
      for (std::size_t i = 0; i < out.size(); ++i) {
        bool overlaps = false;
        for (std::size_t j = 0; j < out.size(); ++j) {
          overlaps = overlaps || (j != i && out[i].start_ns < out[j].end_ns && out[j].start_ns < out[i].end_ns);
        }
        together = together && overlaps;
      }
    }
    CHECK(together);
  }
}

TEST_CASE_TEMPLATE("contract: stop_at_boundary ends the run at a boundary before its last", H, SALUS_CONTRACT_EXECUTORS) {
  const auto jobs = jobs3();
  H h(jobs);
  h.start(dispatch(0, 0, 200));  // 2 s of 10 ms iterations (lenet_32 on the real CPU device: over 1 s)
  std::vector<Completion> out;
  h.executor().wait(h.executor().now() + ms(15), out);
  CHECK(out.empty());
  h.executor().stop_at_boundary(0);
  out = wait_for(h, 1);
  REQUIRE(out.size() == 1);
  if constexpr (H::kExact) {
    check_completion(h, out[0], 0, 0, 2, 0, ms(20));
  } else {
    // Stopped at the boundary that followed: some iterations, far from the 200 dispatched.
    CHECK(out[0].job == 0);
    CHECK(out[0].iterations_done >= 1);
    CHECK(out[0].iterations_done < 200);
    CHECK_FALSE(out[0].failed);
  }
}

#ifdef SALUS_CONTRACT_EXACT
TEST_CASE_TEMPLATE("contract: stop_at_boundary exactly at a boundary ends the run at that instant", H,
                   SALUS_CONTRACT_EXECUTORS) {
  const auto jobs = jobs3();
  H h(jobs);
  h.start(dispatch(1, 0, 1));   // 0 - 20
  h.start(dispatch(0, 1, 10));  // boundaries 10, 20, ...
  std::vector<Completion> out;
  h.executor().wait(kNever, out);
  REQUIRE(out.size() == 1);
  check_completion(h, out[0], 1, 0, 1, 0, ms(20));
  out.clear();
  h.executor().stop_at_boundary(1);  // now = 20, a boundary of lane 1's run
  h.executor().wait(kNever, out);
  REQUIRE(out.size() == 1);
  check_completion(h, out[0], 0, 1, 2, 0, ms(20));
  CHECK(h.executor().now() == ms(20));
}

TEST_CASE_TEMPLATE("contract: stop_at_boundary in the last iteration changes nothing", H, SALUS_CONTRACT_EXECUTORS) {
  const auto jobs = jobs3();
  H h(jobs);
  h.start(dispatch(0, 0, 3));
  std::vector<Completion> out;
  h.executor().wait(ms(25), out);
  h.executor().stop_at_boundary(0);
  h.executor().wait(kNever, out);
  REQUIRE(out.size() == 1);
  check_completion(h, out[0], 0, 0, 3, 0, ms(30));
}
#endif

TEST_CASE_TEMPLATE("contract: stop_at_boundary during the extra time or at the start still runs one iteration", H,
                   SALUS_CONTRACT_EXECUTORS) {
  const auto jobs = jobs3();
  SUBCASE("in the extra time") {
    H h(jobs);
    h.start(dispatch(0, 0, 5, ms(5)));
    std::vector<Completion> out;
    if constexpr (H::kExact) h.executor().wait(ms(3), out);
    h.executor().stop_at_boundary(0);
    out = wait_for(h, 1);
    REQUIRE(out.size() == 1);
    check_completion(h, out[0], 0, 0, 1, 0, ms(15));
  }
  SUBCASE("at the instant it started") {
    H h(jobs);
    std::vector<Completion> out;
    h.executor().wait(h.executor().now() + ms(50), out);
    const TimeNs t = h.executor().now();
    h.start(dispatch(0, 0, 5));
    h.executor().stop_at_boundary(0);
    out = wait_for(h, 1);
    REQUIRE(out.size() == 1);
    check_completion(h, out[0], 0, 0, 1, ms(50), ms(60), t);
  }
}

TEST_CASE_TEMPLATE("contract: stop_at_boundary of an idle lane changes nothing", H, SALUS_CONTRACT_EXECUTORS) {
  const auto jobs = jobs3();
  H h(jobs);
  h.executor().stop_at_boundary(3);  // nothing runs there
  h.start(dispatch(0, 0, 3));
  h.executor().stop_at_boundary(7);
  const auto out = wait_for(h, 1);
  REQUIRE(out.size() == 1);
  check_completion(h, out[0], 0, 0, 3, 0, ms(30));
}

TEST_CASE_TEMPLATE("contract: misuse of the executor is a broken invariant", H, SALUS_CONTRACT_EXECUTORS) {
  const auto jobs = jobs3();
  H h(jobs);
  std::vector<Completion> out;
  CHECK_THROWS_AS(h.executor().wait(kNever, out), std::logic_error);  // nothing to wait for
  h.start(dispatch(0, 0, 3));
  CHECK_THROWS_AS(h.start(dispatch(1, 0, 3)), std::logic_error);  // two runs in one lane
  out = wait_for(h, 1);  // the run in flight still ends
  CHECK(out.size() == 1);
}
