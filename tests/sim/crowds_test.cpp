// The `crowds` interference model: `pairs`, times a crowd factor c(k) for k >= 3 lanes running,
// the factors fitted from measured crowds against the pair table. All in parts per million.
#include <doctest/doctest.h>

#include <map>
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
using salus::sim::CrowdFactors;
using salus::sim::PairInterference;
using salus::sim::PairSlowdowns;
using salus::test::gib;
using salus::test::job;
using salus::test::ms;

JobSpec named(const char* id, const char* workload, std::int32_t util_ppm) {
  JobSpec s = job(id, 0, 1, 1, 0, 0, util_ppm);
  s.workload = workload;
  return s;
}

std::vector<std::int64_t> slowdowns(const salus::sim::InterferenceModel& m, const std::vector<JobSpec>& jobs) {
  std::vector<salus::sim::RunningIteration> running;
  for (const JobSpec& s : jobs) running.push_back({&s});
  std::vector<std::int64_t> out(running.size(), 0);
  m.slowdowns(running, out);
  return out;
}

// Two workloads on one core: each pair's excess 1.1 (x beside y), 1.2 (y beside x); a copy of
// itself falls back to u_i + u_j = 2 (u = 1).
const PairSlowdowns kTable = {{{"x", "y"}, 2'100'000}, {{"y", "x"}, 2'200'000}};

}  // namespace

TEST_CASE("crowds: the factor is 1 for pairs, as measured at 3, 5 and 8 lanes, linear between, flat beyond") {
  const PairInterference m(kTable, CrowdFactors{{3, 1'100'000}, {5, 1'200'000}, {8, 900'000}});
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
  const PairInterference from4(kTable, CrowdFactors{{4, 1'300'000}});
  CHECK(from4.crowd_factor(3) == 1'150'000);
  CHECK(from4.crowd_factor(9) == 1'300'000);
  // Without factors it is `pairs`.
  const PairInterference plain(kTable);
  CHECK(plain.name() == "pairs");
  CHECK(plain.crowd_factor(7) == 1'000'000);
}

TEST_CASE("crowds: k >= 3 lanes are the pairs' figures times c(k), two lanes exactly the pairs'") {
  const PairInterference m(kTable, CrowdFactors{{3, 1'100'000}, {4, 800'000}});
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
  const PairInterference low(kTable, CrowdFactors{{3, 800'000}});
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
  const CrowdFactors f = salus::sim::fit_crowd_factors(kTable, crowds, u);
  CHECK(f == CrowdFactors{{3, 1'031'250}, {4, 1'000'000}});
  // A workload without u counts as u = 1: the same figures.
  CHECK(salus::sim::fit_crowd_factors(kTable, crowds, {}) == f);
  CHECK(salus::sim::fit_crowd_factors(kTable, {}, u).empty());
}

TEST_CASE("crowds by name: needs pairs and crowd factors, with the exact message") {
  const CrowdFactors factors = {{3, 1'100'000}};
  const CrowdFactors none;
  const PairSlowdowns empty;
  const auto m = salus::sim::make_interference("crowds", &kTable, nullptr, 1.0, &factors);
  CHECK(m->name() == "crowds");
  CHECK_FALSE(m->ideal());
  const char* const msg = "interference model 'crowds' needs a catalog with a \"pairs\" table and \"crowds\" "
                          "(salus-profile --crowds measures them)";
  CHECK_THROWS_WITH_AS(salus::sim::make_interference("crowds", &kTable), msg, InputError);
  CHECK_THROWS_WITH_AS(salus::sim::make_interference("crowds", &kTable, nullptr, 1.0, &none), msg, InputError);
  CHECK_THROWS_WITH_AS(salus::sim::make_interference("crowds", &empty, nullptr, 1.0, &factors), msg, InputError);
  // `pairs` ignores the factors.
  CHECK(salus::sim::make_interference("pairs", &kTable, nullptr, 1.0, &factors)->name() == "pairs");
}

TEST_CASE("crowds: a schedule with three lanes runs at the pairs' rate times the crowd factor") {
  // PACK, three jobs of workload x (u 1, no pairs of x with x: s = 2 each), 1 iteration of 100 ms.
  // Pairs: each 1 + 2 x 1 = 3; with c(3) = 1.2: 3.6, so all three end at 360 ms.
  auto jobs = salus::test::trace({job("a", 0, 1, ms(100), gib(1), gib(2), 1'000'000),
                                  job("b", 0, 1, ms(100), gib(1), gib(2), 1'000'000),
                                  job("c", 0, 1, ms(100), gib(1), gib(2), 1'000'000)});
  for (JobSpec& j : jobs) j.workload = "x";
  const CrowdFactors factors = {{3, 1'200'000}};
  const auto model = salus::sim::make_interference("crowds", &kTable, nullptr, 1.0, &factors);
  const auto p = salus::policies::make_policy("pack");
  salus::sim::SimExecutor exec(jobs, *model);
  SchedulerOptions o;
  o.capacity = gib(16);
  o.lane_mode = p->default_lane_mode();
  const ScheduleOutcome out = run_schedule(jobs, *p, exec, o);
  salus::test::check_schedule(jobs, out, o, false, 0);
  CHECK(salus::test::finishes(out) == std::vector<TimeNs>{ms(360), ms(360), ms(360)});
}
