#include "experiments/bound_watch.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <utility>

#include "core/errors.h"

namespace salus::experiments {

BoundWatch::BoundWatch(std::span<const core::JobSpec> jobs, BoundKind kind, double bound_s,
                       std::vector<core::TimeNs> floor_ns)
    : jobs_(jobs), kind_(kind), floor_ns_(std::move(floor_ns)), bound_s_(bound_s), order_(jobs.size()) {
  SALUS_INVARIANT(floor_ns_.empty() || floor_ns_.size() == jobs.size(), "a bound watch has one floor per job",
                  std::to_string(floor_ns_.size()));
  if (kind_ != BoundKind::kAvgJct) floor_ns_.clear();
  cap_ns_ = bound_s > 0 ? static_cast<core::TimeNs>(std::floor(std::min(bound_s * 1e9, 9e18))) : 0;
  for (const core::TimeNs f : floor_ns_) future_ns_ += std::min(f, cap_ns_);
  std::iota(order_.begin(), order_.end(), std::size_t{0});
  std::stable_sort(order_.begin(), order_.end(),
                   [&](std::size_t a, std::size_t b) { return jobs_[a].arrival_ns < jobs_[b].arrival_ns; });
}

core::TimeNs BoundWatch::event_ns(std::span<const core::JobState> states, std::size_t job) const {
  // A gang job finishes (and starts) when its last replica does: its merged state says so
  // (cluster::ClusterOptions::progress).
  const core::JobState& st = states[job];
  const core::TimeNs e = kind_ == BoundKind::kAvgJct ? st.finish_ns : st.first_start_ns;
  return e < 0 ? core::kNever : e;
}

double BoundWatch::lower_bound_s(const core::Progress& p) {
  SALUS_INVARIANT(p.jobs.size() == jobs_.size(), "a progress hook is shown one state per job",
                  std::to_string(p.jobs.size()));
  const core::TimeNs now = p.now;
  for (; cursor_ < order_.size() && jobs_[order_[cursor_]].arrival_ns <= now; ++cursor_) {
    open_.push_back(order_[cursor_]);
    if (!floor_ns_.empty()) future_ns_ -= std::min(floor_ns_[order_[cursor_]], cap_ns_);
  }
  // Each open job: rejected (out of the average, and of the divisor), its event reached by now
  // (kept: a state's time at or before now is final; a plan may have set a later one
  // speculatively, which is why the event counts only once now has reached it), or open still,
  // counting now - arrival. Rejection happens at arrival, and arrivals before now are processed.
  core::Int128 open_ns = 0;
  std::size_t kept = 0;
  for (const std::size_t j : open_) {
    const core::TimeNs arrival = jobs_[j].arrival_ns;
    if (p.jobs[j].status == core::JobStatus::kRejected) {
      ++rejected_;
      continue;
    }
    if (const core::TimeNs e = event_ns(p.jobs, j); e <= now) {
      closed_ns_ += e - arrival;
      continue;
    }
    core::TimeNs at_least = now;
    if (!floor_ns_.empty()) {
      // Started by now: from its first start (final once reached); else it starts now at the earliest.
      const core::TimeNs start = p.jobs[j].first_start_ns;
      at_least = std::max(now, (start >= 0 && start <= now ? start : now) + floor_ns_[j]);
    }
    open_ns += at_least - arrival;
    open_[kept++] = j;
  }
  open_.resize(kept);
  const auto counted = static_cast<std::int64_t>(jobs_.size()) - rejected_;
  if (counted <= 0) return 0;
  // As core::compute_metrics divides: rounding is monotone, so a larger sum over a divisor no
  // larger gives an average no smaller, bit for bit.
  return static_cast<double>(closed_ns_ + open_ns + future_ns_) / static_cast<double>(counted) / 1e9;
}

void BoundWatch::check(const core::Progress& p) {
  if (const double lb = lower_bound_s(p); lb > bound_s_) throw BoundMissed{.at_ns = p.now, .lower_bound_s = lb};
}

std::vector<core::TimeNs> solo_floors(std::span<const core::JobSpec> jobs) {
  std::vector<core::TimeNs> floors(jobs.size());
  for (std::size_t j = 0; j < jobs.size(); ++j) floors[j] = jobs[j].solo_ns() + std::max<core::TimeNs>(0, jobs[j].first_iter_extra_ns);
  return floors;
}

core::ProgressHook watch_hook(BoundWatch& watch, core::ProgressHook also) {
  return [&watch, also = std::move(also)](const core::Progress& p) {
    if (also) also(p);
    watch.check(p);
  };
}

}  // namespace salus::experiments
