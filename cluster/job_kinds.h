#pragma once
/// Which GPUs each job of a run may use and at what speed, on a cluster of named GPU kinds
/// (cluster/README.md, "GPU kinds and speeds", "A job's allowed kinds", "Per-workload speeds"):
/// JobSpec::gpu_kinds as kind bits, and JobSpec::kind_speeds as a job x kind table, resolved once
/// per run. On a cluster of no named kinds every job may run anywhere at the GPU's speed and
/// nothing is kept per job.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "cluster/cluster_file.h"
#include "core/job.h"

namespace salus::cluster {

/// A GPU's kind as a bit of a job's allowed kinds: bit k for ClusterSpec::kinds[k], the top bit for
/// a GPU of no named kind (any job may run there; a job limited to some kinds may not).
inline constexpr std::uint64_t kUnnamedKind = std::uint64_t{1} << 63;
inline constexpr std::uint64_t kAnyKind = ~std::uint64_t{0};
static_assert(kMaxKinds < 64, "one bit per kind and one for unnamed GPUs");

class JobKinds {
 public:
  /// Resolves every job's gpu_kinds (names the cluster does not have are left out: a set none of
  /// whose kinds the cluster has is rejected at arrival, with its reason) and kind_speeds
  /// (std::invalid_argument for a speed that is not positive).
  JobKinds(std::span<const core::JobSpec> jobs, const ClusterSpec& cluster);

  /// Input job j's allowed kind bits, and the index of its allowed set (0: any GPU).
  std::uint64_t allowed(core::JobIndex j) const {
    return allowed_.empty() ? kAnyKind : allowed_[static_cast<std::size_t>(j)];
  }
  std::int32_t set_of(core::JobIndex j) const {
    return set_.empty() ? 0 : set_[static_cast<std::size_t>(j)];
  }
  /// Whether some job has a speed of its own on some kind (JobSpec::kind_speeds).
  bool has_speeds() const { return !speed_.empty(); }
  /// Input job j's speed on GPUs of kind `kind` whose own speed is `gpu_speed`: its own there,
  /// else the GPU's (kind -1: a GPU of no named kind).
  std::int64_t speed(core::JobIndex j, std::int32_t kind, std::int64_t gpu_speed) const {
    if (speed_.empty() || kind < 0) return gpu_speed;
    const std::int64_t own = speed_[static_cast<std::size_t>(j) * kinds_ + static_cast<std::size_t>(kind)];
    return own > 0 ? own : gpu_speed;
  }
  /// "A, B, C": the cluster's kinds, for messages.
  const std::string& names() const { return names_; }

 private:
  std::size_t kinds_ = 0;
  std::vector<std::uint64_t> allowed_;  // input job -> the kind bits it may run on (empty: no kinds, any)
  std::vector<std::int32_t> set_;       // input job -> index of its allowed set (0: any; empty: no kinds)
  std::vector<std::int64_t> speed_;     // input job x kind -> its own speed there (0: the kind's); may be empty
  std::string names_;
};

}  // namespace salus::cluster
