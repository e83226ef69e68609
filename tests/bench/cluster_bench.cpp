// The cluster path's speed: a production-style trace on a cluster of N GPUs, offered load about
// 0.9 per GPU, per policy and placement. Jobs per second of wall time.
//
//   ./build/tests/bench/cluster_bench --benchmark_counters_tabular=true
//
// The trace is salus-trace's generator (the shipped catalog) with the mean inter-arrival time
// scaled to the cluster: 0.3 s for 1,000 GPUs, as in the README's 100k-job run.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "experiments/output.h"
#include "experiments/sim_runner.h"
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
  experiments::write_text_file(path, traces::to_native_csv(traces::generate_trace(catalog, opt), "cluster_bench"));
  const traces::Trace t = traces::load_trace(path, catalog);
  std::filesystem::remove(path);
  return cache.emplace(std::pair{jobs, gpus}, traces::jobs_for_capacity(t, 16 * core::kGiB)).first->second;
}

void BM_Cluster(benchmark::State& state, const std::string& policy, const std::string& placement) {
  const int jobs = static_cast<int>(state.range(0));
  const int gpus = static_cast<int>(state.range(1));
  const auto& specs = trace(jobs, gpus);
  experiments::SimConfig cfg;
  cfg.interference = "profiled";
  cfg.cluster = cluster::ClusterSpec::uniform(gpus, cfg.capacity);
  cfg.placement = placement;
  std::int64_t plans = 0, planned = 0;
  for (auto _ : state) {
    const experiments::SimRun r = experiments::simulate(specs, policy, cfg);
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

BENCHMARK_MAIN();
