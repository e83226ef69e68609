// The cluster path's speed: a production-style trace on a cluster of N GPUs, offered load about
// 0.9 per GPU, per policy and placement. Jobs per second of wall time.
//
//   ./build/tests/bench/cluster_bench --benchmark_counters_tabular=true
//
// The trace is salus-trace's generator (the shipped catalog) with the mean inter-arrival time
// scaled to the cluster: 0.3 s for 1,000 GPUs, as in docs/performance.md, "A cluster: 100k jobs on 1,000 GPUs".
//
// BM_ClusterGangs: gang jobs in the shape of Gavel's physical_cluster traces (96 jobs on 8 GPUs,
// a third needing 2 or 4 GPUs, thousands to hundreds of thousands of iterations each), with
// their lock-step runs batched (/1, ClusterOptions::gang_batches) or one iteration at a time (/0).
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "cluster/cluster.h"
#include "run/output.h"
#include "run/sim_runner.h"
#include "policies/registry.h"
#include "sim/interference.h"
#include "traces/catalog.h"
#include "traces/generator.h"
#include "traces/trace.h"

namespace {

using namespace salus;

const std::vector<core::JobSpec>& trace(int jobs, int gpus) {
  static std::map<std::pair<int, int>, std::vector<core::JobSpec>> cache;
  auto it = cache.find({jobs, gpus});
  if (it != cache.end()) return it->second;
  const traces::Catalog catalog = traces::Catalog::load(traces::Catalog::default_path());
  traces::GeneratorOptions opt;
  opt.jobs = jobs;
  opt.seed = 1;
  opt.mean_interarrival_s = 300.0 / gpus;
  const std::string path = (std::filesystem::temp_directory_path() / "salus_cluster_bench.csv").string();
  run::write_text_file(path, traces::to_native_csv(traces::generate_trace(catalog, opt), "cluster_bench"));
  const traces::Trace t = traces::load_trace(path, catalog);
  std::filesystem::remove(path);
  return cache.emplace(std::pair{jobs, gpus}, traces::jobs_for_capacity(t, 16 * core::kGiB)).first->second;
}

void BM_Cluster(benchmark::State& state, const std::string& policy, const std::string& placement) {
  const int jobs = static_cast<int>(state.range(0));
  const int gpus = static_cast<int>(state.range(1));
  const auto& specs = trace(jobs, gpus);
  run::SimConfig cfg;
  cfg.interference = "profiled";
  cfg.cluster = cluster::ClusterSpec::uniform(gpus, cfg.capacity);
  cfg.placement = placement;
  std::int64_t plans = 0, planned = 0;
  for (auto _ : state) {
    const run::PolicyRun r = run::simulate(specs, policy, cfg);
    benchmark::DoNotOptimize(r.metrics.avg_jct_s);
    plans = r.outcome.plans;
    planned = r.outcome.plan_closed_form;
  }
  // FAIR and LAS: rotations run in one go by the GPUs (Policy::plan), and of their iterations
  // those the simulator counted in closed form.
  state.counters["plans"] = static_cast<double>(plans);
  state.counters["closed_form"] = static_cast<double>(planned);
  state.counters["jobs/s"] = benchmark::Counter(static_cast<double>(jobs) * static_cast<double>(state.iterations()),
                                                benchmark::Counter::kIsRate);
}

/// 96 jobs arriving over ~14 h (exponential gaps, mean 9 min) on 8 GPUs of 16 GiB: 2/3 need one
/// GPU, 1/6 two and 1/6 four; iterations log-uniform in [2k, 200k] of 20-300 ms (the gang jobs'
/// lock-step iterations: counter gang_iterations, 1.41 M); P 0.5-2 GiB, E 1-6 GiB, u 0.3-1.
const std::vector<core::JobSpec>& gang_trace() {
  static const std::vector<core::JobSpec> jobs = [] {
    std::mt19937_64 rng(27);
    auto uniform = [&](double lo, double hi) { return lo + (hi - lo) * std::uniform_real_distribution<double>(0, 1)(rng); };
    std::vector<core::JobSpec> out;
    double t = 0;
    for (int i = 0; i < 96; ++i) {
      core::JobSpec j;
      j.id = "g" + std::to_string(i);
      j.trace_order = i;
      j.arrival_ns = static_cast<core::TimeNs>(t * 1e9);
      t += std::exponential_distribution<double>(1.0 / 540)(rng);
      j.iterations = static_cast<std::int64_t>(std::exp(uniform(std::log(2e3), std::log(2e5))));
      j.iter_ns = static_cast<core::TimeNs>(uniform(20, 300) * 1e6);
      j.persistent = static_cast<core::Bytes>(uniform(0.5, 2) * static_cast<double>(core::kGiB));
      j.ephemeral = static_cast<core::Bytes>(uniform(1, 6) * static_cast<double>(core::kGiB));
      j.gpu_util_ppm = static_cast<std::int32_t>(uniform(0.3, 1) * 1e6);
      const int size = static_cast<int>(rng() % 6);
      j.gpus = size < 4 ? 1 : size == 4 ? 2 : 4;
      out.push_back(std::move(j));
    }
    return out;
  }();
  return jobs;
}

void BM_ClusterGangs(benchmark::State& state, const std::string& policy) {
  const auto& jobs = gang_trace();
  const std::unique_ptr<sim::InterferenceModel> model = sim::make_interference("profiled");
  cluster::ClusterOptions opts;
  opts.cluster = cluster::ClusterSpec::uniform(8, 16 * core::kGiB);
  opts.model = model.get();
  opts.switch_cost_ns = core::kNsPerMs;
  opts.sched.lane_mode = policies::make_policy(policy)->default_lane_mode();
  opts.tuning.gang_batches = state.range(0) != 0;
  std::int64_t gang_iterations = 0, events = 0;
  for (auto _ : state) {
    const cluster::ClusterOutcome r = cluster::run_cluster(jobs, policy, opts);
    benchmark::DoNotOptimize(r.outcome.end_ns);
    gang_iterations = r.gang_iterations;
    events = r.events;
  }
  state.counters["gang_iterations"] = static_cast<double>(gang_iterations);
  state.counters["instants"] = static_cast<double>(events);
}

}  // namespace

BENCHMARK_CAPTURE(BM_Cluster, fifo_first_fit, std::string("fifo"), std::string("first-fit"))
    ->Args({10000, 100})->Args({100000, 1000})->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_Cluster, srtf_least_loaded, std::string("srtf"), std::string("least-loaded"))
    ->Args({10000, 100})->Args({100000, 1000})->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_Cluster, pack_least_loaded, std::string("pack"), std::string("least-loaded"))
    ->Args({10000, 100})->Args({100000, 1000})->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_Cluster, fair_least_loaded, std::string("fair"), std::string("least-loaded"))
    ->Args({10000, 100})->Args({100000, 1000})->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_Cluster, las_least_loaded, std::string("las"), std::string("least-loaded"))
    ->Args({10000, 100})->Args({100000, 1000})->Unit(benchmark::kMillisecond)->Iterations(1);
// FAIR and LAS under first-fit crowd many jobs onto each GPU, and arrivals land inside plans
// (cluster/README.md, "Plans": speculative plans and their rewind).
BENCHMARK_CAPTURE(BM_Cluster, fair_first_fit, std::string("fair"), std::string("first-fit"))
    ->Args({10000, 100})->Args({100000, 1000})->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_Cluster, las_first_fit, std::string("las"), std::string("first-fit"))
    ->Args({10000, 100})->Args({100000, 1000})->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_Cluster, pack_best_fit, std::string("pack"), std::string("best-fit"))
    ->Args({10000, 100})->Unit(benchmark::kMillisecond)->Iterations(1);

BENCHMARK_CAPTURE(BM_ClusterGangs, fifo, std::string("fifo"))->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ClusterGangs, srtf, std::string("srtf"))->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ClusterGangs, pack, std::string("pack"))->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ClusterGangs, fair, std::string("fair"))->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ClusterGangs, las, std::string("las"))->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ClusterGangs, priority, std::string("priority"))->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
