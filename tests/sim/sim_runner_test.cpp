// run/sim_runner: simulate() by policy name, lane mode selection, seeded profile noise,
// and determinism of whole runs. (test_sim links salus_experiments for this file.)
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "core/errors.h"
#include "cluster/cluster_file.h"
#include "run/sim_runner.h"
#include "policies/registry.h"
#include "support/checks.h"
#include "support/jobs.h"

namespace {

using namespace salus::core;
using salus::run::SimConfig;
using salus::run::simulate;
using salus::test::gib;
using salus::test::job;
using salus::test::ms;

SimConfig ideal() {
  SimConfig c;
  c.interference = "none";
  c.switch_cost_ns = 0;
  c.record_timeline = true;
  return c;
}

/// The paper's example and three more jobs of other sizes and utilisations, as a trace.
std::vector<JobSpec> six_jobs() {
  std::vector<JobSpec> jobs = salus::test::paper_example();
  jobs.push_back(job("d", ms(100), 7, ms(33), gib(2), gib(5), 450'000));
  jobs.push_back(job("e", ms(250), 3, ms(71), gib(3), gib(2), 800'000));
  jobs.push_back(job("f", ms(250), 12, ms(9), gib(1), gib(9), 300'000));
  return salus::test::trace(jobs);
}

}  // namespace

TEST_CASE("SimConfig defaults") {
  const SimConfig c;
  CHECK(c.capacity == gib(16));
  CHECK_FALSE(c.lanes.has_value());
  CHECK(c.switch_cost_ns == ms(1));
  CHECK(c.interference == "profiled");
  CHECK(c.seed == 1);
  CHECK(c.profile_noise == 0);
  CHECK_FALSE(c.record_timeline);
}

TEST_CASE("lane_mode_for: the configured mode when the policy supports it, else its default") {
  SimConfig c;
  const auto fifo = salus::policies::make_policy("fifo");
  const auto srtf = salus::policies::make_policy("srtf");
  const auto pack = salus::policies::make_policy("pack");
  CHECK(salus::run::lane_mode_for(*fifo, c) == LaneMode::kExclusive);
  CHECK(salus::run::lane_mode_for(*srtf, c) == LaneMode::kSingle);
  CHECK(salus::run::lane_mode_for(*pack, c) == LaneMode::kAuto);
  c.lanes = LaneMode::kAuto;
  CHECK(salus::run::lane_mode_for(*fifo, c) == LaneMode::kExclusive);  // fifo is always exclusive
  CHECK(salus::run::lane_mode_for(*srtf, c) == LaneMode::kAuto);
  c.lanes = LaneMode::kSingle;
  CHECK(salus::run::lane_mode_for(*pack, c) == LaneMode::kSingle);
}

TEST_CASE("simulate the example on an ideal GPU: the hand-verified finish times") {
  const auto jobs = salus::test::paper_example();
  struct Row {
    const char* policy;
    LaneMode mode;
    std::vector<TimeNs> finish;
  };
  const Row rows[] = {{"fifo", LaneMode::kExclusive, {1'000'000'000, 1'200'000'000, 1'500'000'000}},
                      {"srtf", LaneMode::kSingle, {1'500'000'000, 500'000'000, 800'000'000}},
                      {"pack", LaneMode::kAuto, {1'000'000'000, 450'000'000, 800'000'000}},
                      {"fair", LaneMode::kSingle, {1'500'000'000, 700'000'000, 1'200'000'000}}};
  for (const Row& r : rows) {
    INFO(r.policy);
    const auto run = simulate(jobs, r.policy, ideal());
    CHECK(run.policy == r.policy);
    CHECK(run.lane_mode == r.mode);
    CHECK(salus::test::finishes(run.outcome) == r.finish);
    CHECK(run.metrics.done == 3);
  }
  // FIFO metrics: JCT 1.0, 0.95, 1.0; queuing 0, 0.75, 0.7; makespan 1.5 s.
  const auto fifo = simulate(jobs, "fifo", ideal());
  CHECK(fifo.metrics.makespan_ns == 1'500'000'000);
  CHECK(fifo.metrics.avg_jct_s == doctest::Approx(2.95 / 3).epsilon(1e-12));
  CHECK(fifo.metrics.avg_queuing_s == doctest::Approx(1.45 / 3).epsilon(1e-12));
  CHECK(fifo.metrics.p95_jct_ns == 1'000'000'000);
}

TEST_CASE("simulate with the default config: SRTF pays 1 ms per switch") {
  // One lane: no interference. a 0 - 0.3; b 0.3 + 0.001 + 0.2 = 0.501 (c, arriving at 0.5, cuts
  // b at its boundary 0.501, its end); c 0.501 + 0.001 + 0.3 = 0.802; a 0.802 + 0.001 + 0.7 = 1.503.
  // JCT: 1.503, 0.251, 0.302.
  const auto run = simulate(salus::test::paper_example(), "srtf", SimConfig());
  CHECK(salus::test::finishes(run.outcome) == std::vector<TimeNs>{1'503'000'000, 501'000'000, 802'000'000});
  CHECK(run.outcome.switches == 3);
  CHECK(run.metrics.makespan_ns == 1'503'000'000);
  CHECK(run.metrics.avg_jct_s == doctest::Approx(2.056 / 3).epsilon(1e-12));
  CHECK(run.metrics.p95_jct_ns == 1'503'000'000);
}

TEST_CASE("simulate with the default config: PACK's lanes slow each other down (u = 1 each)") {
  // Default utilisation u = 1: k concurrent lanes each run at 1/k speed (work in ms).
  //   0 - 0.25: a alone: 250 done.
  //   0.25: b starts; 2 lanes. 0.5: c starts: a 250 + 125 = 375, b 125; 3 lanes.
  //   b: 75 left x 3 -> 0.725. At 0.725: a 375 + 75 = 450, c 75; 2 lanes.
  //   c: 225 left x 2 -> 1.175. At 1.175: a 450 + 225 = 675; alone: 325 -> 1.5.
  const auto run = simulate(salus::test::paper_example(), "pack", SimConfig());
  CHECK(salus::test::finishes(run.outcome) == std::vector<TimeNs>{1'500'000'000, 725'000'000, 1'175'000'000});
  CHECK(run.outcome.switches == 0);
  CHECK(run.outcome.max_concurrent_lanes == 3);
}

TEST_CASE("simulate reports unknown names as the user's mistake") {
  const auto jobs = salus::test::paper_example();
  CHECK_THROWS_WITH_AS(simulate(jobs, "lifo", SimConfig()), "unknown policy 'lifo' (valid: fifo, srtf, pack, fair, las, priority); did you mean 'fifo'?",
                       InputError);
  SimConfig c;
  c.interference = "mps";
  CHECK_THROWS_WITH_AS(simulate(jobs, "fifo", c), "unknown interference model 'mps' (valid: none, profiled, pairs, crowds, shares, capacity)",
                       InputError);
}

TEST_CASE("profile noise is seeded, bounded and applied per job") {
  std::vector<JobSpec> jobs;
  for (int i = 0; i < 50; ++i) jobs.push_back(job("j" + std::to_string(i), 0, 1, ms(100) + i, 0, 0));
  const auto none = salus::run::actual_iteration_times(jobs, 0, 7);
  for (std::size_t i = 0; i < jobs.size(); ++i) CHECK(none[i] == jobs[i].iter_ns);
  const auto a = salus::run::actual_iteration_times(jobs, 0.2, 7);
  const auto b = salus::run::actual_iteration_times(jobs, 0.2, 7);
  const auto c = salus::run::actual_iteration_times(jobs, 0.2, 8);
  CHECK(a == b);
  CHECK(a != c);
  int changed = 0;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    CHECK(a[i] >= ms(80));
    CHECK(a[i] <= ms(120) + 50);
    changed += a[i] != jobs[i].iter_ns;
  }
  CHECK(changed > 40);
  // Never below 1 ns.
  const std::vector<JobSpec> tiny = {job("t", 0, 1, 1, 0, 0)};
  CHECK(salus::run::actual_iteration_times(tiny, 0.99, 3)[0] >= 1);
}

TEST_CASE("the same trace and seed simulated twice give identical runs") {
  const std::vector<JobSpec> jobs = six_jobs();
  SimConfig c;
  c.profile_noise = 0.1;
  c.seed = 42;
  c.record_timeline = true;
  for (const std::string& policy : salus::policies::policy_names()) {
    INFO(policy);
    const auto x = simulate(jobs, policy, c);
    const auto y = simulate(jobs, policy, c);
    CHECK(salus::test::segments(x.outcome) == salus::test::segments(y.outcome));
    CHECK(salus::test::finishes(x.outcome) == salus::test::finishes(y.outcome));
    CHECK(x.outcome.lane_moves.size() == y.outcome.lane_moves.size());
    CHECK(x.metrics.makespan_ns == y.metrics.makespan_ns);
    CHECK(x.metrics.p95_jct_ns == y.metrics.p95_jct_ns);
    CHECK(x.metrics.avg_jct_s == y.metrics.avg_jct_s);
    for (const JobState& s : x.outcome.jobs) CHECK(s.status == JobStatus::kDone);
  }
}

// SchedulerOptions::timeline_rows: every row a recording keeps (runs, memory samples, lane moves)
// counts against the budget, on one GPU and summed over a cluster's GPUs; a run that stays within
// it is unchanged, one row fewer stops it with InputError naming the budget.
TEST_CASE("a recording keeps at most its budget of rows, over every GPU") {
  const std::vector<JobSpec> jobs = six_jobs();
  auto stored = [](const salus::run::PolicyRun& r) {
    std::size_t n = r.outcome.segments.size() + r.outcome.memory.size() + r.outcome.lane_moves.size();
    for (const Timeline& t : r.gpu_timelines) n += t.segments.size() + t.memory.size() + t.lane_moves.size();
    return static_cast<std::int64_t>(n);
  };
  int checked = 0;
  for (const std::string& policy : salus::policies::policy_names()) {
    for (const int gpus : {1, 2}) {
      for (const bool plans : {false, true}) {
        INFO(policy << ", " << gpus << " GPUs, plans " << plans);
        SimConfig c = ideal();
        c.timeline_plans = plans;
        if (gpus > 1) c.cluster = salus::cluster::ClusterSpec::uniform(gpus, c.capacity);
        auto budget = [&](std::int64_t limit) {
          c.timeline_rows = std::make_shared<RowBudget>();
          c.timeline_rows->limit = limit;
          c.timeline_rows->what = "W";
          c.timeline_rows->advice = "A";
          return c.timeline_rows;
        };
        const auto all = budget(std::int64_t{1} << 40);
        const auto first = simulate(jobs, policy, c);
        const std::int64_t kept = all->kept;
        CHECK(kept > 0);
        // A cluster's plans may be taken back at an instant and their memory sample with them.
        if (gpus == 1) CHECK(kept == stored(first));
        if (gpus > 1) CHECK(kept >= stored(first));
        const auto exact = budget(kept);
        const auto again = simulate(jobs, policy, c);
        CHECK(exact->kept == kept);
        CHECK(salus::test::segments(again.outcome) == salus::test::segments(first.outcome));
        CHECK(stored(again) == stored(first));
        budget(kept - 1);
        CHECK_THROWS_AS(simulate(jobs, policy, c), InputError);
        try {
          simulate(jobs, policy, c);
        } catch (const InputError& e) {
          const std::string m = e.what();
          const std::string head = "W: the run kept more than " + std::to_string(kept - 1) + " rows for its files";
          CHECK(m.substr(0, head.size()) == head);
          CHECK(m.find(" s of simulated time; A") != std::string::npos);
        }
        ++checked;
      }
    }
  }
  CHECK(checked == 24);
}
