#include "policies/builtin.h"

namespace salus::policies {
namespace {

class Srtf final : public core::Policy {
 public:
  std::string_view name() const override { return "srtf"; }
  std::string_view description() const override { return kSrtfDescription; }
  core::LaneMode default_lane_mode() const override { return core::LaneMode::kSingle; }
  /// Exclusive too (gpus_needed's exclusive SRTF baseline): one job admitted at a time, kept
  /// until it finishes, so there SRTF is non-preemptive, the shortest waiting job first.
  bool supports(core::LaneMode m) const override { (void)m; return true; }
  /// The paper (§4.2): the higher-priority job is admitted as long as its own safety condition is
  /// met. A pending job has run nothing, so its remaining solo time is its whole solo time.
  std::int64_t admission_key(const core::SchedulerView& v, core::JobIndex j) const override {
    const auto i = static_cast<std::size_t>(j);
    return v.states[i].remaining_solo_ns(v.specs[i]);
  }
  /// The newcomer runs next when its remaining solo time (all of it: it has run nothing) is below
  /// every lane job's (ties: the job submitted first), as choose() would decide. Monotone in
  /// admission order, whose key is that same remaining time.
  Newcomer newcomer() const override { return Newcomer::kByOrder; }
  bool starts_at_once(const core::SchedulerView& v, const core::LaneSnapshot& lane, core::JobIndex job) const override {
    const auto n = static_cast<std::size_t>(job);
    const core::TimeNs mine = v.states[n].remaining_solo_ns(v.specs[n]);
    for (core::JobIndex j : lane.jobs) {
      const auto i = static_cast<std::size_t>(j);
      const core::TimeNs left = v.states[i].remaining_solo_ns(v.specs[i]);
      if (left < mine || (left == mine && core::earlier_submitted(v, j, job))) return false;
    }
    return true;
  }
  core::Decision choose(const core::SchedulerView& v, const core::LaneSnapshot& lane) override {
    core::JobIndex best = core::kNoJob;
    core::TimeNs best_left = 0;
    for (core::JobIndex j : lane.jobs) {
      const auto i = static_cast<std::size_t>(j);
      const core::TimeNs left = v.states[i].remaining_solo_ns(v.specs[i]);
      if (best == core::kNoJob || left < best_left || (left == best_left && core::earlier_submitted(v, j, best))) {
        best = j;
        best_left = left;
      }
    }
    // Its remaining time only shrinks while it runs, so it stays the shortest until someone joins.
    const auto b = static_cast<std::size_t>(best);
    return {best, v.states[b].remaining_iterations(v.specs[b])};
  }
};

}  // namespace

std::unique_ptr<core::Policy> make_srtf() { return std::make_unique<Srtf>(); }

}  // namespace salus::policies
