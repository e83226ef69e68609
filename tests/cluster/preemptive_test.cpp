// The preemptive cluster policies (cluster/lease_policy.h, cluster/preemptive.h): a hand case of a
// job preempted and moved under 2D-LAS, with and without a restart cost; Tiresias' own simulator's
// per-job results (tests/data/peers/tiresias: its 60_job.csv and 300 generated jobs, dlas and
// dlas-gpu, thresholds and starvation knob), job by job; and random traces with gangs against a
// small, slow reference that steps time second by second and re-derives 2D-LAS from its rules.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "cluster/cluster_file.h"
#include "cluster/lease_policy.h"
#include "cluster/preemptive.h"
#include "core/errors.h"
#include "core/units.h"
#include "run/load.h"
#include "run/sim_runner.h"
#include "support/jobs.h"
#include "support/peers.h"
#include "traces/catalog.h"

using namespace salus;

namespace {

constexpr core::TimeNs kS = 1'000'000'000;

// A whole-GPU job of `gpus` GPUs running `seconds` alone.
core::JobSpec job(const std::string& id, std::int64_t arrival_s, std::int64_t seconds, std::int32_t gpus = 1) {
  return test::whole_gpu_job(id, arrival_s, seconds, gpus);
}

cluster::PreemptiveOptions options(std::int32_t gpus, std::vector<core::TimeNs> thresholds, double knob = 0) {
  cluster::PreemptiveOptions o;
  o.cluster = cluster::ClusterSpec::uniform(gpus, 16 * core::kGiB);
  o.lease.dlas_thresholds_ns = std::move(thresholds);
  o.lease.dlas_starvation = knob;
  return o;
}

}  // namespace

TEST_CASE("2D-LAS by hand: two jobs demoted, preempted by newcomers and moved to the other GPU when they resume") {
  // 2 GPUs, dlas (service = run time), one threshold at 10 s. A and B start at 0 and are demoted
  // at 10. C (12 s) preempts B, the later of the two in Q1; D (13 s) preempts A. C ends at 17 and
  // A resumes on C's GPU 1; D ends at 19 and B resumes on D's GPU 0.
  const std::vector<core::JobSpec> jobs = test::trace({job("A", 0, 30), job("B", 0, 30), job("C", 12, 5), job("D", 13, 6)});
  for (const core::TimeNs restart : {core::TimeNs{0}, kS}) {
    CAPTURE(restart);
    cluster::PreemptiveOptions o = options(2, {10 * kS});
    o.restart_cost_ns = restart;
    o.record_timeline = true;
    o.record_runs = true;
    const cluster::ClusterOutcome r = cluster::run_preemptive(jobs, "dlas", o);
    const auto& st = r.outcome.jobs;
    CHECK(st[0].finish_ns == 34 * kS + restart);
    CHECK(st[1].finish_ns == 37 * kS + restart);
    CHECK(st[2].finish_ns == 17 * kS);
    CHECK(st[3].finish_ns == 19 * kS);
    CHECK(st[2].first_start_ns == 12 * kS);
    CHECK(st[3].first_start_ns == 13 * kS);
    CHECK(r.preemptions == 2);
    CHECK(r.migrations == 2);
    // Every run, where and when, in the order they ended.
    const std::vector<cluster::JobRun> want = {
        {.job = 1, .start_ns = 0, .end_ns = 12 * kS, .gpus = {1}},
        {.job = 0, .start_ns = 0, .end_ns = 13 * kS, .gpus = {0}},
        {.job = 2, .start_ns = 12 * kS, .end_ns = 17 * kS, .gpus = {1}},
        {.job = 3, .start_ns = 13 * kS, .end_ns = 19 * kS, .gpus = {0}},
        {.job = 0, .start_ns = 17 * kS, .end_ns = 34 * kS + restart, .gpus = {1}},
        {.job = 1, .start_ns = 19 * kS, .end_ns = 37 * kS + restart, .gpus = {0}},
    };
    CHECK(r.job_runs == want);
    // job_gpus: each job's last run; the timelines: each run on its GPU.
    CHECK(r.job_gpus[0][0] == 1);
    CHECK(r.job_gpus[1][0] == 0);
    REQUIRE(r.gpu_timelines.size() == 2);
    CHECK(r.gpu_timelines[0].segments.size() == 3);  // A, D, B
    CHECK(r.gpu_timelines[1].segments.size() == 3);  // B, C, A
    // The held GPU-time: the runs' wall time, the restarts' included.
    CHECK(st[0].gpu_time_ns == 30 * kS + restart);
  }
}

TEST_CASE("2D-LAS by hand: GPU-time as the service demotes a gang sooner, and a gang that does not fit is passed over") {
  // 4 GPUs, one threshold at 40 GPU-s. G (4 GPUs, 30 s) reaches it after 10 s under dlas-gpu
  // and is preempted at 12 by S (1 GPU, 20 s); the 3 GPUs left cannot hold G, so T (1 GPU,
  // arriving at 14) starts past it. Under dlas G's service is 10 s at 10: not demoted, it keeps
  // its GPUs and S and T wait.
  const std::vector<core::JobSpec> jobs = test::trace({job("G", 0, 30, 4), job("S", 12, 20), job("T", 14, 5)});
  const cluster::ClusterOutcome gpu = cluster::run_preemptive(jobs, "dlas-gpu", options(4, {40 * kS}));
  CHECK(gpu.outcome.jobs[1].first_start_ns == 12 * kS);
  CHECK(gpu.outcome.jobs[2].first_start_ns == 14 * kS);
  CHECK(gpu.outcome.jobs[2].finish_ns == 19 * kS);
  CHECK(gpu.outcome.jobs[0].finish_ns == 32 * kS + 18 * kS);  // resumes when S ends at 32, 18 s left
  CHECK(gpu.preemptions == 1);
  const cluster::ClusterOutcome time = cluster::run_preemptive(jobs, "dlas", options(4, {40 * kS}));
  CHECK(time.outcome.jobs[0].finish_ns == 30 * kS);
  CHECK(time.outcome.jobs[1].first_start_ns == 30 * kS);
  CHECK(time.preemptions == 0);
}

TEST_CASE("2D-LAS by hand: the starvation knob puts a long-waiting job back in the first queue") {
  // 1 GPU, threshold 10 s. A runs 0-11 (demoted at 10) and is preempted at 11 by B; B is demoted
  // at 21 and C, waiting in Q0 since 15, runs 21-29. Without the knob A waits in Q1 until 29 and
  // then runs to its end (118). With knob 1, A has waited 11 s, its run time, at 22: it goes back
  // to Q0 and its service starts from 0, so from then on it and B take turns through the queues.
  const std::vector<core::JobSpec> jobs = test::trace({job("A", 0, 100), job("B", 11, 30), job("C", 15, 8)});
  const cluster::ClusterOutcome off = cluster::run_preemptive(jobs, "dlas", options(1, {10 * kS}));
  const cluster::ClusterOutcome on = cluster::run_preemptive(jobs, "dlas", options(1, {10 * kS}, 1.0));
  CHECK(off.promotions == 0);
  CHECK(on.promotions > 0);
  CHECK(off.outcome.jobs[0].finish_ns != on.outcome.jobs[0].finish_ns);
  // Every job ends, with its work done.
  for (const auto* r : {&off, &on}) {
    for (const core::JobState& st : r->outcome.jobs) CHECK(st.status == core::JobStatus::kDone);
  }
}

TEST_CASE("preemptive cluster policies refuse what they do not model, with a message") {
  const std::vector<core::JobSpec> jobs = test::trace({job("A", 0, 10)});
  cluster::PreemptiveOptions o = options(2, {10 * kS});
  CHECK_THROWS_WITH_AS(cluster::run_preemptive(jobs, "dlas-cpu", o),
                       "unknown cluster policy 'dlas-cpu' (valid: dlas-gpu, dlas, max-min, fifo-rounds); did you mean 'dlas-gpu'?", core::InputError);
  o.cluster.kinds.push_back(cluster::GpuKind{.name = "v100", .memory = 16 * core::kGiB});
  CHECK_THROWS_AS(cluster::run_preemptive(jobs, "dlas-gpu", o), core::InputError);
  // A job too wide or too large for the cluster is rejected at its arrival, with its reason.
  const std::vector<core::JobSpec> wide = test::trace({job("W", 0, 10, 3), job("A", 1, 10)});
  const cluster::ClusterOutcome r = cluster::run_preemptive(wide, "dlas-gpu", options(2, {10 * kS}));
  CHECK(r.outcome.jobs[0].status == core::JobStatus::kRejected);
  CHECK(r.outcome.jobs[0].reason() == "needs 3 GPUs with P + E = 15 GiB, the cluster has 2 that large");
  CHECK(r.outcome.jobs[1].status == core::JobStatus::kDone);
}

using test::PeerJob;
using test::peer_jobs;

TEST_CASE("Tiresias' own simulator: its dlas and dlas-gpu (thresholds, starvation knob) job by job, on 60_job.csv "
          "and 300 generated jobs, 8 to 64 GPUs") {
  // Tiresias' --scheme=count: a job takes any free GPUs, and placement never changes a run time,
  // as here on whole GPUs. With --dlas-checks tiresias every start and finish is its own; with
  // the default exact checks a gang is demoted when its GPU-time reaches the threshold, sooner
  // than Tiresias looks (cluster/lease_policy.h, DlasChecks): 1-GPU traces and dlas (time as the
  // service) agree either way, dlas-gpu with gangs differs where a gang crosses a threshold.
  const std::string dir = std::string(SALUS_SOURCE_DIR) + "/tests/data/peers/tiresias/";
  struct Case {
    const char* trace;
    std::int32_t gpus;
    const char* spec;
    const char* schedule;  // Tiresias'
    const char* policy;    // ours
    std::vector<core::TimeNs> thresholds;
    double knob;
    bool exact_agrees;  // with the exact checks too
  };
  const std::vector<core::TimeNs> dflt = {3250 * kS, 7200 * kS}, ql = {325 * kS, 720 * kS};
  const std::vector<Case> cases = {
      {"60_job", 8, "n2g4", "dlas-gpu", "dlas-gpu", dflt, 0, true},
      {"60_job", 8, "n2g4", "dlas", "dlas", dflt, 0, true},
      {"60_job", 8, "n2g4", "dlas-gpu-ql325_720", "dlas-gpu", ql, 0, false},
      {"60_job", 8, "n2g4", "dlas-ql325_720", "dlas", ql, 0, true},
      {"60_job", 8, "n2g4", "dlas-gpu-2-ql325_720", "dlas-gpu", ql, 2, false},
      {"60_job", 16, "n4g4", "dlas-gpu-ql325_720", "dlas-gpu", ql, 0, false},
      {"60_job", 16, "n4g4", "dlas-ql325_720", "dlas", ql, 0, true},
      {"60_job", 16, "n4g4", "dlas-gpu-2-ql325_720", "dlas-gpu", ql, 2, false},
      {"60_job", 64, "cluster_spec", "dlas-gpu", "dlas-gpu", dflt, 0, true},
      {"gen300_job", 16, "n4g4", "dlas", "dlas", dflt, 0, true},
      {"gen300_job", 16, "n4g4", "dlas-gpu", "dlas-gpu", dflt, 0, false},
      {"gen300_job", 16, "n4g4", "dlas-gpu-2", "dlas-gpu", dflt, 2, false},
      {"gen300_job", 16, "n4g4", "dlas-gpu-05", "dlas-gpu", dflt, 0.5, false},
      {"gen300_job", 64, "cluster_spec", "dlas", "dlas", dflt, 0, true},
      {"gen300_job", 64, "cluster_spec", "dlas-gpu-2", "dlas-gpu", dflt, 2, false},
      {"gen300_job", 64, "cluster_spec", "dlas-gpu-05", "dlas-gpu", dflt, 0.5, false},
  };
  std::size_t agreed = 0, must_agree = 0, exact_differ = 0;
  for (const Case& c : cases) {
    CAPTURE(c.trace);
    CAPTURE(c.spec);
    CAPTURE(c.schedule);
    const cluster::ClusterSpec spec = cluster::ClusterSpec::uniform(c.gpus, 16 * core::kGiB);
    const run::TraceJobs t = run::load_jobs(dir + c.trace + ".csv", traces::Catalog::default_path(), spec, 1.0);
    const auto peer = peer_jobs(dir + c.trace + "-" + c.spec + "-" + c.schedule + "-count.csv");
    REQUIRE(peer.size() == t.jobs.size());
    for (const cluster::DlasChecks checks : {cluster::DlasChecks::kTiresias, cluster::DlasChecks::kExact}) {
      run::SimConfig cfg;
      cfg.cluster = spec;
      cfg.lease.dlas_thresholds_ns = c.thresholds;
      cfg.lease.dlas_starvation = c.knob;
      cfg.lease.dlas_checks = checks;
      const run::PolicyRun r = run::simulate(t.jobs, c.policy, cfg);
      CHECK(r.preemptive);
      int same = 0;
      for (std::size_t j = 0; j < t.jobs.size(); ++j) {
        const PeerJob& p = peer.at(t.jobs[j].id.str());
        const core::JobState& st = r.outcome.jobs[j];
        same += core::to_seconds(st.first_start_ns) == p.start_s && core::to_seconds(st.finish_ns) == p.end_s;
      }
      if (checks == cluster::DlasChecks::kTiresias || c.exact_agrees) {
        CHECK(same == static_cast<int>(t.jobs.size()));
        ++must_agree;
        agreed += same == static_cast<int>(t.jobs.size()) ? 1 : 0;
      } else {
        exact_differ += same < static_cast<int>(t.jobs.size()) ? 1 : 0;
      }
    }
  }
  CHECK(must_agree == cases.size() + 7);  // every case with Tiresias' checks, 7 with the exact ones too
  CHECK(agreed == must_agree);
  CHECK(exact_differ == cases.size() - 7);  // the exact checks do change dlas-gpu with gangs
}

namespace {

// The reference: time in whole seconds, one step per second, 2D-LAS from its rules. Queues are
// lists; at each second: finishes, arrivals (end of Q0), each runnable job in arrival order
// charged one second of running or waiting, demoted (service >= threshold) or promoted (the
// knob), then GPUs given in queue order to each job that fits, running jobs passed over
// preempted, and each queue's waiting jobs moved behind its running ones. Restart: a job that
// starts again after a preemption first spends `restart` whole seconds without progress, which
// count neither as its service nor as its run time.
struct RefJob {
  std::int64_t arrival, work, gpus;
};
struct RefResult {
  std::int64_t start = -1, finish = -1;
};

std::vector<RefResult> reference(const std::vector<RefJob>& jobs, std::int64_t gpus, bool gpu_time,
                                 const std::vector<std::int64_t>& thresholds, std::int64_t knob, std::int64_t restart) {
  const std::size_t n = jobs.size();
  std::vector<RefResult> out(n);
  std::vector<std::int64_t> left(n), executed(n, 0), total(n, 0), waited(n, 0), overhead(n, 0), queue(n, -1);
  std::vector<bool> running(n, false), ran(n, false), done(n, false), arrived(n, false);
  for (std::size_t j = 0; j < n; ++j) left[j] = jobs[j].work;
  std::vector<std::vector<std::size_t>> queues(thresholds.size() + 1);
  std::vector<std::size_t> runnable;  // arrival order
  std::vector<std::size_t> order(n);
  for (std::size_t j = 0; j < n; ++j) order[j] = j;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return jobs[a].arrival < jobs[b].arrival; });
  auto erase = [](std::vector<std::size_t>& v, std::size_t j) { v.erase(std::find(v.begin(), v.end(), j)); };
  std::size_t finished = 0;
  for (std::int64_t t = 0; finished < n; ++t) {
    REQUIRE(t < 10'000'000);
    if (t > 0) {
      // The second (t-1, t]: progress, and the policy's clocks.
      for (const std::size_t j : runnable) {
        if (running[j]) {
          if (overhead[j] > 0) {
            --overhead[j];  // restoring: no progress, no service
          } else {
            --left[j];
            ++executed[j];
            ++total[j];
          }
        } else if (executed[j] > 0) {
          ++waited[j];
        }
      }
    }
    for (const std::size_t j : std::vector<std::size_t>(runnable)) {
      if (running[j] && left[j] == 0) {
        running[j] = false;
        done[j] = true;
        out[j].finish = t;
        ++finished;
        erase(queues[static_cast<std::size_t>(queue[j])], j);
        erase(runnable, j);
      }
    }
    for (const std::size_t j : order) {
      if (!arrived[j] && jobs[j].arrival == t) {
        arrived[j] = true;
        queue[j] = 0;
        queues[0].push_back(j);
        runnable.push_back(j);
      }
    }
    for (const std::size_t j : runnable) {
      const auto q = static_cast<std::size_t>(queue[j]);
      if (running[j]) {
        const std::int64_t service = executed[j] * (gpu_time ? jobs[j].gpus : 1);
        if (q < thresholds.size() && service >= thresholds[q]) {
          erase(queues[q], j);
          queue[j] = static_cast<std::int64_t>(q) + 1;
          queues[q + 1].push_back(j);
        }
      } else if (knob > 0 && q > 0 && total[j] > 0 && executed[j] > 0 && waited[j] >= executed[j] * knob) {
        executed[j] = 0;
        waited[j] = 0;
        erase(queues[q], j);
        queue[j] = 0;
        queues[0].push_back(j);
      }
    }
    std::int64_t free = gpus;
    std::vector<bool> chosen(n, false);
    for (const auto& q : queues) {
      for (const std::size_t j : q) {
        if (jobs[j].gpus <= free) {
          free -= jobs[j].gpus;
          chosen[j] = true;
        }
      }
    }
    for (const std::size_t j : runnable) {
      if (chosen[j] && !running[j]) {
        if (ran[j]) overhead[j] = restart;
        if (out[j].start < 0) out[j].start = t;
        ran[j] = true;
      }
      running[j] = chosen[j];
    }
    for (auto& q : queues) std::stable_partition(q.begin(), q.end(), [&](std::size_t j) { return running[j]; });
  }
  return out;
}

}  // namespace

TEST_CASE("2D-LAS against a slow reference that steps second by second: random traces with gangs, both services, "
          "thresholds, starvation knob and restart cost") {
  int compared = 0;
  for (std::uint32_t seed = 1; seed <= 30; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    const std::int64_t gpus = std::array<std::int64_t, 3>{2, 4, 8}[static_cast<std::size_t>(pick(0, 2))];
    std::vector<RefJob> ref;
    std::vector<core::JobSpec> jobs;
    std::int64_t t = 0;
    for (int i = 0; i < 40; ++i) {
      t += pick(0, 3) == 0 ? 0 : pick(1, 30);
      static constexpr std::int64_t kWidths[] = {1, 1, 1, 2, 4, 8};
      const std::int64_t w = std::min(gpus, kWidths[pick(0, 5)]);
      const std::int64_t work = pick(1, 120);
      ref.push_back({t, work, w});
      jobs.push_back(job("j" + std::to_string(i), t, work, static_cast<std::int32_t>(w)));
    }
    // Thresholds in multiples of 8 GPU-seconds: a gang's crossing falls on a whole second.
    const std::vector<std::int64_t> thresholds = pick(0, 1) == 0 ? std::vector<std::int64_t>{24}
                                                                   : std::vector<std::int64_t>{16, 64};
    const std::int64_t knob = pick(0, 2);
    const std::int64_t restart = pick(0, 1) * pick(1, 3);
    for (const bool gpu_time : {true, false}) {
      CAPTURE(seed);
      CAPTURE(gpu_time);
      CAPTURE(knob);
      CAPTURE(restart);
      cluster::PreemptiveOptions o = options(static_cast<std::int32_t>(gpus), {}, static_cast<double>(knob));
      for (const std::int64_t th : thresholds) o.lease.dlas_thresholds_ns.push_back(th * kS);
      o.restart_cost_ns = restart * kS;
      // A run that goes on (restarts with no progress) fails here rather than filling memory.
      o.progress_every = 1;
      o.progress = [](const core::Progress& p) { REQUIRE(p.events < 200'000); };
      const cluster::ClusterOutcome r = cluster::run_preemptive(test::trace(jobs), gpu_time ? "dlas-gpu" : "dlas", o);
      const std::vector<RefResult> want = reference(ref, gpus, gpu_time, thresholds, knob, restart);
      for (std::size_t j = 0; j < ref.size(); ++j) {
        CAPTURE(j);
        CHECK(r.outcome.jobs[j].first_start_ns == want[j].start * kS);
        CHECK(r.outcome.jobs[j].finish_ns == want[j].finish * kS);
        ++compared;
      }
    }
  }
  CHECK(compared == 30 * 2 * 40);
}

TEST_CASE("2D-LAS: the short walk (waiting jobs only) decides as walking every job does, on larger random traces") {
  int compared = 0;
  std::int64_t preemptions = 0;
  for (std::uint32_t seed = 1; seed <= 6; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    std::vector<core::JobSpec> jobs;
    std::int64_t t = 0;
    for (int i = 0; i < 1500; ++i) {
      t += pick(0, 20);
      static constexpr std::int32_t kWidths[] = {1, 1, 1, 1, 2, 4, 8, 16};
      jobs.push_back(job("j" + std::to_string(i), t, pick(1, 600), kWidths[pick(0, 7)]));
    }
    jobs = test::trace(jobs);
    cluster::PreemptiveOptions o = options(32, {300 * kS, 2000 * kS}, seed % 3 == 0 ? 0.0 : 1.5);
    o.restart_cost_ns = seed % 2 == 0 ? 7 * kS : 0;
    o.record_runs = true;
    for (const char* policy : {"dlas-gpu", "dlas"}) {
      CAPTURE(seed);
      CAPTURE(policy);
      const cluster::ClusterOutcome fast = cluster::run_preemptive(jobs, policy, o);
      cluster::PreemptiveOptions slow_opts = o;
      slow_opts.lease.dlas_short_walks = false;
      const cluster::ClusterOutcome slow = cluster::run_preemptive(jobs, policy, slow_opts);
      CHECK(fast.job_runs == slow.job_runs);
      CHECK(fast.promotions == slow.promotions);
      for (std::size_t j = 0; j < jobs.size(); ++j) {
        CHECK(fast.outcome.jobs[j].finish_ns == slow.outcome.jobs[j].finish_ns);
        ++compared;
      }
      preemptions += fast.preemptions;
    }
  }
  CHECK(compared == 6 * 2 * 1500);
  CHECK(preemptions > 1000);  // the walks are exercised where they differ in cost
}

TEST_CASE("2D-LAS on GPUs of two sizes: a job chosen by count that no free GPU can hold waits, then starts") {
  // GPU 0 has 8 GiB, GPU 1 16 GiB, one node each. B (4 GiB) arrives first and takes GPU 0, the
  // node with the fewest free GPUs that fit being the lowest-numbered; C (4 GiB, 1 s later) takes
  // GPU 1. A (15 GiB) arrives at 2 s: by count nothing is free. When B ends at 10 s one GPU is free
  // by count but it holds 8 GiB: A is chosen, cannot be placed, and waits until C ends at 20 s.
  cluster::PreemptiveOptions o = options(2, {1000 * kS});
  o.cluster.gpus[0].capacity = 8 * core::kGiB;
  core::JobSpec b = job("B", 0, 10), c = job("C", 1, 19), a = job("A", 2, 5);
  b.ephemeral = c.ephemeral = test::gib(3);
  const std::vector<core::JobSpec> jobs = test::trace({b, c, a});
  const cluster::ClusterOutcome r = cluster::run_preemptive(jobs, "dlas-gpu", o);
  CHECK(r.job_gpus[0][0] == 0);
  CHECK(r.job_gpus[1][0] == 1);
  CHECK(r.job_gpus[2][0] == 1);
  CHECK(r.outcome.jobs[2].first_start_ns == 20 * kS);
  CHECK(r.outcome.jobs[2].finish_ns == 25 * kS);
  CHECK(r.preemptions == 0);
}
