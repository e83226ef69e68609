// The cluster (cluster/): one GPU gives exactly run_schedule's results; placement policies and
// gang jobs on hand-computed cases; the cluster file's errors.
#include <doctest/doctest.h>

#include <limits>
#include <random>
#include <string>
#include <vector>

#include "cluster/cluster.h"
#include "cluster/cluster_file.h"
#include "cluster/placement.h"
#include "core/errors.h"
#include "core/text_input.h"
#include "core/summary.h"
#include "run/cli.h"
#include "run/output.h"
#include "experiments/paper_experiments.h"
#include "traces/catalog.h"
#include "run/sim_runner.h"
#include "policies/registry.h"
#include "support/jobs.h"
#include "support/temp_files.h"
#include "sim/interference.h"
#include "sim/sim_executor.h"

using namespace salus;

namespace {

std::vector<core::JobSpec> random_trace(std::uint64_t seed, int n) {
  return test::random_jobs(seed, n, 1, [](core::JobSpec& j, int, auto& pick) {
    j.priority = static_cast<std::int32_t>(pick(0, 2));
    if (pick(0, 3) == 0) j.first_iter_extra_ns = pick(0, 5'000'000);
    if (pick(0, 9) == 0) j.persistent = test::gib(17);  // rejected: larger than the GPU
  });
}

std::string timeline_text(const core::ScheduleOutcome& o) {
  std::string s;
  for (const core::Segment& g : o.segments) {
    s += std::to_string(g.lane) + " " + std::to_string(g.job) + " " + std::to_string(g.start_ns) + " " +
         std::to_string(g.end_ns) + " " + std::to_string(g.iterations) + " " + std::to_string(g.switch_ns) + "\n";
  }
  for (const core::MemorySample& m : o.memory) {
    s += std::to_string(m.time_ns) + " " + std::to_string(m.persistent) + " " + std::to_string(m.lanes_reserved) + " " +
         std::to_string(m.ephemeral_active) + " " + std::to_string(m.lanes) + "\n";
  }
  for (const core::LaneMove& m : o.lane_moves) s += test::to_string(m) + "\n";
  return s + "end " + std::to_string(o.end_ns) + "\n";
}

run::SimConfig cluster_config(std::int32_t gpus, const std::string& placement, std::string interference = "none") {
  run::SimConfig cfg;
  cfg.interference = std::move(interference);
  cfg.switch_cost_ns = 0;
  cfg.cluster = cluster::ClusterSpec::uniform(gpus, 16 * core::kGiB);
  cfg.placement = placement;
  return cfg;
}

}  // namespace

TEST_CASE("one GPU: the cluster path gives run_schedule's summary and timelines byte for byte") {
  int compared = 0;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    const auto jobs = random_trace(seed, 5 + static_cast<int>(seed % 25));
    run::SimConfig cfg;
    cfg.interference = seed % 3 == 0 ? "none" : "profiled";
    cfg.switch_cost_ns = seed % 2 == 0 ? core::kNsPerMs : 0;
    cfg.profile_noise = seed % 4 == 0 ? 0.1 : 0;
    cfg.paging = seed % 5 == 0;
    cfg.record_timeline = true;
    if (seed % 7 == 0) cfg.lanes = core::LaneMode::kAuto;
    for (const std::string& policy : policies::policy_names()) {
      run::SimConfig one = cfg;
      one.cluster = cluster::ClusterSpec::uniform(1, cfg.capacity);
      one.placement = cluster::placement_registry().names()[seed % 4];
      const run::PolicyRun a = run::simulate(jobs, policy, cfg);
      const run::PolicyRun b = run::simulate(jobs, policy, one);
      CHECK(b.cluster);
      const std::string ja = run::result_json(jobs, a).dump(2);
      nlohmann::json rb = run::result_json(jobs, b);
      rb.erase("cluster");  // the cluster's own member; the rest is the one-GPU schema
      const std::string jb = rb.dump(2);
      INFO("seed " << seed << ", policy " << policy);
      REQUIRE(ja == jb);
      REQUIRE(timeline_text(a.outcome) == timeline_text(b.outcome));
      CHECK(a.outcome.dispatches == b.outcome.dispatches);
      CHECK(a.outcome.page_outs == b.outcome.page_outs);
      ++compared;
      if (a.metrics.done > 0) CHECK(!a.outcome.segments.empty());
    }
  }
  CHECK(compared == 40 * static_cast<int>(policies::policy_names().size()));
}

TEST_CASE("two GPUs, fifo, first-fit: a job that fits nowhere waits in the cluster queue until a GPU frees") {
  // a (1.0 s) and b (0.2 s) take GPUs 0 and 1 at 0; c arrives at 0.1 s and waits for b's GPU.
  const auto jobs = test::trace({test::job("a", 0, 10, test::ms(100), test::mib(1000), test::mib(4000)),
                                 test::job("b", 0, 2, test::ms(100), test::mib(1000), test::mib(4000)),
                                 test::job("c", test::ms(100), 3, test::ms(100), test::mib(1000), test::mib(4000))});
  const run::PolicyRun r = run::simulate(jobs, "fifo", cluster_config(2, "first-fit"));
  CHECK(r.job_gpus == std::vector<std::vector<std::int32_t>>{{0}, {1}, {1}});
  CHECK(r.outcome.jobs[0].finish_ns == test::ms(1000));
  CHECK(r.outcome.jobs[1].finish_ns == test::ms(200));
  CHECK(r.outcome.jobs[2].first_start_ns == test::ms(200));
  CHECK(r.outcome.jobs[2].finish_ns == test::ms(500));
  // GPUs busy: 2 from 0, 1 from 1.0 s (c ended at 0.5 s on GPU 1... a ends at 1.0 s), 0 at the end.
  const std::vector<cluster::BusySample> busy{{0, 2}, {test::ms(500), 1}, {test::ms(1000), 0}};
  CHECK(r.gpus_busy == busy);
}

TEST_CASE("placement policies choose as documented (pack, two GPUs)") {
  // a (P 1000, E 8000 MiB) goes to GPU 0; b (P 1000, E 1000 MiB) arrives at 10 ms: both GPUs
  // admit it. first-fit and best-fit (GPU 0 has less left) put it beside a; least-loaded on the
  // empty GPU 1; util-pack beside a while u_a + u_b <= 1, else on the least utilised GPU.
  auto make = [](std::int32_t util_ppm) {
    return test::trace({test::job("a", 0, 10, test::ms(100), test::mib(1000), test::mib(8000), util_ppm),
                        test::job("b", test::ms(10), 2, test::ms(100), test::mib(1000), test::mib(1000), util_ppm)});
  };
  auto gpu_of_b = [&](const std::string& placement, std::int32_t util_ppm) {
    const run::PolicyRun r = run::simulate(make(util_ppm), "pack", cluster_config(2, placement));
    REQUIRE(r.job_gpus.size() == 2);
    CHECK(r.job_gpus[0] == std::vector<std::int32_t>{0});
    return r.job_gpus[1].at(0);
  };
  CHECK(gpu_of_b("first-fit", 500'000) == 0);
  CHECK(gpu_of_b("best-fit", 500'000) == 0);
  CHECK(gpu_of_b("least-loaded", 500'000) == 1);
  CHECK(gpu_of_b("util-pack", 500'000) == 0);
  CHECK(gpu_of_b("util-pack", 600'000) == 1);
  CHECK_THROWS_WITH_AS(run::simulate(make(500'000), "pack", cluster_config(2, "random")),
                       "unknown placement 'random' (valid: first-fit, best-fit, least-loaded, util-pack)",
                       core::InputError);
}

TEST_CASE("gang job: replicas wait for k GPUs, and an iteration ends with the slowest replica") {
  SUBCASE("fifo: the 2-GPU job waits until both GPUs are free") {
    auto g = test::job("g", 0, 3, test::ms(100), test::mib(1000), test::mib(1000));
    g.gpus = 2;
    const auto jobs = test::trace({test::job("s", 0, 5, test::ms(100), test::mib(1000), test::mib(1000)), g});
    const run::PolicyRun r = run::simulate(jobs, "fifo", cluster_config(2, "first-fit"));
    CHECK(r.job_gpus[1] == std::vector<std::int32_t>{0, 1});
    CHECK(r.outcome.jobs[1].first_start_ns == test::ms(500));
    CHECK(r.outcome.jobs[1].finish_ns == test::ms(800));
    CHECK(r.outcome.jobs[1].iterations_done == 3);
    CHECK(r.outcome.jobs[1].status == core::JobStatus::kDone);
  }
  SUBCASE("pack, profiled: the replica sharing GPU 0 with s runs at half speed, so every lock-step iteration takes 200 ms") {
    auto g = test::job("g", 0, 3, test::ms(100), test::mib(1000), test::mib(1000));
    g.gpus = 2;
    const auto jobs = test::trace({test::job("s", 0, 100, test::ms(100), test::mib(1000), test::mib(1000)), g});
    const run::PolicyRun r = run::simulate(jobs, "pack", cluster_config(2, "first-fit", "profiled"));
    CHECK(r.job_gpus[1] == std::vector<std::int32_t>{0, 1});
    CHECK(r.outcome.jobs[1].finish_ns == test::ms(600));
    // s ran at half speed while g's replica ran beside it (0.6 s: 3 iterations), then alone (97).
    CHECK(r.outcome.jobs[0].finish_ns == test::ms(600) + 97 * test::ms(100));
  }
  SUBCASE("srtf: GPU 0 runs the shorter s first; g's replica on GPU 1 is held until GPU 0 chooses g") {
    auto g = test::job("g", 0, 5, test::ms(100), test::mib(1000), test::mib(1000));
    g.gpus = 2;
    const auto jobs = test::trace({test::job("s", 0, 2, test::ms(100), test::mib(1000), test::mib(1000)), g});
    const run::PolicyRun r = run::simulate(jobs, "srtf", cluster_config(2, "first-fit"));
    CHECK(r.job_gpus[1] == std::vector<std::int32_t>{0, 1});
    CHECK(r.outcome.jobs[0].finish_ns == test::ms(200));
    CHECK(r.outcome.jobs[1].first_start_ns == test::ms(200));
    CHECK(r.outcome.jobs[1].finish_ns == test::ms(700));
  }
  SUBCASE("more GPUs than the cluster has: rejected with the reason") {
    auto g = test::job("g", 0, 3, test::ms(100), test::mib(1000), test::mib(1000));
    g.gpus = 3;
    const run::PolicyRun r = run::simulate(test::trace({g}), "fifo", cluster_config(2, "first-fit"));
    CHECK(r.outcome.jobs[0].status == core::JobStatus::kRejected);
    CHECK(r.outcome.jobs[0].reason() == "needs 3 GPUs with P + E = 1.95 GiB free, the cluster has 2 that large");
  }
  SUBCASE("a width no cluster holds: rejected without a copy per GPU asked, the others run (every policy)") {
    // 2^31 - 1 replicas of 224 bytes would be 480 GB: the run ends only if none is made.
    auto g = test::job("g", 0, 3, test::ms(100), test::mib(1000), test::mib(1000));
    g.gpus = std::numeric_limits<std::int32_t>::max();
    auto two = test::job("two", 0, 2, test::ms(100), test::mib(1000), test::mib(1000));
    two.gpus = 2;
    const auto jobs = test::trace({g, two, test::job("one", test::ms(50), 2, test::ms(100), test::mib(1000), test::mib(1000))});
    for (const std::string& policy : policies::policy_names()) {
      INFO(policy);
      const run::PolicyRun r = run::simulate(jobs, policy, cluster_config(2, "first-fit"));
      CHECK(r.outcome.jobs[0].status == core::JobStatus::kRejected);
      CHECK(r.outcome.jobs[0].reason() ==
            "needs 2147483647 GPUs with P + E = 1.95 GiB free, the cluster has 2 that large");
      CHECK(r.job_gpus[0].empty());
      CHECK(r.outcome.jobs[1].status == core::JobStatus::kDone);
      CHECK(r.job_gpus[1] == std::vector<std::int32_t>{0, 1});
      CHECK(r.outcome.jobs[2].status == core::JobStatus::kDone);
    }
  }
}

TEST_CASE("random traces on 1 to 5 GPUs: every policy and placement finishes every admissible job") {
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    auto jobs = random_trace(seed, 30);
    std::mt19937_64 rng(seed);
    for (auto& j : jobs) j.gpus = rng() % 5 == 0 ? 2 : 1;
    for (const std::string& policy : policies::policy_names()) {
      for (const std::string& placement : cluster::placement_registry().names()) {
        run::SimConfig cfg = cluster_config(1 + static_cast<std::int32_t>(seed % 5), placement, "profiled");
        const run::PolicyRun r = run::simulate(jobs, policy, cfg);
        INFO("seed " << seed << " " << policy << " " << placement);
        CHECK(r.metrics.done + r.metrics.rejected == static_cast<std::int64_t>(jobs.size()));
        for (std::size_t i = 0; i < jobs.size(); ++i) {
          if (r.outcome.jobs[i].status != core::JobStatus::kDone) continue;
          CHECK(r.job_gpus[i].size() == static_cast<std::size_t>(jobs[i].gpus));
          CHECK(r.outcome.jobs[i].iterations_done == jobs[i].iterations);
        }
        CHECK(r.gpus_busy.back().gpus == 0);
      }
    }
  }
}

TEST_CASE("cluster file: groups of nodes, and bad input named by file:line") {
  const auto c = cluster::load_cluster_file(
      test::temp_file("c.csv", "# two kinds of node\nnodes,gpus_per_node,gpu_mem\n2,4,16GiB\n\n1,2,80GB\n"));
  REQUIRE(c.gpus.size() == 10);
  CHECK(c.gpus[3].node == 0);
  CHECK(c.gpus[4].node == 1);
  CHECK(c.gpus[9].capacity == 80'000'000'000);
  CHECK(c.gpus[9].node == 2);
  CHECK(c.describe() == "10 GPUs in 3 nodes of mixed memory");
  auto error = [](const std::string& text) {
    const std::string path = test::temp_file("bad.csv", text);
    try {
      cluster::load_cluster_file(path);
    } catch (const core::InputError& e) {
      const std::string what = e.what();
      return what.substr(what.find("bad.csv"));
    }
    return std::string("no error");
  };
  CHECK(error("nodes,gpus,gpu_mem\n") == "bad.csv:1: unknown column 'gpus' (valid: nodes, gpus_per_node, gpu_mem, kind, speed; or an Alibaba v2023 "
                                               "node list: sn, ..., gpu, model)");
  CHECK(error("nodes,gpus_per_node\n") == "bad.csv:1: missing column 'gpu_mem' (the header is nodes,gpus_per_node,gpu_mem)");
  CHECK(error("nodes,gpus_per_node,gpu_mem\n1,8,16\n") == "bad.csv:2: gpu_mem: needs a unit (e.g. 16GiB, 80GB), got '16'");
  CHECK(error("nodes,gpus_per_node,gpu_mem\n0,8,16GiB\n") ==
        "bad.csv:2: nodes: must be an integer in [1, 1000000], got '0'");
  CHECK(error("nodes,gpus_per_node,gpu_mem\n1,8\n") == "bad.csv:2: expected 3 fields, got 2");
  CHECK(error("# nothing\n") == "bad.csv:1: no header (nodes,gpus_per_node,gpu_mem)");
  CHECK(error("nodes,gpus_per_node,gpu_mem\n") == "bad.csv:1: no GPUs (no rows after the header)");
  // A cell past the bound on fields (core::kMaxFieldBytes), an Alibaba node list's too: reading
  // stops there, with the cell's line and column.
  const std::string big(core::kMaxFieldBytes + 1, 'x');
  CHECK(error("nodes,gpus_per_node,gpu_mem\n1,8," + big + "\r\n") ==
        "bad.csv:2:5: a field of 4097 bytes, more than the 4096 bytes a field may have (is this the right file?)");
  CHECK(error("sn,cpu_milli,memory_mib,gpu,model\nn1,1000," + big + ",8,V100\n") ==
        "bad.csv:2:9: a field of 4097 bytes, more than the 4096 bytes a field may have (is this the right file?)");
}

// A GPU the cluster has not used yet answers the placement without a Scheduler (cluster_model.h,
// Cluster::fresh_fits): a job gets a lane of its own there exactly when its aligned P + E fits the
// aligned capacity. That is what a fresh Scheduler answers, in every lane mode and lane cap.
TEST_CASE("cluster: an unused GPU's answer (P + E fits, aligned) is a fresh Scheduler's admit_kind") {
  const auto none = sim::make_interference("none", nullptr, nullptr, 0.8);
  std::mt19937_64 rng(7);
  std::int64_t yes = 0, no = 0;
  for (int i = 0; i < 2000; ++i) {
    core::SchedulerOptions so;
    so.capacity = std::uniform_int_distribution<core::Bytes>(1, 64 * 1024)(rng) * 1000 + 7;
    so.lane_mode = std::array{core::LaneMode::kAuto, core::LaneMode::kSingle, core::LaneMode::kExclusive}[i % 3];
    so.max_lanes = i % 5 == 0 ? 1 : 0;
    const core::Bytes p = std::uniform_int_distribution<core::Bytes>(0, so.capacity)(rng);
    const core::Bytes e = std::uniform_int_distribution<core::Bytes>(0, so.capacity)(rng);
    const auto l = policies::make_policy(std::array{"pack", "fair", "fifo"}[i % 3]);
    sim::SimExecutor exec({}, *none);
    const core::Scheduler sched({}, {}, *l, exec, so, core::Scheduler::JobCheck::kCheckedByDriver);
    const auto up = [&](core::Bytes b) { return (b + so.alignment - 1) / so.alignment * so.alignment; };
    const bool fits = up(p) + up(e) <= so.capacity / so.alignment * so.alignment;
    CAPTURE(so.capacity);
    CAPTURE(p);
    CAPTURE(e);
    CHECK(sched.admit_kind(p, e) == (fits ? core::Scheduler::AdmitKind::kNewLane : core::Scheduler::AdmitKind::kNo));
    (fits ? yes : no) += 1;
  }
  CHECK(yes > 500);
  CHECK(no > 500);
}
