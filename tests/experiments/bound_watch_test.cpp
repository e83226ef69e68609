// gpus_needed's early stop (BoundWatch): at every step of every run, the lower bound is at most
// the average the run ends with when every job ends done or rejected; so a run it stops misses
// the bound, and the fewest N meeting it is the same with and without the stop. Checked on the
// traces gpus_needed's tests use (one whose curve rises) at every step (progress_every = 1).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cluster/cluster_file.h"
#include "cluster/placement.h"
#include "core/units.h"
#include "experiments/bound_watch.h"
#include "experiments/gpus_search.h"
#include "run/load.h"
#include "run/sim_runner.h"
#include "support/programs.h"

namespace {

using salus::core::JobSpec;
using salus::core::TimeNs;
using salus::experiments::BoundKind;
using salus::experiments::BoundMissed;
using salus::experiments::BoundWatch;
using salus::experiments::fewest_gpus;
using salus::run::SimConfig;

struct Config {
  const char* policy;
  bool exclusive;
};
// gpus_needed's five configurations.
constexpr Config kConfigs[] = {{"fifo", true}, {"srtf", true}, {"pack", false}, {"srtf", false}, {"fair", false}};

struct Loaded {
  std::vector<JobSpec> jobs;
  SimConfig cfg;
  double avg_solo_s = 0;
  std::int64_t widest = 1;
};

/// The trace as gpus_needed loads it: gang jobs kept, the model as salus-sim sets it.
Loaded load(const std::string& trace) {
  salus::run::TraceJobs t = salus::run::load_jobs(std::string(SALUS_SOURCE_DIR) + "/" + trace,
                                                  std::string(SALUS_SOURCE_DIR) + "/traces/profiles/catalog.json",
                                                  16 * salus::core::kGiB, 1.0, {}, 0);
  Loaded l;
  l.cfg.capacity = 16 * salus::core::kGiB;
  salus::run::apply_model(salus::run::ModelOptions{}, t, l.cfg);
  l.jobs = std::move(t.jobs);
  for (const JobSpec& s : l.jobs) {
    l.avg_solo_s += static_cast<double>(s.solo_ns()) / 1e9 / static_cast<double>(l.jobs.size());
    l.widest = std::max<std::int64_t>(l.widest, s.gpus);
  }
  return l;
}

SimConfig config_at(const Loaded& l, const Config& c, std::int64_t n) {
  SimConfig k = l.cfg;
  k.placement = salus::cluster::placement_for(c.policy, "");
  if (c.exclusive) k.lanes = salus::core::LaneMode::kExclusive;
  if (n > 1) k.cluster = salus::cluster::ClusterSpec::uniform(static_cast<std::int32_t>(n), l.cfg.capacity);
  return k;
}

/// One N run in full, and its lower bounds at every step: the first time each exceeded each bound.
struct FullRun {
  double avg_jct_s = 0, avg_queuing_s = 0;
  bool all_ended = false;  ///< every job done or rejected
  TimeNs last_finish = 0;
  std::vector<std::pair<TimeNs, double>> jct_bounds, queuing_bounds;  ///< (now, lower bound) at each step
};

FullRun run_full(const Loaded& l, const Config& c, std::int64_t n) {
  SimConfig k = config_at(l, c, n);
  BoundWatch jct(l.jobs, BoundKind::kAvgJct, 0), queuing(l.jobs, BoundKind::kAvgQueuing, 0);
  FullRun f;
  k.progress_every = 1;
  k.progress = [&](const salus::core::Progress& p) {
    f.jct_bounds.emplace_back(p.now, jct.lower_bound_s(p));
    f.queuing_bounds.emplace_back(p.now, queuing.lower_bound_s(p));
  };
  const salus::run::PolicyRun r = salus::run::simulate(l.jobs, c.policy, k);
  f.avg_jct_s = r.metrics.avg_jct_s;
  f.avg_queuing_s = r.metrics.avg_queuing_s;
  f.all_ended = r.metrics.done + r.metrics.rejected == r.metrics.jobs;
  for (const auto& s : r.outcome.jobs) f.last_finish = std::max(f.last_finish, s.finish_ns);
  return f;
}

/// When a watch held to `bound` stops the run (the first step whose lower bound exceeds it).
std::optional<TimeNs> stop_at(const std::vector<std::pair<TimeNs, double>>& bounds, double bound) {
  for (const auto& [now, lb] : bounds) {
    if (lb > bound) return now;
  }
  return std::nullopt;
}

}  // namespace

TEST_CASE("BoundWatch: at every step the lower bound is at most the final average, so a stopped run misses, and "
          "the fewest N meeting each bound is the same with and without the stop") {
  struct Case {
    std::string trace;
    std::int64_t up_to;  // the N tried: widest job .. up_to
  };
  // Tiresias' 60_job.csv head: gang jobs, Salus SRTF's curve rises at 12 -> 13 GPUs
  // (gpus_needed_test); long_trace_100: 1-GPU jobs, one GPU is its one-GPU path.
  const Case cases[] = {{"tests/data/traces/import/tiresias_60_job_head.csv", 20}, {"traces/long_trace_100.csv", 6}};
  int stopped = 0, stopped_hopeless = 0, answers = 0;
  for (const Case& tc : cases) {
    CAPTURE(tc.trace);
    const Loaded l = load(tc.trace);
    for (const Config& c : kConfigs) {
      CAPTURE(c.policy);
      CAPTURE(c.exclusive);
      std::vector<FullRun> runs;
      for (std::int64_t n = l.widest; n <= tc.up_to; ++n) runs.push_back(run_full(l, c, n));
      for (const bool on_queue : {false, true}) {
        CAPTURE(on_queue);
        // Bounds from tight (few N meet) to loose, as multiples of the average solo time.
        for (const double f : on_queue ? std::vector<double>{0.05, 0.2, 0.5, 1.0} : std::vector<double>{1.3, 1.6, 2.0, 3.0}) {
          const double bound = f * l.avg_solo_s;
          CAPTURE(bound);
          auto full_meets = [&](std::int64_t n) {
            const FullRun& r = runs.at(static_cast<std::size_t>(n - l.widest));
            return r.all_ended && (on_queue ? r.avg_queuing_s : r.avg_jct_s) <= bound;
          };
          auto early_meets = [&](std::int64_t n) {
            const FullRun& r = runs.at(static_cast<std::size_t>(n - l.widest));
            const std::optional<TimeNs> t = stop_at(on_queue ? r.queuing_bounds : r.jct_bounds, bound);
            if (!t) return full_meets(n);
            // Stopped: the run misses in full, and the stop comes no later than its end.
            CAPTURE(n);
            CHECK_FALSE(full_meets(n));
            CHECK(*t <= r.last_finish);
            ++stopped;
            if (*t < r.last_finish / 2) ++stopped_hopeless;
            return false;
          };
          const auto full = fewest_gpus(l.widest, tc.up_to, full_meets);
          const auto early = fewest_gpus(l.widest, tc.up_to, early_meets);
          CHECK(full.gpus == early.gpus);
          CHECK(full.evaluated == early.evaluated);
          answers += full.gpus ? 1 : 0;
        }
      }
      // The bound itself: at every step at most what a run ending with every job done ends with.
      for (const FullRun& r : runs) {
        if (!r.all_ended) continue;
        for (const auto& [now, lb] : r.jct_bounds) CHECK(lb <= r.avg_jct_s);
        for (const auto& [now, lb] : r.queuing_bounds) CHECK(lb <= r.avg_queuing_s);
      }
    }
  }
  CHECK(answers > 40);
  CHECK(stopped > 20);          // the stop is exercised, on both traces' runs
  CHECK(stopped_hopeless > 5);  // and some hopeless N are stopped before half their run
}

TEST_CASE("BoundWatch with solo floors: a run that meets the bound is never stopped, a stopped one misses, the "
          "fewest N is the same, and it stops no later than without floors") {
  const std::string traces[] = {"tests/data/traces/import/tiresias_60_job_head.csv", "traces/long_trace_100.csv"};
  const std::int64_t up_to[] = {20, 6};
  int stopped = 0, earlier = 0;
  for (std::size_t t = 0; t < std::size(traces); ++t) {
    CAPTURE(traces[t]);
    const Loaded l = load(traces[t]);
    const std::vector<TimeNs> floors = salus::experiments::solo_floors(l.jobs);
    for (const Config& c : kConfigs) {
      CAPTURE(c.policy);
      CAPTURE(c.exclusive);
      for (const double f : {1.3, 1.6, 2.0, 3.0}) {
        const double bound = f * l.avg_solo_s;
        CAPTURE(bound);
        std::vector<bool> full_meets, early_meets;
        for (std::int64_t n = l.widest; n <= up_to[t]; ++n) {
          CAPTURE(n);
          // In full, with a plain watch and a floored one held to the bound recording their bounds.
          SimConfig k = config_at(l, c, n);
          BoundWatch plain(l.jobs, BoundKind::kAvgJct, bound), floored(l.jobs, BoundKind::kAvgJct, bound, floors);
          std::optional<TimeNs> plain_stop, floored_stop;
          k.progress_every = 1;
          k.progress = [&](const salus::core::Progress& p) {
            if (!plain_stop && plain.lower_bound_s(p) > bound) plain_stop = p.now;
            const double lb = floored.lower_bound_s(p);
            CHECK(lb >= plain.lower_bound_s(p) - 1e-9 * bound);  // floors only raise it
            if (!floored_stop && lb > bound) floored_stop = p.now;
          };
          const salus::run::PolicyRun r = salus::run::simulate(l.jobs, c.policy, k);
          const bool meets = r.metrics.done + r.metrics.rejected == r.metrics.jobs && r.metrics.avg_jct_s <= bound;
          full_meets.push_back(meets);
          early_meets.push_back(meets && !floored_stop);
          if (floored_stop) {
            CHECK_FALSE(meets);
            ++stopped;
            if (!plain_stop || *floored_stop < *plain_stop) ++earlier;
            if (plain_stop) CHECK(*floored_stop <= *plain_stop);
          }
        }
        auto at = [&](const std::vector<bool>& v) {
          return [&v, &l](std::int64_t n) { return static_cast<bool>(v.at(static_cast<std::size_t>(n - l.widest))); };
        };
        CHECK(fewest_gpus(l.widest, up_to[t], at(full_meets)).evaluated ==
              fewest_gpus(l.widest, up_to[t], at(early_meets)).evaluated);
      }
    }
  }
  CHECK(stopped > 20);
  CHECK(earlier > 10);  // the floors stop some runs sooner
}

TEST_CASE("BoundWatch: its hook's BoundMissed leaves the simulator (one GPU and a cluster) at the first step whose "
          "bound exceeds the bound, and a run that meets the bound is not stopped") {
  const Loaded l = load("traces/long_trace_100.csv");
  const double bound = 1.3 * l.avg_solo_s;
  for (const std::int64_t n : {1, 2, 3}) {
    for (const Config& c : kConfigs) {
      CAPTURE(n);
      CAPTURE(c.policy);
      const FullRun full = run_full(l, c, n);
      const std::optional<TimeNs> expected = stop_at(full.jct_bounds, bound);
      SimConfig k = config_at(l, c, n);
      k.progress_every = 1;
      BoundWatch watch(l.jobs, BoundKind::kAvgJct, bound);
      int meter_calls = 0;
      k.progress = salus::experiments::watch_hook(watch, [&](const salus::core::Progress&) { ++meter_calls; });
      std::optional<BoundMissed> missed;
      try {
        const salus::run::PolicyRun r = salus::run::simulate(l.jobs, c.policy, k);
        CHECK(r.metrics.avg_jct_s == full.avg_jct_s);  // the watch changes nothing it does not stop
      } catch (const BoundMissed& m) {
        missed = m;
      }
      CHECK(meter_calls > 0);  // the hook it wraps is still called
      REQUIRE(missed.has_value() == expected.has_value());
      if (!missed) continue;
      CHECK(missed->at_ns == *expected);
      CHECK(missed->lower_bound_s > bound);
      CHECK(missed->lower_bound_s <= full.avg_jct_s);
      CHECK(full.avg_jct_s > bound);
    }
  }
}

TEST_CASE("BoundWatch: the bound from hand-built states (a gang job's merged state, rejection, an event past now)") {
  using salus::core::JobState;
  using salus::core::JobStatus;
  // a: 1 GPU at 0; b: 2 GPUs at 10 s; c: 1 GPU at 20 s, rejected; d: 1 GPU at 100 s (not arrived).
  std::vector<JobSpec> jobs(4);
  const TimeNs s = salus::core::kNsPerS;
  jobs[0].arrival_ns = 0;
  jobs[1].arrival_ns = 10 * s;
  jobs[1].gpus = 2;
  jobs[2].arrival_ns = 20 * s;
  jobs[3].arrival_ns = 100 * s;
  // One state per job, as a cluster's progress hook shows them: b's is its replicas' merged (its
  // first start the later replica's, 60 s, set ahead of now by a plan: counts as now).
  std::vector<JobState> states(4);
  states[0].status = JobStatus::kDone;
  states[0].first_start_ns = 5 * s;
  states[0].finish_ns = 25 * s;
  states[1].status = JobStatus::kAdmitted;
  states[1].first_start_ns = 60 * s;
  states[2].status = JobStatus::kRejected;
  BoundWatch jct(jobs, BoundKind::kAvgJct, 10), queuing(jobs, BoundKind::kAvgQueuing, 10);
  const salus::core::Progress at30{.now = 30 * s, .events = 1, .jobs = states};
  // JCT: a 25, b >= 20 (running), c rejected, d not arrived: 45 s over the 3 jobs not rejected.
  CHECK(jct.lower_bound_s(at30) == doctest::Approx(15.0));
  // Queuing: a 5, b: its start is at 60 s, later than now: >= 20.
  CHECK(queuing.lower_bound_s(at30) == doctest::Approx(25.0 / 3));
  CHECK_THROWS_AS(jct.check(at30), BoundMissed);
  CHECK_NOTHROW(queuing.check(at30));
  // At 70 s: b started at 60 (queued 50), still running (JCT >= 60); d not yet arrived.
  const salus::core::Progress at70{.now = 70 * s, .events = 2, .jobs = states};
  CHECK(jct.lower_bound_s(at70) == doctest::Approx((25.0 + 60) / 3));
  CHECK(queuing.lower_bound_s(at70) == doctest::Approx((5.0 + 50) / 3));
  // A hook shown a state per replica (not per job) is a broken invariant.
  std::vector<JobState> replicas(5);
  BoundWatch wrong(jobs, BoundKind::kAvgJct, 10);
  CHECK_THROWS(wrong.lower_bound_s({.now = 30 * s, .events = 1, .jobs = replicas}));
  // Jobs of one GPU each.
  std::vector<JobSpec> solo(2);
  solo[1].arrival_ns = 4 * s;
  std::vector<JobState> solo_states(2);
  solo_states[0].status = JobStatus::kDone;
  solo_states[0].finish_ns = 3 * s;
  BoundWatch one(solo, BoundKind::kAvgJct, 10);
  CHECK(one.lower_bound_s({.now = 10 * s, .events = 1, .jobs = solo_states}) == doctest::Approx((3.0 + 6) / 2));
}
