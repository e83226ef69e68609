#pragma once
/// The options of the real backend in the programs' one table (run/options.h): the device and its
/// math for salus-run, salus-profile and salus-experiment; salus-run's memory source, warm-up and
/// learning rate; salus-profile's measurement options. Each is declared once; --warmup means
/// on/off in salus-run and a number of iterations in salus-profile (one entry, each program's own
/// default, parsed by parse_run_warmup and parse_profile_warmup).
#include <string>

#include "real/profiler.h"
#include "real/real_runner.h"
#include "run/options.h"

namespace salus::real {

/// The real backend's option values: stored straight into the run's configuration where the
/// option is a field of it (--device, --learning-rate), else as typed.
struct RealOptionValues {
  RealRunConfig run;  ///< salus-run's configuration (and --device of salus-profile and salus-experiment)
  std::string math = "fp32", memory = "trace", warmup;
  std::string inject_faults;  ///< salus-run's --inject-faults as typed (gpu::parse_fault_rates reads it)
  // salus-profile
  gpu::ProfileOptions profile;  ///< --iterations, --min-seconds stored here; the rest parsed into it
  std::string pairs = "on", switch_cost = "on", crowds = "3,5,7", sweeps = "auto", crowd_rounds = "auto";
};

/// Declares the real backend's options into `table`, stored into `values`.
void add_real_options(run::OptionTable& table, RealOptionValues& values);

/// salus-run's --warmup: on or off.
bool parse_run_warmup(const std::string& text);
/// salus-profile's --warmup: iterations run before measuring, a number >= 0. Throws core::InputError.
int parse_profile_warmup(const std::string& text);

}  // namespace salus::real
