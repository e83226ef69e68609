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
};

/// Runs `jobs` under the named lease policy. The outcome is a ClusterOutcome as run_cluster's:
/// per job its state (first start, finish, gpu_time_ns the wall time it held GPUs), job_gpus the
/// GPUs of its last run, busy, and for these policies job_runs (every run: where and when),
/// preemptions and migrations. Throws core::InputError for an unknown name or a cluster with GPU
/// kinds (not modelled here yet), std::invalid_argument for jobs as run_cluster does.
ClusterOutcome run_preemptive(std::span<const core::JobSpec> jobs, const std::string& policy,
                              const PreemptiveOptions& opts);

}  // namespace salus::cluster
