// --gangs (cluster/gang_mode.h): a gang job under the per-GPU policies shares its GPUs' lanes and
// holds them (hold, the default), or takes GPUs with no other job and keeps them to itself
// (exclusive). Hand cases of both, and random traces with gangs where exclusive never holds:
// the GPUs' busy time is the work.
#include <doctest/doctest.h>

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cluster/cluster.h"
#include "policies/registry.h"
#include "sim/interference.h"
#include "support/jobs.h"

using namespace salus;

namespace {

cluster::ClusterOptions options_for(const std::string& policy, const sim::InterferenceModel& model, std::int32_t gpus,
                                    cluster::GangMode gangs) {
  cluster::ClusterOptions opts;
  opts.cluster = cluster::ClusterSpec::uniform(gpus, test::gib(16));
  opts.model = &model;
  opts.sched.lane_mode = policies::make_policy(policy)->default_lane_mode();
  opts.gangs = gangs;
  return opts;
}

/// GPU-seconds the GPUs were busy (ClusterOutcome::busy).
double busy_s(const cluster::ClusterOutcome& r) {
  double s = 0;
  for (std::size_t i = 0; i + 1 < r.busy.size(); ++i) {
    s += core::to_seconds(r.busy[i + 1].time_ns - r.busy[i].time_ns) * r.busy[i].gpus;
  }
  return s;
}

}  // namespace

TEST_CASE("gangs by hand: under hold a short job joins a gang's GPU and the other replica holds, exclusive keeps it out") {
  // SRTF, 2 GPUs, no interference. g (2 GPUs, 10 x 100 ms) at 0; s (2 x 100 ms) at 250 ms.
  // hold: s is bound to GPU 0 (shorter than g's rest), g's run ends at 300 on both GPUs, GPU 1
  // holds g's replica while s runs 300-500, g ends at 1200: both GPUs busy 0-1200, 2.4 GPU-s for
  // 2.2 of work, GPU 1's 0.2 s held idle.
  // exclusive: both GPUs are g's; s waits in the cluster queue and runs 1000-1200.
  const std::unique_ptr<sim::InterferenceModel> none = sim::make_interference("none", nullptr, nullptr, 0.8);
  auto g = test::job("g", 0, 10, test::ms(100), test::mib(1000), test::mib(1000));
  g.gpus = 2;
  const auto jobs = test::trace({g, test::job("s", test::ms(250), 2, test::ms(100), test::mib(1000), test::mib(1000))});
  const cluster::ClusterOutcome hold = cluster::run_cluster(jobs, "srtf", options_for("srtf", *none, 2, cluster::GangMode::kHold));
  CHECK(hold.outcome.jobs[0].finish_ns == test::ms(1200));
  CHECK(hold.outcome.jobs[1].finish_ns == test::ms(500));
  CHECK(busy_s(hold) == doctest::Approx(2.0 + 0.2 + 0.2));
  const cluster::ClusterOutcome excl =
      cluster::run_cluster(jobs, "srtf", options_for("srtf", *none, 2, cluster::GangMode::kExclusive));
  CHECK(excl.outcome.jobs[0].finish_ns == test::ms(1000));
  CHECK(excl.outcome.jobs[1].first_start_ns == test::ms(1000));
  CHECK(excl.outcome.jobs[1].finish_ns == test::ms(1200));
  CHECK(busy_s(excl) == doctest::Approx(2.0 + 0.2));
}

TEST_CASE("gangs by hand: exclusive waits for GPUs with no job on them") {
  // SRTF, 2 GPUs. a (1 GPU, 10 x 100 ms) at 0 on GPU 0; g (2 GPUs, 3 x 100 ms) at 50 ms. hold: g
  // is shorter than a's rest and joins GPU 0 at once (and GPU 1). exclusive: g waits for a's end
  // at 1000 and runs 1000-1300 alone.
  const std::unique_ptr<sim::InterferenceModel> none = sim::make_interference("none", nullptr, nullptr, 0.8);
  auto g = test::job("g", test::ms(50), 3, test::ms(100), test::mib(1000), test::mib(1000));
  g.gpus = 2;
  const auto jobs = test::trace({test::job("a", 0, 10, test::ms(100), test::mib(1000), test::mib(1000)), g});
  const cluster::ClusterOutcome hold = cluster::run_cluster(jobs, "srtf", options_for("srtf", *none, 2, cluster::GangMode::kHold));
  CHECK(hold.outcome.jobs[1].first_start_ns < test::ms(1000));
  const cluster::ClusterOutcome excl =
      cluster::run_cluster(jobs, "srtf", options_for("srtf", *none, 2, cluster::GangMode::kExclusive));
  CHECK(excl.outcome.jobs[0].finish_ns == test::ms(1000));
  CHECK(excl.outcome.jobs[1].first_start_ns == test::ms(1000));
  CHECK(excl.outcome.jobs[1].finish_ns == test::ms(1300));
}

TEST_CASE("gangs exclusive: on random traces with gangs, under every per-GPU policy, nothing is held and every job ends") {
  // With no interference every job runs at solo speed; a gang's replicas run alone on their GPUs,
  // so a gang takes its solo time from its start, no job shares its GPUs meanwhile, and the GPUs'
  // busy time is at most the work (lanes run side by side), none of it held.
  const std::unique_ptr<sim::InterferenceModel> none = sim::make_interference("none", nullptr, nullptr, 0.8);
  for (const char* policy : {"fifo", "srtf", "pack", "fair", "las"}) {
    for (std::uint64_t seed = 1; seed <= 24; ++seed) {
      CAPTURE(policy);
      CAPTURE(seed);
      std::mt19937_64 rng(seed);
      std::vector<core::JobSpec> specs;
      for (int i = 0; i < 40; ++i) {
        auto j = test::job("j" + std::to_string(i), test::ms(std::uniform_int_distribution<int>(0, 3000)(rng)),
                           std::uniform_int_distribution<int>(1, 20)(rng), test::ms(std::uniform_int_distribution<int>(20, 200)(rng)),
                           test::mib(std::uniform_int_distribution<int>(200, 3000)(rng)),
                           test::mib(std::uniform_int_distribution<int>(200, 6000)(rng)));
        j.gpus = std::uniform_int_distribution<int>(0, 3)(rng) == 0 ? std::uniform_int_distribution<int>(2, 4)(rng) : 1;
        specs.push_back(j);
      }
      const auto jobs = test::trace(specs);
      // Each queue discipline in turn.
      const cluster::QueueDiscipline queue = seed % 3 == 0   ? cluster::QueueDiscipline::kEasy
                                             : seed % 3 == 1 ? cluster::QueueDiscipline::kBackfill
                                                             : cluster::QueueDiscipline::kStrict;
      cluster::ClusterOptions fast = options_for(policy, *none, 4, cluster::GangMode::kExclusive);
      fast.queue = queue;
      const cluster::ClusterOutcome r = cluster::run_cluster(jobs, policy, fast);
      double work = 0;
      for (std::size_t i = 0; i < jobs.size(); ++i) {
        REQUIRE(r.outcome.jobs[i].status == core::JobStatus::kDone);
        work += static_cast<double>(jobs[i].gpus) * core::to_seconds(jobs[i].solo_ns() + jobs[i].first_iter_extra_ns);
      }
      // A gang's replicas run alone on their GPUs: each runs its job's solo time, not longer.
      for (std::size_t i = 0; i < jobs.size(); ++i) {
        if (jobs[i].gpus == 1) continue;
        CHECK(r.outcome.jobs[i].finish_ns - r.outcome.jobs[i].first_start_ns == jobs[i].solo_ns() + jobs[i].first_iter_extra_ns);
      }
      // No job is on a gang's GPU while the gang is there (admitted to finished).
      for (std::size_t a = 0; a < jobs.size(); ++a) {
        if (jobs[a].gpus == 1) continue;
        for (std::size_t b = 0; b < jobs.size(); ++b) {
          if (b == a) continue;
          for (const std::int32_t ga : r.job_gpus[a]) {
            for (const std::int32_t gb : r.job_gpus[b]) {
              if (ga != gb) continue;
              const core::JobState& x = r.outcome.jobs[a];
              const core::JobState& y = r.outcome.jobs[b];
              CHECK((y.finish_ns <= x.admitted_ns || y.admitted_ns >= x.finish_ns));
            }
          }
        }
      }
      CHECK(busy_s(r) <= work * (1 + 1e-9));
      // The speed mechanisms (plans, joint plans, batches, the incremental gang count) give the
      // same run as deciding at every boundary.
      cluster::ClusterOptions slow = fast;
      slow.tuning = cluster::ClusterOptions::Tuning{
          .plans = false, .gang_plans = false, .gang_batches = false, .incremental_gang_queue = false};
      const cluster::ClusterOutcome s = cluster::run_cluster(jobs, policy, slow);
      for (std::size_t i = 0; i < jobs.size(); ++i) {
        CHECK(s.outcome.jobs[i].first_start_ns == r.outcome.jobs[i].first_start_ns);
        CHECK(s.outcome.jobs[i].finish_ns == r.outcome.jobs[i].finish_ns);
        CHECK(s.job_gpus[i] == r.job_gpus[i]);
      }
    }
  }
}
