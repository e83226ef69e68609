#pragma once
/// salus-experiment's options that belong to some experiments only, declared with them into the
/// programs' option table (run/options.h), each naming the experiments that take it.
#include <string>

#include "experiments/paper_experiments.h"
#include "run/options.h"

namespace salus::experiments {

/// The values of those options that the context does not hold as they are typed.
struct ExperimentOptionValues {
  std::string burst_allowance = "on";  ///< --burst-allowance on|off (ctx.burst_allowance)
  std::string cluster_policies;        ///< --cluster-policies LIST (ctx.cluster_policies)
};

/// Declares fidelity's and gpus_needed's own options (stored into `ctx`, `values`) and names the
/// experiments that take the shared trace, model and seed options of `table`.
void add_experiment_options(run::OptionTable& table, ExperimentContext& ctx, ExperimentOptionValues& values);

/// Checks fidelity's and gpus_needed's own options together (`vm` tells which were given):
/// --calibrate, --burst-allowance (sets ctx.burst_allowance), what --predict-from takes from the
/// sitting, --bound-jct-min or --bound-queue-min. Throws core::InputError.
void check_experiment_values(const boost::program_options::variables_map& vm, ExperimentContext& ctx,
                             const ExperimentOptionValues& values);

}  // namespace salus::experiments
