#pragma once
/// A speed mechanism of the cluster's placement (cluster/README.md, "Joint plans": "tried on every
/// GPU" counted incrementally): for each gang job waiting in the cluster queue, the GPUs that could
/// take one of its replicas now, recounted only on the GPUs touched since the last count. A GPU's
/// answer changes only at an instant it takes part in (its completions, a bind, its schedule), so
/// the others keep theirs: O(GPUs touched since) per count instead of O(GPUs). One answer moves
/// between touches: SRTF's whether a replica starts at once, joining a lane, reads the lane jobs'
/// remaining times at the instant, which fall, so such a yes may turn no (never the reverse: a
/// no stays no until a touch). Those GPUs are asked again at every count (Able::kYesForNow). The
/// answers are those of asking every GPU (ClusterOptions::tuning.incremental_gang_queue = false
/// asks every GPU; the tests compare the two, their results and their instants).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace salus::cluster {

/// The GPUs by their last touch, latest first, each with its touch's sequence number.
class TouchLog {
 public:
  explicit TouchLog(std::size_t gpus = 0) { reset(gpus); }
  void reset(std::size_t gpus);
  /// GPU g is touched: it moves to the head, with the next sequence number.
  void touch(std::int32_t g);
  /// The last sequence number given (0: none yet).
  std::uint64_t seq() const { return seq_; }
  /// Calls f(g) for every GPU touched after sequence number `after`, latest first.
  template <typename F>
  void each_since(std::uint64_t after, F&& f) const {
    for (std::int32_t g = head_; g >= 0 && seq_of_[static_cast<std::size_t>(g)] > after;
         g = next_[static_cast<std::size_t>(g)]) {
      f(g);
    }
  }

 private:
  std::vector<std::int32_t> prev_, next_;  // a list, -1 at its ends
  std::vector<std::uint64_t> seq_of_;
  std::int32_t head_ = -1;
  std::uint64_t seq_ = 0;
};

/// One waiting gang job's count: the GPUs that could take a replica, as of the instant whose
/// first touch had sequence number `seq` (valid once `known`).
struct AbleSet {
  std::vector<std::int32_t> gpus;
  std::vector<std::int32_t> for_now;  // of `gpus`, those whose yes may turn no between touches

  std::uint64_t seq = 0;
  bool known = false;
  /// The job left the cluster queue (placed or rejected): its count is not kept any more.
  void forget() {
    std::vector<std::int32_t>().swap(gpus);
    std::vector<std::int32_t>().swap(for_now);
    known = false;
  }
};

/// A GPU's answer: no, yes, or yes for now (it may turn no between the GPU's touches).
enum class Able : std::uint8_t { kNo, kYes, kYesForNow };

/// Brings `set` up to the instant whose first touch is `instant_seq`: every GPU of `gpus` asked
/// (`able(g)`) where the set is not known yet or `incremental` is false, else only those `log`
/// says were touched since the last count and those whose yes was for now. Returns how many GPUs
/// could take a replica.
class AbleCounter {
 public:
  std::size_t count(AbleSet& set, const TouchLog& log, std::uint64_t instant_seq, std::size_t gpus, bool incremental,
                    const std::function<Able(std::int32_t)>& able);

 private:
  std::vector<std::uint64_t> seen_;  // GPUs asked again at this count (by stamp)
  std::vector<std::int32_t> again_;  // those GPUs
  std::uint64_t stamp_ = 0;
};

}  // namespace salus::cluster
