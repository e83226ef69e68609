#include "policies/builtin.h"

namespace salus::policies {
namespace {

/// Strict priorities from the trace's `priority` column (JobSpec::priority, 0 when absent):
/// higher first, FIFO (arrival order) within a level, at admission and in the lane. Preemptive at
/// iteration boundaries: a higher-priority job that joins the lane runs from the next boundary.
class Priority final : public core::Policy {
 public:
  std::string_view name() const override { return "priority"; }
  std::string_view description() const override { return kPriorityDescription; }
  core::LaneMode default_lane_mode() const override { return core::LaneMode::kSingle; }
  bool supports(core::LaneMode m) const override { return m != core::LaneMode::kExclusive; }
  std::int64_t admission_key(const core::SchedulerView& v, core::JobIndex j) const override {
    return -static_cast<std::int64_t>(v.specs[static_cast<std::size_t>(j)].priority);
  }
  /// The newcomer runs next when its priority is above every lane job's (ties: the job submitted
  /// first), as choose() would decide; monotone in admission order (key: -priority).
  Newcomer newcomer() const override { return Newcomer::kByOrder; }
  bool starts_at_once(const core::SchedulerView& v, const core::LaneSnapshot& lane, core::JobIndex job) const override {
    const std::int32_t mine = v.specs[static_cast<std::size_t>(job)].priority;
    for (core::JobIndex j : lane.jobs) {
      const std::int32_t p = v.specs[static_cast<std::size_t>(j)].priority;
      if (p > mine || (p == mine && core::earlier_submitted(v, j, job))) return false;
    }
    return true;
  }
  core::Decision choose(const core::SchedulerView& v, const core::LaneSnapshot& lane) override {
    core::JobIndex best = core::kNoJob;
    for (core::JobIndex j : lane.jobs) {
      if (best == core::kNoJob) {
        best = j;
        continue;
      }
      const std::int32_t pj = v.specs[static_cast<std::size_t>(j)].priority;
      const std::int32_t pb = v.specs[static_cast<std::size_t>(best)].priority;
      if (pj > pb || (pj == pb && core::earlier_submitted(v, j, best))) best = j;
    }
    // Nothing but a join changes the order, and a join makes the lane decide again.
    const auto b = static_cast<std::size_t>(best);
    return {best, v.states[b].remaining_iterations(v.specs[b])};
  }
};

}  // namespace

std::unique_ptr<core::Policy> make_priority() { return std::make_unique<Priority>(); }

}  // namespace salus::policies
