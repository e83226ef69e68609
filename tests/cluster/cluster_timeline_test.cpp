// Per-GPU timelines of a cluster of several GPUs (ClusterOutcome::gpu_timelines, salus-sim --out):
// every row lies on a GPU of its job's placement, the runs of one lane of one GPU never overlap,
// and each GPU's rows agree with the job's start, finish and iterations; on a hand-computed
// two-GPU case and on random traces with gang jobs under every policy and both timeline modes.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "cluster/cluster.h"
#include "policies/registry.h"
#include "run/sim_runner.h"
#include "support/jobs.h"

using namespace salus;

namespace {

run::SimConfig config(std::int32_t gpus, bool plans_in_timeline) {
  run::SimConfig cfg;
  cfg.interference = "none";
  cfg.switch_cost_ns = 0;
  cfg.cluster = cluster::ClusterSpec::uniform(gpus, test::gib(16));
  cfg.record_timeline = true;
  cfg.timeline_plans = plans_in_timeline;
  return cfg;
}

/// What the checks saw, to show they are not vacuous.
struct Tally {
  std::int64_t rows = 0, rotation_rows = 0, gang_rows = 0, jobs = 0;
};

/// The properties every cluster timeline has. `exact_start`: no rotation rows (--timeline full),
/// so a job's first row on a GPU starts at its first start there.
void check_timelines(const std::vector<core::JobSpec>& jobs, const run::PolicyRun& r, std::size_t gpus, Tally& tally) {
  REQUIRE(r.gpu_timelines.size() == gpus);
  CHECK(r.outcome.segments.empty());  // a cluster of several GPUs keeps them per GPU
  // Per (job, GPU): iterations, first start, last end of its rows.
  struct Span {
    std::int64_t iterations = 0;
    core::TimeNs first = core::kNever, last = -1;
    bool rotation = false;
  };
  std::map<std::pair<core::JobIndex, std::int32_t>, Span> span;
  for (std::size_t g = 0; g < gpus; ++g) {
    const core::Timeline& t = r.gpu_timelines[g];
    // Runs of one lane, and rotations as one interval each (their rows share the rotation's span).
    std::map<core::LaneId, std::vector<std::pair<core::TimeNs, core::TimeNs>>> by_lane;
    std::map<std::pair<core::LaneId, std::int64_t>, std::pair<core::TimeNs, core::TimeNs>> rotations;
    for (const core::Segment& s : t.segments) {
      CAPTURE(g);
      REQUIRE(s.job >= 0);
      REQUIRE(static_cast<std::size_t>(s.job) < jobs.size());
      CAPTURE(jobs[static_cast<std::size_t>(s.job)].id);
      const cluster::GpuList placed = r.job_gpus[static_cast<std::size_t>(s.job)];
      CHECK(std::count(placed.begin(), placed.end(), static_cast<std::int32_t>(g)) == 1);
      CHECK(s.start_ns <= s.end_ns);
      ++tally.rows;
      if (placed.size() > 1) ++tally.gang_rows;
      Span& sp = span[{s.job, static_cast<std::int32_t>(g)}];
      sp.iterations += s.iterations;
      sp.first = std::min(sp.first, s.start_ns);
      sp.last = std::max(sp.last, s.end_ns);
      if (s.rotation > 0) {
        ++tally.rotation_rows;
        sp.rotation = true;
        const auto [it, fresh] = rotations.try_emplace({s.lane, s.rotation}, s.start_ns, s.end_ns);
        CHECK(it->second == std::make_pair(s.start_ns, s.end_ns));  // one span per rotation
        if (fresh) by_lane[s.lane].emplace_back(s.start_ns, s.end_ns);
      } else {
        by_lane[s.lane].emplace_back(s.start_ns, s.end_ns);
      }
    }
    for (auto& [lane, v] : by_lane) {
      std::sort(v.begin(), v.end());
      for (std::size_t k = 1; k < v.size(); ++k) {
        CAPTURE(g);
        CAPTURE(lane);
        CHECK(v[k - 1].second <= v[k].first);
      }
    }
    // Memory samples and lane moves of one GPU are in time order.
    for (std::size_t k = 1; k < t.memory.size(); ++k) CHECK(t.memory[k - 1].time_ns < t.memory[k].time_ns);
    for (std::size_t k = 1; k < t.lane_moves.size(); ++k) CHECK(t.lane_moves[k - 1].time_ns <= t.lane_moves[k].time_ns);
  }
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    const core::JobState& st = r.outcome.jobs[j];
    CAPTURE(jobs[j].id);
    if (st.first_start_ns < 0) {
      for (std::size_t g = 0; g < gpus; ++g) CHECK(span.count({static_cast<core::JobIndex>(j), static_cast<std::int32_t>(g)}) == 0);
      continue;
    }
    ++tally.jobs;
    // On each GPU of its placement: every iteration, ending at its finish; the job starts when its
    // last replica first runs (a gang job's lanes are held from each replica's dispatch).
    core::TimeNs latest_first = -1;
    for (const std::int32_t g : r.job_gpus[j]) {
      CAPTURE(g);
      const auto it = span.find({static_cast<core::JobIndex>(j), g});
      REQUIRE(it != span.end());
      const Span& sp = it->second;
      CHECK(sp.iterations == st.iterations_done);
      if (st.finish_ns >= 0) CHECK(sp.last == st.finish_ns);
      CHECK(sp.first <= st.first_start_ns);
      if (!sp.rotation) latest_first = std::max(latest_first, sp.first);
    }
    if (latest_first >= 0 && std::none_of(r.job_gpus[j].begin(), r.job_gpus[j].end(), [&](std::int32_t g) {
          return span.at({static_cast<core::JobIndex>(j), g}).rotation;
        })) {
      CHECK(latest_first == st.first_start_ns);
    }
  }
}

}  // namespace

TEST_CASE("cluster timeline: a hand-computed two-GPU FIFO run, a gang job's replica on each GPU") {
  // FIFO, exclusive lanes, first-fit, 100 ms iterations, no switching cost: a (1 GPU, 5 it) on GPU
  // 0 from 0 to 0.5 s; g (2 GPUs, 3 it) arrives at 0.1 s and waits in the cluster queue for both
  // GPUs; c (1 GPU, 2 it) arrives at 0.2 s and first-fit gives it GPU 1 at once (the queue holds
  // only g, which no GPU set admits yet): 0.2-0.4 s. At 0.5 s both GPUs are free: g runs its
  // three lock-step iterations on GPUs 0 and 1 from 0.5 to 0.8 s.
  std::vector<core::JobSpec> jobs = test::trace({test::job("a", 0, 5, test::ms(100), test::gib(1), test::gib(1)),
                                                 test::job("g", test::ms(100), 3, test::ms(100), test::gib(1), test::gib(1)),
                                                 test::job("c", test::ms(200), 2, test::ms(100), test::gib(1), test::gib(1))});
  jobs[1].gpus = 2;
  run::SimConfig cfg = config(2, true);
  cfg.placement = "first-fit";
  const run::PolicyRun r = run::simulate(jobs, "fifo", cfg);
  REQUIRE(r.gpu_timelines.size() == 2);
  auto rows = [&](std::size_t g) {
    std::string s;
    for (const core::Segment& x : r.gpu_timelines[g].segments) {
      s += jobs[static_cast<std::size_t>(x.job)].id + " " + std::to_string(x.start_ns / test::ms(1)) + "-" +
           std::to_string(x.end_ns / test::ms(1)) + " it " + std::to_string(x.iterations) + ";";
    }
    return s;
  };
  CHECK(rows(0) == "a 0-500 it 5;g 500-800 it 3;");
  CHECK(rows(1) == "c 200-400 it 2;g 500-800 it 3;");
  CHECK(r.job_gpus[1] == std::vector<std::int32_t>{0, 1});
  // Memory per GPU: GPU 1 holds nothing until c arrives.
  REQUIRE_FALSE(r.gpu_timelines[1].memory.empty());
  CHECK(r.gpu_timelines[1].memory.front().persistent == 0);
  Tally tally;
  check_timelines(jobs, r, 2, tally);
  CHECK(tally.gang_rows == 2);
}

TEST_CASE("cluster timeline: random traces with gang jobs, every policy, both timeline modes") {
  Tally tally;
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    const auto jobs = test::random_jobs(seed, 12 + static_cast<int>(seed % 9), 1, [](core::JobSpec& j, int, auto& pick) {
      if (pick(0, 3) == 0) j.gpus = static_cast<std::int32_t>(pick(2, 3));
      if (pick(0, 3) == 0) j.first_iter_extra_ns = pick(0, 5'000'000);
    });
    const auto gpus = static_cast<std::int32_t>(2 + seed % 3);
    for (const std::string& policy : policies::policy_names()) {
      for (const bool plans : {true, false}) {
        CAPTURE(seed);
        CAPTURE(policy);
        CAPTURE(plans);
        run::SimConfig cfg = config(gpus, plans);
        if (seed % 2 == 0) cfg.interference = "profiled";
        const run::PolicyRun r = run::simulate(jobs, policy, cfg);
        check_timelines(jobs, r, static_cast<std::size_t>(gpus), tally);
        // The same inputs give the same timelines.
        const run::PolicyRun again = run::simulate(jobs, policy, cfg);
        for (std::size_t g = 0; g < r.gpu_timelines.size(); ++g) {
          CHECK(r.gpu_timelines[g].segments.size() == again.gpu_timelines[g].segments.size());
          CHECK(r.gpu_timelines[g].memory.size() == again.gpu_timelines[g].memory.size());
        }
        // Recording changes no result.
        run::SimConfig quiet = cfg;
        quiet.record_timeline = false;
        const run::PolicyRun q = run::simulate(jobs, policy, quiet);
        for (std::size_t j = 0; j < jobs.size(); ++j) {
          CHECK(q.outcome.jobs[j].finish_ns == r.outcome.jobs[j].finish_ns);
          CHECK(q.outcome.jobs[j].first_start_ns == r.outcome.jobs[j].first_start_ns);
        }
        CHECK(q.gpu_timelines.empty());
      }
    }
  }
  // Not vacuous: rows of gang replicas and rotations (FAIR, LAS with plans) were checked.
  CHECK(tally.gang_rows > 100);
  CHECK(tally.rotation_rows > 100);
  CHECK(tally.jobs > 1000);
}

TEST_CASE("cluster timeline: a one-GPU cluster keeps its timeline in the outcome, as run_schedule") {
  const auto jobs = test::paper_example();
  run::SimConfig cfg = config(1, true);
  const run::PolicyRun r = run::simulate(jobs, "fair", cfg);
  CHECK(r.gpu_timelines.empty());
  CHECK_FALSE(r.outcome.segments.empty());
}
