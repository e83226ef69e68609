#pragma once
/// The scheduling loop, written once and driven by any Executor (see executor.h).
///
/// Events: job arrival, run completion (iteration boundary), job finish, lane move. At each
/// instant the loop takes every arrival and completion of that instant, then runs Algorithm 1's
/// ProcessRequests over the pending queue in the policy's admission order (again after every lane
/// move), then asks the policy which job runs next in each idle lane. Decisions happen only at
/// iteration boundaries, arrivals and finishes. The loop tells the policy of every admission,
/// join, run end and finish (Policy hooks); what a policy remembers about jobs is its own.
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/executor.h"
#include "core/job.h"
#include "core/lanes.h"
#include "core/policy.h"
#include "core/units.h"

namespace salus::core {

/// What a progress hook is shown (SchedulerOptions::progress, cluster::ClusterOptions::progress):
/// the run so far, for a caller that reports it. The hook may read the states; it must not keep
/// the span past the call.
struct Progress {
  TimeNs now = 0;               ///< the executor's clock
  std::int64_t events = 0;      ///< loop steps so far
  std::span<const JobState> jobs;  ///< every job's state (a cluster: a gang job's merged, see cluster.h)
};
/// Called every SchedulerOptions::progress_every (by default kProgressEvery) loop steps when set.
/// The loop reads no wall clock and prints nothing: whether and how to report is the caller's
/// (run/progress.h). A hook may throw to stop the run: the exception leaves run_schedule (or
/// run_cluster) and the run's state is dropped with it.
using ProgressHook = std::function<void(const Progress&)>;
inline constexpr std::int64_t kProgressEvery = 1024;

/// The rows a recording (SchedulerOptions::record_timeline) may keep: its runs, memory samples and
/// lane moves wait in memory until the run's files are written, so a run that would record far
/// more than a file can usefully hold (a row per iteration of a trace of billions) stops with
/// InputError instead of growing without bound. Shared by every GPU and run that counts against
/// it (SchedulerOptions::timeline_rows).
struct RowBudget {
  std::int64_t limit = 0;  ///< rows, over everything that shares the budget
  std::int64_t kept = 0;
  /// The message: "<what>: the run kept more than <limit> rows ... by T s of simulated time; <advice>".
  std::string what, advice;
  /// One more row kept at simulated time `now`: throws InputError past the limit.
  void keep(TimeNs now, std::int64_t rows = 1);
};

struct SchedulerOptions {
  Bytes capacity = 16 * kGiB;    ///< C: memory of the GPU
  LaneMode lane_mode = LaneMode::kAuto;
  /// kAuto only: at most this many lanes at a time (0: as many as Algorithm 1 opens). A cap keeps
  /// memory for persistent state when many small jobs stay resident (e.g. inference models).
  int max_lanes = 0;
  /// The paper's lane size L_j = max E over the jobs in lane j: a lane shrinks when its largest
  /// job finishes (salus-sim --lane-shrink). Off: a lane keeps the largest size it ever had.
  bool lane_shrink = true;
  /// The paper's failsafe (salus-sim --paging): when a pending job cannot be admitted, paused
  /// admitted jobs of lower priority (a larger Policy::admission_key now) have their persistent
  /// memory paged out to the host, lowest priority first, until it fits; a paged-out job is paged
  /// back in (it cannot run before), after the queue is processed, once memory allows. The
  /// executor charges the transfers (Executor::page_out). Needs lane_shrink and an
  /// executor that supports paging. Acts in LaneMode::kSingle only: with several lanes, lanes
  /// holding only paged-out jobs could keep each other's jobs out for ever.
  bool paging = false;
  bool record_timeline = false;  ///< keep segments, memory samples and lane moves
  bool record_segments = true;   ///< with record_timeline: false keeps only memory samples and lane moves
  /// With record_timeline: plans (Policy::plan) still run, each recorded as one rotation (a
  /// Segment per job with Segment::rotation set) and one memory sample at its start whose
  /// ephemeral_active is the largest E among the jobs that ran in it. Off: a run that records a
  /// timeline never plans, so every run is a Segment of its own (FAIR: one per iteration).
  bool timeline_plans = false;
  /// With record_timeline: the rows it may keep, shared by every GPU and run holding the same
  /// budget (null: no bound).
  std::shared_ptr<RowBudget> timeline_rows;
  bool check_invariants = true;  ///< check the safety condition and layout after every change
  /// Every P and E is rounded up to a multiple of this and the capacity down (see lanes.h), so
  /// every persistent block and lane offset handed to the executor is a multiple of it. 256 for
  /// the simulator and the real executor alike (CUDA faults on misaligned float data), so that
  /// both take the same admission decisions on the same trace; >= 1.
  Bytes alignment = kAlignment;
  /// When set (e.g. from a SIGINT handler), the loop admits and dispatches nothing more, lets
  /// running iterations reach their boundary, marks every unfinished job kInterrupted and returns.
  /// The executor's wait() must return now and then for the flag to be seen.
  const std::atomic<bool>* stop = nullptr;
  /// run_schedule only (a driver of Scheduler steps reports its own): called every
  /// progress_every steps; empty: never (one test of an empty std::function per step).
  ProgressHook progress;
  /// Steps between progress calls, >= 1 (a test of a hook sets 1: every step).
  std::int64_t progress_every = kProgressEvery;
};

/// A stretch of consecutive iterations of one job in one lane (rotation 0), or one job's part in
/// a rotation (a plan, SchedulerOptions::timeline_plans): its iterations, interleaved with the
/// other jobs of the rotation between start_ns and end_ns, the rotation's bounds.
struct Segment {
  LaneId lane = kNoLane;
  JobIndex job = kNoJob;
  TimeNs start_ns = 0;
  TimeNs end_ns = 0;
  std::int64_t iterations = 0;
  TimeNs switch_ns = 0;  ///< switching cost the executor added at its start (Completion::switch_ns); rotation: at its runs' starts
  std::int64_t rotation = 0;  ///< 0: a run; k > 0: part of the run's k-th plan (ScheduleOutcome::plans)
};

/// GPU memory in use, sampled whenever it changes.
struct MemorySample {
  TimeNs time_ns = 0;
  Bytes persistent = 0;        ///< sum of P of admitted jobs
  Bytes lanes_reserved = 0;    ///< sum of lane sizes
  Bytes ephemeral_active = 0;  ///< sum of E of jobs with an iteration in flight
  std::int32_t lanes = 0;
};

/// One GPU's recording (SchedulerOptions::record_timeline) kept apart from its outcome: a
/// cluster of several GPUs keeps one per GPU (lane ids are per GPU), cluster::ClusterOutcome.
struct Timeline {
  std::vector<Segment> segments;
  std::vector<MemorySample> memory;
  std::vector<LaneMove> lane_moves;
};

/// Everything a run produced.
struct ScheduleOutcome {
  std::vector<JobState> jobs;          ///< indexed like the input specs
  std::vector<Segment> segments;       ///< when record_timeline
  std::vector<MemorySample> memory;    ///< when record_timeline
  std::vector<LaneMove> lane_moves;    ///< when record_timeline
  std::int64_t lanes_opened = 0;
  std::int64_t max_concurrent_lanes = 0;
  std::int64_t admissions_new_lane = 0;
  std::int64_t admissions_existing_lane = 0;
  std::int64_t admissions_grown_lane = 0;
  std::int64_t dispatches = 0;         ///< runs started
  std::int64_t switches = 0;           ///< runs of a job other than the lane's previous one
  std::int64_t page_outs = 0;          ///< persistent blocks paged out (paging)
  std::int64_t page_ins = 0;           ///< and paged back in
  std::int64_t plans = 0;              ///< rotation plans run (Policy::plan, Planning::start_plan)
  std::int64_t plan_closed_form = 0;   ///< iterations of plans the executor counted in closed form
  std::int64_t steps = 0;              ///< loop steps (executor waits)
  std::int64_t iterations = 0;         ///< iterations completed
  TimeNs end_ns = 0;                   ///< executor clock when the last job ended
  /// Non-empty when the executor reported the device lost (Completion::fatal): the run ended
  /// early and every unfinished job failed with this reason.
  std::string fatal_error;
};

class Loop;

/// The loop's state with its body as steps, for a driver that owns the clock of several loops
/// (cluster/: one per GPU under one global clock). run_schedule is the loop over one of these; a
/// driver takes the same steps in the same order at each instant t:
///   take_completions (the executor's completions at t), arrive (each job given to this GPU at t),
///   split_at_instant, [settle,] schedule; then the executor's next completion and next_request(t) say when
///   this GPU needs the next step.
/// Jobs are indexed by the span of specs shared by every Scheduler of a cluster; each job is
/// given to one Scheduler only, which alone writes its JobState in `states`.
class Scheduler {
 public:
  /// Whether the constructor validates every job (check_jobs) or the driver already has, once
  /// for the run (a cluster of N GPUs would otherwise check the whole trace N times).
  enum class JobCheck : std::uint8_t { kCheck, kCheckedByDriver };
  /// Checks the options and (JobCheck::kCheck) the jobs as run_schedule does (same exceptions).
  /// `states` has one entry per spec and outlives the Scheduler.
  Scheduler(std::span<const JobSpec> specs, std::span<JobState> states, Policy& policy, Executor& executor,
            const SchedulerOptions& opts, JobCheck check = JobCheck::kCheck);
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  /// Takes (and clears) completions reported by the executor at this instant. Returns true when
  /// one of them finished a job (an event for schedule).
  bool take_completions(std::vector<Completion>& completions);
  /// Job j arrives now; `rank` is its position in arrival order (ties: trace order), unique.
  void arrive(JobIndex j, std::int64_t rank);
  /// Ends runs waiting at a boundary of this instant before admission (see scheduler.cpp).
  void split_at_instant(TimeNs now, bool event, std::vector<Completion>& scratch);
  /// ProcessRequests (after every lane move) when `event`, then dispatches idle lanes.
  void schedule(TimeNs now, bool event);
  /// schedule's first half alone: lane moves and ProcessRequests, nothing dispatched. A driver
  /// that binds jobs on the GPU's state once this instant's finishes, moves and shrinks have
  /// settled calls it before its placement, then schedule(now, event), which does not repeat it
  /// where nothing changed in between (cluster/).
  void settle(TimeNs now, bool event);
  /// Job j leaves this GPU, unfinished (a cluster policy preempts it: cluster/preemptive.h): a
  /// pending job at once; an admitted job at once when idle, else when its run in flight reaches
  /// its next iteration boundary (asked to stop there), its memory released then as at a finish.
  /// Its state then says kInterrupted with the iterations it did and finish_ns the instant it
  /// left; the policy is told as of a finish. Not with paging or plans (a paged-out job, a plan
  /// in flight: an invariant).
  void withdraw(JobIndex j, TimeNs now);
  /// The jobs' specs and states moved (a driver whose table of jobs grows: cluster/'s replica
  /// slots): the same jobs at the same indices, and perhaps more after them.
  void rebase(std::span<const JobSpec> specs, std::span<JobState> states);
  /// ProcessRequests now, without dispatching (a driver that binds a job and must see it admitted).
  void admit_pending(TimeNs now);
  /// Takes back the plan (Planning::start_plan) this GPU's last step dispatched at `now`, which
  /// is still the executor's clock, and dispatches its lane again at `now`: the executor's
  /// start_plan decides its deadline anew, and may refuse (the lane then gets an ordinary run).
  /// For a driver that runs plans speculatively past instants where a job might be bound to the
  /// GPU (cluster/); afterwards the loop is exactly as if the plan had never been dispatched.
  void replan(TimeNs now);
  /// The plan (Planning::start_plan) that schedule(now) would offer the executor next, were it
  /// called now: false when it would offer none or might change something first (jobs pending, a
  /// lane to settle, more than one lane, a run in flight, gated or paged jobs, fewer than two
  /// jobs unless Planning::plans_lone_job, no Policy::plan); the executor's plans_now is not asked. Changes nothing the loop or
  /// the policy keeps. For a driver that plans several loops together (cluster/), computing their
  /// plans at the first one's Planning::plans_now and handing each its own at its start_plan.
  bool offer_plan(TimeNs now, PlanDispatch& out);
  /// The next inference request to wait for (kNever: none).
  TimeNs next_request(TimeNs now) const;
  /// True when a job of P and E bytes would be admitted now: nothing pending, and FindLane with
  /// the physical checks of admission (LaneManager::place) finds it a lane and a place for its
  /// persistent block (exclusive mode: nothing admitted).
  bool can_admit_now(Bytes persistent, Bytes ephemeral) const;
  /// How a job of P and E bytes would be admitted now, for the cluster's placement: not at all
  /// (kNo, as can_admit_now), into a lane of its own (kNewLane; exclusive mode: the GPU is empty),
  /// or into a lane that holds jobs already (kExistingLane: opened or grown for it by FindLane).
  enum class AdmitKind : std::uint8_t { kNo, kNewLane, kExistingLane };
  AdmitKind admit_kind(Bytes persistent, Bytes ephemeral) const;
  /// For a job whose admit_kind is kExistingLane, under a policy whose newcomer() is not kWaits:
  /// whether it would run from that lane's next boundary on rather than wait behind the lane's
  /// jobs: never where the executor says the lane is held (Planning::kHeldLane); kTakesTurn
  /// always otherwise; kByOrder by Policy::starts_at_once, on the lane jobs' states at that
  /// boundary (the running job's iterations done by then, Planning::iterations_by_next_boundary,
  /// where the executor can tell; else as of its dispatch). `job` has arrived (its submit rank is
  /// set) and is not yet given to this GPU.
  bool starts_at_once(JobIndex job, TimeNs now) const;
  /// Changes whenever the memory layout does (admission, finish, lane move, paging): while it
  /// and pending() == 0 stay the same, so does every answer of can_admit_now.
  std::uint64_t layout_version() const;
  std::int64_t admitted() const;
  std::size_t pending() const;
  /// Memory the safety condition leaves: C - sum P - sum L.
  Bytes free_bytes() const;
  /// Counters and (with record_timeline) timelines; its `jobs` is empty (states are the caller's).
  ScheduleOutcome& outcome();
  /// The run ended at t: sets outcome().end_ns and takes the last memory sample, as run_schedule.
  void end_at(TimeNs t);

 private:
  std::unique_ptr<Loop> loop_;
};

/// Throws std::invalid_argument, as run_schedule does, for a job with an out-of-range field or an
/// inference job whose request times do not fit its iterations. O(jobs): a driver of several
/// Schedulers over one span of jobs calls it once and constructs them with kCheckedByDriver.
void check_jobs(std::span<const JobSpec> jobs);

/// Runs the jobs to completion under the policy on the executor. Jobs with P + E > capacity (in
/// aligned units) are rejected at arrival with a reason; all others finish (or fail, if the
/// executor says so; all of them when it reports the device lost).
/// Throws std::invalid_argument when the policy does not support opts.lane_mode, and
/// std::logic_error if an invariant breaks.
/// The policy serves this run (Policy::begin resets it) and must not be used by another run meanwhile.
ScheduleOutcome run_schedule(std::span<const JobSpec> jobs, Policy& policy, Executor& executor,
                             const SchedulerOptions& opts);

}  // namespace salus::core
