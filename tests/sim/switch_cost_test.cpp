// A job's own switching cost (JobSpec::switch_ns, a catalog entry's switch_ms) in place of the
// run's, by hand on the paper's example; the plans' equivalence with it is in loop_stress_test.
#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include "core/scheduler.h"
#include "policies/registry.h"
#include "sim/interference.h"
#include "sim/sim_executor.h"
#include "support/jobs.h"

using namespace salus;
using test::ms;

namespace {

core::ScheduleOutcome run(const std::vector<core::JobSpec>& jobs, const char* policy_name, core::TimeNs run_cost) {
  const sim::NoInterference model;
  sim::SimExecutor exec(jobs, model, {}, run_cost);
  const auto policy = policies::make_policy(policy_name);
  core::SchedulerOptions o;
  o.capacity = test::gib(16);
  o.lane_mode = policy->default_lane_mode();
  return core::run_schedule(jobs, *policy, exec, o);
}

}  // namespace

TEST_CASE("a job's own switching cost replaces the run's: SRTF on the paper's example by hand") {
  // a (10 x 100 ms) own 5 ms, b (2 x 100 ms, at 0.25) own 20 ms, c (3 x 100 ms, at 0.5) the
  // run's 10 ms. a 0 - 0.3 (the lane's first job: free); b 0.3 + 0.02 + 0.2 = 0.52; c 0.52 +
  // 0.01 + 0.3 = 0.83; a 0.83 + 0.005 + 0.7 = 1.535.
  auto jobs = test::paper_example();
  jobs[0].switch_ns = ms(5);
  jobs[1].switch_ns = ms(20);
  const core::ScheduleOutcome out = run(jobs, "srtf", ms(10));
  CHECK(test::finishes(out) == std::vector<core::TimeNs>{1'535'000'000, 520'000'000, 830'000'000});
  CHECK(out.switches == 3);
  // Without costs of their own, every job pays the run's (executor_suite_test: 1.53, 0.51, 0.82).
  const core::ScheduleOutcome plain = run(test::paper_example(), "srtf", ms(10));
  CHECK(test::finishes(plain) == std::vector<core::TimeNs>{1'530'000'000, 510'000'000, 820'000'000});
}

TEST_CASE("an own switching cost of 0 is a cost: the job pays nothing even where the run's is 10 ms") {
  // FAIR in one lane (executor_suite_test has the timeline at 10 ms for all: 1.5 s of work and 9
  // switches). Every job's own cost 0: the makespan is the work alone. Only a's 0: the four
  // switches to a are free, the five to b and c pay 10 ms: b 0.3 - 0.41, a 0.41 - 0.51 (c joins
  // at 0.5 while it is in flight), b 0.51 - 0.62, c 0.62 - 0.73, a 0.73 - 0.83, c 0.83 - 0.94,
  // a 0.94 - 1.04, c 1.04 - 1.15, a 1.15 - 1.55.
  auto free = test::paper_example();
  for (core::JobSpec& j : free) j.switch_ns = 0;
  const core::ScheduleOutcome none = run(free, "fair", ms(10));
  CHECK(none.switches == 9);
  const std::vector<core::TimeNs> f = test::finishes(none);
  CHECK(*std::max_element(f.begin(), f.end()) == 1'500'000'000);
  auto some = test::paper_example();
  some[0].switch_ns = 0;
  const core::ScheduleOutcome half = run(some, "fair", ms(10));
  CHECK(half.switches == 9);
  CHECK(test::finishes(half) == std::vector<core::TimeNs>{1'550'000'000, 620'000'000, 1'150'000'000});
}
