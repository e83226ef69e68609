// salus-run: runs a trace for real, in one process that owns the device, under Salus scheduling
// policies: the same core loop and policies as salus-sim, the real executor, real training.
#include <atomic>
#include <csignal>
#include <cstdio>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "core/errors.h"
#include "gpu_backend/device.h"
#include "gpu_backend/fault_injection.h"
#include "gpu_backend/model.h"
#include "real/options.h"
#include "real/real_runner.h"
#include "real/run_report.h"
#include "run/cli.h"
#include "run/cpus.h"
#include "run/options.h"
#include "run/output.h"
#include "traces/catalog.h"
#include "traces/trace.h"

namespace po = boost::program_options;
using namespace salus;

namespace {

std::atomic<bool> g_stop{false};

extern "C" void on_sigint(int) { g_stop.store(true); }

struct Options {
  run::OptionValues v;  ///< as typed: the paths, --time-scale, --cpus, ...
  std::vector<std::string> policies;
  real::RealRunConfig rc;    ///< the run's configuration, all but `stop`
  traces::LoadOptions load;  ///< --format, --window, --sample, ...
};

void parse(int argc, char** argv, Options& o, bool* help) {
  run::OptionValues& v = o.v;
  real::RealOptionValues r;
  run::OptionTable table;
  run::add_run_options(table, v);
  real::add_real_options(table, r);
  po::variables_map vm = table.parse(run::kRun, argc, argv);
  if (run::print_help_or_version(table, run::kRun, "salus-run",
                                 "salus-run: run a job trace for real on one device under Salus scheduling policies\n\nOptions",
                                 vm, "\nWorkloads run for real: " + gpu::real_workload_help() + "\n")) {
    *help = true;
    return;
  }
  po::notify(vm);
  o.policies = run::parse_policy_list(v.policy);
  o.rc = r.run;
  o.rc.capacity = run::parse_capacity(v.gpu_mem);
  if (vm.count("lanes")) o.rc.lanes = run::parse_lane_mode(v.model_values.lanes);
  if (!(v.time_scale >= 1)) throw core::InputError("--time-scale: must be a number >= 1");
  if (!(o.rc.options.train.learning_rate > 0)) throw core::InputError("--learning-rate: must be positive");
  if (!gpu::device_registry().find(o.rc.device)) throw core::InputError("--device: " + gpu::device_registry().unknown(o.rc.device));
  if (r.memory != "trace" && r.memory != "model") {
    throw core::InputError("--memory: unknown source '" + r.memory + "' (valid: trace, model)");
  }
  o.rc.memory_from_model = r.memory == "model";
  o.rc.warmup = real::parse_run_warmup(r.warmup);
  o.rc.math = gpu::parse_math_mode(r.math);
  const std::uint64_t seed = run::parse_seed(v.seed);
  o.rc.options.seed = seed;
  o.rc.faults.seed = seed;
  if (vm.count("inject-faults")) {
    if (o.rc.device != "cpu-faults") {
      throw core::InputError("--inject-faults: only the cpu-faults device injects faults (--device cpu-faults), not " +
                             o.rc.device);
    }
    o.rc.faults = gpu::parse_fault_rates(r.inject_faults, seed);
  }
  o.load = run::make_load_options(v.trace_values, seed);
  table.check_paths(run::kRun, vm);
}

int body(int argc, char** argv) {
  bool help = false;
  Options o;
  parse(argc, argv, o, &help);
  if (help) return 0;
  const run::OptionValues& v = o.v;
  run::TraceJobs loaded = run::load_jobs(v.trace, v.profiles, o.rc.capacity, v.time_scale, o.load);
  const traces::Trace& trace = loaded.trace;
  std::vector<core::JobSpec>& jobs = loaded.jobs;
  // Before any thread: the CPUs, which on the cpu device follow the catalog's (docs/real-backend.md, "Pinning: --cpus").
  const traces::Catalog catalog = traces::Catalog::load(v.profiles);
  const std::string cpus_note = run::pin_for_device("salus-run", v.cpus, o.rc.device, &catalog);
  real::RealRunner::check_workloads(jobs, v.trace);
  real::RealRunConfig rc = o.rc;
  rc.stop = &g_stop;
  real::RealRunner runner(rc);
  std::vector<std::string> notes = trace.notes;
  if (!cpus_note.empty()) notes.push_back(cpus_note);
  for (std::string& n : runner.prepare(jobs)) notes.push_back(std::move(n));
  for (const std::string& n : run::lane_mode_notes(o.policies, o.rc.lanes)) notes.push_back(n);
  const core::Bytes capacity = runner.capacity();
  std::printf("salus-run: %s (%s, %s), device %s, math %s, pool %s, time scale %g\n", v.trace.c_str(),
              traces::to_string(trace.format), run::count_text(jobs.size(), "job").c_str(), runner.device().name().c_str(), gpu::to_string(o.rc.math),
              core::format_size(capacity).c_str(), v.time_scale);
  std::fflush(stdout);

  std::signal(SIGINT, on_sigint);
  const std::vector<run::PolicyRun> runs = real::run_policies(runner, jobs, o.policies, !v.out.empty(), g_stop, notes);
  run::print_report(notes, jobs, runs);
  real::print_switch_latencies(stdout, runs);
  const nlohmann::json summary =
      real::run_summary({v.trace, traces::to_string(trace.format), v.profiles, runner.device().name(),
                         gpu::to_string(o.rc.math), capacity, v.time_scale, o.rc.options.seed, notes},
                        jobs, runs);
  run::write_outputs(summary, v.summary_json, v.out, jobs, runs);
  // A failed job (its kernels failed, its lane overflowed, ...) fails the run; the summary is
  // written all the same.
  return real::run_exit_status(runs, g_stop.load());
}

}  // namespace

int main(int argc, char** argv) { return salus::run::guarded_main("salus-run", body, argc, argv); }
