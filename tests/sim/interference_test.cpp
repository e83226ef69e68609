// The profiled interference model and schedules under it: while a set S of iterations runs
// concurrently, each runs at 1 / max(1, sum u) of its solo speed. End times are exact: the
// simulator rounds an end up to the next ns (ceil), progress at a resync down (floor).
#include <doctest/doctest.h>

#include <vector>

#include "core/errors.h"
#include "core/scheduler.h"
#include "policies/registry.h"
#include "sim/interference.h"
#include "sim/sim_executor.h"
#include "support/checks.h"
#include "support/jobs.h"

namespace {

using namespace salus::core;
using salus::test::gib;
using salus::test::job;
using salus::test::ms;
using salus::test::Seg;
using salus::test::trace;

ScheduleOutcome run_profiled(const std::vector<JobSpec>& jobs, const char* policy, Bytes capacity = gib(16)) {
  const auto p = salus::policies::make_policy(policy);
  salus::sim::UtilisationInterference model;
  salus::sim::SimExecutor exec(jobs, model);
  SchedulerOptions o;
  o.capacity = capacity;
  o.lane_mode = p->default_lane_mode();
  o.record_timeline = true;
  ScheduleOutcome out = run_schedule(jobs, *p, exec, o);
  salus::test::check_schedule(jobs, out, o, false);
  return out;
}

std::vector<std::int64_t> slowdowns(const salus::sim::InterferenceModel& m, const std::vector<JobSpec>& jobs) {
  std::vector<salus::sim::RunningIteration> running;
  for (const JobSpec& s : jobs) running.push_back({&s});
  std::vector<std::int64_t> out(running.size(), 0);
  m.slowdowns(running, out);
  return out;
}

}  // namespace

TEST_CASE("interference models by name") {
  CHECK(salus::sim::interference_names() == std::vector<std::string>{"none", "profiled", "pairs"});
  CHECK(salus::sim::make_interference("none")->name() == "none");
  CHECK(salus::sim::make_interference("none")->ideal());
  CHECK(salus::sim::make_interference("profiled")->name() == "profiled");
  CHECK_FALSE(salus::sim::make_interference("profiled")->ideal());
  CHECK_THROWS_WITH_AS(salus::sim::make_interference("mps"), "unknown interference model 'mps' (valid: none, profiled, pairs)",
                       salus::core::InputError);
}

TEST_CASE("profiled slowdown is max(1, sum u) for every running iteration") {
  salus::sim::UtilisationInterference m;
  const JobSpec a = job("a", 0, 1, 1, 0, 0, 600'000);
  const JobSpec b = job("b", 0, 1, 1, 0, 0, 600'000);
  const JobSpec c = job("c", 0, 1, 1, 0, 0, 300'000);
  const JobSpec d = job("d", 0, 1, 1, 0, 0, 1'000'000);
  CHECK(slowdowns(m, {a}) == std::vector<std::int64_t>{1'000'000});
  CHECK(slowdowns(m, {a, b}) == std::vector<std::int64_t>{1'200'000, 1'200'000});
  CHECK(slowdowns(m, {a, c}) == std::vector<std::int64_t>{1'000'000, 1'000'000});  // 0.9 < 1
  CHECK(slowdowns(m, {a, b, c, d}) == std::vector<std::int64_t>(4, 2'500'000));
  salus::sim::NoInterference none;
  CHECK(slowdowns(none, {a, b, d}) == std::vector<std::int64_t>(3, 1'000'000));
}

TEST_CASE("two lanes at u = 0.6 each run at 1/1.2 speed until one ends") {
  // PACK, two lanes from 0. u = 0.6 + 0.6: slowdown 1.2.
  // b: 2 x 100 ms = 200 ms of work -> ends at 200 ms x 1.2 = 240 ms.
  // a: at 240 ms it has done 240 / 1.2 = 200 ms of work; alone (0.6 < 1) it runs solo: 300 ms
  //    left -> 540 ms.
  const auto jobs = trace({job("a", 0, 5, ms(100), gib(1), gib(2), 600'000), job("b", 0, 2, ms(100), gib(1), gib(2), 600'000)});
  const ScheduleOutcome out = run_profiled(jobs, "pack");
  CHECK(salus::test::finishes(out) == std::vector<TimeNs>{540'000'000, 240'000'000});
  CHECK(salus::test::segments(out) ==
        std::vector<Seg>{{0, 0, 0, 540'000'000, 5, 0}, {1, 1, 0, 240'000'000, 2, 0}});
}

TEST_CASE("interference with times that do not divide: ends round up, progress rounds down") {
  // Same, iterations of 1'000'001 ns: b = 3 iterations = 3'000'003 ns of work at 1.2:
  //   end = ceil(3'000'003 x 1.2) = ceil(3'600'003.6) = 3'600'004.
  // a at 3'600'004: work = floor(3'600'004 / 1.2) = floor(3'000'003.33) = 3'000'003;
  //   left 5'000'005 - 3'000'003 = 2'000'002 solo -> 5'600'006.
  const auto jobs = trace({job("a", 0, 5, 1'000'001, gib(1), gib(2), 600'000), job("b", 0, 3, 1'000'001, gib(1), gib(2), 600'000)});
  const ScheduleOutcome out = run_profiled(jobs, "pack");
  CHECK(salus::test::finishes(out) == std::vector<TimeNs>{5'600'006, 3'600'004});
}

TEST_CASE("no slowdown while the sum of utilisations stays at or below 1") {
  // u = 0.3 + 0.7 = 1.0: both solo. a 0 - 500 ms, b 0 - 200 ms.
  const auto jobs = trace({job("a", 0, 5, ms(100), gib(1), gib(2), 300'000), job("b", 0, 2, ms(100), gib(1), gib(2), 700'000)});
  const ScheduleOutcome out = run_profiled(jobs, "pack");
  CHECK(salus::test::finishes(out) == std::vector<TimeNs>{ms(500), ms(200)});
}

TEST_CASE("a third lane starting mid-run slows the others from that instant") {
  // u = 0.5 each. a 10 x 10 ms and b 4 x 10 ms from 0: sum 1.0, solo.
  // 20 ms: c (2 x 10 ms) starts in a third lane: sum 1.5. a has 80 ms of work left ->
  //   ends 20 + 120 = 140 (if nothing changes); b 20 left -> 20 + 30 = 50; c 20 -> 50.
  // 50 ms: b and c end together. a has done 20 + 30 / 1.5 = 40 ms; alone: 60 left -> 110 ms.
  const auto jobs = trace({job("a", 0, 10, ms(10), gib(1), gib(1), 500'000), job("b", 0, 4, ms(10), gib(1), gib(1), 500'000),
                           job("c", ms(20), 2, ms(10), gib(1), gib(1), 500'000)});
  const ScheduleOutcome out = run_profiled(jobs, "pack");
  CHECK(salus::test::finishes(out) == std::vector<TimeNs>{ms(110), ms(50), ms(50)});
}

TEST_CASE("one lane at a time: no interference, whatever u") {
  // FIFO: one job at a time; u = 0.9 each does not matter. a 0 - 300 ms, b 300 - 500 ms.
  const auto jobs = trace({job("a", 0, 3, ms(100), gib(1), gib(1), 900'000), job("b", 0, 2, ms(100), gib(1), gib(1), 900'000)});
  const ScheduleOutcome out = run_profiled(jobs, "fifo");
  CHECK(salus::test::finishes(out) == std::vector<TimeNs>{ms(300), ms(500)});
}

TEST_CASE("a cut at the next boundary counts boundaries in work done under slowdown") {
  // C = 10 GiB, PACK.
  //   a: P 1, E 3, 2 x 100 ms, u 0.5 -> lane 0 at [7, 10)
  //   b: P 1, E 3, 10 x 150 ms, u 1.0 -> lane 1 at [4, 7)
  // Together: sum u = 1.5. a: 200 ms of work -> 300 ms. b has then done 300 / 1.5 = 200 ms of work.
  // 300 ms: a done, lane 0 removed, lane 1 must move up: b is cut at its next boundary. b now runs
  //   alone (u = 1.0: solo); its boundaries are at work 150, 300, ...: the next is 300, 100 ms of
  //   work away -> 400 ms, 2 iterations. Lane 1 moves up at 400 ms; b resumes 8 x 150 -> 1600 ms.
  const auto jobs = trace({job("a", 0, 2, ms(100), gib(1), gib(3), 500'000), job("b", 0, 10, ms(150), gib(1), gib(3), 1'000'000)});
  const ScheduleOutcome out = run_profiled(jobs, "pack", gib(10));
  CHECK(salus::test::finishes(out) == std::vector<TimeNs>{ms(300), ms(1600)});
  CHECK(salus::test::segments(out) == std::vector<Seg>{{0, 0, 0, ms(300), 2, 0}, {1, 1, 0, ms(400), 2, 0}, {1, 1, ms(400), ms(1600), 8, 0}});
  REQUIRE(out.lane_moves.size() == 3);
  CHECK(salus::test::same_move(out.lane_moves[2], {ms(400), 1, gib(4), gib(3), gib(7), gib(3)}));
}
