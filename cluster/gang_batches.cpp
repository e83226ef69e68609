#include "cluster/gang_batches.h"

#include <string>

#include "core/errors.h"

namespace salus::cluster {

void GangBatches::started(std::int32_t k, core::TimeNs t) {
  const auto i = static_cast<std::size_t>(k);
  if (i >= start_.size()) {
    start_.resize(i + 1, -1);
    checked_.resize(i + 1, -1);
  }
  SALUS_INVARIANT(start_[i] < 0, "a gang runs one batch at a time", std::to_string(k));
  start_[i] = t;
  ++batching_;
}

void GangBatches::ended(std::int32_t k) {
  if (!batching(k)) return;
  start_[static_cast<std::size_t>(k)] = -1;
  --batching_;
}

void GangBatches::note_layouts(std::span<const std::int32_t> touched, const Host& host) {
  layouts_.clear();
  if (batching_ == 0) return;
  for (const std::int32_t g : touched) layouts_.push_back(host.layout(g));
}

void GangBatches::check(core::TimeNs t, std::span<const std::int32_t> touched, std::size_t gpus, Host& host) {
  if (batching_ == 0) return;
  changed_.resize(gpus, 0);
  bool any_changed = false;
  for (std::size_t k = 0; k < touched.size(); ++k) {
    const bool changed = k >= layouts_.size() || layouts_[k] != host.layout(touched[k]);
    changed_[static_cast<std::size_t>(touched[k])] = changed ? 1 : 0;
    any_changed |= changed;
  }
  if (any_changed && host.queued_gang_placeable()) {
    for (std::size_t k = 0; k < start_.size(); ++k) {
      if (start_[k] >= 0) stop(static_cast<std::int32_t>(k), t, host);
    }
  }
  for (const std::int32_t g : touched) {
    const std::int32_t k = host.gang_on(g);
    if (k < 0 || !batching(k)) continue;
    core::TimeNs& checked = checked_[static_cast<std::size_t>(k)];
    if (checked == t) continue;
    checked = t;
    if (breaks(k, host)) stop(k, t, host);
  }
  for (const std::int32_t g : touched) changed_[static_cast<std::size_t>(g)] = 0;
}

bool GangBatches::breaks(std::int32_t k, Host& host) const {
  if (host.cut_or_transfer(k)) return true;
  for (const std::int32_t g : host.gang_gpus(k)) {
    if (host.crowded(g)) return true;
    if (changed_[static_cast<std::size_t>(g)] != 0 && host.admits_queued_job(g)) return true;
  }
  return false;
}

void GangBatches::stop(std::int32_t k, core::TimeNs t, Host& host) {
  start_[static_cast<std::size_t>(k)] = -1;
  --batching_;
  host.cut_batch(k, t);
}

}  // namespace salus::cluster
