#pragma once
/// The paper's evaluation (§5) as named, versioned experiments. Each reads its inputs from the
/// shipped traces/ directory (or the files given in the context), runs them on the context's
/// executor (the simulator by default; the real backend for the experiments with a real
/// variant), prints what the paper reported beside what we got, and returns its figures as JSON
/// (written by salus-experiment to DIR/NAME.json; plots/make_figures.py draws them). The JSON
/// schema is the same on either executor; "config" says which ran it.
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/registry.h"
#include "core/units.h"
#include "run/cli.h"
#include "run/progress.h"
#include "run/run.h"
#include "run/sim_runner.h"

namespace salus::experiments {

struct ExperimentContext {
  std::string data_dir;    ///< the shipped traces/ directory (SALUS_DATA_DIR)
  std::string profiles;    ///< workload catalog (for the real executor: one measured on its device)
  std::string out_dir;     ///< extra outputs (per-run CSVs) go to out_dir/NAME/
  core::Bytes capacity = 16 * core::kGiB;
  std::ostream* log = nullptr;  ///< the paper-versus-ours report; nullptr: quiet
  /// Makes the runner of every trace the experiment runs, given the simulator settings the
  /// experiment would use. Empty: the simulator (SimRunner) with those settings.
  std::function<std::unique_ptr<run::PolicyRunner>(const run::SimConfig&)> make_runner;
  /// True when make_runner runs the real backend: the experiment takes its real variant's inputs.
  bool real = false;
  /// Arrival times and iteration counts divided by this (>= 1), as salus-run --time-scale.
  double time_scale = 1;
  // fidelity, which runs salus-profile, salus-run and salus-sim:
  std::string device = "cpu";   ///< the real executor's device
  std::string gpu_mem = "16GiB";///< the pool, as given on the command line
  std::string trace;            ///< empty: the shipped experiments/fidelity_cpu.csv
  int repeat = 3;               ///< real runs of the trace
  bool profiles_given = false;  ///< false: profile the trace's workloads on the device first
  /// How each real run is predicted (--calibrate): "off" (the catalog as profiled), "before"
  /// (solo times, utilisation, switching cost and, beside PACK, the pairs re-measured just before
  /// the run), "bracket" (the mean of just before and just after it) or "median" (the median of
  /// the four nearest, two before and two after). See calibrated_catalog.
  std::string calibrate = "median";
  /// With a calibration: each run's iter_ms times the burst allowance of its calibrations
  /// (--burst-allowance on|off; with_burst_allowance).
  bool burst_allowance = true;
  /// Non-empty: predict the real runs and calibrations of an earlier sitting (its --out
  /// directory) again instead of running anything on the device (--predict-from).
  std::string predict_from;
  /// The simulator's interference model (--interference): a name of its table, or "auto" (the
  /// one the catalog names).
  std::string interference = "auto";
  // gpus_needed (its trace is `trace`, default the shipped long_trace_100.csv):
  double bound_jct_min = 0;     ///< bound on average JCT, minutes (0: 2x the average solo time)
  double bound_queue_min = 0;   ///< bound on average queuing instead, minutes (0: none)
  /// Preemptive cluster policies searched besides the five configurations (--cluster-policies).
  std::vector<std::string> cluster_policies;
  traces::LoadOptions load;     ///< how to read the trace (--format, --window, --sample, ...), as salus-sim
  /// The model as salus-sim's options give it (--lanes, --switch-cost-ms, --placement, ...); its
  /// interference is `interference` above. Placement not given: each configuration's own.
  run::ModelOptions model;
  /// Progress of long runs (stderr); nullptr: none (--quiet, the tests).
  run::ProgressMeter* progress = nullptr;
};

/// One experiment: what the registry table holds besides its name and description.
struct ExperimentSpec {
  int version = 1;               ///< bumped whenever the configuration or the JSON changes
  /// The shipped inputs on the simulator, relative to the data directory; empty when it does not
  /// run on the simulator alone (fidelity needs the real executor).
  std::string_view inputs;
  /// On the real backend: the documented variant (its inputs and why they differ), or empty when
  /// the experiment has none (it is then refused by name with --executor real).
  std::string_view real_variant;
  nlohmann::json (*run)(const ExperimentContext& ctx);
  bool in_all = true;            ///< run by `all` (fidelity is not: it repeats real runs)
};
using ExperimentRegistry = core::Registry<ExperimentSpec>;

/// Every experiment the context runs in order, in the order `all` runs them.
const ExperimentRegistry& experiment_registry();
/// Comma-separated names, for error messages.
std::string experiment_names_joined();
/// The names of the experiments with a real variant, comma-separated.
std::string real_experiment_names_joined();
/// The real variants' traces (paths under `data_dir`) of the named experiment; empty when it has
/// no real variant. The real executor's catalog must describe their workloads.
std::vector<std::string> real_inputs(const std::string& name, const std::string& data_dir);

/// Runs one experiment by name. Throws core::InputError for an unknown name (listing the valid
/// ones), an experiment without a real variant under a real runner, or a bad input file.
nlohmann::json run_experiment(const std::string& name, const ExperimentContext& ctx);

/// gpus_needed: the fewest GPUs meeting a bound, exclusive FIFO and SRTF against Salus (gpus_needed.cpp).
nlohmann::json run_gpus_needed(const ExperimentContext& ctx);

/// The inference experiment (Fig. 10), in its own file.
nlohmann::json run_inference_experiment(const ExperimentContext& ctx, const std::string& config_path);

}  // namespace salus::experiments
