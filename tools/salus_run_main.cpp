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
#include "real/real_runner.h"
#include "policies/registry.h"
#include "traces/catalog.h"
#include "traces/trace.h"

namespace po = boost::program_options;
using namespace salus;

namespace {

std::atomic<bool> g_stop{false};

extern "C" void on_sigint(int) { g_stop.store(true); }

struct Options {
  std::string trace, profiles, summary_json, out_dir, device = "cpu";
  std::string cpus;  ///< --cpus as given ("" when not)
  std::vector<std::string> policies;
  core::Bytes capacity = 16 * core::kGiB;
  std::optional<core::LaneMode> lanes;
  double time_scale = 1;
  bool memory_from_model = false;
  bool warmup = true;
  gpu::MathMode math = gpu::MathMode::kFp32;
  gpu::RealOptions real;
  traces::LoadOptions load;  ///< --format, --window, --sample, ...
};

Options parse(int argc, char** argv, bool* help) {
  Options o;
  std::string policy_list, gpu_mem, lanes, memory, warmup, math;
  std::uint64_t seed = 1;
  run::TraceOptionValues trace_options;
  po::options_description desc(
      "salus-run: run a job trace for real on one device under Salus scheduling policies\n\nOptions");
  desc.add_options()
      ("help,h", "print this help")
      ("version", "print the version")
      ("trace", po::value(&o.trace)->required(), "trace file (same formats as salus-sim)")
      ("policy", po::value(&policy_list)->default_value(policies::policy_names_joined()),
       ("comma-separated policies (valid: " + policies::policy_names_joined() + ")").c_str())
      ("device", po::value(&o.device)->default_value("cpu"), "cpu (Eigen) or cuda (cuDNN, cuBLAS)")
      ("math", po::value(&math)->default_value("fp32"),
       "fp32: exact FP32 convolutions and GEMMs (comparable with the CPU device); tf32: TF32 tensor cores for "
       "them, as frameworks train on Ampere and Hopper (cuda only; the cpu device refuses it)")
      ("gpu-mem", po::value(&gpu_mem)->default_value("16GiB"),
       "memory pool reserved on the device, with a unit (16GiB emulates a P100); never more than it has free")
      ("lanes", po::value(&lanes), "single|auto|exclusive (as in salus-sim)")
      ("time-scale", po::value(&o.time_scale)->default_value(1.0),
       "divide arrival times and iteration counts by this (>= 1) to shorten a run")
      ("profiles", po::value(&o.profiles)->default_value(traces::Catalog::default_path()), "workload catalog (JSON)")
      ("memory", po::value(&memory)->default_value("trace"),
       "trace: admit jobs with the P and E the trace or catalog declares; model: with what each model needs "
       "on this device (as salus-profile measures it)")
      ("warmup", po::value(&warmup)->default_value("on"),
       "on: run one iteration of every workload before the trace (kernels loaded, plans made), as salus-profile "
       "measures a warm process; off: the first job of each workload pays for it")
      ("learning-rate", po::value(&o.real.train.learning_rate)->default_value(0.01f), "SGD learning rate")
      ("seed", po::value(&seed)->default_value(1), "seed of the synthetic data and initial weights, and of --sample")
      ("summary-json", po::value(&o.summary_json), "write the summary JSON here (salus-sim's schema plus measurements)")
      ("out", po::value(&o.out_dir), "write per-job CSVs, timelines, memory and lane moves into this directory");
  run::add_cpus_option(desc, o.cpus, "on the cpu device the CPUs the catalog's figures were measured on, "
                                            "else one CPU, the first it may use; on cuda where the OS places them");
  run::add_trace_options(desc, trace_options);
  po::variables_map vm;
  po::store(run::parse_command_line(argc, argv, desc), vm);
  if (vm.count("help")) {
    std::cout << desc << "\nWorkloads run for real: " << gpu::real_workload_help() << "\n";
    *help = true;
    return o;
  }
  if (vm.count("version")) {
    std::cout << run::version_text("salus-run") << "\n";
    *help = true;
    return o;
  }
  po::notify(vm);
  o.policies = run::parse_policy_list(policy_list);
  o.capacity = run::parse_capacity(gpu_mem);
  if (vm.count("lanes")) o.lanes = run::parse_lane_mode(lanes);
  if (!(o.time_scale >= 1)) throw core::InputError("--time-scale: must be a number >= 1");
  if (!(o.real.train.learning_rate > 0)) throw core::InputError("--learning-rate: must be positive");
  if (!gpu::device_registry().find(o.device)) throw core::InputError("--device: " + gpu::device_registry().unknown(o.device));
  if (memory != "trace" && memory != "model") {
    throw core::InputError("--memory: unknown source '" + memory + "' (valid: trace, model)");
  }
  o.memory_from_model = memory == "model";
  o.warmup = run::parse_on_off("--warmup", warmup);
  o.math = gpu::parse_math_mode(math);
  o.real.seed = seed;
  o.load = run::make_load_options(trace_options, seed);
  run::check_output_paths({{"--summary-json", o.summary_json, run::OutputKind::kFile},
                           {"--out", o.out_dir, run::OutputKind::kFolder}});
  return o;
}

int body(int argc, char** argv) {
  bool help = false;
  const Options o = parse(argc, argv, &help);
  if (help) return 0;
  auto [trace, jobs, pairs, share_weights, switch_ns, interference, crowd_factors, capacities] = run::load_jobs(o.trace, o.profiles, o.capacity, o.time_scale, o.load);
  // Before any thread: the CPUs, which on the cpu device follow the catalog's (README, --cpus).
  const traces::Catalog catalog = traces::Catalog::load(o.profiles);
  const std::string cpus_note = run::pin_for_device("salus-run", o.cpus, o.device, &catalog);
  try {
    real::RealRunner::check_workloads(jobs);
  } catch (const core::InputError& e) {
    throw core::InputError(o.trace + ": " + e.what());
  }
  real::RealRunConfig rc;
  rc.device = o.device;
  rc.math = o.math;
  rc.capacity = o.capacity;
  rc.lanes = o.lanes;
  rc.memory_from_model = o.memory_from_model;
  rc.warmup = o.warmup;
  rc.options = o.real;
  rc.stop = &g_stop;
  real::RealRunner runner(rc);
  std::vector<std::string> notes = trace.notes;
  if (!cpus_note.empty()) notes.push_back(cpus_note);
  for (std::string& n : runner.prepare(jobs)) notes.push_back(std::move(n));
  for (const std::string& n : run::lane_mode_notes(o.policies, o.lanes)) notes.push_back(n);
  const core::Bytes capacity = runner.capacity();
  std::printf("salus-run: %s (%s, %s), device %s, math %s, pool %s, time scale %g\n", o.trace.c_str(),
              traces::to_string(trace.format), run::count_text(jobs.size(), "job").c_str(), runner.device().name().c_str(), gpu::to_string(o.math),
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
  summary["math"] = gpu::to_string(o.math);
  summary["cpus"] = run::cpu_list_text(run::allowed_cpus());
  summary["gpu_mem_bytes"] = capacity;
  summary["time_scale"] = o.time_scale;
  summary["seed"] = o.real.seed;
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
