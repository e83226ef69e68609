// salus-experiment gpus_needed: the curve at every N is `salus-sim --gpus N` (gang jobs, same
// policy and placement), the answer is the first N meeting the bound, the options reach the
// model, and bad options exit 2.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <set>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "run/cpus.h"
#include "support/programs.h"
#include "support/temp_files.h"

namespace {

using nlohmann::json;

salus::test::ProgramResult experiment(const std::string& args) {
  return salus::test::run_program(SALUS_SOURCE_DIR, SALUS_EXPERIMENT_BIN, args);
}
salus::test::ProgramResult sim(const std::string& args) {
  return salus::test::run_program(SALUS_SOURCE_DIR, SALUS_SIM_BIN, args);
}

/// The first 20 jobs of Tiresias' simulator/60_job.csv (SymbioticLab/Tiresias): 10 of one GPU,
/// 5 of two, 2 of four, 3 of eight.
const std::string kGangTrace = "tests/data/traces/import/tiresias_60_job_head.csv";

json run_gpus_needed(const std::string& args, const std::string& dir) {
  const auto r = experiment("gpus_needed --plots off --quiet --out '" + dir + "' " + args);
  INFO(r.err);
  REQUIRE(r.code == 0);
  return json::parse(salus::test::slurp(dir + "/gpus_needed.json"));
}

/// salus-sim's summary of `policies` on N GPUs (N = 1: its one-GPU path, as --gpus 1).
json sim_summary(const std::string& args) {
  const std::string path = (salus::test::scratch() / "gpus_needed_sim.json").string();
  const auto r = sim(args + " --quiet --summary-json '" + path + "'");
  INFO(args);
  INFO(r.err);
  REQUIRE(r.code == 0);
  return json::parse(salus::test::slurp(path));
}

const json* curve_point(const json& config, std::int64_t n) {
  for (const json& p : config["curve"]) {
    if (p["gpus"] == n) return &p;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("gpus_needed on a trace with gang jobs: the curve at N is salus-sim --gpus N, no job folded") {
  const std::string dir = (salus::test::scratch() / "gpus_needed_gang").string();
  const json j = run_gpus_needed("--trace " + kGangTrace, dir);
  CHECK(j["version"] == 3);
  CHECK(j["jobs"] == 20);
  CHECK(j["gang_jobs"] == 10);
  CHECK(j["search"]["widest_job_gpus"] == 8);
  bool gang_note = false;
  for (const json& n : j["notes"]) gang_note |= n.get<std::string>().find("lock-step") != std::string::npos;
  CHECK(gang_note);
  // Every configuration, labelled, its lane mode and placement as run.
  CHECK(j["policies"]["fifo"]["label"] == "exclusive FIFO");
  CHECK(j["policies"]["fifo"]["lane_mode"] == "exclusive");
  CHECK(j["policies"]["fifo"]["placement"] == "first-fit");
  CHECK(j["policies"]["pack"]["placement"] == "util-pack");
  CHECK(j["policies"]["pack"]["label"] == "Salus PACK");
  CHECK(j["policies"]["srtf_exclusive"]["label"] == "exclusive SRTF");
  CHECK(j["policies"]["srtf_exclusive"]["lane_mode"] == "exclusive");
  CHECK(j["policies"]["srtf"]["lane_mode"] == "single");
  CHECK(j["policies"]["srtf"]["label"] == "Salus SRTF");
  CHECK(j["policies"]["fair"]["label"] == "Salus FAIR");
  // The sizes on every curve, and each configuration's answer.
  std::set<std::int64_t> sizes;
  bool first = true;
  for (const auto& [name, c] : j["policies"].items()) {
    REQUIRE(c["curve"].size() >= 3);
    CHECK(c["curve"].front()["gpus"].get<std::int64_t>() >= 8);  // nothing below the widest job
    std::set<std::int64_t> mine;
    for (const json& p : c["curve"]) mine.insert(p["gpus"].get<std::int64_t>());
    if (first) sizes = mine;
    else std::erase_if(sizes, [&](std::int64_t n) { return !mine.contains(n); });
    first = false;
  }
  CHECK_FALSE(sizes.empty());
  for (const auto& [name, c] : j["policies"].items()) sizes.insert(c["gpus_needed"].get<std::int64_t>());
  int compared = 0;
  for (const std::int64_t n : sizes) {
    CAPTURE(n);
    const std::string common = "--trace " + kGangTrace + " --gpus " + std::to_string(n);
    // Each policy on its own default placement in both programs; exclusive SRTF is --lanes exclusive.
    json results = sim_summary(common + " --policy fifo,pack,srtf,fair")["results"];
    json exclusive = sim_summary(common + " --policy srtf --lanes exclusive")["results"][0];
    CHECK(exclusive["lane_mode"] == "exclusive");
    exclusive["policy"] = "srtf_exclusive";
    results.push_back(exclusive);
    for (const json& r : results) {
      const std::string policy = r["policy"].get<std::string>();
      CAPTURE(policy);
      CHECK(j["policies"][policy]["placement"] == r["cluster"]["placement"]);
      const json* p = curve_point(j["policies"][policy], n);
      if (p == nullptr) continue;  // not on this configuration's curve
      if ((*p)["missed_early"].get<bool>()) {  // stopped once it certainly missed: it does, in full
        CHECK(r["avg_jct_s"].get<double>() > j["bound"]["seconds"].get<double>());
        ++compared;
        continue;
      }
      CHECK((*p)["avg_jct_s"].get<double>() == r["avg_jct_s"].get<double>());
      CHECK((*p)["avg_queuing_s"].get<double>() == r["avg_queuing_s"].get<double>());
      CHECK((*p)["makespan_s"].get<double>() == r["makespan_s"].get<double>());
      CHECK((*p)["done"] == r["jobs_done"]);
      CHECK((*p)["done"] == 20);
      ++compared;
    }
  }
  CHECK(compared >= 10);  // the common sizes on all five curves, the answers on their own
}

TEST_CASE("gpus_needed: the answer is exact (every N from the widest job to it on the curve, each below missing), "
          "and each rise of the curve is in the JSON and noted") {
  const std::string dir = (salus::test::scratch() / "gpus_needed_exact").string();
  const json j = run_gpus_needed("--trace " + kGangTrace, dir);
  CHECK(j["search"]["method"] == "scan");
  CHECK(j["search"]["lower"] == 8);
  CHECK(j["search"]["upper"] == 24);
  const std::string guarantee = j["search"]["guarantee"].get<std::string>();
  CHECK(guarantee.find("the search runs every N from 8 (the widest job: fewer GPUs cannot run it) upward until one "
                       "meets the bound, up to 24 (the peak demand") == 0);
  CHECK(guarantee.find("the answer is exact, every N below it was run and misses, whatever the curve's shape") !=
        std::string::npos);
  std::set<std::string> notes;
  for (const json& n : j["notes"]) notes.insert(n.get<std::string>());
  CHECK(notes.contains(guarantee));
  const double bound = j["bound"]["seconds"].get<double>();
  int rising = 0;
  for (const auto& [name, c] : j["policies"].items()) {
    CAPTURE(name);
    const auto n = c["gpus_needed"].get<std::int64_t>();
    for (std::int64_t m = 8; m <= n; ++m) {
      CAPTURE(m);
      const json* p = curve_point(c, m);
      REQUIRE(p != nullptr);
      if ((*p)["missed_early"].get<bool>()) {
        CHECK(m < n);
        CHECK((*p)["lower_bound_s"].get<double>() > bound);
        CHECK((*p)["avg_jct_s"].is_null());
      } else {
        CHECK(((*p)["avg_jct_s"].get<double>() <= bound) == (m == n));
      }
    }
    CHECK(c["search_runs"] == n - 8 + 1);
    // Rises: the N whose next N on the curve has a larger average, and the N above the answer missing.
    // The rises are among the complete runs (a run stopped early has no average).
    json rises = json::array(), missed = json::array();
    const json& curve = c["curve"];
    json complete = json::array();
    for (const json& p : curve) {
      if (!p["missed_early"].get<bool>()) complete.push_back(p);
    }
    for (std::size_t i = 0; i + 1 < complete.size(); ++i) {
      const double a = complete[i]["avg_jct_s"].get<double>(), b = complete[i + 1]["avg_jct_s"].get<double>();
      if (b > a) {
        rises.push_back({{"from", complete[i]["gpus"]}, {"to", complete[i + 1]["gpus"]}, {"from_s", a}, {"to_s", b}});
      }
    }
    for (const json& p : curve) {
      if (p["gpus"].get<std::int64_t>() > n && (p["missed_early"].get<bool>() || p["avg_jct_s"].get<double>() > bound)) {
        missed.push_back(p["gpus"]);
      }
    }
    CHECK(c["rises"] == rises);
    CHECK(c["missed_above"] == missed);
    for (std::int64_t m = n + 1; m <= std::min<std::int64_t>(24, n + 4); ++m) CHECK(curve_point(c, m) != nullptr);
    if (rises.empty()) continue;
    ++rising;
    const std::string label = c["label"].get<std::string>();
    bool noted = false;
    for (const std::string& note : notes) {
      noted |= note.rfind(label + ": the curve rises (more GPUs, a larger average) at ", 0) == 0;
    }
    CHECK(noted);
  }
  CHECK(rising > 0);  // on this fixture some curves rise (Salus SRTF: 12 -> 13 GPUs)
  // The printed form: the rise of Salus SRTF at 12 -> 13 GPUs, after the table.
  const auto r = experiment("gpus_needed --plots off --quiet --out '" + dir + "' --trace " + kGangTrace);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("note: " + guarantee + "\n") != std::string::npos);
  CHECK(r.out.find("  [curve rises: see note]\n") != std::string::npos);
  const auto srtf_note = r.out.find("note: Salus SRTF: the curve rises (more GPUs, a larger average) at ");
  REQUIRE(srtf_note != std::string::npos);
  CHECK(srtf_note > r.out.find("  Salus FAIR "));
  CHECK(r.out.find("12 -> 13 GPUs (", srtf_note) != std::string::npos);
}

TEST_CASE("gpus_needed: where PACK needs more GPUs than exclusive FIFO, the output says why, from PACK's curve") {
  const std::string dir = (salus::test::scratch() / "gpus_needed_why").string();
  const json j = run_gpus_needed("--trace " + kGangTrace, dir);
  const auto nf = j["policies"]["fifo"]["gpus_needed"].get<std::int64_t>();
  const auto np = j["policies"]["pack"]["gpus_needed"].get<std::int64_t>();
  REQUIRE(np > nf);  // on this fixture PACK's lanes slow each other more than sharing saves
  REQUIRE(j.contains("pack_over_fifo"));
  const std::string why = j["pack_over_fifo"].get<std::string>();
  const json* at = curve_point(j["policies"]["pack"], np - 1);
  REQUIRE(at != nullptr);
  REQUIRE_FALSE((*at)["missed_early"].get<bool>());  // 20 jobs: too few steps for a progress call
  char expected[160];
  std::snprintf(expected, sizeof expected, "at %lld GPUs its average JCT %.1f min is %.1f min of queuing",
                static_cast<long long>(np - 1), (*at)["avg_jct_s"].get<double>() / 60,
                (*at)["avg_queuing_s"].get<double>() / 60);
  CHECK(why.find("why PACK needs more GPUs than exclusive FIFO (" + std::to_string(np) + " against " +
                 std::to_string(nf) + ")") == 0);
  CHECK(why.find(expected) != std::string::npos);
  CHECK(why.find("interference profiled") != std::string::npos);
}

TEST_CASE("gpus_needed: each answer is the first N on its curve meeting the bound, and the bound kinds") {
  const std::string dir = (salus::test::scratch() / "gpus_needed_long").string();
  const json j = run_gpus_needed("", dir);  // the shipped long_trace_100.csv
  const double bound = j["bound"]["seconds"].get<double>();
  CHECK(bound == doctest::Approx(2 * j["avg_solo_s"].get<double>()));
  CHECK(j["time_scale"] == 1.0);
  CHECK(j["interference"] == "profiled");  // the shipped catalog names no model and has no pairs
  for (const char* name : {"fifo", "srtf_exclusive", "pack", "srtf", "fair"}) {
    CAPTURE(name);
    const json& c = j["policies"][name];
    REQUIRE(c["gpus_needed"].is_number_integer());
    const auto n = c["gpus_needed"].get<std::int64_t>();
    CHECK(c["first_meeting_on_curve"] == n);
    const json* at = curve_point(c, n);
    REQUIRE(at != nullptr);
    CHECK((*at)["avg_jct_s"].get<double>() <= bound);
    if (const json* before = curve_point(c, n - 1)) {
      CHECK(((*before)["missed_early"].get<bool>() || (*before)["avg_jct_s"].get<double>() > bound));
    }
    CHECK(c["search_runs"].get<int>() <= c["simulations"].get<int>());
  }
  CHECK(j["policies"]["fifo"]["gpus_needed"].get<int>() >= j["policies"]["pack"]["gpus_needed"].get<int>());
  CHECK_FALSE(j.contains("pack_over_fifo"));  // PACK needs no more GPUs than FIFO: nothing to explain
  const json q = run_gpus_needed("--bound-queue-min 1", dir);
  CHECK(q["bound"]["kind"] == "avg_queuing");
  CHECK(q["bound"]["seconds"].get<double>() == 60);
  for (const auto& [name, c] : q["policies"].items()) {
    if (const json* at = curve_point(c, c["gpus_needed"].get<std::int64_t>())) {
      CHECK((*at)["avg_queuing_s"].get<double>() <= 60);
    }
  }
}

TEST_CASE("gpus_needed stops a run once it certainly misses the bound: each stopped N misses in salus-sim, "
          "stopped before its last job ends, and the answers are exact") {
  // 2000 generated jobs: on 1 to 4 GPUs the queue grows for days, long enough for the progress
  // calls (every 1024 instants) that check the bound.
  const std::string trace = (salus::test::scratch() / "gpus_needed_2000.csv").string();
  const auto g = salus::test::run_program(SALUS_SOURCE_DIR, SALUS_TRACE_BIN,
                                          "generate --jobs 2000 --seed 1 --out '" + trace + "'");
  REQUIRE(g.code == 0);
  const std::string dir = (salus::test::scratch() / "gpus_needed_early").string();
  const json j = run_gpus_needed("--trace '" + trace + "'", dir);
  const double bound = j["bound"]["seconds"].get<double>();
  CHECK(j["search"]["guarantee"].get<std::string>().find("a run is stopped early once a lower bound on its average") !=
        std::string::npos);
  int stopped = 0;
  for (std::int64_t n = 1; n <= 8; ++n) {
    CAPTURE(n);
    const std::string common = "--trace '" + trace + "' --gpus " + std::to_string(n);
    json results = sim_summary(common + " --policy fifo,pack,srtf,fair")["results"];
    json exclusive = sim_summary(common + " --policy srtf --lanes exclusive")["results"][0];
    exclusive["policy"] = "srtf_exclusive";
    results.push_back(exclusive);
    for (const json& r : results) {
      const std::string policy = r["policy"].get<std::string>();
      CAPTURE(policy);
      const json& c = j["policies"][policy];
      const auto needed = c["gpus_needed"].get<std::int64_t>();
      const double jct = r["avg_jct_s"].get<double>();
      // Exact: every N below the answer misses in full, the answer meets.
      if (n < needed) CHECK(jct > bound);
      if (n == needed) CHECK(jct <= bound);
      const json* p = curve_point(c, n);
      if (p == nullptr) continue;
      if (!(*p)["missed_early"].get<bool>()) {
        CHECK((*p)["avg_jct_s"].get<double>() == jct);
        continue;
      }
      ++stopped;
      CHECK(jct > bound);
      CHECK((*p)["lower_bound_s"].get<double>() > bound);
      CHECK((*p)["lower_bound_s"].get<double>() <= jct);
      double last_finish = 0;
      for (const json& job : r["jobs"]) last_finish = std::max(last_finish, job["finish_s"].get<double>());
      CHECK((*p)["stopped_at_s"].get<double>() < last_finish);
      CHECK((*p)["avg_jct_s"].is_null());
    }
  }
  CHECK(stopped >= 10);  // N = 1 to 4 under every configuration at least
  std::int64_t counted = 0;
  for (const auto& [name, c] : j["policies"].items()) {
    std::int64_t early = 0;
    for (const json& p : c["curve"]) {
      early += p["missed_early"].get<bool>() ? 1 : 0;
      counted += p["missed_early"].get<bool>() && p["gpus"].get<std::int64_t>() <= 8 ? 1 : 0;
    }
    CHECK(c["stopped_early"] == early);
  }
  CHECK(counted == stopped);
  // The table counts them.
  const auto r = experiment("gpus_needed --plots off --quiet --out '" + dir + "' --trace '" + trace + "'");
  REQUIRE(r.code == 0);
  CHECK(r.out.find("simulations  stopped early\n") != std::string::npos);
}

TEST_CASE("gpus_needed takes salus-sim's model and trace options, and records them") {
  const std::string dir = (salus::test::scratch() / "gpus_needed_options").string();
  const json j = run_gpus_needed("--trace traces/examples/hand.csv --interference none --switch-cost-ms 0 "
                                 "--placement best-fit --window 0:0.4 --lanes auto",
                                 dir);
  CHECK(j["interference"] == "none");
  CHECK(j["switch_cost_ms"] == 0.0);
  CHECK(j["lanes"] == "auto");
  CHECK(j["jobs"] == 2);  // a and b arrive in [0, 0.4)
  for (const auto& [name, c] : j["policies"].items()) CHECK(c["placement"] == "best-fit");
  CHECK(j["policies"]["srtf"]["lane_mode"] == "auto");
  CHECK(j["policies"]["fifo"]["lane_mode"] == "exclusive");  // fifo is always exclusive
  CHECK(j["policies"]["srtf_exclusive"]["lane_mode"] == "exclusive");  // the baseline whatever --lanes says
  bool lanes_note = false;
  for (const json& n : j["notes"]) lanes_note |= n == "fifo runs in exclusive mode; --lanes auto does not apply to it";
  CHECK(lanes_note);
  // One GPU is salus-sim's one-GPU path.
  const json one = sim_summary("--trace traces/examples/hand.csv --interference none --switch-cost-ms 0 "
                               "--window 0:0.4 --lanes auto --policy srtf");
  const json* p = curve_point(j["policies"]["srtf"], 1);
  REQUIRE(p != nullptr);
  CHECK((*p)["avg_jct_s"].get<double>() == one["results"][0]["avg_jct_s"].get<double>());
}

TEST_CASE("gpus_needed: bad options exit 2 naming what is wrong") {
  auto r = experiment("long_trace --placement best-fit --plots off");
  CHECK(r.code == 2);
  CHECK(r.err == "salus-experiment: --placement is for gpus_needed only\n");
  r = experiment("long_trace --assumed-iter-ms 5 --plots off");
  CHECK(r.code == 2);
  CHECK(r.err == "salus-experiment: --assumed-iter-ms is for gpus_needed only\n");
  r = experiment("gpus_needed --placement worst-fit --plots off");
  CHECK(r.code == 2);
  CHECK(r.err == "salus-experiment: unknown placement 'worst-fit' (valid: first-fit, best-fit, least-loaded, "
                 "util-pack); did you mean 'first-fit'?\n");
  r = experiment("gpus_needed --format philly --trace " + kGangTrace + " --plots off");
  CHECK(r.code == 2);
  CHECK(r.err.find("salus-experiment: " + kGangTrace) == 0);
  r = experiment("gpus_needed --switch-cost-ms -1 --plots off");
  CHECK(r.code == 2);
  CHECK(r.err == "salus-experiment: --switch-cost-ms: must be a non-negative number\n");
  // A job wider than any cluster the search would simulate: refused before a cluster is sized by it.
  const std::string wide = (salus::test::scratch() / "gpus_needed_wide.csv").string();
  std::ofstream(wide) << "job_id,arrival_s,iterations,persistent_mib,ephemeral_mib,iter_ms,gpus\n"
                         "w,0,10,100,100,10,100000000\na,1,10,100,100,10,1\n";
  r = experiment("gpus_needed --trace " + wide + " --plots off");
  CHECK(r.code == 2);
  CHECK(r.err == "salus-experiment: gpus_needed: job 'w' needs 100000000 GPUs; the search simulates clusters of at "
                 "most 100000 GPUs\n");
}

TEST_CASE("--quiet: stdout is the same with and without it, and nothing is on stderr with it") {
  const std::string dir = (salus::test::scratch() / "gpus_needed_quiet").string();
  const std::string args = "--trace " + kGangTrace + " --plots off --out '" + dir + "'";
  const auto loud = experiment("gpus_needed " + args);
  const auto quiet = experiment("gpus_needed " + args + " --quiet");
  REQUIRE(loud.code == 0);
  REQUIRE(quiet.code == 0);
  CHECK(loud.out == quiet.out);
  CHECK(quiet.err.empty());
  // Without --quiet, stderr holds progress lines or nothing (a run under a second prints none).
  CHECK((loud.err.empty() || loud.err.rfind("gpus_needed: ", 0) == 0));
  const std::string sim_args = "--trace " + kGangTrace + " --gpus 8 --policy fifo,fair";
  const auto sim_loud = sim(sim_args);
  const auto sim_quiet = sim(sim_args + " --quiet");
  REQUIRE(sim_loud.code == 0);
  CHECK(sim_loud.out == sim_quiet.out);
  CHECK(sim_quiet.err.empty());
  CHECK((sim_loud.err.empty() || sim_loud.err.rfind("salus-sim: ", 0) == 0));
}

TEST_CASE("gpus_needed: the same output on one CPU as on every CPU it may use (the runs' pool, the search's window)") {
  // Tiresias' 60_job.csv: searches of several N, runs stopped early, curves that rise. One CPU:
  // one run at a time; all: the runs of every configuration side by side, N started ahead of the
  // answer. Same stdout (the --out directory named the same) and the same JSON.
  const std::string dir = (salus::test::scratch() / "gpus_needed_cpus").string();
  const std::string args = "gpus_needed --trace tests/data/peers/tiresias/60_job.csv --plots off --quiet --out '" +
                           dir + "' --cpus ";
  const auto one = experiment(args + std::to_string(salus::run::allowed_cpus().front()));
  REQUIRE(one.code == 0);
  const std::string one_json = salus::test::slurp(dir + "/gpus_needed.json");
  const auto all = experiment(args + "all");
  REQUIRE(all.code == 0);
  CHECK(one.out == all.out);
  CHECK(one_json == salus::test::slurp(dir + "/gpus_needed.json"));
  CHECK(json::parse(one_json)["policies"]["srtf"]["simulations"].get<int>() > 5);
}

TEST_CASE("exclusive SRTF (salus-sim --lanes exclusive): one job at a time, the shortest waiting first, no preemption") {
  // a runs 1 s from 0; c (0.8 s) arrives at 0.25, b (0.1 s) at 0.5. FIFO: a, c, b. Exclusive
  // SRTF: a to its end, then b, then c. SRTF on a shared lane: b preempts a at 0.5.
  const std::string trace = salus::test::temp_file("sjf.csv",
                                                   "job_id,arrival_s,iterations,persistent_mib,ephemeral_mib,iter_ms\n"
                                                   "a,0,10,1000,4000,100\n"
                                                   "c,0.25,4,2000,8000,200\n"
                                                   "b,0.5,2,500,2000,50\n");
  auto finishes = [&](const std::string& args) {
    const json s = sim_summary("--trace '" + trace + "' --interference none --switch-cost-ms 0 " + args);
    std::string out;
    for (const json& job : s["results"][0]["jobs"]) {
      char line[64];
      std::snprintf(line, sizeof line, "%s %.2f ", job["id"].get<std::string>().c_str(), job["finish_s"].get<double>());
      out += line;
    }
    return out;
  };
  CHECK(finishes("--policy fifo") == "a 1.00 c 1.80 b 1.90 ");
  CHECK(finishes("--policy srtf --lanes exclusive") == "a 1.00 c 1.90 b 1.10 ");
  CHECK(finishes("--policy srtf") == "a 1.10 c 1.90 b 0.60 ");
}

TEST_CASE("gpus_needed --cluster-policies: the preemptive cluster policies searched beside the five, each curve point "
          "salus-sim --gpus N, the answer exact") {
  const std::string dir = (salus::test::scratch() / "gpus_needed_lease").string();
  const json j = run_gpus_needed("--trace " + kGangTrace + " --cluster-policies dlas-gpu,max-min --reset-s 0 --round-s 60", dir);
  REQUIRE(j["policies"].size() == 7);
  for (const char* name : {"dlas-gpu", "max-min"}) {
    CAPTURE(name);
    const json& c = j["policies"][name];
    CHECK(c["label"] == name);
    CHECK(c["policy"] == name);
    CHECK(c["lane_mode"] == "exclusive");
    CHECK(c["placement"] == "consolidated");
    // The answer: the first N on the curve meeting the bound, every N below it from the widest
    // job run and missing.
    REQUIRE(c["gpus_needed"].is_number());
    const std::int64_t answer = c["gpus_needed"].get<std::int64_t>();
    for (std::int64_t n = 8; n <= answer; ++n) {
      CAPTURE(n);
      const json* p = curve_point(c, n);
      REQUIRE(p != nullptr);
      const bool meets = !(*p)["missed_early"].get<bool>() &&
                         (*p)["avg_jct_s"].get<double>() <= j["bound"]["seconds"].get<double>();
      CHECK(meets == (n == answer));
    }
    // The answer's point is salus-sim's run on that many GPUs, with the same options.
    const json r = sim_summary("--trace " + kGangTrace + " --gpus " + std::to_string(answer) + " --policy " + name +
                               " --reset-s 0 --round-s 60")["results"][0];
    CHECK((*curve_point(c, answer))["avg_jct_s"].get<double>() == r["avg_jct_s"].get<double>());
  }
  // Lanes beneath (--gpu-sharing): run and placed as the per-GPU policy's, the answer salus-sim's.
  const json lanes = run_gpus_needed("--trace " + kGangTrace + " --cluster-policies dlas-gpu --gpu-sharing pack",
                                     (salus::test::scratch() / "gpus_needed_lanes").string());
  const json& d = lanes["policies"]["dlas-gpu"];
  CHECK(d["label"] == "dlas-gpu on pack lanes");
  CHECK(d["lane_mode"] == "auto");
  CHECK(d["placement"] == "util-pack");
  REQUIRE(d["gpus_needed"].is_number());
  const std::int64_t at = d["gpus_needed"].get<std::int64_t>();
  const json shared = sim_summary("--trace " + kGangTrace + " --gpus " + std::to_string(at) +
                                  " --policy dlas-gpu --gpu-sharing pack")["results"][0];
  CHECK(shared["cluster"]["gpu_sharing"] == "pack");
  CHECK((*curve_point(d, at))["avg_jct_s"].get<double>() == shared["avg_jct_s"].get<double>());
  // Their assumptions are in the notes.
  bool noted = false;
  for (const json& n : j["notes"]) noted |= n.get<std::string>().rfind("max-min: rounds of 60 s", 0) == 0;
  CHECK(noted);
  // Without the option: the five configurations alone.
  const json five = run_gpus_needed("--trace " + kGangTrace, (salus::test::scratch() / "gpus_needed_five").string());
  CHECK(five["policies"].size() == 5);
  // Bad lists exit 2 naming what is wrong.
  const auto bad = experiment("gpus_needed --plots off --quiet --trace " + kGangTrace + " --cluster-policies dlas-gpu,lifo");
  CHECK(bad.code == 2);
  CHECK(bad.err.find("unknown cluster policy 'lifo' (valid: dlas-gpu, dlas, max-min, fifo-rounds)") != std::string::npos);
  const auto twice = experiment("gpus_needed --plots off --quiet --trace " + kGangTrace + " --cluster-policies max-min,max-min");
  CHECK(twice.code == 2);
  CHECK(twice.err.find("--cluster-policies: 'max-min' given twice") != std::string::npos);
}
