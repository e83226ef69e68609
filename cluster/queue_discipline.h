#pragma once
/// Queue disciplines: how the cluster queue is served when a job in it cannot start (one registry
/// table, core/registry.h). The queue is visited in the policy's admission order (fifo: arrival;
/// srtf: least solo time; priority: highest first) at every instant a GPU changes; what happens
/// past a job that starts nowhere is the discipline's (docs/cluster.md, "Queue disciplines").
#include <string_view>

#include "core/registry.h"

namespace salus::cluster {

enum class QueueDiscipline {
  /// Head-of-line blocking: the visit stops at the first job that cannot start (Tiresias' and
  /// Gavel's FIFO).
  kStrict,
  /// Every job that can start does, in order, past those that cannot (Algorithm 1's own queue
  /// on one GPU; Tiresias' dlas-gpu skips a gang that does not fit the same way). Default.
  kBackfill,
  /// EASY backfilling: as backfill, but the first job that cannot start holds a reservation: the
  /// GPUs it will start on (those expected to be free first, by the profiled solo times of the
  /// jobs on them) at the time the last of them is expected free. A later job starts on a
  /// reserved GPU only if it is expected to end by then.
  kEasy,
};

using QueueRegistry = core::Registry<QueueDiscipline>;

/// strict, backfill, easy.
const QueueRegistry& queue_registry();
std::string_view to_string(QueueDiscipline d);

}  // namespace salus::cluster
