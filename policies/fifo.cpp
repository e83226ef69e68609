#include <string>
#include "core/errors.h"
#include "policies/builtin.h"

namespace salus::policies {
namespace {

class Fifo final : public core::Policy {
 public:
  std::string_view name() const override { return "fifo"; }
  std::string_view description() const override { return kFifoDescription; }
  core::LaneMode default_lane_mode() const override { return core::LaneMode::kExclusive; }
  bool supports(core::LaneMode m) const override { return m == core::LaneMode::kExclusive; }
  core::Decision choose(const core::SchedulerView& v, const core::LaneSnapshot& lane) override {
    // Exclusive mode admits one job at a time, so the lane holds exactly one.
    SALUS_INVARIANT(lane.jobs.size() == 1, "fifo runs one job at a time", std::to_string(lane.jobs.size()));
    const core::JobIndex j = lane.jobs.front();
    const auto i = static_cast<std::size_t>(j);
    return {j, v.states[i].remaining_iterations(v.specs[i])};
  }
};

}  // namespace

std::unique_ptr<core::Policy> make_fifo() { return std::make_unique<Fifo>(); }

}  // namespace salus::policies
