// The cost of a policy written in Python (python/, salus.Policy): the same runs under the built-in
// PACK, SRTF and FAIR and under salus.policies.Pack, .Srtf and .Fair (the same decisions), each
// policy wrapped in a counter of the loop's calls into it. Reports per run the decisions (choose
// calls) and all calls (choose and the hooks), and the run's CPU time (this thread's) per
// decision and per call: the loop's own work included, which the built-in rows show.
//
//   PYTHONPATH=build/python ./build/tests/bench/python_bench --benchmark_counters_tabular=true
//
// Python is embedded here (pybind11::embed) and the package salus imported from the build tree
// (SALUS_PYTHON_DIR, or PYTHONPATH). The trace: 1,000 jobs drawn like sim_bench's (Poisson arrivals
// at about 85% load of one GPU, six workload shapes), iteration counts a tenth of sim_bench's.
#include <benchmark/benchmark.h>

#include <time.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <pybind11/embed.h>

#include "policies/registry.h"
#include "tests/bench/bench_trace.h"
#include "python/policy_adapter.h"
#include "run/sim_runner.h"

namespace {

using namespace salus;
namespace py = pybind11;

std::vector<core::JobSpec> make_trace(int n, std::uint64_t seed) { return bench::make_trace(n, seed, 10.0); }

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

/// A policy that counts the loop's calls into the one it wraps.
class Counting final : public core::Policy {
 public:
  Counting(std::unique_ptr<core::Policy> inner, std::int64_t* decisions, std::int64_t* calls)
      : inner_(std::move(inner)), decisions_(decisions), calls_(calls) {}
  std::string_view name() const override { return inner_->name(); }
  std::string_view description() const override { return inner_->description(); }
  core::LaneMode default_lane_mode() const override { return inner_->default_lane_mode(); }
  bool supports(core::LaneMode m) const override { return inner_->supports(m); }
  void begin(std::span<const core::JobSpec> specs) override { ++*calls_, inner_->begin(specs); }
  std::int64_t admission_key(const core::SchedulerView& v, core::JobIndex j) const override {
    ++*calls_;
    return inner_->admission_key(v, j);
  }
  Newcomer newcomer() const override { return inner_->newcomer(); }
  bool starts_at_once(const core::SchedulerView& v, const core::LaneSnapshot& l, core::JobIndex j) const override {
    ++*calls_;
    return inner_->starts_at_once(v, l, j);
  }
  void on_admit(const core::SchedulerView& v, core::JobIndex j) override { ++*calls_, inner_->on_admit(v, j); }
  void on_join(const core::SchedulerView& v, const core::LaneSnapshot& l, core::JobIndex j) override {
    ++*calls_, inner_->on_join(v, l, j);
  }
  void on_iterations_done(const core::SchedulerView& v, const core::RunReport& r) override {
    ++*calls_, inner_->on_iterations_done(v, r);
  }
  void on_finish(const core::SchedulerView& v, core::JobIndex j, core::LaneId l) override {
    ++*calls_, inner_->on_finish(v, j, l);
  }
  core::Decision choose(const core::SchedulerView& v, const core::LaneSnapshot& l) override {
    ++*calls_, ++*decisions_;
    return inner_->choose(v, l);
  }
  // No plans: both policies decide at every boundary, so that their decisions are the same ones.

 private:
  std::unique_ptr<core::Policy> inner_;
  std::int64_t* decisions_;
  std::int64_t* calls_;
};

/// `policy` run on the trace: "pack"/"srtf"/"fair" built in, or from salus.policies (Pack, Srtf,
/// Fair). PACK's choice is lane.jobs[0]: its row is the cost of a call into Python itself.
void BM_Policy(benchmark::State& state, const char* policy, bool python) {
  static const std::vector<core::JobSpec> jobs = make_trace(1000, 42);
  const std::string name = std::string(policy) + (python ? "_py" : "_counted");
  std::int64_t decisions = 0, calls = 0;
  py::object py_policy;
  if (python) {
    py::module_ m = py::module_::import("salus.policies");
    const std::string p = policy;
    py_policy = m.attr(p == "srtf" ? "Srtf" : p == "fair" ? "Fair" : "Pack")();
  }
  policies::ScopedPolicy scoped(name, [&]() -> std::unique_ptr<core::Policy> {
    std::unique_ptr<core::Policy> inner =
        python ? std::unique_ptr<core::Policy>(std::make_unique<python::PyPolicy>(py_policy)) : policies::make_policy(policy);
    return std::make_unique<Counting>(std::move(inner), &decisions, &calls);
  });
  run::SimConfig cfg;
  cfg.interference = "profiled";
  std::int64_t runs = 0;
  double seconds = 0;  // CPU time of the runs (this thread's: the loop and the Python calls)
  for (auto _ : state) {
    decisions = calls = 0;
    const double t0 = thread_cpu_seconds();
    const run::PolicyRun run = run::simulate(jobs, name, cfg);
    seconds += thread_cpu_seconds() - t0;
    benchmark::DoNotOptimize(run.metrics.avg_jct_s);
    ++runs;
  }
  // Per run; the whole run's CPU time over its decisions (and calls): the loop's work included.
  state.counters["decisions"] = static_cast<double>(decisions);
  state.counters["calls"] = static_cast<double>(calls);
  state.counters["ns_per_decision"] = seconds * 1e9 / static_cast<double>(decisions * runs);
  state.counters["ns_per_call"] = seconds * 1e9 / static_cast<double>(calls * runs);
}

BENCHMARK_CAPTURE(BM_Policy, pack_builtin, "pack", false)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Policy, pack_python, "pack", true)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Policy, srtf_builtin, "srtf", false)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Policy, srtf_python, "srtf", true)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Policy, fair_builtin, "fair", false)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Policy, fair_python, "fair", true)->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  py::scoped_interpreter python;
  py::module_::import("sys").attr("path").attr("insert")(0, SALUS_PYTHON_DIR);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
