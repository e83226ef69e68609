// Execution contexts made before the trace (real::contexts_before_trace): one per lane that can
// run at once, so that no context is made mid-run on the loop's thread. The count on hand-built
// traces, the bound it rests on checked against the loop's own schedules (the simulator, random
// traces: no schedule opens more lanes at once), and salus-run's path on the CPU device: a PACK run
// of six jobs makes its six contexts before the trace and none during it.
#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/scheduler.h"
#include "core/units.h"
#include "policies/registry.h"
#include "real/real_runner.h"
#include "sim/interference.h"
#include "sim/sim_executor.h"
#include "support/jobs.h"

namespace {

using namespace salus;
using core::Bytes;
using core::JobSpec;
using test::mib;
using test::ms;

core::SchedulerOptions options(Bytes capacity, core::LaneMode mode = core::LaneMode::kAuto, int max_lanes = 0) {
  core::SchedulerOptions o;
  o.capacity = capacity;
  o.lane_mode = mode;
  o.max_lanes = max_lanes;
  return o;
}

std::vector<JobSpec> sized(const std::vector<std::pair<Bytes, Bytes>>& pe) {
  std::vector<JobSpec> jobs;
  for (std::size_t i = 0; i < pe.size(); ++i) {
    jobs.push_back(test::job("j" + std::to_string(i), 0, 10, ms(5), pe[i].first, pe[i].second));
  }
  return test::trace(jobs);
}

}  // namespace

TEST_CASE("contexts before the trace: one without auto lanes, else the most jobs whose P + E fit C at once") {
  const auto jobs = sized({{mib(1), mib(2)}, {mib(2), mib(1)}, {mib(1), mib(4)}, {mib(2), mib(1)}});
  // Exclusive and single-lane modes run one lane.
  CHECK(real::contexts_before_trace(jobs, options(mib(64), core::LaneMode::kExclusive)) == 1);
  CHECK(real::contexts_before_trace(jobs, options(mib(64), core::LaneMode::kSingle)) == 1);
  CHECK(real::contexts_before_trace({}, options(mib(64), core::LaneMode::kSingle)) == 0);
  // P + E: 3, 3, 5, 3 MiB. Room for all four, for the three smallest, for two, for one.
  CHECK(real::contexts_before_trace(jobs, options(mib(64))) == 4);
  CHECK(real::contexts_before_trace(jobs, options(mib(14))) == 4);
  CHECK(real::contexts_before_trace(jobs, options(mib(13))) == 3);
  CHECK(real::contexts_before_trace(jobs, options(mib(6))) == 2);
  CHECK(real::contexts_before_trace(jobs, options(mib(5))) == 1);
  // A job that cannot fit alone is rejected: it holds no lane.
  CHECK(real::contexts_before_trace(sized({{mib(1), mib(1)}, {mib(9), mib(9)}}), options(mib(10))) == 1);
  // The loop's lane cap.
  CHECK(real::contexts_before_trace(jobs, options(mib(64), core::LaneMode::kAuto, 2)) == 2);
  // Sizes as the layout takes them: P and E rounded up to 256 bytes, C down.
  const auto tiny = sized({{1, 1}, {1, 1}, {1, 1}});  // 512 bytes each in the layout
  CHECK(real::contexts_before_trace(tiny, options(3 * 512)) == 3);
  CHECK(real::contexts_before_trace(tiny, options(3 * 512 - 1)) == 2);
  // The hard cap.
  std::vector<std::pair<Bytes, Bytes>> many(100, {mib(1), mib(1)});
  CHECK(real::contexts_before_trace(sized(many), options(test::gib(16))) == real::kMaxContexts);
  CHECK(real::kMaxContexts == 32);
}

TEST_CASE("contexts before the trace bound the lanes the loop opens at once (random traces, simulator)") {
  // The argument (real_runner.h): each open lane holds an admitted job whose P is resident and
  // whose E its size covers, and sum P + sum L <= C. The loop itself must never beat the count.
  const auto none = sim::make_interference("none");
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    const auto jobs = test::random_jobs(seed, 24, 1, [](JobSpec& s, int, auto& pick) {
      s.persistent = mib(pick(1, 600));
      s.ephemeral = mib(pick(1, 2400));
    });
    for (const char* name : {"pack", "fair", "srtf"}) {
      const auto policy = policies::make_policy(name);
      for (const int max_lanes : {0, 3}) {
        CAPTURE(seed);
        CAPTURE(name);
        CAPTURE(max_lanes);
        core::SchedulerOptions opts = options(test::gib(8), core::LaneMode::kAuto, max_lanes);
        sim::SimExecutor exec(jobs, *none);
        const core::ScheduleOutcome out = core::run_schedule(jobs, *policy, exec, opts);
        CHECK(out.max_concurrent_lanes <= real::contexts_before_trace(jobs, opts));
      }
    }
  }
  // And it is reached: ten jobs of P + E = 1 GiB arriving together in 8 GiB open eight lanes.
  std::vector<std::pair<Bytes, Bytes>> ten(10, {mib(256), mib(768)});
  const auto jobs = sized(ten);
  const core::SchedulerOptions opts = options(test::gib(8));
  sim::SimExecutor exec(jobs, *none);
  const core::ScheduleOutcome out = core::run_schedule(jobs, *policies::make_policy("pack"), exec, opts);
  CHECK(out.max_concurrent_lanes == 8);
  CHECK(real::contexts_before_trace(jobs, opts) == 8);
}

TEST_CASE("salus-run's runner makes a context for every lane before the trace and none during it") {
  // Six lenet_32 jobs arrive together; pack opens a lane for each (the pool holds all six), more
  // than the four contexts the runner used to make in advance.
  std::vector<JobSpec> jobs;
  for (int i = 0; i < 6; ++i) {
    JobSpec s = test::job("lenet_" + std::to_string(i), 0, 12, ms(5), mib(1), mib(1));
    s.workload = "lenet_32";
    jobs.push_back(s);
  }
  jobs = test::trace(jobs);
  real::RealRunConfig cfg;
  cfg.device = "cpu";
  cfg.capacity = mib(64);
  cfg.memory_from_model = true;
  cfg.warmup = false;
  cfg.progress = false;
  real::RealRunner runner(cfg);
  (void)runner.prepare(jobs);
  const run::PolicyRun r = runner.run(jobs, "pack", false);
  for (const core::JobState& st : r.outcome.jobs) CHECK(st.status == core::JobStatus::kDone);
  CHECK(r.outcome.max_concurrent_lanes == 6);
  CHECK(real::contexts_before_trace(jobs, options(runner.capacity())) == 6);
  CHECK(r.measured["workers"] == 6);
  CHECK(r.measured["workers_made_in_run"] == 0);
  CHECK(r.measured["lookahead"] == 0);  // the CPU device runs operations at once
  CHECK(r.measured.contains("stop_latency"));
}
