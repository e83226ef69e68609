// SimExecutor::cancel_plan, which the cluster's speculative plans rely on (cluster/README.md,
// "Plans"): a plan taken back leaves the executor exactly as it was before start_plan, so that a
// plan started again - the same one, or one cut at an earlier deadline - reports and completes as
// on an executor that never saw the first.
#include <doctest/doctest.h>

#include <stdexcept>
#include <vector>

#include "core/executor.h"
#include "sim/interference.h"
#include "sim/sim_executor.h"
#include "support/jobs.h"

namespace {

using namespace salus::core;
using salus::test::job;
using salus::test::mib;
using salus::test::ms;

// Three jobs of different speeds rotating by service level (FAIR's shape: step = iteration time),
// the first with a first-iteration extra, the lane's last job given.
PlanDispatch rotation(const std::vector<JobSpec>& jobs, TimeNs deadline, JobIndex last_job) {
  PlanDispatch p;
  p.lane = 0;
  p.last_job = last_job;
  p.deadline = deadline;
  for (JobIndex j = 0; j < static_cast<JobIndex>(jobs.size()); ++j) {
    const TimeNs d = jobs[static_cast<std::size_t>(j)].iter_ns;
    p.jobs.push_back(PlanJob{j, 0, d, j, 200, j == 0 ? ms(2) : 0});
  }
  return p;
}

void check_same(const PlanReport& a, const PlanReport& b) {
  CHECK(a.iterations == b.iterations);
  CHECK(a.busy_ns == b.busy_ns);
  CHECK(a.first_start_ns == b.first_start_ns);
  CHECK(a.switch_ns == b.switch_ns);
  CHECK(a.runs == b.runs);
  CHECK(a.switches == b.switches);
  CHECK(a.last_job == b.last_job);
  CHECK(a.end_ns == b.end_ns);
}

}  // namespace

TEST_CASE("sim: a plan taken back (cancel_plan) leaves the executor as it was before start_plan") {
  const std::vector<JobSpec> jobs = {job("a", 0, 200, ms(3), mib(10), mib(10)), job("b", 0, 200, ms(4), mib(10), mib(10)),
                                     job("c", 0, 200, ms(7), mib(10), mib(10))};
  const salus::sim::NoInterference none;
  salus::sim::SimExecutor used(jobs, none, {}, ms(1));
  salus::sim::SimExecutor fresh(jobs, none, {}, ms(1));

  PlanReport first;
  REQUIRE(used.start_plan(rotation(jobs, ms(500), kNoJob), first));
  CHECK(first.switches > 10);
  CHECK(used.plan_end_ns() == first.end_ns);
  CHECK(used.next_completion_ns() == first.end_ns);
  used.cancel_plan(0);
  CHECK(used.plan_end_ns() == kNever);
  CHECK(used.next_completion_ns() == kNever);
  CHECK(used.now() == 0);

  // Started again with an earlier deadline (a job is bound to this GPU at 100 ms): the report
  // and the completion are a fresh executor's.
  PlanReport again, reference;
  REQUIRE(used.start_plan(rotation(jobs, ms(100), kNoJob), again));
  REQUIRE(fresh.start_plan(rotation(jobs, ms(100), kNoJob), reference));
  check_same(again, reference);
  CHECK(again.end_ns < first.end_ns);
  std::vector<Completion> got, want;
  used.wait(kNever, got);
  fresh.wait(kNever, want);
  REQUIRE(got.size() == 1);
  REQUIRE(want.size() == 1);
  CHECK(got.front().plan);
  CHECK(got.front().job == want.front().job);
  CHECK(got.front().end_ns == want.front().end_ns);
  CHECK(used.now() == fresh.now());

  // After a plan that ran, the lane's last job is that plan's; one taken back puts it back, so
  // the next plan (which must start where the lane stands) starts from it and pays its switch
  // exactly as on the reference.
  const JobIndex last = again.last_job;
  PlanReport taken;
  REQUIRE(used.start_plan(rotation(jobs, used.now() + ms(400), last), taken));
  used.cancel_plan(0);
  PlanReport second, second_reference;
  REQUIRE(used.start_plan(rotation(jobs, used.now() + ms(200), last), second));
  REQUIRE(fresh.start_plan(rotation(jobs, fresh.now() + ms(200), last), second_reference));
  check_same(second, second_reference);

  // Only a plan started at this instant can be taken back.
  std::vector<Completion> done;
  used.wait(kNever, done);
  CHECK_THROWS_AS(used.cancel_plan(0), std::logic_error);
}
