#pragma once
/// The replicas a cluster's GPUs run (cluster_model.h): one slot per replica of every job that has
/// arrived and not yet ended, and nothing for the others, so that the run holds state for the jobs
/// in the system rather than for the whole trace (a job of k GPUs has k replicas; a 1-GPU job is
/// its own). A slot is the replica's JobIndex in every GPU's Scheduler, simulator and policy; once
/// its job has ended (its state merged into the job's outcome) the slot is free for the next
/// arrival. The table grows by doubling: after a growth its spans have moved, and every holder of
/// them must be given the new ones (Scheduler::rebase, SimExecutor::rebase) before the new slots
/// are used.
#include <cstdint>
#include <span>
#include <vector>

#include "core/job.h"

namespace salus::cluster {

class ReplicaTable {
 public:
  /// A slot for replica `pos` of input job `owner` (`gang`: its gang, -1 for a 1-GPU job), its
  /// spec a copy of the job's and its state fresh. Lowest free slot first.
  core::JobIndex add(const core::JobSpec& spec, core::JobIndex owner, std::int32_t gang, std::int32_t pos);
  /// The replica's job has ended and its state was read: the slot may be given again.
  void free(core::JobIndex r);
  /// True once after each growth (the spans below moved and grew).
  bool take_grown() {
    const bool g = grown_;
    grown_ = false;
    return g;
  }
  std::span<const core::JobSpec> specs() const { return specs_; }
  std::span<core::JobState> states() { return states_; }
  std::size_t size() const { return specs_.size(); }
  const core::JobSpec& spec(core::JobIndex r) const { return specs_[at(r)]; }
  core::JobState& state(core::JobIndex r) { return states_[at(r)]; }
  const core::JobState& state(core::JobIndex r) const { return states_[at(r)]; }
  /// The input job of a slot in use; kNoJob for a free one.
  core::JobIndex owner(core::JobIndex r) const { return owner_[at(r)]; }
  std::int32_t gang(core::JobIndex r) const { return gang_[at(r)]; }
  std::int32_t pos(core::JobIndex r) const { return pos_[at(r)]; }

 private:
  static std::size_t at(core::JobIndex r) { return static_cast<std::size_t>(r); }
  void grow();

  std::vector<core::JobSpec> specs_;
  std::vector<core::JobState> states_;
  std::vector<core::JobIndex> owner_;
  std::vector<std::int32_t> gang_;
  std::vector<std::int32_t> pos_;
  std::vector<core::JobIndex> free_;  // free slots, a min-heap: the lowest is given first (the table's used part stays dense)
  bool grown_ = false;
};

}  // namespace salus::cluster
