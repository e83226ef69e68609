#pragma once
/// The GPUs by the instant each needs its next step (cluster.cpp's loop): one entry per GPU,
/// moved in place when the instant changes (a binary heap with each GPU's position), so the heap
/// never holds more than the GPUs. Ties come out in GPU order, as the loop steps them.
#include <cstdint>
#include <utility>
#include <vector>

#include "core/units.h"

namespace salus::cluster {

class StepHeap {
 public:
  explicit StepHeap(std::size_t gpus) : pos_(gpus, kAbsent), at_(gpus, core::kNever) {}
  bool empty() const { return heap_.empty(); }
  /// The earliest instant any GPU needs (kNever when none), and that GPU (the lowest-numbered).
  core::TimeNs top_time() const { return heap_.empty() ? core::kNever : at_[static_cast<std::size_t>(heap_.front())]; }
  std::int32_t top() const { return heap_.front(); }
  /// When GPU g next needs a step (kNever: nothing to wait for).
  core::TimeNs at(std::int32_t g) const { return at_[static_cast<std::size_t>(g)]; }
  /// GPU g needs its next step at t (kNever: it leaves the heap).
  void set(std::int32_t g, core::TimeNs t) {
    const auto i = static_cast<std::size_t>(g);
    const core::TimeNs old = at_[i];
    if (old == t) return;
    at_[i] = t;
    if (t == core::kNever) {
      remove(pos_[i]);
      return;
    }
    if (pos_[i] == kAbsent) {
      pos_[i] = heap_.size();
      heap_.push_back(g);
      up(pos_[i]);
    } else if (t < old) {
      up(pos_[i]);
    } else {
      down(pos_[i]);
    }
  }

 private:
  static constexpr std::size_t kAbsent = ~std::size_t{0};
  bool before(std::int32_t a, std::int32_t b) const {
    const core::TimeNs ta = at_[static_cast<std::size_t>(a)], tb = at_[static_cast<std::size_t>(b)];
    return ta != tb ? ta < tb : a < b;
  }
  void place(std::size_t k, std::int32_t g) {
    heap_[k] = g;
    pos_[static_cast<std::size_t>(g)] = k;
  }
  void up(std::size_t k) {
    const std::int32_t g = heap_[k];
    while (k > 0) {
      const std::size_t parent = (k - 1) / 2;
      if (!before(g, heap_[parent])) break;
      place(k, heap_[parent]);
      k = parent;
    }
    place(k, g);
  }
  void down(std::size_t k) {
    const std::int32_t g = heap_[k];
    const std::size_t n = heap_.size();
    while (true) {
      std::size_t child = 2 * k + 1;
      if (child >= n) break;
      if (child + 1 < n && before(heap_[child + 1], heap_[child])) ++child;
      if (!before(heap_[child], g)) break;
      place(k, heap_[child]);
      k = child;
    }
    place(k, g);
  }
  void remove(std::size_t k) {
    const std::int32_t g = heap_[k];
    pos_[static_cast<std::size_t>(g)] = kAbsent;
    const std::int32_t last = heap_.back();
    heap_.pop_back();
    if (k == heap_.size()) return;
    place(k, last);
    up(k);
    down(pos_[static_cast<std::size_t>(last)]);
  }

  std::vector<std::int32_t> heap_;  // GPUs, a binary min-heap by (at_, GPU)
  std::vector<std::size_t> pos_;    // per GPU: its index in heap_, or kAbsent
  std::vector<core::TimeNs> at_;    // per GPU: its next step's instant (kNever: not in the heap)
};

}  // namespace salus::cluster
