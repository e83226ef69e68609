// The fidelity report: the error arithmetic on hand-made pairs of summaries, and
// `salus-experiment fidelity` end to end on a tiny trace on the CPU device.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "run/cpus.h"
#include "experiments/fidelity.h"
#include "support/programs.h"
#include "traces/catalog.h"

namespace {

using nlohmann::json;
using salus::experiments::FidelityRow;
namespace fs = std::filesystem;

json job(const std::string& id, const std::string& status, double finish, double jct) {
  return {{"id", id}, {"status", status}, {"finish_s", finish}, {"jct_s", jct}};
}

json result(const std::string& policy, double makespan, long long switches, std::vector<json> jobs) {
  return {{"policy", policy}, {"makespan_s", makespan}, {"switches", switches}, {"jobs", jobs}};
}

}  // namespace

TEST_CASE("fidelity: errors are relative to the measured run, over jobs done on both sides") {
  // Measured: a 10 s, b 20 s, c 40 s, d failed. Simulated: a 11 s (+10 %), b 17 s (-15 %),
  // c 40 s (0 %), d 5 s. Errors 0.10, 0.15, 0 -> median (nearest rank) 0.10, p95 and max 0.15.
  // Finish order: measured a 10 < b 22 < c 45, simulated a 11 < c 40 < b 41: one discordant pair
  // of three, tau = (2 - 1) / 3.
  const json real = result("srtf", 50, 7,
                           {job("a", "done", 10, 10), job("b", "done", 22, 20), job("c", "done", 45, 40),
                            job("d", "failed", 12, 12)});
  const json sim = result("srtf", 45, 6,
                          {job("c", "done", 40, 40), job("b", "done", 41, 17), job("a", "done", 11, 11),
                           job("d", "done", 5, 5)});
  const FidelityRow r = salus::experiments::compare_results(sim, real);
  CHECK(r.policy == "srtf");
  CHECK(r.jobs == 4);
  CHECK(r.done_both == 3);
  CHECK(r.makespan_error == doctest::Approx(0.1));
  CHECK(r.jct_error_median == doctest::Approx(0.10));
  CHECK(r.jct_error_p95 == doctest::Approx(0.15));
  CHECK(r.jct_error_max == doctest::Approx(0.15));
  CHECK(r.kendall_tau == doctest::Approx(1.0 / 3.0));
  CHECK(r.switches_real == 7);
  CHECK(r.switches_sim == 6);
}

TEST_CASE("fidelity: Kendall's tau, medians over repeats, and summaries that do not match") {
  CHECK(salus::experiments::kendall_tau({1, 2, 3, 4}, {10, 20, 30, 40}) == 1.0);
  CHECK(salus::experiments::kendall_tau({1, 2, 3, 4}, {40, 30, 20, 10}) == -1.0);
  CHECK(salus::experiments::kendall_tau({1}, {5}) == 1.0);
  // Ties count as neither: (1, 1) against (1, 2) has no concordant or discordant pair.
  CHECK(salus::experiments::kendall_tau({1, 1}, {1, 2}) == 0.0);

  FidelityRow a, b, c;
  a.policy = b.policy = c.policy = "fifo";
  a.jct_error_median = 0.3, b.jct_error_median = 0.1, c.jct_error_median = 0.2;
  a.makespan_error = 0.05, b.makespan_error = 0.01, c.makespan_error = 0.02;
  const FidelityRow m = salus::experiments::median_row({a, b, c});
  CHECK(m.jct_error_median == doctest::Approx(0.2));
  CHECK(m.makespan_error == doctest::Approx(0.02));

  const json real = result("fifo", 10, 0, {job("a", "done", 10, 10)});
  CHECK_THROWS_WITH_AS(salus::experiments::compare_results(result("fifo", 10, 0, {job("z", "done", 10, 10)}), real),
                       "fidelity: job a is not in the simulated run", salus::core::InputError);
  CHECK_THROWS_WITH_AS(salus::experiments::compare_results(result("fifo", 10, 0, {}), real),
                       "fidelity: fifo: the simulator ran 0 jobs, the real executor 1: not the same trace",
                       salus::core::InputError);
  // Summaries: the policies present on both sides, in the measured run's order.
  const json sim_summary = {{"results", {result("pack", 8, 0, {job("a", "done", 8, 8)}),
                                         result("fifo", 11, 0, {job("a", "done", 11, 11)})}}};
  const json real_summary = {{"results", {real, result("srtf", 9, 0, {job("a", "done", 9, 9)})}}};
  const auto rows = salus::experiments::compare_summaries(sim_summary, real_summary);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].policy == "fifo");
  CHECK(rows[0].jct_error_median == doctest::Approx(0.1));
}

TEST_CASE("fidelity: the real executor's spread between its own repeats") {
  // One job taking 10, 12 and 15 s in three repeats (makespans the same). The six ordered pairs
  // (x against y, y taken as measured): 2/12, 5/15, 2/10, 3/15, 5/10, 3/12 = 0.167, 0.333, 0.2,
  // 0.2, 0.5, 0.25; their median (an even count: the mean of the middle two) (0.2 + 0.25) / 2.
  const json r1 = result("pack", 10, 0, {job("a", "done", 10, 10)});
  const json r2 = result("pack", 12, 0, {job("a", "done", 12, 12)});
  const json r3 = result("pack", 15, 0, {job("a", "done", 15, 15)});
  FidelityRow row;
  salus::experiments::repeat_spread(row, {&r1, &r2, &r3});
  CHECK(row.spread_jct_median == doctest::Approx(0.225));
  CHECK(row.spread_makespan == doctest::Approx(0.225));
  CHECK(salus::experiments::to_json(row).at("repeat_spread").at("jct_error_median") == doctest::Approx(0.225));
  CHECK(salus::experiments::fidelity_table({row}).find("22.50%, 22.50%") != std::string::npos);
  // One repeat: nothing to compare, and the figure is absent rather than zero.
  FidelityRow one;
  salus::experiments::repeat_spread(one, {&r1});
  CHECK(one.spread_jct_median < 0);
  CHECK(salus::experiments::to_json(one).at("repeat_spread").is_null());
}

TEST_CASE("fidelity: a run's catalog takes solo times, utilisation, switching cost and pairs from its calibrations") {
  const json entry_a = {{"name", "a"},          {"persistent_mib", 1.0},       {"ephemeral_mib", 2.0},
                        {"persistent_bytes", 1048576}, {"ephemeral_bytes", 2097152}, {"iter_ms", 4.0},
                        {"iter_exec_mean_ms", 4.2}, {"first_iter_ms", 7.0}, {"gpu_util", 0.5}, {"source", "measured"}};
  const json entry_b = {{"name", "b"},          {"persistent_mib", 3.0},       {"ephemeral_mib", 4.0},
                        {"persistent_bytes", 3145728}, {"ephemeral_bytes", 4194304}, {"iter_ms", 10.0},
                        {"gpu_util", 0.25}, {"source", "measured"}};
  const json pair_ab = {{"a", "a"}, {"b", "b"}, {"slowdown_a", 1.1}, {"slowdown_b", 1.3}};
  const json base = {{"format", "salus-catalog/1"}, {"gpu", "cpu"}, {"notes", "profile."}, {"switch_ms", 0.5},
                     {"pairs", {pair_ab}}, {"workloads", {entry_a, entry_b}}};
  // The calibrations measured only a (b is left as profiled); their first iteration is not taken
  // (the profile's extra over iter_ms is kept). Only `after` measured the pair, in the other order.
  const json before = {{"switch_ms", 0.7},
                       {"workloads", {{{"name", "a"}, {"iter_ms", 4.4}, {"iter_exec_mean_ms", 4.6},
                                       {"first_iter_ms", 20.0}, {"gpu_util", 0.6}}}}};
  const json after = {{"switch_ms", 0.9},
                      {"pairs", {{{"a", "b"}, {"b", "a"}, {"slowdown_a", 1.5}, {"slowdown_b", 1.2}}}},
                      {"workloads", {{{"name", "a"}, {"iter_ms", 4.8}, {"iter_exec_mean_ms", 5.0}, {"gpu_util", 0.8}}}}};

  const json one = salus::experiments::calibrated_catalog(base, before, nullptr);
  const json& a1 = one.at("workloads").at(0);
  CHECK(a1.at("iter_ms").get<double>() == doctest::Approx(4.4));
  CHECK(a1.at("iter_exec_mean_ms").get<double>() == doctest::Approx(4.6));
  CHECK(a1.at("first_iter_ms").get<double>() == doctest::Approx(7.4));  // the profile's 3 ms extra kept
  CHECK(a1.at("gpu_util").get<double>() == doctest::Approx(0.6));
  CHECK(a1.at("persistent_bytes") == 1048576);
  CHECK(a1.at("source").get<std::string>().find("just before the run") != std::string::npos);
  CHECK(one.at("switch_ms").get<double>() == doctest::Approx(0.7));
  CHECK(one.at("workloads").at(1) == entry_b);
  CHECK(one.at("pairs") == base.at("pairs"));  // `before` has none
  CHECK(one.at("notes").get<std::string>().find("pairs' slowdowns") == std::string::npos);

  const json both = salus::experiments::calibrated_catalog(base, before, &after);
  const json& a2 = both.at("workloads").at(0);
  CHECK(a2.at("iter_ms").get<double>() == doctest::Approx(4.6));
  CHECK(a2.at("iter_exec_mean_ms").get<double>() == doctest::Approx(4.8));
  CHECK(a2.at("first_iter_ms").get<double>() == doctest::Approx(7.6));
  CHECK(a2.at("gpu_util").get<double>() == doctest::Approx(0.7));
  CHECK(both.at("switch_ms").get<double>() == doctest::Approx(0.8));
  const json& p2 = both.at("pairs").at(0);
  CHECK(p2.at("a") == "a");
  CHECK(p2.at("slowdown_a").get<double>() == doctest::Approx(1.2));  // after's, turned to the base's order
  CHECK(p2.at("slowdown_b").get<double>() == doctest::Approx(1.5));
  CHECK(both.at("notes").get<std::string>().find("just before and just after") != std::string::npos);
  CHECK(both.at("notes").get<std::string>().find("pairs' slowdowns") != std::string::npos);

  // The catalog reader takes it as it takes salus-profile's.
  const fs::path dir = salus::test::scratch() / "fidelity_calibrated";
  fs::create_directories(dir);
  std::ofstream(dir / "c.json") << both.dump(2);
  const auto catalog = salus::traces::Catalog::load((dir / "c.json").string());
  REQUIRE(catalog.find("a") != nullptr);
  CHECK(catalog.find("a")->iter_ns == 4'600'000);
  CHECK(catalog.find("a")->first_iter_extra_ns == 3'000'000);
  CHECK(catalog.find("a")->gpu_util_ppm == 700'000);
  REQUIRE(catalog.pairs().size() == 1);
  CHECK(catalog.pairs().front().slowdown_a == doctest::Approx(1.2));
  CHECK(catalog.find("b")->iter_ns == 10'000'000);
  CHECK(catalog.switch_ns() == 800'000);

  CHECK_NOTHROW(salus::experiments::check_calibration_mode("before"));
  CHECK_THROWS_WITH_AS(salus::experiments::check_calibration_mode("after"),
                       "--calibrate: unknown mode 'after' (valid: off, before, bracket, median)", salus::core::InputError);
}

TEST_CASE("fidelity: --calibrate median takes each figure's median over the readings, so one slow reading is outvoted") {
  using salus::experiments::CalibrationCombine;
  const json base = {{"format", "salus-catalog/1"}, {"gpu", "cpu"}, {"notes", "profile."}, {"switch_ms", 0.5},
                     {"pairs", {{{"a", "a"}, {"b", "b"}, {"slowdown_a", 2.0}, {"slowdown_b", 2.0}}}},
                     {"workloads", {{{"name", "a"}, {"iter_ms", 6.0}, {"first_iter_ms", 13.0}, {"gpu_util", 1.0},
                                     {"switch_ms", 0.3}, {"source", "measured"}},
                                    {{"name", "b"}, {"iter_ms", 4.0}, {"gpu_util", 1.0}, {"source", "measured"}}}}};
  auto reading = [](double a_iter, double a_switch, double b_iter) {
    return json{{"switch_ms", a_switch},
                {"workloads", {{{"name", "a"}, {"iter_ms", a_iter}, {"switch_ms", a_switch}},
                               {{"name", "b"}, {"iter_ms", b_iter}}}}};
  };
  // Four readings, the third caught in a slow stretch of the host (a at 9.1 ms): the median is
  // the mean of the middle two, 6.2 and 6.4, where the mean would be 7.0.
  const json r1 = reading(6.2, 0.10, 4.1), r2 = reading(6.0, 0.40, 4.3), r3 = reading(9.1, 0.20, 4.2),
             r4 = reading(6.4, 0.30, 4.4);
  json r4p = r4;
  r4p["pairs"] = {{{"a", "b"}, {"b", "a"}, {"slowdown_a", 2.4}, {"slowdown_b", 1.8}}};
  const json four = salus::experiments::calibrated_catalog(base, {&r1, &r2, &r3, &r4p}, CalibrationCombine::kMedian,
                                                           "the four readings nearest the run");
  const json& a = four.at("workloads").at(0);
  CHECK(a.at("iter_ms").get<double>() == doctest::Approx(6.3));
  CHECK(a.at("first_iter_ms").get<double>() == doctest::Approx(13.3));  // the profile's 7 ms extra kept
  CHECK(a.at("switch_ms").get<double>() == doctest::Approx(0.25));
  CHECK(four.at("workloads").at(1).at("iter_ms").get<double>() == doctest::Approx(4.25));
  CHECK(four.at("switch_ms").get<double>() == doctest::Approx(0.25));
  // Only one reading measured the pair: its figures, turned to the base's order.
  CHECK(four.at("pairs").at(0).at("slowdown_a").get<double>() == doctest::Approx(1.8));
  CHECK(four.at("pairs").at(0).at("slowdown_b").get<double>() == doctest::Approx(2.4));
  CHECK(a.at("source").get<std::string>().find("the median of the four readings nearest the run") != std::string::npos);
  CHECK(four.at("notes").get<std::string>().find("the median of the four readings") != std::string::npos);
  // An odd count takes the middle reading; the mean of the same three is what bracket-style
  // combining gives.
  const json three = salus::experiments::calibrated_catalog(base, {&r1, &r3, &r4}, CalibrationCombine::kMedian, "three");
  CHECK(three.at("workloads").at(0).at("iter_ms").get<double>() == doctest::Approx(6.4));
  const json mean3 = salus::experiments::calibrated_catalog(base, {&r1, &r3, &r4}, CalibrationCombine::kMean, "three");
  CHECK(mean3.at("workloads").at(0).at("iter_ms").get<double>() == doctest::Approx(7.2333).epsilon(1e-4));
  CHECK(mean3.at("notes").get<std::string>().find("the mean of three") != std::string::npos);
  // No readings: the base, untouched but for the note.
  const json none = salus::experiments::calibrated_catalog(base, {}, CalibrationCombine::kMedian, "none");
  CHECK(none.at("workloads") == base.at("workloads"));
  CHECK(none.at("pairs") == base.at("pairs"));
}

TEST_CASE("fidelity: the burst allowance multiplies iter_ms by the readings' mean of plain over typical mean") {
  const json entry_a = {{"name", "a"}, {"persistent_mib", 1.0}, {"ephemeral_mib", 2.0}, {"iter_ms", 9.0},
                        {"first_iter_ms", 12.0}, {"gpu_util", 1.0}, {"source", "calibrated"}};
  const json entry_b = {{"name", "b"}, {"persistent_mib", 1.0}, {"ephemeral_mib", 2.0}, {"iter_ms", 5.0},
                        {"gpu_util", 1.0}, {"source", "calibrated"}};
  const json entry_c = {{"name", "c"}, {"persistent_mib", 1.0}, {"ephemeral_mib", 2.0}, {"iter_ms", 3.0},
                        {"gpu_util", 1.0}, {"source", "calibrated"}};
  const json catalog = {{"format", "salus-catalog/1"}, {"gpu", "cpu"}, {"notes", "profile."},
                        {"workloads", {entry_a, entry_b, entry_c}}};
  // a: one reading met a burst (plain mean 5 % over the typical mean), one none, one a little
  // under (blocks faster than the median block): the mean of the three ratios, not their median.
  // b: measured with a typical mean only (no plain mean): left alone. c: no reading has it.
  const json r1 = {{"workloads", {{{"name", "a"}, {"iter_ms", 10.0}, {"iter_exec_mean_ms", 10.5}},
                                  {{"name", "b"}, {"iter_ms", 5.0}}}}};
  const json r2 = {{"workloads", {{{"name", "a"}, {"iter_ms", 8.0}, {"iter_exec_mean_ms", 8.0}}}}};
  const json r3 = {{"workloads", {{{"name", "a"}, {"iter_ms", 10.0}, {"iter_exec_mean_ms", 9.9}}}}};
  const json out = salus::experiments::with_burst_allowance(catalog, {&r1, &r2, &r3});
  const double f = (1.05 + 1.0 + 0.99) / 3;
  const json& a = out.at("workloads").at(0);
  CHECK(a.at("burst_allowance").get<double>() == doctest::Approx(f));
  CHECK(a.at("iter_ms").get<double>() == doctest::Approx(9.0 * f));
  CHECK(a.at("first_iter_ms").get<double>() == doctest::Approx(12.0 * f));
  CHECK(a.at("source").get<std::string>().find("the burst allowance (the mean of 3 calibrations'") != std::string::npos);
  CHECK(out.at("workloads").at(1) == entry_b);
  CHECK(out.at("workloads").at(2) == entry_c);
  CHECK(out.at("notes").get<std::string>().find("Burst allowance") != std::string::npos);
  // One reading: its own ratio. None: the catalog's figures (the notes say the option was on).
  CHECK(salus::experiments::with_burst_allowance(catalog, {&r1}).at("workloads").at(0).at("iter_ms").get<double>() ==
        doctest::Approx(9.45));
  CHECK(salus::experiments::with_burst_allowance(catalog, {}) == catalog);
  CHECK(salus::experiments::with_burst_allowance(catalog, {&r2}).at("workloads").at(0).at("iter_ms").get<double>() ==
        doctest::Approx(9.0));  // a reading without bursts: a factor of 1
  const json no_plain_means = {{"workloads", {{{"name", "a"}, {"iter_ms", 10.0}}}}};
  CHECK(salus::experiments::with_burst_allowance(catalog, {&no_plain_means}) == catalog);  // notes untouched too
  // The catalog reader takes the factor as a figure for reading, and refuses one that is not > 0.
  const fs::path dir = salus::test::scratch() / "burst_allowance";
  fs::create_directories(dir);
  {
    std::ofstream(dir / "ok.json") << out.dump(2);
    const auto cat = salus::traces::Catalog::load((dir / "ok.json").string());
    REQUIRE(cat.find("a") != nullptr);
    CHECK(cat.find("a")->iter_ns == 9'120'000);  // 9 ms x (1.05 + 1 + 0.99) / 3
  }
  json bad = out;
  bad["workloads"][0]["burst_allowance"] = 0;
  std::ofstream(dir / "bad.json") << bad.dump(2);
  CHECK_THROWS_WITH_AS(salus::traces::Catalog::load((dir / "bad.json").string()),
                       doctest::Contains("workload 'a': burst_allowance must be a number > 0"), salus::core::InputError);
}

TEST_CASE("fidelity: the base profile's solo speed against the median of every calibration's") {
  const json base = {{"workloads", {{{"name", "a"}, {"iter_ms", 9.0}}, {{"name", "b"}, {"iter_ms", 4.0}},
                                    {{"name", "c"}, {"iter_ms", 2.0}}}}};
  // a in four readings (median 6.0, the mean of 5.8 and 6.2: the base read it 1.5x slow), b in
  // one (4.4), c in none: left out.
  const json cals = json::array({json{{"workloads", {{{"name", "a"}, {"iter_ms", 6.2}}, {{"name", "b"}, {"iter_ms", 4.4}}}}},
                                 json{{"workloads", {{{"name", "a"}, {"iter_ms", 5.8}}}}},
                                 json{{"workloads", {{{"name", "a"}, {"iter_ms", 9.5}}}}},
                                 json{{"workloads", {{{"name", "a"}, {"iter_ms", 5.0}}}}}});
  const json v = salus::experiments::base_against_calibrations(base, cals);
  CHECK(v.size() == 2);
  CHECK(v.at("a").at("base_iter_ms").get<double>() == doctest::Approx(9.0));
  CHECK(v.at("a").at("calibrations_median_iter_ms").get<double>() == doctest::Approx(6.0));
  CHECK(v.at("a").at("ratio").get<double>() == doctest::Approx(1.5));
  CHECK(v.at("b").at("ratio").get<double>() == doctest::Approx(4.0 / 4.4));
  CHECK_FALSE(v.contains("c"));
  CHECK(salus::experiments::base_against_calibrations(base, json::array()).empty());
}

TEST_CASE("fidelity: a crowd the base lists takes each lane's median over the readings that measured it again") {
  using salus::experiments::CalibrationCombine;
  const json crowd3 = {{"workloads", {"a", "b", "a"}}, {"slowdowns", {3.0, 3.2, 3.0}}};
  const json crowd5 = {{"workloads", {"a", "b", "a", "b", "a"}}, {"slowdowns", {5.0, 5.0, 5.0, 5.0, 5.0}}};
  const json base = {{"format", "salus-catalog/1"}, {"gpu", "cpu"}, {"notes", "profile."},
                     {"pairs", {{{"a", "a"}, {"b", "b"}, {"slowdown_a", 2.0}, {"slowdown_b", 2.0}}}},
                     {"crowds", {crowd3, crowd5}},
                     {"workloads", {{{"name", "a"}, {"persistent_mib", 1.0}, {"ephemeral_mib", 2.0}, {"iter_ms", 6.0},
                                     {"gpu_util", 1.0}, {"source", "measured"}},
                                    {{"name", "b"}, {"persistent_mib", 1.0}, {"ephemeral_mib", 2.0}, {"iter_ms", 4.0},
                                     {"gpu_util", 1.0}, {"source", "measured"}}}}};
  // Three readings re-measured the crowd of 3, none the crowd of 5; the fourth only crowds the
  // base lacks, which are ignored ((a, a, b) is another crowd than the base's (a, b, a)).
  auto reading = [](std::vector<double> s3) {
    return json{{"crowds", {{{"workloads", {"a", "b", "a"}}, {"slowdowns", s3}}}},
                {"workloads", {{{"name", "a"}, {"iter_ms", 6.0}}}}};
  };
  const json r1 = reading({3.3, 3.6, 3.3}), r2 = reading({3.1, 3.4, 3.9}), r3 = reading({3.5, 3.5, 3.4});
  json r4 = {{"crowds", {{{"workloads", {"a", "a", "b"}}, {"slowdowns", {9.0, 9.0, 9.0}}},
                         {{"workloads", {"b", "b", "b", "b"}}, {"slowdowns", {4.0, 4.0, 4.0, 4.0}}}}}};
  const json c = salus::experiments::calibrated_catalog(base, {&r1, &r2, &r3, &r4}, CalibrationCombine::kMedian, "four");
  REQUIRE(c.at("crowds").size() == 2);
  const json& c3 = c.at("crowds").at(0);
  CHECK(c3.at("workloads") == crowd3.at("workloads"));
  CHECK(c3.at("slowdowns").at(0).get<double>() == doctest::Approx(3.3));  // median of 3.3, 3.1, 3.5
  CHECK(c3.at("slowdowns").at(1).get<double>() == doctest::Approx(3.5));  // of 3.6, 3.4, 3.5
  CHECK(c3.at("slowdowns").at(2).get<double>() == doctest::Approx(3.4));  // of 3.3, 3.9, 3.4
  CHECK(c.at("crowds").at(1) == crowd5);
  CHECK(c.at("notes").get<std::string>().find("crowds' slowdowns") != std::string::npos);
  // The reader takes it, and the `crowds` factor follows the calibrated lanes.
  const fs::path dir = salus::test::scratch() / "fidelity_crowds";
  fs::create_directories(dir);
  std::ofstream(dir / "c.json") << c.dump(2);
  const auto catalog = salus::traces::Catalog::load((dir / "c.json").string());
  REQUIRE(catalog.crowds().size() == 2);
  CHECK(catalog.crowds().front().slowdowns == std::vector<double>{3.3, 3.5, 3.4});
  // No reading measured a crowd: the base's crowds, and the note does not claim them.
  const json plain = salus::experiments::calibrated_catalog(base, {&r4}, CalibrationCombine::kMedian, "one");
  CHECK(plain.at("crowds") == base.at("crowds"));
  CHECK(plain.at("notes").get<std::string>().find("crowds'") == std::string::npos);
}

TEST_CASE("fidelity: which calibrations predict which run") {
  using salus::experiments::calibration_readings;
  using V = std::vector<std::size_t>;
  // 13 calibrations around 12 runs (3 repeats of 4 policies): run k sits between k and k + 1.
  CHECK(calibration_readings("off", 3, 13).empty());
  CHECK(calibration_readings("before", 0, 13) == V{0});
  CHECK(calibration_readings("before", 11, 12) == V{11});  // `before` takes none after the last run
  CHECK(calibration_readings("bracket", 0, 13) == V{0, 1});
  CHECK(calibration_readings("bracket", 11, 13) == V{11, 12});
  CHECK(calibration_readings("median", 0, 13) == V{0, 1, 2});
  CHECK(calibration_readings("median", 5, 13) == V{4, 5, 6, 7});
  CHECK(calibration_readings("median", 10, 13) == V{9, 10, 11, 12});
  CHECK(calibration_readings("median", 11, 13) == V{10, 11, 12});
  CHECK_THROWS_AS(calibration_readings("mean", 0, 13), salus::core::InputError);
}

TEST_CASE("fidelity: a sitting takes the calibrations its mode reads") {
  using salus::experiments::calibration_readings;
  using salus::experiments::calibrations_taken;
  CHECK(calibrations_taken("off", 12) == 0);
  CHECK(calibrations_taken("before", 12) == 12);
  CHECK(calibrations_taken("bracket", 12) == 13);
  CHECK(calibrations_taken("median", 12) == 13);
  CHECK(calibrations_taken("median", 1) == 2);
  CHECK_THROWS_AS(calibrations_taken("nearest", 4), salus::core::InputError);
  // Every run of a sitting finds what its mode reads, and the sitting's last calibration is read:
  // the schedule takes none that no prediction uses, and none is missing.
  for (const char* mode : salus::experiments::kCalibrationModes) {
    for (std::size_t runs : {1, 4, 12}) {
      const std::size_t taken = calibrations_taken(mode, runs);
      std::size_t highest = 0;
      bool any = false;
      for (std::size_t k = 0; k < runs; ++k) {
        const auto unclipped = calibration_readings(mode, k, taken + 8);
        for (std::size_t c : unclipped) {
          if (std::string(mode) != "median") CHECK(c < taken);  // median's window is clipped at the ends
          highest = std::max(highest, c < taken ? c : highest);
          any = true;
        }
        if (std::string(mode) != "off") CHECK(!calibration_readings(mode, k, taken).empty());
      }
      CHECK(any == (taken > 0));
      if (taken > 0) CHECK(highest == taken - 1);
    }
  }
}

TEST_CASE("fidelity: each workload's own switch_ms is calibrated like its solo time") {
  const json base = {{"format", "salus-catalog/1"}, {"gpu", "cpu"}, {"notes", "profile."}, {"switch_ms", 0.5},
                     {"workloads", {{{"name", "a"}, {"iter_ms", 4.0}, {"gpu_util", 1.0}, {"switch_ms", 0.25},
                                     {"source", "measured"}},
                                    {{"name", "b"}, {"iter_ms", 6.0}, {"gpu_util", 1.0}, {"source", "measured"}}}}};
  const json before = {{"workloads", {{{"name", "a"}, {"iter_ms", 4.2}, {"switch_ms", 0.3}},
                                      {{"name", "b"}, {"iter_ms", 6.2}, {"switch_ms", 0.02}}}}};
  const json after = {{"workloads", {{{"name", "a"}, {"iter_ms", 4.4}, {"switch_ms", 0.5}},
                                     {{"name", "b"}, {"iter_ms", 6.4}}}}};
  const json one = salus::experiments::calibrated_catalog(base, before, nullptr);
  CHECK(one.at("workloads").at(0).at("switch_ms").get<double>() == doctest::Approx(0.3));
  CHECK(one.at("workloads").at(1).at("switch_ms").get<double>() == doctest::Approx(0.02));
  const json both = salus::experiments::calibrated_catalog(base, before, &after);
  CHECK(both.at("workloads").at(0).at("switch_ms").get<double>() == doctest::Approx(0.4));
  CHECK(both.at("workloads").at(1).at("switch_ms").get<double>() == doctest::Approx(0.02));  // only before had it
  CHECK(both.at("switch_ms").get<double>() == doctest::Approx(0.5));  // no calibration measured the catalog's own
  CHECK(both.at("workloads").at(0).at("source").get<std::string>().find("switch_ms calibrated") != std::string::npos);
}

TEST_CASE("salus-experiment fidelity runs a tiny trace on the CPU device and writes fidelity.json") {
  const fs::path dir = salus::test::scratch() / "fidelity";
  fs::create_directories(dir);
  const fs::path trace = dir / "tiny.csv";
  std::ofstream(trace) << "job_id,workload,arrival_s,iterations\na,lenet_32,0,12\nb,mlp_64,0.01,12\nc,lenet_32,0.02,6\n";
  const auto r = salus::test::run_program(SALUS_SOURCE_DIR, SALUS_EXPERIMENT_BIN,
                                          "fidelity --executor real --device cpu --repeat 1 --plots off --gpu-mem 256MiB "
                                          "--trace '" + trace.string() + "' --out '" + dir.string() + "'");
  INFO("stdout: ", r.out, "\nstderr: ", r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("policy    done  makespan real/sim") != std::string::npos);
  const json j = json::parse(salus::test::slurp(dir / "fidelity.json"));
  CHECK(j.at("experiment") == "fidelity");
  CHECK(j.at("executor") == "real");
  CHECK(j.at("device") == "cpu");
  CHECK(j.at("repeat") == 1);
  // salus-profile measured the pair and the crowds and names the model that fits the CPU device
  // (crowds: PACK runs up to three lanes here, and c(3) applies); the program
  // ran on one CPU.
  CHECK(j.at("interference") == "crowds");
  CHECK(j.at("cpus") == std::to_string(salus::run::allowed_cpus().front()));
  CHECK(fs::exists(dir / "fidelity_catalog.json"));
  for (const char* p : {"fifo", "srtf", "pack", "fair"}) {
    CAPTURE(p);
    const json& row = j.at("policies").at(p);
    CHECK(row.at("jobs") == 3);
    CHECK(row.at("done_both") == 3);
    CHECK(row.at("makespan_error").get<double>() >= 0);
    CHECK(j.at("per_job").at(p).size() == 3);
    // The figure's dots: every repeat's jobs (one repeat here), repeat 1 the same as per_job.
    REQUIRE(j.at("per_job_repeats").at(p).size() == 1);
    CHECK(j.at("per_job_repeats").at(p).at(0) == j.at("per_job").at(p));
  }
  CHECK(j.at("repeats").size() == 1);
  CHECK(j.at("policies").at("fifo").at("repeat_spread").is_null());  // one repeat
  // Calibrated by default (median): a salus-profile run before the first real run and after
  // each, each run predicted with its own catalog; the base catalog's errors beside them.
  CHECK(j.at("calibrate") == "median");
  CHECK(j.at("burst_allowance") == true);
  CHECK(r.out.find("calibration median with the burst allowance,") != std::string::npos);
  CHECK(j.at("calibrations").size() == 5);
  CHECK(j.at("calibrations").at(0).contains("lenet_32_iter_ms"));
  for (const char* p : {"fifo", "srtf", "pack", "fair"}) {
    CAPTURE(p);
    CHECK(j.at("uncalibrated").at(p).at("done_both") == 3);
    const auto cat = salus::traces::Catalog::load((dir / ("fidelity_catalog_1_" + std::string(p) + ".json")).string());
    CHECK(cat.find("lenet_32") != nullptr);
  }
  CHECK(r.out.find("the same runs predicted with the base catalog alone") != std::string::npos);
  CHECK(r.out.find("the base catalog's iter_ms against the median of the calibrations': ") != std::string::npos);
  // The base profile's speed against the five calibrations', by hand from the files.
  {
    const json base = json::parse(salus::test::slurp(dir / "fidelity_catalog.json"));
    for (const json& w : base.at("workloads")) {
      const std::string name = w.at("name").get<std::string>();
      CAPTURE(name);
      std::vector<double> seen;
      for (int c = 0; c < 5; ++c) {
        const json cal = json::parse(salus::test::slurp(dir / ("fidelity_calibration_" + std::to_string(c) + ".json")));
        for (const json& m : cal.at("workloads")) {
          if (m.at("name") == name) seen.push_back(m.at("iter_ms").get<double>());
        }
      }
      REQUIRE(seen.size() == 5);
      std::sort(seen.begin(), seen.end());
      const json& e = j.at("base_against_calibrations").at(name);
      CHECK(e.at("calibrations_median_iter_ms").get<double>() == doctest::Approx(seen[2]));
      CHECK(e.at("ratio").get<double>() == doctest::Approx(w.at("iter_ms").get<double>() / seen[2]));
    }
  }
  CHECK(j.at("predict_from").is_null());

  // The same sitting predicted again under another mode, running nothing on the device: the real
  // runs are the sitting's, each run's catalog now the mean of the two calibrations around it.
  const fs::path again = salus::test::scratch() / "fidelity_again";
  fs::remove_all(again);
  const auto r2 = salus::test::run_program(SALUS_SOURCE_DIR, SALUS_EXPERIMENT_BIN,
                                           "fidelity --executor real --plots off --calibrate bracket --predict-from '" +
                                               dir.string() + "' --out '" + again.string() + "'");
  INFO("stdout: ", r2.out, "\nstderr: ", r2.err);
  REQUIRE(r2.code == 0);
  CHECK(r2.out.find("run: salus-run") == std::string::npos);
  CHECK(r2.out.find("run: salus-profile") == std::string::npos);
  const json k = json::parse(salus::test::slurp(again / "fidelity.json"));
  CHECK(k.at("predict_from") == dir.string());
  CHECK(k.at("calibrate") == "bracket");
  CHECK(k.at("repeat") == 1);
  CHECK(k.at("calibrations") == j.at("calibrations"));
  for (const char* p : {"fifo", "srtf", "pack", "fair"}) {
    CAPTURE(p);
    CHECK(k.at("policies").at(p).at("makespan_real_s") == j.at("policies").at(p).at("makespan_real_s"));
    CHECK(k.at("uncalibrated").at(p) == j.at("uncalibrated").at(p));  // the same base catalog, the same runs
    const json cat = json::parse(salus::test::slurp(again / ("fidelity_catalog_1_" + std::string(p) + ".json")));
    CHECK(cat.at("notes").get<std::string>().find("just before and just after") != std::string::npos);
  }
  // Without the burst allowance: each workload's iter_ms in a run's catalog is the one above
  // divided by the mean, over the two calibrations around the run, of plain mean over typical
  // mean, read by hand from their files.
  {
    const fs::path plain = salus::test::scratch() / "fidelity_again_no_bursts";
    fs::remove_all(plain);
    const auto r3 = salus::test::run_program(SALUS_SOURCE_DIR, SALUS_EXPERIMENT_BIN,
                                             "fidelity --executor real --plots off --calibrate bracket "
                                             "--burst-allowance off --predict-from '" +
                                                 dir.string() + "' --out '" + plain.string() + "'");
    INFO("stdout: ", r3.out, "\nstderr: ", r3.err);
    REQUIRE(r3.code == 0);
    CHECK(json::parse(salus::test::slurp(plain / "fidelity.json")).at("burst_allowance") == false);
    const json on = json::parse(salus::test::slurp(again / "fidelity_catalog_1_fifo.json"));
    const json off = json::parse(salus::test::slurp(plain / "fidelity_catalog_1_fifo.json"));
    for (std::size_t w = 0; w < on.at("workloads").size(); ++w) {
      const json& a = on.at("workloads").at(w);
      const std::string name = a.at("name").get<std::string>();
      CAPTURE(name);
      double sum = 0;
      for (int c = 0; c < 2; ++c) {  // FIFO ran first: between calibrations 0 and 1
        const json cal = json::parse(salus::test::slurp(dir / ("fidelity_calibration_" + std::to_string(c) + ".json")));
        for (const json& m : cal.at("workloads")) {
          if (m.at("name") == name) sum += m.at("iter_exec_mean_ms").get<double>() / m.at("iter_ms").get<double>();
        }
      }
      CHECK(a.at("burst_allowance").get<double>() == doctest::Approx(sum / 2));
      CHECK(a.at("iter_ms").get<double>() ==
            doctest::Approx(off.at("workloads").at(w).at("iter_ms").get<double>() * sum / 2));
      CHECK_FALSE(off.at("workloads").at(w).contains("burst_allowance"));
    }
  }
  // Into the sitting's own directory, or from one that is not a sitting: refused.
  auto refused = [&](const std::string& args) {
    return salus::test::run_program(SALUS_SOURCE_DIR, SALUS_EXPERIMENT_BIN, "fidelity --executor real --plots off " + args);
  };
  auto bad = refused("--predict-from '" + dir.string() + "' --out '" + dir.string() + "'");
  CHECK(bad.code == 2);
  CHECK(bad.err.find("--out must be another directory than the sitting's") != std::string::npos);
  bad = refused("--predict-from '" + again.string() + "/nothing' --out '" + again.string() + "2'");
  CHECK(bad.code == 2);
  CHECK(bad.err.find("holds no fidelity_real_1_fifo.json") != std::string::npos);
  bad = refused("--predict-from '" + dir.string() + "' --repeat 2 --out '" + again.string() + "2'");
  CHECK(bad.code == 2);
  CHECK(bad.err ==
        "salus-experiment: --predict-from takes the sitting's runs, trace, time scale, pool, catalog and device: drop "
        "--repeat (--trace only says where the sitting's trace is on this machine)\n");
  fs::remove(dir / "fidelity_calibration_4.json");
  bad = refused("--predict-from '" + dir.string() + "' --out '" + again.string() + "2'");
  CHECK(bad.code == 2);
  CHECK(bad.err.find("holds 4 calibrations (fidelity_calibration_<n>.json) for 4 runs; --calibrate median needs 5") !=
        std::string::npos);
}

TEST_CASE("salus-experiment fidelity --time-scale shortens the real runs and the simulated ones alike, and a copied sitting replays") {
  // Before, fidelity ignored --time-scale: the GPU bundle's fidexp phase asked for half the trace
  // and would have run all of it.
  const fs::path dir = salus::test::scratch() / "fidelity_scaled";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path trace = dir / "tiny.csv";
  std::ofstream(trace) << "job_id,workload,arrival_s,iterations\na,lenet_32,0,12\nb,mlp_64,0.2,8\n";
  const auto r = salus::test::run_program(
      SALUS_SOURCE_DIR, SALUS_EXPERIMENT_BIN,
      "fidelity --executor real --device cpu --repeat 1 --plots off --gpu-mem 256MiB --calibrate off --time-scale 4 "
      "--profiles '" + std::string(SALUS_SOURCE_DIR) + "/traces/profiles/catalog.json' --trace '" + trace.string() +
          "' --out '" + dir.string() + "'");
  INFO("stdout: ", r.out, "\nstderr: ", r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("(--time-scale 4)") != std::string::npos);
  const json j = json::parse(salus::test::slurp(dir / "fidelity.json"));
  CHECK(j.at("time_scale") == 4.0);
  for (const char* p : {"fifo", "srtf", "pack", "fair"}) {
    CAPTURE(p);
    const json real = json::parse(salus::test::slurp(dir / ("fidelity_real_1_" + std::string(p) + ".json")));
    CHECK(real.at("time_scale") == 4.0);
    std::map<std::string, std::pair<std::int64_t, double>> jobs;  // id -> iterations, arrival
    for (const json& job : real.at("results").at(0).at("jobs")) {
      jobs[job.at("id")] = {job.at("iterations").get<std::int64_t>(), job.at("arrival_s").get<double>()};
    }
    CHECK(jobs.at("a").first == 3);  // 12 / 4
    CHECK(jobs.at("b").first == 2);  // 8 / 4
    CHECK(jobs.at("b").second == doctest::Approx(0.05));
    CHECK(j.at("policies").at(p).at("done_both") == 2);  // the simulator ran the same two short jobs
  }
  const json sim = json::parse(salus::test::slurp(dir / "fidelity_sim.json"));
  for (const json& result : sim.at("results")) {
    for (const json& job : result.at("jobs")) CHECK(job.at("iterations").get<std::int64_t>() == (job.at("id") == "a" ? 3 : 2));
  }
  // Predicted again, the sitting's own time scale is used; another one is refused.
  const fs::path again = salus::test::scratch() / "fidelity_scaled_again";
  fs::remove_all(again);
  auto replay = [&](const std::string& extra, const std::string& out) {
    return salus::test::run_program(SALUS_SOURCE_DIR, SALUS_EXPERIMENT_BIN,
                                    "fidelity --executor real --plots off --calibrate off --predict-from '" + dir.string() +
                                        "' " + extra + " --out '" + out + "'");
  };
  const auto r2 = replay("", again.string());
  INFO("stdout: ", r2.out, "\nstderr: ", r2.err);
  REQUIRE(r2.code == 0);
  const json k = json::parse(salus::test::slurp(again / "fidelity.json"));
  CHECK(k.at("time_scale") == 4.0);
  CHECK(k.at("policies") == j.at("policies"));  // the same runs, the same simulator: the same figures
  // A sitting copied to another machine: its trace's recorded path is gone. Without --trace that
  // is refused; --trace finds it, and must hold the runs' jobs.
  const fs::path moved = salus::test::scratch() / "fidelity_scaled_trace.csv";
  fs::rename(trace, moved);
  auto gone = replay("", again.string() + "3");
  CHECK(gone.code == 2);
  CHECK(gone.err == "salus-experiment: --predict-from: the sitting's trace " + trace.string() +
                        " is not on this machine; give its copy with --trace\n");
  const auto found = replay("--trace '" + moved.string() + "'", again.string() + "4");
  INFO("stdout: ", found.out, "\nstderr: ", found.err);
  REQUIRE(found.code == 0);
  CHECK(json::parse(salus::test::slurp(again.string() + "4/fidelity.json")).at("policies") == j.at("policies"));
  // The same sitting predicted under another interference model: the predictions (made in process,
  // written as salus-sim's summaries) use it, and the report and fidelity.json name it.
  const auto ideal = replay("--trace '" + moved.string() + "' --interference none", again.string() + "6");
  INFO("stdout: ", ideal.out, "\nstderr: ", ideal.err);
  REQUIRE(ideal.code == 0);
  CHECK(ideal.out.find(", calibration off, interference none, ") != std::string::npos);
  CHECK(json::parse(salus::test::slurp(again.string() + "6/fidelity.json")).at("interference") == "none");
  CHECK(json::parse(salus::test::slurp(again.string() + "6/fidelity_sim.json")).at("interference") == "none");
  std::ofstream(moved) << "job_id,workload,arrival_s,iterations\na,lenet_32,0,12\nb,mlp_64,0.2,12\n";
  const auto other = replay("--trace '" + moved.string() + "'", again.string() + "5");
  CHECK(other.code == 2);
  CHECK(other.err.find("--trace " + moved.string() + ": job b is mlp_64, 3 iterations at 0.05 s, the runs' mlp_64, 2") !=
        std::string::npos);
  CHECK(other.err.find("so it is not the trace the sitting ran (" + trace.string() + ")") != std::string::npos);
  const auto bad = replay("--time-scale 2", again.string() + "2");
  CHECK(bad.code == 2);
  CHECK(bad.err ==
        "salus-experiment: --predict-from takes the sitting's runs, trace, time scale, pool, catalog and device: drop "
        "--time-scale (--trace only says where the sitting's trace is on this machine)\n");
}

TEST_CASE("salus-experiment: the executor and fidelity options refuse what they cannot do, exit 2") {
  auto run = [](const std::string& args) {
    return salus::test::run_program(SALUS_SOURCE_DIR, SALUS_EXPERIMENT_BIN, args + " --plots off --out /tmp/salus-x");
  };
  auto r = run("fidelity --executor sim");
  CHECK(r.code == 2);
  CHECK(r.err == "salus-experiment: fidelity compares the simulator with the real executor: give --executor real\n");
  r = run("srtf_snapshot --executor real");
  CHECK(r.code == 2);
  CHECK(r.err == "salus-experiment: srtf_snapshot has no real variant: its figures read every iteration's exact "
                 "profiled time or use workloads the real backend does not implement (with --executor real: "
                 "long_trace, fair_three, hyperparam, fidelity)\n");
  r = run("long_trace --executor real --device tpu");
  CHECK(r.code == 2);
  CHECK(r.err == "salus-experiment: --device: unknown device 'tpu' (valid: cpu, cuda); did you mean 'cpu'?\n");
  // The faulty CPU device is salus-run's: its faults are set by --inject-faults, which this
  // program does not take (its --help does not offer it).
  r = run("long_trace --executor real --device cpu-faults");
  CHECK(r.code == 2);
  CHECK(r.err == "salus-experiment: --device cpu-faults is salus-run's (its faults are set by --inject-faults, which "
                 "salus-experiment does not take): use cpu\n");
  r = run("--help");
  CHECK(r.code == 0);
  CHECK(r.out.find("  cpu-faults ") == std::string::npos);
  CHECK(r.out.find("  cpu         the host's cores") != std::string::npos);
  r = run("long_trace --device cuda");
  CHECK(r.code == 2);
  CHECK(r.err == "salus-experiment: --device is for --executor real\n");
  r = run("long_trace --time-scale 0.5");
  CHECK(r.code == 2);
  CHECK(r.err == "salus-experiment: --time-scale: must be a number >= 1\n");
  r = run("fidelity --executor real --repeat 0");
  CHECK(r.code == 2);
  CHECK(r.err == "salus-experiment: --repeat: must be from 1 to 20\n");
  r = run("fidelity --executor gpu");
  CHECK(r.code == 2);
  CHECK(r.err == "salus-experiment: --executor: unknown executor 'gpu' (valid: sim, real)\n");
  r = run("long_trace --trace x.csv");
  CHECK(r.code == 2);
  CHECK(r.err == "salus-experiment: --trace is for fidelity and gpus_needed only\n");
  r = run("fidelity --executor real --calibrate sometimes");
  CHECK(r.code == 2);
  CHECK(r.err == "salus-experiment: --calibrate: unknown mode 'sometimes' (valid: off, before, bracket, median)\n");
  r = run("long_trace --calibrate off");
  CHECK(r.code == 2);
  CHECK(r.err == "salus-experiment: --calibrate is for fidelity only\n");
  r = run("gpus_needed --repeat 2");
  CHECK(r.code == 2);
  CHECK(r.err == "salus-experiment: --repeat is for fidelity only\n");
  r = run("long_trace --bound-jct-min 5");
  CHECK(r.code == 2);
  CHECK(r.err == "salus-experiment: --bound-jct-min and --bound-queue-min are for gpus_needed only\n");
  r = run("gpus_needed --bound-jct-min 5 --bound-queue-min 1");
  CHECK(r.code == 2);
  CHECK(r.err == "salus-experiment: --bound-jct-min and --bound-queue-min: give one of them\n");
  r = run("fidelity --executor real --burst-allowance sometimes");
  CHECK(r.code == 2);
  CHECK(r.err == "salus-experiment: --burst-allowance: unknown value 'sometimes' (valid: on, off)\n");
  r = run("fidelity --executor real --calibrate off --burst-allowance on");
  CHECK(r.code == 2);
  CHECK(r.err == "salus-experiment: --burst-allowance: needs a calibration to take the bursts from (--calibrate "
                 "before, bracket or median)\n");
  r = run("long_trace --burst-allowance off");
  CHECK(r.code == 2);
  CHECK(r.err == "salus-experiment: --burst-allowance is for fidelity only\n");
  r = run("long_trace --interference pairs");
  CHECK(r.code == 2);
  CHECK(r.err == "salus-experiment: --interference is for fidelity and gpus_needed only\n");
  r = run("fidelity --executor real --interference crowd");
  CHECK(r.code == 2);
  CHECK(r.err == "salus-experiment: --interference: unknown interference model 'crowd' (valid: none, profiled, pairs, "
                 "crowds, shares, capacity, or auto); did you mean 'crowds'?\n");
}
