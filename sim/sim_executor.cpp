#include "sim/sim_executor.h"

#include <algorithm>
#include <string>

#include "core/errors.h"

namespace salus::sim {

using core::TimeNs;

namespace {
using i128 = core::Int128;
TimeNs ceil_div(i128 a, i128 b) { return static_cast<TimeNs>((a + b - 1) / b); }
}  // namespace

SimExecutor::SimExecutor(std::span<const core::JobSpec> jobs, const InterferenceModel& model,
                         std::vector<TimeNs> actual_iter_ns)
    : jobs_(jobs), model_(model), iter_ns_(std::move(actual_iter_ns)) {
  if (iter_ns_.empty()) {
    iter_ns_.reserve(jobs.size());
    for (const core::JobSpec& s : jobs) iter_ns_.push_back(s.iter_ns);
  }
  SALUS_INVARIANT(iter_ns_.size() == jobs.size(), "one actual iteration time per job", std::to_string(iter_ns_.size()));
}

TimeNs SimExecutor::work_done(const Run& r, TimeNs t) const {
  if (r.slowdown == kSolo) return r.work_at_sync + (t - r.sync_ns);
  return r.work_at_sync + static_cast<TimeNs>(static_cast<i128>(t - r.sync_ns) * kSolo / r.slowdown);
}

void SimExecutor::schedule_end(Run& r) const {
  const TimeNs left = r.work_total - r.work_at_sync;
  r.end_ns = r.sync_ns + (r.slowdown == kSolo ? left : ceil_div(static_cast<i128>(left) * r.slowdown, kSolo));
  r.end_ns = std::max(r.end_ns, now_);
}

// The set of running lanes changed: bring every run's progress up to now and re-plan its end
// under the new slowdowns. Runs whose slowdown did not change keep their plan untouched, so an
// undisturbed run ends exactly when first planned.
void SimExecutor::resync() {
  if (model_.ideal()) return;
  // A lane running alone runs at solo speed under every model: interference needs company.
  if (runs_.size() == 1 && runs_.front().slowdown == kSolo) return;
  scratch_slowdown_.assign(runs_.size(), kSolo);
  if (runs_.size() > 1) {
    scratch_running_.clear();
    for (const Run& r : runs_) scratch_running_.push_back({&jobs_[static_cast<std::size_t>(r.d.job)]});
    model_.slowdowns(scratch_running_, scratch_slowdown_);
  }
  for (std::size_t i = 0; i < runs_.size(); ++i) {
    Run& r = runs_[i];
    const std::int64_t s = scratch_slowdown_[i];
    SALUS_INVARIANT(s >= kSolo, "slowdown >= 1", std::to_string(s));
    if (s == r.slowdown) continue;
    r.work_at_sync = std::min(work_done(r, now_), r.work_total);
    r.sync_ns = now_;
    r.slowdown = s;
    schedule_end(r);
  }
}

void SimExecutor::start(const core::Dispatch& d) {
  for (const Run& r : runs_) SALUS_INVARIANT(r.d.lane != d.lane, "one run per lane", "lane " + std::to_string(d.lane));
  SALUS_INVARIANT(d.iterations > 0 && d.extra_ns >= 0, "dispatch of at least one iteration", std::to_string(d.iterations));
  Run r;
  r.d = d;
  r.iter_ns = iter_ns_[static_cast<std::size_t>(d.job)];
  r.start_ns = now_;
  r.work_total = d.extra_ns + d.iterations * r.iter_ns;
  r.sync_ns = now_;
  r.end_ns = now_ + r.work_total;
  runs_.push_back(r);
  resync();
}

void SimExecutor::stop_at_boundary(core::LaneId lane) {
  for (Run& r : runs_) {
    if (r.d.lane != lane) continue;
    const TimeNs done = work_done(r, now_) - r.d.extra_ns;
    // The first boundary at or after now, and never before the first iteration ends.
    const std::int64_t k = std::max<std::int64_t>(1, done <= 0 ? 1 : (done + r.iter_ns - 1) / r.iter_ns);
    if (k >= r.d.iterations) return;
    r.d.iterations = k;
    r.work_total = r.d.extra_ns + k * r.iter_ns;
    schedule_end(r);
    return;
  }
}

bool SimExecutor::end_if_at_boundary(core::LaneId lane) {
  for (Run& r : runs_) {
    if (r.d.lane != lane) continue;
    const TimeNs done = work_done(r, now_) - r.d.extra_ns;
    if (done <= 0 || done % r.iter_ns != 0) return false;
    const std::int64_t k = done / r.iter_ns;
    if (k >= r.d.iterations) return false;  // its last boundary: it completes now anyway
    r.d.iterations = k;
    r.work_total = r.d.extra_ns + k * r.iter_ns;
    schedule_end(r);
    return true;
  }
  return false;
}

void SimExecutor::wait(TimeNs deadline, std::vector<core::Completion>& out) {
  SALUS_INVARIANT(!runs_.empty() || deadline != core::kNever, "wait has something to wait for", "");
  TimeNs next = core::kNever;
  for (const Run& r : runs_) next = std::min(next, r.end_ns);
  if (runs_.empty() || next > deadline) {
    now_ = std::max(now_, deadline);
    return;
  }
  now_ = next;
  std::size_t kept = 0;
  for (std::size_t i = 0; i < runs_.size(); ++i) {
    const Run& r = runs_[i];
    if (r.end_ns == next) {
      out.push_back(core::Completion{r.d.job, r.d.lane, r.d.iterations, r.start_ns, r.end_ns, false, {}});
    } else {
      runs_[kept++] = r;
    }
  }
  runs_.resize(kept);
  resync();
}

}  // namespace salus::sim
