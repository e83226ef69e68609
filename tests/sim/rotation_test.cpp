// The steps of SimExecutor::start_plan (sim/rotation.h), each against its contract: the plan's
// jobs sorted into slots, the keys, the least key, the stretches the stepping takes, and the
// closed form (`jump` and its steps) against a reference that takes the least (level, order) at
// every boundary, one iteration at a time.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "core/executor.h"
#include "sim/rotation.h"

namespace {

using namespace salus::core;
namespace rot = salus::sim::rotation;

// What stepping one iteration at a time, each the least (level, order), does from the slots'
// levels after `done` iterations, the lane's last job `last_job`: the reference for run and jump.
// Stops at the deadline (the last iteration ending by it), at a job's last iteration, or after
// `max_total` iterations.
struct Reference {
  std::vector<std::int64_t> iterations;
  std::vector<TimeNs> busy, first_start, switched;
  std::int64_t total = 0, runs = 0, switches = 0;
  TimeNs t = 0;
  std::size_t last = 0;
};

Reference reference(const PlanDispatch& sp, const std::vector<TimeNs>& work, const std::vector<TimeNs>& switch_cost,
                    TimeNs now, JobIndex last_job, std::vector<std::int64_t> done,
                    std::int64_t max_total = INT64_MAX) {
  const std::size_t n = sp.jobs.size();
  Reference ref;
  ref.iterations.assign(n, 0);
  ref.busy.assign(n, 0);
  ref.first_start.assign(n, -1);
  ref.switched.assign(n, 0);
  ref.t = now;
  ref.last = rot::slot_of(sp.jobs, last_job);
  std::vector<TimeNs> level(n), extra(n);
  for (std::size_t r = 0; r < n; ++r) {
    level[r] = sp.jobs[r].level + done[r] * sp.jobs[r].step;
    extra[r] = done[r] == 0 ? sp.jobs[r].extra_ns : 0;
  }
  while (ref.total < max_total) {
    std::size_t r = 0;
    for (std::size_t q = 1; q < n; ++q) {
      if (level[q] < level[r] || (level[q] == level[r] && sp.jobs[q].order < sp.jobs[r].order)) r = q;
    }
    const bool switches = r != ref.last && ref.last != n + 1;
    const TimeNs cost = work[r] + extra[r] + (switches ? switch_cost[r] : 0);
    if (ref.t > sp.deadline - cost) break;
    if (done[r] == 0) ref.first_start[r] = ref.t;
    ref.runs += r != ref.last;
    ref.switches += switches;
    ref.switched[r] += switches ? switch_cost[r] : 0;
    ref.t += cost;
    ref.busy[r] += cost;
    extra[r] = 0;
    level[r] += sp.jobs[r].step;
    ++done[r];
    ++ref.iterations[r];
    ++ref.total;
    ref.last = r;
    if (done[r] == sp.jobs[r].remaining) break;
  }
  return ref;
}

// A FAIR- or LAS-shaped rotation of n jobs (steps and levels close together, some multiples of
// one step so that levels tie, or levels far apart; `scale` makes steps and levels span more than
// the keys' horizon), already sorted by order, with first-iteration extras, switching costs and a
// deadline.
struct Case {
  rot::Tables tb;
  JobIndex last_job = kNoJob;
};

Case random_case(std::mt19937_64& rng, std::size_t n, bool close_levels, TimeNs scale = 1) {
  auto pick = [&](std::int64_t lo, std::int64_t hi) { return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng); };
  Case c;
  rot::Tables& tb = c.tb;
  const TimeNs d = pick(1'000, 50'000) * scale;
  const bool aligned = close_levels && pick(0, 2) == 0;  // levels and steps multiples of d: ties
  for (std::size_t r = 0; r < n; ++r) {
    PlanJob j;
    j.job = static_cast<JobIndex>(10 + r);
    j.order = static_cast<std::int64_t>(r) * 3;
    j.step = aligned ? d * pick(1, 3) : pick(0, 2) == 0 ? d : pick(d, 4 * d);
    j.level = aligned ? d * pick(0, 2) : close_levels ? pick(0, 2 * d) : pick(0, 1'000'000'000 * scale);
    j.remaining = pick(1, 4) == 1 ? pick(1, 20) : pick(50, 800);
    j.extra_ns = pick(0, 1) == 0 ? 0 : pick(0, 20'000);
    tb.sorted.jobs.push_back(j);
    tb.work.push_back(pick(0, 3) == 0 ? j.step : pick(500, 60'000));
    tb.switch_cost.push_back(pick(0, 2) == 0 ? 0 : pick(0, 5'000));
    tb.key_step.push_back(static_cast<std::uint64_t>(j.step) << rot::kOrderBits);
  }
  tb.sorted.deadline = pick(0, 3) == 0 ? kNever : pick(0, 400'000'000);
  const std::int64_t who = pick(0, 3);
  c.last_job = who == 0 ? kNoJob : who == 1 ? JobIndex{999} : static_cast<JobIndex>(10 + pick(0, static_cast<std::int64_t>(n) - 1));
  tb.sorted.last_job = c.last_job;
  rot::reset_report(tb.report, n);
  return c;
}

}  // namespace

TEST_CASE("rotation: sort_by_order puts the jobs in slots by order, keeping the caller's index") {
  PlanDispatch p;
  p.lane = 2;
  p.last_job = 7;
  p.deadline = 1234;
  for (const std::int64_t order : {5, 1, 9, 3}) {
    PlanJob j;
    j.job = static_cast<JobIndex>(order * 10);
    j.order = order;
    p.jobs.push_back(j);
  }
  std::vector<std::size_t> by_order;
  PlanDispatch sorted;
  rot::sort_by_order(p, by_order, sorted);
  CHECK(by_order == std::vector<std::size_t>{1, 3, 0, 2});
  REQUIRE(sorted.jobs.size() == 4);
  for (std::size_t r = 0; r < 4; ++r) CHECK(sorted.jobs[r].job == p.jobs[by_order[r]].job);
  CHECK(sorted.lane == 2);
  CHECK(sorted.last_job == 7);
  CHECK(sorted.deadline == 1234);
}

TEST_CASE("rotation: keys_fit, fastest_slot and slot_of") {
  std::vector<PlanJob> jobs(3);
  jobs[0].job = 4, jobs[0].step = 30;
  jobs[1].job = 8, jobs[1].step = 10;
  jobs[2].job = 6, jobs[2].step = 10;
  CHECK(rot::keys_fit(jobs));
  CHECK(rot::fastest_slot(jobs) == 1);  // least step, the first slot among equals
  CHECK(rot::slot_of(jobs, 6) == 2);
  CHECK(rot::slot_of(jobs, 5) == 3);       // not in the plan: kOther
  CHECK(rot::slot_of(jobs, kNoJob) == 4);  // none: kNone
  jobs[2].step = rot::kHorizon;
  CHECK_FALSE(rot::keys_fit(jobs));  // a step must fit below the horizon
  CHECK_FALSE(rot::keys_fit(std::vector<PlanJob>((std::size_t{1} << rot::kOrderBits) + 1)));
  CHECK(rot::keys_fit(std::vector<PlanJob>(std::size_t{1} << rot::kOrderBits)));
}

TEST_CASE("rotation: load_keys packs levels above the least, saturates at the horizon, takes the fastest out") {
  std::vector<PlanJob> jobs(3);
  jobs[0].extra_ns = 11;
  jobs[1].extra_ns = 22;
  jobs[2].extra_ns = 33;
  const std::vector<TimeNs> level{500, 300, 300 + rot::kHorizon + 7};
  const std::vector<std::int64_t> done{0, 4, 0};
  std::vector<std::uint64_t> key(3);
  std::vector<TimeNs> extra(3);
  const std::uint64_t fast = rot::load_keys(jobs, level, done, 0, key, extra);
  CHECK(fast == ((std::uint64_t{200} << rot::kOrderBits) | 0));
  CHECK(key[0] == ~std::uint64_t{0});
  CHECK(key[1] == ((std::uint64_t{0} << rot::kOrderBits) | 1));
  CHECK(key[2] == (rot::kSaturated | 2));
  CHECK(extra == std::vector<TimeNs>{11, 0, 33});  // extra only until the job has run
  std::vector<std::uint64_t> heap;
  rot::build_heap(key, 0, heap);
  CHECK(heap.size() == 2);
  CHECK(heap.front() == key[1]);
}

TEST_CASE("rotation: least_key is the least of any number of keys") {
  std::mt19937_64 rng(7);
  for (std::size_t n = 1; n <= 13; ++n) {
    for (int trial = 0; trial < 20; ++trial) {
      std::vector<std::uint64_t> key(n);
      for (auto& k : key) k = rng() % 1000;
      CHECK(rot::least_key(key.data(), n) == *std::min_element(key.begin(), key.end()));
    }
  }
}

TEST_CASE("rotation: iterations_below and key_after") {
  const std::uint64_t step = std::uint64_t{10} << rot::kOrderBits;
  const std::uint64_t from = (std::uint64_t{100} << rot::kOrderBits) | 1;
  // Keys 100, 110, 120 (slot 1) are below 130 of slot 0; 130 of slot 2 comes after 130 of slot 1.
  CHECK(rot::iterations_below(from, (std::uint64_t{130} << rot::kOrderBits) | 0, step) == 3);
  CHECK(rot::iterations_below(from, (std::uint64_t{130} << rot::kOrderBits) | 2, step) == 4);
  CHECK(rot::iterations_below(from, from + 1, step) == 1);
  CHECK(rot::key_after(from, 3, step, 1) == ((std::uint64_t{130} << rot::kOrderBits) | 1));
  CHECK(rot::key_after(from, std::int64_t{1} << 44, step, 1) == (rot::kSaturated | 1));
}

TEST_CASE("rotation: fast_stretch runs the fastest job's iterations below the others' least key, cut by the deadline") {
  // Slot 0 of step 10 (work 7, extra 5, switching cost 3) after slot 1, which last ran.
  rot::Tables tb;
  tb.sorted.jobs.resize(2);
  tb.sorted.jobs[0].step = 10;
  tb.sorted.jobs[0].remaining = 100;
  tb.work = {7, 50};
  tb.switch_cost = {3, 3};
  tb.extra = {5, 0};
  rot::reset_report(tb.report, 2);
  const rot::Fast fast{0, 7, std::uint64_t{10} << rot::kOrderBits, 100};
  rot::Cursor c{1000, 1};
  std::uint64_t fast_key = 0;
  tb.sorted.deadline = kNever;
  CHECK(rot::fast_stretch(tb, c, fast, fast_key, std::uint64_t{35} << rot::kOrderBits | 1));  // levels 0..30: 4
  CHECK(tb.report.iterations[0] == 4);
  CHECK(c.t == 1000 + (7 + 5 + 3) + 3 * 7);
  CHECK(tb.report.busy_ns[0] == 15 + 21);
  CHECK(tb.report.switch_ns[0] == 3);
  CHECK(tb.report.first_start_ns[0] == 1000);
  CHECK((c.runs == 1 && c.switches == 1 && c.last == 0 && c.total == 4));
  CHECK(fast_key == std::uint64_t{40} << rot::kOrderBits);
  // Again, now the deadline lets two more end (at t + 7 and t + 14) before the others' key at 90.
  tb.sorted.deadline = c.t + 20;
  const TimeNs t = c.t;
  CHECK_FALSE(rot::fast_stretch(tb, c, fast, fast_key, std::uint64_t{90} << rot::kOrderBits | 1));
  CHECK(tb.report.iterations[0] == 6);
  CHECK(c.t == t + 14);
  CHECK(c.runs == 1);  // the same run goes on: no switch, no extra
  CHECK(tb.report.switch_ns[0] == 3);
}

TEST_CASE("rotation: run steps every plan as one iteration at a time would") {
  std::mt19937_64 rng(11);
  std::int64_t plans = 0, jumped = 0, heaps = 0, horizons = 0;
  for (int trial = 0; trial < 600; ++trial) {
    const std::size_t n = trial % 5 == 0 ? 24 + static_cast<std::size_t>(rng() % 20) : 1 + static_cast<std::size_t>(rng() % 8);
    const TimeNs scale = trial % 4 == 1 ? 5'000'000 : 1;
    Case cs = random_case(rng, n, trial % 3 != 0, scale);
    rot::Tables& tb = cs.tb;
    const TimeNs now = 5'000;
    const rot::Cursor c = rot::run(tb, now, cs.last_job);
    const Reference ref = reference(tb.sorted, tb.work, tb.switch_cost, now, cs.last_job, std::vector<std::int64_t>(n, 0));
    ++plans;
    jumped += tb.report.closed_form > 0;
    heaps += n >= rot::kHeapJobs;
    // The least level moved a horizon past the first base: the keys were taken again there.
    TimeNs least_start = kNever, least_end = kNever;
    for (std::size_t r = 0; r < n; ++r) {
      const PlanJob& j = tb.sorted.jobs[r];
      least_start = std::min(least_start, j.level);
      least_end = std::min(least_end, j.level + tb.report.iterations[r] * j.step);
    }
    horizons += least_end - least_start >= rot::kHorizon;
    CHECK(c.total == ref.total);
    CHECK(c.t == ref.t);
    CHECK(c.runs == ref.runs);
    CHECK(c.switches == ref.switches);
    if (ref.total > 0) CHECK(c.last == ref.last);
    CHECK(tb.report.iterations == ref.iterations);
    CHECK(tb.report.busy_ns == ref.busy);
    CHECK(tb.report.first_start_ns == ref.first_start);
    CHECK(tb.report.switch_ns == ref.switched);
  }
  MESSAGE("plans ", plans, ", with a jump ", jumped, ", with a heap ", heaps, ", past the horizon ", horizons);
  CHECK(jumped > 50);
  CHECK(heaps > 50);
  CHECK(horizons > 10);
}

TEST_CASE("rotation: jump counts what stepping would, or refuses") {
  std::mt19937_64 rng(5);
  std::int64_t jumps = 0, refused = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    const std::size_t n = 2 + static_cast<std::size_t>(rng() % (trial % 4 == 0 ? 40 : 6));
    Case cs = random_case(rng, n, true);
    rot::Tables& tb = cs.tb;
    if (cs.last_job == kNoJob) cs.last_job = 999;
    // Every job has run once (a job yet to run bounds the jump at its level).
    std::vector<std::int64_t> done(n, 1);
    for (std::size_t r = 0; r < n; ++r) {
      tb.sorted.jobs[r].remaining += 1;
      tb.report.iterations[r] = 1;
    }
    tb.level.resize(n);
    rot::levels_after(tb.sorted.jobs, done, tb.level);
    TimeNs t = 1'000;
    JobIndex last = cs.last_job;
    std::int64_t total = 0;
    std::size_t retry = 0;
    const rot::Lead lead = rot::lead_slots(tb.sorted.jobs, tb.level);
    const bool alternates = rot::alternates(tb.sorted.jobs, tb.level, lead.a);
    if (!rot::jump(tb, t, last, total, retry)) {
      ++refused;
      CHECK(total == 0);
      if (!alternates) CHECK(retry == n);
      continue;
    }
    CHECK(alternates);
    CHECK(retry == 1);
    ++jumps;
    const Reference ref = reference(tb.sorted, tb.work, tb.switch_cost, 1'000, cs.last_job, done, total);
    REQUIRE(ref.total == total);
    CHECK(t == ref.t);
    CHECK(tb.report.closed_form == total);
    CHECK(tb.report.runs == ref.runs);
    CHECK(tb.report.switches == ref.switches);
    CHECK(last == tb.sorted.jobs[ref.last].job);
    for (std::size_t r = 0; r < n; ++r) {
      CHECK(tb.report.iterations[r] == 1 + ref.iterations[r]);
      CHECK(tb.report.busy_ns[r] == ref.busy[r]);
      CHECK(tb.report.switch_ns[r] == ref.switched[r]);
      CHECK(tb.level[r] == tb.sorted.jobs[r].level + tb.report.iterations[r] * tb.sorted.jobs[r].step);
    }
  }
  MESSAGE("jumps ", jumps, ", refused ", refused);
  CHECK(jumps > 300);
}

TEST_CASE("rotation: a_follows_a counts A's iterations that follow A's, as listing the prefix does") {
  std::mt19937_64 rng(3);
  std::int64_t checked = 0, with_gaps = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    const std::size_t n = 2 + static_cast<std::size_t>(rng() % 5);
    Case cs = random_case(rng, n, true);
    const std::vector<PlanJob>& jobs = cs.tb.sorted.jobs;
    std::vector<TimeNs> level(n);
    for (std::size_t r = 0; r < n; ++r) level[r] = jobs[r].level;
    const rot::Lead lead = rot::lead_slots(jobs, level);
    if (!rot::alternates(jobs, level, lead.a)) continue;
    const TimeNs v = level[lead.a] + 1 + static_cast<TimeNs>(rng() % 2'000'000);
    std::vector<std::int64_t> count(n);
    rot::count_below(jobs, level, cs.tb.work, cs.tb.switch_cost, v, count);
    // The prefix listed: every iteration below v, by (level, order).
    std::vector<std::pair<std::pair<TimeNs, std::int64_t>, std::size_t>> prefix;
    for (std::size_t r = 0; r < n; ++r) {
      for (std::int64_t k = 0; k < count[r]; ++k) prefix.push_back({{level[r] + k * jobs[r].step, jobs[r].order}, r});
    }
    std::sort(prefix.begin(), prefix.end());
    std::int64_t expected = 0;
    for (std::size_t i = 1; i < prefix.size(); ++i) {
      expected += prefix[i].second == lead.a && prefix[i - 1].second == lead.a;
      CHECK((prefix[i].second == lead.a || prefix[i - 1].second != prefix[i].second));  // only A runs twice in a row
    }
    std::vector<std::uint64_t> gaps;
    CHECK(rot::a_follows_a(jobs, level, count, lead.a, gaps) == expected);
    ++checked;
    with_gaps += expected > 0;
  }
  MESSAGE("prefixes ", checked, ", with A after A ", with_gaps);
  CHECK(checked > 500);
  CHECK(with_gaps > 100);
}
