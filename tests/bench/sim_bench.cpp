// Simulator speed: simulated iterations per second and jobs per second, per policy, on synthetic
// traces of 20k and 200k jobs (about 1000 iterations per job, so 2e8 iterations at 200k), and
// (BM_TimeShare) FAIR and LAS on long jobs of 1-s iterations piling up in one lane, the shape of
// Alibaba's pod lists (make_timeshare_trace).
//
//   ./build/tests/bench/sim_bench --benchmark_counters_tabular=true
//
// The trace is generated here, deterministically: Poisson arrivals at about 85% offered load for
// one GPU, iteration counts log-uniform in [100, 10000] (mean ~2150, clipped per job so the mean
// stays near 1000 with the heavy tail kept), and six workload shapes for memory and speed.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "run/sim_runner.h"
#include "tests/bench/bench_trace.h"

namespace {

using namespace salus;

std::vector<core::JobSpec> make_trace(int n, std::uint64_t seed) { return bench::make_trace(n, seed); }

const std::vector<core::JobSpec>& trace(int n) {
  static std::vector<core::JobSpec> small = make_trace(20'000, 42);
  static std::vector<core::JobSpec> large = make_trace(200'000, 42);
  return n == 20'000 ? small : large;
}

void BM_Simulate(benchmark::State& state, const char* policy) {
  const auto& jobs = trace(static_cast<int>(state.range(0)));
  run::SimConfig cfg;
  cfg.interference = "profiled";
  std::int64_t iterations = 0, steps = 0, runs = 0, closed_form = 0;
  for (auto _ : state) {
    const run::PolicyRun run = run::simulate(jobs, policy, cfg);
    iterations = run.outcome.iterations;
    steps = run.outcome.steps;
    runs = run.outcome.dispatches;
    closed_form = run.outcome.plan_closed_form;
    benchmark::DoNotOptimize(run.metrics.avg_jct_s);
  }
  state.counters["iterations"] = static_cast<double>(iterations);
  state.counters["events"] = static_cast<double>(steps);
  state.counters["runs"] = static_cast<double>(runs);
  state.counters["closed_form"] = static_cast<double>(closed_form);  // plans' iterations counted in closed form
  state.counters["iter/s"] = benchmark::Counter(static_cast<double>(iterations) * state.iterations(),
                                                benchmark::Counter::kIsRate);
  state.counters["jobs/s"] = benchmark::Counter(static_cast<double>(jobs.size()) * state.iterations(),
                                                benchmark::Counter::kIsRate);
}

/// Long jobs of 1-s iterations time-sharing one GPU, the shape of Alibaba's openb pod lists as
/// the importer replays them (--assumed-iter-ms 1000): arrivals every ~2,000 s (Poisson), solo
/// times log-normal around 11 minutes with a tail of weeks (openb: median 655 s, 99th percentile
/// 41 hours, largest 145 days), so the GPU is offered ~2.5x what it can run and the jobs pile up
/// in one lane, thousands at a time by the end; 60 % take the whole GPU (E = capacity), the
/// others a share of it (E and u = share), 2 % span 2-8 GPUs (an iteration of as many seconds);
/// the first iteration takes the remainder of the duration (0-1 s more).
std::vector<core::JobSpec> make_timeshare_trace(int n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto uniform = [&] { return static_cast<double>(rng() >> 11) * 0x1.0p-53; };
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<core::JobSpec> jobs;
  jobs.reserve(static_cast<std::size_t>(n));
  double t = 0;
  for (int i = 0; i < n; ++i) {
    core::JobSpec j;
    j.id = "p" + std::to_string(i);
    j.trace_order = i;
    j.arrival_ns = static_cast<core::TimeNs>(t) * core::kNsPerS;
    const double solo_s = std::min(1.3e7, std::exp(std::log(660.0) + 2.0 * normal(rng)));
    const std::int64_t gpus = uniform() < 0.98 ? 1 : std::int64_t{2} << (rng() % 3);
    j.iter_ns = gpus * core::kNsPerS;
    j.iterations = std::max<std::int64_t>(1, std::llround(solo_s));
    j.first_iter_extra_ns = static_cast<core::TimeNs>(uniform() * 1e9);
    const double share = uniform() < 0.6 ? 1.0 : 0.1 * static_cast<double>(1 + rng() % 9);
    j.persistent = 0;
    j.ephemeral = static_cast<core::Bytes>(share * 16.0 * static_cast<double>(core::kGiB));
    j.gpu_util_ppm = static_cast<std::int32_t>(share * 1e6);
    jobs.push_back(j);
    t += -std::log(1.0 - uniform()) * 2000.0;
  }
  return jobs;
}

void BM_TimeShare(benchmark::State& state, const char* policy) {
  const auto jobs = make_timeshare_trace(static_cast<int>(state.range(0)), 7);
  run::SimConfig cfg;
  cfg.interference = "profiled";
  std::int64_t iterations = 0, steps = 0, plans = 0, closed_form = 0;
  for (auto _ : state) {
    const run::PolicyRun run = run::simulate(jobs, policy, cfg);
    iterations = run.outcome.iterations;
    steps = run.outcome.steps;
    plans = run.outcome.plans;
    closed_form = run.outcome.plan_closed_form;
    benchmark::DoNotOptimize(run.metrics.avg_jct_s);
  }
  state.counters["iterations"] = static_cast<double>(iterations);
  state.counters["events"] = static_cast<double>(steps);
  state.counters["plans"] = static_cast<double>(plans);
  state.counters["closed_form"] = static_cast<double>(closed_form);
  state.counters["iter/s"] = benchmark::Counter(static_cast<double>(iterations) * state.iterations(),
                                                benchmark::Counter::kIsRate);
}

}  // namespace

BENCHMARK_CAPTURE(BM_Simulate, fifo, "fifo")->Arg(20'000)->Arg(200'000)->Unit(benchmark::kSecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_Simulate, srtf, "srtf")->Arg(20'000)->Arg(200'000)->Unit(benchmark::kSecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_Simulate, pack, "pack")->Arg(20'000)->Arg(200'000)->Unit(benchmark::kSecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_Simulate, fair, "fair")->Arg(20'000)->Arg(200'000)->Unit(benchmark::kSecond)->Iterations(1);

// Long jobs of 1-s iterations, many in one lane, arrivals while rotations run (make_timeshare_trace).
BENCHMARK_CAPTURE(BM_TimeShare, fair, "fair")->Arg(500)->Arg(6'000)->Unit(benchmark::kSecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_TimeShare, las, "las")->Arg(500)->Arg(6'000)->Unit(benchmark::kSecond)->Iterations(1);

BENCHMARK_MAIN();
