#include "policies/builtin.h"

namespace salus::policies {
namespace {

class Pack final : public core::Policy {
 public:
  std::string_view name() const override { return "pack"; }
  std::string_view description() const override { return kPackDescription; }
  core::LaneMode default_lane_mode() const override { return core::LaneMode::kAuto; }
  bool supports(core::LaneMode m) const override { return m != core::LaneMode::kExclusive; }
  core::Decision choose(const core::SchedulerView& v, const core::LaneSnapshot& lane) override {
    // lane.jobs is in admission order.
    const core::JobIndex j = lane.jobs.front();
    const auto i = static_cast<std::size_t>(j);
    return {j, v.states[i].remaining_iterations(v.specs[i])};
  }
};

}  // namespace

std::unique_ptr<core::Policy> make_pack() { return std::make_unique<Pack>(); }

}  // namespace salus::policies
