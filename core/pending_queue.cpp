#include "core/pending_queue.h"

namespace salus::core {

void PendingQueue::push(JobIndex job, std::int64_t key, JobIndex rank, Bytes persistent, Bytes ephemeral) {
  auto [it, fresh] = class_of_.try_emplace({persistent, ephemeral}, static_cast<int>(classes_.size()));
  if (fresh) {
    classes_.emplace_back();
    queued_.push_back(0);
  }
  const auto c = static_cast<std::size_t>(it->second);
  ClassQueue& q = classes_[c];
  // A job may come before its class's current head (a smaller key): the head entry in heads_
  // would then be stale, so the class is re-queued. Pushes happen between passes only.
  const bool new_head = q.empty() || Entry{key, rank, job} < q.top();
  q.push({key, rank, job});
  ++size_;
  if (!queued_[c]) {
    heads_.push({key, rank, it->second});
    queued_[c] = 1;
  } else if (new_head) {
    rebuild_heads();
  }
}

bool PendingQueue::remove(JobIndex job, Bytes persistent, Bytes ephemeral) {
  const auto it = class_of_.find({persistent, ephemeral});
  if (it == class_of_.end()) return false;
  ClassQueue& q = classes_[static_cast<std::size_t>(it->second)];
  ClassQueue kept;
  bool found = false;
  for (; !q.empty(); q.pop()) {
    if (q.top().job == job && !found) {
      found = true;
    } else {
      kept.push(q.top());
    }
  }
  q = std::move(kept);
  if (!found) return false;
  --size_;
  rebuild_heads();
  return true;
}

void PendingQueue::rebuild_heads() {
  heads_ = {};
  for (std::size_t c = 0; c < classes_.size(); ++c) {
    queued_[c] = classes_[c].empty() ? 0 : 1;
    if (classes_[c].empty()) continue;
    const Entry& e = classes_[c].top();
    heads_.push({e.key, e.rank, static_cast<int>(c)});
  }
}

}  // namespace salus::core
