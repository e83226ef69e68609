// FAIR choose(): least service (lane_iterations x iter_ns) runs; ties by earlier arrival then
// trace order; max_iterations = how long the choice stands undisturbed: the chosen job b with
// service s_b and iteration time d keeps winning against the runner-up r (service s_r) while
// (s_b + m d, b) < (s_r, r) for m = 0 .. k - 1.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "policies/builtin.h"
#include "support/jobs.h"
#include "support/policy_state.h"

using salus::test::ms;
using salus::test::PolicyState;

TEST_CASE("fair alone in its lane runs all its remaining iterations") {
  const auto fair = salus::policies::make_fair();
  PolicyState s;
  s.add(0, 10, ms(100), 4, 2);
  const auto d = s.choose(*fair, {0});
  CHECK(d.job == 0);
  CHECK(d.max_iterations == 6);
}

TEST_CASE("fair batches iterations up to the runner-up's service") {
  const auto fair = salus::policies::make_fair();
  SUBCASE("0 vs 350 ms, d = 100 ms, the chosen one arrived earlier: 0, 100, 200, 300 < 350 -> 4") {
    PolicyState s;
    s.add(0, 20, ms(100), 0, 0);       // service 0
    s.add(ms(1), 20, ms(50), 7, 7);    // service 7 x 50 = 350 ms
    const auto d = s.choose(*fair, {0, 1});
    CHECK(d.job == 0);
    CHECK(d.max_iterations == 4);
  }
  SUBCASE("0 vs 350 ms, chosen one arrived later: still 4 (300 < 350, 400 > 350)") {
    PolicyState s;
    s.add(0, 20, ms(50), 7, 7);      // service 350 ms, earlier
    s.add(ms(1), 20, ms(100), 0, 0);  // service 0, later
    const auto d = s.choose(*fair, {0, 1});
    CHECK(d.job == 1);
    CHECK(d.max_iterations == 4);
  }
  SUBCASE("0 vs 300 ms, chosen earlier: it also wins the tie at 300 -> 4") {
    PolicyState s;
    s.add(0, 20, ms(100), 0, 0);
    s.add(ms(1), 20, ms(100), 3, 3);
    const auto d = s.choose(*fair, {0, 1});
    CHECK(d.job == 0);
    CHECK(d.max_iterations == 4);
  }
  SUBCASE("0 vs 300 ms, chosen later: loses the tie at 300 -> 3") {
    PolicyState s;
    s.add(0, 20, ms(100), 3, 3);
    s.add(ms(1), 20, ms(100), 0, 0);
    const auto d = s.choose(*fair, {0, 1});
    CHECK(d.job == 1);
    CHECK(d.max_iterations == 3);
  }
  SUBCASE("equal service: the earlier one runs one iteration") {
    PolicyState s;
    s.add(0, 20, ms(100), 2, 2);
    s.add(ms(1), 20, ms(100), 2, 2);
    const auto d = s.choose(*fair, {1, 0});
    CHECK(d.job == 0);
    CHECK(d.max_iterations == 1);
  }
  SUBCASE("a gap smaller than one iteration: one iteration either way") {
    PolicyState s;
    s.add(0, 20, ms(100), 0, 0);
    s.add(ms(1), 20, ms(50), 1, 1);  // 50 ms
    CHECK(s.choose(*fair, {0, 1}).max_iterations == 1);
    PolicyState t;
    t.add(0, 20, ms(50), 1, 1);
    t.add(ms(1), 20, ms(100), 0, 0);
    CHECK(t.choose(*fair, {0, 1}).job == 1);
    CHECK(t.choose(*fair, {0, 1}).max_iterations == 1);
  }
  SUBCASE("never more than the remaining iterations") {
    PolicyState s;
    s.add(0, 5, ms(100), 3, 0);      // 2 left, service 0
    s.add(ms(1), 20, ms(100), 10, 10);  // service 1000 ms
    const auto d = s.choose(*fair, {0, 1});
    CHECK(d.job == 0);
    CHECK(d.max_iterations == 2);
  }
}

TEST_CASE("fair's service is lane_iterations x iter_ns, not iterations done") {
  const auto fair = salus::policies::make_fair();
  PolicyState s;
  s.add(0, 100, ms(100), 90, 3);   // 300 ms since the last join
  s.add(ms(1), 100, ms(50), 0, 5);  // 250 ms
  // j1 (250) runs; runner-up j0 (300); d = 50; j1 arrived later: 250 < 300, 300 loses the tie -> 1.
  auto d = s.choose(*fair, {0, 1});
  CHECK(d.job == 1);
  CHECK(d.max_iterations == 1);
  // If j1 had arrived first it would also win the tie at 300: 2.
  PolicyState t;
  t.add(ms(1), 100, ms(100), 90, 3);
  t.add(0, 100, ms(50), 0, 5);
  d = t.choose(*fair, {0, 1});
  CHECK(d.job == 1);
  CHECK(d.max_iterations == 2);
}

TEST_CASE("fair with three jobs: the runner-up is the second least served") {
  const auto fair = salus::policies::make_fair();
  PolicyState s;
  s.add(ms(2), 20, ms(100), 5, 5);  // 500 ms
  s.add(0, 20, ms(100), 0, 0);      // 0, earliest
  s.add(ms(1), 20, ms(100), 2, 2);  // 200 ms
  // j1 vs runner-up j2 (200): gap 200, d 100, j1 earlier: 0, 100, 200 -> 3.
  for (const auto& order : {std::vector<salus::core::JobIndex>{0, 1, 2}, {2, 1, 0}, {1, 0, 2}, {0, 2, 1}}) {
    const auto d = s.choose(*fair, order);
    CHECK(d.job == 1);
    CHECK(d.max_iterations == 3);
  }
}

TEST_CASE("fair ties in service: earlier arrival, then trace order, for the winner and the runner-up") {
  const auto fair = salus::policies::make_fair();
  SUBCASE("winner by trace order") {
    PolicyState s;
    s.add(0, 20, ms(100), 0, 0, 7);
    s.add(0, 20, ms(100), 0, 0, 3);
    CHECK(s.choose(*fair, {0, 1}).job == 1);
    CHECK(s.choose(*fair, {1, 0}).job == 1);
  }
  SUBCASE("runner-up among equals is the earlier submitted") {
    // x (0 ms, service 100), y (2 ms, service 100), z (1 ms, service 0). z runs; the runner-up is
    // x (earlier than y). z arrived after x, so it loses the tie at 100: 1 iteration. (Against y,
    // which z precedes, it would have been 2.)
    PolicyState s;
    s.add(0, 20, ms(100), 1, 1);      // x
    s.add(ms(2), 20, ms(100), 1, 1);  // y
    s.add(ms(1), 20, ms(100), 0, 0);  // z
    for (const auto& order : {std::vector<salus::core::JobIndex>{0, 1, 2}, {1, 0, 2}, {2, 1, 0}, {2, 0, 1}}) {
      const auto d = s.choose(*fair, order);
      CHECK(d.job == 2);
      CHECK(d.max_iterations == 1);
    }
  }
}

namespace {

/// The first `count` iterations of a rotation (Policy::plan): the least (level, order) each time.
std::vector<salus::core::JobIndex> rotation(std::vector<salus::core::RotationEntry> entries, int count) {
  std::vector<salus::core::JobIndex> picks;
  for (int i = 0; i < count; ++i) {
    auto least = std::min_element(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
      return a.level != b.level ? a.level < b.level : a.order < b.order;
    });
    picks.push_back(least->job);
    least->level += least->step;
  }
  return picks;
}

}  // namespace

TEST_CASE("fair's and las's plans are the choices choose makes boundary by boundary, and on_plan_done counts them") {
  for (const char* name : {"fair", "las"}) {
    CAPTURE(std::string(name));
    const bool is_fair = std::string(name) == "fair";
    auto stepped = is_fair ? salus::policies::make_fair() : salus::policies::make_las();
    auto planned = is_fair ? salus::policies::make_fair() : salus::policies::make_las();
    PolicyState s;
    s.add(0, 1000, ms(40), 3, 3);       // service 120 ms
    s.add(ms(1), 1000, ms(15), 0, 0);   // a newcomer: service 0
    s.add(ms(1), 1000, ms(70), 2, 2, 1);  // arrives with the one before, earlier in the trace
    s.add(ms(2), 1000, ms(15), 8, 8);   // service 120 ms, ties with job 0
    const std::vector<salus::core::JobIndex> lane = {0, 1, 2, 3};
    s.choose(*stepped, lane);
    s.choose(*planned, lane);
    const salus::core::SchedulerView v{0, s.specs, s.states};
    const salus::core::LaneSnapshot snap{0, lane, salus::core::kNoJob, salus::core::kNoJob};
    std::vector<salus::core::RotationEntry> entries;
    REQUIRE(planned->plan(v, snap, entries));
    REQUIRE(entries.size() == 4);
    constexpr int kPicks = 60;
    const std::vector<salus::core::JobIndex> expected = rotation(entries, kPicks);
    // choose, run by run, as the loop would dispatch it undisturbed.
    std::vector<salus::core::JobIndex> chosen;
    while (static_cast<int>(chosen.size()) < kPicks) {
      const salus::core::Decision d = stepped->choose(v, snap);
      const std::int64_t k = std::min<std::int64_t>(d.max_iterations, kPicks - static_cast<std::int64_t>(chosen.size()));
      chosen.insert(chosen.end(), static_cast<std::size_t>(k), d.job);
      s.states[static_cast<std::size_t>(d.job)].iterations_done += k;
      stepped->on_iterations_done(v, salus::core::RunReport{d.job, 0, k, 0, 0});
    }
    CHECK(chosen == expected);
    // The same iterations reported as one plan leave the policy where choose left it.
    std::vector<std::int64_t> counts(entries.size(), 0);
    for (salus::core::JobIndex j : expected) {
      for (std::size_t i = 0; i < entries.size(); ++i) counts[i] += entries[i].job == j;
    }
    planned->on_plan_done(v, 0, entries, counts);
    std::vector<salus::core::RotationEntry> after_stepped, after_planned;
    REQUIRE(stepped->plan(v, snap, after_stepped));
    REQUIRE(planned->plan(v, snap, after_planned));
    for (std::size_t i = 0; i < entries.size(); ++i) {
      CHECK(after_planned[i].job == after_stepped[i].job);
      CHECK(after_planned[i].level == after_stepped[i].level);
      CHECK(after_planned[i].level > entries[i].level);  // every job ran in these 60 iterations
    }
    const salus::core::Decision a = stepped->choose(v, snap), b = planned->choose(v, snap);
    CHECK(a.job == b.job);
    CHECK(a.max_iterations == b.max_iterations);
  }
}
