#pragma once
/// The engine of the preemptive cluster policies (lease_policy.h): whole GPUs leased to jobs,
/// decided again at every instant something changes (an arrival, a finish, an instant the policy
/// names), a job the policy passes over preempted and placed again when chosen again, anywhere.
/// Semantics: docs/cluster.md, "Preemptive cluster policies".
///
/// The model, as the peers' simulators have it (Tiresias', Gavel's): a job's work is its solo
/// time (JobSpec::solo_ns() + first_iter_extra_ns) and it progresses at solo speed while it holds
/// its GPUs, one job per GPU (no lanes); a preempted job keeps its progress to the nanosecond,
/// and each time it starts again it first spends `restart_cost_ns` on its GPUs (a checkpoint
/// restored; 0 by default, as the peers). At an instant: finishes, then arrivals, then the
/// policy's update, then the GPUs are given in the policy's order to each job that fits (the
/// free GPUs it may use: as many as it needs, each with memory for P + E), passing over one that
/// does not; a running job passed over is preempted. A job that keeps running keeps its GPUs; one
/// that starts takes the free GPUs of one node if a node has enough (the node with the fewest
/// such, then the lowest-numbered), else the nodes with the most free first.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "cluster/cluster.h"
#include "cluster/cluster_file.h"
#include "cluster/lease_policy.h"
#include "core/job.h"
#include "core/scheduler.h"
#include "sim/interference.h"

namespace salus::cluster {

struct PreemptiveOptions {
  ClusterSpec cluster;
  LeaseOptions lease;
  /// Time a job spends on its GPUs before it progresses again, each time it starts after a
  /// preemption (not at its first start).
  core::TimeNs restart_cost_ns = 0;
  /// One core::Timeline per GPU in the outcome (ClusterOutcome::gpu_timelines): each run's rows.
  bool record_timeline = false;
  /// Every run in ClusterOutcome::job_runs (where and when); their count is kept either way.
  bool record_runs = false;
  core::ProgressHook progress;
  std::int64_t progress_every = core::kProgressEvery;
  /// Lanes beneath the policy (salus-sim --gpu-sharing; "Lanes beneath" below): empty, each GPU
  /// runs one leased job at a time, the peers' model; else a per-GPU policy's name
  /// (policies/registry.h) under which every GPU runs, in Salus lanes, all the jobs leased to it
  /// that its memory admits. The fields below serve it only.
  std::string gpu_policy;
  /// Each GPU's loop options (its lane mode, lane shrinking, timeline; capacity: the GPU's own).
  /// No paging: a job leaves a GPU when preempted, at its iteration boundary.
  core::SchedulerOptions sched;
  const sim::InterferenceModel* model = nullptr;  ///< required with gpu_policy; outlives the run
  /// Where a waiting 1-GPU job goes among the GPUs with room (placement.h; salus-sim --placement,
  /// by default the per-GPU policy's own, as on the per-GPU policies' clusters).
  std::string placement = "least-loaded";
  core::TimeNs switch_cost_ns = 0;
  /// Actual iteration time per job (profile noise); empty: the profile.
  std::vector<core::TimeNs> actual_iter_ns;
};

/// Lanes beneath (PreemptiveOptions::gpu_policy). The lease policy still decides, at the same
/// instants and in its own order, which jobs hold GPUs; what a job needs to hold one is room for
/// its memory beside the jobs ahead of it there, so a GPU holds as many as Algorithm 1's safety
/// condition admits (one lane: sum P + max E <= C; exclusive lanes: one job). The engine takes
/// the policy's order (LeaseRoom): a job holds GPUs if it and every job ahead of it that does can
/// be placed, the running ones where they run, the waiting ones anywhere (placed greedily in
/// order, and again around a running job kept after them); a running job that cannot is
/// preempted. A waiting 1-GPU job goes where the placement (PreemptiveOptions::placement) picks
/// among the GPUs where it fits beside every job there, else among those where it fits beside
/// the jobs ahead of it; a gang job takes GPUs empty in the walk, those no running job awaits
/// first, one node if it can. With exclusive lanes on GPUs of one size this is the exclusive
/// engine's count. A job whose preempted run has not yet reached its boundary waits. Each GPU runs its jobs under the per-GPU policy through the
/// core loop (core::Scheduler, one sim::SimExecutor, the interference model); a preempted job
/// leaves its GPU at its next iteration boundary (Scheduler::withdraw), keeping its iterations,
/// and starts again elsewhere as a job of the iterations it has left (plus the restart cost on
/// its first). Gang jobs (k > 1 GPUs) run on GPUs of their own, as in the exclusive model, from
/// the instant the jobs preempted there have left. Attained service and leases are wall time
/// held, as without lanes. The policy decides at arrivals, finishes, its own instants and the
/// ends of preempted runs (not at every iteration boundary); per-GPU plans (FAIR's and LAS's
/// rotations in one go) are off, so those run iteration by iteration. Round-based policies
/// (max-min, fifo-rounds) lease for the whole round: a job iterates to its end and a round ends
/// at its length or when every job leased in it has finished. GPUs of one kind only.
ClusterOutcome run_lanes_beneath(std::span<const core::JobSpec> jobs, const std::string& policy,
                                 const PreemptiveOptions& opts);

/// What both engines refuse (core::InputError, `who` naming the option that asked for the run):
/// GPUs of several speeds without named kinds, and inference jobs.
void check_lease_inputs(std::span<const core::JobSpec> jobs, const ClusterSpec& cluster, const std::string& who);

/// The jobs in arrival order, ties in trace order, each state's submit_rank set to its place.
std::vector<core::JobIndex> rank_arrivals(std::span<const core::JobSpec> jobs, std::span<core::JobState> states);

/// Runs `jobs` under the named lease policy. The outcome is a ClusterOutcome as run_cluster's:
/// per job its state (first start, finish, gpu_time_ns the wall time it held GPUs), job_gpus the
/// GPUs of its last run, busy, and for these policies job_runs (every run: where and when),
/// preemptions and migrations. Throws core::InputError for an unknown name or a cluster with GPU
/// kinds (not modelled here yet), std::invalid_argument for jobs as run_cluster does.
ClusterOutcome run_preemptive(std::span<const core::JobSpec> jobs, const std::string& policy,
                              const PreemptiveOptions& opts);

}  // namespace salus::cluster
