#include "core/pending_queue.h"

namespace salus::core {

void PendingQueue::push(JobIndex job, std::int64_t rank, Bytes persistent, Bytes ephemeral) {
  auto [it, fresh] = class_of_.try_emplace({persistent, ephemeral}, static_cast<int>(classes_.size()));
  if (fresh) classes_.emplace_back();
  std::deque<Entry>& q = classes_[static_cast<std::size_t>(it->second)];
  if (q.empty()) heads_.push({rank, it->second});
  q.push_back({rank, job});
  ++size_;
}

}  // namespace salus::core
