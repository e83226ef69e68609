#include "experiments/options.h"

#include <algorithm>

#include "cluster/lease_policy.h"
#include "core/errors.h"
#include "experiments/fidelity.h"

namespace salus::experiments {

void add_experiment_options(run::OptionTable& t, ExperimentContext& ctx, ExperimentOptionValues& values) {
  using run::kExperiment;
  const auto only = [](run::Option& o, std::vector<std::string> experiments) -> run::Option& {
    o.experiments = std::move(experiments);
    return o;
  };

  // fidelity
  only(t.add(run::value_option("repeat", &ctx.repeat, "N", kExperiment,
                               "fidelity: real runs of the trace (the medians are reported)")),
       {"fidelity"});
  only(t.add(run::value_option("calibrate", &ctx.calibrate, "off|before|bracket|median", kExperiment,
                               "fidelity: how each real run is predicted: off (the catalog as profiled), before (solo "
                               "iteration times, utilisation, switching cost and, beside PACK, the pairs re-measured by "
                               "salus-profile just before the run), bracket (the mean of just before and just after), "
                               "median (the median of the four nearest: two before, two after)")),
       {"fidelity"});
  only(t.add(run::value_option("burst-allowance", &values.burst_allowance, "on|off", kExperiment,
                               "fidelity, with a calibration: on: each run's solo iteration times are the calibrations' "
                               "typical means times the mean of their plain mean over typical mean (the host's bursts "
                               "at the rate the calibrations met them); off: the typical means alone")),
       {"fidelity"});
  only(t.add(run::value_option("predict-from", &ctx.predict_from, "DIR", kExperiment,
                               "fidelity: predict the real runs and calibrations of an earlier sitting (its --out "
                               "directory) again under --calibrate, running nothing on the device; its trace, time "
                               "scale, pool and catalog are the sitting's (--trace: where its trace is on this machine, "
                               "for a sitting copied from another; it must hold the runs' jobs)"))
           .input_in(kExperiment),
       {"fidelity"});

  // gpus_needed
  for (const char* bound : {"bound-jct-min", "bound-queue-min"}) {
    const bool jct = std::string(bound) == "bound-jct-min";
    run::Option& o = only(t.add(run::value_option(bound, jct ? &ctx.bound_jct_min : &ctx.bound_queue_min, "MIN",
                                                  kExperiment,
                                                  jct ? "gpus_needed: the bound on average JCT, minutes (default: twice "
                                                        "the trace's average solo time)"
                                                      : "gpus_needed: a bound on average queuing instead, minutes")),
                          {"gpus_needed"});
    o.no_default = true;
    o.scope_text = "--bound-jct-min and --bound-queue-min";
  }

  only(t.add(run::value_option("cluster-policies", &values.cluster_policies, "LIST", kExperiment,
                               "gpus_needed: also search the fewest GPUs under these preemptive cluster policies, "
                               "comma-separated (valid: " + cluster::lease_registry().names_joined() +
                                   "; their options as salus-sim's: --dlas-thresholds, --round-s, ...)")),
       {"gpus_needed"});

  // The shared options these experiments take (salus-sim's meaning, on their simulations).
  for (const char* name : {"trace", "interference"}) t.find(name)->experiments = {"fidelity", "gpus_needed"};
  for (const char* name : {"lanes", "share-exponent", "lane-shrink", "switch-cost-ms", "placement", "queue", "seed", "format",
                           "durations", "throughputs", "worker-type", "gavel-scaling", "assumed-iter-ms",
                           "assumed-memory", "window", "sample", "gangs", "dlas-thresholds", "dlas-starvation",
                           "dlas-checks", "restart-cost-ms", "round-s", "reset-s", "gpu-sharing"}) {
    t.find(name)->experiments = {"gpus_needed"};
  }
}

void check_experiment_values(const boost::program_options::variables_map& vm, ExperimentContext& ctx,
                             const ExperimentOptionValues& own) {
  check_calibration_mode(ctx.calibrate);
  if (own.burst_allowance != "on" && own.burst_allowance != "off") {
    throw core::InputError("--burst-allowance: unknown value '" + own.burst_allowance + "' (valid: on, off)");
  }
  if (ctx.calibrate == "off" && !vm["burst-allowance"].defaulted()) {
    throw core::InputError("--burst-allowance: needs a calibration to take the bursts from (--calibrate before, "
                           "bracket or median)");
  }
  ctx.burst_allowance = own.burst_allowance == "on";
  if (vm.count("predict-from")) {
    for (const char* mine : {"repeat", "profiles", "gpu-mem", "device", "time-scale"}) {
      if (vm.count(mine) && !vm[mine].defaulted()) {
        throw core::InputError(
            std::string("--predict-from takes the sitting's runs, trace, time scale, pool, catalog and device: drop --") + mine +
            " (--trace only says where the sitting's trace is on this machine)");
      }
    }
  }
  ctx.cluster_policies.clear();
  if (!own.cluster_policies.empty()) {
    for (const std::string& name : core::split_list(own.cluster_policies)) {
      if (name.empty()) {
        throw core::InputError("--cluster-policies: an empty item in '" + own.cluster_policies + "' (valid: " +
                               cluster::lease_registry().names_joined() + ")");
      }
      cluster::lease_registry().at(name);  // unknown: the valid names
      if (std::find(ctx.cluster_policies.begin(), ctx.cluster_policies.end(), name) != ctx.cluster_policies.end()) {
        throw core::InputError("--cluster-policies: '" + name + "' given twice");
      }
      ctx.cluster_policies.push_back(name);
    }
  }
  if (vm.count("bound-jct-min") && vm.count("bound-queue-min")) {
    throw core::InputError("--bound-jct-min and --bound-queue-min: give one of them");
  }
  if (vm.count("bound-jct-min") && !(ctx.bound_jct_min > 0)) throw core::InputError("--bound-jct-min: must be a number > 0");
  if (vm.count("bound-queue-min") && !(ctx.bound_queue_min > 0)) {
    throw core::InputError("--bound-queue-min: must be a number > 0");
  }
}

}  // namespace salus::experiments
