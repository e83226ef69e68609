#pragma once
/// Runs a trace under one policy in the discrete-event simulator.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cluster/cluster_file.h"
#include "cluster/lease_policy.h"
#include "cluster/gang_mode.h"
#include "cluster/queue_discipline.h"
#include "core/job.h"
#include "core/policy.h"
#include "core/scheduler.h"
#include "core/summary.h"
#include "run/run.h"
#include "sim/interference.h"

namespace salus::run {

/// The simulator's configuration: the loop's own options, inherited from core::SchedulerOptions so
/// that they are declared and defaulted once and reach the loop whole (capacity, max_lanes,
/// lane_shrink, paging, record_timeline, record_segments, timeline_plans, progress; its lane_mode
/// is chosen per policy from `lanes` by simulate), and the simulator's model.
struct SimConfig : core::SchedulerOptions {
  std::optional<core::LaneMode> lanes;      ///< nullopt: the policy's default (sets lane_mode per policy)
  core::TimeNs switch_cost_ns = core::kNsPerMs; ///< the simulator's switching cost (SimExecutor)
  std::int64_t paging_bytes_per_s = 12'000'000'000;  ///< host link for paging (SimExecutor)
  std::string interference = "profiled";
  sim::PairSlowdowns pairs;                 ///< the catalog's measured pairs (interference "pairs")
  sim::ShareWeights share_weights;          ///< fitted to them (interference "shares")
  sim::CrowdFactors crowd_factors;          ///< the catalog's crowds against its pairs (interference "crowds")
  sim::Capacities capacities;               ///< the catalog's sweeps (interference "capacity")
  double share_exponent = 1.0;              ///< the "shares" model's exponent
  std::uint64_t seed = 1;
  double profile_noise = 0;                 ///< actual iteration time = profile x U[1-x, 1+x]
  /// A cluster (salus-sim --gpus N, --cluster FILE): when set, every GPU runs the policy under
  /// one clock and `capacity` is ignored (each GPU has its own); nullopt: one GPU, run_schedule.
  std::optional<cluster::ClusterSpec> cluster;
  /// Cluster only: a placement registry name; "": each policy's own (cluster::default_placement).
  std::string placement;
  /// Cluster only: how the cluster queue is served past a job that cannot start.
  cluster::QueueDiscipline queue = cluster::QueueDiscipline::kBackfill;
  /// Cluster only: how the per-GPU policies run a gang job (cluster/gang_mode.h).
  cluster::GangMode gangs = cluster::GangMode::kHold;
  /// The preemptive cluster policies (cluster/lease_policy.h: dlas-gpu, ...): their options, and
  /// the time a job spends restoring its checkpoint each time it starts again after a preemption.
  cluster::LeaseOptions lease;
  core::TimeNs restart_cost_ns = 0;
  /// Lanes beneath the preemptive cluster policies (cluster/preemptive.h): "" each GPU runs one
  /// leased job at a time; else the per-GPU policy under which each GPU runs its leased jobs in lanes.
  std::string gpu_sharing;
};


/// The run's interference model, from cfg.interference and the catalog's tables it reads.
/// Throws core::InputError where the model lacks its tables ("pairs" without a pair table, ...).
std::unique_ptr<sim::InterferenceModel> interference_model(const SimConfig& cfg);

/// The lane mode a policy runs in under `cfg` (fifo is always exclusive).
core::LaneMode lane_mode_for(const core::Policy& policy, const SimConfig& cfg);

/// Actual iteration times: the profile, perturbed per job by the seeded noise (deterministic).
std::vector<core::TimeNs> actual_iteration_times(const std::vector<core::JobSpec>& jobs, double noise,
                                                 std::uint64_t seed);

/// Simulates `jobs` under the named policy. Throws core::InputError for unknown names.
PolicyRun simulate(const std::vector<core::JobSpec>& jobs, const std::string& policy, const SimConfig& cfg);

/// The simulator as a PolicyRunner: every run with `cfg` (its record_timeline is the run's).
class SimRunner final : public PolicyRunner {
 public:
  explicit SimRunner(SimConfig cfg) : cfg_(std::move(cfg)) {}
  std::string_view executor() const override { return "sim"; }
  std::vector<std::string> prepare(std::vector<core::JobSpec>& jobs) override;
  PolicyRun run(const std::vector<core::JobSpec>& jobs, const std::string& policy, bool record_timeline) override;
  nlohmann::json config() const override;
  const SimConfig& sim_config() const { return cfg_; }

 private:
  SimConfig cfg_;
};

}  // namespace salus::run
