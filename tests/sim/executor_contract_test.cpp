// The Executor contract (core/executor.h), written once and run against every ideal executor:
// start, stop_at_boundary, wait with and without a deadline. Times in ns.
#include <doctest/doctest.h>

#include <stdexcept>
#include <vector>

#include "core/executor.h"
#include "sim/interference.h"
#include "sim/sim_executor.h"
#include "support/fake_executor.h"
#include "support/jobs.h"

namespace {

using namespace salus::core;
using salus::test::job;
using salus::test::ms;

struct FakeHarness {
  explicit FakeHarness(std::span<const JobSpec> jobs) : exec(jobs) {}
  salus::test::FakeExecutor exec;
};

struct SimHarness {
  explicit SimHarness(std::span<const JobSpec> jobs) : exec(jobs, model) {}
  salus::sim::NoInterference model;
  salus::sim::SimExecutor exec;
};

// Job 0: 10 ms iterations; job 1: 20 ms; job 2: 7 ms.
std::vector<JobSpec> jobs3() {
  return salus::test::trace({job("a", 0, 100, ms(10), 0, 0), job("b", 0, 100, ms(20), 0, 0), job("c", 0, 100, ms(7), 0, 0)});
}

Dispatch dispatch(JobIndex job, LaneId lane, std::int64_t iterations, TimeNs extra = 0) {
  Dispatch d;
  d.job = job;
  d.lane = lane;
  d.iterations = iterations;
  d.extra_ns = extra;
  return d;
}

void check_completion(const Completion& c, JobIndex job, LaneId lane, std::int64_t iterations, TimeNs start, TimeNs end) {
  CHECK(c.job == job);
  CHECK(c.lane == lane);
  CHECK(c.iterations_done == iterations);
  CHECK(c.start_ns == start);
  CHECK(c.end_ns == end);
  CHECK_FALSE(c.failed);
}

}  // namespace

#define EXECUTORS FakeHarness, SimHarness

TEST_CASE_TEMPLATE("a run of n iterations ends after n solo iterations", H, EXECUTORS) {
  const auto jobs = jobs3();
  H h(jobs);
  CHECK(h.exec.now() == 0);
  h.exec.start(dispatch(0, 0, 3));
  std::vector<Completion> out;
  h.exec.wait(kNever, out);
  REQUIRE(out.size() == 1);
  check_completion(out[0], 0, 0, 3, 0, ms(30));
  CHECK(h.exec.now() == ms(30));
}

TEST_CASE_TEMPLATE("wait returns at the deadline when nothing completes before it", H, EXECUTORS) {
  const auto jobs = jobs3();
  H h(jobs);
  h.exec.start(dispatch(0, 0, 3));
  std::vector<Completion> out;
  h.exec.wait(ms(25), out);
  CHECK(out.empty());
  CHECK(h.exec.now() == ms(25));
  // A completion exactly at the deadline is returned.
  h.exec.wait(ms(30), out);
  REQUIRE(out.size() == 1);
  check_completion(out[0], 0, 0, 3, 0, ms(30));
  CHECK(h.exec.now() == ms(30));
  // Idle: waiting for an arrival moves the clock there.
  out.clear();
  h.exec.wait(ms(100), out);
  CHECK(out.empty());
  CHECK(h.exec.now() == ms(100));
  // A run started later starts at the current time.
  h.exec.start(dispatch(2, 4, 2));
  h.exec.wait(kNever, out);
  REQUIRE(out.size() == 1);
  check_completion(out[0], 2, 4, 2, ms(100), ms(114));
}

TEST_CASE_TEMPLATE("the switching cost lengthens only the first iteration", H, EXECUTORS) {
  const auto jobs = jobs3();
  H h(jobs);
  h.exec.start(dispatch(0, 0, 3, ms(5)));
  std::vector<Completion> out;
  h.exec.wait(kNever, out);
  REQUIRE(out.size() == 1);
  check_completion(out[0], 0, 0, 3, 0, ms(35));
}

TEST_CASE_TEMPLATE("runs in different lanes proceed together: simultaneous ends come back together", H, EXECUTORS) {
  const auto jobs = jobs3();
  H h(jobs);
  h.exec.start(dispatch(0, 0, 4));  // 0 - 40
  h.exec.start(dispatch(1, 1, 2));  // 0 - 40
  h.exec.start(dispatch(2, 2, 3));  // 0 - 21
  std::vector<Completion> out;
  h.exec.wait(kNever, out);
  REQUIRE(out.size() == 1);
  check_completion(out[0], 2, 2, 3, 0, ms(21));
  out.clear();
  h.exec.wait(kNever, out);
  REQUIRE(out.size() == 2);
  const bool first_is_a = out[0].job == 0;
  check_completion(out[first_is_a ? 0 : 1], 0, 0, 4, 0, ms(40));
  check_completion(out[first_is_a ? 1 : 0], 1, 1, 2, 0, ms(40));
}

TEST_CASE_TEMPLATE("stop_at_boundary ends the run when the iteration in flight ends", H, EXECUTORS) {
  const auto jobs = jobs3();
  H h(jobs);
  h.exec.start(dispatch(0, 0, 10));
  std::vector<Completion> out;
  h.exec.wait(ms(15), out);
  h.exec.stop_at_boundary(0);
  h.exec.wait(kNever, out);
  REQUIRE(out.size() == 1);
  check_completion(out[0], 0, 0, 2, 0, ms(20));
}

TEST_CASE_TEMPLATE("stop_at_boundary exactly at a boundary ends the run at that instant", H, EXECUTORS) {
  const auto jobs = jobs3();
  H h(jobs);
  h.exec.start(dispatch(1, 0, 1));   // 0 - 20
  h.exec.start(dispatch(0, 1, 10));  // boundaries 10, 20, ...
  std::vector<Completion> out;
  h.exec.wait(kNever, out);
  REQUIRE(out.size() == 1);
  check_completion(out[0], 1, 0, 1, 0, ms(20));
  out.clear();
  h.exec.stop_at_boundary(1);  // now = 20, a boundary of lane 1's run
  h.exec.wait(kNever, out);
  REQUIRE(out.size() == 1);
  check_completion(out[0], 0, 1, 2, 0, ms(20));
  CHECK(h.exec.now() == ms(20));
}

TEST_CASE_TEMPLATE("stop_at_boundary during the switching cost or at the start still runs one iteration", H, EXECUTORS) {
  const auto jobs = jobs3();
  SUBCASE("in the switching cost") {
    H h(jobs);
    h.exec.start(dispatch(0, 0, 5, ms(5)));
    std::vector<Completion> out;
    h.exec.wait(ms(3), out);
    h.exec.stop_at_boundary(0);
    h.exec.wait(kNever, out);
    REQUIRE(out.size() == 1);
    check_completion(out[0], 0, 0, 1, 0, ms(15));
  }
  SUBCASE("at the instant it started") {
    H h(jobs);
    std::vector<Completion> out;
    h.exec.wait(ms(50), out);
    h.exec.start(dispatch(0, 0, 5));
    h.exec.stop_at_boundary(0);
    h.exec.wait(kNever, out);
    REQUIRE(out.size() == 1);
    check_completion(out[0], 0, 0, 1, ms(50), ms(60));
  }
}

TEST_CASE_TEMPLATE("stop_at_boundary in the last iteration, or of an idle lane, changes nothing", H, EXECUTORS) {
  const auto jobs = jobs3();
  H h(jobs);
  h.exec.stop_at_boundary(3);  // nothing runs there
  h.exec.start(dispatch(0, 0, 3));
  std::vector<Completion> out;
  h.exec.wait(ms(25), out);
  h.exec.stop_at_boundary(0);
  h.exec.stop_at_boundary(7);
  h.exec.wait(kNever, out);
  REQUIRE(out.size() == 1);
  check_completion(out[0], 0, 0, 3, 0, ms(30));
}

TEST_CASE_TEMPLATE("misuse of the executor is a broken invariant", H, EXECUTORS) {
  const auto jobs = jobs3();
  H h(jobs);
  std::vector<Completion> out;
  CHECK_THROWS_AS(h.exec.wait(kNever, out), std::logic_error);  // nothing to wait for
  h.exec.start(dispatch(0, 0, 3));
  CHECK_THROWS_AS(h.exec.start(dispatch(1, 0, 3)), std::logic_error);  // two runs in one lane
}

TEST_CASE("the simulator runs the actual iteration times when given") {
  const auto jobs = jobs3();
  salus::sim::NoInterference model;
  salus::sim::SimExecutor exec(jobs, model, {ms(12), ms(20), ms(7)});
  exec.start(dispatch(0, 0, 3, ms(1)));
  std::vector<Completion> out;
  exec.wait(kNever, out);
  REQUIRE(out.size() == 1);
  check_completion(out[0], 0, 0, 3, 0, ms(37));
  // A stop counts boundaries of the actual times: at 40 + 13 ms, boundaries at 52, 64, ...
  exec.start(dispatch(0, 0, 5));
  exec.wait(ms(50), out);
  exec.stop_at_boundary(0);
  out.clear();
  exec.wait(kNever, out);
  REQUIRE(out.size() == 1);
  check_completion(out[0], 0, 0, 2, ms(37), ms(61));
  CHECK_THROWS_AS(salus::sim::SimExecutor(jobs, model, {ms(1)}), std::logic_error);
}
