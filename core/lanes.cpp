#include "core/lanes.h"

#include <algorithm>
#include <string>

#include "core/errors.h"

namespace salus::core {

const char* to_string(LaneChoice c) {
  switch (c) {
    case LaneChoice::kNewLane: return "new_lane";
    case LaneChoice::kExistingLane: return "existing_lane";
    case LaneChoice::kGrownLane: return "grown_lane";
    case LaneChoice::kNotFound: return "not_found";
  }
  return "?";
}

LaneManager::LaneManager(Bytes capacity, int max_lanes, bool shrink, Bytes alignment)
    : alignment_(alignment),
      capacity_(alignment > 0 ? capacity / alignment * alignment : capacity),
      max_lanes_(max_lanes),
      shrink_(shrink) {
  SALUS_INVARIANT(alignment >= 1, "alignment >= 1", std::to_string(alignment));
  SALUS_INVARIANT(capacity_ > 0, "positive capacity", std::to_string(capacity) + " aligned to " + std::to_string(alignment));
  SALUS_INVARIANT(max_lanes >= 0, "max_lanes >= 0", std::to_string(max_lanes));
}

FindLaneResult LaneManager::find_lane(Bytes p, Bytes e) const {
  p = aligned(p);
  e = aligned(e);
  const Bytes used = persistent_ + p + lanes_total_;
  // 1. Open a new lane.
  const bool may_open = max_lanes_ == 0 || static_cast<int>(lanes_.size()) < max_lanes_;
  if (may_open && used + e <= capacity_) return {LaneChoice::kNewLane, next_id_};
  // 2. Best-fitting existing lane. Among lanes of the same size the one with the fewest jobs, so
  //    that equal lanes share the work (jobs in one lane run one after another); lanes_ is in
  //    opening order, so strict '<' keeps the first on full ties.
  if (used <= capacity_) {
    const Lane* best = nullptr;
    for (const Lane& l : lanes_) {
      if (l.size >= e &&
          (best == nullptr || l.size < best->size || (l.size == best->size && l.refs < best->refs))) {
        best = &l;
      }
    }
    if (best != nullptr) return {LaneChoice::kExistingLane, best->id};
  }
  // 3. Grow the smallest lane for which the safety condition still holds. Only lanes smaller than
  //    E qualify: setting a larger lane to E would shrink it under the jobs it already holds.
  const Lane* grow = nullptr;
  for (const Lane& l : lanes_) {
    if (l.size < e && used - l.size + e <= capacity_ && (grow == nullptr || l.size < grow->size)) grow = &l;
  }
  if (grow != nullptr) return {LaneChoice::kGrownLane, grow->id};
  return {LaneChoice::kNotFound, kNoLane};
}

Bytes LaneManager::ephemeral_floor() const {
  Bytes floor = capacity_;
  for (const Lane& l : lanes_) {
    if (l.offset != kUnplaced) floor = std::min(floor, l.offset);
  }
  return floor;
}

Bytes LaneManager::find_hole(Bytes size, Bytes limit) const {
  Bytes start = 0;
  for (const auto& [offset, len] : blocks_) {
    if (offset - start >= size) break;
    start = offset + len;
  }
  return start + size <= limit ? start : kUnplaced;
}

bool LaneManager::persistent_fits_now(Bytes p) const { return find_hole(aligned(p), ephemeral_floor()) != kUnplaced; }

FindLaneResult LaneManager::place(Bytes p, Bytes e) const {
  SALUS_INVARIANT(p >= 0 && e >= 0, "non-negative demands", std::to_string(p) + ", " + std::to_string(e));
  p = aligned(p);
  e = aligned(e);
  FindLaneResult r = find_lane(p, e);
  if (r.choice == LaneChoice::kNotFound) return {};
  Bytes lanes_after = lanes_total_;
  if (r.choice == LaneChoice::kNewLane) lanes_after += e;
  if (r.choice == LaneChoice::kGrownLane) lanes_after += e - lane(r.lane).size;
  // The block must sit below every lane as it is now and as it will be after this admission, and
  // the persistent top must stay below every lane target.
  const Bytes limit = std::min(ephemeral_floor(), capacity_ - lanes_after);
  const Bytes offset = find_hole(p, limit);
  if (offset == kUnplaced || persistent_top() > capacity_ - lanes_after) return {};
  r.persistent_offset = offset;
  return r;
}

FindLaneResult LaneManager::admit(Bytes p, Bytes e) {
  FindLaneResult r = place(p, e);
  if (r.choice == LaneChoice::kNotFound) return {};
  p = aligned(p);
  e = aligned(e);
  const Bytes offset = r.persistent_offset;
  if (p > 0) blocks_.emplace(offset, p);
  persistent_ += p;
  switch (r.choice) {
    case LaneChoice::kNewLane: {
      Lane l;
      l.id = next_id_++;
      l.size = e;
      l.refs = 1;
      if (shrink_) l.demands[e] = 1;
      lanes_.push_back(l);
      lanes_total_ += e;
      break;
    }
    case LaneChoice::kExistingLane: {
      Lane& l = at(r.lane);
      l.refs += 1;
      if (shrink_) ++l.demands[e];
      break;
    }
    case LaneChoice::kGrownLane: {
      Lane& l = at(r.lane);
      lanes_total_ += e - l.size;
      l.size = e;
      l.refs += 1;
      if (shrink_) ++l.demands[e];
      break;
    }
    case LaneChoice::kNotFound: break;
  }
  update_unsettled();
  return r;
}

void LaneManager::release(LaneId id, Bytes p, Bytes offset, Bytes e) {
  const int i = find(id);
  SALUS_INVARIANT(i >= 0, "released lane exists", "lane " + std::to_string(id));
  Lane& l = lanes_[static_cast<std::size_t>(i)];
  SALUS_INVARIANT(l.refs > 0, "lane reference count positive", "lane " + std::to_string(id));
  p = aligned(p);
  e = aligned(e);
  if (p > 0) {
    auto it = blocks_.end();
    if (offset != kUnplaced) {
      it = blocks_.find(offset);
    } else {
      for (auto b = blocks_.rbegin(); b != blocks_.rend(); ++b) {
        if (b->second == p) {
          it = std::next(b).base();
          break;
        }
      }
    }
    SALUS_INVARIANT(it != blocks_.end() && it->second == p, "released persistent block exists",
                    std::to_string(p) + " bytes at " + std::to_string(offset));
    blocks_.erase(it);
  }
  persistent_ -= p;
  if (shrink_) {
    const auto d = l.demands.find(e);
    SALUS_INVARIANT(d != l.demands.end(), "released job's E is one of its lane's demands",
                    "lane " + std::to_string(id) + ", E " + std::to_string(e));
    if (--d->second == 0) l.demands.erase(d);
  }
  if (--l.refs == 0) {
    SALUS_INVARIANT(!l.busy, "removed lane is idle", "lane " + std::to_string(id));
    lanes_total_ -= l.size;
    lanes_.erase(lanes_.begin() + i);
  } else if (shrink_ && l.demands.rbegin()->first < l.size) {
    // L_j = max E over the jobs left. Only the target shrinks now: the lane keeps its physical
    // region (placed_size) until settle() moves it, so nothing is overwritten mid-iteration.
    const Bytes to = l.demands.rbegin()->first;
    lanes_total_ -= l.size - to;
    l.size = to;
  }
  update_unsettled();
}

void LaneManager::page_out(Bytes p, Bytes offset) {
  p = aligned(p);
  if (p > 0) {
    const auto it = blocks_.find(offset);
    SALUS_INVARIANT(it != blocks_.end() && it->second == p, "paged-out persistent block exists",
                    std::to_string(p) + " bytes at " + std::to_string(offset));
    blocks_.erase(it);
  }
  persistent_ -= p;
}

Bytes LaneManager::page_in(Bytes p, Bytes at) {
  p = aligned(p);
  if (persistent_ + p + lanes_total_ > capacity_) return kUnplaced;
  const Bytes limit = std::min(ephemeral_floor(), capacity_ - lanes_total_);
  Bytes offset = at;
  if (at == kUnplaced) {
    offset = find_hole(p, limit);
    if (offset == kUnplaced) return kUnplaced;
  } else {
    // Undoing a page_out of this instant: the block's old place is still free.
    auto next = blocks_.lower_bound(at);
    SALUS_INVARIANT(at + p <= limit && (next == blocks_.end() || next->first >= at + p) &&
                        (next == blocks_.begin() || std::prev(next)->first + std::prev(next)->second <= at),
                    "a paged-out block returns to its free place", std::to_string(at));
  }
  if (p > 0) blocks_.emplace(offset, p);
  persistent_ += p;
  return offset;
}

void LaneManager::set_busy(LaneId id, bool busy) {
  Lane& l = at(id);
  SALUS_INVARIANT(!busy || !unsettled_ || (l.offset == target_offset(id) && l.placed_size == l.size),
                  "iterations start in a settled lane",
                  "lane " + std::to_string(id));
  l.busy = busy;
}

Bytes LaneManager::target_offset(LaneId id) const {
  Bytes top = capacity_;
  for (const Lane& l : lanes_) {
    top -= l.size;
    if (l.id == id) return top;
  }
  invariant_failed("lane exists", __FILE__, __LINE__, "lane " + std::to_string(id));
}

// A lane may take [offset, offset + size) when that stays above the persistent region and keeps
// the physical order of the placed lanes equal to their stack order (earlier-opened lanes higher
// up), which also rules out overlaps. Keeping the order is what guarantees progress: the topmost
// lane that must move up and the bottommost lane that must move down can always move once idle,
// so no two lanes ever wait for each other.
bool LaneManager::region_allowed(int index, Bytes offset, Bytes size) const {
  if (offset < persistent_top() || offset + size > capacity_) return false;
  for (int k = 0; k < static_cast<int>(lanes_.size()); ++k) {
    const Lane& o = lanes_[static_cast<std::size_t>(k)];
    if (k == index || o.offset == kUnplaced) continue;
    if (k < index ? o.offset < offset + size : o.offset + o.placed_size > offset) return false;
  }
  return true;
}

int LaneManager::settle(TimeNs now, std::vector<LaneMove>* log) {
  if (!unsettled_) return 0;
  int moves = 0;
  for (bool moved = true; moved;) {
    moved = false;
    Bytes top = capacity_;
    for (std::size_t k = 0; k < lanes_.size(); ++k) {
      Lane& l = lanes_[k];
      top -= l.size;
      if (l.busy || (l.offset == top && l.placed_size == l.size)) continue;
      if (!region_allowed(static_cast<int>(k), top, l.size)) continue;
      if (log) log->push_back(LaneMove{now, l.id, l.offset, l.placed_size, top, l.size});
      l.offset = top;
      l.placed_size = l.size;
      moved = true;
      ++moves;
    }
  }
  update_unsettled();
  return moves;
}

bool LaneManager::ready(LaneId id) const {
  const Lane& l = lane(id);
  return l.offset == target_offset(id) && l.placed_size == l.size;
}

const Lane& LaneManager::lane(LaneId id) const {
  const int i = find(id);
  SALUS_INVARIANT(i >= 0, "lane exists", "lane " + std::to_string(id));
  return lanes_[static_cast<std::size_t>(i)];
}

Lane& LaneManager::at(LaneId id) { return const_cast<Lane&>(static_cast<const LaneManager*>(this)->lane(id)); }

int LaneManager::find(LaneId id) const {
  for (std::size_t k = 0; k < lanes_.size(); ++k) {
    if (lanes_[k].id == id) return static_cast<int>(k);
  }
  return -1;
}

void LaneManager::update_unsettled() {
  unsettled_ = false;
  Bytes top = capacity_;
  for (const Lane& l : lanes_) {
    top -= l.size;
    if (l.offset != top || l.placed_size != l.size) {
      unsettled_ = true;
      return;
    }
  }
}

void LaneManager::check_invariants() const {
  Bytes sum = 0;
  for (const Lane& l : lanes_) {
    sum += l.size;
    SALUS_INVARIANT(l.refs > 0, "every lane has a job", "lane " + std::to_string(l.id));
  }
  SALUS_INVARIANT(sum == lanes_total_, "lane size accounting", std::to_string(sum) + " != " + std::to_string(lanes_total_));
  SALUS_INVARIANT(persistent_ + lanes_total_ <= capacity_, "safety condition: sum P + sum L <= C",
                  std::to_string(persistent_) + " + " + std::to_string(lanes_total_) + " > " + std::to_string(capacity_));
  SALUS_INVARIANT(max_lanes_ == 0 || static_cast<int>(lanes_.size()) <= max_lanes_, "lane cap", std::to_string(lanes_.size()));
  if (shrink_) {
    for (const Lane& l : lanes_) {
      std::int32_t jobs = 0;
      for (const auto& [e, count] : l.demands) jobs += count;
      SALUS_INVARIANT(jobs == l.refs && !l.demands.empty() && l.demands.rbegin()->first == l.size,
                      "lane size L_j = max E over its jobs", "lane " + std::to_string(l.id));
    }
  }
  Bytes block_end = 0, block_sum = 0;
  for (const auto& [offset, len] : blocks_) {
    SALUS_INVARIANT(offset >= block_end && len > 0, "layout: persistent blocks do not overlap", std::to_string(offset));
    SALUS_INVARIANT(offset % alignment_ == 0 && len % alignment_ == 0, "layout: persistent blocks aligned",
                    std::to_string(len) + " bytes at " + std::to_string(offset));
    block_end = offset + len;
    block_sum += len;
  }
  SALUS_INVARIANT(block_sum == persistent_, "persistent accounting", std::to_string(block_sum));
  SALUS_INVARIANT(block_end <= capacity_ - lanes_total_, "layout: persistent region below every lane target",
                  std::to_string(block_end) + " > " + std::to_string(capacity_ - lanes_total_));
  const Lane* above = nullptr;  // the nearest placed lane higher in the stack
  for (const Lane& l : lanes_) {
    if (l.offset == kUnplaced) continue;
    SALUS_INVARIANT(l.offset % alignment_ == 0 && l.placed_size % alignment_ == 0, "layout: lanes aligned",
                    "lane " + std::to_string(l.id) + " at " + std::to_string(l.offset));
    SALUS_INVARIANT(l.offset >= block_end && l.offset + l.placed_size <= capacity_,
                    "layout: lane between the persistent region and C", "lane " + std::to_string(l.id));
    SALUS_INVARIANT(above == nullptr || l.offset + l.placed_size <= above->offset,
                    "layout: lanes do not overlap and keep their stack order",
                    "lanes " + std::to_string(above ? above->id : -1) + ", " + std::to_string(l.id));
    above = &l;
  }
}

}  // namespace salus::core
