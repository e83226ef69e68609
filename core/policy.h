#pragma once
/// The interface every scheduling policy implements. Policies never read a clock or an executor:
/// they receive a read-only view of the state (including `now`) and return a decision.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "core/job.h"
#include "core/units.h"

namespace salus::core {

/// How the ephemeral region is organised for a run.
enum class LaneMode : std::uint8_t {
  kExclusive,  ///< one job at a time on the whole GPU (no sharing)
  kSingle,     ///< one lane shared by every admitted job (time sharing)
  kAuto,       ///< lanes opened per Algorithm 1, running concurrently
};
const char* to_string(LaneMode m);

/// Read-only state given to a policy.
struct SchedulerView {
  TimeNs now = 0;
  std::span<const JobSpec> specs;
  std::span<const JobState> states;
};

/// One lane as a policy sees it: its admitted, unfinished jobs in admission order.
struct LaneSnapshot {
  LaneId id = kNoLane;
  std::span<const JobIndex> jobs;
  JobIndex last_job = kNoJob;  ///< the job that ran the lane's previous iteration
};

/// Which job runs next in a lane, and for how many iterations this choice stands if no other
/// event happens meanwhile (arrival, admission, finish, lane move). The loop interrupts a run at
/// the next iteration boundary when such an event touches the lane, so a policy only has to be
/// right about the undisturbed case; returning 1 is always correct, only slower.
struct Decision {
  JobIndex job = kNoJob;
  std::int64_t max_iterations = 1;
};

class Policy {
 public:
  virtual ~Policy() = default;
  virtual std::string_view name() const = 0;
  /// One line for --help.
  virtual std::string_view description() const = 0;
  /// The lane mode used when the run does not choose one.
  virtual LaneMode default_lane_mode() const = 0;
  /// Whether the policy can run in the given lane mode.
  virtual bool supports(LaneMode mode) const = 0;
  /// Chooses among lane.jobs (never empty). Called at iteration boundaries of the lane.
  virtual Decision choose(const SchedulerView& view, const LaneSnapshot& lane) const = 0;
};

/// Tie-break used by every policy: earlier arrival, then earlier in the trace (the job's rank in
/// arrival order, assigned when it arrives).
inline bool earlier_submitted(const SchedulerView& v, JobIndex a, JobIndex b) {
  return v.states[static_cast<std::size_t>(a)].submit_rank < v.states[static_cast<std::size_t>(b)].submit_rank;
}

}  // namespace salus::core
