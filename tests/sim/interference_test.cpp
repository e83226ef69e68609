// The profiled interference model and schedules under it: while a set S of iterations runs
// concurrently, each runs at 1 / max(1, sum u) of its solo speed. End times are exact: the
// simulator rounds an end up to the next ns (ceil), progress at a resync down (floor).
// Further down, each with its description: pairs, shares and crowds.
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <optional>
#include <string>
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
  salus::test::check_schedule(jobs, out, o, false, 0);
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
  CHECK(salus::sim::interference_names() ==
        std::vector<std::string>{"none", "profiled", "pairs", "crowds", "shares", "capacity"});
  CHECK(salus::sim::make_interference("none")->name() == "none");
  CHECK(salus::sim::make_interference("none")->ideal());
  CHECK(salus::sim::make_interference("profiled")->name() == "profiled");
  CHECK_FALSE(salus::sim::make_interference("profiled")->ideal());
  CHECK_THROWS_WITH_AS(salus::sim::make_interference("mps"),
                       "unknown interference model 'mps' (valid: none, profiled, pairs, crowds, shares, capacity)", salus::core::InputError);
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

TEST_CASE("interference with times that do not divide: every iteration's end rounds up, progress rounds down") {
  // Same, at 1.2: time is rounded up at every iteration boundary, so an iteration of w ns of work
  // takes ceil(1.2 w) ns.
  // b: 3 x 1'000'001 ns: each ceil(1'200'001.2) = 1'200'002 -> ends at 3 x 1'200'002 = 3'600'006.
  // a: 5 x 700'001 ns: each ceil(840'001.2) = 840'002; at 3'600'006 it has done 4 iterations
  //   (the 4th ended at 3'360'008) and floor(239'998 / 1.2) = floor(199'998.3) = 199'998 ns of
  //   the 5th; alone (solo) the remaining 500'003 ns -> 4'100'009.
  const auto jobs = trace({job("a", 0, 5, 700'001, gib(1), gib(2), 600'000), job("b", 0, 3, 1'000'001, gib(1), gib(2), 600'000)});
  const ScheduleOutcome out = run_profiled(jobs, "pack");
  CHECK(salus::test::finishes(out) == std::vector<TimeNs>{4'100'009, 3'600'006});
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

// The "pairs" model: with the set S running, iteration i is slowed by
//   s_i = max(1 + sum over the other j in S of (s_ij - 1), sum over S of u),
// s_ij the table's figure for (workload_i, workload_j) counted as at least 1, or max(1, u_i + u_j)
// where the table lacks the pair or a job has no workload name. All in parts per million.
namespace {

using salus::sim::PairSlowdowns;

JobSpec named(const char* id, const char* workload, std::int32_t util_ppm) {
  JobSpec s = job(id, 0, 1, 1, 0, 0, util_ppm);
  s.workload = workload;
  return s;
}

// Asymmetric on purpose: (wa, wb) is a's slowdown beside b, (wb, wa) b's beside a. (wb, wc)
// below 1 is noise and counts as 1; (wc, wb) is missing.
const PairSlowdowns kTable = {
    {{"wa", "wb"}, 1'500'000}, {{"wb", "wa"}, 1'300'000}, {{"wa", "wc"}, 1'100'000},
    {{"wc", "wa"}, 1'450'000}, {{"wb", "wc"}, 900'000},
};

}  // namespace

TEST_CASE("pairs model by name: needs a non-empty table, with the exact message") {
  const PairSlowdowns table = {{{"x", "y"}, 1'200'000}};
  const auto m = salus::sim::make_interference("pairs", &table);
  CHECK(m->name() == "pairs");
  CHECK_FALSE(m->ideal());
  const char* const msg =
      "interference model 'pairs' needs a catalog with a \"pairs\" table (salus-profile measures one)";
  CHECK_THROWS_WITH_AS(salus::sim::make_interference("pairs"), msg, salus::core::InputError);
  CHECK_THROWS_WITH_AS(salus::sim::make_interference("pairs", nullptr), msg, salus::core::InputError);
  const PairSlowdowns empty;
  CHECK_THROWS_WITH_AS(salus::sim::make_interference("pairs", &empty), msg, salus::core::InputError);
  // The other models ignore a table.
  CHECK(salus::sim::make_interference("profiled", &table)->name() == "profiled");
  CHECK(salus::sim::make_interference("none", &empty)->name() == "none");
}

TEST_CASE("pairs: two jobs, the measured pair excess wins over the profiled share") {
  // a (wa, u 0.6) and b (wb, u 0.5): sum u = 1.1.
  //   a: 1 + (1.5 - 1) = 1.5 > 1.1;  b: 1 + (1.3 - 1) = 1.3 > 1.1. Each as measured, asymmetric.
  const salus::sim::PairInterference m(kTable);
  const JobSpec a = named("a", "wa", 600'000), b = named("b", "wb", 500'000);
  CHECK(slowdowns(m, {a, b}) == std::vector<std::int64_t>{1'500'000, 1'300'000});
  CHECK(slowdowns(m, {b, a}) == std::vector<std::int64_t>{1'300'000, 1'500'000});  // indexed like the running set
  // Alone: no other lane, 1 (u = 0.6 < 1).
  CHECK(slowdowns(m, {a}) == std::vector<std::int64_t>{1'000'000});
}

TEST_CASE("pairs: two jobs, the profiled share wins over a small measured excess") {
  // x (wx, u 0.9) and y (wy, u 0.9): the table says 1.2 and 1.1, but sum u = 1.8 is the floor.
  const PairSlowdowns table = {{{"wx", "wy"}, 1'200'000}, {{"wy", "wx"}, 1'100'000}};
  const salus::sim::PairInterference m(table);
  const JobSpec x = named("x", "wx", 900'000), y = named("y", "wy", 900'000);
  CHECK(slowdowns(m, {x, y}) == std::vector<std::int64_t>{1'800'000, 1'800'000});
}

TEST_CASE("pairs: a measured figure below 1 counts as 1, a missing pair falls back to max(1, u_i + u_j)") {
  // b (wb, u 0.5) and c (wc, u 0.3): sum u = 0.8.
  //   b: (wb, wc) = 0.9 -> 1: s = 1 + 0 = 1 (not 0.9);
  //   c: (wc, wb) missing -> max(1, 0.5 + 0.3) = 1: s = 1 (not 1 + (0.8 - 1) = 0.8).
  const salus::sim::PairInterference m(kTable);
  const JobSpec b = named("b", "wb", 500'000), c = named("c", "wc", 300'000);
  CHECK(slowdowns(m, {b, c}) == std::vector<std::int64_t>{1'000'000, 1'000'000});
  // Two unknown workloads at u 0.7 + 0.6 = 1.3: the fallback is the profiled figure, 1.3 each.
  const JobSpec p = named("p", "unknown_1", 700'000), q = named("q", "unknown_2", 600'000);
  CHECK(slowdowns(m, {p, q}) == std::vector<std::int64_t>{1'300'000, 1'300'000});
}

TEST_CASE("pairs: three jobs add each other lane's excess, the share wins for one of them") {
  // a (wa, 0.6), b (wb, 0.5), c (wc, 0.3): sum u = 1.4.
  //   a: 1 + (1.5 - 1) + (1.1 - 1)          = 1.6  > 1.4 -> 1.6
  //   b: 1 + (1.3 - 1) + (max(1, 0.9) - 1)  = 1.3  < 1.4 -> 1.4 (the share wins)
  //   c: 1 + (1.45 - 1) + (max(1, 0.8) - 1) = 1.45 > 1.4 -> 1.45
  const salus::sim::PairInterference m(kTable);
  const JobSpec a = named("a", "wa", 600'000), b = named("b", "wb", 500'000), c = named("c", "wc", 300'000);
  CHECK(slowdowns(m, {a, b, c}) == std::vector<std::int64_t>{1'600'000, 1'400'000, 1'450'000});
  CHECK(slowdowns(m, {c, a, b}) == std::vector<std::int64_t>{1'450'000, 1'600'000, 1'400'000});
}

TEST_CASE("pairs: a job with no workload name uses the fallback, even if the table has an empty name") {
  // The table has ("", "wb") = 3 and ("wb", "") = 3: never looked up, an empty name is no workload.
  // x (no name, u 0.7), a (wa, 0.6), b (wb, 0.5): sum u = 1.8.
  //   a: 1 + (1.5 - 1) + (max(1, 0.6 + 0.7) - 1) = 1 + 0.5 + 0.3 = 1.8 -> 1.8
  //   x: 1 + (1.3 - 1) + (1.2 - 1)               = 1.5 < 1.8 -> 1.8
  //   b: 1 + (1.3 - 1) + (1.2 - 1)               = 1.5 < 1.8 -> 1.8
  // With (wa, wb) = 1.6 instead, a is 1 + 0.6 + 0.3 = 1.9 > 1.8: the unnamed lane's fallback excess
  // is added to the measured one.
  PairSlowdowns table = kTable;
  table[{"", "wb"}] = 3'000'000;
  table[{"wb", ""}] = 3'000'000;
  const JobSpec x = named("x", "", 700'000), a = named("a", "wa", 600'000), b = named("b", "wb", 500'000);
  CHECK(slowdowns(salus::sim::PairInterference(table), {x, a, b}) ==
        std::vector<std::int64_t>{1'800'000, 1'800'000, 1'800'000});
  table[{"wa", "wb"}] = 1'600'000;
  CHECK(slowdowns(salus::sim::PairInterference(table), {x, a, b}) ==
        std::vector<std::int64_t>{1'800'000, 1'900'000, 1'800'000});
  // Two lanes, x and b: both fall back to max(1, 0.7 + 0.5) = 1.2 (not the table's 3).
  CHECK(slowdowns(salus::sim::PairInterference(table), {x, b}) == std::vector<std::int64_t>{1'200'000, 1'200'000});
}

TEST_CASE("pairs: a schedule under measured pair slowdowns") {
  // PACK, two lanes from 0, u = 0.6 each (the profiled model would slow both by 1.2).
  // Table: a beside b 1.25, b beside a 1.5.
  //   b: 2 x 100 ms = 200 ms of work at 1.5 -> ends at 300 ms.
  //   a: at 300 ms it has done 300 / 1.25 = 240 ms of work; alone (1): 260 ms left -> 560 ms.
  auto jobs = trace({job("a", 0, 5, ms(100), gib(1), gib(2), 600'000), job("b", 0, 2, ms(100), gib(1), gib(2), 600'000)});
  jobs[0].workload = "wa";
  jobs[1].workload = "wb";
  const PairSlowdowns table = {{{"wa", "wb"}, 1'250'000}, {{"wb", "wa"}, 1'500'000}};
  const auto model = salus::sim::make_interference("pairs", &table);
  const auto p = salus::policies::make_policy("pack");
  salus::sim::SimExecutor exec(jobs, *model);
  SchedulerOptions o;
  o.capacity = gib(16);
  o.lane_mode = p->default_lane_mode();
  o.record_timeline = true;
  const ScheduleOutcome out = run_schedule(jobs, *p, exec, o);
  salus::test::check_schedule(jobs, out, o, false, 0);
  CHECK(salus::test::finishes(out) == std::vector<TimeNs>{ms(560), ms(300)});
  CHECK(salus::test::segments(out) == std::vector<Seg>{{0, 0, 0, ms(560), 5, 0}, {1, 1, 0, ms(300), 2, 0}});
}

// --- shares: GPU time by weight x demand, weights fitted to the pair table -----------------

namespace {

/// The pair table the shares model itself predicts for weights `w` and utilisations `u` (ppm):
/// s_ij = u_i + (w_j / w_i) u_j, so fitting it must give the weights back.
PairSlowdowns table_from_shares(const std::map<std::string, double>& w, const std::map<std::string, std::int32_t>& u) {
  PairSlowdowns t;
  for (const auto& [i, wi] : w) {
    for (const auto& [j, wj] : w) {
      if (i != j) t[{i, j}] = std::llround(static_cast<double>(u.at(i)) + wj / wi * static_cast<double>(u.at(j)));
    }
  }
  return t;
}

}  // namespace

TEST_CASE("shares: slowdown is max(1, sum of w u over the running set / own w), by hand") {
  // a: w 2, u 0.8; b: w 0.5, u 0.6. Sum w u = 1.6 + 0.3 = 1.9.
  //   a: 1.9 / 2 = 0.95 -> 1 (it barely notices b);  b: 1.9 / 0.5 = 3.8 (it waits behind a).
  const salus::sim::ShareInterference m({{"wa", 2.0}, {"wb", 0.5}});
  const JobSpec a = named("a", "wa", 800'000), b = named("b", "wb", 600'000);
  CHECK(slowdowns(m, {a, b}) == std::vector<std::int64_t>{1'000'000, 3'800'000});
  // Two copies of a: 2 x 1.6 / 2 = 1.6 = 2 u, u's own definition whatever the weight.
  CHECK(slowdowns(m, {a, a}) == std::vector<std::int64_t>{1'600'000, 1'600'000});
  // A job without a weight (explicit figures) weighs 1: with a, sum = 1.6 + 0.6 = 2.2.
  const JobSpec c = named("c", "", 600'000);
  CHECK(slowdowns(m, {a, c}) == std::vector<std::int64_t>{1'100'000, 2'200'000});
  CHECK(slowdowns(m, {a}) == std::vector<std::int64_t>{1'000'000});
}

TEST_CASE("shares: an exponent below 1 bends every slowdown, 1 leaves it as it is") {
  const salus::sim::ShareInterference bent({{"wa", 2.0}, {"wb", 0.5}}, 0.5);
  const JobSpec a = named("a", "wa", 800'000), b = named("b", "wb", 600'000);
  // b: 3.8 ^ 0.5 = 1.949359; a stays at 1.
  CHECK(slowdowns(bent, {a, b}) == std::vector<std::int64_t>{1'000'000, 1'949'359});
  CHECK_THROWS_WITH_AS(salus::sim::make_interference("profiled", nullptr, nullptr, 0.0),
                       "share exponent must be in (0, 2], got 0.000000", InputError);
}

TEST_CASE("shares: fitting the model's own pair table gives its weights back, normalised") {
  // big beside small: 0.95 + 0.25 / 4 x 0.5 = 0.98, measured as solo speed and left out of the
  // fit; the other eight figures determine the three weights.
  const std::map<std::string, double> w = {{"big", 4.0}, {"mid", 1.0}, {"small", 0.25}};
  const std::map<std::string, std::int32_t> u = {{"big", 950'000}, {"mid", 700'000}, {"small", 500'000}};
  const salus::sim::ShareWeights fitted = salus::sim::fit_share_weights(table_from_shares(w, u), u);
  REQUIRE(fitted.size() == 3);
  // Geometric mean 1: 4 x 1 x 0.25 = 1 already.
  CHECK(fitted.at("big") == doctest::Approx(4.0).epsilon(1e-4));
  CHECK(fitted.at("mid") == doctest::Approx(1.0).epsilon(1e-4));
  CHECK(fitted.at("small") == doctest::Approx(0.25).epsilon(1e-4));
}

TEST_CASE("shares: pairs that u alone explains carry no weight, and unknown workloads are ignored") {
  // Measured at solo speed (0.9 <= 1): only a bound, left out; a pair with an unknown workload too.
  const std::map<std::string, std::int32_t> u = {{"x", 900'000}, {"y", 900'000}};
  const PairSlowdowns only_u = {{{"x", "y"}, 900'000}, {{"y", "x"}, 900'000}, {{"x", "ghost"}, 2'000'000}};
  CHECK(salus::sim::fit_share_weights(only_u, u).empty());
  CHECK_THROWS_WITH_AS(salus::sim::make_interference("shares", nullptr, nullptr),
                       "interference model 'shares' needs a catalog with a \"pairs\" table (salus-profile measures one)",
                       InputError);
}

// --- crowds: `pairs`, times a crowd factor c(k) for k >= 3 lanes running -----------------------

namespace {

using salus::sim::CrowdFactors;
using salus::sim::PairInterference;

// Two workloads on one core: each pair's excess 1.1 (x beside y), 1.2 (y beside x); a copy of
// itself falls back to u_i + u_j = 2 (u = 1).
const PairSlowdowns kCrowdTable = {{{"x", "y"}, 2'100'000}, {{"y", "x"}, 2'200'000}};

}  // namespace

TEST_CASE("crowds: the factor is 1 for pairs, as measured at 3, 5 and 8 lanes, linear between, flat beyond") {
  const PairInterference m(kCrowdTable, CrowdFactors{{3, 1'100'000}, {5, 1'200'000}, {8, 900'000}});
  CHECK(m.name() == "crowds");
  CHECK(m.crowd_factor(1) == 1'000'000);
  CHECK(m.crowd_factor(2) == 1'000'000);
  CHECK(m.crowd_factor(3) == 1'100'000);
  CHECK(m.crowd_factor(4) == 1'150'000);  // halfway from 1.1 (3) to 1.2 (5)
  CHECK(m.crowd_factor(5) == 1'200'000);
  CHECK(m.crowd_factor(6) == 1'100'000);  // a third of the way from 1.2 (5) down to 0.9 (8)
  CHECK(m.crowd_factor(7) == 1'000'000);
  CHECK(m.crowd_factor(8) == 900'000);
  CHECK(m.crowd_factor(20) == 900'000);
  // Measured from 4 lanes only: 3 lies between the pair (1 at 2) and 4.
  const PairInterference from4(kCrowdTable, CrowdFactors{{4, 1'300'000}});
  CHECK(from4.crowd_factor(3) == 1'150'000);
  CHECK(from4.crowd_factor(9) == 1'300'000);
  // Without factors it is `pairs`.
  const PairInterference plain(kCrowdTable);
  CHECK(plain.name() == "pairs");
  CHECK(plain.crowd_factor(7) == 1'000'000);
}

TEST_CASE("crowds: k >= 3 lanes are the pairs' figures times c(k), two lanes exactly the pairs'") {
  const PairInterference m(kCrowdTable, CrowdFactors{{3, 1'100'000}, {4, 800'000}});
  const JobSpec a = named("a", "x", 1'000'000), b = named("b", "y", 1'000'000), c = named("c", "x", 1'000'000);
  // Two lanes: a beside b 2.1, b beside a 2.2, as the table says.
  CHECK(slowdowns(m, {a, b}) == std::vector<std::int64_t>{2'100'000, 2'200'000});
  // Three lanes (x, y, x), pairs: a = 1 + 1.1 (y) + 1 (x beside x, 2u - 1) = 3.1, b = 1 + 1.2 + 1.2 = 3.4,
  // c = 3.1; each at least sum u = 3. Times 1.1: 3.41, 3.74, 3.41.
  CHECK(slowdowns(m, {a, b, c}) == std::vector<std::int64_t>{3'410'000, 3'740'000, 3'410'000});
  // Four (x, y, x, y), pairs: x lanes 1 + 1 + 2 x 1.1 = 4.2, y lanes 1 + 1 + 2 x 1.2 = 4.4 (sum u 4).
  // Times 0.8 (a crowd that overlaps better than its pairs add up): 3.36 and 3.52.
  const JobSpec d = named("d", "y", 1'000'000);
  CHECK(slowdowns(m, {a, b, c, d}) == std::vector<std::int64_t>{3'360'000, 3'520'000, 3'360'000, 3'520'000});
  // A factor that would take a lane below solo speed stops at solo: three light jobs (u 0.2, no
  // pairs: 1 + 2 x 0 = 1) times 0.8 stays 1.
  const JobSpec l1 = named("l1", "", 200'000), l2 = named("l2", "", 200'000), l3 = named("l3", "", 200'000);
  const PairInterference low(kCrowdTable, CrowdFactors{{3, 800'000}});
  CHECK(slowdowns(low, {l1, l2, l3}) == std::vector<std::int64_t>{1'000'000, 1'000'000, 1'000'000});
}

TEST_CASE("crowds: the factors are the crowds' measured sums over what the pairs predict, averaged per size") {
  const std::map<std::string, std::int32_t> u = {{"x", 1'000'000}, {"y", 1'000'000}};
  // (x, y, x): pairs predict 3.1 + 3.4 + 3.1 = 9.6. Measured 3.3 + 3.6 + 3.3 = 10.2: 10.2 / 9.6 = 1.0625.
  // A second crowd of 3 measured at exactly the pairs' 9.6: factor 1. Mean 1.03125.
  // (x, y, x, y): predicted 2 x 4.2 + 2 x 4.4 = 17.2; measured 4 x 4.3 = 17.2: 1.
  // A crowd of 2 lanes, or with a slowdown missing, says nothing.
  const std::vector<salus::sim::Crowd> crowds = {
      {{"x", "y", "x"}, {3.3, 3.6, 3.3}},
      {{"x", "y", "x"}, {3.1, 3.4, 3.1}},
      {{"x", "y", "x", "y"}, {4.3, 4.3, 4.3, 4.3}},
      {{"x", "y"}, {5, 5}},
      {{"x", "y", "x", "y", "x"}, {5, 5, 5}},
  };
  const CrowdFactors f = salus::sim::fit_crowd_factors(kCrowdTable, crowds, u);
  CHECK(f == CrowdFactors{{3, 1'031'250}, {4, 1'000'000}});
  // A workload without u counts as u = 1: the same figures.
  CHECK(salus::sim::fit_crowd_factors(kCrowdTable, crowds, {}) == f);
  CHECK(salus::sim::fit_crowd_factors(kCrowdTable, {}, u).empty());
}

TEST_CASE("crowds by name: needs pairs and crowd factors, with the exact message") {
  const CrowdFactors factors = {{3, 1'100'000}};
  const CrowdFactors none;
  const PairSlowdowns empty;
  const auto m = salus::sim::make_interference("crowds", &kCrowdTable, nullptr, 1.0, &factors);
  CHECK(m->name() == "crowds");
  CHECK_FALSE(m->ideal());
  const char* const msg = "interference model 'crowds' needs a catalog with a \"pairs\" table and \"crowds\" "
                          "(salus-profile --crowds measures them)";
  CHECK_THROWS_WITH_AS(salus::sim::make_interference("crowds", &kCrowdTable), msg, InputError);
  CHECK_THROWS_WITH_AS(salus::sim::make_interference("crowds", &kCrowdTable, nullptr, 1.0, &none), msg, InputError);
  CHECK_THROWS_WITH_AS(salus::sim::make_interference("crowds", &empty, nullptr, 1.0, &factors), msg, InputError);
  // `pairs` ignores the factors.
  CHECK(salus::sim::make_interference("pairs", &kCrowdTable, nullptr, 1.0, &factors)->name() == "pairs");
}

TEST_CASE("crowds: a schedule with three lanes runs at the pairs' rate times the crowd factor") {
  // PACK, three jobs of workload x (u 1, no pairs of x with x: s = 2 each), 1 iteration of 100 ms.
  // Pairs: each 1 + 2 x 1 = 3; with c(3) = 1.2: 3.6, so all three end at 360 ms.
  auto jobs = salus::test::trace({job("a", 0, 1, ms(100), gib(1), gib(2), 1'000'000),
                                  job("b", 0, 1, ms(100), gib(1), gib(2), 1'000'000),
                                  job("c", 0, 1, ms(100), gib(1), gib(2), 1'000'000)});
  for (JobSpec& j : jobs) j.workload = "x";
  const CrowdFactors factors = {{3, 1'200'000}};
  const auto model = salus::sim::make_interference("crowds", &kCrowdTable, nullptr, 1.0, &factors);
  const auto p = salus::policies::make_policy("pack");
  salus::sim::SimExecutor exec(jobs, *model);
  SchedulerOptions o;
  o.capacity = gib(16);
  o.lane_mode = p->default_lane_mode();
  const ScheduleOutcome out = run_schedule(jobs, *p, exec, o);
  salus::test::check_schedule(jobs, out, o, false, 0);
  CHECK(salus::test::finishes(out) == std::vector<TimeNs>{ms(360), ms(360), ms(360)});
}

// --- capacity: shares' weights, the total over the concurrency capacity C of homogeneous sweeps --

namespace {

using salus::sim::Capacities;
using salus::sim::CapacityInterference;

}  // namespace

TEST_CASE("capacity: C(k) = k u / s(k) of each sweep point, by hand") {
  // x: u 0.8; 3 copies measured at 2.0 -> C = 3 x 0.8 / 2 = 1.2; 6 copies at 3.2 -> 1.5.
  // y: u 0.5, 2 copies at 1.25 -> 0.8 (two copies slower than u says: 1.25 > 2 x 0.5).
  // z has no u (not in the catalog's pairs or sweeps): left out; so are points with k < 2 or
  // s <= 0, and a sweep whose counts differ.
  const std::map<std::string, std::int32_t> u = {{"x", 800'000}, {"y", 500'000}, {"w", 900'000}};
  const std::vector<salus::sim::Sweep> sweeps = {
      {"x", {3, 6}, {2.0, 3.2}},
      {"y", {1, 2}, {1.0, 1.25}},
      {"z", {3}, {2.0}},
      {"w", {3, 4}, {2.0}},
      {"w", {5}, {0.0}},
  };
  const Capacities c = salus::sim::fit_capacities(sweeps, u);
  REQUIRE(c.size() == 2);
  REQUIRE(c.at("x").size() == 2);
  CHECK(c.at("x").at(3) == doctest::Approx(1.2).epsilon(1e-12));
  CHECK(c.at("x").at(6) == doctest::Approx(1.5).epsilon(1e-12));
  REQUIRE(c.at("y").size() == 1);
  CHECK(c.at("y").at(2) == doctest::Approx(0.8).epsilon(1e-12));
  CHECK(salus::sim::fit_capacities({}, u).empty());
}

TEST_CASE("capacity: C is 1 for a lane alone and two copies, as measured, linear between, flat beyond") {
  const CapacityInterference m({{"x", 1.0}, {"y", 1.0}}, Capacities{{"x", {{3, 1.2}, {6, 1.5}}}, {"y", {{2, 0.8}, {4, 1.0}}}});
  CHECK(m.name() == "capacity");
  CHECK(m.capacity("x", 1) == 1.0);
  CHECK(m.capacity("x", 2) == 1.0);
  CHECK(m.capacity("x", 3) == doctest::Approx(1.2));
  CHECK(m.capacity("x", 4) == doctest::Approx(1.3));  // a third of the way from 1.2 (3) to 1.5 (6)
  CHECK(m.capacity("x", 5) == doctest::Approx(1.4));
  CHECK(m.capacity("x", 6) == doctest::Approx(1.5));
  CHECK(m.capacity("x", 40) == doctest::Approx(1.5));
  // Measured at 2 lanes, that is C(2); 3 lies halfway to 4.
  CHECK(m.capacity("y", 2) == doctest::Approx(0.8));
  CHECK(m.capacity("y", 3) == doctest::Approx(0.9));
  CHECK(m.capacity("y", 9) == doctest::Approx(1.0));
  // Without a sweep: 1.
  CHECK(m.capacity("ghost", 5) == 1.0);
}

TEST_CASE("capacity: slowdown is max(1, sum w u / (own w x C(S))), C(S) weighted by w u, by hand") {
  // a: w 2, u 0.8, C_a(3) = 1.2; b: w 0.5, u 0.6, C_b(3) = 2.
  const CapacityInterference m({{"wa", 2.0}, {"wb", 0.5}}, Capacities{{"wa", {{3, 1.2}}}, {"wb", {{3, 2.0}}}});
  const JobSpec a = named("a", "wa", 800'000), b = named("b", "wb", 600'000);
  // Two lanes: C = 1, the `shares` figures (sum w u = 1.9: a 0.95 -> 1, b 3.8).
  CHECK(slowdowns(m, {a, b}) == std::vector<std::int64_t>{1'000'000, 3'800'000});
  // Three lanes a, a, b: sum w u = 1.6 + 1.6 + 0.3 = 3.5; C(S) = (1.6 x 1.2 + 1.6 x 1.2 + 0.3 x 2) / 3.5
  // = 4.44 / 3.5; sum w u / C(S) = 3.5^2 / 4.44 = 2.7590090. a: / 2 = 1.3795045, b: / 0.5 = 5.5180180.
  CHECK(slowdowns(m, {a, a, b}) == std::vector<std::int64_t>{1'379'505, 1'379'505, 5'518'018});
  // Three copies of a run as its sweep measured them: 3 x 0.8 / 1.2 = 2.
  CHECK(slowdowns(m, {a, a, a}) == std::vector<std::int64_t>{2'000'000, 2'000'000, 2'000'000});
  // A job without a workload weighs 1 and has C 1: a, b and it (u 0.5): sum w u = 1.6 + 0.3 + 0.5 = 2.4,
  // C(S) = (1.92 + 0.6 + 0.5) / 2.4; 2.4^2 / 3.02 = 1.9072848: a 0.95 -> 1, b 3.8145695, it 1.9072848.
  const JobSpec x = named("x", "", 500'000);
  CHECK(slowdowns(m, {a, b, x}) == std::vector<std::int64_t>{1'000'000, 3'814'570, 1'907'285});
  CHECK(slowdowns(m, {a}) == std::vector<std::int64_t>{1'000'000});
  // Weights 10^18 apart: the tiny lane's slowdown (10^24 ppm) stops at 2^62 ppm, not past int64.
  const CapacityInterference extreme({{"huge", 1e9}, {"tiny", 1e-9}}, {});
  const JobSpec h = named("h", "huge", 1'000'000), t = named("t", "tiny", 1'000'000);
  CHECK(slowdowns(extreme, {h, t}) == std::vector<std::int64_t>{1'000'000, std::int64_t{1} << 62});
}

TEST_CASE("capacity: without sweeps it is `shares`, and it says so") {
  const salus::sim::ShareWeights w = {{"wa", 2.0}, {"wb", 0.5}, {"wc", 1.0}};
  const CapacityInterference m(w, {});
  const salus::sim::ShareInterference shares(w);
  const JobSpec a = named("a", "wa", 800'000), b = named("b", "wb", 600'000), c = named("c", "wc", 300'000),
                x = named("x", "", 700'000);
  for (const std::vector<JobSpec>& set : std::vector<std::vector<JobSpec>>{{a, b}, {a, b, c}, {c, c, x, b}, {a, a, a, a, b}}) {
    CHECK(slowdowns(m, set) == slowdowns(shares, set));
  }
  CHECK(m.notes() == std::vector<std::string>{"capacity: the catalog has no sweeps (salus-profile --sweeps measures "
                                              "them): C = 1 for every workload, which is the `shares` model"});
}

TEST_CASE("capacity: notes name the workloads without a sweep and the sweeps cut short by the pool") {
  const CapacityInterference m({{"wa", 1.0}, {"wb", 1.0}, {"wc", 1.0}, {"wd", 1.0}},
                               Capacities{{"wa", {{3, 1.1}, {12, 1.3}}}, {"wb", {{3, 1.1}, {6, 1.2}}}, {"wc", {{3, 1.0}}}});
  CHECK(m.notes() == std::vector<std::string>{
                         "capacity: no sweep of wd: C = 1 for them (as their pairs say)",
                         "capacity: beyond its largest sweep a workload keeps that sweep's C (salus-profile stops a sweep "
                         "where the copies no longer fit its pool; the widest reached 12 lanes): wb 6, wc 3 lanes"});
  // Every workload swept to the same width: nothing to say.
  CHECK(CapacityInterference({{"wa", 1.0}}, Capacities{{"wa", {{3, 1.1}}}}).notes().empty());
}

TEST_CASE("capacity by name: needs the pairs' weights, with the exact message, and sweeps are optional") {
  const salus::sim::ShareWeights w = {{"x", 1.0}};
  const salus::sim::ShareWeights none;
  const Capacities caps = {{"x", {{3, 1.5}}}};
  const auto m = salus::sim::make_interference("capacity", nullptr, &w, 1.0, nullptr, &caps);
  CHECK(m->name() == "capacity");
  CHECK_FALSE(m->ideal());
  CHECK(m->notes().empty());
  CHECK(salus::sim::make_interference("capacity", nullptr, &w)->notes().size() == 1);  // no sweeps: the note
  const char* const msg = "interference model 'capacity' needs a catalog with a \"pairs\" table (salus-profile "
                          "measures one) and, for C, \"sweeps\" (salus-profile --sweeps)";
  CHECK_THROWS_WITH_AS(salus::sim::make_interference("capacity", nullptr, nullptr, 1.0, nullptr, &caps), msg, InputError);
  CHECK_THROWS_WITH_AS(salus::sim::make_interference("capacity", nullptr, &none, 1.0, nullptr, &caps), msg, InputError);
  // The other models ignore the capacities.
  CHECK(salus::sim::make_interference("shares", nullptr, &w, 1.0, nullptr, &caps)->name() == "shares");
}

TEST_CASE("shares and capacity on a pair table that fits no weight: every workload weighs 1, and the run says so") {
  // A loaded CPU can measure every pair at or below solo speed (s <= 1): fit_share_weights then
  // has nothing to fit. The table is there, so the models run, with w = 1 and the note.
  salus::sim::PairSlowdowns pairs;
  pairs[{"x", "y"}] = 951'000;
  pairs[{"y", "x"}] = 708'000;
  const salus::sim::ShareWeights none = salus::sim::fit_share_weights(pairs, {{"x", 500'000}, {"y", 500'000}});
  REQUIRE(none.empty());
  const std::string why = std::string(salus::sim::kUnweighted);
  const auto shares = salus::sim::make_interference("shares", &pairs, &none);
  CHECK(shares->notes() == std::vector<std::string>{"shares: " + why});
  const auto capacity = salus::sim::make_interference("capacity", &pairs, &none);
  REQUIRE(capacity->notes().size() == 2);  // no weight, no sweeps
  CHECK(capacity->notes()[0] == "capacity: " + why);
  // Equal weights: two jobs of u 0.5 and 0.8 each run at 1 / max(1, 1.3) under either model.
  auto jobs = salus::test::trace({job("a", 0, 1, ms(100), gib(1), gib(2), 500'000),
                                  job("b", 0, 1, ms(100), gib(1), gib(2), 800'000)});
  jobs[0].workload = "x";
  jobs[1].workload = "y";
  const std::vector<salus::sim::RunningIteration> running = {{&jobs[0]}, {&jobs[1]}};
  for (const auto* m : {shares.get(), capacity.get()}) {
    std::vector<std::int64_t> out(2);
    m->slowdowns(running, out);
    CHECK(out == std::vector<std::int64_t>{1'300'000, 1'300'000});
  }
  // With neither a table nor weights, both still refuse.
  CHECK_THROWS_AS(salus::sim::make_interference("shares", nullptr, &none), InputError);
  CHECK_THROWS_AS(salus::sim::make_interference("capacity", nullptr, &none), InputError);
}

TEST_CASE("capacity: a schedule where three lanes overlap better than two, the same twice") {
  // PACK, three jobs of workload x (u 0.8, w 1) from 0, one iteration each: a and b 100 ms, c 50 ms.
  // C_x(3) = 1.2: three lanes at 3 x 0.8 / 1.2 = 2. c ends at 50 x 2 = 100 ms; a and b have done
  // 50 ms of work; two lanes (C 1) at 1.6: 50 ms more take 80 ms, ending at 180 ms.
  auto jobs = salus::test::trace({job("a", 0, 1, ms(100), gib(1), gib(2), 800'000),
                                  job("b", 0, 1, ms(100), gib(1), gib(2), 800'000),
                                  job("c", 0, 1, ms(50), gib(1), gib(2), 800'000)});
  for (JobSpec& j : jobs) j.workload = "x";
  const salus::sim::ShareWeights w = {{"x", 1.0}};
  const Capacities caps = {{"x", {{3, 1.2}}}};
  const auto model = salus::sim::make_interference("capacity", nullptr, &w, 1.0, nullptr, &caps);
  const auto p = salus::policies::make_policy("pack");
  std::vector<ScheduleOutcome> outs;
  for (int repeat = 0; repeat < 2; ++repeat) {
    salus::sim::SimExecutor exec(jobs, *model);
    SchedulerOptions o;
    o.capacity = gib(16);
    o.lane_mode = p->default_lane_mode();
    o.record_timeline = true;
    outs.push_back(run_schedule(jobs, *p, exec, o));
    salus::test::check_schedule(jobs, outs.back(), o, false, 0);
  }
  CHECK(salus::test::finishes(outs[0]) == std::vector<TimeNs>{ms(180), ms(180), ms(100)});
  CHECK(salus::test::finishes(outs[1]) == salus::test::finishes(outs[0]));
  CHECK(salus::test::segments(outs[1]) == salus::test::segments(outs[0]));
}

// A gang replica held to a slower replica's pace (SimExecutor::start_paced: 5 ms of its own work
// padded to 10 ms), and a run that starts beside it: the iteration in flight becomes lock-step's
// (SimExecutor::unpad). Pairs: r (wa) runs at 1.5 beside n (wb), n at 1.3 beside r.
TEST_CASE("a run starting beside a paced replica finds the iteration in flight as lock-step has it") {
  const auto model = salus::sim::make_interference("pairs", &kTable);
  std::vector<JobSpec> jobs{named("r", "wa", 600'000), named("n", "wb", 500'000)};  // sum u 1.1: the pairs' figures
  jobs[0].iter_ns = ms(5);
  jobs[1].iter_ns = ms(10);
  jobs[0].iterations = 3;
  auto run = [&](TimeNs newcomer_at, std::vector<Completion>& done) {
    salus::sim::SimExecutor exec(jobs, *model);
    exec.start_paced(Dispatch{0, 0, 3}, ms(10));
    exec.wait(newcomer_at, done);
    REQUIRE(done.empty());
    exec.start(Dispatch{1, 1, 1});
    while (exec.running() > 0) exec.wait(kNever, done);
    return std::pair{exec.unpadded_work(), exec.unpadded_held()};
  };
  // At 3 ms, in its own work: 2 ms of it left, at 1.5 beside n: r ends its one iteration at 6 ms.
  // n: 3 ms at 1.3 do floor(3e6 / 1.3) = 2,307,692 ns of its work, the rest alone from 6 ms.
  std::vector<Completion> a;
  CHECK(run(ms(3), a) == std::pair<std::int64_t, std::int64_t>{1, 0});
  REQUIRE(a.size() == 2);
  CHECK((a[0].job == 0 && a[0].iterations_done == 1 && a[0].end_ns == ms(6)));
  CHECK((a[1].job == 1 && a[1].end_ns == ms(6) + (ms(10) - 2'307'692)));
  // At 7 ms, in the padding (its own work ended at 5 ms): r's lane is held, idle, to 10 ms, and
  // n runs alone from 7 ms to 17 ms.
  std::vector<Completion> b;
  CHECK(run(ms(7), b) == std::pair<std::int64_t, std::int64_t>{0, 1});
  REQUIRE(b.size() == 2);
  CHECK((b[0].job == 0 && b[0].iterations_done == 1 && b[0].end_ns == ms(10)));
  CHECK((b[1].job == 1 && b[1].end_ns == ms(17)));
  // Alone, the paced run ends its three iterations 10 ms apart.
  salus::sim::SimExecutor alone(jobs, *model);
  alone.start_paced(Dispatch{0, 0, 3}, ms(10));
  std::vector<Completion> c;
  alone.wait(kNever, c);
  REQUIRE(c.size() == 1);
  CHECK((c[0].iterations_done == 3 && c[0].end_ns == ms(30)));
}

// A batch beside other lanes (cluster/, tuning.crowded_batches): a replica started at its own
// pace is held to the slowest replica's after the fact (pace), and where the batch is cut the
// paced replica is made lock-step's at the cut's instant t (unpad_at), its executor's clock
// perhaps behind t: r's own work is 5 ms, padded to 10 ms an iteration, 4 iterations from 0.
TEST_CASE("a paced replica made lock-step's where its batch is cut: its own work, or taken out as ended") {
  const auto model = salus::sim::make_interference("pairs", &kTable);
  std::vector<JobSpec> jobs{named("r", "wa", 600'000), named("n", "wb", 500'000)};
  jobs[0].iter_ns = ms(5);
  jobs[0].iterations = 4;
  auto paced = [&](salus::sim::SimExecutor& exec) {
    exec.start(Dispatch{0, 0, 4});
    exec.pace(0, ms(10));
    CHECK(exec.next_completion_ns() == ms(40));
    const salus::sim::SimExecutor::RunShape s = exec.shape(0);
    CHECK((s.running && !s.held && s.iter_ns == ms(10) && s.own_ns == ms(5) && s.end_ns == ms(40) && s.iterations == 4));
  };
  // Cut at 23 ms (the clock still at 0): the iteration from 20 ms has 2 ms of its own work left;
  // the run ends with it, at 25 ms, after 3 iterations.
  {
    salus::sim::SimExecutor exec(jobs, *model);
    paced(exec);
    CHECK_FALSE(exec.unpad_at(0, ms(23)).has_value());
    std::vector<Completion> done;
    exec.wait(kNever, done);
    REQUIRE(done.size() == 1);
    CHECK((done[0].iterations_done == 3 && done[0].end_ns == ms(25)));
  }
  // Cut at 27 ms: its own work in that iteration ended at 25 ms; it is taken out, ended at 27 ms
  // after 3 iterations, and the executor runs nothing.
  {
    salus::sim::SimExecutor exec(jobs, *model);
    paced(exec);
    const std::optional<Completion> c = exec.unpad_at(0, ms(27));
    REQUIRE(c.has_value());
    CHECK((c->job == 0 && c->lane == 0 && c->iterations_done == 3 && c->start_ns == 0 && c->end_ns == ms(27)));
    CHECK(exec.running() == 0);
    CHECK_FALSE(exec.shape(0).running);
    CHECK(exec.next_completion_ns() == kNever);
  }
  // At a boundary (20 ms): the iteration starting there, all its own work left: ends at 25 ms.
  {
    salus::sim::SimExecutor exec(jobs, *model);
    paced(exec);
    CHECK_FALSE(exec.unpad_at(0, ms(20)).has_value());
    CHECK(exec.next_completion_ns() == ms(25));
    CHECK(exec.shape(0).iterations == 3);
  }
  // Beside n from 0 (pairs: r at 1.5): unpaced, r's iterations take 7.5 ms, its shape says so.
  {
    salus::sim::SimExecutor exec(jobs, *model);
    exec.start(Dispatch{0, 0, 4});
    exec.start(Dispatch{1, 1, 1});
    exec.next_completion_ns();
    const salus::sim::SimExecutor::RunShape s = exec.shape(0);
    CHECK((s.slowdown == 1'500'000 && s.period_ns == 7'500'000 && s.end_ns == ms(30) && s.sync_ns == 0));
  }
}
