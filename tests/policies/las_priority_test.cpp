// LAS and priority choose() on hand-built states, and the admission keys of every policy: the two
// policies added on the Policy hooks alone, without a change to the loop.
#include <doctest/doctest.h>

#include "core/policy.h"
#include "policies/builtin.h"
#include "support/jobs.h"
#include "support/policy_state.h"

using salus::test::ms;
using salus::test::PolicyState;

namespace {
std::int64_t key(salus::core::Policy& p, const PolicyState& s, salus::core::JobIndex j) {
  return p.admission_key(salus::core::SchedulerView{0, s.specs, s.states}, j);
}
}  // namespace

TEST_CASE("las: the least attained service (iterations done x iter_ns) runs until it passes the runner-up") {
  const auto las = salus::policies::make_las();
  PolicyState s;
  s.add(0, 10, ms(100), 3);    // attained 300 ms
  s.add(ms(1), 10, ms(40), 5);  // attained 200 ms
  s.add(ms(2), 10, ms(30), 9);  // attained 270 ms
  // 1 runs: 200, 240, 280 > 270 after 2 iterations -> it stands for 2 (the 2nd takes it to 280).
  auto d = s.choose(*las, {0, 1, 2});
  CHECK(d.job == 1);
  CHECK(d.max_iterations == 2);
  // Ties go to the earlier arrival: job 1 at 270 against job 2 at 270.
  s.states[1].iterations_done = 6;  // 240
  s.states[2].iterations_done = 8;  // 240
  d = s.choose(*las, {2, 1});
  CHECK(d.job == 1);
  CHECK(d.max_iterations == 1);
  // Alone: all its remaining iterations.
  d = s.choose(*las, {2});
  CHECK(d.job == 2);
  CHECK(d.max_iterations == 2);
}

TEST_CASE("las: a newcomer (nothing attained) runs first, as long as it stays below the others") {
  const auto las = salus::policies::make_las();
  PolicyState s;
  s.add(0, 10, ms(100), 2);   // 200 ms
  s.add(ms(50), 8, ms(30));   // 0: runs while 0, 30, ..., 180 < 200: 7 iterations; at 210 > 200 it stops
  const auto d = s.choose(*las, {0, 1});
  CHECK(d.job == 1);
  CHECK(d.max_iterations == 7);
}

TEST_CASE("priority: higher first, arrival order within a level, all remaining iterations") {
  const auto prio = salus::policies::make_priority();
  PolicyState s;
  s.add(0, 10, ms(100), 3);
  s.add(ms(1), 4, ms(100), 1);
  s.add(ms(2), 2, ms(100));
  s.specs[0].priority = 1;
  s.specs[1].priority = 5;
  s.specs[2].priority = 5;
  auto d = s.choose(*prio, {2, 0, 1});
  CHECK(d.job == 1);
  CHECK(d.max_iterations == 3);
  d = s.choose(*prio, {0, 2});
  CHECK(d.job == 2);
  CHECK(d.max_iterations == 2);
  s.specs[0].priority = 6;
  CHECK(s.choose(*prio, {2, 0, 1}).job == 0);
  // Negative levels order below 0.
  s.specs[0].priority = -1;
  s.specs[1].priority = 0;
  s.specs[2].priority = 0;
  CHECK(s.choose(*prio, {0, 2, 1}).job == 1);
}

TEST_CASE("admission keys: srtf by solo time, priority by -priority, the others by arrival (0)") {
  PolicyState s;
  s.add(0, 10, ms(100));  // solo 1000 ms
  s.add(0, 3, ms(20));    // solo 60 ms
  s.specs[0].priority = 4;
  s.specs[1].priority = -2;
  const auto srtf = salus::policies::make_srtf();
  CHECK(key(*srtf, s, 0) == ms(1000));
  CHECK(key(*srtf, s, 1) == ms(60));
  const auto prio = salus::policies::make_priority();
  CHECK(key(*prio, s, 0) == -4);
  CHECK(key(*prio, s, 1) == 2);
  for (const auto& p : {salus::policies::make_fifo(), salus::policies::make_pack(), salus::policies::make_fair(),
                        salus::policies::make_las()}) {
    CHECK(key(*p, s, 0) == 0);
    CHECK(key(*p, s, 1) == 0);
  }
}
