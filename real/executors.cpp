#include "real/executors.h"

namespace salus::real {
namespace {

std::unique_ptr<run::PolicyRunner> make_sim(const ExecutorSettings& s) {
  return std::make_unique<run::SimRunner>(s.sim);
}
std::unique_ptr<run::PolicyRunner> make_real(const ExecutorSettings& s) {
  return std::make_unique<RealRunner>(s.real);
}

constexpr ExecutorRegistry::Entry kExecutors[] = {
    {"sim", "the discrete-event simulator: profiled iteration times, an interference model, a switching cost", &make_sim},
    {"real", "the real backend: the jobs train for real on a device (--device), one process, one memory pool",
     &make_real},
};

}  // namespace

const ExecutorRegistry& executor_registry() {
  static constexpr ExecutorRegistry kRegistry("executor", kExecutors);
  return kRegistry;
}

std::unique_ptr<run::PolicyRunner> make_runner(std::string_view name, const ExecutorSettings& settings) {
  return executor_registry().at(name).factory(settings);
}

}  // namespace salus::real
