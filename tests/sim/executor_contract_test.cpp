// The Executor contract (tests/support/executor_contract.h) on the exact executors: the fake
// executor of the tests and the discrete-event simulator with no interference; and what only the
// simulator does. Times in ns.
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
  static constexpr bool kExact = true;
  explicit FakeHarness(std::span<const JobSpec> jobs) : exec(jobs) {}
  Executor& executor() { return exec; }
  void start(const Dispatch& d) { exec.start(d); }
  salus::test::FakeExecutor exec;
};

struct SimHarness {
  static constexpr bool kExact = true;
  explicit SimHarness(std::span<const JobSpec> jobs) : exec(jobs, model) {}
  Executor& executor() { return exec; }
  void start(const Dispatch& d) { exec.start(d); }
  salus::sim::NoInterference model;
  salus::sim::SimExecutor exec;
};

}  // namespace

#define SALUS_CONTRACT_EXECUTORS FakeHarness, SimHarness
#define SALUS_CONTRACT_EXACT
#include "support/executor_contract.h"

namespace {

using salus::test::contract::dispatch;
using salus::test::contract::jobs3;

void check_exact(const Completion& c, JobIndex job, LaneId lane, std::int64_t iterations, TimeNs start, TimeNs end) {
  CHECK(c.job == job);
  CHECK(c.lane == lane);
  CHECK(c.iterations_done == iterations);
  CHECK(c.start_ns == start);
  CHECK(c.end_ns == end);
  CHECK_FALSE(c.failed);
}

}  // namespace

TEST_CASE("the simulator runs the actual iteration times when given") {
  const auto jobs = jobs3();
  salus::sim::NoInterference model;
  salus::sim::SimExecutor exec(jobs, model, {ms(12), ms(20), ms(7)});
  exec.start(dispatch(0, 0, 3, ms(1)));
  std::vector<Completion> out;
  exec.wait(kNever, out);
  REQUIRE(out.size() == 1);
  check_exact(out[0], 0, 0, 3, 0, ms(37));
  // A stop counts boundaries of the actual times: at 40 + 13 ms, boundaries at 52, 64, ...
  exec.start(dispatch(0, 0, 5));
  exec.wait(ms(50), out);
  exec.stop_at_boundary(0);
  out.clear();
  exec.wait(kNever, out);
  REQUIRE(out.size() == 1);
  check_exact(out[0], 0, 0, 2, ms(37), ms(61));
  CHECK_THROWS_AS(salus::sim::SimExecutor(jobs, model, {ms(1)}), std::logic_error);
}
