// salus-experiment: runs the paper's experiments (§5) in the simulator or on the real backend by name, writes
// DIR/NAME.json with their figures, prints the paper's numbers beside ours, and draws the
// figures with plots/make_figures.py.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <stdexcept>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "core/errors.h"
#include "run/cli.h"
#include "run/cpus.h"
#include "experiments/fidelity.h"
#include "run/output.h"
#include "experiments/paper_experiments.h"
#include "experiments/siblings.h"
#include "traces/catalog.h"
#include "traces/trace.h"
#include "gpu_backend/device.h"
#include "real/executors.h"
#include "sim/interference.h"

namespace po = boost::program_options;
using namespace salus;

namespace {

using experiments::shell_quote;

/// Debian's interpreter first: it is the one that sees python3-matplotlib.
std::string python() { return access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3"; }

/// Draws the figures of `names`; returns false (and says why) when they could not be drawn.
bool draw(const std::string& dir, const std::vector<std::string>& names) {
  std::string only;
  for (const std::string& n : names) only += (only.empty() ? "" : ",") + n;
  const std::string script = traces::plots_dir() + "/make_figures.py";
  const std::string cmd =
      python() + " " + shell_quote(script) + " --in " + shell_quote(dir) + " --out " + shell_quote(dir) + " --only " + only;
  std::fflush(stdout);
  const int rc = std::system(cmd.c_str());
  if (rc == -1 || !WIFEXITED(rc)) {
    std::fprintf(stderr, "salus-experiment: could not run %s\n", cmd.c_str());
    return false;
  }
  if (WEXITSTATUS(rc) != 0) {
    std::fprintf(stderr, "salus-experiment: figures not drawn (%s exited with %d)\n", cmd.c_str(), WEXITSTATUS(rc));
    return false;
  }
  return true;
}

/// The help's tables: experiments (with their inputs on either executor), executors, devices.
std::string tables() {
  std::string out = "\nExperiments (inputs under " + traces::data_dir() + "):\n" +
                    experiments::experiment_registry().help();
  for (const auto& e : experiments::experiment_registry().entries()) {
    out += "  " + std::string(e.name) + " (v" + std::to_string(e.factory.version) + ")\n";
    out += "      --executor sim:  " + (e.factory.inputs.empty() ? std::string("no (needs the real executor)")
                                                                 : std::string(e.factory.inputs)) + "\n";
    out += "      --executor real: " + (e.factory.real_variant.empty() ? std::string("no real variant")
                                                                         : std::string(e.factory.real_variant)) + "\n";
  }
  out += "\nExecutors:\n" + real::executor_registry().help();
  out += "\nDevices (--executor real):\n" + gpu::device_registry().help();
  return out;
}

int body(int argc, char** argv) {
  std::string name, out_dir, profiles, gpu_mem, plots, data_dir, executor, device, trace, calibrate, cpus, predict_from;
  std::string bursts = "on";
  std::uint64_t seed = 1;
  bool quiet = false;
  run::TraceOptionValues trace_options;
  run::ModelOptionValues model_options;
  int repeat = 3;
  double bound_jct_min = 0, bound_queue_min = 0;
  double time_scale = 1;
  po::options_description desc(
      "salus-experiment NAME|all --out DIR [--executor sim|real]: run the paper's experiments in the simulator or "
      "on the real backend\n\nOptions");
  desc.add_options()
      ("help,h", "print this help and the experiments")
      ("version", "print the version")
      ("name", po::value(&name), ("experiment: " + experiments::experiment_names_joined() + ", or all").c_str())
      ("out", po::value(&out_dir)->default_value("out/experiments"), "write NAME.json, its CSVs and its figures here")
      ("inputs", po::value(&data_dir)->default_value(traces::data_dir()),
       "directory with the experiments' inputs (long_trace_100.csv, experiments/...)")
      ("profiles", po::value(&profiles)->default_value(traces::Catalog::default_path()),
       "workload catalog (JSON); with --executor real the default is one measured on the device first by "
       "salus-profile (written to OUT/real_catalog.json)")
      ("gpu-mem", po::value(&gpu_mem)->default_value("16GiB"), "GPU memory capacity (the paper's P100: 16GiB)")
      ("executor", po::value(&executor)->default_value("sim"),
       ("what runs the iterations: " + real::executor_registry().names_joined() +
        " (real runs each experiment's documented real variant: see below)").c_str())
      ("device", po::value(&device)->default_value("cpu"),
       ("with --executor real: " + gpu::device_registry().names_joined()).c_str())
      ("time-scale", po::value(&time_scale)->default_value(1.0),
       "divide arrival times and iteration counts by this (>= 1) to shorten a run, as salus-run does")
      ("trace", po::value(&trace), "fidelity: the trace (default: the shipped traces/experiments/fidelity_cpu.csv); "
       "gpus_needed: the trace (default: the shipped long_trace_100.csv)")
      ("bound-jct-min", po::value(&bound_jct_min),
       "gpus_needed: the bound on average JCT, minutes (default: twice the trace's average solo time)")
      ("bound-queue-min", po::value(&bound_queue_min), "gpus_needed: a bound on average queuing instead, minutes")
      ("repeat", po::value(&repeat)->default_value(3), "fidelity: real runs of the trace (the medians are reported)")
      ("calibrate", po::value(&calibrate)->default_value("median"),
       "fidelity: how each real run is predicted: off (the catalog as profiled), before (solo iteration times, "
       "utilisation, switching cost and, beside PACK, the pairs re-measured by salus-profile just before the run), "
       "bracket (the mean of just before and just after), median (the median of the four nearest: two before, two "
       "after)")
      ("burst-allowance", po::value(&bursts)->default_value("on"),
       "fidelity, with a calibration: on: each run's solo iteration times are the calibrations' typical means "
       "times the mean of their plain mean over typical mean (the host's bursts at the rate the calibrations met "
       "them); off: the typical means alone")
      ("predict-from", po::value(&predict_from),
       "fidelity: predict the real runs and calibrations of an earlier sitting (its --out directory) again under "
       "--calibrate, running nothing on the device; its trace, time scale, pool and catalog are the sitting's "
       "(--trace: where its trace is on this machine, for a sitting copied from another; it must hold the runs' jobs)")
      ("plots", po::value(&plots)->default_value("auto"),
       "auto: draw the figures when matplotlib is there, else say how to get it; on: failing to draw is an error; off")
      ("seed", po::value(&seed)->default_value(1), "gpus_needed: seed for --sample")
      ("quiet", po::bool_switch(&quiet), "no progress line on stderr (shown for simulations longer than about a second)");
  // gpus_needed takes salus-sim's model and trace options (fidelity: --interference only).
  run::add_model_options(desc, model_options,
                                 " (fidelity and gpus_needed; fidelity with --predict-from: an earlier sitting "
                                 "predicted again under another model)",
                                 " (gpus_needed)");
  run::add_trace_options(desc, trace_options);
  run::add_cpus_option(desc, cpus,
                               "where the OS places them; fidelity on the cpu device: the first CPU this process "
                               "may use");
  po::positional_options_description pos;
  pos.add("name", 1);
  po::variables_map vm;
  po::store(run::parse_command_line(argc, argv, desc, &pos), vm);
  if (vm.count("help")) {
    std::cout << desc << tables();
    return 0;
  }
  if (vm.count("version")) {
    std::cout << run::version_text("salus-experiment") << "\n";
    return 0;
  }
  po::notify(vm);
  run::check_output_paths({{"--out", out_dir, run::OutputKind::kFolder}});
  const auto& registry = experiments::experiment_registry();
  if (name.empty()) throw core::InputError("name an experiment (valid: " + registry.names_joined() + ", or all)");
  if (plots != "auto" && plots != "on" && plots != "off") {
    throw core::InputError("--plots: unknown value '" + plots + "' (valid: auto, on, off)");
  }
  if (!real::executor_registry().find(executor)) throw core::InputError("--executor: " + real::executor_registry().unknown(executor));
  if (!gpu::device_registry().find(device)) throw core::InputError("--device: " + gpu::device_registry().unknown(device));
  if (!(time_scale >= 1)) throw core::InputError("--time-scale: must be a number >= 1");
  const bool real_executor = executor == "real";
  if (!real_executor && !vm["device"].defaulted()) throw core::InputError("--device is for --executor real");
  std::vector<std::string> names;
  if (name == "all") {
    for (const auto& e : registry.entries()) {
      const bool runs_here = real_executor ? !e.factory.real_variant.empty() : !e.factory.inputs.empty();
      if (e.factory.in_all && runs_here) names.emplace_back(e.name);
    }
  } else {
    if (!registry.find(name)) throw core::InputError(registry.unknown(name, ", or all"));
    names.push_back(name);
  }
  const bool fidelity_only = names.size() == 1 && names.front() == "fidelity";
  const bool gpus_needed_only = names.size() == 1 && names.front() == "gpus_needed";
  if (!fidelity_only && !vm["repeat"].defaulted()) throw core::InputError("--repeat is for fidelity only");
  if (!fidelity_only && !vm["calibrate"].defaulted()) throw core::InputError("--calibrate is for fidelity only");
  experiments::check_calibration_mode(calibrate);
  if (!fidelity_only && !vm["burst-allowance"].defaulted()) throw core::InputError("--burst-allowance is for fidelity only");
  if (bursts != "on" && bursts != "off") {
    throw core::InputError("--burst-allowance: unknown value '" + bursts + "' (valid: on, off)");
  }
  if (calibrate == "off" && !vm["burst-allowance"].defaulted()) {
    throw core::InputError("--burst-allowance: needs a calibration to take the bursts from (--calibrate before, "
                           "bracket or median)");
  }
  if (!fidelity_only && !gpus_needed_only && !vm["interference"].defaulted()) {
    throw core::InputError("--interference is for fidelity and gpus_needed only");
  }
  for (const char* own : {"lanes", "share-exponent", "lane-shrink", "switch-cost-ms", "placement", "seed", "format",
                          "durations", "throughputs", "worker-type", "gavel-scaling", "assumed-iter-ms", "assumed-memory", "window",
                          "sample"}) {
    if (!gpus_needed_only && vm.count(own) && !vm[own].defaulted()) {
      throw core::InputError(std::string("--") + own + " is for gpus_needed only");
    }
  }
  const run::ModelOptions model = run::make_model_options(model_options, vm);
  if (vm.count("predict-from")) {
    if (!fidelity_only) throw core::InputError("--predict-from is for fidelity only");
    for (const char* own : {"repeat", "profiles", "gpu-mem", "device", "time-scale"}) {
      if (vm.count(own) && !vm[own].defaulted()) {
        throw core::InputError(
            std::string("--predict-from takes the sitting's runs, trace, time scale, pool, catalog and device: drop --") + own +
            " (--trace only says where the sitting's trace is on this machine)");
      }
    }
  }
  if (const std::vector<int> mine = run::allowed_cpus();
      fidelity_only && real_executor && device == "cpu" && cpus.empty() && predict_from.empty() && !mine.empty()) {
    // The profile and every run on one CPU: on a cloud machine the virtual CPUs need not run at
    // one speed (on the 2-core development machine salus-profile read lenet_32 at 6.1 ms on one
    // and 8.3 ms on the other, minutes apart), and the OS moves the executor's threads between
    // them; the simulator knows one device. The children inherit the CPU.
    cpus = std::to_string(mine.front());
    std::cout << "fidelity on the cpu device: every program runs on CPU " << cpus
              << " (the first this process may use; --cpus to choose others)\n";
  }
  run::apply_cpus_option(cpus);
  if (!fidelity_only && !gpus_needed_only && vm.count("trace")) {
    throw core::InputError("--trace is for fidelity and gpus_needed only");
  }
  if (!gpus_needed_only && (vm.count("bound-jct-min") || vm.count("bound-queue-min"))) {
    throw core::InputError("--bound-jct-min and --bound-queue-min are for gpus_needed only");
  }
  if (vm.count("bound-jct-min") && vm.count("bound-queue-min")) {
    throw core::InputError("--bound-jct-min and --bound-queue-min: give one of them");
  }
  if (vm.count("bound-jct-min") && !(bound_jct_min > 0)) throw core::InputError("--bound-jct-min: must be a number > 0");
  if (vm.count("bound-queue-min") && !(bound_queue_min > 0)) {
    throw core::InputError("--bound-queue-min: must be a number > 0");
  }
  experiments::ExperimentContext ctx;
  ctx.data_dir = data_dir;
  ctx.profiles = profiles;
  ctx.profiles_given = !vm["profiles"].defaulted();
  ctx.out_dir = out_dir;
  ctx.capacity = run::parse_capacity(gpu_mem);
  ctx.gpu_mem = gpu_mem;
  ctx.log = &std::cout;
  ctx.real = real_executor;
  ctx.time_scale = time_scale;
  ctx.device = device;
  ctx.trace = trace;
  ctx.repeat = repeat;
  ctx.calibrate = calibrate;
  ctx.burst_allowance = bursts == "on";
  ctx.predict_from = predict_from;
  ctx.interference = model.interference;
  ctx.model = model;
  ctx.load = run::make_load_options(trace_options, seed);
  run::ProgressMeter meter(std::cerr, isatty(STDERR_FILENO) != 0);
  if (!quiet) ctx.progress = &meter;
  ctx.bound_jct_min = bound_jct_min;
  ctx.bound_queue_min = bound_queue_min;
  if (real_executor && !fidelity_only) {
    std::vector<std::string> traces;
    for (const std::string& n : names) {
      for (const std::string& t : experiments::real_inputs(n, data_dir)) traces.push_back(t);
    }
    if (!ctx.profiles_given && !traces.empty()) {
      // The real variants' workloads measured on this device: the catalog gives the policies
      // (SRTF's remaining time) and the memory admission what this device does.
      std::filesystem::create_directories(out_dir);
      ctx.profiles = out_dir + "/real_catalog.json";
      experiments::profile_on_device(device, experiments::trace_workloads(traces), gpu_mem, ctx.profiles,
                                     out_dir + "/real_profile.log");
    }
  }
  ctx.make_runner = [&](const run::SimConfig& sim) {
    real::ExecutorSettings settings;
    settings.sim = sim;
    settings.real.device = device;
    settings.real.capacity = ctx.capacity;
    return real::make_runner(executor, settings);
  };
  for (const std::string& n : names) {
    const nlohmann::json j = experiments::run_experiment(n, ctx);
    const std::string path = out_dir + "/" + n + ".json";
    run::write_text_file(path, j.dump(2) + "\n");
    std::cout << "wrote " << path << "\n\n";
  }
  std::cout.flush();
  if (plots == "off") return 0;
  if (!draw(out_dir, names)) {
    if (plots == "on") return 1;
    std::fprintf(stderr, "salus-experiment: the JSON is written; draw later with: %s %s/make_figures.py --in %s --out %s\n",
                 python().c_str(), traces::plots_dir().c_str(), out_dir.c_str(), out_dir.c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return run::guarded_main("salus-experiment", body, argc, argv); }
