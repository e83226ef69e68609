#pragma once
/// GPU lanes: Algorithm 1 of the Salus paper (arXiv text) and the memory layout it implies.
///
/// The capacity C is split into a persistent region growing up from offset 0 and an ephemeral
/// region growing down from offset C. The ephemeral region is divided into lanes, stacked from the
/// top in the order they were opened. A lane's size L_j is set when it opens and when FindLane
/// grows it; with shrinking on (the paper's L_j = max E_i over the jobs in lane j), it also
/// shrinks to the largest E of the jobs left when its largest job finishes. The job-level safety
/// condition  sum_i P_i + sum_j L_j <= C  holds at every instant.
///
/// Layout and auto-defragmentation. Each lane has a target region (lanes packed from the top in
/// opening order) and a physical region (where it is now). A lane's physical region changes only
/// while no iteration runs in it (at an iteration boundary): a lane below a removed one moves up,
/// lanes below a grown one move down, a new lane is placed once its target region is free. Every
/// change is recorded as a LaneMove; a lane that shrinks keeps its top and moves its bottom up at
/// its next boundary, and the lanes below it follow (each recorded as a move). Iterations may start in a lane only when it sits at its target.
/// The persistent region holds one block per admitted job, placed first-fit from offset 0. Its top
/// (the end of the highest block) always stays below every lane's current region and below
/// C - sum L, so lanes can always reach their targets. Admission therefore needs, besides
/// FindLane's sums, a hole of P bytes below the lowest placed lane ("ephemeral floor") with the
/// top staying below C - sum L after the admission. A lane still waiting to move up keeps the
/// floor low, which is why Algorithm 1 reprocesses its queue when a lane moves. Fragmentation of
/// the persistent region can delay an admission that the sums alone would allow, as it would on
/// the real device.
///
/// Alignment. With an alignment a (256 bytes in every run: CUDA faults on misaligned float data),
/// every P and E is rounded up to a multiple of a and the capacity down, so that every persistent
/// block and every lane starts on a multiple of a whatever the trace says; all sums (sum P, L_j,
/// the safety condition) are in these rounded units. With a = 1 the sizes are taken as given.
///
/// This class knows nothing about time sources, executors or policies: the real backend uses the
/// same code to lay out its memory pool. Not thread-safe.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/job.h"
#include "core/units.h"

namespace salus::core {

/// Which branch of FindLane produced a lane.
enum class LaneChoice : std::uint8_t { kNewLane, kExistingLane, kGrownLane, kNotFound };
const char* to_string(LaneChoice c);

inline constexpr Bytes kUnplaced = -1;

/// One lane. Offsets are byte offsets into the capacity, [offset, offset + size).
struct Lane {
  LaneId id = kNoLane;
  Bytes size = 0;               ///< L_j: target size (the largest E of its jobs; without shrinking, the
                                ///< largest E it was opened or grown for)
  Bytes offset = kUnplaced;     ///< current physical offset, kUnplaced until first placed
  Bytes placed_size = 0;        ///< size of the physical region it holds now
  std::int32_t refs = 0;        ///< admitted, unfinished jobs assigned to it
  bool busy = false;            ///< an iteration is in flight: the lane cannot move
  /// With shrinking: E of each of its jobs -> how many (the largest key is what L_j must hold).
  std::map<Bytes, std::int32_t> demands;
};

/// A change of a lane's physical region, recorded for output. from_offset is kUnplaced when the
/// lane is placed for the first time.
struct LaneMove {
  TimeNs time_ns = 0;
  LaneId lane = kNoLane;
  Bytes from_offset = kUnplaced;
  Bytes from_size = 0;
  Bytes to_offset = 0;
  Bytes to_size = 0;
};

/// Result of FindLane. For kNewLane, `lane` is the id the lane will get. After admit(),
/// persistent_offset is where the job's persistent block starts.
struct FindLaneResult {
  LaneChoice choice = LaneChoice::kNotFound;
  LaneId lane = kNoLane;
  Bytes persistent_offset = kUnplaced;
};

class LaneManager {
 public:
  /// capacity: C in bytes (rounded down to a multiple of `alignment`). max_lanes: 0 for unlimited,
  /// 1 for a single lane shared by all jobs. shrink: a lane's size follows the largest E of its
  /// jobs down when that job finishes (the paper's L_j = max E); off, a lane keeps the largest
  /// size it ever had until it is removed. alignment: see above, >= 1.
  LaneManager(Bytes capacity, int max_lanes, bool shrink = false, Bytes alignment = 1);

  /// `bytes` rounded up to the alignment: what a P or E of that size takes in the layout.
  Bytes aligned(Bytes bytes) const { return (bytes + alignment_ - 1) / alignment_ * alignment_; }
  /// True when P + E, each rounded up, fits the (rounded-down) capacity: a job that does not can
  /// never be admitted.
  bool fits_alone(Bytes persistent, Bytes ephemeral) const {
    return aligned(persistent) + aligned(ephemeral) <= capacity_;
  }

  /// FindLane(P, E) of Algorithm 1 on the current sums, without changing anything:
  ///  1. open a new lane of size E if  sum P + P + sum L + E <= C  (and the lane cap allows);
  ///  2. else the best-fitting existing lane: the smallest L_j >= E (ties: fewest jobs, then
  ///     opened first), if
  ///     sum P + P + sum L <= C;
  ///  3. else grow the smallest lane r with L_r < E (ascending L_r, ties: opened first) with
  ///     sum P + P + sum L - L_r + E <= C  to size E;
  ///  4. else not found.
  FindLaneResult find_lane(Bytes persistent, Bytes ephemeral) const;

  /// True when a block of P bytes fits in the persistent region below the lowest placed lane now.
  bool persistent_fits_now(Bytes persistent) const;

  /// What admit() would do now, without doing it: FindLane and the physical checks above; the
  /// result's persistent_offset is where the block would go (kNotFound: admit() would refuse).
  FindLaneResult place(Bytes persistent, Bytes ephemeral) const;

  /// Admits a job: FindLane, and the physical checks above. On success places its persistent
  /// block, assigns the lane (opening or growing it) and returns the result; otherwise returns
  /// kNotFound and changes nothing. P and E are rounded up to the alignment (here and in every
  /// other method taking them).
  FindLaneResult admit(Bytes persistent, Bytes ephemeral);

  /// A job of `lane` finished: frees its persistent block (P bytes at persistent_offset, as
  /// admit() returned), drops the lane's reference, removes the lane when it was the last one
  /// (Algorithm 1 JobFinish). With persistent_offset == kUnplaced, frees the highest block of P
  /// bytes (for callers that account sizes only). With shrinking, `ephemeral` is the job's E
  /// (required) and the lane shrinks to the largest E of the jobs left; its new region is taken
  /// at its next settle().
  void release(LaneId lane, Bytes persistent, Bytes persistent_offset = kUnplaced, Bytes ephemeral = -1);

  /// Paging (the paper's failsafe): a paused job's persistent block leaves device memory (it stays
  /// in its lane); sum P drops by P. `persistent_offset` is where admit() or page_in() put it.
  void page_out(Bytes persistent, Bytes persistent_offset);
  /// Brings a paged-out block back: needs sum P + P + sum L <= C and a hole below every lane as it
  /// is now and as its target (as admit()). Returns the new offset, or kUnplaced (nothing changed).
  /// With `at` given, the block goes back exactly there (undoing a page_out of this instant).
  Bytes page_in(Bytes persistent, Bytes at = kUnplaced);

  /// Marks an iteration in flight (or not) in the lane.
  void set_busy(LaneId lane, bool busy);

  /// Moves every idle lane whose physical region differs from its target and whose target region
  /// is free, repeating until nothing more can move. Appends the moves to `log` (if not null)
  /// stamped with `now`. Returns the number of moves.
  int settle(TimeNs now, std::vector<LaneMove>* log);

  /// True when the lane sits at its target region: iterations may start in it.
  bool ready(LaneId lane) const;
  /// True when some lane is not at its target yet.
  bool unsettled() const { return unsettled_; }

  const Lane& lane(LaneId id) const;
  bool has_lane(LaneId id) const { return find(id) >= 0; }
  /// Lanes in stack order: the first opened (topmost) first.
  const std::vector<Lane>& lanes() const { return lanes_; }
  /// Target offset of a lane (packed from the top in opening order).
  Bytes target_offset(LaneId id) const;

  /// C, rounded down to the alignment.
  Bytes capacity() const { return capacity_; }
  Bytes alignment() const { return alignment_; }
  Bytes persistent_bytes() const { return persistent_; }
  /// End of the highest persistent block (0 when none).
  Bytes persistent_top() const { return blocks_.empty() ? 0 : blocks_.rbegin()->first + blocks_.rbegin()->second; }
  Bytes lanes_bytes() const { return lanes_total_; }
  /// Lowest offset held by a placed lane (C when none): the persistent region must stay below it.
  Bytes ephemeral_floor() const;
  int max_lanes() const { return max_lanes_; }
  bool shrinks() const { return shrink_; }

  /// Checks the safety condition and the layout (no overlap, inside [0, C)); throws
  /// std::logic_error naming the broken invariant.
  void check_invariants() const;

 private:
  int find(LaneId id) const;
  Lane& at(LaneId id);
  bool region_allowed(int index, Bytes offset, Bytes size) const;
  /// Lowest offset where `size` bytes fit between persistent blocks with the block ending at or
  /// below `limit`; kUnplaced when there is none.
  Bytes find_hole(Bytes size, Bytes limit) const;
  void update_unsettled();

  Bytes alignment_;
  Bytes capacity_;
  int max_lanes_;
  bool shrink_;
  Bytes persistent_ = 0;
  Bytes lanes_total_ = 0;
  LaneId next_id_ = 0;
  bool unsettled_ = false;
  std::vector<Lane> lanes_;
  std::map<Bytes, Bytes> blocks_;  // persistent blocks: offset -> size (zero-size blocks are not kept)
};

}  // namespace salus::core
