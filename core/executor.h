#pragma once
/// The seam between the scheduling loop and whatever runs iterations: the discrete-event
/// simulator, the real GPU backend, or a fake in tests. The executor owns the clock.
#include <cstdint>
#include <string>
#include <vector>

#include "core/errors.h"
#include "core/job.h"
#include "core/units.h"

namespace salus::core {

/// Run `iterations` consecutive iterations of `job` in `lane`. The first one is lengthened by
/// `extra_ns` (JobSpec::first_iter_extra_ns on the job's first dispatch; a real executor takes the
/// time it takes). Switching cost is the executor's own: it knows which job its lane ran last (the
/// simulator adds its configured cost when that job differs; a real executor pays what it pays).
/// The lane's ephemeral region is [lane_offset, lane_offset + lane_size) of the pool for the whole run.
struct Dispatch {
  JobIndex job = kNoJob;
  LaneId lane = kNoLane;
  std::int64_t iterations = 0;
  TimeNs extra_ns = 0;
  Bytes lane_offset = 0;
  Bytes lane_size = 0;
};

/// A dispatched run that ended: all its iterations, or fewer when it was stopped at a boundary
/// or failed. start_ns/end_ns are on the executor's clock.
struct Completion {
  JobIndex job = kNoJob;
  LaneId lane = kNoLane;
  std::int64_t iterations_done = 0;
  TimeNs start_ns = 0;
  TimeNs end_ns = 0;
  bool failed = false;      ///< the job cannot go on (e.g. kernel failure, lane overflow)
  std::string error;        ///< why, when failed
  /// The device itself is lost (e.g. a sticky CUDA error: the context can run nothing more):
  /// implies failed. The loop dispatches and admits nothing more, lets the runs in flight end,
  /// marks every unfinished job failed with `error` and returns.
  bool fatal = false;
  TimeNs switch_ns = 0;     ///< switching cost the executor added to the run's first iteration
  bool plan = false;        ///< the end of a plan (start_plan); `job` is the job of its last iteration
};

/// One job of a rotation plan: its iterations start at service levels level + m * step
/// (m = 0, 1, ...), and the plan runs the iterations of all its jobs in order of (level, order):
/// the policy's choices until the next event (Policy::plan). `remaining` bounds m; `extra_ns`
/// lengthens the job's next iteration (JobSpec::first_iter_extra_ns before its first one).
struct PlanJob {
  JobIndex job = kNoJob;
  TimeNs level = 0;
  TimeNs step = 1;
  std::int64_t order = 0;
  std::int64_t remaining = 0;
  TimeNs extra_ns = 0;
};

/// A plan for an idle lane, the only one with work: the executor runs its iterations in order,
/// consecutive iterations of one job as one run, paying its switching cost between different
/// jobs exactly as it would for runs dispatched one by one, and stops after the last iteration
/// that ends at or before `deadline` (the next arrival) or after the iteration that finishes a
/// job (remaining reaches 0), whichever comes first.
struct PlanDispatch {
  LaneId lane = kNoLane;
  JobIndex last_job = kNoJob;  ///< the job that ran the lane's previous iteration
  TimeNs deadline = kNever;
  Bytes lane_offset = 0;
  Bytes lane_size = 0;
  std::vector<PlanJob> jobs;
};

/// What a plan did, per PlanDispatch::jobs entry and in total.
struct PlanReport {
  std::vector<std::int64_t> iterations;  ///< iterations run of each job
  std::vector<TimeNs> busy_ns;           ///< lane time of each job's runs (JobState::gpu_time_ns)
  std::vector<TimeNs> first_start_ns;    ///< start of each job's first run in the plan, or -1
  std::vector<TimeNs> switch_ns;         ///< switching cost paid by each job's runs (the timeline's rotation rows)
  std::int64_t runs = 0;                 ///< runs (maximal stretches of one job)
  std::int64_t switches = 0;             ///< runs of a job other than the lane's previous one
  std::int64_t closed_form = 0;          ///< of the iterations, those counted in closed form (speed only)
  JobIndex last_job = kNoJob;
  TimeNs end_ns = 0;
};

class Executor {
 public:
  virtual ~Executor() = default;

  /// Current time on the executor's clock (simulated or monotonic), ns since the run started.
  virtual TimeNs now() const = 0;

  /// A job was admitted: its persistent memory (P bytes at `persistent_offset` of the memory
  /// layout, below every lane) becomes resident. Called before its first dispatch.
  virtual void admit(JobIndex job, const JobSpec& spec, Bytes persistent_offset) {
    (void)job;
    (void)spec;
    (void)persistent_offset;
  }
  /// A job finished: its persistent memory is released.
  virtual void release(JobIndex job) { (void)job; }
  /// The lane is gone (its last job finished, Algorithm 1's ref == 0). Lane ids are never reused,
  /// so no run starts in it again: an executor drops what it keeps per lane (one lane per job or
  /// so under PACK and FIFO: kept, it would grow with every job of the trace). Called after the
  /// release of its last job.
  virtual void lane_closed(LaneId lane) { (void)lane; }

  /// Paging (SchedulerOptions::paging, the paper's failsafe): a paused job's persistent memory
  /// moves to host memory (page_out), and back to `persistent_offset` before it runs again
  /// (page_in). The executor charges each transfer to the job's lane: the lane's next run starts
  /// that much later. The loop pages only on an executor that supports it.
  virtual bool supports_paging() const { return false; }
  virtual void page_out(JobIndex job, LaneId lane) {
    (void)job;
    (void)lane;
  }
  virtual void page_in(JobIndex job, LaneId lane, Bytes persistent_offset) {
    (void)job;
    (void)lane;
    (void)persistent_offset;
  }

  /// Starts a run in an idle lane. At most one run per lane at a time.
  virtual void start(const Dispatch& d) = 0;

  /// Asks the lane's run to end at its next iteration boundary (at or after now). No-op when
  /// the lane is idle. The run then completes with fewer iterations than dispatched.
  virtual void stop_at_boundary(LaneId lane) = 0;

  /// The optional part for runs taken in one go (Planning, below): null, the default, where the
  /// executor takes every run as dispatched (a real executor); the loop then batches no run
  /// across an instant and plans nothing.
  virtual class Planning* planning() { return nullptr; }

  /// Waits until at least one run completes or the clock reaches `deadline`, whichever is
  /// first, and appends every run completed by then to `out`. `deadline` may be kNever only
  /// while some run is in flight. A real-time executor may return earlier with nothing (the loop
  /// then checks its stop flag and waits again).
  virtual void wait(TimeNs deadline, std::vector<Completion>& out) = 0;
};

/// What an executor that takes runs in one go offers the loop (the simulator: a run of many
/// iterations batched across instants, a policy's rotation as one plan), and a driver of several
/// loops under one clock (cluster/, through Scheduler) asks of it. Plans equal the runs they stand
/// for; the loop's results never depend on whether an executor has this part.
class Planning {
 public:
  virtual ~Planning() = default;

  /// If the lane's run has an iteration boundary exactly at now (not its last), ends the run
  /// there and returns true; the completion comes with the next wait(now). The loop calls it
  /// before admitting jobs, so that a run batched across this instant behaves exactly as if it
  /// had been dispatched iteration by iteration.
  virtual bool end_if_at_boundary(LaneId lane) = 0;

  /// Where the lane's run in flight reaches its first iteration boundary at or after t (where
  /// Executor::stop_at_boundary would end it, or its own end if that comes first): the iterations
  /// of the run that have ended by then, >= 1. kUnknownBoundary where the executor cannot tell (an
  /// idle lane; a plan), kHeldLane where no newcomer can run in the lane before the run ends (a
  /// driver's run that holds the lane for something outside this loop). t >= now(): a driver of
  /// several executors under one clock asks at its own instant, which an executor not stepped
  /// since may not have reached (nothing changes its runs' pace before). Asked only by
  /// Scheduler::starts_at_once.
  static constexpr std::int64_t kUnknownBoundary = -1;
  static constexpr std::int64_t kHeldLane = -2;
  virtual std::int64_t iterations_by_next_boundary(LaneId lane, TimeNs t) const = 0;

  /// Whether the loop may plan at all (start_plan); the calls above hold either way.
  virtual bool supports_plans() const { return true; }
  /// Asked before each plan, ahead of the policy's Policy::plan: false when start_plan would
  /// refuse any plan offered now (a driver's reasons: it may compute the plans of several loops
  /// together here, from each one's Scheduler::offer_plan). Plans equal the runs they stand for,
  /// so the answer changes only how much work the loop does, never a result. The loop plans only
  /// when the lane is the only one and nothing runs, so the lane runs alone.
  virtual bool plans_now() const { return true; }
  /// Plans rotate at least two jobs, unless the executor asks for plans of a lane that holds one
  /// (a driver that plans such a lane with other loops'). Asked where the lane holds one job,
  /// before plans_now.
  virtual bool plans_lone_job() const { return false; }
  /// Runs the plan in the idle lane and fills `report`; the plan completes at report.end_ns with
  /// the next wait (a Completion with plan set). Returns false, and starts nothing, when fewer
  /// than two iterations of it would run. A plan is never cut: it ends at or before the deadline.
  virtual bool start_plan(const PlanDispatch& p, PlanReport& report) = 0;
  /// Takes back the plan just started in `lane` (start_plan at now(), the clock not moved since):
  /// afterwards the lane is idle and the executor as it was before start_plan. Only a driver that
  /// runs plans speculatively calls it (Scheduler::replan).
  virtual void cancel_plan(LaneId lane) = 0;
  /// The job that ran the lane's previous iteration finished (the lane stays): the lane's last
  /// job is kEndedJob from now on, for the executor as for the loop (PlanDispatch::last_job).
  virtual void last_job_ended(LaneId lane) = 0;
};

}  // namespace salus::core
