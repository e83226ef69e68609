#include <algorithm>

#include "policies/builtin.h"

namespace salus::policies {
namespace {

/// Attained service: the solo time of the iterations a job completed (iterations done x
/// iter_ms). Like FAIR's service it counts profiled solo time, not wall time, so the decision
/// does not depend on interference and a run can be planned exactly.
core::TimeNs attained(const core::SchedulerView& v, core::JobIndex j) {
  const auto i = static_cast<std::size_t>(j);
  return v.states[i].iterations_done * v.specs[i].iter_ns;
}

/// Least attained service (preemptive): at every boundary the job that has received the least
/// service so far runs; a newcomer (service 0) runs until it has caught up with the others. Needs
/// no state of its own: JobState::iterations_done is the loop's, and admission is by arrival (a
/// pending job has attained nothing). A scan per decision, as SRTF.
class Las final : public core::Policy {
 public:
  std::string_view name() const override { return "las"; }
  std::string_view description() const override { return kLasDescription; }
  core::LaneMode default_lane_mode() const override { return core::LaneMode::kSingle; }
  bool supports(core::LaneMode m) const override { return m != core::LaneMode::kExclusive; }
  core::Decision choose(const core::SchedulerView& v, const core::LaneSnapshot& lane) override {
    auto less = [&](core::JobIndex a, core::TimeNs sa, core::JobIndex b, core::TimeNs sb) {
      return sa < sb || (sa == sb && core::earlier_submitted(v, a, b));
    };
    core::JobIndex best = core::kNoJob, second = core::kNoJob;
    core::TimeNs best_s = 0, second_s = 0;
    for (core::JobIndex j : lane.jobs) {
      const core::TimeNs s = attained(v, j);
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
    const core::TimeNs gap = second_s - best_s;
    const std::int64_t k = core::earlier_submitted(v, best, second) ? gap / d + 1 : (gap + d - 1) / d;
    return {best, std::max<std::int64_t>(1, std::min(k, remaining))};
  }
};

}  // namespace

std::unique_ptr<core::Policy> make_las() { return std::make_unique<Las>(); }

}  // namespace salus::policies
