#pragma once
/// Measures workloads on a device through the memory pool, for salus-profile: persistent memory,
/// peak ephemeral memory, solo iteration time, utilisation, and the slowdown of pairs running in
/// two lanes at once.
#include <string>
#include <vector>

#include "core/units.h"
#include "gpu_backend/device.h"

namespace salus::gpu {

struct ProfileOptions {
  Bytes capacity = 16 * core::kGiB;  ///< pool size
  int warmup = 2;                    ///< iterations not measured
  int iterations = 10;               ///< measured iterations (median taken)
};

struct WorkloadMeasurement {
  std::string name;
  bool inference = false;
  Bytes persistent = 0;        ///< the model's persistent state in the pool
  Bytes ephemeral_peak = 0;    ///< most lane memory one iteration took
  core::TimeNs iter_ns = 0;    ///< median solo iteration time
  core::TimeNs pair_self_ns = 0;  ///< median iteration time with a copy of itself in a second lane
  double gpu_util = 1;         ///< u with 1 / max(1, 2u) = solo / pair_self time, in [0.05, 1]
                               ///< (1 where two copies do not fit the pool)
  std::string error;           ///< why it could not be measured (it does not fit the pool); empty if it was
};

struct PairMeasurement {
  std::string a, b;
  double slowdown_a = 1, slowdown_b = 1;  ///< iteration time together / alone
};

/// Measures each workload alone and with a copy of itself. Throws core::InputError for unknown
/// workloads; one that does not fit the pool comes back with `error` set and no times.
std::vector<WorkloadMeasurement> profile_workloads(Device& device, const std::vector<std::string>& workloads,
                                                   const ProfileOptions& options);

/// Measures every unordered pair of the measured workloads running together in two lanes;
/// pairs that do not fit the pool together are left out.
std::vector<PairMeasurement> profile_pairs(Device& device, const std::vector<WorkloadMeasurement>& solo,
                                           const ProfileOptions& options);

}  // namespace salus::gpu
