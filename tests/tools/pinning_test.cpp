// The default path is the pinned path: on the cpu device salus-profile measures on one CPU unless
// --cpus says otherwise and records it, salus-run runs on the CPUs its catalog was measured on (or
// refuses an explicit --cpus that puts the lanes on another number of CPUs), and salus-sim says
// when a catalog's figures were not measured on one CPU.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "run/cpus.h"
#include "support/programs.h"
#include "traces/catalog.h"

namespace fs = std::filesystem;
using salus::run::allowed_cpus;
using salus::run::catalog_cpus;
using salus::run::cpu_list_text;
using salus::run::parse_cpu_list;
using salus::run::provenance_cpus;

namespace {

std::string sibling(const std::string& name) { return salus::test::beside(SALUS_SIM_BIN, name); }

salus::test::ProgramResult run(const std::string& prog, const std::string& args) {
  return salus::test::run_program(SALUS_SOURCE_DIR, sibling(prog), args);
}

/// A catalog of lenet_32 and mlp_64 (P, E and times as salus-profile measured them on the
/// development machine), each entry's provenance naming `cpus[i]` ("" for none: a catalog from
/// before salus-profile recorded them; "-" for an entry not measured on the cpu device).
fs::path catalog_with(const std::string& name, const std::vector<std::string>& cpus) {
  const std::vector<std::string> names = {"lenet_32", "mlp_64"};
  nlohmann::json ws = nlohmann::json::array();
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string& c = cpus[i];
    const std::string source = c == "-"  ? "estimated: by hand"
                               : c.empty() ? "measured on cpu by salus-profile (pool 256.0 MiB)"
                                           : "measured on cpu (math fp32, CPUs " + c + ") by salus-profile (pool 256.0 MiB)";
    ws.push_back({{"name", names[i]}, {"persistent_mib", 8}, {"ephemeral_mib", 8}, {"iter_ms", 5.0}, {"gpu_util", 0.5},
                  {"source", source}});
  }
  const nlohmann::json cat = {{"format", "salus-catalog/1"}, {"gpu", "cpu"}, {"notes", "pinning test"}, {"workloads", ws}};
  const fs::path p = salus::test::scratch() / name;
  std::ofstream(p) << cat.dump(2) << "\n";
  return p;
}

/// Two short mlp_64 jobs at once (PACK puts them in two lanes).
fs::path mlp_trace() {
  const fs::path p = salus::test::scratch() / "pin_mlp.csv";
  std::ofstream(p) << "job_id,workload,arrival_s,iterations\na,mlp_64,0,3\nb,mlp_64,0,3\n";
  return p;
}

std::string run_args(const fs::path& catalog, const fs::path& summary) {
  return "--trace '" + mlp_trace().string() + "' --device cpu --gpu-mem 256MiB --policy pack --warmup off --profiles '" +
         catalog.string() + "' --summary-json '" + summary.string() + "'";
}

std::string summary_cpus(const fs::path& summary) {
  return nlohmann::json::parse(salus::test::slurp(summary)).at("cpus").get<std::string>();
}

}  // namespace

TEST_CASE("a provenance names the CPUs it was measured on, and --cpus all is every CPU this process may use") {
  CHECK(provenance_cpus("measured on cpu (math fp32, CPUs 0-1,3) by salus-profile (pool 256.0 MiB, ...)") ==
        std::vector<int>{0, 1, 3});
  CHECK(provenance_cpus("measured on cpu (math fp32, CPUs 2) by salus-profile") == std::vector<int>{2});
  CHECK(provenance_cpus("measured on cpu by salus-profile (pool 256.0 MiB)").empty());
  CHECK(provenance_cpus("measured on cpu (math fp32, CPUs x) by salus-profile").empty());
  CHECK(parse_cpu_list("all") == allowed_cpus());
}

TEST_CASE("catalog_cpus reads each cpu-device entry's CPUs: one list, several, or none recorded") {
  auto read = [](const std::string& name, const std::vector<std::string>& cpus) {
    return catalog_cpus(salus::traces::Catalog::load(catalog_with(name, cpus).string()));
  };
  const auto one = read("pin_one.json", {"0", "0"});
  REQUIRE(one.single() != nullptr);
  CHECK(*one.single() == std::vector<int>{0});
  const auto two = read("pin_two.json", {"0-1", "0-1"});
  REQUIRE(two.single() != nullptr);
  CHECK(*two.single() == std::vector<int>{0, 1});
  const auto mixed = read("pin_mixed.json", {"0", "0-1"});
  CHECK(mixed.single() == nullptr);
  CHECK(mixed.lists == std::vector<std::vector<int>>{{0}, {0, 1}});
  const auto old = read("pin_old.json", {"", "0"});
  CHECK(old.single() == nullptr);
  CHECK(old.unrecorded == std::vector<std::string>{"lenet_32"});
  const auto estimated = read("pin_estimated.json", {"-", "-"});
  CHECK(!estimated.measured_on_cpu());
  CHECK(estimated.single() == nullptr);
}

TEST_CASE("salus-profile without --cpus measures the cpu device on one CPU, says so and records it") {
  const fs::path catalog = salus::test::scratch() / "pin_profile.json";
  const auto p = run("salus-profile", "--device cpu --workloads mlp_64 --gpu-mem 256MiB --min-seconds 0 --iterations 3 "
                                      "--pairs off --switch off --out '" + catalog.string() + "'");
  REQUIRE(p.code == 0);
  const auto c = salus::traces::Catalog::load(catalog.string());
  const auto cpus = catalog_cpus(c);
  REQUIRE(cpus.single() != nullptr);
  REQUIRE(cpus.single()->size() == 1);
  const std::string cpu = std::to_string(cpus.single()->front());
  CHECK(p.out.rfind("note: salus-profile runs the cpu device on CPU " + cpu +
                        " (the default: one CPU, the first this process may use, recorded in the catalog; --cpus LIST or "
                        "--cpus all to choose)\n",
                    0) == 0);

  // salus-run with that catalog and no --cpus runs where it was measured, and says so.
  const fs::path summary = salus::test::scratch() / "pin_profile_run.json";
  const auto r = run("salus-run", run_args(catalog, summary));
  REQUIRE(r.code == 0);
  CHECK(summary_cpus(summary) == cpu);
  CHECK(r.out.find("note: salus-run runs the cpu device on CPU " + cpu + ", where catalog " + catalog.string() +
                   " was measured (the default; --cpus LIST or --cpus all to choose)\n") != std::string::npos);
  // salus-sim has nothing to say about a catalog measured on one CPU.
  const auto s = run("salus-sim", "--trace '" + mlp_trace().string() + "' --gpu-mem 256MiB --profiles '" +
                                      catalog.string() + "'");
  REQUIRE(s.code == 0);
  CHECK(s.out.find("CPU") == std::string::npos);
}

TEST_CASE("salus-run without --cpus pins the cpu device to one CPU where its catalog records none it may use") {
  const std::vector<int> mine = allowed_cpus();
  REQUIRE(!mine.empty());
  // Recorded on a CPU this process may not use: as many of its own, and the note says why.
  const fs::path far = catalog_with("pin_far.json", {"1023", "1023"});
  const fs::path summary = salus::test::scratch() / "pin_far_run.json";
  const auto r = run("salus-run", run_args(far, summary));
  REQUIRE(r.code == 0);
  CHECK(summary_cpus(summary) == std::to_string(mine.front()));
  CHECK(r.out.find("note: salus-run runs the cpu device on CPU " + std::to_string(mine.front()) + ": catalog " +
                   far.string() + " was measured on CPU 1023, which this process may not use (it may use " +
                   cpu_list_text(mine) + "); --cpus LIST or --cpus all to choose\n") != std::string::npos);
  // Not recorded: one CPU, the first this process may use, and the catalog's silence is named.
  const fs::path old = catalog_with("pin_old_run.json", {"", ""});
  const auto o = run("salus-run", run_args(old, summary));
  REQUIRE(o.code == 0);
  const std::vector<int> ran = parse_cpu_list(summary_cpus(summary));
  REQUIRE(ran.size() == 1);
  CHECK(o.out.find("note: salus-run runs the cpu device on CPU " + std::to_string(ran.front()) +
                   " (the default: one CPU, the first this process may use, as salus-profile measures; --cpus LIST or --cpus "
                   "all to choose); catalog " + old.string() +
                   " does not say which CPUs lenet_32, mlp_64 were measured on\n") != std::string::npos);
  // --cpus all: where the OS places them, as a user asks.
  const fs::path estimated = catalog_with("pin_estimated_run.json", {"-", "-"});
  const auto a = run("salus-run", run_args(estimated, summary) + " --cpus all");
  REQUIRE(a.code == 0);
  CHECK(summary_cpus(summary) == cpu_list_text(mine));
}

TEST_CASE("salus-run refuses --cpus that put the lanes on another number of CPUs than the catalog was measured on") {
  const std::vector<int> mine = allowed_cpus();
  REQUIRE(!mine.empty());
  const std::string first = std::to_string(mine.front());
  const fs::path summary = salus::test::scratch() / "pin_refused.json";
  // Measured on two CPUs, asked to run on one: refused before anything runs, with the fix.
  const fs::path two = catalog_with("pin_two_run.json", {"0-1", "0-1"});
  const auto r = run("salus-run", run_args(two, summary) + " --cpus " + first);
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(r.err == "salus-run: --cpus " + first + " runs the cpu device's lanes on 1 CPU, but catalog " + two.string() +
                     " was measured on 2 CPUs (CPUs 0-1): its times describe another device (docs/real-backend.md, "
                     "\"Pinning: --cpus\"). Drop --cpus, or measure a catalog on these CPUs with "
                     "salus-profile --cpus " + first + "\n");
  // The same number of CPUs, others: it runs, with a note.
  const std::string other = mine.front() == 1023 ? "1022" : "1023";
  const fs::path elsewhere = catalog_with("pin_elsewhere.json", {other, other});
  const auto e = run("salus-run", run_args(elsewhere, summary) + " --cpus " + first);
  REQUIRE(e.code == 0);
  CHECK(e.out.find("note: --cpus " + first + ": catalog " + elsewhere.string() + " was measured on CPU " + other +
                   ", as many CPUs but others (virtual CPUs need not run at one speed)\n") != std::string::npos);
  // Not the cpu device: the catalog's CPUs are not checked (the device does the work).
  const auto c = run("salus-run", "--trace '" + mlp_trace().string() + "' --device cuda --profiles '" + two.string() +
                                      "' --cpus " + first);
  CHECK(c.err.find("catalog") == std::string::npos);
}

TEST_CASE("salus-sim says when a catalog's cpu-device figures were not measured on one CPU") {
  auto sim_notes = [](const fs::path& catalog) {
    const auto s = run("salus-sim", "--trace '" + mlp_trace().string() + "' --gpu-mem 256MiB --policy pack --profiles '" +
                                        catalog.string() + "'");
    REQUIRE(s.code == 0);
    std::string notes;
    for (std::size_t at = s.out.find("note: "); at != std::string::npos; at = s.out.find("note: ", at + 1)) {
      notes += s.out.substr(at, s.out.find('\n', at) - at + 1);
    }
    return notes;
  };
  const fs::path two = catalog_with("pin_sim_two.json", {"0-1", "0-1"});
  CHECK(sim_notes(two) == "note: catalog " + two.string() +
                              " was measured on the cpu device on 2 CPUs (CPUs 0-1), not pinned to one: its lanes could "
                              "run side by side on separate cores, so this predicts salus-run on those CPUs only "
                              "(salus-profile measures on one CPU unless --cpus says otherwise, and salus-run runs on "
                              "the catalog's CPUs)\n");
  const fs::path mixed = catalog_with("pin_sim_mixed.json", {"0", "0-1"});
  CHECK(sim_notes(mixed) == "note: catalog " + mixed.string() +
                                " mixes cpu-device figures measured on CPU 0 and CPUs 0-1: lanes on one CPU take turns, "
                                "on several they run side by side, and where two of these differ in number no one run "
                                "is predicted; measure them again in one salus-profile run\n");
  const fs::path old = catalog_with("pin_sim_old.json", {"", "0"});
  CHECK(sim_notes(old) == "note: catalog " + old.string() +
                              " does not say which CPUs its cpu-device figures (lenet_32) were measured on: if not on "
                              "one, its pairs describe lanes side by side on several cores; measure it again with "
                              "salus-profile, which records them\n");
  CHECK(sim_notes(catalog_with("pin_sim_one.json", {"0", "0"})).empty());
  CHECK(sim_notes(catalog_with("pin_sim_estimated.json", {"-", "-"})).empty());
}
