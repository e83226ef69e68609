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

std::unique_ptr<InterferenceModel> make_interference(std::string_view name) {
  if (name == "none") return std::make_unique<NoInterference>();
  if (name == "profiled") return std::make_unique<UtilisationInterference>();
  throw core::InputError("unknown interference model '" + std::string(name) + "' (valid: none, profiled)");
}

std::vector<std::string> interference_names() { return {"none", "profiled"}; }

}  // namespace salus::sim
