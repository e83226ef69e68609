#pragma once
/// From a trace file and a catalog to the jobs a run takes, and the simulator's model set from the
/// catalog and the model options: what every program and experiment does before it runs.
#include <optional>
#include <string>
#include <vector>

#include "cluster/cluster_file.h"
#include "core/job.h"
#include "core/policy.h"
#include "run/sim_runner.h"
#include "sim/interference.h"
#include "traces/catalog.h"
#include "traces/trace.h"

namespace salus::run {

/// Notes for policies that ignore the requested lane mode.
std::vector<std::string> lane_mode_notes(const std::vector<std::string>& policies, std::optional<core::LaneMode> lanes);

/// A trace and the jobs to run from it: loaded with the catalog at `profiles`, memory assumptions
/// resolved for `capacity`, scaled down by `time_scale` (>= 1). Throws core::InputError.
struct TraceJobs {
  traces::Trace trace;
  std::vector<core::JobSpec> jobs;
  sim::PairSlowdowns pairs;  ///< the catalog's measured pairs, in parts per million (may be empty)
  sim::ShareWeights share_weights;  ///< the `shares` model's weights fitted to them (empty without pairs)
  std::optional<core::TimeNs> switch_ns;  ///< the catalog's measured switch latency, if any
  std::optional<std::string> interference;  ///< the model the catalog names (checked against the table), if any
  sim::CrowdFactors crowd_factors;  ///< the `crowds` model's factors, the catalog's crowds against its pairs (may be empty)
  sim::Capacities capacities;       ///< the `capacity` model's C, the catalog's sweeps (may be empty)
  /// catalog_cpus_note of the catalog (a catalog measured on the cpu device predicts runs on as
  /// many CPUs as it was measured on); "" when it has none.
  std::string cpus_note;
};
/// What the interference models take from a catalog: its pairs in parts per million (both orders),
/// the `shares` weights fitted to them, the crowd factors of its crowds against them, and the
/// capacities of its sweeps.
struct CatalogInterference {
  sim::PairSlowdowns pairs;
  sim::ShareWeights share_weights;
  sim::CrowdFactors crowd_factors;
  sim::Capacities capacities;
};
CatalogInterference catalog_interference(const traces::Catalog& catalog);
/// The model `--interference auto` stands for: the one the catalog names (salus-profile writes
/// the one that fits its device), else `shares` when the catalog has pairs, else `profiled`.
/// `share_weights` are TraceJobs::share_weights (empty without pairs), `catalog_model` its interference.
std::string auto_interference(const std::optional<std::string>& catalog_model, const sim::ShareWeights& share_weights);
/// `load` says how to read the trace (--format, --window, ...). `gpus` is the number of GPUs the
/// run has: with 1, multi-GPU jobs are folded onto it (traces::fold_onto_one_gpu, with a note);
/// any other number (gpus_needed passes 0: it tries many) keeps them gang jobs.
TraceJobs load_jobs(const std::string& trace_path, const std::string& profiles, core::Bytes capacity, double time_scale,
                    const traces::LoadOptions& load = {}, int gpus = 1);
/// The same for a cluster: multi-GPU jobs stay gangs (one GPU: folded, as above), and a job whose
/// memory is a share of a GPU is sized on ClusterSpec::capacity_for_kinds of its gpu_kinds (on a
/// cluster of mixed memory, with a note).
TraceJobs load_jobs(const std::string& trace_path, const std::string& profiles, const cluster::ClusterSpec& cluster,
                    double time_scale, const traces::LoadOptions& load = {});

/// The model options, checked.
struct ModelOptions {
  std::optional<core::LaneMode> lanes;         ///< nullopt: each policy's default
  std::string interference = "auto";           ///< a model's name, or auto (apply_model resolves it)
  double share_exponent = 1;
  bool lane_shrink = true;
  std::optional<core::TimeNs> switch_cost_ns;  ///< --switch-cost-ms, when given
  std::string placement;                       ///< a placement's name; "": each policy's own (cluster::default_placement)
  cluster::QueueDiscipline queue = cluster::QueueDiscipline::kBackfill;  ///< the cluster queue's discipline
  cluster::GangMode gangs = cluster::GangMode::kHold;                   ///< how per-GPU policies run gangs
  cluster::LeaseOptions lease;                 ///< the preemptive cluster policies' options
  core::TimeNs restart_cost_ns = 0;            ///< --restart-cost-ms
  /// --gpu-sharing: "" (exclusive) or the per-GPU policy each GPU runs its leased jobs under, in lanes
  std::string gpu_sharing;
};

/// Sets `cfg`'s model from `m` and the catalog that `t` was loaded with: lanes, lane shrink,
/// share exponent, placement; the switch cost (--switch-cost-ms, which is then every job's
/// (JobSpec::switch_ns = -1 in t.jobs), else the catalog's, else 1 ms); the interference model
/// (auto: auto_interference) and the catalog's tables it reads (moved out of `t`). Throws
/// core::InputError when the model lacks its tables ("pairs" without a pair table, ...).
void apply_model(const ModelOptions& m, TraceJobs& t, SimConfig& cfg);
/// The notes of a run with this model under `policies`: those that ignore --lanes, the share
/// exponent when not 1.
std::vector<std::string> model_notes(const std::vector<std::string>& policies, const SimConfig& cfg);

/// The notes a simulator run of `trace` prints and writes: the trace's, the cluster's, the catalog's
/// CPUs (a catalog measured on the cpu device) and model_notes.
std::vector<std::string> sim_notes(const TraceJobs& loaded, const std::vector<std::string>& policies,
                                   const SimConfig& cfg);
/// What the preemptive cluster policies among `policies` assume (each one's rules, and the
/// engine's), one sentence each; none when there are none.
std::vector<std::string> lease_run_notes(const std::vector<std::string>& policies, const SimConfig& cfg);

}  // namespace salus::run
