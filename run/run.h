#pragma once
/// One trace under one policy on some executor (the simulator or the real backend), as the
/// programs and the experiments see it: the loop's outcome and its metrics, plus whatever the
/// executor measured itself. The real executor's runner lives in real/ (it needs a device); the
/// experiments reach both through PolicyRunner.
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cluster/cluster.h"
#include "cluster/job_gpus.h"
#include "core/job.h"
#include "core/policy.h"
#include "core/scheduler.h"
#include "core/summary.h"

namespace salus::run {

struct PolicyRun {
  std::string policy;
  core::LaneMode lane_mode = core::LaneMode::kAuto;
  core::ScheduleOutcome outcome;
  core::RunMetrics metrics;
  /// The executor's own measurements of this run (the real executor: switch latencies, per-job
  /// losses and iteration times); null in the simulator.
  nlohmann::json measured;
  /// A cluster run (salus-sim --gpus N > 1 or --cluster FILE; cluster/): false on the one-GPU
  /// path, whose output is unchanged.
  bool cluster = false;
  std::string placement;                            ///< the placement it ran with (cluster::default_placement unless named)
  cluster::JobGpus job_gpus;                        ///< per job: the GPU of each replica
  std::vector<cluster::BusySample> gpus_busy;  ///< (time, GPUs with a job admitted) at each change
  /// A cluster of several GPUs that recorded its timeline: per GPU, its runs (Segment::job the
  /// input job), memory samples and lane moves (cluster::ClusterOutcome::gpu_timelines); empty
  /// otherwise (one GPU: `outcome` holds them).
  std::vector<core::Timeline> gpu_timelines;
  /// A preemptive cluster policy's run (cluster/lease_policy.h; false otherwise): job_gpus is then
  /// each job's last run's GPUs, job_runs every run (where and when), and the counts.
  bool preemptive = false;
  /// A preemptive run's lanes beneath (salus-sim --gpu-sharing): "exclusive" or the per-GPU policy.
  std::string gpu_sharing = "exclusive";
  std::vector<cluster::JobRun> job_runs;
  std::int64_t runs = 0, preemptions = 0, migrations = 0, promotions = 0;
};

/// The lane mode a policy runs in when the run asks for `lanes` (nullopt: the policy's default;
/// a mode the policy cannot run in, e.g. lanes for fifo, also gives its default).
core::LaneMode lane_mode_for(const core::Policy& policy, std::optional<core::LaneMode> lanes);

/// Runs job lists under policies on one executor.
class PolicyRunner {
 public:
  virtual ~PolicyRunner() = default;
  /// "sim" or "real" (the executor registry's name).
  virtual std::string_view executor() const = 0;
  /// Makes `jobs` ready for this executor before any run (the real one checks that every
  /// workload has a model, may take P and E from the models, and warms the device up) and
  /// returns what it did, as notes for the report. The same jobs are then given to run().
  virtual std::vector<std::string> prepare(std::vector<core::JobSpec>& jobs) = 0;
  /// Runs `jobs` under the policy called `policy`; keeps the timeline when asked.
  virtual PolicyRun run(const std::vector<core::JobSpec>& jobs, const std::string& policy, bool record_timeline) = 0;
  /// The executor's settings, for an experiment's "config" (same keys for every executor).
  virtual nlohmann::json config() const = 0;
};

}  // namespace salus::run
