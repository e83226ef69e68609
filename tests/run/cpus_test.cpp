// --cpus: the CPU list's grammar, its errors, and pinning (in a thread of its own, so that the
// test process keeps its CPUs), and salus-run / salus-profile taking it as a user types it.
#include <doctest/doctest.h>

#include <sched.h>

#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "run/cpus.h"
#include "support/programs.h"

namespace fs = std::filesystem;
using salus::run::allowed_cpus;
using salus::run::cpu_list_text;
using salus::run::parse_cpu_list;
using salus::run::pin_to_cpus;

namespace {

std::string sibling(const std::string& name) { return salus::test::beside(SALUS_SIM_BIN, name); }

std::string input_error(const std::string& text) {
  try {
    (void)parse_cpu_list(text);
  } catch (const salus::core::InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("--cpus reads CPU numbers and ranges, and writes them back as ranges") {
  CHECK(parse_cpu_list("0") == std::vector<int>{0});
  CHECK(parse_cpu_list("3,1") == std::vector<int>{1, 3});
  CHECK(parse_cpu_list("0-2,5,4,1") == std::vector<int>{0, 1, 2, 4, 5});
  CHECK(parse_cpu_list("2-2") == std::vector<int>{2});
  CHECK(cpu_list_text({0, 1, 2, 4, 5, 7}) == "0-2,4-5,7");
  CHECK(cpu_list_text({}) == "");
  for (const std::string text : {"0", "0-3", "1,3,5-9", "12"}) CHECK(cpu_list_text(parse_cpu_list(text)) == text);
}

TEST_CASE("--cpus refuses what is not a CPU list, naming it") {
  const std::string grammar = " is not a CPU list (CPU numbers and ranges: 0, 2-3, 0,2-3)";
  CHECK(input_error("") == "--cpus: ''" + grammar);
  CHECK(input_error("a") == "--cpus: 'a'" + grammar);
  CHECK(input_error("0,") == "--cpus: '0,'" + grammar);
  CHECK(input_error("-1") == "--cpus: '-1'" + grammar);
  CHECK(input_error("1-") == "--cpus: '1-'" + grammar);
  CHECK(input_error("0 1") == "--cpus: '0 1'" + grammar);
  CHECK(input_error("3-1") == "--cpus: the range 3-1 runs backwards");
  CHECK(input_error("99999") == "--cpus: CPU 99999 is beyond the last this system can name");
}

TEST_CASE("pin_to_cpus restricts the calling thread to the CPUs, and refuses one it may not use") {
  const std::vector<int> mine = allowed_cpus();
  REQUIRE(!mine.empty());
  std::vector<int> seen;
  std::string refused;
  std::thread t([&] {
    pin_to_cpus({mine.back()});
    seen = allowed_cpus();
    try {
      pin_to_cpus({1023});
    } catch (const salus::core::InputError& e) {
      refused = e.what();
    }
  });
  t.join();
  CHECK(seen == std::vector<int>{mine.back()});
  CHECK(refused == "--cpus: CPU 1023 is not available (this process may use " + std::to_string(mine.back()) + ")");
  CHECK(allowed_cpus() == mine);  // the test's own thread was not touched
}

TEST_CASE("salus-run and salus-profile --cpus: bad lists exit 2 with the message, a good one is recorded") {
  const std::string mine = cpu_list_text(allowed_cpus());
  for (const std::string prog : {"salus-run", "salus-profile"}) {
    CAPTURE(prog);
    const std::string args = prog == "salus-run" ? "--trace traces/examples/real_small.csv --device cpu --cpus "
                                                 : "--workloads mlp_64 --out " +
                                                       (salus::test::scratch() / "cpus_catalog.json").string() +
                                                       " --cpus ";
    const auto bad = salus::test::run_program(SALUS_SOURCE_DIR, sibling(prog), args + "0-x");
    CHECK(bad.code == 2);
    CHECK(bad.err == prog + ": --cpus: '0-x' is not a CPU list (CPU numbers and ranges: 0, 2-3, 0,2-3)\n");
    const auto absent = salus::test::run_program(SALUS_SOURCE_DIR, sibling(prog), args + "1023");
    CHECK(absent.code == 2);
    CHECK(absent.err == prog + ": --cpus: CPU 1023 is not available (this process may use " + mine + ")\n");
  }
  const int first = allowed_cpus().front();
  const fs::path summary = salus::test::scratch() / "cpus_run.json";
  const auto r = salus::test::run_program(
      SALUS_SOURCE_DIR, sibling("salus-run"),
      "--trace traces/examples/real_small.csv --device cpu --gpu-mem 256MiB --time-scale 4 --policy fifo --cpus " +
          std::to_string(first) + " --summary-json " + summary.string());
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(salus::test::slurp(summary));
  CHECK(j.at("cpus") == std::to_string(first));
  const fs::path catalog = salus::test::scratch() / "cpus_profile.json";
  const auto p = salus::test::run_program(
      SALUS_SOURCE_DIR, sibling("salus-profile"),
      "--device cpu --workloads mlp_64 --gpu-mem 256MiB --min-seconds 0 --iterations 3 --pairs off --switch off "
      "--cpus " + std::to_string(first) + " --out " + catalog.string());
  REQUIRE(p.code == 0);
  const auto c = nlohmann::json::parse(salus::test::slurp(catalog));
  CHECK(c.at("workloads").at(0).at("source").get<std::string>().find("CPUs " + std::to_string(first) + ")") !=
        std::string::npos);
}
