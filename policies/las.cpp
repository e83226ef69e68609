#include <algorithm>

#include "policies/builtin.h"
#include "policies/least_service.h"

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
  /// A newcomer has attained nothing: it runs next, or takes turns with jobs that have attained
  /// nothing either.
  Newcomer newcomer() const override { return Newcomer::kTakesTurn; }
  core::Decision choose(const core::SchedulerView& v, const core::LaneSnapshot& lane) override {
    return run_until_overtaken(v, least_two(v, lane.jobs, [&](core::JobIndex j) { return attained(v, j); }));
  }
  /// The same choices as a rotation: each job's iterations at its attained-service levels.
  bool plan(const core::SchedulerView& v, const core::LaneSnapshot& lane, std::vector<core::RotationEntry>& out) override {
    for (core::JobIndex j : lane.jobs) {
      const auto i = static_cast<std::size_t>(j);
      out.push_back({j, attained(v, j), v.specs[i].iter_ns, v.states[i].submit_rank});
    }
    return true;
  }
};

}  // namespace

std::unique_ptr<core::Policy> make_las() { return std::make_unique<Las>(); }

}  // namespace salus::policies
