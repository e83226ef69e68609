#pragma once
/// Algorithm 1's pending queue Q, visited in arrival order.
///
/// Jobs are grouped by their (P, E) demand. FindLane's answer is monotone in P and E and the
/// state only gets fuller during one pass, so once a job of a class fails in a pass every later
/// job of that class would fail too: the pass skips them. A pass therefore costs
/// O((classes + admitted) log classes) instead of O(|Q|), which matters for long backlogs.
#include <cstdint>
#include <deque>
#include <map>
#include <queue>
#include <utility>
#include <vector>

#include "core/job.h"
#include "core/units.h"

namespace salus::core {

class PendingQueue {
 public:
  enum class Verdict { kAdmitted, kBlocked, kStop };

  /// Appends a job; jobs must be pushed in arrival order (rank increasing).
  void push(JobIndex job, std::int64_t rank, Bytes persistent, Bytes ephemeral);
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }

  /// One ProcessRequests pass: calls try_admit(job) in arrival order. kAdmitted removes the job;
  /// kBlocked skips the rest of its class for this pass; kStop ends the pass.
  /// Returns the number of jobs admitted.
  template <typename TryAdmit>
  int process(TryAdmit&& try_admit);

 private:
  struct Entry {
    std::int64_t rank;
    JobIndex job;
  };
  using Head = std::pair<std::int64_t, int>;  // (rank of the class's first job, class)

  std::map<std::pair<Bytes, Bytes>, int> class_of_;
  std::vector<std::deque<Entry>> classes_;
  std::priority_queue<Head, std::vector<Head>, std::greater<>> heads_;
  std::vector<int> blocked_;
  std::size_t size_ = 0;
};

template <typename TryAdmit>
int PendingQueue::process(TryAdmit&& try_admit) {
  int admitted = 0;
  blocked_.clear();
  while (!heads_.empty()) {
    const int c = heads_.top().second;
    heads_.pop();
    std::deque<Entry>& q = classes_[static_cast<std::size_t>(c)];
    const Verdict v = try_admit(q.front().job);
    if (v == Verdict::kAdmitted) {
      q.pop_front();
      --size_;
      ++admitted;
      if (!q.empty()) heads_.push({q.front().rank, c});
    } else {
      blocked_.push_back(c);
      if (v == Verdict::kStop) break;
    }
  }
  for (int c : blocked_) heads_.push({classes_[static_cast<std::size_t>(c)].front().rank, c});
  return admitted;
}

}  // namespace salus::core
