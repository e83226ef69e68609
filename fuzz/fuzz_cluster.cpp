// A libFuzzer target for the cluster file reader (issue 32), both of its layouts (the
// nodes,gpus_per_node,gpu_mem[,kind,speed] file and Alibaba v2023's node list): any bytes go
// through load_cluster_text, and a cluster that reads is described, sized for a kind and given a
// kind speed. Bad input must end in core::InputError; anything else is a bug.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "cluster/cluster_file.h"
#include "core/errors.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    salus::cluster::ClusterSpec c = salus::cluster::load_cluster_text(text, "fuzz");
    (void)c.describe();
    (void)c.capacity_for_kinds("T4|V100M32");
    if (!c.kinds.empty()) salus::cluster::set_kind_speeds(c, c.kinds.front().name + "=2", "fuzz");
  } catch (const salus::core::InputError&) {
    // Rejected with a message: what bad input should get.
  }
  return 0;
}
