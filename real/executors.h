#pragma once
/// The executor registry: what runs a trace's iterations. `sim`, the discrete-event simulator;
/// `real`, the real backend on a device. One table (core/registry.h), for --help and errors.
#include <memory>
#include <string_view>

#include "core/registry.h"
#include "run/run.h"
#include "run/sim_runner.h"
#include "real/real_runner.h"

namespace salus::real {

/// Everything either executor may be made from; each takes its own part.
struct ExecutorSettings {
  run::SimConfig sim;
  RealRunConfig real;
};

using ExecutorFactory = std::unique_ptr<run::PolicyRunner> (*)(const ExecutorSettings&);
using ExecutorRegistry = core::Registry<ExecutorFactory>;

const ExecutorRegistry& executor_registry();

/// The runner of the executor called `name`; throws core::InputError listing the valid names.
std::unique_ptr<run::PolicyRunner> make_runner(std::string_view name, const ExecutorSettings& settings);

}  // namespace salus::real
