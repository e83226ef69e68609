#include "cluster/joint_plan.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "core/errors.h"

namespace salus::cluster::joint {

Lane add_lane(const core::PlanDispatch& offer, const sim::SimExecutor& sim, core::JobIndex replica, TimeNs t0,
              std::vector<Slot>& slots) {
  Lane lane;
  lane.begin = slots.size();
  lane.replica = kNoSlot;
  lane.last = offer.last_job == core::kNoJob ? kNoSlot : kOtherJob;
  lane.clock = t0;
  for (const core::PlanJob& j : offer.jobs) {
    if (j.job == replica) lane.replica = slots.size();
    if (j.job == offer.last_job) lane.last = slots.size();
    Slot slot;
    slot.level = j.level;
    slot.step = j.step;
    slot.order = j.order;
    slot.left = j.remaining;
    slot.work = sim.iter_time(j.job);
    slot.switch_cost = sim.switch_cost(j.job);
    slot.extra = j.extra_ns;
    slots.push_back(slot);
  }
  lane.end = slots.size();
  return lane;
}

bool replicas_alike(std::span<const Slot> slots, std::span<const Lane> lanes, const std::string& id, Replica& out) {
  const Slot& r0 = slots[lanes.front().replica];
  out = Replica{r0.work, r0.switch_cost, r0.extra, r0.left};
  bool alike = true;
  for (const Lane& lane : lanes) {
    const Slot& r = slots[lane.replica];
    alike = alike && r.work == r0.work;
    out.work = std::max(out.work, r.work);
    SALUS_INVARIANT(r.switch_cost == out.switch_cost && r.extra == out.extra && r.left == out.left,
                    "a gang's replicas stand alike", id);
  }
  return alike;
}

std::int64_t reach(const Slot& h, const Slot* next) {
  if (next == nullptr) return std::numeric_limits<std::int64_t>::max();
  const TimeNs gap = next->level - h.level;
  return h.order < next->order ? gap / h.step + 1 : (gap + h.step - 1) / h.step;
}

std::int64_t stretch(const Slot& h, const Slot* next) { return std::min(reach(h, next), h.left); }

namespace {

// head(), inlined where a round asks it (the lanes of few jobs: Scan).
[[gnu::always_inline]] inline std::pair<std::size_t, std::size_t> head_of(std::span<const Slot> slots,
                                                                           const Lane& lane) {
  std::size_t h = lane.begin, nx = kNoSlot;
  for (std::size_t q = lane.begin + 1; q < lane.end; ++q) {
    const Slot& s = slots[q];
    if (s.level < slots[h].level || (s.level == slots[h].level && s.order < slots[h].order)) {
      nx = h;
      h = q;
    } else if (nx == kNoSlot || s.level < slots[nx].level || (s.level == slots[nx].level && s.order < slots[nx].order)) {
      nx = q;
    }
  }
  return {h, nx};
}

}  // namespace

std::pair<std::size_t, std::size_t> head(std::span<const Slot> slots, const Lane& lane) { return head_of(slots, lane); }

namespace {

// The lane's time for a run of k iterations of slot h from its head: its work, its extra, and the
// switching cost where the lane's last job was another.
TimeNs run_time(const Slot& s, const Lane& lane, std::size_t h, std::int64_t k) {
  const bool switches = lane.last != h && lane.last != kNoSlot;
  return k * s.work + s.extra + (switches ? s.switch_cost : 0);
}

// Runs k iterations of slot h from the lane's clock: the slot's counts, the lane's clock, runs,
// switches and last job.
[[gnu::always_inline]] inline void take_run(std::span<Slot> slots, Lane& lane, std::size_t h, std::int64_t k) {
  Slot& s = slots[h];
  const bool switches = lane.last != h && lane.last != kNoSlot;
  const TimeNs sw = switches ? s.switch_cost : 0;
  const TimeNs spent = run_time(s, lane, h, k);
  if (s.iterations == 0) s.first_start = lane.clock;
  lane.clock += spent;
  s.level += k * s.step;
  s.left -= k;
  s.iterations += k;
  s.busy += spent;
  s.switched += sw;
  s.extra = 0;
  ++lane.runs;
  lane.switches += switches;
  lane.last = h;
  lane.turn = 0;  // not known: the next turn scans
}

// The rotation of a lane of many jobs as a binary min-heap of its slots by (level, order, slot):
// the head on top and the next the lesser of its children, as head() finds them by a scan; after
// the head runs (its level rises) it sinks, O(log jobs) a run instead of O(jobs). Built per call
// of run_to_turn / run_before_turn (a round's runs all start from the head), in a buffer of the
// calling thread (clusters run in parallel in gpus_needed).
constexpr std::size_t kHeapSlots = 16;

class Rotation {
 public:
  Rotation(std::span<const Slot> slots, const Lane& lane) : after_{slots} {
    static thread_local std::vector<std::size_t> buffer;
    heap_ = &buffer;
    heap_->clear();
    for (std::size_t q = lane.begin; q < lane.end; ++q) heap_->push_back(q);
    std::make_heap(heap_->begin(), heap_->end(), after_);
  }
  std::pair<std::size_t, std::size_t> head() const {
    const std::vector<std::size_t>& h = *heap_;
    std::size_t nx = kNoSlot;
    if (h.size() > 1) nx = h[1];
    if (h.size() > 2 && after_(h[1], h[2])) nx = h[2];
    return {h.front(), nx};
  }
  /// The head ran: its level rose.
  void ran_head() {
    std::pop_heap(heap_->begin(), heap_->end(), after_);
    std::push_heap(heap_->begin(), heap_->end(), after_);
  }

 private:
  // std's heaps put the greatest on top: "a after b" is the order, least (level, order, slot) first.
  struct After {
    std::span<const Slot> slots;
    bool operator()(std::size_t a, std::size_t b) const {
      const Slot &x = slots[a], &y = slots[b];
      if (x.level != y.level) return x.level > y.level;
      if (x.order != y.order) return x.order > y.order;
      return a > b;
    }
  };
  After after_;
  std::vector<std::size_t>* heap_ = nullptr;
};

}  // namespace

namespace {

// A lane's rotation found by a scan (head()): lanes of few jobs.
struct Scan {
  std::span<const Slot> slots;
  const Lane& lane;
  std::pair<std::size_t, std::size_t> head() const { return head_of(slots, lane); }
  void ran_head() {}
};

// The replica's turn in a lane it heads (Lane::turn known): at most what it has left.
std::int64_t turn_left(std::span<const Slot> slots, const Lane& lane) {
  return std::min(lane.turn, slots[lane.replica].left);
}

// The replica heads the lane, `nx` the least of the others: the lane keeps its turn (Lane::turn).
// Returns the replica's turn (at most what it has left).
std::int64_t knows_turn(std::span<const Slot> slots, Lane& lane, std::size_t nx) {
  const Slot& r = slots[lane.replica];
  lane.turn = reach(r, nx == kNoSlot ? nullptr : &slots[nx]);
  return turn_left(slots, lane);
}

template <typename Rot>
std::int64_t run_to_turn_by(std::span<Slot> slots, Lane& lane, TimeNs deadline, Rot rotation) {
  while (true) {
    const auto [h, nx] = rotation.head();
    Slot& s = slots[h];
    if (h == lane.replica) return knows_turn(slots, lane, nx);
    const std::int64_t k = stretch(s, nx == kNoSlot ? nullptr : &slots[nx]);
    if (k >= s.left) return 0;  // it would finish: the plan ends before this round
    take_run(slots, lane, h, k);
    rotation.ran_head();
    if (lane.clock > deadline) return 0;  // the gang run would end past the deadline
  }
}

// Up to `limit` of run_before_turn's runs; `stopped` when the plan stops (else a 1-GPU job
// heads the lane, not the job of its last run).
template <typename Rot>
std::int64_t run_before_turn_by(std::span<Slot> slots, Lane& lane, TimeNs deadline, Rot rotation, std::int64_t limit,
                                bool& stopped) {
  std::int64_t runs = 0;
  stopped = true;
  while (true) {
    const auto [h, nx] = rotation.head();
    const Slot& s = slots[h];
    if (h == lane.replica) {
      knows_turn(slots, lane, nx);
      return runs;
    }
    if (runs == limit) break;  // a 1-GPU job heads the lane
    const std::int64_t k = stretch(s, nx == kNoSlot ? nullptr : &slots[nx]);
    if (k >= s.left || lane.clock + run_time(s, lane, h, k) > deadline) return runs;
    take_run(slots, lane, h, k);
    rotation.ran_head();
    ++runs;
  }
  stopped = false;
  return runs;
}

// A key of the rotation: an iteration's level, then its job's order.
bool key_after(TimeNs level, std::int64_t order, TimeNs other_level, std::int64_t other_order) {
  return level != other_level ? level > other_level : order > other_order;
}

// Of a job's iterations from `level`, `step` apart, the first whose key (level, order) comes after
// (other_level, other_order): how many come before it.
std::int64_t after_key(TimeNs level, TimeNs step, std::int64_t order, TimeNs other_level, std::int64_t other_order) {
  if (other_level < level) return 0;
  const TimeNs gap = other_level - level;
  return gap / step + (gap % step == 0 && order > other_order ? 0 : 1);
}

// One try of a closed-form jump of the lane's 1-GPU jobs below its replica's level (the jump of
// sim/rotation.h on the lane's slots but the replica's), its last run taken back (run_before_turn).
// Returns the runs it covered (0: none); `retry`: after how many stepped runs to try again.
std::int64_t turn_jump(std::span<Slot> slots, Lane& lane, TimeNs deadline, Scratch& scratch, std::size_t& retry) {
  sim::rotation::Tables& tb = scratch.turn_tables;
  const std::size_t n = lane.end - lane.begin - 1;
  retry = n;
  if (lane.last == kNoSlot) return 0;  // the jump counts every run after the first as a switch
  std::vector<core::PlanJob>& jobs = tb.sorted.jobs;
  jobs.resize(n);
  tb.level.resize(n);
  tb.work.resize(n);
  tb.switch_cost.resize(n);
  sim::rotation::reset_report(tb.report, n);
  std::size_t i = 0;
  for (std::size_t q = lane.begin; q < lane.end; ++q) {
    if (q == lane.replica) continue;
    const Slot& s = slots[q];
    // The slot itself stands for the job: its index is the job's, so that the jump's last job is a slot.
    jobs[i] = core::PlanJob{static_cast<core::JobIndex>(q), s.level, s.step, s.order, s.left + s.iterations, s.extra};
    tb.level[i] = s.level;
    tb.work[i] = s.work;
    tb.switch_cost[i] = s.switch_cost;
    tb.report.iterations[i] = s.iterations;
    ++i;
  }
  tb.sorted.deadline = deadline;
  // The lane's last job as the jump reads it: a slot, or another job than any of the rotation's
  // (the replica among them).
  const core::JobIndex before =
      lane.last == kOtherJob || lane.last == lane.replica ? core::kEndedJob : static_cast<core::JobIndex>(lane.last);
  // A jump follows a stepped run, which leaves its job past the next (else the plan stops): the
  // jump's first iteration is another job's, a run and a switch as stepping counts them (the jump
  // counts none where it continues the lane's last job, take_run would).
  SALUS_INVARIANT(jobs[sim::rotation::lead_slots(jobs, tb.level).first].job != before, "a turn plan jumps after a run",
                  std::to_string(lane.begin));
  core::JobIndex last = before;
  TimeNs t = lane.clock;
  std::int64_t total = 0;
  if (!sim::rotation::jump(tb, t, last, total, retry, slots[lane.replica].level)) return 0;
  // The jump's last run: its job's iterations after every other job's last in the jump.
  const auto jl = static_cast<std::size_t>(last);
  std::size_t prev = kNoSlot;
  TimeNs prev_level = 0;
  for (std::size_t r = 0; r < n; ++r) {
    const auto q = static_cast<std::size_t>(jobs[r].job);
    if (q == jl || tb.count[r] == 0) continue;
    const TimeNs top = jobs[r].level + (tb.count[r] - 1) * jobs[r].step;
    if (prev == kNoSlot || key_after(top, jobs[r].order, prev_level, slots[prev].order)) {
      prev = q;
      prev_level = top;
    }
  }
  if (prev == kNoSlot) return 0;  // one job's run alone: nothing gained over stepping it
  std::int64_t tail = 0;
  for (std::size_t r = 0; r < n; ++r) {
    const auto q = static_cast<std::size_t>(jobs[r].job);
    const std::int64_t c = tb.count[r];
    std::int64_t keep = c;
    if (q == jl) {  // its iterations up to prev's last (ties by order), the rest its last run
      keep = after_key(jobs[r].level, jobs[r].step, jobs[r].order, prev_level, slots[prev].order);
      tail = c - keep;
    }
    Slot& s = slots[q];
    const TimeNs back = q == jl ? (c - keep) * s.work + s.switch_cost : 0;  // the last run, a switch
    s.level += keep * s.step;
    s.left -= keep;
    s.iterations += keep;
    s.busy += tb.report.busy_ns[r] - back;
    s.switched += tb.report.switch_ns[r] - (q == jl ? s.switch_cost : 0);
  }
  const std::int64_t runs = tb.report.runs - 1;
  lane.runs += runs;
  lane.switches += tb.report.switches - 1;
  lane.clock = t - (tail * slots[jl].work + slots[jl].switch_cost);
  lane.last = prev;
  lane.turn = 0;
  scratch.turn_iterations_jumped += total - tail;
  return runs;
}

}  // namespace

namespace {

// Whether the replica still heads the lane as its last turn left it (Lane::turn; no slot but the
// replica has run since): no scan is needed (in most rounds of a joint plan most lanes run no
// 1-GPU job).
bool replica_heads(const Lane& lane) { return lane.turn > 0; }

}  // namespace

std::int64_t run_to_turn(std::span<Slot> slots, Lane& lane, TimeNs deadline) {
  if (replica_heads(lane)) return turn_left(slots, lane);
  if (lane.end - lane.begin < kHeapSlots) return run_to_turn_by(slots, lane, deadline, Scan{slots, lane});
  return run_to_turn_by(slots, lane, deadline, Rotation(slots, lane));
}

std::int64_t run_before_turn(std::span<Slot> slots, Lane& lane, TimeNs deadline, Scratch& scratch) {
  if (replica_heads(lane)) return 0;
  const std::size_t n = lane.end - lane.begin;
  // A jump needs two 1-GPU jobs: one alone runs to the replica's turn in one run.
  const bool jumps = scratch.jump_turns && n >= 3;
  std::int64_t runs = 0, limit = jumps ? static_cast<std::int64_t>(n) : std::numeric_limits<std::int64_t>::max();
  while (true) {
    bool stopped = false;
    runs += n < kHeapSlots ? run_before_turn_by(slots, lane, deadline, Scan{slots, lane}, limit, stopped)
                           : run_before_turn_by(slots, lane, deadline, Rotation(slots, lane), limit, stopped);
    if (stopped) return runs;
    std::size_t retry = n;
    runs += turn_jump(slots, lane, deadline, scratch, retry);
    limit = static_cast<std::int64_t>(std::clamp<std::size_t>(retry, 1, n));
  }
}

void run_gang(std::span<Slot> slots, std::span<Lane> lanes, TimeNs switch_cost, std::int64_t m, TimeNs e) {
  for (Lane& lane : lanes) {
    Slot& s = slots[lane.replica];
    const bool sw = lane.last != lane.replica && lane.last != kNoSlot;
    if (s.iterations == 0) s.first_start = lane.clock;
    s.level += m * s.step;
    s.left -= m;
    s.iterations += m;
    s.busy += e - lane.clock;  // held from its dispatch
    s.switched += sw ? switch_cost : 0;
    s.extra = 0;
    ++lane.runs;
    lane.switches += sw;
    lane.last = lane.replica;
    lane.clock = e;
    lane.turn -= m;
  }
}

namespace {

// The first iteration of the gang run from `start` on a lane: the replica's iteration time there,
// and the switching cost where the lane's last job was another.
TimeNs first_iteration(std::span<const Slot> slots, const Lane& lane, const Replica& rep) {
  const bool switched = lane.last != lane.replica && lane.last != kNoSlot;
  return slots[lane.replica].work + (switched ? rep.switch_cost : 0);
}

}  // namespace

namespace {

// Whether every slot stands, relative to its lane's replica, as in the state kept (Scratch).
bool repeats_kept(std::span<const Slot> slots, std::span<const Lane> lanes, const Scratch& scratch) {
  for (std::size_t l = 0; l < lanes.size(); ++l) {
    const Lane& lane = lanes[l];
    const TimeNs r = slots[lane.replica].level, r0 = scratch.snap_slots[lane.replica].level;
    for (std::size_t q = lane.begin; q < lane.end; ++q) {
      if (slots[q].level - r != scratch.snap_slots[q].level - r0) return false;
    }
  }
  return true;
}

// After round out.rounds (every lane's clock at out.end): skips whole periods where the state
// repeats the one kept (plan_rounds), else keeps this one when Brent's search says so. Returns
// whether it skipped.
bool skip_periods(std::span<Slot> slots, std::vector<Lane>& lanes, Replica& rep, Outcome& out, TimeNs deadline,
                  Scratch& scratch) {
  if (scratch.snapped && repeats_kept(slots, lanes, scratch)) {
    const std::int64_t rep_step = scratch.snap_rep_left - rep.left;  // gang iterations a period
    const TimeNs period = out.end - scratch.snap_lanes.front().clock;
    std::int64_t n = rep_step > 0 ? (rep.left - 1) / rep_step : 0;
    for (std::size_t q = 0; q < slots.size() && n > 0; ++q) {
      const std::int64_t ran = slots[q].iterations - scratch.snap_slots[q].iterations;
      if (ran > 0) n = std::min(n, (slots[q].left - 1) / ran);
    }
    if (deadline != core::kNever && period > 0) n = std::min(n, (deadline - out.end) / period);
    if (n > 0) {
      for (std::size_t q = 0; q < slots.size(); ++q) {
        Slot& s = slots[q];
        const Slot& k = scratch.snap_slots[q];
        s.level += n * (s.level - k.level);
        s.left -= n * (k.left - s.left);
        s.iterations += n * (s.iterations - k.iterations);
        s.busy += n * (s.busy - k.busy);
        s.switched += n * (s.switched - k.switched);
      }
      for (std::size_t l = 0; l < lanes.size(); ++l) {
        Lane& lane = lanes[l];
        const Lane& k = scratch.snap_lanes[l];
        lane.runs += n * (lane.runs - k.runs);
        lane.switches += n * (lane.switches - k.switches);
        lane.clock += n * period;
      }
      const std::int64_t rounds = out.rounds - scratch.snap_round;
      rep.left -= n * rep_step;
      out.end += n * period;
      out.rounds += n * rounds;
      out.gang_iterations += n * (out.gang_iterations - scratch.snap_gang_iterations);
      scratch.periods_skipped += n * rounds;
    }
    // What is left ends within about a period (a slot or the deadline stops it): no more search.
    scratch.snapped = false;
    scratch.next_snap = std::numeric_limits<std::int64_t>::max();
    return n > 0;
  }
  if (out.rounds < scratch.next_snap) return false;
  scratch.next_snap = out.rounds * 2;
  scratch.snapped = rep.extra == 0 && std::all_of(slots.begin(), slots.end(), [](const Slot& s) { return s.extra == 0; });
  if (!scratch.snapped) return false;
  scratch.snap_slots.assign(slots.begin(), slots.end());
  scratch.snap_lanes = lanes;
  scratch.snap_round = out.rounds;
  scratch.snap_rep_left = rep.left;
  scratch.snap_gang_iterations = out.gang_iterations;
  return false;
}

}  // namespace

namespace {

// One round from where the lanes stand: every lane's 1-GPU runs to the replica's turn, then the
// gang run. False when it does not fit (a job would finish, or it would end past the deadline):
// the state is then torn, and the caller restores it.
bool run_round(std::span<Slot> slots, std::vector<Lane>& lanes, Replica& rep, TimeNs t0, TimeNs deadline, Outcome& out) {
  TimeNs start = t0;  // S: when the replica's turn has come on every GPU
  std::int64_t m = rep.left;
  TimeNs first = 0;  // the gang run's first iteration, on its slowest lane
  for (Lane& lane : lanes) {
    // Most lanes in most rounds run no 1-GPU job: their turn is known without a call.
    const std::int64_t turn = replica_heads(lane) ? turn_left(slots, lane) : run_to_turn(slots, lane, deadline);
    if (turn == 0) return false;
    start = std::max(start, lane.clock);
    m = std::min(m, turn);
    first = std::max(first, first_iteration(slots, lane, rep));
  }
  const TimeNs e = gang_end(rep, start, m, first);
  if (e > deadline) return false;
  run_gang(slots, lanes, rep.switch_cost, m, e);
  rep.extra = 0;
  rep.left -= m;
  out.end = e;
  ++out.rounds;
  out.gang_iterations += m;
  return true;
}

// Rounds between the states kept (plan_rounds).
constexpr std::int64_t kKeepEvery = 64;

}  // namespace

Outcome plan_rounds(std::span<Slot> slots, std::vector<Lane>& lanes, Replica rep, TimeNs t0, TimeNs deadline,
                    Scratch& scratch) {
  Outcome out{0, 0, t0};
  scratch.snapped = false;
  scratch.next_snap = 1;
  // The round that does not fit is taken back by going back to the state kept (every
  // kKeepEvery rounds and after a skip of periods) and running again the rounds since, which fit.
  std::int64_t since = kKeepEvery;
  Replica kept_rep = rep;
  Outcome kept_out = out;
  while (rep.left > 0) {
    if (since == kKeepEvery) {
      scratch.kept_slots.assign(slots.begin(), slots.end());
      scratch.kept_lanes = lanes;
      kept_rep = rep;
      kept_out = out;
      since = 0;
    }
    if (!run_round(slots, lanes, rep, t0, deadline, out)) {
      std::copy(scratch.kept_slots.begin(), scratch.kept_slots.end(), slots.begin());
      lanes = scratch.kept_lanes;
      rep = kept_rep;
      out = kept_out;
      for (std::int64_t r = 0; r < since; ++r) {
        const bool fits = run_round(slots, lanes, rep, t0, deadline, out);
        SALUS_INVARIANT(fits, "a joint plan's rounds run again as they ran", std::to_string(r));
      }
      scratch.rounds_again += since;
      break;
    }
    ++since;
    if (scratch.skip_periods && skip_periods(slots, lanes, rep, out, deadline, scratch)) since = kKeepEvery;
  }
  return out;
}

void write_report(std::span<const Slot> slots, const Lane& lane, core::JobIndex last_job, TimeNs end,
                  core::PlanReport& r) {
  const std::size_t n = lane.end - lane.begin;
  r.iterations.resize(n);
  r.busy_ns.resize(n);
  r.first_start_ns.resize(n);
  r.switch_ns.resize(n);
  for (std::size_t q = 0; q < n; ++q) {
    const Slot& s = slots[lane.begin + q];
    r.iterations[q] = s.iterations;
    r.busy_ns[q] = s.busy;
    r.first_start_ns[q] = s.first_start;
    r.switch_ns[q] = s.switched;
  }
  r.runs = lane.runs;
  r.switches = lane.switches;
  r.closed_form = 0;
  r.last_job = last_job;
  r.end_ns = end;
}

}  // namespace salus::cluster::joint
