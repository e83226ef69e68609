#include "cluster/queue_discipline.h"

namespace salus::cluster {
namespace {

constexpr QueueRegistry::Entry kDisciplines[] = {
    {"strict", "head-of-line blocking: the queue stops at the first job that cannot start (Tiresias' and Gavel's FIFO)",
     QueueDiscipline::kStrict},
    {"backfill", "every job that can start does, past those that cannot (Algorithm 1's queue; the default)",
     QueueDiscipline::kBackfill},
    {"easy",
     "EASY backfilling: as backfill, but the first job that cannot start reserves the GPUs expected free first; a "
     "later job takes a reserved GPU only if it is expected to end before the reservation (profiled solo times)",
     QueueDiscipline::kEasy},
};

}  // namespace

const QueueRegistry& queue_registry() {
  static constexpr QueueRegistry kRegistry("queue discipline", kDisciplines);
  return kRegistry;
}

std::string_view to_string(QueueDiscipline d) { return queue_registry().name_of(d); }

}  // namespace salus::cluster
