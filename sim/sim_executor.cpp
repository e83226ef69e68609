#include "sim/sim_executor.h"

#include <algorithm>
#include <bit>
#include <functional>
#include <string>

#include "core/errors.h"

namespace salus::sim {

using core::TimeNs;

namespace {
using i128 = core::Int128;
}  // namespace

SimExecutor::SimExecutor(std::span<const core::JobSpec> jobs, const InterferenceModel& model,
                         std::vector<TimeNs> actual_iter_ns, TimeNs switch_cost_ns, std::int64_t paging_bytes_per_s)
    : jobs_(jobs),
      model_(model),
      iter_ns_(std::move(actual_iter_ns)),
      switch_cost_ns_(switch_cost_ns),
      paging_bytes_per_s_(paging_bytes_per_s) {
  SALUS_INVARIANT(iter_ns_.empty() || iter_ns_.size() == jobs.size(), "one actual iteration time per job", std::to_string(iter_ns_.size()));
  SALUS_INVARIANT(switch_cost_ns >= 0, "switching cost >= 0", std::to_string(switch_cost_ns));
  SALUS_INVARIANT(paging_bytes_per_s >= 0, "paging bandwidth >= 0", std::to_string(paging_bytes_per_s));
}

std::size_t SimExecutor::lane_slot(core::LaneId lane) {
  const auto i = static_cast<std::size_t>(lane);
  if (i >= last_job_.size()) {
    last_job_.resize(i + 1, core::kNoJob);
    transfer_ns_.resize(i + 1, 0);
  }
  return i;
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

// The set of running lanes changed: bring every run whose slowdown changes up to now and re-plan
// its boundaries. Runs whose slowdown did not change keep their plan untouched, so an undisturbed
// run ends exactly when first planned.
void SimExecutor::resync() {
  dirty_ = false;
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
    const Progress p = progress(r, now_);
    r.iter_at_sync = p.iteration;
    r.work_at_sync = p.work;
    r.sync_ns = now_;
    r.slowdown = s;
    plan(r);
  }
}

void SimExecutor::start(const core::Dispatch& d) {
  SALUS_INVARIANT(d.iterations > 0 && d.extra_ns >= 0, "dispatch of at least one iteration", std::to_string(d.iterations));
  SALUS_INVARIANT(d.lane >= 0, "dispatch to a lane", std::to_string(d.lane));
  // Kept in lane order, so that the model sees the running set in the same order whatever the
  // history of the runs (the shares model sums floating-point figures).
  auto pos = std::lower_bound(runs_.begin(), runs_.end(), d.lane, [](const Run& r, core::LaneId l) { return r.d.lane < l; });
  SALUS_INVARIANT(pos == runs_.end() || pos->d.lane != d.lane, "one run per lane", "lane " + std::to_string(d.lane));
  const std::size_t lane = lane_slot(d.lane);
  Run r;
  r.d = d;
  r.iter_ns = iter_time(d.job);
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

bool SimExecutor::start_plan(const core::PlanDispatch& p, core::PlanReport& rep) {
  SALUS_INVARIANT(runs_.empty(), "a plan runs alone", "lane " + std::to_string(p.lane));
  const std::size_t lane = lane_slot(p.lane);
  SALUS_INVARIANT(last_job_[lane] == p.last_job && transfer_ns_[lane] == 0, "a plan starts where the lane stands",
                  "lane " + std::to_string(p.lane));
  const std::size_t n = p.jobs.size();
  for (const core::PlanJob& j : p.jobs) {
    SALUS_INVARIANT(j.remaining > 0 && j.step > 0, "a plan's jobs have work", std::to_string(j.job));
  }
  // Everything below works on the plan's jobs sorted by order (slot r), in `sp` and `sr`, and is
  // scattered back into `rep` at the end. The iteration chosen at each boundary is the least
  // (level, order); it takes the work of the same iteration in a run of its own: its time, the
  // job's first-iteration extra, and the switching cost when it starts a run of another job than
  // the lane's last. The least is found on one 64-bit key per slot: the level above a base,
  // shifted, and the slot below. Levels more than kHorizon above the base saturate there (the
  // key then is at most the true one, so every choice below the horizon is exact); the base is
  // the least level at the start, after every jump, and whenever the least key reaches the
  // horizon, so a plan of jobs days apart in service (LAS's newcomer; jobs of 10^6 iterations)
  // still runs whole.
  plan_by_order_.resize(n);
  for (std::size_t i = 0; i < n; ++i) plan_by_order_[i] = i;
  // The loop lists a lane's jobs in admission order, which is their order (arrival) under FAIR
  // and LAS unless a job was admitted past a blocked one: a check instead of a sort per plan.
  const auto by_order = [&](std::size_t x, std::size_t y) { return p.jobs[x].order < p.jobs[y].order; };
  if (!std::is_sorted(plan_by_order_.begin(), plan_by_order_.end(), by_order)) {
    std::sort(plan_by_order_.begin(), plan_by_order_.end(), by_order);
  }
  core::PlanDispatch& sp = plan_sorted_;
  sp.lane = p.lane;
  sp.last_job = p.last_job;
  sp.deadline = p.deadline;
  sp.jobs.resize(n);
  for (std::size_t r = 0; r < n; ++r) sp.jobs[r] = p.jobs[plan_by_order_[r]];
  core::PlanReport& sr = plan_report_;
  sr.iterations.assign(n, 0);
  sr.busy_ns.assign(n, 0);
  sr.first_start_ns.assign(n, -1);
  sr.switch_ns.assign(n, 0);
  sr.runs = 0;
  sr.switches = 0;
  sr.closed_form = 0;
  plan_level_.resize(n);
  for (std::size_t r = 0; r < n; ++r) {
    plan_level_[r] = sp.jobs[r].level;
    // A key's step must fit below the horizon (an iteration of 19 hours does not).
    if (sp.jobs[r].step >= kHorizon) return false;
  }
  if (n > (std::size_t{1} << kOrderBits)) return false;

  // Per slot, for the tight loop: its key, iteration time, key step, extra still to pay.
  plan_key_.resize(n);
  plan_work_.resize(n);
  plan_key_step_.resize(n);
  plan_extra_.resize(n);
  plan_switch_.resize(n);
  for (std::size_t r = 0; r < n; ++r) {
    plan_work_[r] = iter_time(sp.jobs[r].job);
    plan_switch_[r] = switch_cost(sp.jobs[r].job);
    plan_key_step_[r] = static_cast<std::uint64_t>(sp.jobs[r].step) << kOrderBits;
  }
  // The fastest job (least step; the first in order among equals) is taken out of the keys and
  // run in blocks: all its iterations whose key is below the least key of the others, in one
  // step (its consecutive iterations are one run). In these rotations the fastest job present
  // is usually alone, so the closed form of jump_plan does not apply, and it runs the most
  // iterations.
  std::size_t fr = 0;
  for (std::size_t r = 1; r < n; ++r) {
    if (sp.jobs[r].step < sp.jobs[fr].step) fr = r;
  }
  std::uint64_t fast_key = 0;
  // The lane's last job as a slot: kOther when it is not in the plan, kNone when there is none.
  const std::size_t kOther = n, kNone = n + 1;
  auto slot_of = [&](core::JobIndex job) {
    if (job == core::kNoJob) return kNone;
    for (std::size_t r = 0; r < n; ++r) {
      if (sp.jobs[r].job == job) return r;
    }
    return kOther;
  };
  // (Re)loads the tight loop's state from plan_level_ and sr (at the start and after a jump).
  TimeNs base = 0;
  auto load = [&] {
    base = *std::min_element(plan_level_.begin(), plan_level_.end());
    for (std::size_t r = 0; r < n; ++r) {
      const TimeNs above = std::min(plan_level_[r] - base, kHorizon);
      plan_key_[r] = (static_cast<std::uint64_t>(above) << kOrderBits) | r;
      plan_extra_[r] = sr.iterations[r] == 0 ? sp.jobs[r].extra_ns : 0;
    }
    fast_key = plan_key_[fr];
    plan_key_[fr] = ~std::uint64_t{0};
  };
  // With many jobs, the least key of the others comes from a binary heap of their keys (a key
  // names its slot) rather than a scan of them all at every iteration.
  const bool use_heap = n >= kHeapJobs;
  auto build_heap = [&] {
    if (!use_heap) return;
    plan_heap_.clear();
    for (std::size_t r = 0; r < n; ++r) {
      if (r != fr) plan_heap_.push_back(plan_key_[r]);
    }
    std::make_heap(plan_heap_.begin(), plan_heap_.end(), std::greater<>());
  };
  load();
  build_heap();
  TimeNs t = now_;
  std::size_t lr = slot_of(p.last_job);
  std::int64_t total = 0, runs = 0, switches = 0;
  std::size_t since_try = 0;
  const TimeNs deadline = p.deadline;
  const TimeNs fast_work = plan_work_[fr];
  const std::uint64_t fast_step = plan_key_step_[fr];
  const std::int64_t fast_remaining = sp.jobs[fr].remaining;
  constexpr std::uint64_t kSlotMask = (std::uint64_t{1} << kOrderBits) - 1;
  constexpr std::uint64_t kSaturated = static_cast<std::uint64_t>(kHorizon) << kOrderBits;
  while (true) {
    if (++since_try > n) {
      since_try = 0;
      // jump_plan reads levels and the report.
      for (std::size_t r = 0; r < n; ++r) plan_level_[r] = sp.jobs[r].level + sr.iterations[r] * sp.jobs[r].step;
      sr.runs = runs;
      sr.switches = switches;
      core::JobIndex last = lr < n ? sp.jobs[lr].job : p.last_job;
      std::size_t retry = n;
      if (jump_plan(sp, sr, t, last, total, retry)) {
        runs = sr.runs;
        switches = sr.switches;
        lr = slot_of(last);
        load();
        build_heap();
      }
      since_try = n + 1 - std::clamp<std::size_t>(retry, 1, n);  // try again after `retry` iterations
    }
    std::uint64_t* const key = plan_key_.data();
    std::uint64_t least;
    if (use_heap) {
      least = plan_heap_.front();
    } else {
      std::uint64_t m0 = key[0], m1 = key[0], m2 = key[0], m3 = key[0];  // four chains: no wait on each other
      std::size_t k = 0;
      for (; k + 4 <= n; k += 4) {
        m0 = std::min(m0, key[k]);
        m1 = std::min(m1, key[k + 1]);
        m2 = std::min(m2, key[k + 2]);
        m3 = std::min(m3, key[k + 3]);
      }
      for (; k < n; ++k) m0 = std::min(m0, key[k]);
      least = std::min(std::min(m0, m1), std::min(m2, m3));
    }
    if (std::min(fast_key, least) >= kSaturated) {
      // The next iteration is past the horizon: the keys again from the least level (O(n), once
      // per 2^46 ns of service).
      for (std::size_t r = 0; r < n; ++r) plan_level_[r] = sp.jobs[r].level + sr.iterations[r] * sp.jobs[r].step;
      load();
      build_heap();
      continue;
    }
    std::int64_t* const done = sr.iterations.data();
    if (fast_key < least) {
      // The fastest job's iterations below the others' least key, up to its last and to what
      // fits before the deadline: each takes fast_work, the first its extra and switching cost.
      std::int64_t k = static_cast<std::int64_t>((least - fast_key - 1) / fast_step) + 1;
      k = std::min(k, fast_remaining - done[fr]);
      const bool new_run = fr != lr;
      const bool switched = new_run && lr != kNone;
      const TimeNs first = fast_work + plan_extra_[fr] + (switched ? plan_switch_[fr] : 0);
      if (t > deadline - first) break;
      const std::int64_t fit = 1 + ((deadline - first) - t) / fast_work;
      const bool cut = fit < k;
      if (cut) k = fit;
      if (done[fr] == 0) sr.first_start_ns[fr] = t;
      plan_extra_[fr] = 0;
      runs += new_run;
      switches += switched;
      if (switched) sr.switch_ns[fr] += plan_switch_[fr];
      const TimeNs spent = first + (k - 1) * fast_work;
      t += spent;
      sr.busy_ns[fr] += spent;
      fast_key = std::min(fast_key + static_cast<std::uint64_t>(k) * fast_step, kSaturated | fr);
      lr = fr;
      total += k;
      done[fr] += k;
      if (cut || done[fr] == fast_remaining) break;
      continue;
    }
    const auto r = static_cast<std::size_t>(least & kSlotMask);
    const bool new_run = r != lr;
    const bool switched = new_run && lr != kNone;
    const TimeNs work = plan_work_[r] + plan_extra_[r] + (switched ? plan_switch_[r] : 0);
    if (t > deadline - work) break;
    std::int64_t k = 1;
    if (use_heap || !new_run) {
      // All the job's iterations below the next least key of the others, the fastest job's
      // included, are one stretch of its run, taken in one step as the fastest job's are (LAS:
      // a newcomer catching up with the others' service). Without the heap, only once the job
      // has won twice in a row (it costs a scan).
      std::uint64_t next = fast_key;
      if (use_heap) {
        const std::size_t h = plan_heap_.size();
        if (h > 1) next = std::min(next, plan_heap_[1]);
        if (h > 2) next = std::min(next, plan_heap_[2]);
      } else {
        for (std::size_t q = 0; q < n; ++q) {
          if (q != r) next = std::min(next, key[q]);
        }
      }
      k = static_cast<std::int64_t>((next - least - 1) / plan_key_step_[r]) + 1;
      k = std::min({k, sp.jobs[r].remaining - done[r], 1 + ((deadline - work) - t) / plan_work_[r]});
    }
    if (done[r] == 0) sr.first_start_ns[r] = t;
    plan_extra_[r] = 0;
    runs += new_run;
    switches += switched;
    if (switched) sr.switch_ns[r] += plan_switch_[r];
    const TimeNs spent = work + (k - 1) * plan_work_[r];
    t += spent;
    sr.busy_ns[r] += spent;
    key[r] = std::min(key[r] + static_cast<std::uint64_t>(k) * plan_key_step_[r], kSaturated | r);
    if (use_heap) {
      std::pop_heap(plan_heap_.begin(), plan_heap_.end(), std::greater<>());
      plan_heap_.back() = key[r];
      std::push_heap(plan_heap_.begin(), plan_heap_.end(), std::greater<>());
    }
    lr = r;
    total += k;
    done[r] += k;
    if (done[r] == sp.jobs[r].remaining) break;
  }
  if (total < 2) return false;
  // Back to the caller's order.
  rep.iterations.resize(n);
  rep.busy_ns.resize(n);
  rep.first_start_ns.resize(n);
  rep.switch_ns.resize(n);
  for (std::size_t r = 0; r < n; ++r) {
    const std::size_t i = plan_by_order_[r];
    rep.iterations[i] = sr.iterations[r];
    rep.busy_ns[i] = sr.busy_ns[r];
    rep.first_start_ns[i] = sr.first_start_ns[r];
    rep.switch_ns[i] = sr.switch_ns[r];
  }
  rep.runs = runs;
  rep.switches = switches;
  rep.closed_form = sr.closed_form;
  const core::JobIndex last = sp.jobs[lr].job;
  rep.last_job = last;
  rep.end_ns = t;
  run_plan(p, total, last, t);
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

// In closed form from here on. Let A be the job of least (level, order) among those of the least
// step d. When no job has two iterations before A's next (level + step above A's level, ties by
// order), no two consecutive iterations are of one job other than A: between levels x and x + d'
// of another job (d' >= d) lies one of A's, ties by order included (for x >= A's level, A has a
// level in (x, x + d]; for x below it, A's next level is before x + d'). The iterations below a level V are a prefix of the rotation; job i
// runs c_i = ceil((V - level_i) / step_i) of them, and every one of them starts a run of its own
// (paying the switching cost), except the prefix's first when the lane's last job is its job,
// and those of A's that follow another of A's with none of the others between them. Those are
// counted by marking, for each other job's iteration, the gap between A's iterations it falls
// in (gap k: after A's k-th iteration of the prefix), and counting the gaps left empty. V is at
// most the least last level (no job finishes in the prefix) and the level of every job yet to
// run in the plan (its first iteration, with its extra, is stepped), and is found from the
// linear bound on the time below it with every iteration a switch, then checked exactly; what
// is left is stepped by the caller.
bool SimExecutor::jump_plan(const core::PlanDispatch& p, core::PlanReport& rep, TimeNs& t, core::JobIndex& last,
                            std::int64_t& total, std::size_t& retry) {
  const std::size_t n = p.jobs.size();
  retry = n;
  if (last == core::kNoJob) return false;
  auto before = [&](std::size_t i, std::size_t k) {
    return plan_level_[i] < plan_level_[k] || (plan_level_[i] == plan_level_[k] && p.jobs[i].order < p.jobs[k].order);
  };
  std::size_t a = 0, first = 0;
  for (std::size_t i = 1; i < n; ++i) {
    if (p.jobs[i].step < p.jobs[a].step || (p.jobs[i].step == p.jobs[a].step && before(i, a))) a = i;
    if (before(i, first)) first = i;
  }
  const TimeNs la = plan_level_[a], da = p.jobs[a].step;
  TimeNs v_max = core::kNever, unrun = core::kNever;
  for (std::size_t i = 0; i < n; ++i) {
    // A job below A's level has at most one iteration before A's first (its next after A's
    // first, ties by order): no two of its own in a row.
    const TimeNs second = plan_level_[i] + p.jobs[i].step;
    if (second < la || (second == la && p.jobs[i].order < p.jobs[a].order)) return false;
    const core::PlanJob& j = p.jobs[i];
    if (rep.iterations[i] == 0) unrun = std::min(unrun, plan_level_[i]);
    v_max = std::min(v_max, plan_level_[i] + (j.remaining - rep.iterations[i] - 1) * j.step);
  }
  // A job yet to run in the plan bounds the jump: once the jobs at or below its level have run
  // (it among them), the caller may jump again (a long queue in one lane has many such jobs).
  if (unrun <= v_max) {
    v_max = unrun;
    if (v_max <= la) {
      retry = 0;
      for (std::size_t i = 0; i < n; ++i) retry += plan_level_[i] <= v_max;
      return false;
    }
  }
  if (v_max <= la) return false;
  const TimeNs budget = p.deadline == core::kNever ? core::kNever : p.deadline - t;
  auto bound = [&](std::size_t i) { return iter_time(p.jobs[i].job) + switch_cost(p.jobs[i].job); };
  plan_count_.resize(n);
  auto time_below = [&](TimeNs v) {  // time of the iterations below level v, each a switch: a bound
    i128 sum = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const TimeNs l = plan_level_[i];
      plan_count_[i] = v > l ? (v - l + p.jobs[i].step - 1) / p.jobs[i].step : 0;
      sum += static_cast<i128>(plan_count_[i]) * bound(i);
    }
    return sum;
  };
  TimeNs v = v_max;
  if (time_below(v) > budget) {
    // ceil(x) <= x + 1: V with sum_i ((V - l_i) / s_i + 1) * w_i <= budget over the jobs below
    // V fits; solved on the jobs below the estimate until that set is stable.
    double v_est = static_cast<double>(v_max);
    for (int round = 0; round < 8; ++round) {
      double rate = 0, fixed = 0;
      for (std::size_t i = 0; i < n; ++i) {
        const double l = static_cast<double>(plan_level_[i]);
        if (l >= v_est) continue;
        const double w = static_cast<double>(bound(i)), s = static_cast<double>(p.jobs[i].step);
        rate += w / s;
        fixed += w - l * w / s;
      }
      if (rate <= 0) return false;
      const double next_est = (static_cast<double>(budget) - fixed) / rate;
      if (next_est == v_est) break;
      v_est = next_est;
    }
    if (!(v_est > static_cast<double>(la)) || v_est >= static_cast<double>(v_max)) return false;
    v = static_cast<TimeNs>(v_est) - 1;
    if (v <= la || time_below(v) > budget) return false;
    // The bound ceil(x) <= x + 1 leaves up to one iteration per job unjumped; with many jobs,
    // stepping those (each step a scan of the jobs) costs more than bisecting for the last V
    // that fits, which lies within twice the largest step above the estimate.
    if (n > 24) {
      TimeNs max_step = 0;
      for (const core::PlanJob& j : p.jobs) max_step = std::max(max_step, j.step);
      TimeNs lo = v, hi = v_max;
      if (hi - lo > 2 * max_step) hi = lo + 2 * max_step;
      if (time_below(hi) <= budget) {
        lo = hi;
      } else {
        while (hi - lo > 1) {  // time_below(lo) fits, time_below(hi) does not
          const TimeNs mid = lo + (hi - lo) / 2;
          (time_below(mid) <= budget ? lo : hi) = mid;
        }
      }
      v = lo;
      time_below(v);  // plan_count_ for v
    }
  }
  // A's iterations in the prefix, and the gaps between them that the others' iterations hit.
  // When another job of A's step is less than one step above A (after it in order at equal
  // levels, A being the least), its m-th iteration lies between A's m-th and (m+1)-th: every
  // gap is hit, and the rotation alternates with no marking needed (O(n) however long).
  const std::int64_t ca = plan_count_[a];
  bool every_gap = false;
  for (std::size_t i = 0; i < n && !every_gap; ++i) {
    every_gap = i != a && p.jobs[i].step == da && plan_level_[i] < la + da;
  }
  plan_gaps_.assign(every_gap ? 1 : static_cast<std::size_t>(ca / 64 + 1), 0);
  std::uint64_t* const gaps = plan_gaps_.data();
  for (std::size_t i = 0; i < n && !every_gap; ++i) {
    if (i == a || plan_count_[i] == 0) continue;
    // Of A's iterations in the prefix, those before this job's next one: q + 1 when it lies
    // after A's q-th level after la, or on it with A first in order (q = (level - la) / da).
    // An iteration below la comes before all of A's: no gap.
    const TimeNs step = p.jobs[i].step;
    TimeNs from = plan_level_[i];
    std::int64_t c = plan_count_[i];
    if (from < la) {
      from += step;
      --c;
    }
    const TimeNs diff = from - la;
    std::int64_t q = diff / da;
    TimeNs rem = diff % da;
    const std::int64_t dq = step / da;
    const TimeNs dr = step % da;
    const std::int64_t a_first = p.jobs[a].order < p.jobs[i].order ? 1 : 0;
    // Two independent chains, the even and the odd iterations (steps of 2 * step), branch-free:
    // this loop runs once per iteration of the other jobs.
    const std::int64_t dq2 = (2 * step) / da;
    const TimeNs dr2 = (2 * step) % da;
    std::int64_t q1 = q + dq;
    TimeNs rem1 = rem + dr;
    if (rem1 >= da) {
      rem1 -= da;
      ++q1;
    }
    std::int64_t m = 0;
    for (; m + 1 < c; m += 2) {
      const std::int64_t k0 = q + ((rem > 0) | a_first);
      const std::int64_t k1 = q1 + ((rem1 > 0) | a_first);
      if (k1 >= ca) break;  // after A's last iteration of the prefix, as every later one
      gaps[k0 >> 6] |= std::uint64_t{1} << (k0 & 63);
      gaps[k1 >> 6] |= std::uint64_t{1} << (k1 & 63);
      const TimeNs r0 = rem + dr2, r1 = rem1 + dr2;
      const bool c0 = r0 >= da, c1 = r1 >= da;
      rem = c0 ? r0 - da : r0;
      rem1 = c1 ? r1 - da : r1;
      q += dq2 + c0;
      q1 += dq2 + c1;
    }
    if (m < c) {  // the last one, or the even one before an odd one past A's last
      const std::int64_t k0 = q + ((rem > 0) | a_first);
      if (k0 < ca) gaps[k0 >> 6] |= std::uint64_t{1} << (k0 & 63);
    }
  }
  gaps[0] &= ~std::uint64_t{1};  // before A's first iteration: no gap
  std::int64_t hit = 0;
  if (every_gap) {
    hit = ca - 1;
  } else {
    for (std::uint64_t g : plan_gaps_) hit += std::popcount(g);
  }
  const std::int64_t a_follows_a = (ca - 1) - hit;
  TimeNs spent = 0;
  std::size_t last_i = n;
  TimeNs last_level = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t c = plan_count_[i];
    if (c == 0) continue;
    const bool continues = i == first && p.jobs[i].job == last;  // the prefix's first, after its own
    const std::int64_t runs = c - (i == a ? a_follows_a : 0) - (continues ? 1 : 0);
    const TimeNs w = iter_time(p.jobs[i].job), sw = runs * switch_cost(p.jobs[i].job);
    const TimeNs top = plan_level_[i] + (c - 1) * p.jobs[i].step;
    if (last_i == n || top > last_level || (top == last_level && p.jobs[i].order > p.jobs[last_i].order)) {
      last_i = i;
      last_level = top;
    }
    rep.iterations[i] += c;
    rep.busy_ns[i] += c * w + sw;
    rep.switch_ns[i] += sw;
    rep.runs += runs;
    rep.switches += runs;  // the lane's last job is a job: every new run is a switch
    plan_level_[i] += c * p.jobs[i].step;
    spent += c * w + sw;
    total += c;
    rep.closed_form += c;
  }
  if (last_i == n) return false;
  SALUS_INVARIANT(spent <= budget, "a jump ends by the plan's deadline", std::to_string(spent));
  t += spent;
  last = p.jobs[last_i].job;
  retry = 1;  // what is left before the deadline or the next job to run may be one more jump
  return true;
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
