// salus-run: runs a trace for real, in one process that owns the device, under Salus scheduling
// policies: the same core loop and policies as salus-sim, the real executor, real training.
#include <chrono>
#include <csignal>
#include <cstdio>
#include <exception>
#include <iostream>
#include <map>
#include <utility>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "core/errors.h"
#include "core/summary.h"
#include "run/cli.h"
#include "run/cpus.h"
#include "run/output.h"
#include "run/run.h"
#include "gpu_backend/device.h"
#include "gpu_backend/memory_pool.h"
#include "gpu_backend/real_executor.h"
#include "real/options.h"
#include "real/real_runner.h"
#include "run/options.h"
#include "policies/registry.h"
#include "traces/catalog.h"
#include "traces/trace.h"

namespace po = boost::program_options;
using namespace salus;

namespace {

std::atomic<bool> g_stop{false};

extern "C" void on_sigint(int) { g_stop.store(true); }

struct Options {
  std::string trace, profiles, summary_json, out_dir;
  std::string cpus;  ///< --cpus as given ("" when not)
  std::vector<std::string> policies;
  double time_scale = 1;
  real::RealRunConfig rc;    ///< the run's configuration, all but `stop`
  traces::LoadOptions load;  ///< --format, --window, --sample, ...
};

Options parse(int argc, char** argv, bool* help) {
  Options o;
  run::OptionValues v;
  real::RealOptionValues r;
  run::OptionTable table;
  run::add_run_options(table, v);
  real::add_real_options(table, r);
  po::variables_map vm = table.parse(run::kRun, argc, argv);
  if (run::print_help_or_version(table, run::kRun, "salus-run",
                                 "salus-run: run a job trace for real on one device under Salus scheduling policies\n\nOptions",
                                 vm, "\nWorkloads run for real: " + gpu::real_workload_help() + "\n")) {
    *help = true;
    return o;
  }
  po::notify(vm);
  o.trace = v.trace;
  o.profiles = v.profiles;
  o.summary_json = v.summary_json;
  o.out_dir = v.out;
  o.cpus = v.cpus;
  o.time_scale = v.time_scale;
  o.policies = run::parse_policy_list(v.policy);
  o.rc = r.run;
  o.rc.capacity = run::parse_capacity(v.gpu_mem);
  if (vm.count("lanes")) o.rc.lanes = run::parse_lane_mode(v.model_values.lanes);
  if (!(o.time_scale >= 1)) throw core::InputError("--time-scale: must be a number >= 1");
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
  o.load = run::make_load_options(v.trace_values, seed);
  run::check_output_paths({{"--summary-json", o.summary_json, run::OutputKind::kFile},
                           {"--out", o.out_dir, run::OutputKind::kFolder}});
  return o;
}

int body(int argc, char** argv) {
  bool help = false;
  const Options o = parse(argc, argv, &help);
  if (help) return 0;
  auto [trace, jobs, pairs, share_weights, switch_ns, interference, crowd_factors, capacities] = run::load_jobs(o.trace, o.profiles, o.rc.capacity, o.time_scale, o.load);
  // Before any thread: the CPUs, which on the cpu device follow the catalog's (README, --cpus).
  const traces::Catalog catalog = traces::Catalog::load(o.profiles);
  const std::string cpus_note = run::pin_for_device("salus-run", o.cpus, o.rc.device, &catalog);
  try {
    real::RealRunner::check_workloads(jobs);
  } catch (const core::InputError& e) {
    throw core::InputError(o.trace + ": " + e.what());
  }
  real::RealRunConfig rc = o.rc;
  rc.stop = &g_stop;
  real::RealRunner runner(rc);
  std::vector<std::string> notes = trace.notes;
  if (!cpus_note.empty()) notes.push_back(cpus_note);
  for (std::string& n : runner.prepare(jobs)) notes.push_back(std::move(n));
  for (const std::string& n : run::lane_mode_notes(o.policies, o.rc.lanes)) notes.push_back(n);
  const core::Bytes capacity = runner.capacity();
  std::printf("salus-run: %s (%s, %s), device %s, math %s, pool %s, time scale %g\n", o.trace.c_str(),
              traces::to_string(trace.format), run::count_text(jobs.size(), "job").c_str(), runner.device().name().c_str(), gpu::to_string(o.rc.math),
              core::format_size(capacity).c_str(), o.time_scale);
  std::fflush(stdout);

  std::signal(SIGINT, on_sigint);
  std::vector<run::PolicyRun> runs;
  for (const std::string& name : o.policies) {
    if (g_stop.load()) break;
    runs.push_back(runner.run(jobs, name, !o.out_dir.empty()));
    if (const std::string& fatal = runs.back().outcome.fatal_error; !fatal.empty()) {
      // The device's context is gone: no later policy can run on it.
      notes.push_back("the device was lost during the " + name + " run (" + fatal +
                      "): every unfinished job failed and no later policy ran");
      break;
    }
  }
  if (g_stop.load()) notes.push_back("interrupted (Ctrl-C): the summary covers what ran");
  run::print_report(notes, jobs, runs);
  // The measured switch latency of each run: end of one job's last kernel to the start of the
  // next job's first kernel in the same lane (CUDA events; on the CPU device the host clock, end
  // of one job's iteration to the start of the next job's first iteration).
  for (std::size_t r = 0; r < runs.size(); ++r) {
    const nlohmann::json& sw = runs[r].measured["switch_latency"];
    if (sw["count"].get<std::size_t>() == 0) {
      std::printf("switch latency, %s: no switch\n", runs[r].policy.c_str());
    } else {
      std::printf("switch latency, %s: %zu switches, p50 %.3f ms, p99 %.3f ms, max %.3f ms (%s)\n",
                  runs[r].policy.c_str(), sw["count"].get<std::size_t>(), sw["p50_ms"].get<double>(),
                  sw["p99_ms"].get<double>(), sw["max_ms"].get<double>(), sw["clock"].get<std::string>().c_str());
    }
  }

  nlohmann::json summary;
  summary["tool"] = "salus-run";
  summary["trace"] = o.trace;
  summary["trace_format"] = traces::to_string(trace.format);
  summary["profiles"] = o.profiles;
  summary["device"] = runner.device().name();
  summary["math"] = gpu::to_string(o.rc.math);
  summary["cpus"] = run::cpu_list_text(run::allowed_cpus());
  summary["gpu_mem_bytes"] = capacity;
  summary["time_scale"] = o.time_scale;
  summary["seed"] = o.rc.options.seed;
  summary["notes"] = notes;
  summary["results"] = run::results_json(jobs, runs);
  // Measurements go into each result and each job entry, so readers of the common schema can
  // ignore them.
  for (std::size_t r = 0; r < runs.size(); ++r) {
    nlohmann::json& res = summary["results"][r];
    const nlohmann::json& measured = runs[r].measured;
    for (const char* key : {"workers", "workers_made_in_run", "lookahead", "switch_latency", "stop_latency",
                            "outside_pool_bytes", "outside_pool_growth_bytes", "fatal_error"}) {
      res[key] = measured[key];
    }
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      for (auto& [k, v] : measured["jobs"][i].items()) {
        if (k != "id") res["jobs"][i][k] = v;
      }
    }
  }
  run::write_outputs(summary, o.summary_json, o.out_dir, jobs, runs);
  if (g_stop.load()) return 130;
  // A failed job (its kernels failed, its lane overflowed, ...) fails the run; the summary is
  // written all the same.
  for (const run::PolicyRun& r : runs) {
    if (r.metrics.failed > 0) return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return salus::run::guarded_main("salus-run", body, argc, argv); }
