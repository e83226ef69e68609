#pragma once
/// Measures workloads on a device through the memory pool, for salus-profile: persistent memory,
/// peak ephemeral memory, solo iteration time, utilisation, and the slowdown of pairs running in
/// two lanes at once.
#include <cstddef>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/units.h"
#include "gpu_backend/device.h"

namespace salus::traces {
class Catalog;
}

namespace salus::gpu {

/// Rounds of a crowd or sweep measurement, unless ProfileOptions::crowd_rounds says otherwise.
inline constexpr int kCrowdRounds = 3;

struct ProfileOptions {
  Bytes capacity = 16 * core::kGiB;  ///< pool size
  int warmup = 2;                    ///< iterations not measured (the first is reported on its own)
  int iterations = 10;               ///< measured iterations, at least
  double min_seconds = 0.5;          ///< and measured for at least this long (small models)
  int max_iterations = 20000;        ///< but never more iterations than this
  int crowd_rounds = kCrowdRounds;   ///< rounds of each crowd and sweep point (profile_crowds, profile_sweeps)
};

struct WorkloadMeasurement {
  std::string name;
  bool inference = false;
  Bytes persistent = 0;        ///< the model's persistent state in the pool
  Bytes ephemeral_peak = 0;    ///< most lane memory one iteration took
  /// Solo iteration through the real executor: the typical mean of the iterations after the first
  /// (typical_mean: a job's time is its iterations' sum, so the simulator wants a mean, not the
  /// median, but one that a burst on the machine during the profile does not move).
  core::TimeNs iter_ns = 0;
  core::TimeNs iter_exec_mean_ns = 0;    ///< the plain mean of the same iterations (for reading)
  core::TimeNs iter_exec_median_ns = 0;  ///< the median of the same iterations (for reading)
  core::TimeNs iter_median_ns = 0; ///< median solo iteration in the profiler's own loop (for reading)
  core::TimeNs first_iter_ns = 0;  ///< the first iteration through the real executor, in a warm process
  std::int64_t measured = 0;       ///< iterations measured
  core::TimeNs pair_self_ns = 0;  ///< typical mean iteration time with a copy of itself in a second lane
  /// pair_self_ns over the solo typical mean in the same loop just before and after (0 where two
  /// copies do not fit the pool); the catalog's self pair.
  double self_slowdown = 0;
  double gpu_util = 1;         ///< u = clamp(self_slowdown / 2, 0.05, 1): 1 / max(1, 2u) = solo / pair_self time
                               ///< (1 where two copies do not fit the pool)
  std::string error;           ///< why it could not be measured (it does not fit the pool); empty if it was
};

/// The typical mean of a run of iteration times: the iterations split into k consecutive blocks
/// of (near) equal length, k = min(kMaxTypicalBlocks, n / kMinTypicalBlock) made odd, and the
/// median of the blocks' means; the plain mean when k < 3 (fewer than 3 x kMinTypicalBlock
/// times). A block's mean keeps the right skew of single iterations that a job's sum has; the
/// median over blocks drops the one or two blocks that a neighbour's burst inflated.
inline constexpr std::size_t kMaxTypicalBlocks = 9;
inline constexpr std::size_t kMinTypicalBlock = 20;
core::TimeNs typical_mean(const std::vector<core::TimeNs>& times);

struct PairMeasurement {
  std::string a, b;
  double slowdown_a = 1, slowdown_b = 1;  ///< iteration time together / alone
};

/// Measures each workload alone (in the profiler's loop, then through the real executor) and with
/// a copy of itself. Throws core::InputError for unknown workloads; one that does not fit the pool
/// comes back with `error` set and no times.
std::vector<WorkloadMeasurement> profile_workloads(Device& device, const std::vector<std::string>& workloads,
                                                   const ProfileOptions& options);

/// Measures every unordered pair of the measured workloads running together in two lanes;
/// pairs that do not fit the pool together are left out. Both run until each has its measured
/// iterations, and only iterations during which the other was still running count: the slower
/// one is overlapped for its whole window (at least --min-seconds), not only while the faster one
/// does its quota. Each slowdown is the typical mean together over the workload's typical mean
/// alone in the same pool and loop, the mean of one measurement just before the pair and one just
/// after (not the profile's first loop: the machine's speed drifts between them). Means, not
/// medians: the simulator wants rates, and time-sliced iterations are bimodal.
std::vector<PairMeasurement> profile_pairs(Device& device, const std::vector<WorkloadMeasurement>& solo,
                                           const ProfileOptions& options);

struct CrowdMeasurement {
  std::vector<std::string> workloads;  ///< the workload of each lane
  std::vector<double> slowdowns;       ///< each lane's iteration time in the crowd / its workload's alone
};

/// Crowds of k lanes running at once, for each k of `sizes` (each >= 3): lane l runs the l-th
/// measured workload modulo their number (lenet_32, mlp_64, lenet_32, ...); a crowd that does
/// not fit the pool is left out. Each crowd runs `crowd_rounds` times as profile_pairs runs a pair
/// (`together`, all lanes counted over the window in which all ran), each round over a window of
/// at least k / 2 / crowd_rounds times --min-seconds (each lane gets about 1/k of a time-sliced
/// device), and each workload runs alone (half --min-seconds) before the first round and after
/// each, in the same pool and loop (the solo run after one crowd is the one before the next). A
/// lane's slowdown in a round is its typical mean there over its workload's solo typical means
/// just before and after, averaged; its figure is the median over the rounds. Bracketing each
/// round, not the whole crowd: on the shared development machine the speed drifts within a
/// crowd's few seconds, and before-and-after alone read crowds of 8 lanes from 0.70 to 0.97 times
/// what their pairs predict in two runs a minute apart.
std::vector<CrowdMeasurement> profile_crowds(Device& device, const std::vector<WorkloadMeasurement>& solo,
                                             const ProfileOptions& options, const std::vector<int>& sizes);

/// A homogeneous sweep: k copies of one workload in k lanes at once, for each k measured.
struct SweepMeasurement {
  std::string workload;
  std::vector<int> lanes;        ///< the k measured, increasing
  std::vector<double> slowdowns; ///< a copy's iteration time among k copies / its time alone
  int did_not_fit = 0;           ///< the first k of `sizes` whose copies did not fit the pool (0: all did)
};

/// For each measured workload and each k of `sizes` (each >= 2, increasing), k copies of it at
/// once, measured as profile_crowds measures a crowd (`crowd_rounds` rounds of `together`, each
/// bracketed by the workload alone, half --min-seconds, the solo run after one k being the one
/// before the next), but each round over a window of --min-seconds / crowd_rounds only, each lane
/// counting at least ceil(--iterations / k) iterations: the k copies are alike, so the window's
/// k lanes together give as many iterations as one lane alone over --min-seconds. A point is the
/// median over the rounds of the mean over the lanes of a copy's typical mean there over the solo
/// typical means just before and after. A workload's sweep stops at the first k that does not
/// fit the pool (more copies would not either); a workload of which not even the smallest k fits
/// comes back with no point.
std::vector<SweepMeasurement> profile_sweeps(Device& device, const std::vector<WorkloadMeasurement>& solo,
                                             const ProfileOptions& options, const std::vector<int>& sizes);

/// The executor's switching cost on this device: two jobs of the measured workload `m` taking
/// turns every iteration in one lane under FAIR, through the real executor and the scheduling
/// loop, as in salus-run. Returns, per switch, the mean gap between the end of one job's iteration
/// and the start of the other's (RealExecutor::switch_latencies: CUDA events on a GPU, the host
/// clock on the CPU) plus what the iterations took beyond the workload's iteration alone through
/// the executor (cold caches after the other job ran; a difference of medians, which one burst of
/// a neighbour does not move), over `switches` switches at least. The solo iterations are measured
/// just before and just after the switching run, not taken from m.iter_ns: the machine's drift
/// between the two is as large as the cost.
core::TimeNs profile_switch(Device& device, const WorkloadMeasurement& m, const ProfileOptions& options,
                            int switches = 200);

// ---- salus-profile: from its options to a catalog --------------------------------------------

/// What salus-profile measures, as its options ask.
struct ProfileRequest {
  std::vector<std::string> workloads;  ///< real workloads, each once checked (parse_profile_workloads)
  ProfileOptions options;
  bool pairs = true;           ///< every pair in two lanes
  bool measure_switch = true;  ///< each workload's switching cost
  std::vector<int> crowd_sizes, sweep_sizes;  ///< lane counts (empty: none)
};

/// The int `text` is as a whole ("12", "-3"), or nullopt (empty, trailing characters, out of range).
std::optional<int> whole_int(const std::string& text);

/// A list of lane counts from `lowest` to 64, each once, in increasing order ("3,5,7"), or "off"
/// (none); anything else is `option`'s core::InputError, with `example` as a list that would do.
std::vector<int> parse_lane_counts(const std::string& text, const std::string& option, int lowest,
                                   const std::string& example);
/// --crowds: "off", or comma-separated lane counts from 3 to 64, each once, in increasing order.
std::vector<int> parse_crowd_sizes(const std::string& text);
/// --sweeps: "off", "auto" (3,5,8,12 on a GPU, off on the CPU device, whose model is `crowds`), or
/// comma-separated lane counts from 2 to 64, each once, in increasing order.
std::vector<int> parse_sweep_sizes(std::string text, const std::string& device);
/// --crowd-rounds: a number from 1 to 100, or auto: 1 on a GPU, kCrowdRounds on the CPU device.
int parse_crowd_rounds(const std::string& text, const std::string& device);
/// --workloads: comma-separated real workloads. Throws core::InputError naming the valid ones.
std::vector<std::string> parse_profile_workloads(const std::string& list);

/// Switches measured for `m`: 200, fewer for a slow workload, so that its switching run takes
/// about twice options.min_seconds, never fewer than 20.
int switch_count(const WorkloadMeasurement& m, const ProfileOptions& options);
/// The interference model that fits a measured catalog (salus-sim's `auto`): none without pairs;
/// on the cpu device `pairs`, or `crowds` with crowds measured; on a GPU `shares`, or `capacity`
/// with sweeps measured.
std::optional<std::string> fitting_interference(const std::string& device, bool pairs, bool crowds, bool sweeps);
/// A measured workload's catalog entry (figures rounded as the catalog keeps them; `switch_ns`
/// its switching cost, when measured).
nlohmann::json workload_entry(const WorkloadMeasurement& m, std::optional<core::TimeNs> switch_ns,
                              const std::string& provenance);

/// Measures `request` on `device` and returns the catalog (salus-catalog/1, for
/// traces::catalog_text), printing each figure to `out` as it is measured. Throws
/// core::InputError when no workload fits the pool.
nlohmann::json measure_catalog(Device& device, const std::string& device_name, const ProfileRequest& request,
                               std::FILE* out);

/// What a written catalog's crowds say, printed to `out`: the crowd factors the `crowds` model
/// reads, and, with sweeps, how the `capacity` model predicts each measured crowd.
void print_crowd_checks(const traces::Catalog& written, std::FILE* out);

}  // namespace salus::gpu
