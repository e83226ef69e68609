#pragma once
/// Placement policies: which GPU of a cluster a job goes to (one registry table, core/registry.h).
/// A placement only chooses among candidates, GPUs that would admit the job now (the cluster
/// decides which those are, cluster.h); it never reads a clock.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "core/job.h"
#include "core/registry.h"
#include "core/units.h"

namespace salus::cluster {

/// One GPU as a placement sees it, at the instant of the decision.
struct GpuLoad {
  std::int32_t gpu = 0;               ///< index in the cluster (node-major)
  core::Bytes capacity = 0;           ///< C
  core::Bytes free_bytes = 0;         ///< C - sum P - sum L: what the safety condition leaves
  std::int64_t jobs = 0;              ///< admitted, unfinished jobs (replicas)
  std::int64_t util_ppm = 0;          ///< sum of the admitted jobs' utilisation u, parts per million
};

/// Returns the index in `candidates` (never empty, in GPU order) of the GPU that takes `job`.
using PlacementFn = std::size_t (*)(const core::JobSpec& job, std::span<const GpuLoad> candidates);
using PlacementRegistry = core::Registry<PlacementFn>;

/// first-fit, best-fit, least-loaded, util-pack.
const PlacementRegistry& placement_registry();

/// True when `f` always takes the first candidate (first-fit): a search for candidates in GPU
/// order may stop at the first GPU that admits the job.
bool takes_first_candidate(PlacementFn f);

}  // namespace salus::cluster
