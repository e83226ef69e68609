#pragma once
/// Algorithm 1's pending queue Q, visited in the policy's admission order: by increasing key
/// (Policy::admission_key, fixed at arrival), ties by arrival order.
///
/// Jobs are grouped by their (P, E) demand. FindLane's answer is monotone in P and E and the
/// state only gets fuller during one pass, so once a job of a class fails in a pass every later
/// job of that class would fail too: the pass skips them. A pass therefore costs
/// O((classes + admitted) log |Q|) instead of O(|Q|), which matters for long backlogs.
#include <cstdint>
#include <functional>
#include <map>
#include <queue>
#include <tuple>
#include <utility>
#include <vector>

#include "core/grow_in_place.h"
#include "core/job.h"
#include "core/units.h"

namespace salus::core {

class PendingQueue {
 public:
  /// kAdmitted: removed from the queue; kBlocked: it and the rest of its class wait this pass;
  /// kPassOver: it waits this pass, the next job of its class is tried (a job refused for what
  /// its class does not share, e.g. its length; cluster/queue_discipline.h's EASY); kStop: the
  /// pass ends.
  enum class Verdict { kAdmitted, kBlocked, kPassOver, kStop };

  /// Adds a job with its admission key and its rank in arrival order (unique; below the number of
  /// jobs, so a JobIndex).
  void push(JobIndex job, std::int64_t key, JobIndex rank, Bytes persistent, Bytes ephemeral);
  /// Takes a waiting job out of the queue (a driver that withdraws it, Scheduler::withdraw):
  /// O(jobs of its class). Returns false when it is not queued.
  bool remove(JobIndex job, Bytes persistent, Bytes ephemeral);
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }

  /// One ProcessRequests pass: calls try_admit(job) in (key, rank) order. kAdmitted removes the
  /// job; kBlocked skips the rest of its class for this pass; kPassOver skips the job only; kStop
  /// ends the pass. Returns the number of jobs admitted.
  template <typename TryAdmit>
  int process(TryAdmit&& try_admit);

 private:
  void rebuild_heads();

  struct Entry {  // 16 bytes a waiting job, in arrays grown in place (a backlog of millions)
    std::int64_t key;
    JobIndex rank;
    JobIndex job;
    friend auto operator<=>(const Entry&, const Entry&) = default;
  };
  using ClassQueue = std::priority_queue<Entry, GrowInPlace<Entry>, std::greater<>>;
  using Head = std::tuple<std::int64_t, JobIndex, int>;  // (key, rank) of the class's first job, class

  std::map<std::pair<Bytes, Bytes>, int> class_of_;
  std::vector<ClassQueue> classes_;
  std::priority_queue<Head, std::vector<Head>, std::greater<>> heads_;
  std::vector<char> queued_;  // per class: its head is in heads_
  std::vector<int> blocked_;
  std::vector<std::pair<Entry, int>> passed_;  // entries passed over in this pass, with their class
  std::size_t size_ = 0;
};

template <typename TryAdmit>
int PendingQueue::process(TryAdmit&& try_admit) {
  int admitted = 0;
  blocked_.clear();
  while (!heads_.empty()) {
    const int c = std::get<2>(heads_.top());
    heads_.pop();
    ClassQueue& q = classes_[static_cast<std::size_t>(c)];
    const Verdict v = try_admit(q.top().job);
    if (v == Verdict::kAdmitted) {
      q.pop();
      --size_;
      ++admitted;
      if (!q.empty()) {
        heads_.push({q.top().key, q.top().rank, c});
      } else {
        queued_[static_cast<std::size_t>(c)] = 0;
      }
    } else if (v == Verdict::kPassOver) {
      passed_.push_back({q.top(), c});
      q.pop();
      if (!q.empty()) {
        heads_.push({q.top().key, q.top().rank, c});
      } else {
        queued_[static_cast<std::size_t>(c)] = 0;
      }
    } else {
      blocked_.push_back(c);
      if (v == Verdict::kStop) break;
    }
  }
  if (!passed_.empty()) {
    // Back into their classes; every class's head queued again.
    for (const auto& [e, c] : passed_) classes_[static_cast<std::size_t>(c)].push(e);
    passed_.clear();
    rebuild_heads();
    return admitted;
  }
  for (int c : blocked_) {
    const Entry& e = classes_[static_cast<std::size_t>(c)].top();
    heads_.push({e.key, e.rank, c});
  }
  return admitted;
}

}  // namespace salus::core
