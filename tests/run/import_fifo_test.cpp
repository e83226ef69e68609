// On one GPU, FIFO over a Tiresias trace finishes each job when the Tiresias simulator does:
// exclusive, in submit order, finish_i = max(submit_i, finish_{i-1}) + duration_i.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "run/cli.h"
#include "run/sim_runner.h"

namespace core = salus::core;

TEST_CASE("import: FIFO finish times on a Tiresias trace equal the Tiresias simulator's") {
  const std::string trace = SALUS_TEST_DATA_DIR "/traces/import/tiresias_fifo.csv";
  auto t = salus::run::load_jobs(trace, salus::traces::Catalog::default_path(), 16 * core::kGiB, 1.0);
  salus::run::SimConfig cfg;
  cfg.switch_cost_ns = 0;
  cfg.interference = "none";
  const auto run = salus::run::simulate(t.jobs, "fifo", cfg);
  // By hand from the file (submit, duration): (0, 50) (10, 7) (60, 3) (61, 100.5) (200, 10):
  // 0 + 50 = 50; max(10, 50) + 7 = 57; max(60, 57) + 3 = 63; max(61, 63) + 100.5 = 163.5;
  // max(200, 163.5) + 10 = 210.
  const std::vector<core::TimeNs> expected = {50'000'000'000, 57'000'000'000, 63'000'000'000, 163'500'000'000,
                                              210'000'000'000};
  REQUIRE(run.outcome.jobs.size() == expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    INFO("job ", t.jobs[i].id);
    CHECK(run.outcome.jobs[i].status == core::JobStatus::kDone);
    CHECK(run.outcome.jobs[i].finish_ns == expected[i]);
  }
}
