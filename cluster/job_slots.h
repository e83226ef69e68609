#pragma once
/// State kept only for the jobs in the system (arrived, not finished), in slots reused after a job
/// leaves, so that it is sized by the jobs present rather than by the trace (the preemptive
/// engine's and its policies' per-job state). T has an int64 `stamp`, kept across the jobs of a
/// slot and one more for each new one, so that the entries a heap still holds for the slot's
/// earlier job stay stale.
#include <cstdint>
#include <vector>

#include "core/job.h"

namespace salus::cluster {

template <typename T>
class JobSlots {
 public:
  /// No job in the system; room for `jobs` job indices.
  void clear(std::size_t jobs) {
    slots_.clear();
    free_.clear();
    slot_of_.assign(jobs, -1);
  }
  /// A slot for job j: a new one, or a freed one that `reset(T&)` clears (its stamp then one more).
  template <typename Reset>
  T& take(core::JobIndex j, Reset reset) {
    std::int32_t slot = 0;
    if (free_.empty()) {
      slot = static_cast<std::int32_t>(slots_.size());
      slots_.emplace_back();
    } else {
      slot = free_.back();
      free_.pop_back();
      T& s = slots_[static_cast<std::size_t>(slot)];
      const std::int64_t stamp = s.stamp;
      reset(s);
      s.stamp = stamp + 1;
    }
    slot_of_[static_cast<std::size_t>(j)] = slot;
    return slots_[static_cast<std::size_t>(slot)];
  }
  /// Job j leaves: its slot is free.
  void release(core::JobIndex j) {
    free_.push_back(slot_of_[static_cast<std::size_t>(j)]);
    slot_of_[static_cast<std::size_t>(j)] = -1;
  }
  bool has(core::JobIndex j) const { return slot_of_[static_cast<std::size_t>(j)] >= 0; }
  T& operator[](core::JobIndex j) { return slots_[static_cast<std::size_t>(slot_of_[static_cast<std::size_t>(j)])]; }
  const T& operator[](core::JobIndex j) const {
    return slots_[static_cast<std::size_t>(slot_of_[static_cast<std::size_t>(j)])];
  }

 private:
  std::vector<T> slots_;
  std::vector<std::int32_t> slot_of_;  // per job: its slot, or -1
  std::vector<std::int32_t> free_;
};

}  // namespace salus::cluster
