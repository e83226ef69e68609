// Plans on a cluster (ClusterOptions::plans): a GPU runs FAIR's or LAS's rotation in one go,
// speculatively past arrivals the placement may give to another GPU; a GPU a job is bound to
// inside its plan is rewound and replayed up to the bind. The results must be exactly those of
// deciding at every iteration boundary, on random traces with gang jobs, every placement and
// several interference models, with rewinds counted; and a one-GPU cluster plans exactly as
// run_schedule does.
#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cluster/cluster.h"
#include "cluster/placement.h"
#include "core/summary.h"
#include "run/output.h"
#include "run/sim_runner.h"
#include "sim/interference.h"
#include "support/jobs.h"

using namespace salus;

namespace {

/// Jobs long enough that rotations span many iterations between arrivals; a few need 2 or 3 GPUs,
/// a few more memory than a 16 GiB GPU or any GPU holds.
std::vector<core::JobSpec> random_trace(std::uint64_t seed, int n) {
  return test::random_jobs(seed, n, 1 + static_cast<std::int64_t>(seed % 7), [&](core::JobSpec& j, int i, auto& pick) {
    // Half the traces take iteration times from a few values: regular rotations, which the
    // simulator counts in closed form.
    if (seed % 2 == 0) j.iter_ns = test::ms(4) * (1 + i % 3) + (seed % 4 == 0 ? 0 : 777);
    const std::int64_t w = pick(0, 4);
    if (w < 4) j.workload = "w" + std::to_string(w);
    if (pick(0, 3) == 0) j.first_iter_extra_ns = pick(0, 5'000'000);
    if (pick(0, 7) == 0) j.gpus = static_cast<std::int32_t>(pick(2, 3));
    if (pick(0, 19) == 0) j.persistent = test::gib(17);  // more than a 16 GiB GPU holds
    if (pick(0, 29) == 0) j.persistent = test::gib(21);  // fits no GPU
  });
}

std::string describe(const core::JobState& s) {
  return std::string(core::to_string(s.status)) + " '" + s.reason() + "' it " + std::to_string(s.iterations_done) +
         " rank " + std::to_string(s.submit_rank) + " admitted " + std::to_string(s.admitted_ns) + " start " +
         std::to_string(s.first_start_ns) + " finish " + std::to_string(s.finish_ns) + " busy " +
         std::to_string(s.gpu_time_ns) + " lane " + std::to_string(s.lane);
}

/// Totals over the runs compared, to show the comparisons are not vacuous.
struct Tally {
  std::int64_t plans = 0, closed_form = 0, gang_runs = 0, rewinds = 0, compared = 0, planned_events = 0,
               stepped_events = 0;
};

/// Runs the jobs with plans and without, and checks every job's state, the placements, the busy
/// samples and the counters the summary reports.
void compare(const std::vector<core::JobSpec>& jobs, const std::string& policy, const cluster::ClusterOptions& opts,
             Tally& tally) {
  cluster::ClusterOptions stepped_opts = opts;
  stepped_opts.tuning.plans = false;
  const cluster::ClusterOutcome planned = cluster::run_cluster(jobs, policy, opts);
  const cluster::ClusterOutcome stepped = cluster::run_cluster(jobs, policy, stepped_opts);
  CHECK(stepped.outcome.plans == 0);
  CHECK(stepped.rewinds == 0);
  tally.plans += planned.outcome.plans;
  tally.closed_form += planned.outcome.plan_closed_form;
  tally.gang_runs += planned.gang_iterations;
  tally.rewinds += planned.rewinds;
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    CAPTURE(j);
    CHECK(describe(planned.outcome.jobs[j]) == describe(stepped.outcome.jobs[j]));
  }
  CHECK(planned.job_gpus == stepped.job_gpus);
  CHECK(planned.busy.size() == stepped.busy.size());
  for (std::size_t i = 0; i < std::min(planned.busy.size(), stepped.busy.size()); ++i) {
    CHECK(planned.busy[i].time_ns == stepped.busy[i].time_ns);
    CHECK(planned.busy[i].gpus == stepped.busy[i].gpus);
  }
  CHECK(planned.placements == stepped.placements);
  CHECK(planned.gang_iterations == stepped.gang_iterations);
  CHECK(planned.outcome.switches == stepped.outcome.switches);
  CHECK(planned.outcome.iterations == stepped.outcome.iterations);
  CHECK(planned.outcome.lanes_opened == stepped.outcome.lanes_opened);
  CHECK(planned.outcome.max_concurrent_lanes == stepped.outcome.max_concurrent_lanes);
  CHECK(planned.outcome.end_ns == stepped.outcome.end_ns);
  // A plan ends where its next iteration would pass the deadline, which a batched run does
  // not: one run may take more instants, but over all runs plans take fewer.
  tally.planned_events += planned.events;
  tally.stepped_events += stepped.events;
  ++tally.compared;
}

/// compare() under both policies that plan rotations, FAIR and LAS.
void compare_fair_and_las(const std::vector<core::JobSpec>& jobs, const cluster::ClusterOptions& opts, Tally& tally) {
  for (const std::string policy : {"fair", "las"}) {
    CAPTURE(policy);
    const std::string placement = opts.placement;
    CAPTURE(placement);
    compare(jobs, policy, opts, tally);
  }
}

}  // namespace

TEST_CASE("cluster plans: the same results, to the nanosecond, as deciding at every boundary") {
  const sim::PairSlowdowns pairs = {{{"w0", "w1"}, 1'400'000}, {{"w1", "w0"}, 1'900'000}, {{"w0", "w2"}, 1'100'000},
                                    {{"w2", "w0"}, 2'300'000}, {{"w1", "w2"}, 1'650'000}, {{"w3", "w1"}, 900'000}};
  const sim::ShareWeights weights = {{"w0", 0.7}, {"w1", 1.3}, {"w2", 2.1}, {"w3", 0.5}};
  const sim::CrowdFactors crowds = {{3, 1'150'000}, {6, 870'000}};
  std::vector<std::unique_ptr<sim::InterferenceModel>> models;
  for (const std::string& name : sim::interference_names()) models.push_back(sim::make_interference(name, &pairs, &weights, 0.8, &crowds));
  const std::vector<std::string> placements = cluster::placement_registry().names();
  Tally tally;
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    const auto jobs = random_trace(seed, 10 + static_cast<int>(seed % 30));
    cluster::ClusterOptions opts;
    opts.cluster = cluster::ClusterSpec::uniform(1 + static_cast<std::int32_t>(seed % 4), test::gib(16));
    // Every third trace on mixed memory: jobs that only the large GPU holds are given to it at
    // their arrival (no choice), and wait in its own queue.
    if (seed % 3 == 2) {
      opts.cluster.gpus.push_back(cluster::GpuSpec{test::gib(20), static_cast<std::int32_t>(opts.cluster.gpus.size())});
    }
    opts.placement = placements[seed % placements.size()];
    opts.sched.lane_mode = seed % 5 == 0 ? core::LaneMode::kAuto : core::LaneMode::kSingle;
    opts.model = models[seed % models.size()].get();
    opts.switch_cost_ns = seed % 3 == 0 ? 0 : test::ms(2);
    if (seed % 4 == 1) {
      std::mt19937_64 rng(seed * 7);
      for (const core::JobSpec& j : jobs) {
        opts.actual_iter_ns.push_back(j.iter_ns + static_cast<core::TimeNs>(rng() % 3'000'000));
      }
    }
    CAPTURE(seed);
    compare_fair_and_las(jobs, opts, tally);
  }
  CHECK(tally.compared == 400);
  // Plans did run, over regular rotations too, beside gang jobs, and jobs were bound into plans
  // in flight (rewinds): the comparison is not vacuous.
  MESSAGE("plans ", tally.plans, ", iterations in closed form ", tally.closed_form, ", gang iterations ",
          tally.gang_runs, ", rewinds ", tally.rewinds, ", instants ", tally.planned_events, " planned, ",
          tally.stepped_events, " run by run");
  CHECK(tally.plans > 3000);
  CHECK(tally.closed_form > 30000);
  CHECK(tally.gang_runs > 30000);
  CHECK(tally.rewinds > 300);
  CHECK(tally.planned_events < tally.stepped_events);
}

// Plans run speculatively past arrivals another GPU may take; when the placement binds a job to a
// GPU inside its plan, the plan is taken back and replayed up to that instant. Here many small
// jobs arrive close together on up to 12 GPUs, so that most arrivals could go to many GPUs, and
// the one chosen is usually mid-plan: every placement, FAIR and LAS, with gang jobs and without.
TEST_CASE("cluster plans: jobs bound into plans in flight (rewinds) change nothing") {
  const sim::PairSlowdowns pairs = {{{"w0", "w1"}, 1'400'000}, {{"w1", "w0"}, 1'900'000}, {{"w2", "w0"}, 2'300'000}};
  const std::unique_ptr<sim::InterferenceModel> paired = sim::make_interference("pairs", &pairs, nullptr, 0.8);
  const std::unique_ptr<sim::InterferenceModel> none = sim::make_interference("none", nullptr, nullptr, 0.8);
  const std::vector<std::string> placements = cluster::placement_registry().names();
  Tally tally;
  std::int64_t with_gangs = 0;
  for (std::uint64_t seed = 1; seed <= 48; ++seed) {
    const bool gangs = seed % 2 == 0;
    auto jobs = test::random_jobs(seed * 131, 50, 20, [&](core::JobSpec& j, int i, auto& pick) {
      j.arrival_ns = j.arrival_ns / 8;  // arrivals 0-50 ms apart: plans span many of them
      j.persistent = test::mib(pick(0, 1500));
      j.ephemeral = test::mib(pick(0, 2500));
      if (seed % 3 == 0) j.iter_ns = test::ms(3) * (1 + i % 2);  // regular rotations: closed form
      const std::int64_t w = pick(0, 3);
      if (w < 3) j.workload = "w" + std::to_string(w);
      if (pick(0, 3) == 0) j.first_iter_extra_ns = pick(0, 3'000'000);
      if (gangs && pick(0, 9) == 0) j.gpus = 2;
    });
    for (const core::JobSpec& j : jobs) with_gangs += j.gpus > 1;
    cluster::ClusterOptions opts;
    opts.cluster = cluster::ClusterSpec::uniform(4 + static_cast<std::int32_t>(seed % 9), test::gib(16));
    opts.placement = placements[(seed / 2) % placements.size()];
    opts.sched.lane_mode = core::LaneMode::kSingle;  // FAIR's and LAS's own: one lane, where plans run
    opts.model = seed % 4 < 2 ? paired.get() : none.get();
    opts.switch_cost_ns = seed % 3 == 1 ? 0 : test::ms(1);
    CAPTURE(seed);
    compare_fair_and_las(jobs, opts, tally);
  }
  CHECK(tally.compared == 96);
  MESSAGE("plans ", tally.plans, ", rewinds ", tally.rewinds, ", gang jobs ", with_gangs, ", gang iterations ",
          tally.gang_runs);
  CHECK(with_gangs > 50);
  CHECK(tally.gang_runs > 1000);
  CHECK(tally.plans > 2000);
  CHECK(tally.rewinds > 500);
}

// A gang job waiting in the cluster queue no longer keeps the GPUs from planning (FAIR and LAS,
// backfill and strict; cluster_model.h, gang_queue_blocks): gang A holds GPUs 0 and 1 (the whole
// GPU: P = 0, E = 16 GiB), gang B waits for two GPUs without a gang, and GPU 2 rotates three
// 1-GPU jobs (P = 1 GiB, so A's GPUs cannot hold them) in plans while B waits (under backfill);
// then random traces where gang jobs wait among 1-GPU jobs. Every result equals deciding at
// every boundary.
TEST_CASE("cluster plans: beside a gang job waiting in the cluster queue, as run by run") {
  const std::unique_ptr<sim::InterferenceModel> profiled = sim::make_interference("profiled", nullptr, nullptr, 0.8);
  const std::vector<std::string> placements = cluster::placement_registry().names();
  std::vector<core::JobSpec> hand = test::trace({test::job("A", 0, 400, test::ms(10), 0, test::gib(16)),
                                                 test::job("B", test::ms(1), 50, test::ms(10), 0, test::gib(16)),
                                                 test::job("x", test::ms(2), 300, test::ms(3), test::gib(1), test::gib(4)),
                                                 test::job("y", test::ms(2), 200, test::ms(5), test::gib(1), test::gib(4)),
                                                 test::job("z", test::ms(3), 250, test::ms(4), test::gib(1), test::gib(4))});
  hand[0].gpus = 2;
  hand[1].gpus = 2;
  for (const cluster::QueueDiscipline queue : {cluster::QueueDiscipline::kBackfill, cluster::QueueDiscipline::kStrict}) {
    cluster::ClusterOptions opts;
    opts.cluster = cluster::ClusterSpec::uniform(3, test::gib(16));
    opts.placement = "least-loaded";
    opts.sched.lane_mode = core::LaneMode::kSingle;
    opts.model = profiled.get();
    opts.switch_cost_ns = test::ms(1);
    opts.queue = queue;
    Tally tally;
    CAPTURE(static_cast<int>(queue));
    compare_fair_and_las(hand, opts, tally);
    // Under backfill x, y and z pass B to GPU 2, which plans their rotation while B waits (it
    // stepped every run before: 1,448 instants against 26 over FAIR and LAS). Under strict they
    // wait behind B.
    if (queue == cluster::QueueDiscipline::kBackfill) CHECK(tally.planned_events * 10 < tally.stepped_events);
  }
  Tally tally;
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    auto jobs = test::random_jobs(seed * 17, 30, 6, [&](core::JobSpec& j, int i, auto& pick) {
      j.arrival_ns /= 4;
      if (seed % 2 == 0) j.iter_ns = test::ms(2) * (1 + i % 3);  // regular rotations
      if (pick(0, 3) == 0) j.gpus = static_cast<std::int32_t>(pick(2, 4));
      if (pick(0, 1) == 0) {
        j.persistent = 0;
        j.ephemeral = test::gib(16);
      }
      if (pick(0, 3) == 0) j.first_iter_extra_ns = pick(0, 3'000'000);
    });
    cluster::ClusterOptions opts;
    opts.cluster = cluster::ClusterSpec::uniform(3 + static_cast<std::int32_t>(seed % 5), test::gib(16));
    opts.placement = placements[seed % placements.size()];
    opts.sched.lane_mode = core::LaneMode::kSingle;
    opts.model = profiled.get();
    opts.switch_cost_ns = seed % 3 == 0 ? 0 : test::ms(1);
    opts.queue = seed % 3 == 1 ? cluster::QueueDiscipline::kStrict : cluster::QueueDiscipline::kBackfill;
    opts.tuning.gang_batches = seed % 4 != 0;
    CAPTURE(seed);
    compare_fair_and_las(jobs, opts, tally);
  }
  MESSAGE("plans ", tally.plans, ", rewinds ", tally.rewinds, ", instants ", tally.planned_events, " planned, ",
          tally.stepped_events, " run by run");
  CHECK(tally.compared == 120);
  CHECK(tally.plans > 500);
  CHECK(tally.rewinds > 20);
}

TEST_CASE("one GPU, no timeline: the cluster plans exactly as run_schedule does, byte for byte") {
  std::int64_t plans = 0;
  for (std::uint64_t seed = 1; seed <= 24; ++seed) {
    auto jobs = random_trace(seed, 5 + static_cast<int>(seed % 25));
    for (core::JobSpec& j : jobs) j.gpus = 1;
    run::SimConfig cfg;
    cfg.interference = seed % 3 == 0 ? "none" : "profiled";
    cfg.switch_cost_ns = seed % 2 == 0 ? core::kNsPerMs : 0;
    cfg.profile_noise = seed % 4 == 0 ? 0.1 : 0;
    cfg.record_timeline = false;
    run::SimConfig one = cfg;
    one.cluster = cluster::ClusterSpec::uniform(1, cfg.capacity);
    one.placement = cluster::placement_registry().names()[seed % 4];
    for (const std::string policy : {"fair", "las"}) {
      CAPTURE(seed);
      CAPTURE(policy);
      const run::PolicyRun a = run::simulate(jobs, policy, cfg);
      const run::PolicyRun b = run::simulate(jobs, policy, one);
      REQUIRE(b.cluster);
      nlohmann::json rb = run::result_json(jobs, b);
      rb.erase("cluster");  // the cluster's own member; the rest is the one-GPU schema
      CHECK(run::result_json(jobs, a).dump(2) == rb.dump(2));
      // The cluster's deadline on one GPU is run_schedule's (the next arrival): the same plans.
      CHECK(a.outcome.plans == b.outcome.plans);
      CHECK(a.outcome.plan_closed_form == b.outcome.plan_closed_form);
      CHECK(a.outcome.dispatches == b.outcome.dispatches);
      plans += b.outcome.plans;
    }
  }
  CHECK(plans > 500);
}
