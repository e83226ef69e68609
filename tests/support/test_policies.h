#pragma once
// Policies written for the core's tests (not in the registry).
#include <cstddef>
#include <string_view>

#include "core/policy.h"

namespace salus::test {

/// Within a lane the earliest admitted job runs to completion (what PACK does), in any lane mode.
class FirstAdmitted final : public core::Policy {
 public:
  std::string_view name() const override { return "first"; }
  std::string_view description() const override { return "test"; }
  core::LaneMode default_lane_mode() const override { return core::LaneMode::kAuto; }
  bool supports(core::LaneMode) const override { return true; }
  core::Decision choose(const core::SchedulerView& v, const core::LaneSnapshot& lane) override {
    const core::JobIndex j = lane.jobs.front();
    const auto i = static_cast<std::size_t>(j);
    return {j, v.states[i].remaining_iterations(v.specs[i])};
  }
};

}  // namespace salus::test
