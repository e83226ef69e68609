// When a job is bound to a GPU of a cluster (cluster/README.md, "When a job is bound"): only where
// it starts at once, so that while a job waits no GPU that could run it sits empty (work
// conservation across GPUs, gang jobs included). Checked as an invariant on random traces under
// every policy, placement and interference model, and on the hand case of four jobs whose third
// and fourth used to queue behind a long job while a GPU stood idle.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cluster/cluster.h"
#include "cluster/placement.h"
#include "policies/registry.h"
#include "sim/interference.h"
#include "support/jobs.h"

using namespace salus;

namespace {

/// The policy's own lane mode (FIFO exclusive, PACK lanes per Algorithm 1, the others one lane).
cluster::ClusterOptions options(const std::string& policy, std::int32_t gpus, const std::string& placement,
                                const sim::InterferenceModel& model) {
  cluster::ClusterOptions o;
  o.sched.lane_mode = policies::make_policy(policy)->default_lane_mode();
  o.cluster = cluster::ClusterSpec::uniform(gpus, 16 * core::kGiB);
  o.placement = placement;
  o.model = &model;
  return o;
}

/// A GPU is empty over [from, to): no job is bound to it then. A job occupies each of its GPUs
/// from its admission (the bind: jobs are admitted where they are bound) to its finish.
struct Interval {
  core::TimeNs from, to;
};

/// The instants where some GPU's emptiness may change, and per GPU its occupied intervals.
struct Occupancy {
  std::vector<std::vector<Interval>> busy;  // per GPU
  std::vector<core::TimeNs> instants;       // sorted, unique

  bool empty_at(std::size_t g, core::TimeNs t) const {
    return std::none_of(busy[g].begin(), busy[g].end(), [&](const Interval& i) { return i.from <= t && t < i.to; });
  }
  std::int32_t empty_gpus_at(core::TimeNs t) const {
    std::int32_t n = 0;
    for (std::size_t g = 0; g < busy.size(); ++g) n += empty_at(g, t) ? 1 : 0;
    return n;
  }
};

Occupancy occupancy(const std::vector<core::JobSpec>& jobs, const cluster::ClusterOutcome& r, std::int32_t gpus) {
  Occupancy o;
  o.busy.resize(static_cast<std::size_t>(gpus));
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    const core::JobState& s = r.outcome.jobs[j];
    if (s.status != core::JobStatus::kDone) continue;
    for (std::int32_t g : r.job_gpus[j]) o.busy[static_cast<std::size_t>(g)].push_back({s.admitted_ns, s.finish_ns});
    o.instants.push_back(s.admitted_ns);
    o.instants.push_back(s.finish_ns);
    o.instants.push_back(jobs[j].arrival_ns);
  }
  std::sort(o.instants.begin(), o.instants.end());
  o.instants.erase(std::unique(o.instants.begin(), o.instants.end()), o.instants.end());
  return o;
}

/// Every done job of k GPUs found fewer than k empty GPUs at every instant it waited in the
/// cluster queue, [arrival, bind). Emptiness only changes at the instants collected, so checking
/// those inside the wait (and its start) is exhaustive. Returns the number of waits checked.
std::int64_t check_work_conserving(const std::vector<core::JobSpec>& jobs, const cluster::ClusterOutcome& r,
                                   std::int32_t gpus) {
  const Occupancy o = occupancy(jobs, r, gpus);
  std::int64_t waits = 0;
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    const core::JobState& s = r.outcome.jobs[j];
    if (s.status != core::JobStatus::kDone) continue;
    const core::TimeNs arrival = jobs[j].arrival_ns;
    CHECK(s.admitted_ns >= arrival);
    if (s.admitted_ns == arrival) continue;
    ++waits;
    auto t = std::lower_bound(o.instants.begin(), o.instants.end(), arrival);
    for (; t != o.instants.end() && *t < s.admitted_ns; ++t) {
      CAPTURE(j);
      CAPTURE(*t);
      CHECK(o.empty_gpus_at(*t) < jobs[j].gpus);
    }
  }
  return waits;
}

}  // namespace

TEST_CASE("placement: four jobs on two GPUs, C and D start by 20 s under every policy and placement") {
  // A (100 s) and B (10 s) take the two 16 GiB GPUs whole at 0; C arrives at 1 s, D at 2 s, each
  // 10 s and the whole GPU's ephemeral memory. C may not queue behind A while B's GPU is idle
  // from 10 s (what landed main did: C started at 100 s). PACK, FIFO and priority (all at level
  // 0): C runs on B's GPU from 10 s, D from 20 s. FAIR and LAS: a newcomer takes its turn in a
  // lane at once, so C and D share the GPUs from their arrival. SRTF: B, the shorter, is placed first (GPU 0) and A on
  // GPU 1; C, shorter than A, joins A's lane and runs from 1 s (A waits: SRTF's own order), and
  // D, as long as C and B, waits for B's GPU at 10 s.
  const auto jobs = test::trace({test::job("A", 0, 100, test::ms(1000), 0, test::gib(16)),
                                 test::job("B", 0, 10, test::ms(1000), 0, test::gib(16)),
                                 test::job("C", test::ms(1000), 10, test::ms(1000), 0, test::gib(16)),
                                 test::job("D", test::ms(2000), 10, test::ms(1000), 0, test::gib(16))});
  const sim::NoInterference none;
  for (const std::string& policy : policies::policy_names()) {
    for (const std::string& placement : cluster::placement_registry().names()) {
      CAPTURE(policy);
      CAPTURE(placement);
      const cluster::ClusterOutcome r = cluster::run_cluster(jobs, policy, options(policy, 2, placement, none));
      const auto& st = r.outcome.jobs;
      CHECK(st[2].first_start_ns <= test::ms(20'000));
      CHECK(st[3].first_start_ns <= test::ms(20'000));
      if (policy == "srtf") {
        CHECK(r.job_gpus == std::vector<std::vector<std::int32_t>>{{1}, {0}, {1}, {0}});
        CHECK(st[1].finish_ns == test::ms(10'000));
        CHECK(st[2].first_start_ns == test::ms(1000));
        CHECK(st[2].finish_ns == test::ms(11'000));
        CHECK(st[3].admitted_ns == test::ms(10'000));
        CHECK(st[3].finish_ns == test::ms(20'000));
        CHECK(st[0].finish_ns == test::ms(110'000));
        CHECK(check_work_conserving(jobs, r, 2) == 1);
        continue;
      }
      if (policy == "fair" || policy == "las") {
        // Time sharing: a newcomer takes its turn in a lane at once, so nobody waits in the
        // cluster queue; C and D each share a GPU from their arrival.
        CHECK(st[2].admitted_ns == test::ms(1000));
        CHECK(st[3].admitted_ns == test::ms(2000));
        CHECK(check_work_conserving(jobs, r, 2) == 0);
        continue;
      }
      CHECK(r.job_gpus == std::vector<std::vector<std::int32_t>>{{0}, {1}, {1}, {1}});
      CHECK(st[0].finish_ns == test::ms(100'000));
      CHECK(st[1].finish_ns == test::ms(10'000));
      CHECK(st[2].admitted_ns == test::ms(10'000));
      CHECK(st[2].first_start_ns == test::ms(10'000));
      CHECK(st[3].first_start_ns == test::ms(20'000));
      CHECK(st[3].finish_ns == test::ms(30'000));
      CHECK(check_work_conserving(jobs, r, 2) == 2);
    }
  }
}

TEST_CASE("placement: PACK binds a job only into a lane of its own, and a job that would queue in a lane waits in the cluster") {
  // a (E 10 GiB) on GPU 0 and b (E 10 GiB) on GPU 1 at 0; c (E 4 GiB) at 10 ms opens a lane of its
  // own beside either; d (E 10 GiB) at 20 ms fits only into a's or b's lane, where it would wait
  // behind them: it waits in the cluster queue and takes the first GPU that can give it a lane,
  // b's when b ends at 0.5 s (a ends at 1 s).
  const auto jobs = test::trace({test::job("a", 0, 10, test::ms(100), test::mib(500), test::gib(10)),
                                 test::job("b", 0, 5, test::ms(100), test::mib(500), test::gib(10)),
                                 test::job("c", test::ms(10), 5, test::ms(100), test::mib(500), test::gib(4)),
                                 test::job("d", test::ms(20), 5, test::ms(100), test::mib(500), test::gib(10))});
  const sim::NoInterference none;
  for (const std::string& placement : cluster::placement_registry().names()) {
    CAPTURE(placement);
    const cluster::ClusterOutcome r = cluster::run_cluster(jobs, "pack", options("pack", 2, placement, none));
    const auto& st = r.outcome.jobs;
    CHECK(st[2].first_start_ns == test::ms(10));
    CHECK(r.job_gpus[3] == std::vector<std::int32_t>{1});
    CHECK(st[3].admitted_ns == test::ms(500));
    CHECK(st[3].first_start_ns == test::ms(500));
    CHECK(st[3].finish_ns == test::ms(1000));
  }
}

TEST_CASE("placement: SRTF's cluster queue is shortest first, and a shorter job joins a lane it runs first in") {
  // Two 16 GiB GPUs, one lane each. L (10 s) and M (8 s) arrive at 0: the queue is shortest
  // first, so M takes GPU 0 and L GPU 1. At 1 s X (20 s) and S (2 s) arrive, X first in the
  // trace: S is visited first and is shorter than M, so it joins M's lane (first-fit) and runs
  // from 1 s, M waiting (SRTF's own order); X is longer than every lane's job and waits in the
  // cluster queue until a GPU empties: both do at 10 s (M: 8 s of work + S's 2 s), X takes GPU 0.
  const auto jobs = test::trace({test::job("L", 0, 10, test::ms(1000), test::mib(500), test::gib(4)),
                                 test::job("M", 0, 8, test::ms(1000), test::mib(500), test::gib(4)),
                                 test::job("X", test::ms(1000), 20, test::ms(1000), test::mib(500), test::gib(4)),
                                 test::job("S", test::ms(1000), 2, test::ms(1000), test::mib(500), test::gib(4))});
  const sim::NoInterference none;
  const cluster::ClusterOutcome r = cluster::run_cluster(jobs, "srtf", options("srtf", 2, "first-fit", none));
  const auto& st = r.outcome.jobs;
  CHECK(r.job_gpus == std::vector<std::vector<std::int32_t>>{{1}, {0}, {0}, {0}});
  CHECK(st[3].first_start_ns == test::ms(1000));
  CHECK(st[3].finish_ns == test::ms(3000));
  CHECK(st[1].finish_ns == test::ms(10'000));
  CHECK(st[0].finish_ns == test::ms(10'000));
  CHECK(st[2].admitted_ns == test::ms(10'000));
  CHECK(st[2].finish_ns == test::ms(30'000));
  CHECK(check_work_conserving(jobs, r, 2) == 1);
}

TEST_CASE("placement: work conservation on random traces, every policy, placement and interference model") {
  const sim::NoInterference none;
  const sim::UtilisationInterference profiled;
  const sim::InterferenceModel* models[] = {&none, &profiled};
  std::int64_t waits = 0, gang_waits = 0;
  for (std::uint64_t seed = 1; seed <= 16; ++seed) {
    const auto jobs = test::random_jobs(seed, 40, 1, [](core::JobSpec& j, int, auto& pick) {
      j.priority = static_cast<std::int32_t>(pick(0, 2));
      if (pick(0, 3) == 0) j.first_iter_extra_ns = pick(0, 5'000'000);
      if (pick(0, 6) == 0) j.gpus = static_cast<std::int32_t>(pick(2, 3));
      if (pick(0, 4) == 0) j.ephemeral = test::mib(pick(9000, 15000));  // a lane that little else fits beside
    });
    const auto gpus = static_cast<std::int32_t>(2 + seed % 4);
    for (const std::string& policy : policies::policy_names()) {
      for (const std::string& placement : cluster::placement_registry().names()) {
        CAPTURE(seed);
        CAPTURE(policy);
        CAPTURE(placement);
        const cluster::ClusterOutcome r =
            cluster::run_cluster(jobs, policy, options(policy, gpus, placement, *models[seed % 2]));
        const std::int64_t w = check_work_conserving(jobs, r, gpus);
        waits += w;
        for (std::size_t j = 0; j < jobs.size(); ++j) {
          if (jobs[j].gpus > 1 && r.outcome.jobs[j].admitted_ns > jobs[j].arrival_ns) ++gang_waits;
        }
      }
    }
  }
  // Not vacuous: many jobs waited in the cluster queue, gang jobs among them.
  CHECK(waits > 1000);
  CHECK(gang_waits > 100);
  MESSAGE("waits checked: " << waits << ", of gang jobs: " << gang_waits);
}
