#pragma once
/// The steps of SimExecutor::start_plan: a policy's rotation (core::PlanDispatch) run in one go
/// on a lane that runs alone, stepped on packed 64-bit keys and jumped in closed form where it can
/// be (sim/README.md, "Plans"). Internal to sim/: the executor and tests/sim include it.
///
/// Every step works on the plan's jobs sorted by order: slot r is the r-th job by
/// PlanJob::order, `Tables::by_order[r]` its index in the caller's plan. The iteration chosen at
/// each boundary is the least (level, order); it takes the work of the same iteration in a run of
/// its own: its time, the job's first-iteration extra, and the switching cost when it starts a run
/// of another job than the lane's last. The least is found on one key per slot: its level above a
/// base, shifted by kOrderBits, and the slot below. Levels more than kHorizon above the base
/// saturate there (the key is then at most the true one, so every choice below the horizon is
/// exact); the base is the least level at the start, after every jump, and whenever the least key
/// reaches the horizon.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "core/executor.h"

namespace salus::sim::rotation {

using core::TimeNs;

inline constexpr int kOrderBits = 16;
/// How far above the base a level's key reaches (2^46 ns, 19.5 hours); a key there saturates.
inline constexpr TimeNs kHorizon = TimeNs{1} << (62 - kOrderBits);
/// From this many jobs, the least key of the others comes from a binary heap, not a scan.
inline constexpr std::size_t kHeapJobs = 24;
inline constexpr std::uint64_t kSlotMask = (std::uint64_t{1} << kOrderBits) - 1;
inline constexpr std::uint64_t kSaturated = static_cast<std::uint64_t>(kHorizon) << kOrderBits;

/// Everything a plan's steps read and write, by slot; kept by the executor between plans so a
/// plan allocates nothing once warm.
struct Tables {
  std::vector<std::size_t> by_order;      // slot -> the job's index in the caller's plan
  core::PlanDispatch sorted;              // the plan with its jobs by slot
  core::PlanReport report;                // what ran, by slot (runs and switches: Cursor's)
  std::vector<TimeNs> level;              // each slot's next level (jump's input and output)
  std::vector<TimeNs> work;               // its iteration time (SimExecutor::iter_time)
  std::vector<TimeNs> switch_cost;        // what its run pays after another job's (switch_cost)
  std::vector<std::uint64_t> key_step;    // step << kOrderBits
  std::vector<std::uint64_t> key;         // (level - base) << kOrderBits | slot; the fastest's ~0
  std::vector<TimeNs> extra;              // the extra work its next iteration pays
  std::vector<std::uint64_t> heap;        // the keys of every slot but the fastest (kHeapJobs)
  std::vector<std::int64_t> count;        // jump: iterations of each slot below the jump's level
  std::vector<std::uint64_t> gaps;        // jump: the gaps between A's iterations others fall in
};

/// Where the stepping stands: the lane's clock, its last job as a slot (kOther: a job not in the
/// plan, = jobs; kNone: none, = jobs + 1) and what ran so far.
struct Cursor {
  TimeNs t = 0;
  std::size_t last = 0;
  std::int64_t total = 0;     // iterations
  std::int64_t runs = 0;      // maximal stretches of one job
  std::int64_t switches = 0;  // runs after another job's
};

// ---- Setting a plan up ------------------------------------------------------------------------

/// `by_order[r]`: the index in p.jobs of the r-th job by order (stable: the loop lists a lane's
/// jobs in admission order, usually their order, so this checks before it sorts); `sorted`: p
/// with its jobs in that order.
void sort_by_order(const core::PlanDispatch& p, std::vector<std::size_t>& by_order, core::PlanDispatch& sorted);
/// Whether the jobs fit the keys: at most 2^kOrderBits of them, each step below kHorizon.
bool keys_fit(std::span<const core::PlanJob> jobs);
/// An empty report of n jobs (first starts -1).
void reset_report(core::PlanReport& r, std::size_t n);
/// The job of least step, the first by slot among equals: it is run in blocks (`fast_stretch`).
std::size_t fastest_slot(std::span<const core::PlanJob> jobs);
/// The slot of `job`: jobs.size() (kOther) when it is not in the plan, jobs.size() + 1 (kNone)
/// for core::kNoJob.
std::size_t slot_of(std::span<const core::PlanJob> jobs, core::JobIndex job);
/// Each slot's level after `done` of its iterations.
void levels_after(std::span<const core::PlanJob> jobs, std::span<const std::int64_t> done, std::span<TimeNs> level);
/// The keys from the least level (saturating at kHorizon above it) and each slot's extra still
/// to pay (its job's extra_ns until it has run); the fastest slot's key is taken out (set to ~0)
/// and returned.
std::uint64_t load_keys(std::span<const core::PlanJob> jobs, std::span<const TimeNs> level,
                        std::span<const std::int64_t> done, std::size_t fast, std::span<std::uint64_t> key,
                        std::span<TimeNs> extra);
/// A min-heap of every key but the fastest slot's.
void build_heap(std::span<const std::uint64_t> key, std::size_t fast, std::vector<std::uint64_t>& heap);

// ---- Stepping ---------------------------------------------------------------------------------

/// The least of n >= 1 keys (four independent chains of min: no wait on each other).
inline std::uint64_t least_key(const std::uint64_t* key, std::size_t n) {
  std::uint64_t m0 = key[0], m1 = key[0], m2 = key[0], m3 = key[0];
  std::size_t k = 0;
  for (; k + 4 <= n; k += 4) {
    m0 = std::min(m0, key[k]);
    m1 = std::min(m1, key[k + 1]);
    m2 = std::min(m2, key[k + 2]);
    m3 = std::min(m3, key[k + 3]);
  }
  for (; k < n; ++k) m0 = std::min(m0, key[k]);
  return std::min(std::min(m0, m1), std::min(m2, m3));
}

/// A slot's iterations from key `from` that come before key `next` (> from), its keys `key_step`
/// apart: those whose key is below next (the slot below breaks ties), at least one.
inline std::int64_t iterations_below(std::uint64_t from, std::uint64_t next, std::uint64_t key_step) {
  return static_cast<std::int64_t>((next - from - 1) / key_step) + 1;
}

/// The key after slot r's next `k` iterations, saturating at the horizon.
inline std::uint64_t key_after(std::uint64_t key, std::int64_t k, std::uint64_t key_step, std::size_t r) {
  return std::min(key + static_cast<std::uint64_t>(k) * key_step, kSaturated | r);
}

/// Runs k iterations of slot r as one stretch from c.t: the first takes `first` (its time, the
/// extra still to pay and the switching cost if `switched`), each later one `work`. A new run
/// when the lane's last job was another.
inline void take_stretch(Cursor& c, core::PlanReport& sr, std::span<TimeNs> extra, std::size_t r, std::int64_t k,
                         TimeNs first, TimeNs work, TimeNs switch_cost, bool switched) {
  if (sr.iterations[r] == 0) sr.first_start_ns[r] = c.t;
  extra[r] = 0;
  c.runs += r != c.last;
  c.switches += switched;
  if (switched) sr.switch_ns[r] += switch_cost;
  const TimeNs spent = first + (k - 1) * work;
  c.t += spent;
  sr.busy_ns[r] += spent;
  c.last = r;
  c.total += k;
  sr.iterations[r] += k;
}

/// The fastest slot, fixed for a plan.
struct Fast {
  std::size_t slot = 0;
  TimeNs work = 0;
  std::uint64_t key_step = 0;
  std::int64_t remaining = 0;
};

/// Runs the fastest slot's iterations whose key is below `least` (the others' least key), up to
/// its last and to what ends by the deadline, and moves its key. Returns whether the plan goes
/// on (false: nothing fitted, the deadline cut the stretch, or the job finished).
inline bool fast_stretch(Tables& tb, Cursor& c, const Fast& f, std::uint64_t& fast_key, std::uint64_t least) {
  const std::size_t fr = f.slot;
  std::int64_t* const done = tb.report.iterations.data();
  std::int64_t k = iterations_below(fast_key, least, f.key_step);
  k = std::min(k, f.remaining - done[fr]);
  const std::size_t n = tb.sorted.jobs.size();
  const bool switched = fr != c.last && c.last != n + 1;
  const TimeNs first = f.work + tb.extra[fr] + (switched ? tb.switch_cost[fr] : 0);
  const TimeNs deadline = tb.sorted.deadline;
  if (c.t > deadline - first) return false;
  const std::int64_t fit = 1 + ((deadline - first) - c.t) / f.work;
  const bool cut = fit < k;
  if (cut) k = fit;
  take_stretch(c, tb.report, tb.extra, fr, k, first, f.work, tb.switch_cost[fr], switched);
  fast_key = key_after(fast_key, k, f.key_step, fr);
  return !cut && done[fr] != f.remaining;
}

/// The least key of every slot but r and the fastest (whose key is `fast_key`): from the heap's
/// top's children, or a scan.
inline std::uint64_t next_key(std::span<const std::uint64_t> key, std::span<const std::uint64_t> heap, bool use_heap,
                              std::size_t r, std::uint64_t fast_key) {
  std::uint64_t next = fast_key;
  if (use_heap) {
    if (heap.size() > 1) next = std::min(next, heap[1]);
    if (heap.size() > 2) next = std::min(next, heap[2]);
  } else {
    for (std::size_t q = 0; q < key.size(); ++q) {
      if (q != r) next = std::min(next, key[q]);
    }
  }
  return next;
}

/// Runs the iterations of the slot of the least key `least` (not the fastest's) up to the next
/// least key of the others, the fastest's included, to its last and to what ends by the deadline
/// (without the heap: one iteration unless it won the last boundary too, a scan costing more than
/// it saves otherwise), and moves its key. Returns whether the plan goes on.
inline bool slot_stretch(Tables& tb, Cursor& c, bool use_heap, std::uint64_t fast_key, std::uint64_t least) {
  const auto r = static_cast<std::size_t>(least & kSlotMask);
  std::uint64_t* const key = tb.key.data();
  std::int64_t* const done = tb.report.iterations.data();
  const std::size_t n = tb.sorted.jobs.size();
  const bool new_run = r != c.last;
  const bool switched = new_run && c.last != n + 1;
  const TimeNs work = tb.work[r] + tb.extra[r] + (switched ? tb.switch_cost[r] : 0);
  const TimeNs deadline = tb.sorted.deadline;
  if (c.t > deadline - work) return false;
  const std::int64_t remaining = tb.sorted.jobs[r].remaining;
  std::int64_t k = 1;
  if (use_heap || !new_run) {
    k = iterations_below(least, next_key(tb.key, tb.heap, use_heap, r, fast_key), tb.key_step[r]);
    k = std::min({k, remaining - done[r], 1 + ((deadline - work) - c.t) / tb.work[r]});
  }
  take_stretch(c, tb.report, tb.extra, r, k, work, tb.work[r], tb.switch_cost[r], switched);
  key[r] = key_after(key[r], k, tb.key_step[r], r);
  if (use_heap) {
    std::pop_heap(tb.heap.begin(), tb.heap.end(), std::greater<>());
    tb.heap.back() = key[r];
    std::push_heap(tb.heap.begin(), tb.heap.end(), std::greater<>());
  }
  return done[r] != remaining;
}

/// Steps the plan `tb.sorted` (its tables set up: report reset, work, switch_cost, key_step) from
/// `now`, the lane's last job `last_job`, to its end: the last iteration ending by the deadline,
/// or the one that finishes a job. Tries `jump` every n iterations, or after as many as it says.
Cursor run(Tables& tb, TimeNs now, core::JobIndex last_job);

// ---- Jumping (closed form) --------------------------------------------------------------------

/// A: the slot of least step, then least (level, order); first: the slot of least (level, order).
struct Lead {
  std::size_t a = 0, first = 0;
};
Lead lead_slots(std::span<const core::PlanJob> jobs, std::span<const TimeNs> level);
/// Whether no slot has two iterations before A's next (a slot below A's level: its next after
/// that one lies after A's, ties by order): then only A runs two iterations in a row.
bool alternates(std::span<const core::PlanJob> jobs, std::span<const TimeNs> level, std::size_t a);
/// The highest level a jump may reach: no slot's last iteration and no slot yet to run in the
/// plan (`done` 0: its first iteration, with its extra, is stepped) below it. When a slot yet to
/// run is at or below A's level `la`, `retry` is how many slots stand at or below it (step them,
/// then try again).
TimeNs jump_limit(std::span<const core::PlanJob> jobs, std::span<const TimeNs> level, std::span<const std::int64_t> done,
                  TimeNs la, std::size_t& retry);
/// Each slot's iterations below level v (`count`), and their time if each were a switch (an
/// upper bound on the time they take).
core::Int128 count_below(std::span<const core::PlanJob> jobs, std::span<const TimeNs> level,
                         std::span<const TimeNs> work, std::span<const TimeNs> switch_cost, TimeNs v,
                         std::span<std::int64_t> count);
/// The level of the jump: v_max when its time fits `budget`, else the linear estimate (ceil(x) <=
/// x + 1) and, with many jobs, bisection to the last level that fits. `count` holds its counts;
/// nullopt when no level above `la` fits.
std::optional<TimeNs> find_level(std::span<const core::PlanJob> jobs, std::span<const TimeNs> level,
                                 std::span<const TimeNs> work, std::span<const TimeNs> switch_cost, TimeNs la,
                                 TimeNs v_max, TimeNs budget, std::span<std::int64_t> count);
/// Marks in `gaps` the gap between A's iterations of the prefix that each of one other slot's
/// `c` iterations from level `from` (step `step`, >= A's) falls in (gap k: after A's k-th; one
/// after A's last iteration `ca` - 1 or below A's first level `la` marks nothing).
void mark_gaps(std::uint64_t* gaps, TimeNs from, std::int64_t c, TimeNs step, TimeNs la, TimeNs da, bool a_first,
               std::int64_t ca);
/// Of A's `count[a]` iterations below the jump's level, those that follow another of A's with no
/// other slot's iteration between them.
std::int64_t a_follows_a(std::span<const core::PlanJob> jobs, std::span<const TimeNs> level,
                         std::span<const std::int64_t> count, std::size_t a, std::vector<std::uint64_t>& gaps);
/// Adds the jump's `count` to the report (iterations, lane time, switching costs, runs, each run
/// a switch but the first's when `last_job` is its job), the levels and `total`. Returns the
/// time spent and the slot of the jump's last iteration (jobs.size(): nothing jumped).
struct Jumped {
  TimeNs spent = 0;
  std::size_t last = 0;
};
Jumped take_jump(std::span<const core::PlanJob> jobs, std::span<TimeNs> level, std::span<const TimeNs> work,
                 std::span<const TimeNs> switch_cost, std::span<const std::int64_t> count, const Lead& lead,
                 std::int64_t a_follows, core::JobIndex last_job, core::PlanReport& rep, std::int64_t& total);
/// When only A can run two iterations in a row (`alternates`), runs the iterations below one
/// level in closed form, up to what fits before the deadline (from `t`) and below `jump_limit`
/// and `ceiling` (only iterations of a level below it run); `last` is the lane's last job before
/// and after. Reads and writes tb.level and tb.report (its runs and switches included), leaves
/// each slot's iterations below the level in tb.count. Returns whether it jumped; `retry`: after
/// how many stepped iterations it is worth trying again.
bool jump(Tables& tb, TimeNs& t, core::JobIndex& last, std::int64_t& total, std::size_t& retry,
          TimeNs ceiling = core::kNever);

// ---- Finishing --------------------------------------------------------------------------------

/// The report in the caller's order (`by_order`), with the cursor's runs, switches, end and last
/// job.
void write_report(const Tables& tb, const Cursor& c, core::PlanReport& rep);

}  // namespace salus::sim::rotation
