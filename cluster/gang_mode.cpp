#include "cluster/gang_mode.h"

namespace salus::cluster {
namespace {

constexpr GangRegistry::Entry kModes[] = {
    {"hold",
     "a gang shares its GPUs with other jobs' lanes; a replica chosen on its GPU holds its lane, idle, until every "
     "replica's GPU has chosen it (the default)",
     GangMode::kHold},
    {"exclusive",
     "a gang takes GPUs with no job on them and keeps them to itself while it runs: its replicas start together and "
     "nothing is held (the peers' model)",
     GangMode::kExclusive},
};

}  // namespace

const GangRegistry& gang_registry() {
  static constexpr GangRegistry kRegistry("gang mode", kModes);
  return kRegistry;
}

std::string_view to_string(GangMode m) { return gang_registry().name_of(m); }

}  // namespace salus::cluster
