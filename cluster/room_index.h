#pragma once
/// The cluster's placement index (arrival.cpp, Cluster::gather_candidates).
#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/units.h"

namespace salus::cluster {

/// The GPUs by the memory the safety condition leaves them (a speed mechanism of the placement,
/// Cluster::gather_candidates): a tree of maxima over GPU numbers, so that the GPUs with at least
/// some free memory come out in GPU order, each in O(log GPUs), the others never looked at.
class RoomIndex {
 public:
  explicit RoomIndex(std::size_t gpus) {
    while (leaves_ < gpus) leaves_ *= 2;
    tree_.assign(2 * leaves_, -1);
  }
  /// GPU g's free memory, or -1: not a candidate.
  core::Bytes room(std::int32_t g) const { return tree_[leaves_ + static_cast<std::size_t>(g)]; }
  void set(std::int32_t g, core::Bytes room) {
    std::size_t i = leaves_ + static_cast<std::size_t>(g);
    tree_[i] = room;
    for (i /= 2; i >= 1; i /= 2) tree_[i] = std::max(tree_[2 * i], tree_[2 * i + 1]);
  }
  /// Calls f(g) for every GPU whose room is at least `need`, in GPU order, while f returns true.
  template <typename F>
  void each_at_least(core::Bytes need, F&& f) const {
    stack_.clear();
    stack_.push_back(1);
    while (!stack_.empty()) {
      const std::size_t i = stack_.back();
      stack_.pop_back();
      if (tree_[i] < need) continue;
      if (i >= leaves_) {
        if (!f(static_cast<std::int32_t>(i - leaves_))) return;
        continue;
      }
      stack_.push_back(2 * i + 1);
      stack_.push_back(2 * i);
    }
  }

 private:
  std::size_t leaves_ = 1;
  std::vector<core::Bytes> tree_;
  mutable std::vector<std::size_t> stack_;
};

}  // namespace salus::cluster
