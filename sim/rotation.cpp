#include "sim/rotation.h"

#include <bit>
#include <string>

#include "core/errors.h"

namespace salus::sim::rotation {

using i128 = core::Int128;

void sort_by_order(const core::PlanDispatch& p, std::vector<std::size_t>& by_order, core::PlanDispatch& sorted) {
  const std::size_t n = p.jobs.size();
  by_order.resize(n);
  for (std::size_t i = 0; i < n; ++i) by_order[i] = i;
  // The loop lists a lane's jobs in admission order, which is their order (arrival) under FAIR
  // and LAS unless a job was admitted past a blocked one: a check instead of a sort per plan.
  const auto by_job_order = [&](std::size_t x, std::size_t y) { return p.jobs[x].order < p.jobs[y].order; };
  if (!std::is_sorted(by_order.begin(), by_order.end(), by_job_order)) {
    std::sort(by_order.begin(), by_order.end(), by_job_order);
  }
  sorted.lane = p.lane;
  sorted.last_job = p.last_job;
  sorted.deadline = p.deadline;
  sorted.jobs.resize(n);
  for (std::size_t r = 0; r < n; ++r) sorted.jobs[r] = p.jobs[by_order[r]];
}

bool keys_fit(std::span<const core::PlanJob> jobs) {
  for (const core::PlanJob& j : jobs) {
    // A key's step must fit below the horizon (an iteration of 19 hours does not).
    if (j.step >= kHorizon) return false;
  }
  return jobs.size() <= (std::size_t{1} << kOrderBits);
}

void reset_report(core::PlanReport& r, std::size_t n) {
  r.iterations.assign(n, 0);
  r.busy_ns.assign(n, 0);
  r.first_start_ns.assign(n, -1);
  r.switch_ns.assign(n, 0);
  r.runs = 0;
  r.switches = 0;
  r.closed_form = 0;
}

std::size_t fastest_slot(std::span<const core::PlanJob> jobs) {
  std::size_t fr = 0;
  for (std::size_t r = 1; r < jobs.size(); ++r) {
    if (jobs[r].step < jobs[fr].step) fr = r;
  }
  return fr;
}

std::size_t slot_of(std::span<const core::PlanJob> jobs, core::JobIndex job) {
  if (job == core::kNoJob) return jobs.size() + 1;
  for (std::size_t r = 0; r < jobs.size(); ++r) {
    if (jobs[r].job == job) return r;
  }
  return jobs.size();
}

void levels_after(std::span<const core::PlanJob> jobs, std::span<const std::int64_t> done, std::span<TimeNs> level) {
  for (std::size_t r = 0; r < jobs.size(); ++r) level[r] = jobs[r].level + done[r] * jobs[r].step;
}

std::uint64_t load_keys(std::span<const core::PlanJob> jobs, std::span<const TimeNs> level,
                        std::span<const std::int64_t> done, std::size_t fast, std::span<std::uint64_t> key,
                        std::span<TimeNs> extra) {
  const TimeNs base = *std::min_element(level.begin(), level.end());
  for (std::size_t r = 0; r < jobs.size(); ++r) {
    const TimeNs above = std::min(level[r] - base, kHorizon);
    key[r] = (static_cast<std::uint64_t>(above) << kOrderBits) | r;
    extra[r] = done[r] == 0 ? jobs[r].extra_ns : 0;
  }
  const std::uint64_t fast_key = key[fast];
  key[fast] = ~std::uint64_t{0};
  return fast_key;
}

void build_heap(std::span<const std::uint64_t> key, std::size_t fast, std::vector<std::uint64_t>& heap) {
  heap.clear();
  for (std::size_t r = 0; r < key.size(); ++r) {
    if (r != fast) heap.push_back(key[r]);
  }
  std::make_heap(heap.begin(), heap.end(), std::greater<>());
}

namespace {

// The keys again from the levels in tb.level (at the start, after a jump, at the horizon).
std::uint64_t reload(Tables& tb, std::size_t fast, bool use_heap) {
  const std::uint64_t fast_key = load_keys(tb.sorted.jobs, tb.level, tb.report.iterations, fast, tb.key, tb.extra);
  if (use_heap) build_heap(tb.key, fast, tb.heap);
  return fast_key;
}

// One try of `jump` from where the cursor stands; returns after how many iterations to try again.
std::size_t try_jump(Tables& tb, Cursor& c, core::JobIndex last_job, std::size_t fast, bool use_heap,
                     std::uint64_t& fast_key) {
  const std::span<const core::PlanJob> jobs = tb.sorted.jobs;
  levels_after(jobs, tb.report.iterations, tb.level);  // jump reads the levels and the report
  tb.report.runs = c.runs;
  tb.report.switches = c.switches;
  core::JobIndex last = c.last < jobs.size() ? jobs[c.last].job : last_job;
  std::size_t retry = jobs.size();
  if (jump(tb, c.t, last, c.total, retry)) {
    c.runs = tb.report.runs;
    c.switches = tb.report.switches;
    c.last = slot_of(jobs, last);
    fast_key = reload(tb, fast, use_heap);
  }
  return retry;
}

}  // namespace

Cursor run(Tables& tb, TimeNs now, core::JobIndex last_job) {
  const std::span<const core::PlanJob> jobs = tb.sorted.jobs;
  const std::size_t n = jobs.size();
  tb.level.resize(n);
  tb.key.resize(n);
  tb.extra.resize(n);
  for (std::size_t r = 0; r < n; ++r) tb.level[r] = jobs[r].level;
  // The fastest job is taken out of the keys and run in blocks (fast_stretch): in these rotations
  // the fastest job present is usually alone, so the closed form of `jump` does not apply, and it
  // runs the most iterations.
  const std::size_t fr = fastest_slot(jobs);
  const Fast fast{fr, tb.work[fr], tb.key_step[fr], jobs[fr].remaining};
  const bool use_heap = n >= kHeapJobs;
  std::uint64_t fast_key = reload(tb, fr, use_heap);
  Cursor c{now, slot_of(jobs, last_job)};
  std::size_t since_try = 0;
  while (true) {
    if (++since_try > n) {
      const std::size_t retry = try_jump(tb, c, last_job, fr, use_heap, fast_key);
      since_try = n + 1 - std::clamp<std::size_t>(retry, 1, n);  // try again after `retry` iterations
    }
    const std::uint64_t least = use_heap ? tb.heap.front() : least_key(tb.key.data(), n);
    if (std::min(fast_key, least) >= kSaturated) {
      // The next iteration is past the horizon: the keys again from the least level (O(n), once
      // per 2^46 ns of service).
      levels_after(jobs, tb.report.iterations, tb.level);
      fast_key = reload(tb, fr, use_heap);
      continue;
    }
    const bool goes_on =
        fast_key < least ? fast_stretch(tb, c, fast, fast_key, least) : slot_stretch(tb, c, use_heap, fast_key, least);
    if (!goes_on) break;
  }
  return c;
}

Lead lead_slots(std::span<const core::PlanJob> jobs, std::span<const TimeNs> level) {
  auto before = [&](std::size_t i, std::size_t k) {
    return level[i] < level[k] || (level[i] == level[k] && jobs[i].order < jobs[k].order);
  };
  Lead lead;
  for (std::size_t i = 1; i < jobs.size(); ++i) {
    if (jobs[i].step < jobs[lead.a].step || (jobs[i].step == jobs[lead.a].step && before(i, lead.a))) lead.a = i;
    if (before(i, lead.first)) lead.first = i;
  }
  return lead;
}

bool alternates(std::span<const core::PlanJob> jobs, std::span<const TimeNs> level, std::size_t a) {
  const TimeNs la = level[a];
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    // A job below A's level has at most one iteration before A's first (its next after A's
    // first, ties by order): no two of its own in a row.
    const TimeNs second = level[i] + jobs[i].step;
    if (second < la || (second == la && jobs[i].order < jobs[a].order)) return false;
  }
  return true;
}

TimeNs jump_limit(std::span<const core::PlanJob> jobs, std::span<const TimeNs> level, std::span<const std::int64_t> done,
                  TimeNs la, std::size_t& retry) {
  TimeNs v_max = core::kNever, unrun = core::kNever;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    if (done[i] == 0) unrun = std::min(unrun, level[i]);
    v_max = std::min(v_max, level[i] + (jobs[i].remaining - done[i] - 1) * jobs[i].step);
  }
  // A job yet to run in the plan bounds the jump: once the jobs at or below its level have run
  // (it among them), the caller may jump again (a long queue in one lane has many such jobs).
  if (unrun <= v_max) {
    v_max = unrun;
    if (v_max <= la) {
      retry = 0;
      for (std::size_t i = 0; i < jobs.size(); ++i) retry += level[i] <= v_max;
    }
  }
  return v_max;
}

i128 count_below(std::span<const core::PlanJob> jobs, std::span<const TimeNs> level, std::span<const TimeNs> work,
                 std::span<const TimeNs> switch_cost, TimeNs v, std::span<std::int64_t> count) {
  i128 sum = 0;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const TimeNs l = level[i];
    count[i] = v > l ? (v - l + jobs[i].step - 1) / jobs[i].step : 0;
    sum += static_cast<i128>(count[i]) * (work[i] + switch_cost[i]);
  }
  return sum;
}

namespace {

// ceil(x) <= x + 1: V with sum_i ((V - l_i) / s_i + 1) * w_i <= budget over the jobs below V fits;
// solved on the jobs below the estimate until that set is stable. nullopt: no job below it.
std::optional<double> estimate_level(std::span<const core::PlanJob> jobs, std::span<const TimeNs> level,
                                     std::span<const TimeNs> work, std::span<const TimeNs> switch_cost, TimeNs v_max,
                                     TimeNs budget) {
  double v_est = static_cast<double>(v_max);
  for (int round = 0; round < 8; ++round) {
    double rate = 0, fixed = 0;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      const double l = static_cast<double>(level[i]);
      if (l >= v_est) continue;
      const double w = static_cast<double>(work[i] + switch_cost[i]), s = static_cast<double>(jobs[i].step);
      rate += w / s;
      fixed += w - l * w / s;
    }
    if (rate <= 0) return std::nullopt;
    const double next_est = (static_cast<double>(budget) - fixed) / rate;
    if (next_est == v_est) break;
    v_est = next_est;
  }
  return v_est;
}

}  // namespace

std::optional<TimeNs> find_level(std::span<const core::PlanJob> jobs, std::span<const TimeNs> level,
                                 std::span<const TimeNs> work, std::span<const TimeNs> switch_cost, TimeNs la,
                                 TimeNs v_max, TimeNs budget, std::span<std::int64_t> count) {
  auto fits = [&](TimeNs v) { return count_below(jobs, level, work, switch_cost, v, count) <= budget; };
  if (fits(v_max)) return v_max;
  const std::optional<double> v_est = estimate_level(jobs, level, work, switch_cost, v_max, budget);
  if (!v_est || !(*v_est > static_cast<double>(la)) || *v_est >= static_cast<double>(v_max)) return std::nullopt;
  const TimeNs v = static_cast<TimeNs>(*v_est) - 1;
  if (v <= la || !fits(v)) return std::nullopt;
  // The bound ceil(x) <= x + 1 leaves up to one iteration per job unjumped; with many jobs,
  // stepping those (each step a scan of the jobs) costs more than bisecting for the last V that
  // fits, which lies within twice the largest step above the estimate.
  if (jobs.size() <= 24) return v;
  TimeNs max_step = 0;
  for (const core::PlanJob& j : jobs) max_step = std::max(max_step, j.step);
  TimeNs lo = v, hi = v_max;
  if (hi - lo > 2 * max_step) hi = lo + 2 * max_step;
  if (fits(hi)) {
    lo = hi;
  } else {
    while (hi - lo > 1) {  // lo fits, hi does not
      const TimeNs mid = lo + (hi - lo) / 2;
      (fits(mid) ? lo : hi) = mid;
    }
  }
  fits(lo);  // count for lo
  return lo;
}

void mark_gaps(std::uint64_t* gaps, TimeNs from, std::int64_t c, TimeNs step, TimeNs la, TimeNs da, bool a_first,
               std::int64_t ca) {
  // Of A's iterations in the prefix, those before this job's next one: q + 1 when it lies after
  // A's q-th level after la, or on it with A first in order (q = (level - la) / da). An iteration
  // below la comes before all of A's: no gap.
  if (from < la) {
    from += step;
    --c;
  }
  const TimeNs diff = from - la;
  std::int64_t q = diff / da;
  TimeNs rem = diff % da;
  const std::int64_t dq = step / da;
  const TimeNs dr = step % da;
  const std::int64_t first = a_first ? 1 : 0;
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
    const std::int64_t k0 = q + ((rem > 0) | first);
    const std::int64_t k1 = q1 + ((rem1 > 0) | first);
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
    const std::int64_t k0 = q + ((rem > 0) | first);
    if (k0 < ca) gaps[k0 >> 6] |= std::uint64_t{1} << (k0 & 63);
  }
}

std::int64_t a_follows_a(std::span<const core::PlanJob> jobs, std::span<const TimeNs> level,
                         std::span<const std::int64_t> count, std::size_t a, std::vector<std::uint64_t>& gaps) {
  // When another job of A's step is less than one step above A (after it in order at equal
  // levels, A being the least), its m-th iteration lies between A's m-th and (m+1)-th: every gap
  // is hit, and the rotation alternates with no marking needed (O(n) however long).
  const std::int64_t ca = count[a];
  const TimeNs la = level[a], da = jobs[a].step;
  bool every_gap = false;
  for (std::size_t i = 0; i < jobs.size() && !every_gap; ++i) {
    every_gap = i != a && jobs[i].step == da && level[i] < la + da;
  }
  if (every_gap) return 0;
  gaps.assign(static_cast<std::size_t>(ca / 64 + 1), 0);
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    if (i == a || count[i] == 0) continue;
    mark_gaps(gaps.data(), level[i], count[i], jobs[i].step, la, da, jobs[a].order < jobs[i].order, ca);
  }
  gaps[0] &= ~std::uint64_t{1};  // before A's first iteration: no gap
  std::int64_t hit = 0;
  for (const std::uint64_t g : gaps) hit += std::popcount(g);
  return (ca - 1) - hit;
}

Jumped take_jump(std::span<const core::PlanJob> jobs, std::span<TimeNs> level, std::span<const TimeNs> work,
                 std::span<const TimeNs> switch_cost, std::span<const std::int64_t> count, const Lead& lead,
                 std::int64_t a_follows, core::JobIndex last_job, core::PlanReport& rep, std::int64_t& total) {
  const std::size_t n = jobs.size();
  Jumped out{0, n};
  TimeNs last_level = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t c = count[i];
    if (c == 0) continue;
    const bool continues = i == lead.first && jobs[i].job == last_job;  // the prefix's first, after its own
    const std::int64_t runs = c - (i == lead.a ? a_follows : 0) - (continues ? 1 : 0);
    const TimeNs w = work[i], sw = runs * switch_cost[i];
    const TimeNs top = level[i] + (c - 1) * jobs[i].step;
    if (out.last == n || top > last_level || (top == last_level && jobs[i].order > jobs[out.last].order)) {
      out.last = i;
      last_level = top;
    }
    rep.iterations[i] += c;
    rep.busy_ns[i] += c * w + sw;
    rep.switch_ns[i] += sw;
    rep.runs += runs;
    rep.switches += runs;  // the lane's last job is a job: every new run is a switch
    level[i] += c * jobs[i].step;
    out.spent += c * w + sw;
    total += c;
    rep.closed_form += c;
  }
  return out;
}

// In closed form from here on. Let A be the job of least (level, order) among those of the least
// step d. When no job has two iterations before A's next (level + step above A's level, ties by
// order), no two consecutive iterations are of one job other than A: between levels x and x + d'
// of another job (d' >= d) lies one of A's, ties by order included (for x >= A's level, A has a
// level in (x, x + d]; for x below it, A's next level is before x + d'). The iterations below a
// level V are a prefix of the rotation; job i runs c_i = ceil((V - level_i) / step_i) of them, and
// every one of them starts a run of its own (paying the switching cost), except the prefix's
// first when the lane's last job is its job, and those of A's that follow another of A's with none
// of the others between them. Those are counted by marking, for each other job's iteration, the
// gap between A's iterations it falls in (gap k: after A's k-th iteration of the prefix), and
// counting the gaps left empty. V is at most the least last level (no job finishes in the prefix)
// and the level of every job yet to run in the plan (its first iteration, with its extra, is
// stepped), and is found from the linear bound on the time below it with every iteration a switch,
// then checked exactly; what is left is stepped by the caller. A `ceiling` bounds V too (below a
// job outside the rotation that the caller stops at: cluster/'s turn plans).
bool jump(Tables& tb, TimeNs& t, core::JobIndex& last, std::int64_t& total, std::size_t& retry, TimeNs ceiling) {
  const std::span<const core::PlanJob> jobs = tb.sorted.jobs;
  const std::size_t n = jobs.size();
  retry = n;
  if (last == core::kNoJob) return false;
  const Lead lead = lead_slots(jobs, tb.level);
  if (!alternates(jobs, tb.level, lead.a)) return false;
  const TimeNs la = tb.level[lead.a];
  const TimeNs v_max = std::min(jump_limit(jobs, tb.level, tb.report.iterations, la, retry), ceiling);
  if (v_max <= la) return false;
  const TimeNs deadline = tb.sorted.deadline;
  const TimeNs budget = deadline == core::kNever ? core::kNever : deadline - t;
  tb.count.resize(n);
  if (!find_level(jobs, tb.level, tb.work, tb.switch_cost, la, v_max, budget, tb.count)) return false;
  const std::int64_t follows = a_follows_a(jobs, tb.level, tb.count, lead.a, tb.gaps);
  const Jumped j = take_jump(jobs, tb.level, tb.work, tb.switch_cost, tb.count, lead, follows, last, tb.report, total);
  if (j.last == n) return false;
  SALUS_INVARIANT(j.spent <= budget, "a jump ends by the plan's deadline", std::to_string(j.spent));
  t += j.spent;
  last = jobs[j.last].job;
  retry = 1;  // what is left before the deadline or the next job to run may be one more jump
  return true;
}

void write_report(const Tables& tb, const Cursor& c, core::PlanReport& rep) {
  const core::PlanReport& sr = tb.report;
  const std::size_t n = tb.by_order.size();
  rep.iterations.resize(n);
  rep.busy_ns.resize(n);
  rep.first_start_ns.resize(n);
  rep.switch_ns.resize(n);
  for (std::size_t r = 0; r < n; ++r) {
    const std::size_t i = tb.by_order[r];
    rep.iterations[i] = sr.iterations[r];
    rep.busy_ns[i] = sr.busy_ns[r];
    rep.first_start_ns[i] = sr.first_start_ns[r];
    rep.switch_ns[i] = sr.switch_ns[r];
  }
  rep.runs = c.runs;
  rep.switches = c.switches;
  rep.closed_form = sr.closed_form;
  rep.last_job = tb.sorted.jobs[c.last].job;
  rep.end_ns = c.t;
}

}  // namespace salus::sim::rotation
