#include "sim/interference.h"

#include <algorithm>

#include "core/errors.h"

namespace salus::sim {

void NoInterference::slowdowns(std::span<const RunningIteration> running, std::span<std::int64_t> out) const {
  std::fill(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(running.size()), kSolo);
}

void UtilisationInterference::slowdowns(std::span<const RunningIteration> running, std::span<std::int64_t> out) const {
  std::int64_t total = 0;
  for (const RunningIteration& r : running) total += r.spec->gpu_util_ppm;
  const std::int64_t s = std::max<std::int64_t>(kSolo, total);
  std::fill(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(running.size()), s);
}

std::int64_t PairInterference::pair_slowdown(const core::JobSpec& a, const core::JobSpec& b) const {
  if (!a.workload.empty() && !b.workload.empty()) {
    if (auto it = pairs_.find({a.workload, b.workload}); it != pairs_.end()) return std::max(kSolo, it->second);
  }
  return std::max<std::int64_t>(kSolo, std::int64_t{a.gpu_util_ppm} + b.gpu_util_ppm);
}

void PairInterference::slowdowns(std::span<const RunningIteration> running, std::span<std::int64_t> out) const {
  std::int64_t capacity = 0;  // the profiled model's figure: sum of u over the running set
  for (const RunningIteration& r : running) capacity += r.spec->gpu_util_ppm;
  for (std::size_t i = 0; i < running.size(); ++i) {
    std::int64_t s = kSolo;
    for (std::size_t j = 0; j < running.size(); ++j) {
      if (j != i) s += pair_slowdown(*running[i].spec, *running[j].spec) - kSolo;
    }
    out[i] = std::max(s, capacity);
  }
}

std::unique_ptr<InterferenceModel> make_interference(std::string_view name, const PairSlowdowns* pairs) {
  if (name == "none") return std::make_unique<NoInterference>();
  if (name == "profiled") return std::make_unique<UtilisationInterference>();
  if (name == "pairs") {
    if (pairs == nullptr || pairs->empty()) {
      throw core::InputError("interference model 'pairs' needs a catalog with a \"pairs\" table (salus-profile "
                             "measures one)");
    }
    return std::make_unique<PairInterference>(*pairs);
  }
  throw core::InputError("unknown interference model '" + std::string(name) + "' (valid: none, profiled, pairs)");
}

std::vector<std::string> interference_names() { return {"none", "profiled", "pairs"}; }

}  // namespace salus::sim
