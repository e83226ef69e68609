// The paper's experiments on the shipped inputs: each JSON's schema, the relations the paper
// reports (which a wrong scheduler or catalog would break), determinism and bad inputs.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "experiments/paper_experiments.h"
#include "support/programs.h"
#include "support/temp_files.h"
#include "traces/catalog.h"
#include "traces/generator.h"
#include "traces/trace.h"
#include "run/sim_runner.h"

using nlohmann::json;
using salus::core::InputError;
namespace ex = salus::experiments;

namespace {

ex::ExperimentContext shipped() {
  ex::ExperimentContext ctx;
  ctx.data_dir = SALUS_DATA_DIR;
  ctx.profiles = salus::traces::Catalog::default_path();
  return ctx;
}

double num(const json& j, const char* key) {
  REQUIRE_MESSAGE(j.contains(key), key);
  REQUIRE_MESSAGE(j[key].is_number(), key);
  return j[key].get<double>();
}

}  // namespace

TEST_CASE("experiments: the registry names six experiments, each runnable by name") {
  std::string names;
  for (const auto& e : ex::experiment_registry().entries()) {
    names += std::string(e.name) + " ";
    CHECK(e.factory.version >= 1);
    CHECK_FALSE(e.description.empty());
    CHECK(static_cast<bool>(e.factory.run));
    CHECK((!e.factory.inputs.empty() || !e.factory.real_variant.empty()));
  }
  CHECK(names == "long_trace srtf_snapshot fair_three hyperparam inference gpus_needed fidelity ");
  CHECK(ex::real_experiment_names_joined() == "long_trace, fair_three, hyperparam, fidelity");
  CHECK_THROWS_WITH_AS(ex::run_experiment("nope", shipped()),
                       "unknown experiment 'nope' (valid: long_trace, srtf_snapshot, fair_three, hyperparam, "
                       "inference, gpus_needed, fidelity)",
                       InputError);
  // fidelity needs the real executor; the simulator-only experiments refuse it by name.
  CHECK_THROWS_WITH_AS(ex::run_experiment("fidelity", shipped()),
                       "fidelity compares the simulator with the real executor: give --executor real", InputError);
  ex::ExperimentContext real = shipped();
  real.real = true;
  for (const char* name : {"srtf_snapshot", "inference"}) {
    CHECK_THROWS_WITH_AS(ex::run_experiment(name, real),
                         doctest::Contains((std::string(name) + " has no real variant").c_str()), InputError);
  }
}

TEST_CASE("experiments: long_trace gives Table 1 for four policies with the paper's ordering") {
  const json j = ex::run_experiment("long_trace", shipped());
  CHECK(j["experiment"] == "long_trace");
  CHECK(j["version"] == 2);
  const json& p = j["policies"];
  for (const char* name : {"fifo", "srtf", "pack", "fair"}) {
    INFO(name);
    REQUIRE(p.contains(name));
    for (const char* key : {"makespan_s", "avg_queuing_s", "avg_jct_s", "p95_jct_s"}) {
      CHECK(num(p[name], key) > 0);
      CHECK(num(j["paper"][name], key) > 0);
    }
    CHECK(p[name]["done"] == 100);
    CHECK(num(p[name], "avg_queuing_s") < num(p[name], "avg_jct_s"));
    CHECK(num(p[name], "avg_jct_s") <= num(p[name], "p95_jct_s") * 1.0001);
    // The CDF: one point per finished job, JCTs sorted, fractions up to 1.
    const json& cdf = j["jct_cdf"][name];
    REQUIRE(cdf.size() == 100);
    for (std::size_t i = 1; i < cdf.size(); ++i) CHECK(cdf[i][0].get<double>() >= cdf[i - 1][0].get<double>());
    CHECK(cdf.back()[1].get<double>() == doctest::Approx(1.0));
  }
  CHECK(p["fifo"]["lane_mode"] == "exclusive");
  CHECK(p["pack"]["lane_mode"] == "auto");
  // The paper's findings: SRTF's average JCT well below FIFO's, FAIR's in between, PACK the
  // shortest makespan.
  CHECK(num(p["fifo"], "avg_jct_s") > 2.0 * num(p["srtf"], "avg_jct_s"));
  CHECK(num(p["fair"], "avg_jct_s") < num(p["fifo"], "avg_jct_s"));
  CHECK(num(p["fair"], "avg_jct_s") > num(p["srtf"], "avg_jct_s"));
  for (const char* other : {"fifo", "srtf", "fair"}) CHECK(num(p["pack"], "makespan_s") < num(p[other], "makespan_s"));
  CHECK(num(j, "avg_jct_fifo_over_srtf") == doctest::Approx(num(p["fifo"], "avg_jct_s") / num(p["srtf"], "avg_jct_s")));
}

TEST_CASE("experiments: the same inputs give byte-identical JSON") {
  for (const char* name : {"long_trace", "srtf_snapshot", "inference"}) {
    INFO(name);
    CHECK(ex::run_experiment(name, shipped()).dump() == ex::run_experiment(name, shipped()).dump());
  }
}

TEST_CASE("experiments: srtf_snapshot shows a preempted job and one lane's runs never overlap") {
  const json j = ex::run_experiment("srtf_snapshot", shipped());
  const json& g = j["gantt"];
  const double t0 = g["window_s"][0].get<double>(), t1 = g["window_s"][1].get<double>();
  REQUIRE(t0 < t1);
  REQUIRE(g["jobs"].size() >= 2);
  CHECK(g["jobs"][0]["label"] == "#0");
  std::vector<std::pair<double, double>> running;
  int background_runs = 0;
  for (const json& b : g["bars"]) {
    const auto row = b["job"].get<std::size_t>();
    REQUIRE(row < g["jobs"].size());
    const double s = b["start_s"].get<double>(), e = b["end_s"].get<double>();
    CHECK(s < e);
    CHECK(s >= t0);
    CHECK(e <= t1);
    CHECK(s >= g["jobs"][row]["arrival_s"].get<double>());
    if (b["state"] == "running") {
      running.emplace_back(s, e);
      if (row == 0) ++background_runs;
    } else {
      CHECK(b["state"] == "waiting");
    }
  }
  CHECK(background_runs >= 1);
  std::sort(running.begin(), running.end());
  for (std::size_t i = 1; i < running.size(); ++i) CHECK(running[i].first >= running[i - 1].second);
  // Fig. 8b: iterations of the preempted job, then of the preempting one, after the switch.
  const json& m = j["memory"];
  CHECK(m["from_job"] == "#0");
  CHECK(m["from_job"] != m["to_job"]);
  const double sw = num(m, "switch_s");
  bool before = false, after = false;
  for (const json& it : m["iterations"]) {
    if (it["job"] == m["from_job"]) before |= it["end_s"].get<double>() <= sw;
    if (it["job"] == m["to_job"]) after |= it["start_s"].get<double>() >= sw;
  }
  CHECK(before);
  CHECK(after);
  const json& steps = m["steps"];
  REQUIRE(steps["t_s"].size() == steps["persistent_mib"].size());
  REQUIRE(steps["t_s"].size() == steps["ephemeral_mib"].size());
  for (std::size_t i = 0; i < steps["t_s"].size(); ++i) {
    CHECK(steps["persistent_mib"][i].get<double>() + steps["ephemeral_mib"][i].get<double>() <= num(m, "capacity_mib"));
    if (i > 0) CHECK(steps["t_s"][i].get<double>() > steps["t_s"][i - 1].get<double>());
  }
}

TEST_CASE("experiments: fair_three shares the GPU in thirds without losing throughput") {
  const json j = ex::run_experiment("fair_three", shipped());
  REQUIRE(j["jobs"].size() == 3);
  CHECK(j["jobs"][0]["arrival_s"] == 0.0);
  CHECK(j["jobs"][1]["arrival_s"] == 15.0);
  CHECK(j["jobs"][2]["arrival_s"] == 30.0);
  const std::size_t bins = j["t_s"].size();
  CHECK(j["total"].size() == bins);
  for (const auto& [name, series] : j["throughput"].items()) CHECK(series.size() == bins);
  const json& w = j["while_all_three"];
  for (const json& s : w["shares"]) CHECK(s.get<double>() == doctest::Approx(1.0 / 3).epsilon(0.02));
  CHECK(num(w, "total") == doctest::Approx(num(w, "alone_total")).epsilon(0.02));
}

TEST_CASE("experiments: hyperparam packs superres_128 far better than compute-bound resnet50_50") {
  const json j = ex::run_experiment("hyperparam", shipped());
  for (const char* w : {"resnet50_50", "superres_128"}) {
    INFO(w);
    CHECK(j[w]["jobs"] == 300);
    CHECK(j[w]["done"]["fifo"] == 300);
    CHECK(j[w]["done"]["pack"] == 300);
    CHECK(num(j[w], "speedup") == doctest::Approx(num(j[w], "fifo_makespan_s") / num(j[w], "pack_makespan_s")));
    CHECK(num(j[w], "pack_makespan_s") <= num(j[w], "fifo_makespan_s"));
  }
  CHECK(num(j["resnet50_50"], "speedup") < 1.2);
  CHECK(num(j["superres_128"], "speedup") > 2.0);
}

TEST_CASE("experiments: inference hosts 42 models on far fewer GPUs with Salus") {
  const json j = ex::run_experiment("inference", shipped());
  CHECK(j["gpus_exclusive"] == 42);
  const double salus = num(j, "gpus_salus"), mps = num(j, "gpus_mps");
  CHECK(salus >= 1);
  CHECK(salus <= mps);
  CHECK(salus * 4 <= 42);
  CHECK(j["late_admissions"] == 0);
  CHECK(j["models"].size() == 14);
  const json& lat = j["avg_latency_ms"];
  CHECK(num(lat, "exclusive") > 0);
  CHECK(num(lat, "salus") >= num(lat, "exclusive"));
  CHECK(num(lat, "overhead") == doctest::Approx(num(lat, "salus") - num(lat, "exclusive")));
  for (const json& m : j["models"]) {
    CHECK(m["instances"] == 3);
    // Alone, a request takes at least its forward pass.
    CHECK(m["avg_latency_ms_exclusive"].get<double>() >= m["iter_ms"].get<double>() * 0.999);
  }
}

TEST_CASE("experiments: a bad inference configuration names the file, the line and the key") {
  auto ctx = shipped();
  const std::string bad_key = salus::test::temp_file(
      "inf_bad_key.json",
      "{\n  \"format\": \"salus-inference-experiment/1\",\n  \"modles\": []\n}\n");
  CHECK_THROWS_WITH_AS(ex::run_inference_experiment(ctx, bad_key),
                       doctest::Contains((bad_key + ":3: modles: unknown key (valid: format, notes, models").c_str()), InputError);
  const std::string bad_model = salus::test::temp_file(
      "inf_bad_model.json",
      "{\"format\": \"salus-inference-experiment/1\",\n \"models\": [\"nosuch_1\"], \"instances\": 3,\n"
      " \"request_rate_per_s\": 1, \"duration_s\": 10, \"seed\": 1, \"process_overhead_mib\": 0}\n");
  CHECK_THROWS_WITH_AS(ex::run_inference_experiment(ctx, bad_model),
                       doctest::Contains((bad_model + ":2: nosuch_1: not in the catalog").c_str()), InputError);
  const std::string bad_rate = salus::test::temp_file(
      "inf_bad_rate.json",
      "{\"format\": \"salus-inference-experiment/1\", \"models\": [\"vae_64\"], \"instances\": 3,\n"
      " \"request_rate_per_s\": -1, \"duration_s\": 10, \"seed\": 1, \"process_overhead_mib\": 0}\n");
  CHECK_THROWS_WITH_AS(ex::run_inference_experiment(ctx, bad_rate),
                       doctest::Contains((bad_rate + ":2: request_rate_per_s: must be in").c_str()), InputError);
}

TEST_CASE("salus-experiment: bad names and options exit 2 with the valid ones") {
  const auto r = salus::test::run_program(SALUS_SOURCE_DIR, SALUS_EXPERIMENT_BIN, "bogus --out /tmp/unused");
  CHECK(r.code == 2);
  CHECK(r.err == "salus-experiment: unknown experiment 'bogus' (valid: long_trace, srtf_snapshot, fair_three, "
                 "hyperparam, inference, gpus_needed, fidelity, or all)\n");
  const auto p = salus::test::run_program(SALUS_SOURCE_DIR, SALUS_EXPERIMENT_BIN, "hyperparam --plots maybe");
  CHECK(p.code == 2);
  CHECK(p.err == "salus-experiment: --plots: unknown value 'maybe' (valid: auto, on, off)\n");
  const auto none = salus::test::run_program(SALUS_SOURCE_DIR, SALUS_EXPERIMENT_BIN, "");
  CHECK(none.code == 2);
}

TEST_CASE("salus-experiment: writes NAME.json that matches the library's result") {
  const std::string dir = (salus::test::scratch() / "exp_out").string();
  const auto r = salus::test::run_program(SALUS_SOURCE_DIR, SALUS_EXPERIMENT_BIN, "hyperparam --plots off --out '" + dir + "'");
  REQUIRE(r.code == 0);
  CHECK(r.out.find("superres_128") != std::string::npos);
  CHECK(r.out.find("(paper)") != std::string::npos);
  const json written = json::parse(salus::test::slurp(dir + "/hyperparam.json"));
  CHECK(written == ex::run_experiment("hyperparam", shipped()));
}

TEST_CASE("experiments: the paper's ordering holds on traces from other seeds too") {
  const auto catalog = salus::traces::Catalog::load_default();
  for (std::uint64_t seed : {2, 3, 4, 5, 6}) {
    INFO("seed " << seed);
    salus::traces::GeneratorOptions opt;
    opt.seed = seed;
    const std::string path = salus::test::temp_file("seed" + std::to_string(seed) + ".csv",
                                                    salus::traces::to_native_csv(salus::traces::generate_trace(catalog, opt), "test"));
    const auto jobs = salus::traces::jobs_for_capacity(salus::traces::load_trace(path, catalog), 16 * salus::core::kGiB);
    salus::run::SimConfig cfg;  // the experiments' settings: 16 GiB, 1 ms switches, profiled interference
    REQUIRE(cfg.capacity == 16 * salus::core::kGiB);
    REQUIRE(cfg.switch_cost_ns == salus::core::kNsPerMs);
    REQUIRE(cfg.interference == "profiled");
    std::map<std::string, salus::core::RunMetrics> m;
    for (const char* p : {"fifo", "srtf", "pack", "fair"}) {
      m[p] = salus::run::simulate(jobs, p, cfg).metrics;
      CHECK(m[p].done == 100);
    }
    CHECK(m["fifo"].avg_jct_s > 2.0 * m["srtf"].avg_jct_s);
    CHECK(m["fair"].avg_jct_s < m["fifo"].avg_jct_s);
    CHECK(m["fair"].avg_jct_s > m["srtf"].avg_jct_s);
    for (const char* other : {"fifo", "srtf", "fair"}) CHECK(m["pack"].makespan_ns < m[other].makespan_ns);
  }
}

TEST_CASE("salus-catalog: prints the shipped catalog and rejects bad options") {
  const auto r = salus::test::run_program(SALUS_SOURCE_DIR, SALUS_CATALOG_BIN, "");
  REQUIRE(r.code == 0);
  CHECK(r.out == salus::test::slurp(salus::traces::Catalog::default_path()));
  const auto bad = salus::test::run_program(SALUS_SOURCE_DIR, SALUS_CATALOG_BIN, "--bogus");
  CHECK(bad.code == 2);
  CHECK(bad.err.rfind("salus-catalog: ", 0) == 0);
}
