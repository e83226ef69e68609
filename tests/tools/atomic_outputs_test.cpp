// Outputs are written to a temporary file beside the target and renamed into place: salus-sim
// killed (SIGKILL) at random moments of a run that writes a summary and --out's CSVs must leave
// every output either as the previous complete run wrote it or as the new complete one, never torn.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support/programs.h"

namespace fs = std::filesystem;

namespace {

// Starts salus-sim with `args`, output to /dev/null; returns its pid.
pid_t start(const std::vector<std::string>& args) {
  const pid_t pid = salus::test::spawn_silent(args);
  REQUIRE(pid >= 0);
  return pid;
}

// A complete output: the summary parses as JSON; a CSV ends with a line end and each of its lines
// has as many commas as its header (no quoted commas in these outputs but the ids, which are plain).
void check_complete(const fs::path& p) {
  const std::string text = salus::test::slurp(p);
  INFO(p.string());
  REQUIRE_FALSE(text.empty());
  if (p.extension() == ".json") {
    bool parsed = true;
    try {
      const nlohmann::json j = nlohmann::json::parse(text);
      parsed = !j.is_discarded();
    } catch (const nlohmann::json::exception&) {
      parsed = false;
    }
    CHECK(parsed);
    return;
  }
  REQUIRE(text.back() == '\n');
  const std::size_t header_end = text.find('\n');
  const auto commas = std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(header_end), ',');
  std::size_t start = header_end + 1, torn = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    torn += std::count(text.begin() + static_cast<std::ptrdiff_t>(start), text.begin() + static_cast<std::ptrdiff_t>(end),
                       ',') != commas;
    start = end + 1;
  }
  CHECK(torn == 0);
}

}  // namespace

TEST_CASE("outputs: a run killed at any moment leaves every output complete") {
  const fs::path dir = salus::test::scratch() / "atomic";
  fs::create_directories(dir);
  const fs::path trace = dir / "trace.csv";
  {
    std::ofstream f(trace);
    f << "job_id,workload,arrival_s,iterations\n";
    std::mt19937 rng(7);
    for (int i = 0; i < 6000; ++i) f << "j" << i << ",alexnet_25," << i * 0.05 << "," << 5 + rng() % 150 << "\n";
  }
  const fs::path out = dir / "out", summary = dir / "summary.json";
  const std::vector<std::string> args = {SALUS_SIM_BIN, "--trace", trace.string(), "--policy", "fifo,pack,fair",
                                         "--out", out.string(), "--summary-json", summary.string(), "--quiet"};
  // A complete run first: the previous outputs, and how long a run takes.
  const auto t0 = std::chrono::steady_clock::now();
  int status = 0;
  ::waitpid(start(args), &status, 0);
  REQUIRE((WIFEXITED(status) && WEXITSTATUS(status) == 0));
  const double run_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::vector<fs::path> files = {summary};
  for (const auto& e : fs::directory_iterator(out)) files.push_back(e.path());
  REQUIRE(files.size() > 8);
  // Killed at random moments of the second half of a run, where it writes.
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> when(0.4 * run_s, 1.05 * run_s);
  int killed = 0;
  for (int k = 0; k < 10; ++k) {
    const pid_t pid = start(args);
    std::this_thread::sleep_for(std::chrono::duration<double>(when(rng)));
    killed += ::kill(pid, SIGKILL) == 0 ? 1 : 0;
    ::waitpid(pid, &status, 0);
    for (const fs::path& p : files) check_complete(p);
  }
  CHECK(killed > 0);
  // Temporaries of killed runs may stay beside the outputs (".name.tmp-pid-n"), never in their place.
  for (const auto& e : fs::directory_iterator(out)) {
    const std::string name = e.path().filename().string();
    if (name.front() != '.') CHECK(std::find(files.begin(), files.end(), e.path()) != files.end());
  }
}
