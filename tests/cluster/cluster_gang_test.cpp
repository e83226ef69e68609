// Batched gang runs (ClusterOptions::gang_batches): after a gang run's first lock-step
// iteration, the rest is one batched run per replica, cut back to the iteration in flight where
// lock-step could differ (a cut, another lane starting beside a replica, a paging transfer, the
// cluster queue). The results must be exactly those of dispatching every lock-step iteration on
// its own, on random traces with gang jobs on 2 to 12 GPUs, every policy, placement and the
// interference models none, profiled and pairs; and two hand-computed cases.
#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cluster/cluster.h"
#include "cluster/placement.h"
#include "policies/registry.h"
#include "sim/interference.h"
#include "support/jobs.h"

using namespace salus;

namespace {

std::string describe(const core::JobState& s) {
  std::string d = std::string(core::to_string(s.status)) + " '" + s.reason() + "' it " +
                  std::to_string(s.iterations_done) + " rank " + std::to_string(s.submit_rank) + " admitted " +
                  std::to_string(s.admitted_ns) + " start " + std::to_string(s.first_start_ns) + " finish " +
                  std::to_string(s.finish_ns) + " busy " + std::to_string(s.gpu_time_ns) + " lane " +
                  std::to_string(s.lane) + " latencies";
  for (core::TimeNs l : s.request_latency_ns()) d += " " + std::to_string(l);
  return d;
}

/// Totals over the runs compared, to show the comparisons are not vacuous.
struct Tally {
  std::int64_t compared = 0, gang_iterations = 0, batched_events = 0, stepped_events = 0, page_ins = 0, rewinds = 0,
               requests = 0, timeline_rows = 0, crowded_batches = 0, crowded_unpaced = 0;
};

/// The random tests' measured pairs (w3 has none: solo beside the others).
sim::PairSlowdowns pair_table() {
  return {{{"w0", "w1"}, 1'400'000}, {{"w1", "w0"}, 1'900'000}, {{"w0", "w2"}, 1'100'000},
          {{"w2", "w0"}, 2'300'000}, {{"w1", "w2"}, 1'650'000}, {{"w2", "w1"}, 800'000}};
}

cluster::ClusterOptions options_for(const std::string& policy, const sim::InterferenceModel& model, std::int32_t gpus) {
  cluster::ClusterOptions opts;
  opts.cluster = cluster::ClusterSpec::uniform(gpus, test::gib(16));
  opts.model = &model;
  opts.sched.lane_mode = policies::make_policy(policy)->default_lane_mode();
  return opts;
}

/// Every job's state, the placements, the switches and the end: what two runs that must agree
/// are checked on, beside what each comparison adds.
void check_same_jobs(const cluster::ClusterOutcome& a, const cluster::ClusterOutcome& b) {
  REQUIRE(a.outcome.jobs.size() == b.outcome.jobs.size());
  for (std::size_t j = 0; j < a.outcome.jobs.size(); ++j) {
    CAPTURE(j);
    CHECK(describe(a.outcome.jobs[j]) == describe(b.outcome.jobs[j]));
  }
  CHECK(a.job_gpus == b.job_gpus);
  CHECK(a.placements == b.placements);
  CHECK(a.outcome.switches == b.outcome.switches);
  CHECK(a.outcome.end_ns == b.outcome.end_ns);
}

/// Runs the jobs with batched gang runs and without, and checks every job's state, the
/// placements, the busy samples and every counter but the instants processed.
void compare(const std::vector<core::JobSpec>& jobs, const std::string& policy, const cluster::ClusterOptions& opts,
             Tally& tally) {
  cluster::ClusterOptions stepped_opts = opts;
  stepped_opts.tuning.gang_batches = false;
  // Lock-step itself: every replica at its own speed, ending where it does and holding its lane
  // until the slowest one's end (no padding to the slowest one's pace).
  stepped_opts.tuning.pace_replicas = false;
  const cluster::ClusterOutcome batched = cluster::run_cluster(jobs, policy, opts);
  const cluster::ClusterOutcome stepped = cluster::run_cluster(jobs, policy, stepped_opts);
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    CAPTURE(j);
    CHECK(describe(batched.outcome.jobs[j]) == describe(stepped.outcome.jobs[j]));
  }
  CHECK(batched.job_gpus == stepped.job_gpus);
  CHECK(batched.busy.size() == stepped.busy.size());
  for (std::size_t i = 0; i < std::min(batched.busy.size(), stepped.busy.size()); ++i) {
    CHECK(batched.busy[i].time_ns == stepped.busy[i].time_ns);
    CHECK(batched.busy[i].gpus == stepped.busy[i].gpus);
  }
  CHECK(batched.placements == stepped.placements);
  CHECK(batched.gang_iterations == stepped.gang_iterations);
  CHECK(batched.rewinds == stepped.rewinds);
  const core::ScheduleOutcome& a = batched.outcome;
  const core::ScheduleOutcome& b = stepped.outcome;
  CHECK(a.lanes_opened == b.lanes_opened);
  CHECK(a.max_concurrent_lanes == b.max_concurrent_lanes);
  CHECK(a.admissions_new_lane == b.admissions_new_lane);
  CHECK(a.admissions_existing_lane == b.admissions_existing_lane);
  CHECK(a.admissions_grown_lane == b.admissions_grown_lane);
  CHECK(a.dispatches == b.dispatches);
  CHECK(a.switches == b.switches);
  CHECK(a.page_outs == b.page_outs);
  CHECK(a.page_ins == b.page_ins);
  CHECK(a.plans == b.plans);
  CHECK(a.plan_closed_form == b.plan_closed_form);
  CHECK(a.steps == b.steps);
  CHECK(a.iterations == b.iterations);
  CHECK(a.end_ns == b.end_ns);
  CHECK(a.fatal_error == b.fatal_error);
  CHECK(batched.events <= stepped.events);
  // Counting the GPUs that could take a waiting gang job anew at every count changes nothing,
  // not even the instants (cluster/able_gpus.h: the answers that may turn between touches,
  // SRTF's joins, are asked again at every count; without that, on GPUs of several speeds, 4 of
  // these runs took 1-3 more instants, their results the same).
  cluster::ClusterOptions recount_opts = opts;
  recount_opts.tuning.incremental_gang_queue = false;
  const cluster::ClusterOutcome recount = cluster::run_cluster(jobs, policy, recount_opts);
  check_same_jobs(batched, recount);
  CHECK(batched.events == recount.events);
  // Every GPU built before the run (a recorded timeline asks for it: cluster_model.h, GpuRuntime)
  // and no replica slot given twice (Tuning::reuse_slots) against GPUs built at their first use
  // and slots reused: the same results (a timeline also runs no plan, which changes only the
  // instants).
  cluster::ClusterOptions eager_opts = opts;
  eager_opts.sched.record_timeline = true;
  eager_opts.tuning.reuse_slots = false;
  const cluster::ClusterOutcome eager = cluster::run_cluster(jobs, policy, eager_opts);
  check_same_jobs(batched, eager);
  // Slots given again with a timeline: each GPU's runs renamed from slot to job as jobs retire
  // (Cluster::name_runs) are those renamed once at the end.
  eager_opts.tuning.reuse_slots = true;
  const cluster::ClusterOutcome reused = cluster::run_cluster(jobs, policy, eager_opts);
  check_same_jobs(eager, reused);
  REQUIRE(reused.gpu_timelines.size() == eager.gpu_timelines.size());
  for (std::size_t g = 0; g < eager.gpu_timelines.size(); ++g) {
    const std::vector<core::Segment>&x = eager.gpu_timelines[g].segments, &y = reused.gpu_timelines[g].segments;
    REQUIRE(x.size() == y.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      CHECK(x[i].job == y[i].job);
      CHECK(x[i].start_ns == y[i].start_ns);
      CHECK(x[i].end_ns == y[i].end_ns);
      CHECK(x[i].iterations == y[i].iterations);
    }
    tally.timeline_rows += static_cast<std::int64_t>(x.size());
  }
  CHECK(batched.busy.size() == eager.busy.size());
  tally.gang_iterations += batched.gang_iterations;
  tally.batched_events += batched.events;
  tally.crowded_batches += batched.crowded_batches;
  tally.crowded_unpaced += batched.crowded_unpaced;
  tally.stepped_events += stepped.events;
  tally.page_ins += a.page_ins;
  tally.rewinds += batched.rewinds;
  for (const core::JobState& st : a.jobs) tally.requests += static_cast<std::int64_t>(st.request_latency_ns().size());
  ++tally.compared;
}

}  // namespace

// Jobs arrive faster than the GPUs serve them, so that the cluster queue holds 1-GPU and gang
// jobs while gang runs are batched; a third of the jobs need 2 to 4 GPUs (up to the cluster's).
TEST_CASE("batched gang runs: the same results, to the nanosecond, as lock-step one iteration at a time") {
  const sim::PairSlowdowns pairs = pair_table();
  std::vector<std::unique_ptr<sim::InterferenceModel>> models;
  for (const std::string name : {"none", "profiled", "pairs"}) {
    models.push_back(sim::make_interference(name, &pairs, nullptr, 0.8));
  }
  const std::vector<std::string> policies = policies::policy_names();
  const std::vector<std::string> placements = cluster::placement_registry().names();
  const std::size_t combos = policies.size() * placements.size() * models.size();
  Tally tally;
  for (std::uint64_t seed = 1; seed <= 2 * combos; ++seed) {
    const std::string& policy = policies[seed % policies.size()];
    const std::string& placement = placements[(seed / policies.size()) % placements.size()];
    const sim::InterferenceModel& model = *models[(seed / (policies.size() * placements.size())) % models.size()];
    const auto gpus = static_cast<std::int32_t>(2 + seed % 11);
    const bool paging = seed % 5 == 0 && policies::make_policy(policy)->supports(core::LaneMode::kSingle);
    // A third of the traces, and those that page, add a GPU of 20 GiB (first or last).
    const bool large = paging || seed % 3 == 2;
    auto jobs = test::random_jobs(seed * 977, 16 + static_cast<int>(seed % 17), 8, [&](core::JobSpec& j, int, auto& pick) {
      j.arrival_ns /= 2;
      j.workload = "w" + std::to_string(pick(0, 3));  // w3: no pair entry (solo beside the others)
      j.priority = static_cast<std::int32_t>(pick(0, 2));
      if (pick(0, 3) == 0) j.first_iter_extra_ns = pick(0, 5'000'000);
      if (pick(0, 2) == 0) {
        j.gpus = static_cast<std::int32_t>(std::min<std::int64_t>(gpus, pick(2, 4)));
        j.iterations *= 4;
      }
      // A third of the 1-GPU jobs only the large GPU holds (P + E over 16 GiB): it is given them
      // at their arrival, and they wait in its own queue (with paging, paging out the paused
      // jobs of its one lane); admitted there after a placement, they let it take jobs the
      // cluster queue holds.
      if (large && j.gpus == 1 && pick(0, 2) == 0) {
        j.persistent = test::mib(pick(1000, 4000));
        j.ephemeral = test::gib(16) - j.persistent + test::mib(pick(100, 3000));
      }
      if (pick(0, 24) == 0) j.persistent = test::gib(21);  // fits no GPU
      // Every fourth trace has inference jobs: each request arrives on its own, and a GPU with
      // such a job is stepped at each arrival of a request.
      if (seed % 4 == 2 && j.gpus == 1 && pick(0, 4) == 0) {
        j.iterations = std::min<std::int64_t>(j.iterations, 30);
        core::TimeNs r = j.arrival_ns;
        std::vector<core::TimeNs> requests;
        for (std::int64_t k = 0; k < j.iterations; ++k) {
          requests.push_back(r);
          r += test::ms(pick(0, 80));
        }
        j.set_requests_ns(std::move(requests));
      }
    });
    cluster::ClusterOptions opts = options_for(policy, model, gpus);
    opts.placement = placement;
    opts.switch_cost_ns = seed % 3 == 0 ? 0 : test::ms(2);
    if (large) {
      const auto at = seed % 2 == 0 ? opts.cluster.gpus.begin() : opts.cluster.gpus.end();
      opts.cluster.gpus.insert(at, cluster::GpuSpec{test::gib(20), gpus});
    }
    // Half the traces on GPUs of two or three speeds: a gang's faster replicas are held to the
    // slowest one's pace, and jobs arriving beside them find an iteration in flight padded.
    if (seed % 2 == 1) {
      for (std::size_t g = 0; g < opts.cluster.gpus.size(); ++g) {
        opts.cluster.gpus[g].speed_ppm = g % 3 == 0 ? 1'000'000 : g % 3 == 1 ? 1'700'000 : 600'000;
      }
    }
    if (paging) {
      opts.sched.lane_mode = core::LaneMode::kSingle;
      opts.sched.paging = true;
      opts.paging_bytes_per_s = 8 * core::kGiB;
    }
    if (seed % 4 == 1) {
      std::mt19937_64 rng(seed * 7);
      for (const core::JobSpec& j : jobs) opts.actual_iter_ns.push_back(j.iter_ns + static_cast<core::TimeNs>(rng() % 3'000'000));
    }
    CAPTURE(seed);
    CAPTURE(policy);
    CAPTURE(placement);
    compare(jobs, policy, opts, tally);
  }
  CHECK(tally.compared == static_cast<std::int64_t>(2 * combos));
  MESSAGE("gang iterations ", tally.gang_iterations, ", instants ", tally.batched_events, " batched, ",
          tally.stepped_events, " lock-step; page-ins ", tally.page_ins, ", requests served ", tally.requests,
          ", rewinds ", tally.rewinds, "; batches beside other lanes ", tally.crowded_batches, " (paced replicas made lock-step's at a cut: ",
          tally.crowded_unpaced, ")");
  CHECK(tally.gang_iterations > 500'000);
  CHECK(tally.crowded_batches > 40);
  CHECK(tally.crowded_unpaced > 20);
  CHECK(tally.page_ins > 0);
  CHECK(tally.requests > 1000);
  CHECK(tally.timeline_rows > 10'000);
  // Batches did run: most gang iterations took no instant of their own.
  CHECK(tally.stepped_events - tally.batched_events > tally.gang_iterations / 2);
}

// Paced replicas beside newcomers (SimExecutor::unpad): GPUs of several speeds with lanes side by
// side (Algorithm 1's auto lanes), gang jobs of small memory and long runs, 1-GPU jobs of small
// memory arriving often, so that jobs start beside a gang's faster replicas, held to the slowest
// one's pace, at every point of their iterations: in their own work and in the padding. Every
// result as lock-step's (compare: batches off, every replica at its own speed).
TEST_CASE("batched gang runs: a job starting beside a paced replica finds its iteration in flight as lock-step has it") {
  const sim::PairSlowdowns pairs = pair_table();
  const std::unique_ptr<sim::InterferenceModel> profiled = sim::make_interference("profiled", nullptr, nullptr, 0.8);
  const std::unique_ptr<sim::InterferenceModel> paired = sim::make_interference("pairs", &pairs, nullptr, 0.8);
  const std::vector<std::string> policies = policies::policy_names();
  Tally tally;
  std::int64_t work = 0, held = 0;
  for (std::uint64_t seed = 1; seed <= 300; ++seed) {
    const std::string& policy = policies[seed % policies.size()];
    const sim::InterferenceModel& model = seed % 2 == 0 ? *profiled : *paired;
    const auto gpus = static_cast<std::int32_t>(2 + seed % 5);
    auto jobs = test::random_jobs(seed * 131, 40 + static_cast<int>(seed % 30), 1, [&](core::JobSpec& j, int, auto& pick) {
      j.workload = "w" + std::to_string(pick(0, 3));
      j.persistent = test::mib(pick(100, 1500));
      j.ephemeral = test::mib(pick(100, 2500));
      j.arrival_ns /= 3;
      if (pick(0, 4) == 0) {
        j.gpus = static_cast<std::int32_t>(std::min<std::int64_t>(gpus, pick(2, 3)));
        j.iterations = pick(200, 1500);
      } else {
        j.iterations = pick(3, 60);
      }
    });
    cluster::ClusterOptions opts = options_for(policy, model, gpus);
    if (policies::make_policy(policy)->supports(core::LaneMode::kAuto)) opts.sched.lane_mode = core::LaneMode::kAuto;
    opts.switch_cost_ns = seed % 3 == 0 ? 0 : test::ms(1);
    const std::int64_t speeds[] = {600'000, 1'000'000, 1'700'000, 2'300'000};
    for (std::size_t g = 0; g < opts.cluster.gpus.size(); ++g) opts.cluster.gpus[g].speed_ppm = speeds[(g + seed) % 4];
    CAPTURE(seed);
    CAPTURE(policy);
    compare(jobs, policy, opts, tally);
    const cluster::ClusterOutcome out = cluster::run_cluster(jobs, policy, opts);
    work += out.unpadded_work;
    held += out.unpadded_held;
  }
  MESSAGE("paced iterations made lock-step's: ", work, " running their own work on, ", held, " held; gang iterations ",
          tally.gang_iterations, ", instants ", tally.batched_events, " batched, ", tally.stepped_events,
          " lock-step; batches beside other lanes ", tally.crowded_batches, " (paced replicas made lock-step's at a cut: ",
          tally.crowded_unpaced, ")");
  CHECK(tally.crowded_batches > 1000);
  CHECK(tally.crowded_unpaced > 1000);
  CHECK(work > 30);
  CHECK(held > 30);
  CHECK(tally.stepped_events - tally.batched_events > tally.gang_iterations / 2);
}

// PACK, profiled: g's replicas run alone on GPUs 0 and 1, batched after the first iteration; at
// 250 ms s arrives and opens a lane beside g's replica on GPU 0, which from then on runs at half
// speed. Lock-step by hand: iterations end at 100, 200, then the one in flight ends at 300 on
// GPU 1 and at 250 + 2 x 50 = 350 on GPU 0; the next ones take 200 ms (350-550, ..., 950-1150);
// the one from 1150 is at half speed until s finishes at 1250 (s: 500 ms of work at half speed
// from 250), 50 ms of work, then 50 alone: 1300; then 1400 and 1500. GPU 1's replica ends each
// slow iteration 100 ms in and holds its lane until GPU 0's ends.
TEST_CASE("batched gang runs: a PACK neighbour starting mid-batch slows one replica, and lock-step waits for it") {
  const std::unique_ptr<sim::InterferenceModel> profiled = sim::make_interference("profiled", nullptr, nullptr, 0.8);
  auto g = test::job("g", 0, 10, test::ms(100), test::mib(1000), test::mib(1000));
  g.gpus = 2;
  const auto jobs = test::trace({g, test::job("s", test::ms(250), 5, test::ms(100), test::mib(1000), test::mib(1000))});
  enum class Mode { kLockStep, kBatches, kCrowded };
  for (const Mode mode : {Mode::kCrowded, Mode::kBatches, Mode::kLockStep}) {
    CAPTURE(static_cast<int>(mode));
    cluster::ClusterOptions opts = options_for("pack", *profiled, 2);
    opts.tuning.gang_batches = mode != Mode::kLockStep;
    opts.tuning.crowded_batches = mode == Mode::kCrowded;
    const cluster::ClusterOutcome r = cluster::run_cluster(jobs, "pack", opts);
    CHECK(r.job_gpus[0] == std::vector<std::int32_t>{0, 1});
    CHECK(r.job_gpus[1] == std::vector<std::int32_t>{0});
    CHECK(r.outcome.jobs[0].finish_ns == test::ms(1500));
    CHECK(r.outcome.jobs[0].iterations_done == 10);
    CHECK(r.outcome.jobs[1].finish_ns == test::ms(1250));
    CHECK(r.gang_iterations == 10);
    // Lock-step: the start, s's arrival, every iteration's end on each replica (from 300 on,
    // GPU 1's replica ends 100 ms into each slow iteration and waits): 0, 100, 200, 250, 300,
    // 350, 450, 550, ..., 1150, 1250, 1300, 1400, 1500. Batched: the same but the end at 200
    // inside the first batch and at 1400 inside the last. Batched beside s too: the batch from
    // 350 goes on beside s, GPU 1's replica held to GPU 0's 200 ms, until s finishes at 1250
    // (GPU 0's replica speeds up: GPU 1's, its 100 ms done, holds its lane to 1300, not 1350):
    // 0, 100, 250, 300, 350, 1250, 1300, 1500.
    CHECK(r.events == (mode == Mode::kCrowded ? 8 : mode == Mode::kBatches ? 16 : 18));
    CHECK(r.crowded_batches == (mode == Mode::kCrowded ? 1 : 0));
    CHECK(r.crowded_unpaced == (mode == Mode::kCrowded ? 1 : 0));
  }
  Tally tally;
  compare(jobs, "pack", options_for("pack", *profiled, 2), tally);
}

// SRTF: s (2 iterations) arrives at 250 ms on GPU 0, mid-way through g's batch; SRTF prefers it,
// so GPU 0 asks g's run to end at a boundary: it ends at 300 on both replicas (the iteration in
// flight), GPU 0 runs s until 500, GPU 1 holds g's replica from 300, and g's remaining 7
// iterations run 500-1200.
TEST_CASE("batched gang runs: a cut mid-batch ends the run on every replica with the iteration in flight") {
  const std::unique_ptr<sim::InterferenceModel> none = sim::make_interference("none", nullptr, nullptr, 0.8);
  auto g = test::job("g", 0, 10, test::ms(100), test::mib(1000), test::mib(1000));
  g.gpus = 2;
  const auto jobs = test::trace({g, test::job("s", test::ms(250), 2, test::ms(100), test::mib(1000), test::mib(1000))});
  for (const bool batches : {true, false}) {
    CAPTURE(batches);
    cluster::ClusterOptions opts = options_for("srtf", *none, 2);
    opts.tuning.gang_batches = batches;
    const cluster::ClusterOutcome r = cluster::run_cluster(jobs, "srtf", opts);
    CHECK(r.job_gpus[1] == std::vector<std::int32_t>{0});
    CHECK(r.outcome.jobs[1].first_start_ns == test::ms(300));
    CHECK(r.outcome.jobs[1].finish_ns == test::ms(500));
    CHECK(r.outcome.jobs[0].finish_ns == test::ms(1200));
    CHECK(r.outcome.jobs[0].iterations_done == 10);
    CHECK(r.outcome.dispatches == 2 * 2 + 1);  // g's two runs on each GPU, and s
    CHECK(r.gang_iterations == 10);
  }
}

// The cluster queue: lock-step steps every replica's GPU at each boundary, where the placement
// tries the queue's jobs on it. GPUs 0 (20 GiB) and 1 (16 GiB); PACK, no interference. g's
// replicas hold 2 GiB on each; a (17 GiB, only GPU 0 holds it) runs there until 950 ms, b fills
// GPU 1; p (17 GiB) is given to GPU 0 at 200 ms and waits in its own queue (it fits neither
// beside a nor in a's lane); j (768 MiB) arrives at 300 ms, and neither GPU admits it (GPU 0 has
// p pending, GPU 1 is full): the cluster queue. At 950 ms a finishes: GPU 0 settles, admitting p
// from its own queue, and now j fits beside it (19.75 of 20 GiB): the placement, which judges
// GPU 0 as 950 ms leaves it, places j there at 950 ms, batch or not (placed before GPU 0 admitted
// p, j would wait for a later step of GPU 0).
TEST_CASE("batched gang runs: a queued job that a replica's GPU can admit once it settled is placed at that instant") {
  const std::unique_ptr<sim::InterferenceModel> none = sim::make_interference("none", nullptr, nullptr, 0.8);
  auto g = test::job("g", 0, 30, test::ms(100), test::gib(1), test::gib(1));
  g.gpus = 2;
  const auto jobs = test::trace({g, test::job("a", test::ms(10), 10, test::ms(94), test::mib(1536), test::mib(15872)),
                                 test::job("b", test::ms(20), 20, test::ms(100), test::gib(2), test::gib(12)),
                                 test::job("p", test::ms(200), 5, test::ms(100), test::gib(1), test::gib(16)),
                                 test::job("j", test::ms(300), 3, test::ms(50), test::mib(256), test::mib(512))});
  for (const bool batches : {true, false}) {
    CAPTURE(batches);
    cluster::ClusterOptions opts = options_for("pack", *none, 1);
    opts.cluster.gpus.front().capacity = test::gib(20);
    opts.cluster.gpus.push_back(cluster::GpuSpec{test::gib(16), 1});
    opts.tuning.gang_batches = batches;
    const cluster::ClusterOutcome r = cluster::run_cluster(jobs, "pack", opts);
    CHECK(r.job_gpus == std::vector<std::vector<std::int32_t>>{{0, 1}, {0}, {1}, {0}, {0}});
    CHECK(r.outcome.jobs[3].status == core::JobStatus::kDone);
    CHECK(r.outcome.jobs[1].finish_ns == test::ms(950));
    CHECK(r.outcome.jobs[3].admitted_ns == test::ms(950));
    CHECK(r.outcome.jobs[4].admitted_ns == test::ms(950));
    CHECK(r.outcome.jobs[4].finish_ns == test::ms(1100));
    CHECK(r.outcome.jobs[0].finish_ns == test::ms(3000));
    CHECK(r.placements == 3);  // g, b and j; a and p were given to GPU 0 without a choice
  }
}
