// FIFO and PACK choose() on hand-built states.
#include <doctest/doctest.h>

#include <stdexcept>

#include "policies/builtin.h"
#include "support/policy_state.h"
#include "support/jobs.h"

using salus::test::ms;
using salus::test::PolicyState;

TEST_CASE("fifo runs the lane's only job to completion") {
  const auto fifo = salus::policies::make_fifo();
  PolicyState s;
  s.add(0, 10, ms(100), 3);
  const auto d = s.choose(*fifo, {0});
  CHECK(d.job == 0);
  CHECK(d.max_iterations == 7);
}

TEST_CASE("fifo with two jobs in its lane is a broken invariant") {
  const auto fifo = salus::policies::make_fifo();
  PolicyState s;
  s.add(0, 10, ms(100));
  s.add(0, 10, ms(100));
  CHECK_THROWS_WITH_AS(s.choose(*fifo, {0, 1}), doctest::Contains("fifo runs one job at a time"), std::logic_error);
}

TEST_CASE("pack runs the earliest admitted job of the lane to completion") {
  const auto pack = salus::policies::make_pack();
  PolicyState s;
  s.add(ms(500), 4, ms(100), 1);  // 0: arrived last, admitted first (lane order below)
  s.add(0, 1, ms(1));             // 1: arrived first, tiny
  s.add(ms(100), 2, ms(100));     // 2
  auto d = s.choose(*pack, {0, 1, 2});
  CHECK(d.job == 0);
  CHECK(d.max_iterations == 3);
  d = s.choose(*pack, {2, 0, 1});
  CHECK(d.job == 2);
  CHECK(d.max_iterations == 2);
  // Which job ran last does not matter.
  d = s.choose(*pack, {1, 2}, 2);
  CHECK(d.job == 1);
  CHECK(d.max_iterations == 1);
}
