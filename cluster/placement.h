#pragma once
/// Placement policies: which GPU of a cluster a job goes to (one registry table, core/registry.h).
/// A placement only chooses among candidates, GPUs that would admit the job now (the cluster
/// decides which those are, cluster.h); it never reads a clock.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

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

/// The placement a policy runs with when the run names none (salus-sim --placement, the
/// gpus_needed experiment): first-fit for fifo (every candidate of an exclusive policy is an
/// empty GPU, and first-fit's search stops at the first), util-pack for pack (fill a GPU's
/// lanes while their summed utilisation stays <= 1; with u = 1 everywhere it spreads as
/// least-loaded does), least-loaded for the policies of one lane (srtf, fair, las, priority: a
/// time-shared GPU beside an idle one makes its jobs take turns for nothing). Measured in
/// cluster/README.md ("Default placements"). Any other name: least-loaded.
std::string_view default_placement(std::string_view policy);
/// The placement a run of `policy` uses: `named` (--placement), or when empty the policy's default.
std::string placement_for(std::string_view policy, const std::string& named);

/// True when `f` always takes the first candidate (first-fit): a search for candidates in GPU
/// order may stop at the first GPU that admits the job.
bool takes_first_candidate(PlacementFn f);

}  // namespace salus::cluster
