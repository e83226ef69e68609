// Joint plans of a gang job's GPUs (ClusterOptions::gang_plans): where a gang run ends and every
// GPU of the gang decides, the GPUs' rotations (the replica's turns among their 1-GPU jobs in the
// one lane) are planned together up to a common gang-run end. The results must be exactly those
// of deciding at every iteration boundary (ClusterOptions::plans = false), and those with plans
// but without joint plans: on random traces where gang jobs of 2 to 8 GPUs share their GPUs'
// lane with 1-GPU jobs (jobs of the whole GPU and smaller ones, iteration times regular and not,
// switching costs of the run and of jobs, first-iteration extras, jobs finishing mid-rotation,
// arrivals mid-plan, gang jobs waiting in the cluster queue), FAIR and LAS, every placement.
#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cluster/cluster.h"
#include "cluster/placement.h"
#include "sim/interference.h"
#include "support/jobs.h"

using namespace salus;

namespace {

std::string describe(const core::JobState& s) {
  return std::string(core::to_string(s.status)) + " '" + s.reason() + "' it " + std::to_string(s.iterations_done) +
         " rank " + std::to_string(s.submit_rank) + " admitted " + std::to_string(s.admitted_ns) + " start " +
         std::to_string(s.first_start_ns) + " finish " + std::to_string(s.finish_ns) + " busy " +
         std::to_string(s.gpu_time_ns) + " lane " + std::to_string(s.lane);
}

struct Tally {
  std::int64_t compared = 0, joint_plans = 0, joint_gang_runs = 0, gang_iterations = 0, joint_events = 0,
               stepped_events = 0, paced_plans = 0, turn_plans = 0, turn_runs = 0, period_rounds = 0, unskipped = 0,
               turn_jumped = 0, unjumped = 0;
};

/// a and b agree on every job's state, the placements, the busy samples and the counters the
/// summary reports (and the gang iterations).
void check_same(const cluster::ClusterOutcome& a, const cluster::ClusterOutcome& b) {
  REQUIRE(a.outcome.jobs.size() == b.outcome.jobs.size());
  for (std::size_t j = 0; j < a.outcome.jobs.size(); ++j) {
    CAPTURE(j);
    CHECK(describe(a.outcome.jobs[j]) == describe(b.outcome.jobs[j]));
  }
  CHECK(a.job_gpus == b.job_gpus);
  CHECK(a.busy.size() == b.busy.size());
  for (std::size_t i = 0; i < std::min(a.busy.size(), b.busy.size()); ++i) {
    CAPTURE(i);
    CHECK(a.busy[i].time_ns == b.busy[i].time_ns);
    CHECK(a.busy[i].gpus == b.busy[i].gpus);
  }
  CHECK(a.placements == b.placements);
  CHECK(a.gang_iterations == b.gang_iterations);
  CHECK(a.outcome.switches == b.outcome.switches);
  CHECK(a.outcome.iterations == b.outcome.iterations);
  CHECK(a.outcome.lanes_opened == b.outcome.lanes_opened);
  CHECK(a.outcome.admissions_new_lane == b.outcome.admissions_new_lane);
  CHECK(a.outcome.admissions_existing_lane == b.outcome.admissions_existing_lane);
  CHECK(a.outcome.admissions_grown_lane == b.outcome.admissions_grown_lane);
  CHECK(a.outcome.max_concurrent_lanes == b.outcome.max_concurrent_lanes);
  CHECK(a.outcome.end_ns == b.outcome.end_ns);
}

/// With joint plans (the default), with plans but no joint plans, and deciding at every boundary.
void compare(const std::vector<core::JobSpec>& jobs, const std::string& policy, const cluster::ClusterOptions& opts,
             Tally& tally) {
  cluster::ClusterOptions single = opts, stepped = opts;
  single.tuning.gang_plans = false;
  stepped.tuning.plans = false;
  const cluster::ClusterOutcome joint = cluster::run_cluster(jobs, policy, opts);
  const cluster::ClusterOutcome apart = cluster::run_cluster(jobs, policy, single);
  const cluster::ClusterOutcome each = cluster::run_cluster(jobs, policy, stepped);
  CHECK(apart.joint_plans == 0);
  CHECK(each.joint_plans == 0);
  CHECK(each.turn_plans == 0);
  check_same(joint, each);
  check_same(apart, each);
  // The run with one of the plans' speed mechanisms off agrees too.
  auto without = [&](bool cluster::ClusterOptions::Tuning::*mechanism) {
    cluster::ClusterOptions off = opts;
    off.tuning.*mechanism = false;
    const cluster::ClusterOutcome every = cluster::run_cluster(jobs, policy, off);
    check_same(every, each);
    return every;
  };
  // Joint plans that compute every round (no period skipped), where rotations are regular (equal
  // or commensurate iteration times: the periods the default skips).
  if (joint.joint_period_rounds > 0) {
    const cluster::ClusterOutcome every = without(&cluster::ClusterOptions::Tuning::periodic_plans);
    CHECK(every.joint_period_rounds == 0);
    CHECK(every.joint_gang_runs == joint.joint_gang_runs);
    ++tally.unskipped;
  }
  // Turn plans that step every run, where the default jumped.
  if (joint.turn_jumped > 0) {
    const cluster::ClusterOutcome every = without(&cluster::ClusterOptions::Tuning::turn_jumps);
    CHECK(every.turn_jumped == 0);
    CHECK(every.turn_plans == joint.turn_plans);
    CHECK(every.turn_plan_runs == joint.turn_plan_runs);
    ++tally.unjumped;
  }
  tally.turn_jumped += joint.turn_jumped;
  tally.period_rounds += joint.joint_period_rounds;
  tally.joint_plans += joint.joint_plans;
  tally.joint_gang_runs += joint.joint_gang_runs;
  tally.paced_plans += joint.joint_paced_plans;
  tally.turn_plans += joint.turn_plans;
  tally.turn_runs += joint.turn_plan_runs;
  tally.gang_iterations += joint.gang_iterations;
  tally.joint_events += joint.events;
  tally.stepped_events += each.events;
  ++tally.compared;
}

/// Gang jobs on 2-8 GPUs among 1-GPU jobs, long enough that rotations span many gang runs; some
/// jobs take the whole GPU (P = 0, E = the GPU: they share one lane with every such job, as the
/// Gavel trace's), the others are smaller (and may wait in the cluster queue behind them).
std::vector<core::JobSpec> random_trace(std::uint64_t seed, int n, std::int32_t gpus) {
  return test::random_jobs(seed, n, 3 + static_cast<std::int64_t>(seed % 5), [&](core::JobSpec& j, int i, auto& pick) {
    if (seed % 3 == 0) j.iter_ns = test::ms(5) * (1 + i % 3);  // regular rotations
    if (pick(0, 3) == 0) j.gpus = static_cast<std::int32_t>(pick(2, std::min<std::int64_t>(8, gpus)));
    if (pick(0, 2) < (j.gpus > 1 ? 1 : 2)) {
      j.persistent = 0;
      j.ephemeral = test::gib(16);
    }
    if (pick(0, 3) == 0) j.first_iter_extra_ns = pick(0, 4'000'000);
    if (pick(0, 5) == 0) j.switch_ns = pick(0, 3'000'000);  // its own switching cost
    if (pick(0, 9) == 0) j.iterations = pick(1, 4);  // finishes within a rotation or two
    if (j.gpus == 1 && pick(0, 7) == 0) {  // only the large GPU holds it (mixed memory): its own queue
      j.persistent = test::gib(10);
      j.ephemeral = test::gib(8);
    }
  });
}

/// The options both random comparisons start from: `gpus` GPUs of 16 GiB, FAIR's and LAS's one
/// lane, the placement, model and switching cost the seed picks.
cluster::ClusterOptions rotation_options(std::uint64_t seed, std::int32_t gpus, const sim::InterferenceModel& profiled,
                                         const sim::InterferenceModel& none) {
  cluster::ClusterOptions opts;
  opts.cluster = cluster::ClusterSpec::uniform(gpus, test::gib(16));
  const std::vector<std::string> placements = cluster::placement_registry().names();
  opts.placement = placements[seed % placements.size()];
  opts.sched.lane_mode = core::LaneMode::kSingle;  // FAIR's and LAS's own
  opts.model = seed % 2 == 0 ? &profiled : &none;
  opts.switch_cost_ns = seed % 3 == 1 ? 0 : test::ms(1) + 333;
  return opts;
}

/// GPUs of three speeds in turn (1, 1.5, 0.7): a gang's replicas may run at different paces.
void three_speeds(cluster::ClusterSpec& c) {
  for (std::size_t g = 0; g < c.gpus.size(); ++g) c.gpus[g].speed_ppm = g % 3 == 0 ? 1'000'000 : g % 3 == 1 ? 1'500'000 : 700'000;
}

}  // namespace

TEST_CASE("cluster joint plans: a gang job's GPUs planned together give the results of deciding at every boundary") {
  const std::unique_ptr<sim::InterferenceModel> profiled = sim::make_interference("profiled", nullptr, nullptr, 0.8);
  const std::unique_ptr<sim::InterferenceModel> none = sim::make_interference("none", nullptr, nullptr, 0.8);
  Tally tally;
  for (std::uint64_t seed = 1; seed <= 160; ++seed) {
    const auto gpus = static_cast<std::int32_t>(2 + seed % 9);
    const auto jobs = random_trace(seed, 16 + static_cast<int>(seed % 24), gpus);
    cluster::ClusterOptions opts = rotation_options(seed, gpus, *profiled, *none);
    // Most traces on mixed memory: jobs only the large GPU holds wait in its own queue, and a gang
    // job waiting in the cluster queue may find it can start there once it admitted them.
    if (seed % 4 != 0) opts.cluster.gpus.push_back(cluster::GpuSpec{test::gib(20), gpus});
    opts.tuning.gang_batches = seed % 5 != 0;
    // A third of the traces on GPUs of two or three speeds: a gang's replicas may run at
    // different paces (each gang run at its slowest replica's).
    if (seed % 3 == 2) three_speeds(opts.cluster);
    if (seed % 4 == 3) {
      std::mt19937_64 rng(seed * 11);
      for (const core::JobSpec& j : jobs) opts.actual_iter_ns.push_back(j.iter_ns + static_cast<core::TimeNs>(rng() % 2'000'000));
    }
    for (const std::string policy : {"fair", "las"}) {
      CAPTURE(seed);
      CAPTURE(policy);
      CAPTURE(opts.placement);
      compare(jobs, policy, opts, tally);
    }
  }
  CHECK(tally.compared == 320);
  CHECK(tally.paced_plans > 50);  // gangs across GPUs of different speeds were planned jointly
  MESSAGE("joint plans ", tally.joint_plans, " covering ", tally.joint_gang_runs, " of ", tally.gang_iterations,
          " gang iterations' runs, instants ", tally.joint_events, " with joint plans, ",
          tally.stepped_events, " run by run; ", tally.paced_plans, " plans of replicas at different speeds; turn plans ", tally.turn_plans, " covering ",
          tally.turn_runs, " 1-GPU runs");
  MESSAGE("gang runs skipped as whole periods ", tally.period_rounds, " in ", tally.unskipped, " runs");
  MESSAGE("turn plans' iterations in closed form ", tally.turn_jumped, " in ", tally.unjumped, " runs");
  // Joint plans ran, over many gang runs, beside gang jobs waiting in the queue: not vacuous.
  CHECK(tally.joint_plans > 500);
  CHECK(tally.period_rounds > 1000);
  CHECK(tally.unskipped > 20);
  CHECK(tally.unjumped > 20);
  CHECK(tally.joint_gang_runs > 20000);
  CHECK(tally.joint_events < tally.stepped_events);
}

// Gangs across GPUs of three speeds, crowded (a third of the jobs gangs, half of the whole GPU,
// arriving four times as fast as in the traces above, with gang jobs waiting in the cluster
// queue): joint plans of replicas at different paces give the results of deciding at every
// boundary.
TEST_CASE("cluster joint plans: replicas at different speeds beside waiting gang jobs, as run by run") {
  const std::unique_ptr<sim::InterferenceModel> profiled = sim::make_interference("profiled", nullptr, nullptr, 0.8);
  const std::unique_ptr<sim::InterferenceModel> none = sim::make_interference("none", nullptr, nullptr, 0.8);
  Tally tally;
  for (std::uint64_t seed = 1; seed <= 120; ++seed) {
    const auto gpus = static_cast<std::int32_t>(3 + seed % 6);
    const auto jobs = test::random_jobs(seed * 31, 20 + static_cast<int>(seed % 20), 1 + static_cast<std::int64_t>(seed % 3),
                                        [&](core::JobSpec& j, int, auto& pick) {
                                          j.arrival_ns /= 4;
                                          if (pick(0, 2) == 0) j.gpus = static_cast<std::int32_t>(pick(2, std::min<std::int64_t>(4, gpus)));
                                          if (pick(0, 1) == 0) {
                                            j.persistent = 0;
                                            j.ephemeral = test::gib(16);
                                          }
                                          if (pick(0, 3) == 0) j.first_iter_extra_ns = pick(0, 4'000'000);
                                          if (j.gpus == 1 && pick(0, 2) == 0) {  // only the 20 GiB GPUs hold it
                                            j.persistent = test::gib(10);
                                            j.ephemeral = test::gib(8);
                                          }
                                        });
    cluster::ClusterOptions opts = rotation_options(seed, gpus, *profiled, *none);
    opts.cluster.gpus.push_back(cluster::GpuSpec{test::gib(20), gpus});
    opts.cluster.gpus.push_back(cluster::GpuSpec{test::gib(20), gpus + 1});
    three_speeds(opts.cluster);
    for (const std::string policy : {"fair", "las"}) {
      CAPTURE(seed);
      CAPTURE(policy);
      CAPTURE(opts.placement);
      compare(jobs, policy, opts, tally);
    }
  }
  CHECK(tally.compared == 240);
  MESSAGE("joint plans ", tally.joint_plans, " (", tally.paced_plans, " of replicas at different speeds); turn plans ", tally.turn_plans, " covering ", tally.turn_runs, " 1-GPU runs");
  CHECK(tally.paced_plans > 1000);
}

namespace {

/// The jobs of the two tests below: gang A (2 GPUs, whole GPU, 10 ms), X and Y (only the 20 GiB
/// GPU holds them), f2, 1-GPU jobs a0 and a1 beside A (whole GPU, `other` per iteration), gang B
/// (2 GPUs, small) arriving at 0.1 s.
std::vector<core::JobSpec> waiting_gang_jobs(std::int64_t x_iterations, core::TimeNs x_iter, core::TimeNs other) {
  const core::Bytes g16 = test::gib(16);
  auto jobs = test::trace({test::job("A", 0, 3000, test::ms(10), 0, g16, 100'000),
                           test::job("X", 0, x_iterations, x_iter, test::gib(10), test::gib(8)),
                           test::job("Y", 0, 1000, test::ms(5), test::gib(10), test::gib(8)),
                           test::job("f2", 0, 100'000, test::ms(10), 0, test::gib(4)),
                           test::job("a0", 0, 2000, other, 0, g16),
                           test::job("a1", 0, 2000, other, 0, g16),
                           test::job("B", test::ms(100), 50, test::ms(20), test::gib(1), test::gib(1))});
  jobs[0].gpus = 2;
  jobs[6].gpus = 2;
  return jobs;
}

/// Their cluster: three GPUs of 16 GiB and one of 20 GiB, least-loaded, one lane, no interference.
cluster::ClusterOptions waiting_gang_options(const sim::InterferenceModel& none) {
  cluster::ClusterOptions opts;
  opts.cluster = cluster::ClusterSpec::uniform(3, test::gib(16));
  opts.cluster.gpus.push_back(cluster::GpuSpec{test::gib(20), 3});
  opts.placement = "least-loaded";
  opts.sched.lane_mode = core::LaneMode::kSingle;
  opts.model = &none;
  opts.switch_cost_ns = test::ms(1);
  return opts;
}

}  // namespace

// A gang job waiting in the cluster queue is placed at the instant k GPUs become able to start it,
// once those GPUs have settled (here: admitted a job from their own queue), while another gang's
// joint plan runs on other GPUs. Four GPUs, the last of 20 GiB. Gang A (whole GPU, 10 ms
// iterations) takes GPUs 0 and 1, with 1-GPU jobs a0 and a1 (whole GPU, 7 ms) beside it: joint
// plans. X and Y (P 10 GiB, E 8 GiB) only GPU 3 holds: X runs, Y waits in GPU 3's own queue. f2
// (E 4 GiB) runs alone on GPU 2 for a long time. Gang B (P = E = 1 GiB, 2 GPUs) arrives at 0.1 s:
// GPU 2 could start it, GPU 3 not while Y waits there, GPUs 0 and 1 host a gang; B waits. When X
// ends (5 s), GPU 3 settles (admits Y from its own queue), and then B can start on GPUs 2 and 3:
// it is placed at 5 s, inside A's joint plan, and starts at their next boundaries.
TEST_CASE("cluster joint plans: a gang job that can start while another gang's joint plan runs starts at its next boundary") {
  const std::unique_ptr<sim::InterferenceModel> none = sim::make_interference("none", nullptr, nullptr, 0.8);
  const auto jobs = waiting_gang_jobs(1000, test::ms(5), test::ms(7));
  const cluster::ClusterOptions opts = waiting_gang_options(*none);
  for (const std::string policy : {"fair", "las"}) {
    CAPTURE(policy);
    Tally tally;
    compare(jobs, policy, opts, tally);
    const cluster::ClusterOutcome out = cluster::run_cluster(jobs, policy, opts);
    CHECK(out.job_gpus[0] == std::vector<std::int32_t>{0, 1});
    CHECK(out.job_gpus[4] == std::vector<std::int32_t>{0});
    CHECK(out.job_gpus[5] == std::vector<std::int32_t>{1});
    CHECK(out.job_gpus[6] == std::vector<std::int32_t>{2, 3});
    // B is placed at X's end (5 s) and starts within one run of GPUs 2 and 3 after it.
    const core::TimeNs x_end = out.outcome.jobs[1].finish_ns;
    CHECK(x_end == test::ms(5000));
    CHECK(out.outcome.jobs[6].admitted_ns == x_end);
    CHECK(out.outcome.jobs[6].first_start_ns > x_end);
    CHECK(out.outcome.jobs[6].first_start_ns <= x_end + test::ms(12));
    CHECK(out.joint_plans >= 2);
  }
}

// The same, with gang A's replicas at different speeds (GPU 0 at 1, GPU 1 at 1.5: A takes 10 ms
// there and 6.67 ms here, each gang run at the slower one's pace) and 1-GPU jobs a0 and a1 whose
// iterations (20 or 30 ms) give A turns of two or three iterations under FAIR and LAS: A's joint
// plans beside the waiting gang job B hold gang runs of two and three iterations. Run by run, the
// iterations after a gang run's first are paced to the slowest replica's, run as a batch or alone
// (the second of a run of two), so GPU 1 is stepped only where GPU 0 is. X's length sweeps the
// instant B becomes placeable across A's runs: B must start where it starts run by run.
TEST_CASE("cluster joint plans: a gang across speeds, long runs beside a waiting gang job, as run by run") {
  const std::unique_ptr<sim::InterferenceModel> none = sim::make_interference("none", nullptr, nullptr, 0.8);
  cluster::ClusterOptions opts = waiting_gang_options(*none);
  opts.cluster.gpus[1].speed_ppm = 1'500'000;
  opts.cluster.gpus[2].speed_ppm = 700'000;
  opts.cluster.gpus[3].speed_ppm = 1'200'000;
  std::int64_t compared = 0;
  for (const std::int64_t other_ms : {20, 30}) {
    for (std::int64_t x_iterations = 1000; x_iterations < 1024; ++x_iterations) {
      const auto jobs = waiting_gang_jobs(x_iterations, test::ms(5) + 77'777, test::ms(other_ms));
      for (const std::string policy : {"fair", "las"}) {
        CAPTURE(other_ms);
        CAPTURE(x_iterations);
        CAPTURE(policy);
        Tally tally;
        compare(jobs, policy, opts, tally);
        ++compared;
        const cluster::ClusterOutcome out = cluster::run_cluster(jobs, policy, opts);
        REQUIRE(out.job_gpus[0] == std::vector<std::int32_t>{0, 1});
        CHECK(out.job_gpus[6] == std::vector<std::int32_t>{2, 3});
        CHECK(out.joint_paced_plans >= 2);
        // B is placed at X's end and starts within a run of GPUs 2 and 3 after it.
        const core::TimeNs x_end = out.outcome.jobs[1].finish_ns;
        CHECK(out.outcome.jobs[6].admitted_ns == x_end);
        CHECK(out.outcome.jobs[6].first_start_ns > x_end);
        CHECK(out.outcome.jobs[6].first_start_ns <= x_end + test::ms(other_ms * 3 / 2 + 32));
      }
    }
  }
  CHECK(compared == 96);
}

// A GPU of a gang job whose replica's turn has not come there plans its 1-GPU runs up to it (a
// turn plan) where no joint plan of the gang's GPUs fits; a gang job waiting in the cluster queue
// that becomes placeable meanwhile is placed then, as run by run.
// LAS, four GPUs of a kind each (GPU 3 of 20 GiB). Gang A (whole GPU) runs alone on GPUs 0 and 1
// from 0; X and Y only GPU 3 holds (X runs, Y waits there); f2 runs alone on GPU 2; gang B (small)
// arrives at 0.1 s and waits (GPUs 0 and 1 host a gang, GPU 3 not while Y waits there). At 1 s,
// a1 and b1 (whole GPU, 7 and 9 ms) join GPU 1's lane and c0 (5 iterations) GPU 0's: with nothing
// attained they run before A. c0 would finish before A's turn on GPU 0, so no joint plan fits;
// GPU 1 plans a1's and b1's turns up to A's (they catch up with A's 1 s), GPU 0 runs c0, then
// holds A's replica. X ends inside that stretch (its length swept): GPU 3 admits Y, B can start
// on GPUs 2 and 3 and is placed at X's end.
TEST_CASE("cluster turn plans: a gang GPU's runs up to its replica's turn, a waiting gang job placed inside them") {
  const std::unique_ptr<sim::InterferenceModel> none = sim::make_interference("none", nullptr, nullptr, 0.8);
  cluster::ClusterOptions opts = waiting_gang_options(*none);
  for (const std::string kind : {"zero", "one", "two"}) opts.cluster.kinds.push_back({kind, test::gib(16), cluster::kSpeedOne});
  opts.cluster.kinds.push_back({"big", test::gib(20), cluster::kSpeedOne});
  for (std::size_t g = 0; g < opts.cluster.gpus.size(); ++g) opts.cluster.gpus[g].kind = static_cast<std::int32_t>(g);
  std::int64_t compared = 0, turn_plans = 0;
  for (std::int64_t x_iterations = 300; x_iterations < 324; ++x_iterations) {
    auto jobs = waiting_gang_jobs(x_iterations, test::ms(5) + 77'777, test::ms(7));
    jobs[4].arrival_ns = jobs[5].arrival_ns = test::ms(1000);
    jobs[4].set_gpu_kinds("one");
    jobs[5].set_gpu_kinds("one");
    jobs[5].iter_ns = test::ms(9);
    jobs.push_back(test::job("c0", test::ms(1000), 5, test::ms(7), 0, test::gib(16)));
    jobs.back().set_gpu_kinds("zero");
    jobs = test::trace(jobs);
    CAPTURE(x_iterations);
    Tally tally;
    compare(jobs, "las", opts, tally);
    ++compared;
    const cluster::ClusterOutcome out = cluster::run_cluster(jobs, "las", opts);
    REQUIRE(out.job_gpus[0] == std::vector<std::int32_t>{0, 1});
    CHECK(out.job_gpus[4] == std::vector<std::int32_t>{1});
    CHECK(out.job_gpus[5] == std::vector<std::int32_t>{1});
    CHECK(out.job_gpus[6] == std::vector<std::int32_t>{2, 3});
    CHECK(out.job_gpus[7] == std::vector<std::int32_t>{0});
    turn_plans += out.turn_plans;
    // B is placed at X's end, inside a1's and b1's stretch, and starts at f2's next boundary on
    // GPU 2.
    const core::TimeNs x_end = out.outcome.jobs[1].finish_ns;
    CHECK(x_end > test::ms(1000));
    CHECK(out.outcome.jobs[6].admitted_ns == x_end);
    CHECK(out.outcome.jobs[6].first_start_ns <= out.outcome.jobs[6].admitted_ns + test::ms(10));
  }
  CHECK(compared == 24);
  CHECK(turn_plans >= 24);
}
