// SRTF choose(): least remaining solo time (remaining iterations x iter_ns), ties by earlier
// arrival, then trace order; the choice stands for all remaining iterations.
#include <doctest/doctest.h>

#include "policies/builtin.h"
#include "support/jobs.h"
#include "support/policy_state.h"

using salus::test::ms;
using salus::test::PolicyState;

TEST_CASE("srtf picks the least remaining solo time and runs it to completion") {
  const auto srtf = salus::policies::make_srtf();
  PolicyState s;
  s.add(0, 10, ms(100), 3);  // 700 ms left
  s.add(ms(250), 2, ms(100));  // 200 ms
  s.add(ms(500), 3, ms(100));  // 300 ms
  const auto d = s.choose(*srtf, {0, 1, 2});
  CHECK(d.job == 1);
  CHECK(d.max_iterations == 2);
  // Order of the lane's list does not matter.
  CHECK(s.choose(*srtf, {2, 1, 0}).job == 1);
  // Only the lane's jobs are candidates.
  const auto d2 = s.choose(*srtf, {0, 2});
  CHECK(d2.job == 2);
  CHECK(d2.max_iterations == 3);
}

TEST_CASE("srtf measures remaining time in solo ns, not iterations") {
  const auto srtf = salus::policies::make_srtf();
  PolicyState s;
  s.add(0, 5, ms(10));    // 5 iterations, 50 ms
  s.add(0, 1, ms(100));   // 1 iteration, 100 ms
  const auto d = s.choose(*srtf, {1, 0});
  CHECK(d.job == 0);
  CHECK(d.max_iterations == 5);
}

TEST_CASE("srtf ties: earlier arrival, then earlier in the trace (not the vector position)") {
  const auto srtf = salus::policies::make_srtf();
  SUBCASE("arrival") {
    PolicyState s;
    s.add(ms(10), 2, ms(100));  // 200 ms, arrived at 10 ms
    s.add(ms(5), 4, ms(50));    // 200 ms, arrived at 5 ms
    CHECK(s.choose(*srtf, {0, 1}).job == 1);
    CHECK(s.choose(*srtf, {1, 0}).job == 1);
  }
  SUBCASE("trace order") {
    PolicyState s;
    s.add(0, 2, ms(100), 0, 0, 5);  // trace order 5
    s.add(0, 2, ms(100), 0, 0, 2);  // trace order 2
    s.add(0, 2, ms(100), 0, 0, 9);  // trace order 9
    CHECK(s.choose(*srtf, {0, 1, 2}).job == 1);
    CHECK(s.choose(*srtf, {2, 0, 1}).job == 1);
    CHECK(s.choose(*srtf, {2, 0}).job == 0);
  }
}

TEST_CASE("srtf ignores who ran last and how long ago") {
  const auto srtf = salus::policies::make_srtf();
  PolicyState s;
  s.add(0, 3, ms(100), 1);  // 200 ms left
  s.add(0, 3, ms(100));     // 300 ms left
  CHECK(s.choose(*srtf, {0, 1}, 1, ms(12345)).job == 0);
}
