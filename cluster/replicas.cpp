#include "cluster/replicas.h"

#include <algorithm>

#include "core/errors.h"

namespace salus::cluster {

core::JobIndex ReplicaTable::add(const core::JobSpec& spec, core::JobIndex owner, std::int32_t gang, std::int32_t pos) {
  if (free_.empty()) grow();
  std::pop_heap(free_.begin(), free_.end(), std::greater<>());
  const core::JobIndex r = free_.back();
  free_.pop_back();
  const std::size_t i = at(r);
  specs_[i] = spec;
  states_[i] = core::JobState{};
  owner_[i] = owner;
  gang_[i] = gang;
  pos_[i] = pos;
  return r;
}

void ReplicaTable::free(core::JobIndex r) {
  const std::size_t i = at(r);
  SALUS_INVARIANT(owner_[i] != core::kNoJob, "a replica slot is freed once", std::to_string(r));
  owner_[i] = core::kNoJob;
  gang_[i] = -1;
  // What a slot may hold beyond its fixed size goes now (a long id, a reason, request latencies).
  specs_[i] = core::JobSpec{};
  states_[i] = core::JobState{};
  free_.push_back(r);
  std::push_heap(free_.begin(), free_.end(), std::greater<>());
}

void ReplicaTable::grow() {
  const std::size_t old = specs_.size();
  const std::size_t n = std::max<std::size_t>(64, 2 * old);
  specs_.resize(n);
  states_.resize(n);
  owner_.resize(n, core::kNoJob);
  gang_.resize(n, -1);
  pos_.resize(n, 0);
  for (std::size_t i = old; i < n; ++i) {
    free_.push_back(static_cast<core::JobIndex>(i));
    std::push_heap(free_.begin(), free_.end(), std::greater<>());
  }
  grown_ = true;
}

}  // namespace salus::cluster
