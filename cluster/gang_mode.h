#pragma once
/// How the per-GPU cluster policies (fifo, srtf, pack, fair, las, priority) run a gang job, one
/// replica per GPU (docs/cluster.md, "Gangs held or exclusive"). One registry table (core/registry.h). The
/// preemptive cluster policies (lease_policy.h) always start and stop a gang's GPUs together.
#include <string_view>

#include "core/registry.h"

namespace salus::cluster {

enum class GangMode {
  /// A gang shares its GPUs' lanes with other jobs: a replica its GPU chooses holds its lane,
  /// idle, until every replica's GPU has chosen it, then the gang runs in lock-step (the default).
  kHold,
  /// A gang takes GPUs with no job on them, and no job is bound to them while it is there: its
  /// replicas start together and run alone, as the peers' simulators have it (no holding).
  kExclusive,
};

using GangRegistry = core::Registry<GangMode>;

/// hold, exclusive.
const GangRegistry& gang_registry();
std::string_view to_string(GangMode m);

}  // namespace salus::cluster
