// salus-experiment: runs the paper's experiments (§5) in the simulator or on the real backend by name, writes
// DIR/NAME.json with their figures, prints the paper's numbers beside ours, and draws the
// figures with plots/make_figures.py.
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "core/errors.h"
#include "core/registry.h"
#include "experiments/options.h"
#include "experiments/paper_experiments.h"
#include "experiments/program.h"
#include "gpu_backend/device.h"
#include "real/executors.h"
#include "real/options.h"
#include "run/cli.h"
#include "run/cpus.h"
#include "run/options.h"
#include "run/output.h"
#include "run/progress.h"
#include "traces/catalog.h"

namespace po = boost::program_options;
using namespace salus;

namespace {

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
  // cpu-faults is salus-run's: its faults are set by --inject-faults, which this program does not take.
  std::istringstream devices(gpu::device_registry().help());
  out += "\nDevices (--executor real):\n";
  for (std::string line; std::getline(devices, line);) {
    if (line.rfind("  cpu-faults ", 0) != 0) out += line + "\n";
  }
  return out;
}

int body(int argc, char** argv) {
  std::string name, executor = "sim", plots = "auto";
  // The options this program runs with are stored straight into the experiments' context.
  experiments::ExperimentContext ctx;
  ctx.data_dir = traces::data_dir();
  ctx.profiles = traces::Catalog::default_path();
  ctx.out_dir = "out/experiments";
  experiments::ExperimentOptionValues own;
  run::OptionValues v;
  run::OptionTable table;
  run::add_run_options(table, v);
  table.store_in("profiles", &ctx.profiles);
  table.store_in("out", &ctx.out_dir);
  table.store_in("gpu-mem", &ctx.gpu_mem);
  table.store_in("time-scale", &ctx.time_scale);
  table.store_in("trace", &ctx.trace);
  // salus-experiment's own, for every experiment.
  table.add(run::value_option("name", &name, "NAME", run::kExperiment,
                              "experiment: " + experiments::experiment_names_joined() + ", or all"));
  table.add(run::value_option("inputs", &ctx.data_dir, "DIR", run::kExperiment,
                              "directory with the experiments' inputs (long_trace_100.csv, experiments/...)"))
      .input_in(run::kExperiment);
  table.add(run::value_option("executor", &executor, "NAME", run::kExperiment,
                              "what runs the iterations: " + real::executor_registry().names_joined() +
                                  " (real runs each experiment's documented real variant: see below)"));
  real::RealOptionValues r;
  real::add_real_options(table, r);
  table.store_in("device", &ctx.device);
  const std::string& device = ctx.device;
  table.add(run::value_option("plots", &plots, "auto|on|off", run::kExperiment,
                              "auto: draw the figures when matplotlib is there, else say how to get it; on: failing to "
                              "draw is an error; off"));
  experiments::add_experiment_options(table, ctx, own);
  po::positional_options_description pos;
  pos.add("name", 1);
  const po::variables_map vm = table.parse(run::kExperiment, argc, argv, &pos);
  if (run::print_help_or_version(table, run::kExperiment, "salus-experiment",
                                 "salus-experiment NAME|all --out DIR [--executor sim|real]: run the paper's experiments "
                                 "in the simulator or on the real backend\n\nOptions",
                                 vm, tables())) {
    return 0;
  }
  po::variables_map stored = vm;
  po::notify(stored);
  const std::string& out_dir = ctx.out_dir;
  std::string cpus = v.cpus;
  table.check_paths(run::kExperiment, vm);
  if (plots != "auto" && plots != "on" && plots != "off") {
    throw core::InputError("--plots: unknown value '" + plots + "' (valid: auto, on, off)");
  }
  if (!real::executor_registry().find(executor)) throw core::InputError("--executor: " + real::executor_registry().unknown(executor));
  if (!gpu::device_registry().find(device)) {
    // The valid names of this program: the registry's but salus-run's cpu-faults (below).
    std::vector<std::string> valid = gpu::device_registry().names();
    std::erase(valid, "cpu-faults");
    std::string list;
    for (const std::string& n : valid) list += (list.empty() ? "" : ", ") + n;
    throw core::InputError("--device: unknown device '" + core::text_excerpt(device) + "' (valid: " + list + ")" +
                           core::did_you_mean(device, valid));
  }
  if (device == "cpu-faults") {
    throw core::InputError("--device cpu-faults is salus-run's (its faults are set by --inject-faults, which "
                           "salus-experiment does not take): use cpu");
  }
  if (!(ctx.time_scale >= 1)) throw core::InputError("--time-scale: must be a number >= 1");
  const bool real_executor = executor == "real";
  if (!real_executor && !vm["device"].defaulted()) throw core::InputError("--device is for --executor real");
  const std::vector<std::string> names = experiments::select_experiments(name, real_executor);
  // An option of some experiments only, given with another: "--calibrate is for fidelity only".
  table.check_experiments(vm, names);
  const bool fidelity_only = names.size() == 1 && names.front() == "fidelity";
  ctx.model = run::make_model_options(v.model_values, vm);
  experiments::check_experiment_values(vm, ctx, own);
  if (const std::vector<int> mine = run::allowed_cpus();
      fidelity_only && real_executor && device == "cpu" && cpus.empty() && ctx.predict_from.empty() && !mine.empty()) {
    // The profile and every run on one CPU: on a cloud machine the virtual CPUs need not run at
    // one speed (on the 2-core development machine salus-profile read lenet_32 at 6.1 ms on one
    // and 8.3 ms on the other, minutes apart), and the OS moves the executor's threads between
    // them; the simulator knows one device. The children inherit the CPU.
    cpus = std::to_string(mine.front());
    std::cout << "fidelity on the cpu device: every program runs on CPU " << cpus
              << " (the first this process may use; --cpus to choose others)\n";
  }
  run::apply_cpus_option(cpus);
  ctx.profiles_given = !vm["profiles"].defaulted();
  ctx.capacity = run::parse_capacity(ctx.gpu_mem);
  ctx.log = &std::cout;
  ctx.real = real_executor;
  ctx.interference = ctx.model.interference;
  ctx.load = run::make_load_options(v.trace_values, run::parse_seed(v.seed));
  run::ProgressMeter meter(std::cerr, isatty(STDERR_FILENO) != 0);
  if (!v.quiet) ctx.progress = &meter;
  if (real_executor && !fidelity_only) experiments::profile_real_inputs(names, ctx);
  ctx.make_runner = [&](const run::SimConfig& sim) {
    real::ExecutorSettings settings;
    settings.sim = sim;
    settings.real.device = device;
    settings.real.capacity = ctx.capacity;
    return real::make_runner(executor, settings);
  };
  experiments::run_and_write(names, ctx);
  std::cout.flush();
  if (plots == "off") return 0;
  if (!experiments::draw_figures(out_dir, names)) {
    if (plots == "on") return 1;
    std::fprintf(stderr, "salus-experiment: the JSON is written; draw later with: %s\n",
                 experiments::draw_later_command(out_dir).c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return run::guarded_main("salus-experiment", body, argc, argv); }
