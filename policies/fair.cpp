#include <algorithm>
#include "policies/builtin.h"

namespace salus::policies {
namespace {

/// Service of a job: the solo time of the iterations it completed since the last job joined its
/// lane (lane_iterations x iter_ms). Counting profiled solo time rather than wall time keeps the
/// decision independent of interference and lets a run be planned exactly (see max_iterations).
core::TimeNs service(const core::SchedulerView& v, core::JobIndex j) {
  const auto i = static_cast<std::size_t>(j);
  return v.states[i].lane_iterations * v.specs[i].iter_ns;
}

class Fair final : public core::Policy {
 public:
  std::string_view name() const override { return "fair"; }
  std::string_view description() const override { return kFairDescription; }
  core::LaneMode default_lane_mode() const override { return core::LaneMode::kSingle; }
  bool supports(core::LaneMode m) const override { return m != core::LaneMode::kExclusive; }
  core::Decision choose(const core::SchedulerView& v, const core::LaneSnapshot& lane) const override {
    // (service, submission order) is a strict total order; find the least and the runner-up.
    auto less = [&](core::JobIndex a, core::TimeNs sa, core::JobIndex b, core::TimeNs sb) {
      return sa < sb || (sa == sb && core::earlier_submitted(v, a, b));
    };
    core::JobIndex best = core::kNoJob, second = core::kNoJob;
    core::TimeNs best_s = 0, second_s = 0;
    for (core::JobIndex j : lane.jobs) {
      const core::TimeNs s = service(v, j);
      if (best == core::kNoJob || less(j, s, best, best_s)) {
        second = best;
        second_s = best_s;
        best = j;
        best_s = s;
      } else if (second == core::kNoJob || less(j, s, second, second_s)) {
        second = j;
        second_s = s;
      }
    }
    const auto b = static_cast<std::size_t>(best);
    const std::int64_t remaining = v.states[b].remaining_iterations(v.specs[b]);
    if (second == core::kNoJob) return {best, remaining};
    // best keeps winning while (best_s + m * d, best) < (second_s, second), for m = 0 .. k-1.
    const core::TimeNs d = v.specs[b].iter_ns;
    const core::TimeNs gap = second_s - best_s;  // >= 0
    const bool wins_ties = core::earlier_submitted(v, best, second);
    const std::int64_t k = wins_ties ? gap / d + 1 : (gap + d - 1) / d;
    return {best, std::max<std::int64_t>(1, std::min(k, remaining))};
  }
};

}  // namespace

std::unique_ptr<core::Policy> make_fair() { return std::make_unique<Fair>(); }

}  // namespace salus::policies
