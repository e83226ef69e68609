#include "sim/sim_executor.h"

#include <algorithm>
#include <string>

#include "core/errors.h"

namespace salus::sim {

using core::TimeNs;

namespace {
using i128 = core::Int128;
}  // namespace

SimExecutor::SimExecutor(std::span<const core::JobSpec> jobs, const InterferenceModel& model,
                         std::vector<TimeNs> actual_iter_ns, TimeNs switch_cost_ns, std::int64_t paging_bytes_per_s)
    : SimExecutor(jobs, model, switch_cost_ns, paging_bytes_per_s,
                  actual_iter_ns.empty() ? nullptr
                                         : std::make_shared<const std::vector<TimeNs>>(std::move(actual_iter_ns))) {}

SimExecutor::SimExecutor(std::span<const core::JobSpec> jobs, const InterferenceModel& model, TimeNs switch_cost_ns,
                         std::int64_t paging_bytes_per_s, std::shared_ptr<const std::vector<TimeNs>> actual_iter_ns)
    : jobs_(jobs),
      model_(model),
      iter_table_(std::move(actual_iter_ns)),
      switch_cost_ns_(switch_cost_ns),
      paging_bytes_per_s_(paging_bytes_per_s) {
  if (iter_table_) iter_ns_ = *iter_table_;
  SALUS_INVARIANT(iter_ns_.empty() || iter_ns_.size() == jobs.size(), "one actual iteration time per job", std::to_string(iter_ns_.size()));
  SALUS_INVARIANT(switch_cost_ns >= 0, "switching cost >= 0", std::to_string(switch_cost_ns));
  SALUS_INVARIANT(paging_bytes_per_s >= 0, "paging bandwidth >= 0", std::to_string(paging_bytes_per_s));
}

void SimExecutor::last_job_ended(core::LaneId lane) {
  const std::size_t i = lane_slot(lane);
  SALUS_INVARIANT(last_job_[i] >= 0, "a lane's ended last job ran there", std::to_string(lane));
  last_job_[i] = core::kEndedJob;
}

void SimExecutor::rebase(std::span<const core::JobSpec> jobs, std::span<const core::TimeNs> iter_ns) {
  SALUS_INVARIANT(jobs.size() >= jobs_.size() && (iter_ns.empty() || iter_ns.size() == jobs.size()),
                  "a rebase keeps every job, one actual time per job", std::to_string(jobs.size()));
  jobs_ = jobs;
  iter_table_.reset();
  iter_ns_ = iter_ns;
}

std::size_t SimExecutor::find_lane(core::LaneId lane) const {
  return static_cast<std::size_t>(std::find(lane_ids_.begin(), lane_ids_.end(), lane) - lane_ids_.begin());
}

std::size_t SimExecutor::lane_slot(core::LaneId lane) {
  const std::size_t i = find_lane(lane);
  if (i == lane_ids_.size()) {
    lane_ids_.push_back(lane);
    last_job_.push_back(core::kNoJob);
    transfer_ns_.push_back(0);
  }
  return i;
}

void SimExecutor::lane_closed(core::LaneId lane) {
  const std::size_t i = find_lane(lane);
  if (i == lane_ids_.size()) return;
  SALUS_INVARIANT(transfer_ns_[i] == 0, "a lane closes with no transfer due", std::to_string(lane));
  lane_ids_.erase(lane_ids_.begin() + static_cast<std::ptrdiff_t>(i));
  last_job_.erase(last_job_.begin() + static_cast<std::ptrdiff_t>(i));
  transfer_ns_.erase(transfer_ns_.begin() + static_cast<std::ptrdiff_t>(i));
}

void SimExecutor::charge_transfer(core::JobIndex job, core::LaneId lane) {
  SALUS_INVARIANT(paging_bytes_per_s_ > 0, "paging on an executor that pages", "");
  const core::Bytes p = jobs_[static_cast<std::size_t>(job)].persistent;
  transfer_ns_[lane_slot(lane)] +=
      static_cast<TimeNs>((static_cast<i128>(p) * core::kNsPerS + paging_bytes_per_s_ - 1) / paging_bytes_per_s_);
}

TimeNs SimExecutor::duration(TimeNs work, std::int64_t s) const {
  if (s == kSolo) return work;
  // 128-bit division is a library call: only where the product needs it.
  if (work <= (core::kNever - kSolo) / s) return (work * s + kSolo - 1) / kSolo;
  return static_cast<TimeNs>((static_cast<i128>(work) * s + kSolo - 1) / kSolo);
}

SimExecutor::Progress SimExecutor::progress(const Run& r, TimeNs t) const {
  auto worked = [&](TimeNs elapsed) {
    if (r.slowdown == kSolo) return elapsed;
    if (elapsed <= core::kNever / kSolo) return elapsed * kSolo / r.slowdown;
    return static_cast<TimeNs>(static_cast<i128>(elapsed) * kSolo / r.slowdown);
  };
  if (t < r.first_end_ns) {
    return {r.iter_at_sync, r.work_at_sync + worked(t - r.sync_ns), t == r.sync_ns && r.work_at_sync == 0 && r.iter_at_sync > 0};
  }
  const std::int64_t m = (t - r.first_end_ns) / r.period_ns;
  const TimeNs started = r.first_end_ns + m * r.period_ns;
  return {r.iter_at_sync + 1 + m, worked(t - started), t == started};
}

// The run's iteration ends from sync_ns on, at its current slowdown.
void SimExecutor::plan(Run& r) const {
  r.first_end_ns = r.sync_ns + duration(iteration_work(r, r.iter_at_sync) - r.work_at_sync, r.slowdown);
  r.period_ns = duration(r.iter_ns, r.slowdown);
  r.end_ns = r.first_end_ns + (r.d.iterations - 1 - r.iter_at_sync) * r.period_ns;
}

void SimExecutor::truncate(Run& r, std::int64_t iterations) const {
  r.d.iterations = iterations;
  r.end_ns = r.first_end_ns + (iterations - 1 - r.iter_at_sync) * r.period_ns;
}

void SimExecutor::unpad(Run& r) {
  const Progress p = progress(r, now_);
  const std::int64_t i = p.iteration;  // in flight (at a boundary: the one starting now)
  if (p.work < r.own_ns + (i == 0 ? r.extra_ns : 0)) {
    r.iter_ns = r.own_ns;
    r.iter_at_sync = i;
    r.work_at_sync = p.work;
    r.sync_ns = now_;
    r.d.iterations = i + 1;
    plan(r);  // at its slowdown so far; resync plans it again at the new one
    ++unpadded_work_;
    return;
  }
  truncate(r, i + 1);  // its padded end
  r.held = true;
  ++unpadded_held_;
}

const SimExecutor::Run* SimExecutor::find_run(core::LaneId lane) const {
  for (const Run& r : runs_) {
    if (r.d.lane == lane) return &r;
  }
  return nullptr;
}

SimExecutor::RunShape SimExecutor::shape(core::LaneId lane) const {
  const Run* r = find_run(lane);
  if (r == nullptr) return {};
  SALUS_INVARIANT(!dirty_ || r->held, "a run's shape is read after its slowdown is re-evaluated", std::to_string(lane));
  return {.running = true, .held = r->held, .slowdown = r->slowdown, .iter_ns = r->iter_ns, .own_ns = r->own_ns,
          .sync_ns = r->sync_ns, .period_ns = r->period_ns, .end_ns = r->end_ns, .iterations = r->d.iterations};
}

void SimExecutor::pace(core::LaneId lane, TimeNs iter_ns) {
  Run* r = find_run(lane);
  SALUS_INVARIANT(r != nullptr && !r->plan && !r->held && r->start_ns == now_ && r->sync_ns == now_ &&
                      r->iter_at_sync == 0 && r->work_at_sync == 0 && iter_ns >= r->own_ns,
                  "a run is paced as it starts", std::to_string(lane));
  r->iter_ns = iter_ns;
  plan(*r);
}

std::optional<core::Completion> SimExecutor::unpad_at(core::LaneId lane, TimeNs t) {
  Run* found = find_run(lane);
  SALUS_INVARIANT(found != nullptr && !found->plan && found->iter_ns > found->own_ns &&
                      (found->held || found->slowdown == kSolo) && t >= now_,
                  "unpad_at a paced run, alone", std::to_string(lane));
  Run& r = *found;
  const Progress p = progress(r, t);
  const std::int64_t i = p.iteration;
  truncate(r, i + 1);
  if (!r.held && p.work < r.own_ns + (i == 0 ? r.extra_ns : 0)) {
    // Its work so far is the same whether padded or not (it runs alone, at solo speed): only
    // where the iteration ends moves. A later unpad finds it as lock-step has it.
    r.end_ns = t + duration(r.own_ns + (i == 0 ? r.extra_ns : 0) - p.work, r.slowdown);
    return std::nullopt;
  }
  core::Completion c{r.d.job, r.d.lane, r.d.iterations, r.start_ns, t, false, {}};
  c.switch_ns = r.switch_ns;
  runs_.erase(runs_.begin() + (found - runs_.data()));
  dirty_ = true;
  return c;
}

// The set of running lanes changed: bring every run whose slowdown changes up to now and re-plan
// its boundaries. Runs whose slowdown did not change keep their plan untouched, so an undisturbed
// run ends exactly when first planned.
void SimExecutor::resync() {
  dirty_ = false;
  if (model_.ideal()) return;
  // A lane running alone runs at solo speed under every model: interference needs company.
  if (runs_.size() == 1 && runs_.front().slowdown == kSolo) return;
  if (runs_.size() > 1) {
    for (Run& r : runs_) {
      if (r.iter_ns > r.own_ns && !r.held && !r.plan) unpad(r);
    }
  }
  // The runs the model sees: every run but the held lanes, in lane order.
  scratch_slowdown_.assign(runs_.size(), kSolo);
  scratch_running_.clear();
  for (const Run& r : runs_) {
    if (!r.held) scratch_running_.push_back({&jobs_[static_cast<std::size_t>(r.d.job)]});
  }
  if (scratch_running_.size() > 1) {
    scratch_seen_.assign(scratch_running_.size(), kSolo);
    model_.slowdowns(scratch_running_, scratch_seen_);
    std::size_t k = 0;
    for (std::size_t i = 0; i < runs_.size(); ++i) {
      if (!runs_[i].held) scratch_slowdown_[i] = scratch_seen_[k++];
    }
  }
  for (std::size_t i = 0; i < runs_.size(); ++i) {
    Run& r = runs_[i];
    if (r.held) continue;
    const std::int64_t s = scratch_slowdown_[i];
    SALUS_INVARIANT(s >= kSolo, "slowdown >= 1", std::to_string(s));
    if (s == r.slowdown) continue;
    const Progress p = progress(r, now_);
    r.iter_at_sync = p.iteration;
    r.work_at_sync = p.work;
    r.sync_ns = now_;
    r.slowdown = s;
    plan(r);
  }
}

void SimExecutor::start_paced(const core::Dispatch& d, TimeNs iter_ns) {
  SALUS_INVARIANT(d.iterations > 0 && d.extra_ns >= 0, "dispatch of at least one iteration", std::to_string(d.iterations));
  SALUS_INVARIANT(d.lane >= 0, "dispatch to a lane", std::to_string(d.lane));
  // Kept in lane order, so that the model sees the running set in the same order whatever the
  // history of the runs (the shares model sums floating-point figures).
  auto pos = std::lower_bound(runs_.begin(), runs_.end(), d.lane, [](const Run& r, core::LaneId l) { return r.d.lane < l; });
  SALUS_INVARIANT(pos == runs_.end() || pos->d.lane != d.lane, "one run per lane", "lane " + std::to_string(d.lane));
  const std::size_t lane = lane_slot(d.lane);
  Run r;
  r.d = d;
  r.iter_ns = iter_ns;
  r.own_ns = iter_time(d.job);
  r.switch_ns = last_job_[lane] != core::kNoJob && last_job_[lane] != d.job ? switch_cost(d.job) : 0;
  r.extra_ns = d.extra_ns + r.switch_ns + transfer_ns_[lane];
  transfer_ns_[lane] = 0;
  last_job_[lane] = d.job;
  r.start_ns = now_;
  r.sync_ns = now_;
  plan(r);
  runs_.insert(pos, r);
  dirty_ = true;
}

void SimExecutor::stop_at_boundary(core::LaneId lane) {
  for (Run& r : runs_) {
    if (r.d.lane != lane) continue;
    if (r.plan) return;
    // Progress up to now does not depend on a pending resync: a new slowdown acts from now on.
    const Progress p = progress(r, now_);
    // The first boundary at or after now, and never before the first iteration ends.
    const std::int64_t k = std::max<std::int64_t>(1, p.at_boundary ? p.iteration : p.iteration + 1);
    if (k >= r.d.iterations) return;
    truncate(r, k);
    return;
  }
}

void SimExecutor::stop_after_iteration_at(core::LaneId lane, TimeNs t) {
  SALUS_INVARIANT(t >= now_, "a run is stopped after an iteration not yet ended", std::to_string(t));
  for (Run& r : runs_) {
    if (r.d.lane != lane) continue;
    SALUS_INVARIANT(!r.plan, "a plan is never cut", "lane " + std::to_string(lane));
    const std::int64_t k = progress(r, t).iteration + 1;
    if (k < r.d.iterations) truncate(r, k);
    return;
  }
}

std::int64_t SimExecutor::iterations_by_next_boundary(core::LaneId lane, TimeNs t) const {
  for (const Run& r : runs_) {
    if (r.d.lane != lane) continue;
    if (r.plan) return kUnknownBoundary;
    // stop_at_boundary's boundary: the first at or after t, never before the first iteration.
    const Progress p = progress(r, std::max(t, now_));
    return std::min(r.d.iterations, std::max<std::int64_t>(1, p.at_boundary ? p.iteration : p.iteration + 1));
  }
  return kUnknownBoundary;
}

bool SimExecutor::end_if_at_boundary(core::LaneId lane) {
  for (Run& r : runs_) {
    if (r.d.lane != lane) continue;
    if (r.plan) return false;
    const Progress p = progress(r, now_);
    if (!p.at_boundary || p.iteration < 1) return false;
    if (p.iteration >= r.d.iterations) return false;  // its last boundary: it completes now anyway
    truncate(r, p.iteration);
    return true;
  }
  return false;
}

// The plan's steps are in sim/rotation.h: its jobs sorted by order into slots, each slot's
// iteration time, switching cost and key step, then stepped (and jumped) to its end.
bool SimExecutor::start_plan(const core::PlanDispatch& p, core::PlanReport& rep) {
  SALUS_INVARIANT(runs_.empty(), "a plan runs alone", "lane " + std::to_string(p.lane));
  const std::size_t lane = lane_slot(p.lane);
  SALUS_INVARIANT(last_job_[lane] == p.last_job && transfer_ns_[lane] == 0, "a plan starts where the lane stands",
                  "lane " + std::to_string(p.lane));
  for (const core::PlanJob& j : p.jobs) {
    SALUS_INVARIANT(j.remaining > 0 && j.step > 0, "a plan's jobs have work", std::to_string(j.job));
  }
  rotation::Tables& tb = rotation_;
  rotation::sort_by_order(p, tb.by_order, tb.sorted);
  const std::span<const core::PlanJob> jobs = tb.sorted.jobs;
  const std::size_t n = jobs.size();
  rotation::reset_report(tb.report, n);
  if (!rotation::keys_fit(jobs)) return false;
  tb.work.resize(n);
  tb.switch_cost.resize(n);
  tb.key_step.resize(n);
  for (std::size_t r = 0; r < n; ++r) {
    tb.work[r] = iter_time(jobs[r].job);
    tb.switch_cost[r] = switch_cost(jobs[r].job);
    tb.key_step[r] = static_cast<std::uint64_t>(jobs[r].step) << rotation::kOrderBits;
  }
  const rotation::Cursor c = rotation::run(tb, now_, p.last_job);
  if (c.total < 2) return false;
  rotation::write_report(tb, c, rep);
  run_plan(p, c.total, rep.last_job, rep.end_ns);
  return true;
}

void SimExecutor::run_plan(const core::PlanDispatch& p, std::int64_t iterations, core::JobIndex last, TimeNs end) {
  last_job_[lane_slot(p.lane)] = last;
  plan_last_job_ = p.last_job;
  Run run;
  run.d.job = last;
  run.d.lane = p.lane;
  run.d.iterations = iterations;
  run.d.lane_offset = p.lane_offset;
  run.d.lane_size = p.lane_size;
  run.start_ns = now_;
  run.sync_ns = now_;
  run.first_end_ns = end;
  run.end_ns = end;
  run.plan = true;
  runs_.push_back(run);
  dirty_ = true;
}

void SimExecutor::start_computed_plan(const core::PlanDispatch& p, const core::PlanReport& report) {
  SALUS_INVARIANT(runs_.empty(), "a plan runs alone", "lane " + std::to_string(p.lane));
  const std::size_t lane = lane_slot(p.lane);
  SALUS_INVARIANT(last_job_[lane] == p.last_job && transfer_ns_[lane] == 0 && report.end_ns > now_,
                  "a plan starts where the lane stands", "lane " + std::to_string(p.lane));
  std::int64_t total = 0;
  for (const std::int64_t k : report.iterations) total += k;
  run_plan(p, total, report.last_job, report.end_ns);
}

void SimExecutor::cancel_plan(core::LaneId lane) {
  SALUS_INVARIANT(runs_.size() == 1 && runs_.front().plan && runs_.front().d.lane == lane &&
                      runs_.front().start_ns == now_,
                  "cancel_plan takes back the plan started now", "lane " + std::to_string(lane));
  runs_.clear();
  last_job_[lane_slot(lane)] = plan_last_job_;
  dirty_ = true;
}

TimeNs SimExecutor::plan_end_ns() const {
  return runs_.size() == 1 && runs_.front().plan ? runs_.front().end_ns : core::kNever;
}

TimeNs SimExecutor::next_completion_ns() {
  if (dirty_) resync();
  TimeNs next = core::kNever;
  for (const Run& r : runs_) next = std::min(next, r.end_ns);
  return next;
}

void SimExecutor::wait(TimeNs deadline, std::vector<core::Completion>& out) {
  SALUS_INVARIANT(!runs_.empty() || deadline != core::kNever, "wait has something to wait for", "");
  if (dirty_) resync();
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
      core::Completion c{r.d.job, r.d.lane, r.d.iterations, r.start_ns, r.end_ns, false, {}};
      c.switch_ns = r.switch_ns;
      c.plan = r.plan;
      out.push_back(std::move(c));
    } else {
      runs_[kept++] = r;
    }
  }
  runs_.resize(kept);
  dirty_ = true;
}

}  // namespace salus::sim
