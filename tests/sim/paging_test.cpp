// Paging, the paper's failsafe (SchedulerOptions::paging): schedules by hand on the simulator with
// an ideal GPU, and the refusals.
#include <doctest/doctest.h>

#include <stdexcept>
#include <vector>

#include "core/scheduler.h"
#include "policies/registry.h"
#include "sim/interference.h"
#include "sim/sim_executor.h"
#include "support/checks.h"
#include "support/fake_executor.h"
#include "support/jobs.h"

namespace {

using namespace salus::core;
using salus::test::job;
using salus::test::ms;
using salus::test::trace;

constexpr Bytes kGB = 1'000'000'000;

ScheduleOutcome run_paging(const std::vector<JobSpec>& jobs, const char* policy, bool paging) {
  const auto p = salus::policies::make_policy(policy);
  salus::sim::NoInterference model;
  salus::sim::SimExecutor exec(jobs, model, {}, 0, 10 * kGB);  // 10 GB/s: 0.1 s per GB
  SchedulerOptions o;
  o.capacity = 10 * kGB;
  o.lane_mode = LaneMode::kSingle;
  o.paging = paging;
  o.record_timeline = true;
  ScheduleOutcome out = run_schedule(jobs, *p, exec, o);
  salus::test::check_schedule(jobs, out, o, false, 0);
  return out;
}

// C = 10 GB, SRTF, one lane.
//   a: P 4, E 2, 10 x 100 ms at 0; c: P 3, E 1, 20 x 100 ms at 0: both admitted (4 + 3 + 2 = 9);
//      a (1.0 s) runs first.
//   b: P 4, E 1, 2 x 100 ms at 0.25: 7 + 4 + 2 = 13 > 10.
std::vector<JobSpec> three() {
  return trace({job("a", 0, 10, ms(100), 4 * kGB, 2 * kGB), job("b", ms(250), 2, ms(100), 4 * kGB, kGB),
                job("c", 0, 20, ms(100), 3 * kGB, kGB)});
}

}  // namespace

TEST_CASE("paging: a shorter job pages out a paused longer one, which comes back when it finishes") {
  //   0.25: c (paused, 2.0 s left > b's 0.2 s) is paged out: 4 + 4 + 2 = 10 fits; b is admitted
  //         (its block where c's was, [4, 8) below the lane at [8, 10)). The transfer (3 GB at
  //         10 GB/s = 0.3 s) is charged to the lane's next run. a is cut at its boundary, 0.3.
  //   b 0.3 - 0.8 (0.3 transfer + 2 x 0.1). 0.8: b done, the lane keeps L = 2 (a's E); c is paged
  //         back in (4 + 3 + 2 = 9), 0.3 s charged again: a 0.8 - 1.8 (0.3 + 7 x 0.1), c 1.8 - 3.8.
  const auto jobs = three();
  const ScheduleOutcome out = run_paging(jobs, "srtf", true);
  CHECK(salus::test::finishes(out) == std::vector<TimeNs>{ms(1800), ms(800), ms(3800)});
  CHECK(out.jobs[1].admitted_ns == ms(250));
  CHECK(out.page_outs == 1);
  CHECK(out.page_ins == 1);
  CHECK(salus::test::segments(out) == std::vector<salus::test::Seg>{{0, 0, 0, ms(300), 3, 0},
                                                                      {0, 1, ms(300), ms(800), 2, 0},
                                                                      {0, 0, ms(800), ms(1800), 7, 0},
                                                                      {0, 2, ms(1800), ms(3800), 20, 0}});
  // Without paging b waits for a: at 1.0 the lane shrinks to c's E (3 + 4 + 1 = 8): b 1.0 - 1.2.
  const ScheduleOutcome plain = run_paging(jobs, "srtf", false);
  CHECK(salus::test::finishes(plain) == std::vector<TimeNs>{ms(1000), ms(1200), ms(3200)});
  CHECK(plain.page_outs == 0);
}

TEST_CASE("paging: only jobs of lower priority are paged, and under fair, las and pack nobody is") {
  // Under FAIR every admission key is 0: nothing has lower priority than b, so b waits for a
  // memory release as without paging.
  const auto jobs = three();
  for (const char* policy : {"fair", "las", "pack"}) {
    CAPTURE(policy);
    const ScheduleOutcome with = run_paging(jobs, policy, true);
    const ScheduleOutcome without = run_paging(jobs, policy, false);
    CHECK(with.page_outs == 0);
    CHECK(salus::test::finishes(with) == salus::test::finishes(without));
  }
}

TEST_CASE("paging is refused on an executor that cannot page, and without lane shrinking") {
  const auto jobs = three();
  const auto p = salus::policies::make_policy("srtf");
  SchedulerOptions o;
  o.capacity = 10 * kGB;
  o.lane_mode = LaneMode::kSingle;
  o.paging = true;
  salus::test::FakeExecutor fake(jobs);
  CHECK_THROWS_WITH_AS(run_schedule(jobs, *p, fake, o), "paging: the executor cannot page", std::invalid_argument);
  salus::sim::NoInterference model;
  salus::sim::SimExecutor no_link(jobs, model);
  CHECK_THROWS_WITH_AS(run_schedule(jobs, *p, no_link, o), "paging: the executor cannot page", std::invalid_argument);
  salus::sim::SimExecutor exec(jobs, model, {}, 0, kGB);
  o.lane_shrink = false;
  CHECK_THROWS_WITH_AS(run_schedule(jobs, *p, exec, o), "paging needs lane shrinking", std::invalid_argument);
}
