#pragma once
/// A cluster of Salus GPUs under one clock. Every GPU runs the same core (its lanes, Algorithm 1,
/// the chosen policy: one core::Scheduler and one sim::SimExecutor per GPU); a cluster queue holds
/// jobs until a placement policy (placement.h) puts them on a GPU; a job needing k GPUs is
/// gang-scheduled (one replica per GPU, iterations in lock-step). Semantics: cluster/README.md.
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "cluster/cluster_file.h"
#include "cluster/job_gpus.h"
#include "cluster/gang_mode.h"
#include "cluster/queue_discipline.h"
#include "core/job.h"
#include "core/scheduler.h"
#include "sim/interference.h"

namespace salus::cluster {

struct ClusterOptions {
  ClusterSpec cluster;
  std::string placement = "first-fit";
  /// How the cluster queue is served past a job that cannot start (queue_discipline.h).
  QueueDiscipline queue = QueueDiscipline::kBackfill;
  /// How a gang job shares its GPUs (gang_mode.h).
  GangMode gangs = GangMode::kHold;
  /// Every GPU's options; capacity is each GPU's own (ClusterSpec). record_timeline: a one-GPU
  /// cluster records into its outcome as run_schedule does, several GPUs each into their own
  /// ClusterOutcome::gpu_timelines (lane ids are per GPU).
  core::SchedulerOptions sched;
  const sim::InterferenceModel* model = nullptr;  ///< required; outlives the run
  core::TimeNs switch_cost_ns = 0;
  std::int64_t paging_bytes_per_s = 0;
  /// Actual iteration time per job (profile noise); empty: the profile.
  std::vector<core::TimeNs> actual_iter_ns;
  /// The speed mechanisms, each switchable for the differential tests: every one of them gives
  /// the results of deciding at every boundary (run by run), which false asks for.
  struct Tuning {
    /// Let each GPU run a policy's rotation in one go (Policy::plan; FAIR and LAS), speculatively
    /// past arrivals the placement may give to another GPU; a plan that a job is bound into is
    /// taken back and replayed up to that instant (speculation.h, Speculation::rewind). Results are the
    /// same either way (tests/cluster/cluster_plan_test.cpp compares them); false decides at
    /// every boundary.
    bool plans = true;
    /// With plans: where a gang job's run ends and every one of its GPUs decides at that instant,
    /// the GPUs' rotations (the replica's turns among their 1-GPU jobs) are planned together up to
    /// a common gang-run end before the next arrival (cluster/README.md, "Joint plans"). Results are the
    /// same either way (tests/cluster/cluster_gang_plan_test.cpp compares them); false steps every
    /// run of a GPU that hosts a gang replica, as before.
    bool gang_plans = true;
    /// Run a gang job's lock-step iterations after the first as one batched run per replica while
    /// they stay in phase (each replica's lane runs alone on its GPU, or the model is ideal), cut
    /// back to one iteration at a time where lock-step could differ (gangs.cpp; cluster/README.md, "Gang jobs").
    /// Results are the same either way (tests/cluster/cluster_gang_test.cpp compares them); false
    /// dispatches every lock-step iteration on its own.
    bool gang_batches = true;
    /// Count the GPUs that could take a gang job waiting in the cluster queue incrementally (only
    /// the GPUs touched since the last count are asked again; gangs.cpp, Cluster::able_gpus).
    /// Results are the same either way (tests/cluster/cluster_gang_test.cpp compares them); false
    /// asks every GPU at every count.
    bool incremental_gang_queue = true;
    /// With joint plans: where the plan's rounds repeat (every slot as a period earlier, relative
    /// to its lane's replica: equal iteration times, e.g. a trace of durations), skip whole periods
    /// at once (cluster/joint_plan.h, plan_rounds). Results are the same either way
    /// (tests/cluster/cluster_gang_plan_test.cpp and joint_plan_test.cpp compare them); false
    /// computes every round.
    bool periodic_plans = true;
    /// Turn plans take the 1-GPU jobs' rotation below the replica's level in closed form where
    /// only the job of least step can run twice in a row (cluster/joint_plan.h, run_before_turn).
    /// Results are the same either way, to each plan's counts (tests/cluster/joint_plan_test.cpp
    /// and cluster_gang_plan_test.cpp compare them); false steps every run.
    bool turn_jumps = true;
    /// A gang's faster replicas run held to the slowest one's pace (their iterations padded),
    /// so that they end where it does: one batch per replica, or one instant per iteration where
    /// lock-step steps them one at a time (gangs.cpp). Results are the same either way
    /// (tests/cluster/cluster_gang_test.cpp compares them on GPUs of several speeds); false runs
    /// every replica at its own speed, each ending where it does and holding its lane, idle,
    /// until the slowest one's end.
    bool pace_replicas = true;
    /// With gang_batches and pace_replicas: a batch whose replicas run beside other lanes goes on
    /// where lock-step cannot differ from it, i.e. every replica beside another lane is the
    /// slowest (at the slowdown its company gives it), unpaced, and keeps its slowdown; the
    /// others are held to its pace (gangs.cpp, Cluster::pace_crowded). Results are the same
    /// either way (tests/cluster/cluster_gang_test.cpp compares them); false cuts such a batch at
    /// once, one iteration at a time.
    bool crowded_batches = true;
    /// Give an ended job's replica slots to the next arrivals (replicas.h), so that the run holds
    /// state for the jobs in the system, not the whole trace. Results are the same either way
    /// (tests/cluster/cluster_gang_test.cpp compares them); false gives no slot twice.
    bool reuse_slots = true;
  };
  Tuning tuning;
  /// Called every progress_every instants when set (sched.progress is not: the GPUs'
  /// loops are steps of this one). Progress::jobs holds one state per input job, as the outcome
  /// will (a gang job's merged from its replicas' at the call: the run keeps state only for the
  /// jobs that have arrived and not ended, cluster/replicas.h).
  core::ProgressHook progress;
  std::int64_t progress_every = core::kProgressEvery;  ///< instants between progress calls, >= 1
};

/// GPUs with at least one admitted job, from `time_ns` on.
struct BusySample {
  core::TimeNs time_ns = 0;
  std::int32_t gpus = 0;
  bool operator==(const BusySample&) const = default;
};

/// One run of a job on its GPUs (the preemptive cluster policies: a job may run several times,
/// anywhere; preemptive.h).
struct JobRun {
  core::JobIndex job = core::kNoJob;
  core::TimeNs start_ns = 0;
  core::TimeNs end_ns = 0;
  std::vector<std::int32_t> gpus;
  bool operator==(const JobRun&) const = default;
};

struct ClusterOutcome {
  /// jobs: one state per input job (a gang job's: its replicas' common progress, first start and
  /// finish); counters summed over GPUs (max_concurrent_lanes: the largest on one GPU); timelines
  /// only on a one-GPU cluster (several GPUs: gpu_timelines).
  core::ScheduleOutcome outcome;
  /// With sched.record_timeline on a cluster of several GPUs, one per GPU (empty otherwise): its
  /// runs, memory samples and lane moves, its lane ids its own; Segment::job is the input job (a
  /// gang job's replica on that GPU: its rows appear on each of its GPUs).
  std::vector<core::Timeline> gpu_timelines;
  JobGpus job_gpus;                                 ///< per input job: its replicas' GPUs (empty if never placed)
  std::vector<BusySample> busy;                     ///< changes of the number of busy GPUs
  std::int64_t placements = 0;                      ///< jobs placed from the cluster queue (not bound at arrival)
  std::int64_t gang_iterations = 0;                 ///< lock-step iterations of gang jobs (batched or not)
  std::int64_t events = 0;                          ///< instants processed
  std::int64_t rewinds = 0;                         ///< plans taken back because a job was bound to their GPU
  std::int64_t joint_plans = 0;                     ///< joint plans of a gang job's GPUs (ClusterOptions::gang_plans)
  std::int64_t joint_gang_runs = 0;                 ///< the gang runs they covered
  std::int64_t joint_period_rounds = 0;             ///< of their gang runs, those skipped as whole periods (tuning.periodic_plans)
  std::int64_t joint_paced_plans = 0;               ///< of the joint plans, those of replicas at different speeds
  std::int64_t turn_plans = 0;                      ///< plans of one gang GPU's 1-GPU runs up to its replica's turn
  std::int64_t turn_plan_runs = 0;                  ///< the 1-GPU runs they covered
  std::int64_t turn_jumped = 0;                     ///< of their iterations, those taken in closed form (tuning.turn_jumps)
  std::int64_t unpadded_work = 0, unpadded_held = 0;  ///< paced iterations a run starting beside them made lock-step's (SimExecutor::unpad)
  std::int64_t crowded_batches = 0;                 ///< gang batches that went on beside other lanes (tuning.crowded_batches)
  std::int64_t crowded_unpaced = 0;                 ///< their paced replicas made lock-step's where such a batch was cut (SimExecutor::unpad_at)
  /// The preemptive cluster policies only (preemptive.h; empty and 0 otherwise):
  std::vector<JobRun> job_runs;                     ///< every run, in the order they ended (when recorded)
  std::int64_t runs = 0;                            ///< runs
  std::int64_t preemptions = 0;                     ///< runs ended before the job finished
  std::int64_t migrations = 0;                      ///< runs started again on other GPUs than the job's last
  std::int64_t promotions = 0;                      ///< jobs put back in the first queue (2D-LAS' starvation knob)
};

/// Adds one GPU's counters (lanes, admissions, dispatches, switches, paging, plans) to a
/// cluster's: summed, max_concurrent_lanes the largest. Not steps, iterations or timelines.
void add_gpu_counters(core::ScheduleOutcome& sum, const core::ScheduleOutcome& gpu);

/// Runs `jobs` on the cluster under the named policy (policies::make_policy) on every GPU.
/// Throws core::InputError for an unknown policy or placement name, std::invalid_argument as
/// core::run_schedule does.
ClusterOutcome run_cluster(std::span<const core::JobSpec> jobs, const std::string& policy, const ClusterOptions& opts);

}  // namespace salus::cluster
