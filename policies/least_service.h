#pragma once
/// Shared by the service-equalising policies (fair, las): the job with the least service runs
/// until it would overtake the runner-up.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>

#include "core/policy.h"

namespace salus::policies {

/// The least-served job of `jobs` and the runner-up by (service, submission order); `service(j)`
/// in ns. `second` is kNoJob when there is one job.
struct LeastTwo {
  core::JobIndex best = core::kNoJob, second = core::kNoJob;
  core::TimeNs best_s = 0, second_s = 0;
};

template <typename Service>
LeastTwo least_two(const core::SchedulerView& v, std::span<const core::JobIndex> jobs, Service service) {
  auto less = [&](core::JobIndex a, core::TimeNs sa, core::JobIndex b, core::TimeNs sb) {
    return sa < sb || (sa == sb && core::earlier_submitted(v, a, b));
  };
  LeastTwo t;
  for (core::JobIndex j : jobs) {
    const core::TimeNs s = service(j);
    if (t.best == core::kNoJob || less(j, s, t.best, t.best_s)) {
      t.second = t.best;
      t.second_s = t.best_s;
      t.best = j;
      t.best_s = s;
    } else if (t.second == core::kNoJob || less(j, s, t.second, t.second_s)) {
      t.second = j;
      t.second_s = s;
    }
  }
  return t;
}

/// `best` runs until one more iteration would put it past the runner-up (ties go to the job
/// submitted first), at least one iteration, at most what it has left.
inline core::Decision run_until_overtaken(const core::SchedulerView& v, const LeastTwo& t) {
  const auto b = static_cast<std::size_t>(t.best);
  const std::int64_t remaining = v.states[b].remaining_iterations(v.specs[b]);
  if (t.second == core::kNoJob) return {t.best, remaining};
  const core::TimeNs d = v.specs[b].iter_ns;
  const core::TimeNs gap = t.second_s - t.best_s;  // >= 0
  const bool wins_ties = core::earlier_submitted(v, t.best, t.second);
  const std::int64_t k = wins_ties ? gap / d + 1 : (gap + d - 1) / d;
  return {t.best, std::max<std::int64_t>(1, std::min(k, remaining))};
}

}  // namespace salus::policies
