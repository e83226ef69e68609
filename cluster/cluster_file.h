#pragma once
/// The cluster's shape: GPUs grouped in nodes, each GPU with its memory, and optionally GPU kinds
/// (a name, memory and relative speed: cluster/README.md, "Cluster file").
#include <cstdint>
#include <istream>
#include <string>
#include <string_view>
#include <vector>

#include "core/units.h"

namespace salus::cluster {

/// Relative speed 1 in parts per million: iterations take the catalog's/trace's iter_ns.
inline constexpr std::int64_t kSpeedOne = 1'000'000;

struct GpuSpec {
  core::Bytes capacity = 16 * core::kGiB;  ///< C of this GPU
  std::int32_t node = 0;                   ///< node it sits in (for output only: placement is per GPU)
  std::int32_t kind = -1;                  ///< index in ClusterSpec::kinds; -1: unnamed (any job may use it)
  /// Relative speed, parts per million (kSpeedOne = 1): an iteration of iter_ns takes
  /// gpu_iter_ns(iter_ns, speed_ppm) here.
  std::int64_t speed_ppm = kSpeedOne;
};

/// A named GPU kind (a cluster file's `kind` column, Alibaba's node list `model`): the names a
/// job's JobSpec::gpu_kinds refers to.
struct GpuKind {
  std::string name;
  core::Bytes memory = 0;
  std::int64_t speed_ppm = kSpeedOne;
};
/// At most this many kinds in one cluster (a job's allowed kinds are a 64-bit mask, one bit kept
/// for GPUs of no named kind).
inline constexpr std::size_t kMaxKinds = 63;

/// iter_ns on a GPU of relative speed speed_ppm: iter_ns * 1e6 / speed_ppm, rounded to the
/// nearest ns (halves up), at least 1.
core::TimeNs gpu_iter_ns(core::TimeNs iter_ns, std::int64_t speed_ppm);
/// "2", "0.5", "1.25": a speed in ppm as the cluster file writes it.
std::string format_speed(std::int64_t speed_ppm);

struct ClusterSpec {
  std::vector<GpuSpec> gpus;  ///< node-major: GPU i of node n comes before every GPU of node n + 1
  std::vector<GpuKind> kinds;  ///< empty unless the file names kinds
  /// How the file was read where it says nothing (Alibaba's node list: models of no known memory,
  /// nodes with no GPU), one sentence each, printed as `note:` lines.
  std::vector<std::string> notes;

  /// n GPUs of `capacity` bytes, one per node.
  static ClusterSpec uniform(std::int32_t n, core::Bytes capacity);
  /// "32 GPUs in 4 nodes of 16 GiB" (or "of mixed memory").
  std::string describe() const;
  /// The largest GPU's memory.
  core::Bytes largest_capacity() const;
  /// The largest memory among the GPUs of the kinds `kinds` names ("T4|P100", JobSpec::gpu_kinds):
  /// what a share of a GPU is a share of for a job that may run only on them. The largest GPU's
  /// when `kinds` is empty, the cluster names no kinds, or none of its kinds is named.
  core::Bytes capacity_for_kinds(std::string_view kinds) const;
};

/// Reads a cluster file: CSV with the header `nodes,gpus_per_node,gpu_mem` and optionally `kind`
/// and `speed` (columns in any order), one row per group of identical nodes, `#` comment lines
/// and blank lines allowed; gpu_mem needs a unit (16GiB, 80GB); speed is a decimal in (0, 1000]
/// (1 when absent). Or Alibaba cluster-trace-gpu-v2023's node list (header sn, cpu_milli,
/// memory_mib, gpu, model), recognised by its header: one kind per model, memory from
/// alibaba_model_memory. Bad input throws core::InputError "FILE:LINE: what".
ClusterSpec load_cluster_file(const std::string& path);
/// The same from a stream or from text already in memory (`path` names it in errors): what the
/// fuzz target calls.
ClusterSpec read_cluster(std::istream& in, const std::string& path);
ClusterSpec load_cluster_text(std::string_view text, const std::string& path);

/// Sets kinds' speeds from `spec`, "KIND=SPEED[,KIND=SPEED...]" (SPEED as the file's speed
/// column), on the kind and every GPU of it, and adds a note. `what` names the source in errors
/// ("--kind-speed: unknown kind 'X' (kinds: ...)"), which throw core::InputError.
void set_kind_speeds(ClusterSpec& cluster, const std::string& spec, const std::string& what);

/// The memory of an Alibaba v2023 GPU model (P100 16 GiB, V100M16 16 GiB, V100M32 32 GiB, T4
/// 16 GiB, A10 24 GiB); 0 for a model of no published memory (G2, G3, anything else).
core::Bytes alibaba_model_memory(const std::string& model);
/// What a model of no known memory gets (printed as a note): 16 GiB.
inline constexpr core::Bytes kAlibabaUnknownMemory = 16 * core::kGiB;

}  // namespace salus::cluster
