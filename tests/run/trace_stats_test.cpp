// salus-trace stats streams a native trace (traces::load_trace_streamed into run::TraceStats)
// instead of holding its jobs: the report, and every error, must be what loading the trace whole
// and summarising its jobs gives, for every format (the others are loaded whole and handed over),
// with and without --window and --sample.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "core/errors.h"
#include "run/trace_report.h"
#include "support/temp_files.h"
#include "traces/trace.h"

namespace {

namespace traces = salus::traces;
namespace fs = std::filesystem;

// The report, or the error, one way or the other.
std::string whole(const std::string& path, const traces::Catalog& catalog, const traces::LoadOptions& o) {
  try {
    return salus::run::trace_stats_text(path, traces::load_trace(path, catalog, o));
  } catch (const salus::core::InputError& e) {
    return e.what();
  }
}

std::string streamed(const std::string& path, const traces::Catalog& catalog, const traces::LoadOptions& o,
                     std::int64_t* count) {
  try {
    salus::run::TraceStats stats;
    std::int64_t seen = 0;
    const traces::Trace t = traces::load_trace_streamed(path, catalog, o, [&](const salus::core::JobSpec& j) {
      CHECK(j.trace_order == seen);  // in file order, numbered as load_trace numbers them
      ++seen;
      stats.add(j);
    });
    CHECK(t.jobs.empty());
    CHECK(t.streamed == seen);
    *count = seen;
    return stats.text(path, t);
  } catch (const salus::core::InputError& e) {
    return e.what();
  }
}

}  // namespace

TEST_CASE("trace stats: streamed as loaded whole, for every shipped trace and fixture, with --window and --sample") {
  const traces::Catalog catalog = traces::Catalog::load(traces::Catalog::default_path());
  std::vector<std::string> paths = {std::string(SALUS_SOURCE_DIR) + "/traces/long_trace_100.csv"};
  for (const char* dir : {"/traces/examples", "/tests/data/traces/import"}) {
    for (const auto& e : fs::directory_iterator(std::string(SALUS_SOURCE_DIR) + dir)) paths.push_back(e.path().string());
  }
  // A native trace's own mistakes, at their lines, streamed too.
  paths.push_back(salus::test::temp_file("stats_dup.csv", "job_id,arrival_s,iterations,workload\na,0,1,resnet50_25\n"
                                                          "b,1,1,resnet50_25\na,2,1,resnet50_25\n"));
  std::string many = "job_id,arrival_s,iterations,workload\n";
  for (int i = 0; i < 5000; ++i) {
    many += "j" + std::to_string(i) + "," + std::to_string(i * 7 % 9000) + "," + std::to_string(1 + i % 300) + "," +
            (i % 3 ? "resnet50_25" : "vgg16_50") + "\n";
  }
  paths.push_back(salus::test::temp_file("stats_many.csv", many));
  paths.push_back(salus::test::temp_file("stats_empty.csv", "job_id,arrival_s,iterations,workload\n# none\n"));
  traces::LoadOptions plain;
  traces::LoadOptions windowed;
  windowed.window_start = 100'000'000'000;
  windowed.window_end = 5'000'000'000'000;
  traces::LoadOptions sampled;
  sampled.sample = 0.5;
  int compared = 0, reports = 0;
  std::int64_t jobs = 0;
  for (const std::string& path : paths) {
    for (const traces::LoadOptions* o : {&plain, &windowed, &sampled}) {
      CAPTURE(path);
      std::int64_t count = 0;
      const std::string want = whole(path, catalog, *o);
      CHECK(streamed(path, catalog, *o, &count) == want);
      ++compared;
      reports += want.find("\ntrace: ") != std::string::npos || want.rfind("trace: ", 0) == 0;
      jobs += count;
    }
  }
  CHECK(compared >= 60);
  CHECK(reports >= 30);  // most fixtures read, so the reports themselves are compared
  CHECK(jobs > 5000);
}
