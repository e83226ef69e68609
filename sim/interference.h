#pragma once
/// How concurrently running lanes slow each other down in the simulator.
#include <cstdint>
#include <map>
#include <utility>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/job.h"
#include "core/registry.h"

namespace salus::sim {

/// Slowdowns are integers in parts per million: 1'000'000 means solo speed, 2'000'000 half speed.
inline constexpr std::int64_t kSolo = 1'000'000;

/// An iteration in flight, as the model sees it.
struct RunningIteration {
  const core::JobSpec* spec = nullptr;
};

class InterferenceModel {
 public:
  virtual ~InterferenceModel() = default;
  virtual std::string_view name() const = 0;
  /// True when every iteration always runs at solo speed (lets the executor skip the model).
  virtual bool ideal() const { return false; }
  /// Fills slowdown_ppm[i] (>= kSolo) for each of the concurrently running iterations.
  virtual void slowdowns(std::span<const RunningIteration> running, std::span<std::int64_t> slowdown_ppm) const = 0;
  /// What the model assumes where its inputs say nothing (a run prints each as a `note:`).
  virtual std::vector<std::string> notes() const { return {}; }
};

/// `none`: the ideal GPU, every iteration takes its solo time.
class NoInterference final : public InterferenceModel {
 public:
  std::string_view name() const override { return "none"; }
  bool ideal() const override { return true; }
  void slowdowns(std::span<const RunningIteration> running, std::span<std::int64_t> out) const override;
};

/// `profiled`: each workload has a GPU utilisation u in (0, 1]; while a set S runs concurrently,
/// each runs at 1 / max(1, sum_{j in S} u_j) of its solo speed.
class UtilisationInterference final : public InterferenceModel {
 public:
  std::string_view name() const override { return "profiled"; }
  void slowdowns(std::span<const RunningIteration> running, std::span<std::int64_t> out) const override;
};

/// Measured slowdowns of workload pairs: {a, b} -> a's iteration time while b runs in another
/// lane over a's solo time, in parts per million (salus-profile's pair table).
using PairSlowdowns = std::map<std::pair<std::string, std::string>, std::int64_t>;

/// A measured crowd (the catalog's "crowds", salus-profile --crowds): k >= 3 lanes at once, the
/// workload of each lane and each lane's iteration time there over its solo time.
struct Crowd {
  std::vector<std::string> workloads;
  std::vector<double> slowdowns;
};

/// Crowd factors: a number of lanes k >= 3 -> what a crowd of k lanes measured over what the
/// `pairs` model predicts for the same lanes (the sum of the lanes' slowdowns over the sum of the
/// predictions), in parts per million; the mean where the catalog has several crowds of k lanes.
using CrowdFactors = std::map<std::size_t, std::int64_t>;

/// `pairs`: the measured pairwise slowdowns. With the set S running, an iteration of workload i
/// runs at 1 / (1 + sum over the other j in S of (s_ij - 1)) of its solo speed: each other lane
/// adds the excess it causes in a pair, so k lanes of GPU-bound work (s = 2 in every pair) run
/// at 1/k, and a lane beside one light lane is slowed exactly as measured. s_ij below 1 (noise)
/// counts as 1. A pair the table lacks falls back to the `profiled` figure of that pair,
/// s_ij = max(1, u_i + u_j); so do jobs given by explicit figures (no workload name).
///
/// `crowds` (given crowd factors): the same, times the crowd factor c(k) of the number k of
/// lanes running once k >= 3. c(2) = 1 (a pair is what the table measured); between two measured
/// sizes c is linear in k, beyond the largest it stays at the largest's. It says what pairs
/// cannot: on one CPU core, lanes that fit the caches two at a time evict each other in a crowd
/// (sitting 9 in docs/results/2026-11-24-cpu-fidelity-sittings.md: crowds of up to 7 lanes cost 1.09-1.16x their solo work where the
/// pairs added up to 1.01-1.04x), and that cost moves with the host; a crowd can also overlap
/// better than its pairs add up (c < 1, as on the GPU).
class PairInterference final : public InterferenceModel {
 public:
  explicit PairInterference(PairSlowdowns pairs, CrowdFactors crowds = {})
      : pairs_(std::move(pairs)), crowds_(std::move(crowds)) {}
  std::string_view name() const override { return crowds_.empty() ? "pairs" : "crowds"; }
  void slowdowns(std::span<const RunningIteration> running, std::span<std::int64_t> out) const override;
  /// c(k), in parts per million (kSolo without crowd factors or for k <= 2).
  std::int64_t crowd_factor(std::size_t lanes) const;

 private:
  std::int64_t pair_slowdown(const core::JobSpec& a, const core::JobSpec& b) const;
  PairSlowdowns pairs_;
  CrowdFactors crowds_;
};

/// The crowd factors of measured crowds against a pair table: for each crowd, the sum of its
/// lanes' measured slowdowns over the sum of what `pairs` predicts for them (each lane a job of
/// its workload, u from `util_ppm`, 1 where it has none), averaged over the crowds of each size.
/// Crowds of fewer than 3 lanes, or with a slowdown count other than the lane count, are ignored.
CrowdFactors fit_crowd_factors(const PairSlowdowns& pairs, const std::vector<Crowd>& crowds,
                               const std::map<std::string, std::int32_t>& util_ppm);

/// Per-workload weights of the `shares` model, fitted to a pair table by fit_share_weights.
using ShareWeights = std::map<std::string, double>;

/// `shares`: the GPU's time is shared in proportion to weight x demand. Workload i demands u_i of
/// the GPU (its profiled utilisation) and has a weight w_i; with the set S running, an iteration
/// of i runs at 1 / max(1, sum_{k in S} w_k u_k / w_i) of its solo speed. With equal weights this
/// is `profiled` for the heaviest demand it sees; unequal weights say who wins when kernels
/// compete: a lane of large kernels beside one of small kernels barely slows, the other a lot,
/// as the pair table measures. Two copies of i run at 1 / max(1, 2 u_i), u's own definition.
/// A job whose workload has no weight (no pair measured, or explicit figures) has weight 1, the
/// fitted weights' geometric mean.
///
/// `exponent` (salus-sim --share-exponent, default 1) raises that slowdown to a power: below 1
/// it says that a crowd of lanes overlaps better on the GPU than its shares add up to (at the
/// price of the pairs, which it then under-predicts). 0.8 fits both measured H100 traces (docs/results/2026-11-23-h100-runs.md).
class ShareInterference final : public InterferenceModel {
 public:
  explicit ShareInterference(ShareWeights weights, double exponent = 1.0)
      : weights_(std::move(weights)), exponent_(exponent) {}
  std::string_view name() const override { return "shares"; }
  void slowdowns(std::span<const RunningIteration> running, std::span<std::int64_t> out) const override;
  /// Says so when no weight was fitted (kUnweighted).
  std::vector<std::string> notes() const override;

 private:
  double weight(const core::JobSpec& job) const;
  ShareWeights weights_;
  double exponent_;
};

/// The note of `shares` and `capacity` on a pair table from which no weight could be fitted (every
/// pair measured at solo speed or below, as a loaded CPU can): every workload weighs 1.
inline constexpr std::string_view kUnweighted =
    "no pair of the catalog's table measured a slowdown above solo speed that u does not explain, so no weight "
    "could be fitted: every workload weighs 1";

/// Fits the `shares` weights to a pair table: for each measured (i, j) with slowdown s_ij > 1, the
/// model says s_ij = u_i + (w_j / w_i) u_j, so log w_j - log w_i = log((s_ij - u_i) / u_j);
/// least squares over those pairs (s_ij <= 1 only bounds the ratio, and a right-hand side <= 0
/// says nothing of it: both are left out), weights
/// normalised to a geometric mean of 1 in each connected group of workloads. `util_ppm` gives
/// u of every workload of the table. Deterministic (fixed number of Gauss-Seidel sweeps).
ShareWeights fit_share_weights(const PairSlowdowns& pairs, const std::map<std::string, std::int32_t>& util_ppm);

/// A homogeneous sweep (the catalog's "sweeps", salus-profile --sweeps): k copies of one workload
/// in k lanes at once, for each k measured, and a copy's iteration time there over its solo time.
struct Sweep {
  std::string workload;
  std::vector<std::size_t> lanes;  ///< k of each point, each >= 2, increasing
  std::vector<double> slowdowns;   ///< s(k), one per point
};

/// Concurrency capacity per workload: k lanes -> C(k) = k u / s(k), at the measured k only.
using Capacities = std::map<std::string, std::map<std::size_t, double>>;

/// C(k) = k u / s(k) of each sweep point, u from `util_ppm` (the catalog's gpu_util; a workload
/// without one is left out, as are points with k < 2 or s <= 0 and a sweep whose counts differ).
Capacities fit_capacities(const std::vector<Sweep>& sweeps, const std::map<std::string, std::int32_t>& util_ppm);

/// `capacity`: `shares`' weights say who wins, a concurrency capacity C says how much GPU there is
/// to win. With the set S of k lanes running, an iteration of workload i runs at
///   1 / max(1, sum_{j in S} w_j u_j / (w_i C(S)))
/// of its solo speed, C(S) = sum_j w_j u_j C_j(k) / sum_j w_j u_j: each workload's capacity at k
/// lanes, weighted by the share of the GPU's time it gets. C_j(k) is what k copies of j measured,
/// k u_j / s_j(k) (fit_capacities): k copies of j thus run exactly as measured. C_j(2) = 1 (two
/// copies are u's own definition) unless the sweep measured 2; between measured k, C_j is linear
/// in k; beyond the largest, it stays at the largest's. A workload without a sweep (or a job
/// without a workload) has C = 1, and without a weight w = 1: with no sweep at all the model is
/// `shares`. C > 1 says that a crowd of lanes overlaps its kernels better than the pairs add up
/// (batch-25 kernels underfill a large GPU), C < 1 that it does worse (lanes evicting each
/// other's caches on one CPU core).
class CapacityInterference final : public InterferenceModel {
 public:
  CapacityInterference(const ShareWeights& weights, const Capacities& capacities);
  std::string_view name() const override { return "capacity"; }
  void slowdowns(std::span<const RunningIteration> running, std::span<std::int64_t> out) const override;
  std::vector<std::string> notes() const override { return notes_; }
  /// C_w(k) of one workload (1 without a sweep).
  double capacity(std::string_view workload, std::size_t lanes) const;

 private:
  struct Entry {
    double weight = 1;
    std::vector<double> c;  ///< C at k = 0, 1, ..., the largest measured k (1 below 2); empty: 1
  };
  const Entry& entry(const core::JobSpec& job) const;
  std::map<std::string, Entry, std::less<>> entries_;
  Entry unknown_;
  std::vector<std::string> notes_;
};

/// What a model may be made from: the catalog's pair table, the `shares` weights fitted to it,
/// the `shares` exponent, the crowd factors of the catalog's crowds and the capacities of its
/// sweeps.
struct InterferenceInputs {
  const PairSlowdowns* pairs = nullptr;
  const ShareWeights* weights = nullptr;
  double share_exponent = 1.0;
  const CrowdFactors* crowds = nullptr;
  const Capacities* capacities = nullptr;
};
using InterferenceFactory = std::unique_ptr<InterferenceModel> (*)(const InterferenceInputs&);
using InterferenceRegistry = core::Registry<InterferenceFactory>;

/// The table: none, profiled, pairs, crowds, shares, capacity.
const InterferenceRegistry& interference_registry();

/// Creates a model by name ("pairs" needs `pairs`, a catalog's pair table, "crowds" that and the
/// `crowds` factors of its crowds, "shares" the `weights` fitted to a pair table, and "capacity"
/// those weights and, if it has any, the catalog's `capacities` (with a pair table but no weight
/// fitted, every workload weighs 1, and the model says so); each refuses an empty table it
/// needs). Throws core::InputError listing valid names.
std::unique_ptr<InterferenceModel> make_interference(std::string_view name, const PairSlowdowns* pairs = nullptr,
                                                     const ShareWeights* weights = nullptr, double share_exponent = 1.0,
                                                     const CrowdFactors* crowds = nullptr,
                                                     const Capacities* capacities = nullptr);
std::vector<std::string> interference_names();

}  // namespace salus::sim
