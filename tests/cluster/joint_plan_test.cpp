// The steps of JointPlanner's joint plans (cluster/joint_plan.h) on a hand case worked out below: a gang
// job R of 3 iterations on two GPUs, GPU 0's lane shared with a 1-GPU job X, GPU 1's with nothing.
// cluster_gang_plan_test.cpp checks the whole against deciding at every boundary.
#include <doctest/doctest.h>

#include <limits>
#include <random>
#include <tuple>
#include <vector>

#include "cluster/joint_plan.h"
#include "sim/interference.h"
#include "sim/sim_executor.h"
#include "support/jobs.h"

namespace {

using namespace salus;
using core::TimeNs;
namespace joint = salus::cluster::joint;

// R: level 0, step 10, order 5, iteration 10, switching cost 2, extra 1, 3 left; X: level 5,
// step 10, order 1, iteration 4, switching cost 2, 100 left. GPU 0 is fresh (no last job); GPU 1
// last ran R.
joint::Slot slot(TimeNs level, std::int64_t order, TimeNs work, TimeNs extra, std::int64_t left) {
  joint::Slot s;
  s.level = level;
  s.step = 10;
  s.order = order;
  s.work = work;
  s.switch_cost = 2;
  s.extra = extra;
  s.left = left;
  return s;
}

struct Hand {
  std::vector<joint::Slot> slots{slot(0, 5, 10, 1, 3), slot(5, 1, 4, 0, 100), slot(0, 5, 10, 1, 3)};
  std::vector<joint::Lane> lanes{joint::Lane{0, 2, 0, joint::kNoSlot, 100, 0, 0}, joint::Lane{2, 3, 2, 2, 100, 0, 0}};
  joint::Replica replica{10, 2, 1, 3};
};

}  // namespace

TEST_CASE("joint plan: stretch and head") {
  const joint::Slot a = slot(0, 5, 10, 0, 3), b = slot(5, 1, 4, 0, 100), a10 = slot(10, 5, 10, 0, 3);
  CHECK(joint::stretch(a, nullptr) == 3);    // alone: all it has left
  CHECK(joint::stretch(a, &b) == 1);         // b at 5 comes before a's 10
  CHECK(joint::stretch(b, &a10) == 1);       // a at 10 comes before b's 15
  CHECK(joint::stretch(slot(0, 1, 1, 0, 9), &a) == 1);   // a tie at 0: the lower order runs first, once
  const joint::Slot far = slot(45, 9, 1, 0, 100);
  CHECK(joint::stretch(b, &far) == 5);   // 5, 15, 25, 35, 45 (b first in order at 45)
  CHECK(joint::stretch(a, &far) == 3);   // 0..40 would be 5: capped at what it has left
  const std::vector<joint::Slot> slots{a, b, far};
  const joint::Lane lane{0, 3, 0, joint::kNoSlot, 0, 0, 0};
  CHECK(joint::head(slots, lane) == std::pair<std::size_t, std::size_t>{0, 1});
  const joint::Lane alone{2, 3, 2, joint::kNoSlot, 0, 0, 0};
  CHECK(joint::head(slots, alone) == std::pair<std::size_t, std::size_t>{2, joint::kNoSlot});
}

TEST_CASE("joint plan: run_to_turn runs the lane's jobs up to the replica's turn") {
  Hand h;
  h.slots[0].level = 10;  // R's turn comes after X's iteration at 5
  h.lanes[0].last = 0;
  CHECK(joint::run_to_turn(h.slots, h.lanes[0], core::kNever) == 1);
  const joint::Slot& x = h.slots[1];
  CHECK((x.level == 15 && x.left == 99 && x.iterations == 1 && x.busy == 6 && x.switched == 2 && x.first_start == 100));
  // 100 + X's 4 + the switching cost 2.
  CHECK((h.lanes[0].clock == 106 && h.lanes[0].runs == 1 && h.lanes[0].switches == 1 && h.lanes[0].last == 1));
  // Past the deadline, or X finishing in the round: no turn.
  Hand late;
  late.slots[0].level = 10;
  CHECK(joint::run_to_turn(late.slots, late.lanes[0], 103) == 0);
  Hand last;
  last.slots[0].level = 10;
  last.slots[1].left = 1;
  CHECK(joint::run_to_turn(last.slots, last.lanes[0], core::kNever) == 0);
  CHECK(last.slots[1].iterations == 0);  // X's run would finish it: not run
}

TEST_CASE("joint plan: plan_rounds computes the max-plus recurrence round by round") {
  // Round 1: R's turn on both at 100 (GPU 0: R at 0 before X at 5: 1 iteration; GPU 1: 3); m = 1,
  //   E = 100 + 10 + extra 1 = 111 (no lane switches: GPU 0 fresh, GPU 1 last ran R).
  // Round 2: GPU 0 runs X (4 + switch 2) to 117; S = 117, m = 1, E = 117 + 10 + 2 = 129.
  // Round 3: GPU 0 runs X to 135; S = 135, E = 147; R has none left.
  Hand h;
  joint::Scratch scratch;
  const joint::Outcome out = joint::plan_rounds(h.slots, h.lanes, h.replica, 100, core::kNever, scratch);
  CHECK(out.rounds == 3);
  CHECK(out.gang_iterations == 3);
  CHECK(out.end == 147);
  core::PlanReport r0, r1;
  joint::write_report(h.slots, h.lanes[0], 7, out.end, r0);
  joint::write_report(h.slots, h.lanes[1], 8, out.end, r1);
  CHECK(r0.iterations == std::vector<std::int64_t>{3, 2});
  CHECK(r0.busy_ns == std::vector<TimeNs>{11 + 12 + 12, 6 + 6});  // R held from each dispatch
  CHECK(r0.first_start_ns == std::vector<TimeNs>{100, 111});
  CHECK(r0.switch_ns == std::vector<TimeNs>{4, 4});
  CHECK((r0.runs == 5 && r0.switches == 4 && r0.last_job == 7 && r0.end_ns == 147 && r0.closed_form == 0));
  CHECK(r1.iterations == std::vector<std::int64_t>{3});
  CHECK(r1.busy_ns == std::vector<TimeNs>{47});  // 11, then held from 111 to 129 and 129 to 147
  CHECK((r1.runs == 3 && r1.switches == 0 && r1.end_ns == 147));

  // A deadline at 140 takes round 3 back (X's run to 135 with it); X finishing in round 2 stops
  // the plan after round 1.
  Hand d;
  const joint::Outcome cut = joint::plan_rounds(d.slots, d.lanes, d.replica, 100, 140, scratch);
  CHECK((cut.rounds == 2 && cut.end == 129));
  CHECK((d.slots[1].level == 15 && d.slots[1].iterations == 1 && d.lanes[0].clock == 129 && d.lanes[0].runs == 3));
  Hand f;
  f.slots[1].left = 1;
  const joint::Outcome first = joint::plan_rounds(f.slots, f.lanes, f.replica, 100, core::kNever, scratch);
  CHECK((first.rounds == 1 && first.end == 111 && f.slots[1].iterations == 0));

}

TEST_CASE("joint plan: add_lane times the offer's jobs as the GPU's executor does, replicas_alike") {
  std::vector<core::JobSpec> jobs{test::job("a", 0, 10, test::ms(3), 0, test::mib(100)),
                                  test::job("b", 0, 10, test::ms(5), 0, test::mib(100))};
  jobs[1].switch_ns = test::ms(7);  // its own switching cost
  const auto model = sim::make_interference("none");
  const sim::SimExecutor sim(jobs, *model, {test::ms(4), test::ms(6)}, test::ms(1));
  core::PlanDispatch offer;
  offer.last_job = 1;
  offer.jobs = {core::PlanJob{0, 100, 3, 0, 10, 55}, core::PlanJob{1, 50, 5, 1, 9, 0}};
  std::vector<joint::Slot> slots(2);  // another GPU's lane before it
  const joint::Lane lane = joint::add_lane(offer, sim, 0, 900, slots);
  CHECK((lane.begin == 2 && lane.end == 4 && lane.replica == 2 && lane.last == 3 && lane.clock == 900));
  CHECK((slots[2].work == test::ms(4) && slots[2].switch_cost == test::ms(1) && slots[2].extra == 55));
  CHECK((slots[3].work == test::ms(6) && slots[3].switch_cost == test::ms(7) && slots[3].left == 9));
  offer.last_job = 5;
  CHECK(joint::add_lane(offer, sim, 3, 0, slots).last == joint::kOtherJob);
  CHECK(joint::add_lane(offer, sim, 3, 0, slots).replica == joint::kNoSlot);
  offer.last_job = core::kNoJob;
  CHECK(joint::add_lane(offer, sim, 0, 0, slots).last == joint::kNoSlot);

  Hand h;
  joint::Replica r;
  CHECK(joint::replicas_alike(h.slots, h.lanes, "R", r));
  CHECK((r.work == 10 && r.switch_cost == 2 && r.extra == 1 && r.left == 3));
  h.slots[2].work = 20;  // a GPU of another speed: the slowest replica's iteration time
  CHECK_FALSE(joint::replicas_alike(h.slots, h.lanes, "R", r));
  CHECK((r.work == 20 && r.switch_cost == 2 && r.extra == 1 && r.left == 3));
}

TEST_CASE("joint plan: replicas of different iteration times run each gang run at the slowest one's pace") {
  // The hand case with R taking 20 on GPU 1 (last ran R: no switch) and 10 on GPU 0 (fresh).
  // Round 1: S = 100, m = 1; first iteration: max(10, 20) + extra 1: E = 121.
  // Round 2: GPU 0 runs X (4 + switch 2) to 127; S = 127; max(10 + switch 2, 20) (no extra now):
  //   E = 147. Round 3: GPU 0 runs X to 153; E = 173; R has none left.
  Hand h;
  h.slots[2].work = 20;
  joint::Replica rep;
  CHECK_FALSE(joint::replicas_alike(h.slots, h.lanes, "R", rep));
  joint::Scratch scratch;
  const joint::Outcome out = joint::plan_rounds(h.slots, h.lanes, rep, 100, core::kNever, scratch);
  CHECK((out.rounds == 3 && out.gang_iterations == 3 && out.end == 173));
  core::PlanReport r0, r1;
  joint::write_report(h.slots, h.lanes[0], 7, out.end, r0);
  joint::write_report(h.slots, h.lanes[1], 8, out.end, r1);
  CHECK(r0.busy_ns == std::vector<TimeNs>{21 + 20 + 20, 6 + 6});  // R held from each dispatch to the run's end
  CHECK(r1.busy_ns == std::vector<TimeNs>{73});
  CHECK(r0.switch_ns == std::vector<TimeNs>{4, 4});
  // A run of m iterations: the first as above, the others the slowest replica's 20 each.
  CHECK(joint::gang_end(rep, 0, 3, 20) == 20 + 1 + 2 * 20);

  // X at level 15: R's first turn on GPU 0 holds 2 iterations, a gang run of two: E1 = 100 +
  // max(10, 20) + 1 = 121 (GPU 0's replica's first iteration ends at 111, an instant of its own),
  // E = 141; the second iteration is paced to the slowest replica's, so GPU 0's replica ends it
  // at 141 too. Then X (4 + switch 2) to 147, R once: S = 147, first max(10 + 2, 20): E = 167
  // (GPU 0's replica at 159).
  Hand two;
  two.slots[2].work = 20;
  two.slots[1].level = 15;
  CHECK_FALSE(joint::replicas_alike(two.slots, two.lanes, "R", rep));
  const joint::Outcome o = joint::plan_rounds(two.slots, two.lanes, rep, 100, core::kNever, scratch);
  CHECK((o.rounds == 2 && o.gang_iterations == 3 && o.end == 167));
  CHECK((two.lanes[0].clock == 167 && two.lanes[1].clock == 167));
}

namespace {

// A random joint plan: 1-4 lanes (GPUs), each the replica and 0-4 1-GPU jobs, iteration times
// equal, commensurate or not, switching costs and extras, some jobs short; levels near each other.
struct RandomPlan {
  std::vector<joint::Slot> slots;
  std::vector<joint::Lane> lanes;
  joint::Replica rep;
  TimeNs deadline = core::kNever;
};

RandomPlan random_plan(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto pick = [&](std::int64_t lo, std::int64_t hi) {
    return lo + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(hi - lo + 1));
  };
  const std::int64_t shape = pick(0, 2);  // 0: every step 1000; 1: multiples of 250; 2: any
  auto step = [&] { return shape == 0 ? TimeNs{1000} : shape == 1 ? 250 * pick(1, 6) : pick(200, 3000); };
  RandomPlan p;
  const TimeNs rep_work = step(), rep_switch = pick(0, 2) == 0 ? 0 : pick(1, 300);
  const TimeNs rep_extra = pick(0, 1) == 0 ? 0 : pick(1, 500);
  const std::int64_t rep_left = pick(1, 3) == 1 ? pick(1, 20) : pick(200, 5000);
  p.rep = joint::Replica{rep_work, rep_switch, rep_extra, rep_left};
  const std::int64_t lanes = pick(1, 4);
  for (std::int64_t l = 0; l < lanes; ++l) {
    joint::Lane lane;
    lane.begin = p.slots.size();
    lane.clock = 0;
    const std::int64_t others = pick(0, 4);
    const std::int64_t at = pick(0, others);  // the replica's place in the lane
    for (std::int64_t q = 0; q <= others; ++q) {
      joint::Slot s;
      if (q == at) {
        lane.replica = p.slots.size();
        s.work = rep_work;
        s.step = rep_work;
        s.switch_cost = rep_switch;
        s.extra = rep_extra;
        s.left = rep_left;
        s.order = 5000;  // the job's rank, the same on every GPU; every other job's differs
        s.level = pick(0, 2000);
      } else {
        s.work = step();
        s.step = pick(0, 3) == 0 ? step() : s.work;  // LAS: service per iteration, not its time
        s.switch_cost = pick(0, 2) == 0 ? 0 : pick(1, 300);
        s.extra = pick(0, 3) == 0 ? pick(1, 500) : 0;
        s.left = pick(0, 4) == 0 ? pick(1, 30) : pick(100, 20000);
        s.order = 1000 * pick(0, 9) + 1 + static_cast<std::int64_t>(p.slots.size());
        s.level = pick(0, 3000);
      }
      p.slots.push_back(s);
    }
    lane.end = p.slots.size();
    const std::int64_t last = pick(0, 2);
    lane.last = last == 0 ? joint::kNoSlot : last == 1 ? joint::kOtherJob : lane.replica;
    p.lanes.push_back(lane);
  }
  if (pick(0, 2) == 0) p.deadline = pick(1000, 3'000'000);
  return p;
}

// The rounds as joint_plan.h states them, each tried on a copy of the state and kept only when it
// fits (plan_rounds instead goes back to a state it kept and runs the rounds since again).
joint::Outcome reference_rounds(std::vector<joint::Slot>& slots, std::vector<joint::Lane>& lanes, joint::Replica rep,
                                TimeNs t0, TimeNs deadline) {
  joint::Outcome out{0, 0, t0};
  while (rep.left > 0) {
    std::vector<joint::Slot> s = slots;
    std::vector<joint::Lane> l = lanes;
    TimeNs start = t0, first = 0;
    std::int64_t m = rep.left;
    bool fits = true;
    for (joint::Lane& lane : l) {
      const std::int64_t turn = joint::run_to_turn(s, lane, deadline);
      if (turn == 0) {
        fits = false;
        break;
      }
      start = std::max(start, lane.clock);
      m = std::min(m, turn);
      const bool switched = lane.last != lane.replica && lane.last != joint::kNoSlot;
      first = std::max(first, s[lane.replica].work + (switched ? rep.switch_cost : 0));
    }
    if (!fits) break;
    const TimeNs e = joint::gang_end(rep, start, m, first);
    if (e > deadline) break;
    joint::run_gang(s, l, rep.switch_cost, m, e);
    rep.extra = 0;
    rep.left -= m;
    out.end = e;
    ++out.rounds;
    out.gang_iterations += m;
    slots = std::move(s);
    lanes = std::move(l);
  }
  return out;
}

}  // namespace

// plan_rounds skipping whole periods (Scratch::skip_periods, the default) against computing every
// round, and both against the reference above: the same rounds, end, and every slot's and lane's
// counts, on random plans where rotations repeat (equal or commensurate steps) and where they do not.
TEST_CASE("joint plan: skipping whole periods gives every round's results") {
  std::int64_t skipped_plans = 0, rounds = 0, rounds_again = 0;
  for (std::uint64_t seed = 1; seed <= 3000; ++seed) {
    CAPTURE(seed);
    RandomPlan a = random_plan(seed), b = a, c = a;
    joint::Scratch skip, every;
    every.skip_periods = false;
    const joint::Outcome oa = joint::plan_rounds(a.slots, a.lanes, a.rep, 0, a.deadline, skip);
    const joint::Outcome ob = joint::plan_rounds(b.slots, b.lanes, b.rep, 0, b.deadline, every);
    const joint::Outcome oc = reference_rounds(c.slots, c.lanes, c.rep, 0, c.deadline);
    CHECK(oa.rounds == ob.rounds);
    CHECK(oa.gang_iterations == ob.gang_iterations);
    CHECK(oa.end == ob.end);
    CHECK(std::tie(ob.rounds, ob.gang_iterations, ob.end) == std::tie(oc.rounds, oc.gang_iterations, oc.end));
    CHECK(every.periods_skipped == 0);
    rounds_again += every.rounds_again;
    for (std::size_t q = 0; q < a.slots.size(); ++q) {
      CAPTURE(q);
      const joint::Slot &x = a.slots[q], &y = b.slots[q], &z = c.slots[q];
      CHECK(std::tie(x.level, x.left, x.iterations, x.busy, x.first_start, x.switched, x.extra) ==
            std::tie(y.level, y.left, y.iterations, y.busy, y.first_start, y.switched, y.extra));
      CHECK(std::tie(z.level, z.left, z.iterations, z.busy, z.first_start, z.switched, z.extra) ==
            std::tie(y.level, y.left, y.iterations, y.busy, y.first_start, y.switched, y.extra));
    }
    for (std::size_t l = 0; l < a.lanes.size(); ++l) {
      const joint::Lane &x = a.lanes[l], &y = b.lanes[l], &z = c.lanes[l];
      CHECK(std::tie(x.clock, x.runs, x.switches, x.last) == std::tie(y.clock, y.runs, y.switches, y.last));
      CHECK(std::tie(z.clock, z.runs, z.switches, z.last, z.turn) == std::tie(y.clock, y.runs, y.switches, y.last, y.turn));
      // What a lane remembers of its last turn is what a scan finds now: the replica's
      // iterations before it passes the least other slot (0 where it no longer heads, or where a
      // 1-GPU run since left the turn unknown).
      const joint::Slot& r = a.slots[x.replica];
      std::size_t least = joint::kNoSlot;
      for (std::size_t q = x.begin; q < x.end; ++q) {
        if (q == x.replica) continue;
        const joint::Slot& s = a.slots[q];
        const auto key = [&](std::size_t k) { return std::make_tuple(a.slots[k].level, a.slots[k].order, k); };
        if (least == joint::kNoSlot || std::make_tuple(s.level, s.order, q) < key(least)) least = q;
      }
      const bool heads = least == joint::kNoSlot ||
                         std::make_tuple(r.level, r.order, x.replica) <
                             std::make_tuple(a.slots[least].level, a.slots[least].order, least);
      if (!heads) CHECK(x.turn == 0);
      else if (x.turn > 0 && least != joint::kNoSlot) CHECK(x.turn == joint::reach(r, &a.slots[least]));
      else if (x.turn > 0) CHECK(x.turn > std::numeric_limits<std::int64_t>::max() / 2);
    }
    skipped_plans += skip.periods_skipped > 0 ? 1 : 0;
    rounds += ob.rounds;
  }
  MESSAGE(skipped_plans, " of 3000 plans skipped periods; ", rounds, " rounds in all; ", rounds_again,
          " run again to take back a round that did not fit");
  CHECK(skipped_plans > 500);
  CHECK(rounds_again > 10000);  // rounds taken back after states kept past the first
}

TEST_CASE("joint plan: equal iteration times repeat every round, skipped to where a job would finish") {
  // Lane 0: R (level 0, order 5) and X (level 0, order 1), both 10 per iteration, switching cost
  // 2; lane 1: R alone (it last ran R). Round 1: X once (lane 0 fresh: no switch) to 10, R's turn
  // holds 1: S = 10, first = 10 + 2 (lane 0 switched), E = 22. Every later round: X (10 + 2), R
  // (10 + 2): 24, each the period of the last. X has 40 iterations: the plan stops before the round
  // in which it would finish, after 39; from round 2 the rest are skipped (37 rounds at once).
  joint::Slot r = slot(0, 5, 10, 0, 1000), x = slot(0, 1, 10, 0, 40);
  std::vector<joint::Slot> slots{r, x, r};
  std::vector<joint::Lane> lanes{joint::Lane{0, 2, 0, joint::kNoSlot, 0, 0, 0}, joint::Lane{2, 3, 2, 2, 0, 0, 0}};
  std::vector<joint::Slot> slots_b = slots;
  std::vector<joint::Lane> lanes_b = lanes;
  joint::Scratch skip, every;
  every.skip_periods = false;
  const joint::Replica rep{10, 2, 0, 1000};
  const joint::Outcome a = joint::plan_rounds(slots, lanes, rep, 0, core::kNever, skip);
  const joint::Outcome b = joint::plan_rounds(slots_b, lanes_b, rep, 0, core::kNever, every);
  CHECK(a.rounds == 39);
  CHECK((a.rounds == b.rounds && a.end == b.end && slots[1].iterations == 39 && slots_b[1].iterations == 39));
  CHECK(skip.periods_skipped == 37);
  CHECK(a.end == 22 + 38 * 24);
  CHECK((lanes[0].runs == lanes_b[0].runs && lanes[0].switches == lanes_b[0].switches && lanes[0].clock == a.end));
  CHECK((slots[0].busy == slots_b[0].busy && slots[1].busy == slots_b[1].busy && slots[2].busy == slots_b[2].busy));
}

namespace {

// A random turn plan: one lane, its replica far above some 1-GPU jobs (LAS: jobs far below the
// gang's attained service), 2-19 of them (the lanes of 16 slots or more keep a heap), steps equal,
// commensurate or not, one far faster than the rest, switching costs, extras, some jobs short,
// the lane's last job any.
struct RandomTurn {
  std::vector<joint::Slot> slots;
  joint::Lane lane;
  TimeNs deadline = core::kNever;
};

RandomTurn random_turn(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto pick = [&](std::int64_t lo, std::int64_t hi) {
    return lo + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(hi - lo + 1));
  };
  const std::int64_t shape = pick(0, 2);
  auto step = [&] { return shape == 0 ? TimeNs{1000} : shape == 1 ? 250 * pick(1, 6) : pick(200, 3000); };
  RandomTurn t;
  const std::int64_t others = pick(0, 3) == 0 ? pick(15, 19) : pick(2, 6);
  const std::int64_t at = pick(0, others);
  for (std::int64_t q = 0; q <= others; ++q) {
    joint::Slot s;
    s.work = step();
    s.step = pick(0, 3) == 0 ? step() : s.work;
    s.switch_cost = pick(0, 2) == 0 ? 0 : pick(1, 300);
    s.order = 1000 * pick(0, 9) + 1 + static_cast<std::int64_t>(q);
    if (q == at) {
      t.lane.replica = t.slots.size();
      s.level = pick(0, 1) == 0 ? pick(0, 20000) : pick(100'000, 20'000'000);
      s.left = pick(1, 5000);
    } else {
      s.extra = pick(0, 4) == 0 ? pick(1, 500) : 0;
      s.left = pick(0, 4) == 0 ? pick(1, 60) : pick(100, 50000);
      s.level = pick(0, 5000);
      s.iterations = pick(0, 1) == 0 ? 0 : pick(1, 9);  // some ran earlier in this plan
      if (s.iterations > 0) s.extra = 0;
    }
    t.slots.push_back(s);
  }
  // A quarter of the plans: one job far faster than the others, so that the job of least step
  // runs long stretches (the jump's last run taken back is one of those).
  if (pick(0, 3) == 0) {
    joint::Slot& fast = t.slots[static_cast<std::size_t>(at == 0 ? 1 : 0)];
    fast.work = fast.step = pick(1, 20);
    fast.left = pick(1'000'000, 100'000'000);
  }
  t.lane.begin = 0;
  t.lane.end = t.slots.size();
  const std::int64_t last = pick(0, 3);
  t.lane.last = last == 0   ? joint::kNoSlot
                : last == 1 ? joint::kOtherJob
                : last == 2 ? t.lane.replica
                            : static_cast<std::size_t>(pick(0, others));
  t.lane.clock = pick(0, 1000);
  if (pick(0, 2) == 0) t.deadline = t.lane.clock + pick(1000, 30'000'000);
  return t;
}

}  // namespace

// run_before_turn jumping in closed form (Scratch::jump_turns, the default) against stepping every
// run: the same runs, and every slot's and the lane's counts, where the plan stops (a deadline, a
// job that would finish, the replica's turn) included.
TEST_CASE("joint plan: turn plans that jump give every run's results") {
  std::int64_t jumped_plans = 0, runs = 0, jumped = 0;
  for (std::uint64_t seed = 1; seed <= 4000; ++seed) {
    CAPTURE(seed);
    RandomTurn a = random_turn(seed), b = a;
    joint::Scratch jump, step;
    step.jump_turns = false;
    const std::int64_t ra = joint::run_before_turn(a.slots, a.lane, a.deadline, jump);
    const std::int64_t rb = joint::run_before_turn(b.slots, b.lane, b.deadline, step);
    CHECK(ra == rb);
    CHECK(step.turn_iterations_jumped == 0);
    for (std::size_t q = 0; q < a.slots.size(); ++q) {
      CAPTURE(q);
      const joint::Slot &x = a.slots[q], &y = b.slots[q];
      CHECK(std::tie(x.level, x.left, x.iterations, x.busy, x.first_start, x.switched, x.extra) ==
            std::tie(y.level, y.left, y.iterations, y.busy, y.first_start, y.switched, y.extra));
    }
    const joint::Lane &x = a.lane, &y = b.lane;
    CHECK(std::tie(x.clock, x.runs, x.switches, x.last, x.turn) == std::tie(y.clock, y.runs, y.switches, y.last, y.turn));
    jumped_plans += jump.turn_iterations_jumped > 0 ? 1 : 0;
    jumped += jump.turn_iterations_jumped;
    runs += rb;
  }
  MESSAGE(jumped_plans, " of 4000 turn plans jumped, ", jumped, " iterations in closed form; ", runs, " runs in all");
  CHECK(jumped_plans > 1000);
}

TEST_CASE("joint plan: a turn plan jumps the rotation below the replica and stops at its turn") {
  // X (step and iteration 2, order 1, next at level -2) and Y (3, order 2, next at -3) below the
  // replica R (level 60, order 9), switching cost 1, the lane's last job X. Before R's turn X runs
  // its iterations at levels -2, 0, ..., 60 (32: at 60 it comes first by order) and Y at -3, 0,
  // ..., 60 (22): 64 + 66 of lane time and a switching cost per run, as stepping counts them.
  joint::Slot x = slot(0, 1, 2, 0, 1000), y = slot(0, 2, 3, 0, 1000), r = slot(60, 9, 10, 0, 5);
  x.step = 2;
  y.step = 3;
  x.switch_cost = y.switch_cost = 1;
  x.iterations = y.iterations = 1;  // each ran earlier in the plan: no extra, nothing bounds the jump
  x.level = -2;
  y.level = -3;
  std::vector<joint::Slot> slots{x, y, r}, stepped = slots;
  joint::Lane lane{0, 3, 2, 0, 0, 0, 0}, lane_b = lane;
  joint::Scratch jump, step;
  step.jump_turns = false;
  const std::int64_t runs = joint::run_before_turn(slots, lane, core::kNever, jump);
  CHECK(runs == joint::run_before_turn(stepped, lane_b, core::kNever, step));
  CHECK(jump.turn_iterations_jumped > 0);
  CHECK((slots[0].iterations == 1 + 32 && slots[1].iterations == 1 + 22));
  CHECK((slots[0].level == 62 && slots[1].level == 63));
  CHECK(lane.clock == 32 * 2 + 22 * 3 + lane.switches);
  CHECK((lane.runs == runs && lane.clock == lane_b.clock && lane.runs == lane_b.runs && lane.switches == lane_b.switches));
  CHECK(lane.turn > 0);  // the replica heads: its turn has come
}
