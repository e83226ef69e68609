// Heterogeneous clusters (cluster/README.md, "Cluster file"): GPU kinds with memory and relative
// speed, a job's allowed kinds (Alibaba's gpu_spec), Alibaba v2023's node list as a cluster.
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "cluster/cluster.h"
#include "cluster/cluster_file.h"
#include "core/errors.h"
#include "policies/registry.h"
#include "sim/interference.h"
#include "support/jobs.h"
#include "support/temp_files.h"

using namespace salus;

namespace {

/// GPUs of the given kinds, one per node, each kind's memory 16 GiB and its speed as given.
cluster::ClusterSpec kinds_cluster(const std::vector<std::pair<std::string, std::int64_t>>& kinds,
                                   const std::vector<std::int32_t>& gpu_kinds) {
  cluster::ClusterSpec c;
  for (const auto& [name, speed] : kinds) c.kinds.push_back({name, test::gib(16), speed});
  for (std::size_t g = 0; g < gpu_kinds.size(); ++g) {
    const cluster::GpuKind& k = c.kinds[static_cast<std::size_t>(gpu_kinds[g])];
    c.gpus.push_back({k.memory, static_cast<std::int32_t>(g), gpu_kinds[g], k.speed_ppm});
  }
  return c;
}

cluster::ClusterOptions options(const std::string& policy, const sim::InterferenceModel& model,
                                cluster::ClusterSpec spec, const std::string& placement = "first-fit") {
  cluster::ClusterOptions o;
  o.cluster = std::move(spec);
  o.model = &model;
  o.placement = placement;
  o.sched.lane_mode = policies::make_policy(policy)->default_lane_mode();
  return o;
}

std::string load_error(const std::string& text) {
  const std::string path = test::temp_file("kinds_bad.csv", text);
  try {
    cluster::load_cluster_file(path);
  } catch (const core::InputError& e) {
    const std::string what = e.what();
    return what.substr(what.find("kinds_bad.csv"));
  }
  return "no error";
}

}  // namespace

TEST_CASE("GPU kinds: iteration times on a GPU of speed s are iter_ns / s, rounded to the nearest ns") {
  CHECK(cluster::gpu_iter_ns(100, cluster::kSpeedOne) == 100);
  CHECK(cluster::gpu_iter_ns(100, 2'000'000) == 50);
  CHECK(cluster::gpu_iter_ns(3, 2'000'000) == 2);      // 1.5: halves up
  CHECK(cluster::gpu_iter_ns(100, 3'000'000) == 33);   // 33.3
  CHECK(cluster::gpu_iter_ns(200, 3'000'000) == 67);   // 66.7
  CHECK(cluster::gpu_iter_ns(100, 500'000) == 200);
  CHECK(cluster::gpu_iter_ns(1, 1000 * cluster::kSpeedOne) == 1);  // never 0
  CHECK(cluster::gpu_iter_ns(core::kNever / 2, 1) == core::kNever);  // saturates
  CHECK(cluster::format_speed(2'000'000) == "2");
  CHECK(cluster::format_speed(1'250'000) == "1.25");
}

TEST_CASE("GPU kinds: a job runs twice as fast on a speed-2 GPU, and gpu_kinds picks the GPU") {
  const std::unique_ptr<sim::InterferenceModel> none = sim::make_interference("none", nullptr, nullptr, 0.8);
  // GPU 0 slow (speed 1), GPU 1 fast (speed 2). f may run only on fast GPUs; a on any.
  auto f = test::job("f", 0, 10, test::ms(100), test::gib(1), test::gib(1));
  f.set_gpu_kinds("fast");
  const auto jobs = test::trace({f, test::job("a", 0, 10, test::ms(100), test::gib(1), test::gib(1))});
  for (const std::string& policy : policies::policy_names()) {
    CAPTURE(policy);
    const cluster::ClusterOutcome r =
        cluster::run_cluster(jobs, policy, options(policy, *none, kinds_cluster({{"slow", 1'000'000}, {"fast", 2'000'000}}, {0, 1})));
    CHECK(r.job_gpus[0] == std::vector<std::int32_t>{1});
    CHECK(r.outcome.jobs[0].finish_ns == test::ms(500));
    CHECK(r.job_gpus[1] == std::vector<std::int32_t>{0});  // first-fit: the slow GPU, f holds the fast one
    CHECK(r.outcome.jobs[1].finish_ns == test::ms(1000));
  }
  // The same cluster with no kind names (speeds only): gpu_kinds is ignored, f takes GPU 0.
  cluster::ClusterSpec unnamed = kinds_cluster({{"slow", 1'000'000}, {"fast", 2'000'000}}, {0, 1});
  unnamed.kinds.clear();
  for (cluster::GpuSpec& g : unnamed.gpus) g.kind = -1;
  const cluster::ClusterOutcome r = cluster::run_cluster(jobs, "fifo", options("fifo", *none, unnamed));
  CHECK(r.job_gpus[0] == std::vector<std::int32_t>{0});
  CHECK(r.outcome.jobs[0].finish_ns == test::ms(1000));
  CHECK(r.job_gpus[1] == std::vector<std::int32_t>{1});
  CHECK(r.outcome.jobs[1].finish_ns == test::ms(500));
}

TEST_CASE("GPU kinds: a gang across GPUs of different speeds runs at the slowest replica's pace") {
  const std::unique_ptr<sim::InterferenceModel> none = sim::make_interference("none", nullptr, nullptr, 0.8);
  auto g = test::job("g", 0, 10, test::ms(100), test::gib(1), test::gib(1));
  g.gpus = 2;
  const auto jobs = test::trace({g});
  for (const std::string& policy : policies::policy_names()) {
    for (const bool fast : {true, false}) {  // batches and plans on, or every lock-step iteration on its own
      CAPTURE(policy);
      CAPTURE(fast);
      cluster::ClusterOptions mixed = options(policy, *none, kinds_cluster({{"x1", 1'000'000}, {"x2", 2'000'000}}, {1, 0}));
      mixed.tuning.gang_batches = mixed.tuning.plans = fast;
      const cluster::ClusterOutcome r = cluster::run_cluster(jobs, policy, mixed);
      CHECK(r.job_gpus[0] == std::vector<std::int32_t>{0, 1});
      CHECK(r.outcome.jobs[0].finish_ns == test::ms(1000));  // the speed-1 replica's 10 x 100 ms
      CHECK(r.outcome.jobs[0].iterations_done == 10);
      CHECK(r.gang_iterations == 10);
      cluster::ClusterOptions both_fast = options(policy, *none, kinds_cluster({{"x2", 2'000'000}}, {0, 0}));
      both_fast.tuning.gang_batches = both_fast.tuning.plans = fast;
      CHECK(cluster::run_cluster(jobs, policy, both_fast).outcome.jobs[0].finish_ns == test::ms(500));
    }
  }
}

TEST_CASE("GPU kinds: a job's own speed on a kind (Gavel's per-worker throughputs) replaces the kind's") {
  const std::unique_ptr<sim::InterferenceModel> none = sim::make_interference("none", nullptr, nullptr, 0.8);
  // GPU 0 is a k80, GPU 1 a v100, both of speed 1 as kinds. r and s run 4x faster on v100 than
  // on k80 (their own speeds); t has no speed of its own on k80 and runs at the kind's there.
  auto r = test::job("r", 0, 10, test::ms(100), test::gib(1), test::gib(1));
  r.set_gpu_kinds("v100");
  r.set_kind_speeds({{"k80", 250'000}, {"v100", 1'000'000}});
  auto slow = test::job("s", 0, 10, test::ms(100), test::gib(1), test::gib(1));
  slow.set_gpu_kinds("k80");
  slow.set_kind_speeds({{"k80", 250'000}, {"v100", 1'000'000}});
  auto t = test::job("t", test::ms(10'000), 10, test::ms(100), test::gib(1), test::gib(1));
  t.set_gpu_kinds("k80");
  t.set_kind_speeds({{"v100", 2'000'000}});
  const auto jobs = test::trace({r, slow, t});
  for (const std::string& policy : policies::policy_names()) {
    CAPTURE(policy);
    const cluster::ClusterOutcome out =
        cluster::run_cluster(jobs, policy, options(policy, *none, kinds_cluster({{"k80", 1'000'000}, {"v100", 1'000'000}}, {0, 1})));
    CHECK(out.job_gpus[0] == std::vector<std::int32_t>{1});
    CHECK(out.outcome.jobs[0].finish_ns == test::ms(1000));   // 10 x 100 ms on v100
    CHECK(out.job_gpus[1] == std::vector<std::int32_t>{0});
    CHECK(out.job_gpus[2] == std::vector<std::int32_t>{0});
    CHECK(out.outcome.jobs[1].finish_ns == test::ms(4000));   // 10 x 400 ms on k80
    CHECK(out.outcome.jobs[2].finish_ns == test::ms(11'000)); // after 10 s, 10 x 100 ms at k80's speed
  }
  // A kind's speed (--kind-speed) does not override a job's own, and applies to a job without one.
  cluster::ClusterSpec fast_v100 = kinds_cluster({{"k80", 1'000'000}, {"v100", 3'000'000}}, {0, 1});
  auto plain = test::job("p", 0, 10, test::ms(90), test::gib(1), test::gib(1));
  plain.set_gpu_kinds("v100");
  const cluster::ClusterOutcome out =
      cluster::run_cluster(test::trace({r, plain}), "fifo", options("fifo", *none, fast_v100));
  CHECK(out.outcome.jobs[0].finish_ns == test::ms(1000));   // its own 1x
  CHECK(out.outcome.jobs[1].finish_ns == test::ms(1300));   // after r, 10 x 30 ms at the kind's 3x
}

TEST_CASE("GPU kinds: a gang whose replicas' own speeds differ runs at the slowest one's pace") {
  const std::unique_ptr<sim::InterferenceModel> none = sim::make_interference("none", nullptr, nullptr, 0.8);
  auto g = test::job("g", 0, 10, test::ms(100), test::gib(1), test::gib(1));
  g.gpus = 2;
  g.set_kind_speeds({{"a", 500'000}, {"b", 2'000'000}});
  for (const std::string& policy : policies::policy_names()) {
    for (const bool fast : {true, false}) {
      CAPTURE(policy);
      CAPTURE(fast);
      // The two kinds have the same speed as kinds: only the job's own speeds differ.
      cluster::ClusterOptions o = options(policy, *none, kinds_cluster({{"a", 1'000'000}, {"b", 1'000'000}}, {0, 1}));
      o.tuning.gang_batches = o.tuning.plans = fast;
      const cluster::ClusterOutcome out = cluster::run_cluster(test::trace({g}), policy, o);
      CHECK(out.outcome.jobs[0].finish_ns == test::ms(2000));  // 10 x 200 ms on kind a
      CHECK(out.gang_iterations == 10);
      cluster::ClusterOptions both_b = options(policy, *none, kinds_cluster({{"b", 1'000'000}}, {0, 0}));
      both_b.tuning.gang_batches = both_b.tuning.plans = fast;
      CHECK(cluster::run_cluster(test::trace({g}), policy, both_b).outcome.jobs[0].finish_ns == test::ms(500));
    }
  }
}

TEST_CASE("GPU kinds: a gang across speeds runs in batches held to its slowest replica's pace") {
  const std::unique_ptr<sim::InterferenceModel> none = sim::make_interference("none", nullptr, nullptr, 0.8);
  const std::unique_ptr<sim::InterferenceModel> profiled = sim::make_interference("profiled", nullptr, nullptr, 0.8);
  // 1,000 iterations of 10 ms on kinds of speed 1 and 2: 10 s at the slow replica's pace, in a
  // batch (a handful of instants), whether or not a job could start beside the fast replica (its
  // GPU's free memory; a job that did would find its iteration in flight as lock-step has it:
  // SimExecutor::unpad); with the replicas not paced (tuning.pace_replicas off), one instant per
  // iteration and its GPU's own ends. The same end either way.
  const cluster::ClusterSpec spec = kinds_cluster({{"x1", 1'000'000}, {"x2", 2'000'000}}, {0, 1});
  struct Case {
    const sim::InterferenceModel* model;
    core::Bytes ephemeral;
    bool paced;
  };
  for (const Case& c : {Case{none.get(), test::gib(1), true}, Case{profiled.get(), test::gib(15), true},
                        Case{profiled.get(), test::gib(1), true}, Case{profiled.get(), test::gib(1), false}}) {
    auto g = test::job("g", 0, 1000, test::ms(10), test::gib(1), c.ephemeral);
    g.gpus = 2;
    for (const std::string& policy : policies::policy_names()) {
      CAPTURE(policy);
      CAPTURE(c.ephemeral);
      CAPTURE(c.model->ideal());
      CAPTURE(c.paced);
      cluster::ClusterOptions o = options(policy, *c.model, spec);
      o.tuning.pace_replicas = c.paced;
      const cluster::ClusterOutcome out = cluster::run_cluster(test::trace({g}), policy, o);
      CHECK(out.outcome.jobs[0].finish_ns == test::ms(10'000));
      CHECK(out.gang_iterations == 1000);
      if (c.paced) {
        CHECK(out.events < 10);
      } else {
        CHECK(out.events >= 2000);  // each iteration: the fast replica's end, then the slow one's
      }
    }
  }
}

TEST_CASE("GPU kinds: batches, plans and joint plans give the same results on GPUs of mixed speeds") {
  const std::unique_ptr<sim::InterferenceModel> none = sim::make_interference("none", nullptr, nullptr, 0.8);
  const std::unique_ptr<sim::InterferenceModel> profiled = sim::make_interference("profiled", nullptr, nullptr, 0.8);
  std::int64_t compared = 0, gang_iterations = 0;
  // Seeds past 12: every job asks 9-14 GiB of ephemeral memory, so a GPU holding one can admit no
  // other and gangs across speeds run paced batches under the profiled model too.
  for (std::uint64_t seed = 1; seed <= 18; ++seed) {
    const auto jobs = test::random_jobs(seed, 24, 1, [&](core::JobSpec& j, int, auto& pick) {
      if (seed > 12) j.ephemeral = test::gib(pick(9, 14));
      if (pick(0, 3) == 0) j.gpus = static_cast<std::int32_t>(pick(2, 3));
      if (pick(0, 4) == 0) j.set_gpu_kinds(pick(0, 1) == 0 ? "a" : "b|c");
      if (pick(0, 2) == 0) j.set_kind_speeds({{"a", pick(1, 4) * 500'000}, {"c", pick(1, 4) * 250'000}});
    });
    for (const std::string& policy : policies::policy_names()) {
      CAPTURE(seed);
      CAPTURE(policy);
      const sim::InterferenceModel& model = seed % 2 == 0 ? *none : *profiled;
      const cluster::ClusterSpec spec =
          kinds_cluster({{"a", 1'000'000}, {"b", 1'500'000}, {"c", 3'000'000}}, {0, 1, 2, 0, 1, 2});
      cluster::ClusterOptions fast = options(policy, model, spec, seed % 3 == 0 ? "first-fit" : "least-loaded");
      cluster::ClusterOptions slow = fast;
      slow.tuning.plans = slow.tuning.gang_plans = slow.tuning.gang_batches = false;
      const cluster::ClusterOutcome a = cluster::run_cluster(jobs, policy, fast);
      const cluster::ClusterOutcome b = cluster::run_cluster(jobs, policy, slow);
      for (std::size_t j = 0; j < jobs.size(); ++j) {
        CAPTURE(j);
        CHECK(a.outcome.jobs[j].status == b.outcome.jobs[j].status);
        CHECK(a.outcome.jobs[j].finish_ns == b.outcome.jobs[j].finish_ns);
        CHECK(a.outcome.jobs[j].iterations_done == b.outcome.jobs[j].iterations_done);
        CHECK(a.job_gpus[j] == b.job_gpus[j]);
        // Every replica on a GPU of an allowed kind.
        for (const std::int32_t g : a.job_gpus[j]) {
          const std::string& kind = spec.kinds[static_cast<std::size_t>(spec.gpus[static_cast<std::size_t>(g)].kind)].name;
          if (!jobs[j].gpu_kinds().empty()) CHECK(jobs[j].gpu_kinds().find(kind) != std::string::npos);
        }
      }
      CHECK(a.gang_iterations == b.gang_iterations);
      gang_iterations += a.gang_iterations;
      ++compared;
    }
  }
  CHECK(compared == 18 * static_cast<std::int64_t>(policies::policy_names().size()));
  CHECK(gang_iterations > 0);
}

TEST_CASE("GPU kinds: a job whose kinds the cluster lacks, or has too few of, is rejected with the reason") {
  const std::unique_ptr<sim::InterferenceModel> none = sim::make_interference("none", nullptr, nullptr, 0.8);
  auto c = test::job("c", 0, 1, test::ms(100), test::gib(1), test::gib(1));
  c.set_gpu_kinds("C|D");
  auto b3 = test::job("b3", 0, 1, test::ms(100), test::gib(1), test::gib(1));
  b3.set_gpu_kinds("B");
  b3.gpus = 3;
  auto a = test::job("a", 0, 1, test::ms(100), test::gib(1), test::gib(1));
  a.set_gpu_kinds("C|A");
  const auto jobs = test::trace({c, b3, a});
  const cluster::ClusterOutcome r =
      cluster::run_cluster(jobs, "fifo", options("fifo", *none, kinds_cluster({{"A", 1'000'000}, {"B", 1'000'000}}, {1, 0, 1})));
  CHECK(r.outcome.jobs[0].status == core::JobStatus::kRejected);
  CHECK(r.outcome.jobs[0].reason() == "gpu_kinds 'C|D': the cluster has no GPU of those kinds (kinds: A, B)");
  CHECK(r.outcome.jobs[1].status == core::JobStatus::kRejected);
  CHECK(r.outcome.jobs[1].reason() == "needs 3 GPUs of kind B with P + E = 2 GiB free, the cluster has 2 that large");
  CHECK(r.outcome.jobs[2].status == core::JobStatus::kDone);
  CHECK(r.job_gpus[2] == std::vector<std::int32_t>{1});  // the one A GPU
}

TEST_CASE("cluster file: kind and speed columns, and the old layout reads as before") {
  const auto c = cluster::load_cluster_file(test::temp_file(
      "kinds.csv", "kind,nodes,gpus_per_node,gpu_mem,speed\nk80,1,2,12GiB,0.5\nv100,2,1,16GiB,2\nk80,1,1,12GiB,0.5\n"));
  REQUIRE(c.gpus.size() == 5);
  REQUIRE(c.kinds.size() == 2);
  CHECK(c.kinds[0].name == "k80");
  CHECK(c.kinds[0].speed_ppm == 500'000);
  CHECK(c.kinds[1].memory == test::gib(16));
  CHECK(c.gpus[2].kind == 1);
  CHECK(c.gpus[2].speed_ppm == 2'000'000);
  CHECK(c.gpus[4].kind == 0);
  CHECK(c.gpus[4].node == 3);
  CHECK(c.describe() == "5 GPUs in 4 nodes of mixed memory (3 k80 at speed 0.5, 2 v100 at speed 2)");
  const auto s = cluster::load_cluster_file(test::temp_file("speeds.csv", "nodes,gpus_per_node,gpu_mem,speed\n1,2,16GiB,1.5\n"));
  CHECK(s.kinds.empty());
  CHECK(s.gpus[1].speed_ppm == 1'500'000);
  CHECK(s.gpus[1].kind == -1);
  CHECK(s.describe() == "2 GPUs in 1 nodes of 16 GiB at mixed speeds");
  const auto old = cluster::load_cluster_file(test::temp_file("old.csv", "nodes,gpus_per_node,gpu_mem\n2,2,16GiB\n"));
  CHECK(old.kinds.empty());
  CHECK(old.notes.empty());
  CHECK(old.gpus[3].speed_ppm == cluster::kSpeedOne);
  CHECK(old.describe() == "4 GPUs in 2 nodes of 16 GiB");
  CHECK(load_error("kind,nodes,gpus_per_node,gpu_mem\na,1,1,16GiB\na,1,1,32GiB\n") ==
        "kinds_bad.csv:3: kind 'a' was given 16 GiB at speed 1000000 ppm before, here 32 GiB at 1000000 ppm (a kind has "
        "one memory and one speed)");
  CHECK(load_error("nodes,gpus_per_node,gpu_mem,speed\n1,1,16GiB,0\n") ==
        "kinds_bad.csv:2: speed: must be a decimal in (0, 1000] with at most 6 decimals, got '0'");
  CHECK(load_error("nodes,gpus_per_node,gpu_mem,speed\n1,1,16GiB,fast\n") ==
        "kinds_bad.csv:2: speed: must be a decimal in (0, 1000] with at most 6 decimals, got 'fast'");
  CHECK(load_error("kind,nodes,gpus_per_node,gpu_mem\n,1,1,16GiB\n") == "kinds_bad.csv:2: kind: a name is needed (e.g. V100), got ''");
  CHECK(load_error("kind,nodes,gpus_per_node,gpu_mem\na|b,1,1,16GiB\n") ==
        "kinds_bad.csv:2: kind: '|' separates kinds in a job's gpu_spec, got 'a|b'");
}

TEST_CASE("cluster file: Alibaba v2023's node list, one kind per model, nodes with no GPU skipped") {
  const auto c = cluster::load_cluster_file(test::temp_file(
      "openb_node_list_gpu_node.csv",
      "sn,cpu_milli,memory_mib,gpu,model\nopenb-node-0000,64000,262144,2,P100\nopenb-node-0001,96000,786432,8,G2\n"
      "openb-node-0002,32000,131072,0,\nopenb-node-0003,96000,393216,4,V100M32\nopenb-node-0004,64000,262144,1,P100\n"
      "openb-node-0005,96000,786432,8,G3\n"));
  REQUIRE(c.gpus.size() == 23);
  REQUIRE(c.kinds.size() == 4);
  CHECK(c.kinds[0].name == "P100");
  CHECK(c.kinds[0].memory == test::gib(16));
  CHECK(c.kinds[2].name == "V100M32");
  CHECK(c.kinds[2].memory == test::gib(32));
  CHECK(c.kinds[1].memory == cluster::kAlibabaUnknownMemory);
  CHECK(c.gpus[10].kind == 2);
  CHECK(c.gpus[10].node == 2);  // nodes numbered among those with GPUs
  CHECK(c.gpus[14].kind == 0);
  CHECK(c.gpus[14].node == 3);
  CHECK(c.notes == std::vector<std::string>{
                       "cluster: Alibaba v2023 node list: 5 nodes, 23 GPUs, one kind per model (P100 3, G2 8, V100M32 4, "
                       "G3 8), speed 1 for every kind (--kind-speed sets others)",
                       "cluster: GPU models of no published memory (G2, G3): assumed 16 GiB each",
                       "cluster: skipped 1 node with no GPU (gpu 0)"});
  CHECK(cluster::alibaba_model_memory("A10") == test::gib(24));
  CHECK(cluster::alibaba_model_memory("T4") == test::gib(16));
  CHECK(cluster::alibaba_model_memory("V100M16") == test::gib(16));
  CHECK(load_error("sn,cpu_milli,memory_mib,gpu,model\nn0,1,1,two,T4\n") ==
        "kinds_bad.csv:2: gpu: must be an integer in [0, 1024], got 'two'");
  CHECK(load_error("sn,cpu_milli,memory_mib,gpu\nn0,1,1,2\n") ==
        "kinds_bad.csv:1: an Alibaba v2023 node list (header sn, ...) needs columns 'gpu' and 'model'");
}

TEST_CASE("GPU kinds: --kind-speed sets a kind's speed on every GPU of it, with a note") {
  cluster::ClusterSpec c = kinds_cluster({{"T4", cluster::kSpeedOne}, {"V100M32", cluster::kSpeedOne}}, {0, 1, 0});
  cluster::set_kind_speeds(c, "T4=0.5, V100M32=2", "--kind-speed");
  CHECK(c.kinds[0].speed_ppm == 500'000);
  CHECK(c.gpus[0].speed_ppm == 500'000);
  CHECK(c.gpus[2].speed_ppm == 500'000);
  CHECK(c.gpus[1].speed_ppm == 2'000'000);
  CHECK(c.notes.back() == "cluster: kind speeds from --kind-speed: T4 0.5, V100M32 2 (iterations take iter_ns / speed there)");
  const std::unique_ptr<sim::InterferenceModel> none = sim::make_interference("none", nullptr, nullptr, 0.8);
  const auto jobs = test::trace({test::job("a", 0, 4, test::ms(100), test::gib(1), test::gib(1))});
  const cluster::ClusterOutcome r = cluster::run_cluster(jobs, "fifo", options("fifo", *none, c));
  CHECK(r.job_gpus[0] == std::vector<std::int32_t>{0});
  CHECK(r.outcome.jobs[0].finish_ns == test::ms(800));  // 4 x 100 ms at speed 0.5
  auto error = [&](const std::string& spec) {
    cluster::ClusterSpec d = c;
    try {
      cluster::set_kind_speeds(d, spec, "--kind-speed");
    } catch (const core::InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(error("A100=2") == "--kind-speed: unknown kind 'A100' (kinds: T4, V100M32)");
  CHECK(error("T4") == "--kind-speed: expected KIND=SPEED, got 'T4'");
  CHECK(error("T4=-1") == "--kind-speed: speed: must be a decimal in (0, 1000] with at most 6 decimals, got '-1'");
  cluster::ClusterSpec plain = cluster::ClusterSpec::uniform(2, test::gib(16));
  CHECK_THROWS_AS(cluster::set_kind_speeds(plain, "T4=2", "--kind-speed"), core::InputError);
}
