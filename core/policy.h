#pragma once
/// The interface every scheduling policy implements. Policies never read a clock or an executor:
/// they receive a read-only view of the state (including `now`) and return a decision. A policy
/// object serves one run at a time: the loop calls begin() first, then the event hooks, so a
/// policy keeps its own per-job state (FAIR's service counter, LAS's attained service) and the
/// loop knows nothing of it.
#include <cstdint>
#include <span>
#include <vector>
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

/// One lane as a policy sees it: its admitted, unfinished jobs in admission order (at choose():
/// only those with work ready — an inference job waiting for its next request is left out).
struct LaneSnapshot {
  LaneId id = kNoLane;
  std::span<const JobIndex> jobs;
  JobIndex last_job = kNoJob;  ///< the job that ran the lane's previous iteration
  JobIndex running = kNoJob;   ///< the job with a run in flight in the lane (hooks only)
};

/// Which job runs next in a lane, and for how many iterations this choice stands if no other
/// event happens meanwhile (arrival, admission, finish, lane move). The loop interrupts a run at
/// the next iteration boundary when such an event touches the lane, so a policy only has to be
/// right about the undisturbed case; returning 1 is always correct, only slower: the simulator
/// gives a batched run exactly (to the nanosecond) the iteration boundaries of runs dispatched
/// one iteration at a time, under every interference model (tests/sim/loop_stress_test.cpp).
/// A choice that stands for k iterations must be the choice the policy would make at each of
/// the k - 1 boundaries inside the run, given only the hooks those iterations trigger.
struct Decision {
  JobIndex job = kNoJob;
  std::int64_t max_iterations = 1;
};

/// One job of a rotation (Policy::plan): the policy's next choices run its iterations at service
/// levels level + m * step, m = 0, 1, ..., all jobs' iterations merged by (level, order).
struct RotationEntry {
  JobIndex job = kNoJob;
  TimeNs level = 0;
  TimeNs step = 1;  ///< > 0
  std::int64_t order = 0;
};

/// A run of a job that ended (all its iterations, or fewer when it was cut or failed).
struct RunReport {
  JobIndex job = kNoJob;
  LaneId lane = kNoLane;
  std::int64_t iterations = 0;  ///< iterations completed by this run
  TimeNs start_ns = 0;
  TimeNs end_ns = 0;
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

  /// A run starts: forget every earlier run's state. `specs` outlives the run.
  virtual void begin(std::span<const JobSpec> specs) { (void)specs; }

  /// Admission order (Algorithm 1's queue Q): the pending queue is visited by increasing key,
  /// ties by arrival order (earlier arrival, then trace order). Asked once, when the job arrives
  /// (it has run nothing then). Default: 0 for all, i.e. arrival order.
  virtual std::int64_t admission_key(const SchedulerView& view, JobIndex job) const {
    (void)view;
    (void)job;
    return 0;
  }

  /// How a job that joins a lane holding jobs fares there: it waits behind them (kWaits: PACK, where
  /// the earliest admitted runs; the default), it takes its turn from the lane's next boundary on
  /// (kTakesTurn: FAIR's rotation, LAS's least attained service), or starts_at_once decides by
  /// the policy's order (kByOrder: SRTF, priority). A cluster binds a job to a GPU only where it
  /// starts at once (cluster/README.md, "When a job is bound"); it asks this once per run.
  enum class Newcomer : std::uint8_t { kWaits, kTakesTurn, kByOrder };
  virtual Newcomer newcomer() const { return Newcomer::kWaits; }
  /// kByOrder only: whether `job`, joining `lane` now (lane.jobs: its admitted, unfinished jobs,
  /// not empty; `job` not among them, arrived and not yet run), would be chosen at the lane's
  /// next iteration boundary, judged on the jobs' states at that boundary (the running job's
  /// iterations done by then, where the executor can tell: Scheduler::starts_at_once). The answer
  /// must be monotone in admission order: a job later in (admission_key, arrival) order than one
  /// that does not start at once in a lane does not either.
  virtual bool starts_at_once(const SchedulerView& view, const LaneSnapshot& lane, JobIndex job) const {
    (void)view;
    (void)lane;
    (void)job;
    return false;
  }

  /// `job` was admitted (its persistent memory is resident) and joined `lane`, whose snapshot
  /// lists its jobs after the join and the job running in it, if any. on_admit comes first.
  virtual void on_admit(const SchedulerView& view, JobIndex job) {
    (void)view;
    (void)job;
  }
  virtual void on_join(const SchedulerView& view, const LaneSnapshot& lane, JobIndex job) {
    (void)view;
    (void)lane;
    (void)job;
  }
  /// A run ended; JobState::iterations_done already counts its iterations.
  virtual void on_iterations_done(const SchedulerView& view, const RunReport& run) {
    (void)view;
    (void)run;
  }
  /// `job` left `lane` for good (done or failed); it is no longer in the lane's jobs.
  virtual void on_finish(const SchedulerView& view, JobIndex job, LaneId lane) {
    (void)view;
    (void)job;
    (void)lane;
  }

  /// Chooses among lane.jobs (never empty). Called at iteration boundaries of the lane.
  virtual Decision choose(const SchedulerView& view, const LaneSnapshot& lane) = 0;

  /// Optional, for speed: describes the policy's choices at every iteration boundary of the lane
  /// until the next event (arrival, admission, finish) as a rotation, one entry per job of
  /// lane.jobs, such that the iteration chosen at each boundary is the least (level, order) not
  /// yet run, counting only the hooks those iterations trigger (a choice of k iterations must
  /// be these k in a row, exactly as for Decision). The loop hands it to an executor that runs
  /// it in one go (Planning::start_plan) and reports it with on_plan_done instead of one
  /// on_iterations_done per run. Default: no plan (the loop asks choose at every boundary).
  virtual bool plan(const SchedulerView& view, const LaneSnapshot& lane, std::vector<RotationEntry>& out) {
    (void)view;
    (void)lane;
    (void)out;
    return false;
  }
  /// A plan ran: iterations[i] iterations of entries[i].job (JobState::iterations_done already
  /// counts them), in the order plan described.
  virtual void on_plan_done(const SchedulerView& view, LaneId lane, std::span<const RotationEntry> entries,
                            std::span<const std::int64_t> iterations) {
    (void)view;
    (void)lane;
    (void)entries;
    (void)iterations;
  }
};

/// Tie-break used by every policy: earlier arrival, then earlier in the trace (the job's rank in
/// arrival order, assigned when it arrives).
inline bool earlier_submitted(const SchedulerView& v, JobIndex a, JobIndex b) {
  return v.states[static_cast<std::size_t>(a)].submit_rank < v.states[static_cast<std::size_t>(b)].submit_rank;
}

}  // namespace salus::core
