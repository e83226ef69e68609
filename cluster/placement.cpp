#include "cluster/placement.h"

#include <utility>

namespace salus::cluster {
namespace {

// Candidates come in GPU order, so every tie goes to the lower GPU index.

std::size_t first_fit(const core::JobSpec&, std::span<const GpuLoad>) { return 0; }

std::size_t best_fit(const core::JobSpec&, std::span<const GpuLoad> c) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < c.size(); ++i) {
    if (c[i].free_bytes < c[best].free_bytes) best = i;
  }
  return best;
}

std::size_t least_loaded(const core::JobSpec&, std::span<const GpuLoad> c) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < c.size(); ++i) {
    if (c[i].jobs < c[best].jobs || (c[i].jobs == c[best].jobs && c[i].util_ppm < c[best].util_ppm)) best = i;
  }
  return best;
}

std::size_t util_pack(const core::JobSpec& job, std::span<const GpuLoad> c) {
  // The fullest GPU whose measured utilisation still has room for the job's u; when none has,
  // the least utilised (the job then slows its neighbours least).
  std::size_t best = c.size();
  for (std::size_t i = 0; i < c.size(); ++i) {
    if (c[i].util_ppm + job.gpu_util_ppm > 1'000'000) continue;
    if (best == c.size() || c[i].util_ppm > c[best].util_ppm) best = i;
  }
  if (best != c.size()) return best;
  best = 0;
  for (std::size_t i = 1; i < c.size(); ++i) {
    if (c[i].util_ppm < c[best].util_ppm) best = i;
  }
  return best;
}

constexpr PlacementRegistry::Entry kPlacements[] = {
    {"first-fit", "the lowest-numbered GPU that admits the job now", &first_fit},
    {"best-fit", "the GPU that admits it with the least memory left by the safety condition (C - sum P - sum L)",
     &best_fit},
    {"least-loaded", "the GPU with the fewest admitted jobs (ties: least summed utilisation u)", &least_loaded},
    {"util-pack",
     "the GPU with the highest summed utilisation u that stays <= 1 with the job's (else the least utilised)",
     &util_pack},
};

}  // namespace

const PlacementRegistry& placement_registry() {
  static constexpr PlacementRegistry kRegistry("placement", kPlacements);
  return kRegistry;
}

std::string_view default_placement(std::string_view policy) {
  static constexpr std::pair<std::string_view, std::string_view> kDefaults[] = {{"fifo", "first-fit"},
                                                                                {"pack", "util-pack"}};
  for (const auto& [name, placement] : kDefaults) {
    if (name == policy) return placement;
  }
  return "least-loaded";
}

std::string placement_for(std::string_view policy, const std::string& named) {
  return named.empty() ? std::string(default_placement(policy)) : named;
}

bool takes_first_candidate(PlacementFn f) { return f == &first_fit; }

}  // namespace salus::cluster
