#include "real/options.h"

#include <exception>

#include "core/errors.h"
#include "gpu_backend/device.h"
#include "run/cli.h"

namespace salus::real {

void add_real_options(run::OptionTable& t, RealOptionValues& v) {
  using run::kExperiment;
  using run::kProfile;
  using run::kRun;
  using run::value_option;
  t.add(value_option("device", &v.run.device, "NAME", kRun | kProfile | kExperiment, "cpu (Eigen), cpu-faults (cpu with injected faults: --inject-faults) or cuda (cuDNN, cuBLAS)"))
      .help_in(kProfile, "cpu or cuda")
      .help_in(kExperiment, "with --executor real: cpu or cuda (cpu-faults is salus-run's: its faults are set by "
                            "--inject-faults, which salus-experiment does not take)");
  t.add(value_option("math", &v.math, "fp32|tf32", kRun | kProfile,
                     "fp32: exact FP32 convolutions and GEMMs (comparable with the CPU device); tf32: TF32 tensor cores "
                     "for them, as frameworks train on Ampere and Hopper (cuda only; the cpu device refuses it)"))
      .help_in(kProfile, "fp32: exact FP32 convolutions and GEMMs; tf32: TF32 tensor cores for them (cuda only)");
  t.add(value_option("inject-faults", &v.inject_faults, "KEY=VALUE,...", kRun,
                     "with --device cpu-faults: probabilities per operation of each fault, and their seed: alloc "
                     "(each allocation from the pool fails), iter (each iteration reports an error), lost (each "
                     "iteration loses the device; sticky), seed (default: --seed); e.g. "
                     "alloc=0.01,iter=0.02,lost=0.001,seed=7"));
  t.add(value_option("memory", &v.memory, "trace|model", kRun,
                     "trace: admit jobs with the P and E the trace or catalog declares; model: with what each model "
                     "needs on this device (as salus-profile measures it)"));
  t.add(value_option("warmup", &v.warmup, "on|off", kRun,
                     "on: run one iteration of every workload before the trace (kernels loaded, plans made), as "
                     "salus-profile measures a warm process; off: the first job of each workload pays for it"))
      .default_in(kRun, "on")
      .default_in(kProfile, "2")
      .help_in(kProfile, "iterations run before measuring")
      .value_name_in(kProfile, "N")
      .programs |= kProfile;
  t.add(value_option("learning-rate", &v.run.options.train.learning_rate, "RATE", kRun, "SGD learning rate"))
      .default_text = "0.01";

  // salus-profile's own
  t.add(value_option("iterations", &v.profile.iterations, "N", kProfile, "iterations measured, at least"));
  t.add(value_option("min-seconds", &v.profile.min_seconds, "S", kProfile,
                     "and measured for at least this long per workload (the mean and median are written)"));
  t.add(value_option("switch", &v.switch_cost, "on|off", kProfile,
                     "on|off: also measure the executor's switching cost (switch_ms) of every workload, two copies "
                     "taking turns in one lane (the catalog's own switch_ms: the fastest workload's)"));
  t.add(value_option("pairs", &v.pairs, "on|off", kProfile, "on|off: also measure every pair in two lanes"));
  t.add(value_option("crowds", &v.crowds, "LIST|off", kProfile,
                     "with --pairs on: also measure crowds of this many lanes at once (the workloads in turn, lane by "
                     "lane), for the `crowds` interference model; off: none"));
  t.add(value_option("sweeps", &v.sweeps, "LIST|auto|off", kProfile,
                     "with --pairs on: also measure k copies of each workload at once, for each k of this list (2 to "
                     "64), for the `capacity` interference model's C(k); auto: 3,5,8,12 on a GPU, off on the cpu "
                     "device; off: none"));
  t.add(value_option("crowd-rounds", &v.crowd_rounds, "N|auto", kProfile,
                     "rounds of each crowd and sweep point, each bracketed by solo runs (the median is kept); auto: 1 "
                     "on a GPU, 3 on the cpu device"));
}

bool parse_run_warmup(const std::string& text) { return run::parse_on_off("--warmup", text); }

int parse_profile_warmup(const std::string& text) {
  const std::optional<int> n = gpu::whole_int(text);
  if (!n) throw core::InputError("--warmup: must be a number of iterations, got '" + text + "'");
  if (*n < 0) throw core::InputError("--warmup: must not be negative");
  return *n;
}

}  // namespace salus::real
