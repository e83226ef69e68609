#pragma once
/// The cluster's shape: GPUs grouped in nodes, each GPU with its memory.
#include <cstdint>
#include <string>
#include <vector>

#include "core/units.h"

namespace salus::cluster {

struct GpuSpec {
  core::Bytes capacity = 16 * core::kGiB;  ///< C of this GPU
  std::int32_t node = 0;                   ///< node it sits in (for output only: placement is per GPU)
};

struct ClusterSpec {
  std::vector<GpuSpec> gpus;  ///< node-major: GPU i of node n comes before every GPU of node n + 1

  /// n GPUs of `capacity` bytes, one per node.
  static ClusterSpec uniform(std::int32_t n, core::Bytes capacity);
  /// "32 GPUs in 4 nodes of 16 GiB" (or "of mixed memory").
  std::string describe() const;
  /// The largest GPU's memory.
  core::Bytes largest_capacity() const;
};

/// Reads a cluster file: CSV with the header `nodes,gpus_per_node,gpu_mem` (columns in any
/// order), one row per group of identical nodes, `#` comment lines and blank lines allowed;
/// gpu_mem needs a unit (16GiB, 80GB). Bad input throws core::InputError "FILE:LINE: what".
ClusterSpec load_cluster_file(const std::string& path);

}  // namespace salus::cluster
