#include "cluster/gang_batches.h"

#include <string>

#include "core/errors.h"

namespace salus::cluster {

void GangBatches::started(std::int32_t k, core::TimeNs t) {
  const auto i = static_cast<std::size_t>(k);
  if (i >= start_.size()) {
    start_.resize(i + 1, -1);
    checked_.resize(i + 1, -1);
    crowded_.resize(i + 1, 0);
  }
  SALUS_INVARIANT(start_[i] < 0, "a gang runs one batch at a time", std::to_string(k));
  start_[i] = t;
  ++batching_;
}

void GangBatches::ended(std::int32_t k) {
  if (!batching(k)) return;
  start_[static_cast<std::size_t>(k)] = -1;
  crowded_[static_cast<std::size_t>(k)] = 0;
  --batching_;
}

}  // namespace salus::cluster
