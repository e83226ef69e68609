#pragma once
/// Runs a trace under one policy in the discrete-event simulator.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/job.h"
#include "core/policy.h"
#include "core/scheduler.h"
#include "core/summary.h"
#include "sim/interference.h"

namespace salus::experiments {

struct SimConfig {
  core::Bytes capacity = 16 * core::kGiB;
  std::optional<core::LaneMode> lanes;      ///< nullopt: the policy's default
  int max_lanes = 0;                        ///< auto lanes: at most this many (0: no cap)
  core::TimeNs switch_cost_ns = core::kNsPerMs; ///< the simulator's switching cost (SimExecutor)
  bool lane_shrink = true;                  ///< lane size = max E of its jobs (SchedulerOptions)
  bool paging = false;                      ///< the paper's paging failsafe (SchedulerOptions)
  std::int64_t paging_bytes_per_s = 12'000'000'000;  ///< host link for paging (SimExecutor)
  std::string interference = "profiled";
  sim::PairSlowdowns pairs;                 ///< the catalog's measured pairs (interference "pairs")
  sim::ShareWeights share_weights;          ///< fitted to them (interference "shares")
  double share_exponent = 1.0;              ///< the "shares" model's exponent
  std::uint64_t seed = 1;
  double profile_noise = 0;                 ///< actual iteration time = profile x U[1-x, 1+x]
  bool record_timeline = false;
};

struct SimRun {
  std::string policy;
  core::LaneMode lane_mode = core::LaneMode::kAuto;
  core::ScheduleOutcome outcome;
  core::RunMetrics metrics;
};

/// The lane mode a policy runs in under `cfg` (fifo is always exclusive).
core::LaneMode lane_mode_for(const core::Policy& policy, const SimConfig& cfg);

/// Actual iteration times: the profile, perturbed per job by the seeded noise (deterministic).
std::vector<core::TimeNs> actual_iteration_times(const std::vector<core::JobSpec>& jobs, double noise,
                                                 std::uint64_t seed);

/// Simulates `jobs` under the named policy. Throws core::InputError for unknown names.
SimRun simulate(const std::vector<core::JobSpec>& jobs, const std::string& policy, const SimConfig& cfg);

}  // namespace salus::experiments
