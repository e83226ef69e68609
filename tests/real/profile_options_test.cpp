// salus-profile's and salus-run's steps moved out of their mains: the option parsers, the catalog
// entry and model choice of real/profiler.h, the summary merging of real/run_report.h, and the
// one --warmup entry of the option table read per program.
#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

#include "core/errors.h"
#include "real/options.h"
#include "real/profiler.h"
#include "real/run_report.h"
#include "run/options.h"

using namespace salus;

TEST_CASE("parse_lane_counts: increasing counts in range, off, and each mistake named") {
  CHECK(gpu::parse_crowd_sizes("3,5,7") == std::vector<int>{3, 5, 7});
  CHECK(gpu::parse_crowd_sizes(" 3, 9 ") == std::vector<int>{3, 9});
  CHECK(gpu::parse_crowd_sizes("off").empty());
  CHECK_THROWS_WITH_AS(gpu::parse_crowd_sizes("2,5"), doctest::Contains("'2' is not a number of lanes from 3 to 64"),
                       core::InputError);
  CHECK_THROWS_WITH_AS(gpu::parse_crowd_sizes("5,3"), doctest::Contains("once each, increasing"), core::InputError);
  CHECK_THROWS_WITH_AS(gpu::parse_crowd_sizes("3,,5"), doctest::Contains("--crowds: an empty item in '3,,5'"),
                       core::InputError);
  CHECK_THROWS_WITH_AS(gpu::parse_crowd_sizes("3,5,"), doctest::Contains("--crowds: an empty item"), core::InputError);
  CHECK_THROWS_WITH_AS(gpu::parse_crowd_sizes(""), doctest::Contains("--crowds: give a list such as"), core::InputError);
  CHECK_THROWS_WITH_AS(gpu::parse_crowd_sizes("65"), doctest::Contains("from 3 to 64"), core::InputError);
  CHECK(gpu::parse_sweep_sizes("auto", "cpu").empty());
  CHECK(gpu::parse_sweep_sizes("auto", "cuda") == std::vector<int>{3, 5, 8, 12});
  CHECK(gpu::parse_sweep_sizes("2,4", "cpu") == std::vector<int>{2, 4});
  CHECK_THROWS_WITH_AS(gpu::parse_sweep_sizes("1", "cuda"), doctest::Contains("--sweeps: '1'"), core::InputError);
}

TEST_CASE("parse_crowd_rounds and parse_profile_workloads") {
  CHECK(gpu::parse_crowd_rounds("auto", "cpu") == gpu::kCrowdRounds);
  CHECK(gpu::parse_crowd_rounds("auto", "cuda") == 1);
  CHECK(gpu::parse_crowd_rounds("7", "cpu") == 7);
  CHECK_THROWS_AS(gpu::parse_crowd_rounds("0", "cpu"), core::InputError);
  CHECK_THROWS_AS(gpu::parse_crowd_rounds("3x", "cpu"), core::InputError);
  CHECK(gpu::parse_profile_workloads("lenet_32, mlp_64") == std::vector<std::string>{"lenet_32", "mlp_64"});
  CHECK_THROWS_WITH_AS(gpu::parse_profile_workloads("lenet_32,"), doctest::Contains("--workloads: an empty item"),
                       core::InputError);
  CHECK_THROWS_WITH_AS(gpu::parse_profile_workloads("nosuch"), doctest::Contains("no real model for workload 'nosuch'"),
                       core::InputError);
  CHECK_THROWS_WITH_AS(gpu::parse_profile_workloads(""), doctest::Contains("--workloads: empty list"), core::InputError);
}

TEST_CASE("fitting_interference: none without pairs, pairs/crowds on the cpu, shares/capacity on a GPU") {
  CHECK(!gpu::fitting_interference("cpu", false, true, true));
  CHECK(*gpu::fitting_interference("cpu", true, false, false) == "pairs");
  CHECK(*gpu::fitting_interference("cpu", true, true, false) == "crowds");
  CHECK(*gpu::fitting_interference("cuda", true, true, false) == "shares");
  CHECK(*gpu::fitting_interference("cuda", true, false, true) == "capacity");
}

TEST_CASE("workload_entry: exact bytes, rounded figures, the switch only when measured") {
  gpu::WorkloadMeasurement m;
  m.name = "lenet_32";
  m.persistent = 849'000;
  m.ephemeral_peak = 2'470'000;
  m.iter_ns = 9'338'123;
  m.first_iter_ns = 9'279'951;
  m.gpu_util = 0.83949;
  nlohmann::json w = gpu::workload_entry(m, std::nullopt, "measured here");
  CHECK(w["persistent_bytes"] == 849'000);
  CHECK(w["persistent_mib"].get<double>() == doctest::Approx(0.81));
  CHECK(w["iter_ms"].get<double>() == doctest::Approx(9.3381));
  CHECK(w["gpu_util"].get<double>() == doctest::Approx(0.839));
  CHECK(!w.contains("switch_ms"));
  CHECK(w["source"] == "measured here");
  w = gpu::workload_entry(m, 644'849, "x");
  CHECK(w["switch_ms"].get<double>() == doctest::Approx(0.6448));
}

TEST_CASE("merge_measurements and run_exit_status") {
  run::PolicyRun r;
  r.policy = "pack";
  r.measured = {{"workers", 2}, {"workers_made_in_run", 0}, {"lookahead", true}, {"switch_latency", {{"count", 0}}},
                {"stop_latency", nullptr}, {"outside_pool_bytes", 5}, {"outside_pool_growth_bytes", 0},
                {"fatal_error", ""}, {"jobs", {{{"id", "j1"}, {"mean_iteration_ms", 3.5}}}}};
  nlohmann::json results = nlohmann::json::array({{{"policy", "pack"}, {"jobs", {{{"id", "j1"}, {"jct_s", 1.0}}}}}});
  real::merge_measurements(results, {r}, 1);
  CHECK(results[0]["workers"] == 2);
  CHECK(results[0]["outside_pool_bytes"] == 5);
  CHECK(results[0]["jobs"][0]["mean_iteration_ms"] == 3.5);
  CHECK(results[0]["jobs"][0]["id"] == "j1");
  CHECK(results[0]["jobs"][0]["jct_s"] == 1.0);
  CHECK(!results[0].contains("injected_faults"));  // not measured: left out, not read past the document
  CHECK(real::run_exit_status({r}, false) == 0);
  CHECK(real::run_exit_status({r}, true) == 130);
  r.metrics.failed = 1;
  CHECK(real::run_exit_status({r}, false) == 1);
}

namespace {

// The option table's parse of `args` for `program`, with the real options declared.
std::string warmup_of(run::Program program, std::vector<std::string> args) {
  run::OptionValues v;
  real::RealOptionValues r;
  run::OptionTable table;
  run::add_run_options(table, v);
  real::add_real_options(table, r);
  args.insert(args.begin(), "prog");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  boost::program_options::variables_map vm = table.parse(program, static_cast<int>(argv.size()), argv.data());
  boost::program_options::notify(vm);
  return r.warmup;
}

}  // namespace

TEST_CASE("--warmup: one entry, on/off in salus-run and an iteration count in salus-profile") {
  CHECK(warmup_of(run::kRun, {"--trace", "t.csv"}) == "on");
  CHECK(warmup_of(run::kProfile, {"--out", "c.json", "--workloads", "lenet_32"}) == "2");
  CHECK(warmup_of(run::kProfile, {"--out", "c.json", "--workloads", "lenet_32", "--warmup", "5"}) == "5");
  CHECK(real::parse_run_warmup("off") == false);
  CHECK(real::parse_profile_warmup("5") == 5);
  CHECK_THROWS_WITH_AS(real::parse_run_warmup("2"), doctest::Contains("--warmup: must be on or off"), core::InputError);
  CHECK_THROWS_WITH_AS(real::parse_profile_warmup("on"), doctest::Contains("--warmup: must be a number of iterations"),
                       core::InputError);
  CHECK_THROWS_WITH_AS(real::parse_profile_warmup("-1"), doctest::Contains("must not be negative"), core::InputError);
  // Required per program: salus-profile needs --workloads, salus-trace generate does not.
  CHECK_THROWS_AS(warmup_of(run::kProfile, {"--out", "c.json"}), boost::program_options::required_option);
  // The help of each program names its own meaning.
  run::OptionValues v;
  real::RealOptionValues r;
  run::OptionTable table;
  run::add_run_options(table, v);
  real::add_real_options(table, r);
  std::ostringstream run_help, profile_help;
  run_help << table.description(run::kRun, "");
  profile_help << table.description(run::kProfile, "");
  CHECK(run_help.str().find("--warmup on|off (=on)") != std::string::npos);
  CHECK(profile_help.str().find("--warmup N (=2)") != std::string::npos);
  CHECK(profile_help.str().find("--memory") == std::string::npos);
}
