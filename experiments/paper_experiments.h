#pragma once
/// The paper's evaluation (§5) as named, versioned simulator experiments. Each reads its inputs
/// from the shipped traces/ directory (or the files given in the context), runs the simulator,
/// prints what the paper reported beside what we got, and returns its figures as JSON
/// (written by salus-experiment to DIR/NAME.json; plots/make_figures.py draws them).
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/units.h"

namespace salus::experiments {

struct ExperimentInfo {
  std::string name;
  int version = 1;         ///< bumped whenever the configuration or the JSON changes
  std::string description;
  std::string inputs;      ///< the shipped input files, relative to the data directory
};

/// Every experiment, in the order `all` runs them.
const std::vector<ExperimentInfo>& experiment_list();
/// Comma-separated names, for error messages.
std::string experiment_names_joined();

struct ExperimentContext {
  std::string data_dir;    ///< the shipped traces/ directory (SALUS_DATA_DIR)
  std::string profiles;    ///< workload catalog
  std::string out_dir;     ///< extra outputs (per-run CSVs) go to out_dir/NAME/
  core::Bytes capacity = 16 * core::kGiB;
  std::ostream* log = nullptr;  ///< the paper-versus-ours report; nullptr: quiet
};

/// Runs one experiment by name. Throws core::InputError for an unknown name (listing the valid
/// ones) or a bad input file.
nlohmann::json run_experiment(const std::string& name, const ExperimentContext& ctx);

/// The inference experiment (Fig. 10), in its own file.
nlohmann::json run_inference_experiment(const ExperimentContext& ctx, const std::string& config_path);

}  // namespace salus::experiments
