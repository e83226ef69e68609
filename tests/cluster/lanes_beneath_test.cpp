// Lanes beneath the preemptive cluster policies (cluster/preemptive.h, "Lanes beneath";
// salus-sim --gpu-sharing): hand cases of 2D-LAS with and without room for two jobs on a GPU,
// a preempted job leaving at its iteration boundary; and, on random traces with gangs, lanes
// beneath in exclusive lanes with 1 ns iterations (every instant a boundary) against the
// exclusive engine, which they must then equal job by job.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "cluster/cluster_file.h"
#include "cluster/preemptive.h"
#include "core/errors.h"
#include "core/units.h"
#include "run/sim_runner.h"
#include "sim/interference.h"
#include "support/jobs.h"

using namespace salus;

namespace {

constexpr core::TimeNs kS = 1'000'000'000;

/// A 1-GPU job of `iterations` iterations of `iter_s` seconds, P and E in GiB.
core::JobSpec job(const std::string& id, std::int64_t arrival_s, std::int64_t iterations, std::int64_t iter_s,
                  std::int64_t p_gib, std::int64_t e_gib) {
  return test::job(id, arrival_s * kS, iterations, iter_s * kS, test::gib(p_gib), test::gib(e_gib));
}

struct Lanes {
  std::unique_ptr<sim::InterferenceModel> model = sim::make_interference("none");
  cluster::PreemptiveOptions opts(std::int32_t gpus, const std::string& gpu_policy, core::LaneMode mode) const {
    cluster::PreemptiveOptions o;
    o.cluster = cluster::ClusterSpec::uniform(gpus, 16 * core::kGiB);
    o.gpu_policy = gpu_policy;
    o.sched.lane_mode = mode;
    o.model = model.get();
    o.record_runs = true;
    return o;
  }
};

std::vector<core::TimeNs> finishes(const cluster::ClusterOutcome& r) {
  std::vector<core::TimeNs> f;
  for (const core::JobState& s : r.outcome.jobs) f.push_back(s.finish_ns);
  return f;
}

}  // namespace

TEST_CASE("lanes beneath 2D-LAS by hand: two jobs share a GPU where the exclusive model preempts one") {
  // One GPU, dlas-gpu with one threshold at 5 GPU-s; a (0 s) and b (2 s) each 10 iterations of 1 s.
  // Exclusive: a runs 0-5, is demoted at 5 s and preempted by b (queue 0), which runs 5-10 and is
  // demoted at 10 s; in queue 1 a (waiting, ahead) starts again, 10-15, then b 15-20.
  // Lanes (PACK, P 1 GiB + E 4 GiB each: two fit 16 GiB, an ideal GPU): b starts at 2 s beside a,
  // both at full speed; a ends at 10 s, b at 12 s; a demotion preempts nobody.
  Lanes l;
  const auto jobs = test::trace({job("a", 0, 10, 1, 1, 4), job("b", 2, 10, 1, 1, 4)});
  cluster::PreemptiveOptions ex = l.opts(1, "", core::LaneMode::kAuto);
  ex.gpu_policy.clear();
  ex.lease.dlas_thresholds_ns = {5 * kS};
  const cluster::ClusterOutcome e = cluster::run_preemptive(jobs, "dlas-gpu", ex);
  CHECK(finishes(e) == std::vector<core::TimeNs>{15 * kS, 20 * kS});
  CHECK(e.preemptions == 2);

  cluster::PreemptiveOptions o = l.opts(1, "pack", core::LaneMode::kAuto);
  o.lease.dlas_thresholds_ns = {5 * kS};
  const cluster::ClusterOutcome r = cluster::run_preemptive(jobs, "dlas-gpu", o);
  CHECK(finishes(r) == std::vector<core::TimeNs>{10 * kS, 12 * kS});
  CHECK(r.preemptions == 0);
  CHECK(r.outcome.jobs[1].first_start_ns == 2 * kS);
  CHECK(r.outcome.jobs[0].iterations_done == 10);
  REQUIRE(r.busy.size() == 2);  // one GPU busy from 0, idle from 12 s
  CHECK(r.busy.back().time_ns == 12 * kS);
}

TEST_CASE("lanes beneath 2D-LAS by hand: a preempted job leaves at its iteration boundary and the next waits for it") {
  // As above with iterations of 2 s, 5 each, and P 2 GiB + E 13 GiB: two do not fit (2 + 2 + 13 >
  // 16). At 5 s a is demoted and preempted; it leaves at its boundary at 6 s (3 iterations done)
  // and b, leased at 5 s, is admitted then and runs from 6 s. b's service counts from its lease:
  // demoted at 10 s, when it is at a boundary (6 + 2 x 2): it leaves with 2 iterations, a starts
  // again and runs its 2 left, 10-14; b its 3 left, 14-20.
  Lanes l;
  const auto jobs = test::trace({job("a", 0, 5, 2, 2, 13), job("b", 2, 5, 2, 2, 13)});
  cluster::PreemptiveOptions o = l.opts(1, "fair", core::LaneMode::kSingle);
  o.lease.dlas_thresholds_ns = {5 * kS};
  const cluster::ClusterOutcome r = cluster::run_preemptive(jobs, "dlas-gpu", o);
  CHECK(finishes(r) == std::vector<core::TimeNs>{14 * kS, 20 * kS});
  CHECK(r.preemptions == 2);
  CHECK(r.outcome.jobs[1].first_start_ns == 6 * kS);
  const std::vector<cluster::JobRun> want = {
      {.job = 0, .start_ns = 0, .end_ns = 6 * kS, .gpus = {0}},
      {.job = 1, .start_ns = 5 * kS, .end_ns = 10 * kS, .gpus = {0}},
      {.job = 0, .start_ns = 10 * kS, .end_ns = 14 * kS, .gpus = {0}},
      {.job = 1, .start_ns = 14 * kS, .end_ns = 20 * kS, .gpus = {0}},
  };
  CHECK(r.job_runs == want);
}

TEST_CASE("lanes beneath: a restarted job pays the restart cost on its first iteration, wherever it starts") {
  // Two GPUs, dlas (run time) with a threshold at 2 s, exclusive lanes, a restart cost of 1 s. a
  // (0 s, 4 x 1 s) runs on GPU 0; the gang g (2 GPUs, 2 s of work) arrives at 1 s and waits for a
  // second GPU. At 2 s a is demoted and g takes both GPUs: a leaves at its boundary at 2 s with 2
  // iterations done and g runs 2-4; a starts again at 4 s with 2 iterations left, its first 1 s
  // longer: it ends at 7 s.
  Lanes l;
  core::JobSpec g = job("g", 1, 2, 1, 2, 13);
  g.gpus = 2;
  const auto jobs = test::trace({job("a", 0, 4, 1, 2, 13), g});
  cluster::PreemptiveOptions o = l.opts(2, "fifo", core::LaneMode::kExclusive);
  o.lease.dlas_thresholds_ns = {2 * kS};
  o.restart_cost_ns = kS;
  const cluster::ClusterOutcome r = cluster::run_preemptive(jobs, "dlas", o);
  CHECK(finishes(r) == std::vector<core::TimeNs>{7 * kS, 4 * kS});
  CHECK(r.preemptions == 1);
  CHECK(r.outcome.jobs[0].iterations_done == 4);
}

TEST_CASE("lanes beneath: refused where they are not modelled, with a message") {
  Lanes l;
  const auto jobs = test::trace({job("a", 0, 4, 1, 2, 13)});
  cluster::PreemptiveOptions o = l.opts(2, "pack", core::LaneMode::kAuto);
  o.cluster = cluster::load_cluster_text("nodes,gpus_per_node,gpu_mem,kind\n1,2,16GiB,V100\n1,2,16GiB,K80\n", "kinds.csv");
  CHECK_THROWS_WITH_AS(cluster::run_preemptive(jobs, "max-min", o),
                       "--gpu-sharing pack: lanes beneath a cluster policy run GPUs of one kind; this cluster names kinds "
                       "(2): give --gpu-sharing exclusive",
                       core::InputError);
  o = l.opts(2, "nope", core::LaneMode::kAuto);
  CHECK_THROWS_WITH_AS(cluster::run_preemptive(jobs, "dlas-gpu", o), doctest::Contains("fifo"), core::InputError);
}

TEST_CASE("lanes beneath max-min by hand: two jobs that fit one GPU run together every round") {
  // One GPU, rounds of 10 s, an allocation at every round: a and b (0 s, 20 x 1 s each) have
  // half the GPU each. Whole GPUs: a runs 0-10, b 10-20, a 20-30 (done), b 30-40. PACK's lanes on
  // an ideal GPU (P 1 GiB + E 4 GiB each): both chosen every round, both run at full speed, done
  // at 20 s. FAIR's one lane: they alternate iteration by iteration, a done at 39 s, b at 40 s.
  Lanes l;
  const auto jobs = test::trace({job("a", 0, 20, 1, 1, 4), job("b", 0, 20, 1, 1, 4)});
  cluster::PreemptiveOptions ex = l.opts(1, "", core::LaneMode::kAuto);
  ex.gpu_policy.clear();
  ex.lease.round_ns = 10 * kS;
  ex.lease.reset_ns = 0;
  CHECK(finishes(cluster::run_preemptive(jobs, "max-min", ex)) == std::vector<core::TimeNs>{30 * kS, 40 * kS});
  cluster::PreemptiveOptions o = l.opts(1, "pack", core::LaneMode::kAuto);
  o.lease = ex.lease;
  const cluster::ClusterOutcome r = cluster::run_preemptive(jobs, "max-min", o);
  CHECK(finishes(r) == std::vector<core::TimeNs>{20 * kS, 20 * kS});
  CHECK(r.preemptions == 0);
  CHECK(r.runs == 2);
  o = l.opts(1, "fair", core::LaneMode::kSingle);
  o.lease = ex.lease;
  CHECK(finishes(cluster::run_preemptive(jobs, "max-min", o)) == std::vector<core::TimeNs>{39 * kS, 40 * kS});
}

TEST_CASE("lanes beneath in exclusive lanes with 1 ns iterations equal the exclusive engine: random traces with gangs, "
          "2D-LAS and rounds") {
  // Every instant is an iteration boundary, so a preempted job leaves at once, as the exclusive
  // model has it; one job per GPU (exclusive lanes) leaves the placement the only difference,
  // which on GPUs of one size changes no finish.
  Lanes l;
  int compared = 0;
  std::int64_t preemptions = 0;
  for (std::uint32_t seed = 1; seed <= 20; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    const std::int32_t gpus = std::array<std::int32_t, 3>{2, 4, 8}[static_cast<std::size_t>(pick(0, 2))];
    std::vector<core::JobSpec> jobs;
    std::int64_t t = 0;
    for (int i = 0; i < 60; ++i) {
      t += pick(0, 3) == 0 ? 0 : pick(1, 30);
      static constexpr std::int32_t kWidths[] = {1, 1, 1, 2, 4, 8};
      core::JobSpec s = test::job("j" + std::to_string(i), t * kS, pick(1, 120) * kS, 1, test::gib(1), test::gib(14));
      s.gpus = std::min(gpus, kWidths[pick(0, 5)]);
      jobs.push_back(s);
    }
    jobs = test::trace(jobs);
    for (const std::string policy : {"dlas-gpu", "dlas", "max-min", "fifo-rounds"}) {
      CAPTURE(seed);
      CAPTURE(policy);
      cluster::PreemptiveOptions ex;
      ex.cluster = cluster::ClusterSpec::uniform(gpus, 16 * core::kGiB);
      ex.lease.dlas_thresholds_ns = seed % 2 == 0 ? std::vector<core::TimeNs>{24 * kS} : std::vector<core::TimeNs>{16 * kS, 64 * kS};
      ex.lease.dlas_starvation = static_cast<double>(seed % 3);
      ex.lease.round_ns = (seed % 2 == 0 ? 20 : 7) * kS;
      ex.lease.reset_ns = (seed % 3) * 30 * kS;
      cluster::PreemptiveOptions o = l.opts(gpus, "fifo", core::LaneMode::kExclusive);
      o.lease = ex.lease;
      const cluster::ClusterOutcome want = cluster::run_preemptive(jobs, policy, ex);
      const cluster::ClusterOutcome got = cluster::run_preemptive(jobs, policy, o);
      CHECK(finishes(got) == finishes(want));
      CHECK(got.preemptions == want.preemptions);
      CHECK(got.promotions == want.promotions);
      preemptions += want.preemptions;
      compared += static_cast<int>(jobs.size());
    }
  }
  CHECK(compared == 20 * 4 * 60);
  CHECK(preemptions > 200);
}

// Each GPU's recorded runs name the input job, though a slot is given again once its job has left
// the GPU: every row lies within a run of that job on that GPU (ClusterOutcome::job_runs) and the
// rows of a 1-GPU job add up to its iterations.
TEST_CASE("lanes beneath: every GPU's timeline names the jobs that ran there, slots given again") {
  Lanes l;
  std::int64_t rows = 0, reused = 0;
  for (std::uint32_t seed = 1; seed <= 12; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    const std::int32_t gpus = 2 + static_cast<std::int32_t>(seed % 3);
    std::vector<core::JobSpec> jobs;
    std::int64_t t = 0;
    for (int i = 0; i < 40; ++i) {
      t += pick(0, 2) == 0 ? 0 : pick(1, 20);
      core::JobSpec s = test::job("j" + std::to_string(i), t * kS, pick(1, 40), pick(1, 3) * kS / 2, test::gib(1),
                                  test::gib(pick(1, 6)));
      if (pick(0, 4) == 0) s.gpus = 2;
      jobs.push_back(s);
    }
    jobs = test::trace(jobs);
    for (const std::string policy : {"dlas-gpu", "max-min"}) {
      for (const std::string gpu_policy : {"pack", "fair"}) {
        CAPTURE(seed);
        CAPTURE(policy);
        CAPTURE(gpu_policy);
        cluster::PreemptiveOptions o =
            l.opts(gpus, gpu_policy, gpu_policy == "pack" ? core::LaneMode::kAuto : core::LaneMode::kSingle);
        o.lease.dlas_thresholds_ns = {8 * kS};
        o.lease.round_ns = 6 * kS;
        o.record_timeline = true;
        o.sched.record_timeline = true;
        const cluster::ClusterOutcome r = cluster::run_preemptive(jobs, policy, o);
        REQUIRE(r.gpu_timelines.size() == static_cast<std::size_t>(gpus));
        std::vector<std::int64_t> iterations(jobs.size(), 0);
        for (std::int32_t g = 0; g < gpus; ++g) {
          for (const core::Segment& seg : r.gpu_timelines[static_cast<std::size_t>(g)].segments) {
            REQUIRE(seg.job >= 0);
            REQUIRE(static_cast<std::size_t>(seg.job) < jobs.size());
            const bool within = std::any_of(r.job_runs.begin(), r.job_runs.end(), [&](const cluster::JobRun& run) {
              return run.job == seg.job && std::count(run.gpus.begin(), run.gpus.end(), g) == 1 &&
                     run.start_ns <= seg.start_ns && seg.end_ns <= run.end_ns;
            });
            CHECK(within);
            iterations[static_cast<std::size_t>(seg.job)] += seg.iterations;
            ++rows;
          }
        }
        for (std::size_t j = 0; j < jobs.size(); ++j) {
          CAPTURE(jobs[j].id);
          if (jobs[j].gpus == 1) CHECK(iterations[j] == r.outcome.jobs[j].iterations_done);
        }
        // Not vacuous: runs ended on the GPUs while others went on (their slots given again).
        reused += static_cast<std::int64_t>(r.job_runs.size()) > gpus * 4 ? 1 : 0;
      }
    }
  }
  CHECK(rows > 2000);
  CHECK(reused == 12 * 4);
}

TEST_CASE("salus-sim's path: --gpu-sharing reaches the engine and the run says what shared the GPUs") {
  run::SimConfig cfg;
  cfg.cluster = cluster::ClusterSpec::uniform(2, 16 * core::kGiB);
  cfg.interference = "none";
  cfg.gpu_sharing = "pack";
  const auto jobs = test::trace({job("a", 0, 10, 1, 1, 4), job("b", 2, 10, 1, 1, 4), job("c", 2, 10, 1, 1, 4)});
  const run::PolicyRun r = run::simulate(jobs, "dlas-gpu", cfg);
  CHECK(r.gpu_sharing == "pack");
  CHECK(r.placement == "util-pack");  // pack's own
  CHECK(r.lane_mode == core::LaneMode::kAuto);
  // b and c start at 2 s; u = 1 each, so util-pack spreads them: b on GPU 1, c beside a (the
  // least utilised, ties to the lower GPU).
  for (const core::JobState& s : r.outcome.jobs) CHECK(s.status == core::JobStatus::kDone);
  CHECK(r.job_gpus[0] == std::vector<std::int32_t>{0});
  CHECK(r.job_gpus[1] == std::vector<std::int32_t>{1});
  CHECK(r.job_gpus[2] == std::vector<std::int32_t>{0});
  cfg.gpu_sharing.clear();
  const run::PolicyRun e = run::simulate(jobs, "dlas-gpu", cfg);
  CHECK(e.gpu_sharing == "exclusive");
}

TEST_CASE("lanes beneath: the short walk (waiting jobs alone) decides as the whole walk, jobs sharing GPUs, 2D-LAS and "
          "rounds") {
  // Random traces of jobs of several memory sizes (one to four fit a 16 GiB GPU) and gangs, under
  // pack (lanes), fair and las (one lane) and fifo (exclusive lanes), each placement, dlas-gpu,
  // dlas, max-min and fifo-rounds: every run the same with and without the short walk.
  Lanes l;
  std::int64_t preemptions = 0, compared = 0;
  for (std::uint32_t seed = 1; seed <= 8; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    std::vector<core::JobSpec> jobs;
    std::int64_t t = 0;
    for (int i = 0; i < 150; ++i) {
      t += pick(0, 20);
      static constexpr std::int32_t kWidths[] = {1, 1, 1, 1, 2, 4};
      static constexpr std::int64_t kMemory[][2] = {{1, 2}, {1, 6}, {2, 5}, {3, 10}, {1, 14}};
      const auto* m = kMemory[pick(0, 4)];
      core::JobSpec s = job("j" + std::to_string(i), t, pick(1, 60), pick(1, 3), m[0], m[1]);
      s.gpus = kWidths[pick(0, 5)];
      jobs.push_back(s);
    }
    jobs = test::trace(jobs);
    struct Beneath {
      const char* gpu_policy;
      core::LaneMode mode;
      const char* placement;  // each placement: the short walk's index must choose as the scan
    };
    for (const Beneath& b : {Beneath{"pack", core::LaneMode::kAuto, "util-pack"}, Beneath{"fair", core::LaneMode::kSingle, "least-loaded"},
                             Beneath{"fifo", core::LaneMode::kExclusive, "first-fit"}, Beneath{"las", core::LaneMode::kSingle, "best-fit"},
                             Beneath{"pack", core::LaneMode::kAuto, "first-fit"}}) {
      for (const char* policy : {"dlas-gpu", "dlas", "max-min", "fifo-rounds"}) {
        const std::string names = std::string(b.gpu_policy) + " " + b.placement + " " + policy;
        CAPTURE(seed);
        CAPTURE(names);
        cluster::PreemptiveOptions o = l.opts(8, b.gpu_policy, b.mode);
        o.placement = b.placement;
        // Nodes of one GPU, or of four (where a gang takes one node's GPUs if one has enough).
        if (seed % 2 == 0) o.cluster = cluster::load_cluster_text("nodes,gpus_per_node,gpu_mem\n2,4,16GiB\n", "2x4.csv");
        o.lease.dlas_thresholds_ns = {30 * kS, 120 * kS};
        o.lease.dlas_starvation = seed % 2 == 0 ? 2.0 : 0.0;
        o.lease.round_ns = (seed % 3 + 1) * 20 * kS;
        o.lease.reset_ns = seed % 2 == 0 ? 0 : 60 * kS;
        o.restart_cost_ns = seed % 3 == 0 ? kS : 0;
        const cluster::ClusterOutcome fast = cluster::run_preemptive(jobs, policy, o);
        o.lease.dlas_short_walks = false;
        const cluster::ClusterOutcome slow = cluster::run_preemptive(jobs, policy, o);
        CHECK(fast.job_runs == slow.job_runs);
        CHECK(finishes(fast) == finishes(slow));
        preemptions += fast.preemptions;
        compared += static_cast<std::int64_t>(jobs.size());
      }
    }
  }
  CHECK(compared == 8 * 5 * 4 * 150);
  CHECK(preemptions > 500);
}

TEST_CASE("lanes beneath: an inference job is refused as by the exclusive engine, naming the option") {
  Lanes l;
  core::JobSpec s = job("serve", 0, 2, 1, 1, 4);
  s.set_requests_ns({0, kS});
  const auto jobs = test::trace({s});
  CHECK_THROWS_WITH_AS(cluster::run_preemptive(jobs, "dlas-gpu", l.opts(1, "pack", core::LaneMode::kAuto)),
                       "--gpu-sharing pack: job 'serve' serves requests (an inference job); the cluster policies run "
                       "training jobs only",
                       core::InputError);
  cluster::PreemptiveOptions ex;
  ex.cluster = cluster::ClusterSpec::uniform(1, 16 * core::kGiB);
  CHECK_THROWS_WITH_AS(cluster::run_preemptive(jobs, "dlas-gpu", ex),
                       doctest::Contains("--policy dlas-gpu: job 'serve' serves requests"), core::InputError);
}
