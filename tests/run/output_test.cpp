// The streamed outputs against the document builder they replace: JsonWriter against
// nlohmann's dump(2), write_summary_json against the summary document salus-sim used to build,
// and the timeline's rows (one per run of one job in one lane).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "run/json_writer.h"
#include "run/output.h"
#include "run/sim_runner.h"
#include "support/jobs.h"
#include "support/programs.h"
#include "traces/catalog.h"
#include "traces/trace.h"

using namespace salus;
using run::JsonWriter;

namespace {

std::string dumped(const nlohmann::json& j) { return j.dump(2) + "\n"; }

std::string written(const nlohmann::json& j) {
  JsonWriter w;
  w.value(j);
  w.finish();
  return w.text();
}

std::vector<core::JobSpec> load(const std::string& trace, core::Bytes capacity = 16 * core::kGiB) {
  const traces::Catalog catalog = traces::Catalog::load(std::string(SALUS_SOURCE_DIR) + "/traces/profiles/catalog.json");
  return traces::jobs_for_capacity(traces::load_trace(std::string(SALUS_SOURCE_DIR) + "/" + trace, catalog), capacity);
}

nlohmann::json header() {
  nlohmann::json h;
  h["tool"] = "salus-sim";
  h["trace"] = "t.csv";
  h["gpu_mem_bytes"] = 17179869184LL;
  h["switch_cost_ms"] = 1.0;
  h["seed"] = std::uint64_t{18446744073709551615ULL};
  h["notes"] = nlohmann::json::array({"a note with \"quotes\"", "tab\there"});
  h["zeta"] = nlohmann::json::object();  // sorts after "results"
  return h;
}

}  // namespace

TEST_CASE("JsonWriter writes what nlohmann's dump(2) writes") {
  const nlohmann::json docs[] = {
      nlohmann::json::parse(R"({"b": [], "a": {}, "c": [1, -2, 3.5, null, true, false, "x"], "d": {"e": {"f": [[]]}}})"),
      nlohmann::json::array(),
      nlohmann::json::object(),
      nlohmann::json(0.0),
      nlohmann::json::array({0.1, 1e-5, 1e20, 123456789.125, -0.0, 5e-324, 1.7976931348623157e308, 1900.0, 1.9}),
      nlohmann::json::array({std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}),
      nlohmann::json::array({std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::uint64_t>::max()}),
      // Escapes and UTF-8: quote, backslash, control characters, DEL, multi-byte characters.
      nlohmann::json::array({"say \"hi\"", "back\\slash", "\n\r\t\b\f\x01\x1f", "\x7f", "caf\xc3\xa9 \xe2\x80\x94"}),
  };
  for (const nlohmann::json& d : docs) {
    CAPTURE(d.dump());
    CHECK(written(d) == dumped(d));
  }
}

TEST_CASE("JsonWriter rejects invalid UTF-8 as dump() does") {
  JsonWriter w;
  CHECK_THROWS_AS(w.value(std::string_view("\xff")), nlohmann::json::type_error);
}

TEST_CASE("JsonWriter refuses a malformed document (our bug, not the user's)") {
  JsonWriter w;
  w.begin_object();
  CHECK_THROWS_AS(w.value(std::int64_t{1}), std::logic_error);  // a value without a key
  CHECK_THROWS_AS(w.end_array(), std::logic_error);
}

TEST_CASE("the streamed summary equals the document builder's, byte for byte") {
  struct Case {
    const char* trace;
    core::Bytes capacity;
  };
  // The hand trace, the small mixed trace, the shipped 100-job trace, and a 1 GiB GPU on the
  // small trace so that jobs are rejected (null start, finish, JCT and queuing; a reason).
  const Case cases[] = {{"traces/examples/hand.csv", 16 * core::kGiB},
                        {"traces/examples/small.csv", 16 * core::kGiB},
                        {"traces/long_trace_100.csv", 16 * core::kGiB},
                        {"traces/examples/small.csv", core::kGiB}};
  for (const Case& c : cases) {
    CAPTURE(c.trace);
    CAPTURE(c.capacity);
    const std::vector<core::JobSpec> jobs = load(c.trace, c.capacity);
    run::SimConfig cfg;
    cfg.capacity = c.capacity;
    std::vector<run::PolicyRun> runs;
    for (const char* p : {"fifo", "srtf", "pack", "fair"}) runs.push_back(run::simulate(jobs, p, cfg));
    nlohmann::json doc = header();
    doc["results"] = run::results_json(jobs, runs);
    const auto path = test::scratch() / "streamed.json";
    run::write_summary_json(path.string(), header(), jobs, runs);
    const std::string got = test::slurp(path);
    CHECK(got == dumped(doc));
    CHECK(nlohmann::json::parse(got) == doc);
  }
}

TEST_CASE("a summary that cannot be written is bad input naming the path") {
  const std::vector<core::JobSpec> jobs = load("traces/examples/hand.csv");
  const std::string path = "/proc/no/such/dir/summary.json";
  CHECK_THROWS_WITH_AS(run::write_summary_json(path, header(), jobs, {}), (path + ": cannot open for writing (No such file or directory)").c_str(),
                       core::InputError);
}

namespace {

struct Row {
  core::LaneId lane;
  core::JobIndex job;
  core::TimeNs start, end;
  std::int64_t iterations;
  core::TimeNs switch_ns;
  std::int64_t rotation = 0;
  bool operator==(const Row&) const = default;
};

std::vector<Row> rows_of(const std::vector<core::Segment>& segments) {
  std::vector<Row> rows;
  run::write_timeline_rows(segments, [&](const core::Segment& g) {
    rows.push_back({g.lane, g.job, g.start_ns, g.end_ns, g.iterations, g.switch_ns, g.rotation});
  });
  return rows;
}

}  // namespace

TEST_CASE("timeline rows: a run that continues its lane's last run extends its row, in start order") {
  // Completion order, two lanes. Lane 0: job 0 runs 0-10, is cut and resumes 10-30 (one row),
  // job 1 switches in at 30 (switch cost 1), job 1 resumes 40-50 after a gap (a new row), job 0
  // again at 50 with no switching cost but another job (a new row). Lane 1: job 2 runs 5-15 and
  // 15-20 (one row, whose start lies between lane 0's rows).
  const std::vector<core::Segment> segs = {
      {0, 0, 0, 10, 1, 0},  {1, 2, 5, 15, 2, 0},  {0, 0, 10, 30, 2, 0}, {1, 2, 15, 20, 1, 0},
      {0, 1, 30, 35, 1, 1}, {0, 1, 40, 50, 2, 0}, {0, 0, 50, 60, 1, 0},
  };
  CHECK(rows_of(segs) == std::vector<Row>{{0, 0, 0, 30, 3, 0},
                                          {1, 2, 5, 20, 3, 0},
                                          {0, 1, 30, 35, 1, 1},
                                          {0, 1, 40, 50, 2, 0},
                                          {0, 0, 50, 60, 1, 0}});
  // A resumed run that pays a switching cost (the lane ran another job in between) is not merged.
  CHECK(rows_of({{0, 0, 0, 10, 1, 0}, {0, 0, 10, 20, 1, 1}}).size() == 2);
  CHECK(rows_of({}).empty());
}

TEST_CASE("timeline rows: a rotation's rows are whole, neither extending a run's row nor extended") {
  // Lane 0: job 0 runs 0-10, then rotation 1 (jobs 0 and 1, 10-40) starting where it ended, then
  // job 1 runs 40-50 with no switching cost; lane 1: job 2 runs 20-30 (between them in start order).
  const std::vector<core::Segment> segs = {
      {0, 0, 0, 10, 1, 0, 0}, {1, 2, 20, 30, 1, 0, 0}, {0, 0, 10, 40, 3, 2, 1}, {0, 1, 10, 40, 2, 2, 1},
      {0, 1, 40, 50, 1, 0, 0},
  };
  CHECK(rows_of(segs) == std::vector<Row>{{0, 0, 0, 10, 1, 0, 0},
                                          {0, 0, 10, 40, 3, 2, 1},
                                          {0, 1, 10, 40, 2, 2, 1},
                                          {1, 2, 20, 30, 1, 0, 0},
                                          {0, 1, 40, 50, 1, 0, 0}});
}

TEST_CASE("--timeline: a bad value is bad input listing the valid ones") {
  CHECK(run::parse_timeline_mode("off") == run::TimelineMode::kOff);
  CHECK(run::parse_timeline_mode("runs") == run::TimelineMode::kRuns);
  CHECK(run::parse_timeline_mode("full") == run::TimelineMode::kFull);
  CHECK_THROWS_WITH_AS(run::parse_timeline_mode("iterations"),
                       "--timeline: unknown timeline mode 'iterations' (valid: off, runs, full)", core::InputError);
}

TEST_CASE("a result entry: the schema's one writer, read back as a document") {
  // FIFO on the paper's example plus a rejected and a failed job (tests/core/summary_test.cpp has
  // the metrics by hand): the entry's fields, per job the times, status and reason.
  std::vector<core::JobSpec> specs = test::paper_example();
  specs.push_back(test::job("r", test::ms(100), 1, test::ms(1), test::mib(1), test::mib(1)));
  specs.push_back(test::job("f", test::ms(2000), 1, test::ms(100), test::mib(1), test::mib(1)));
  auto done = [](core::TimeNs start, core::TimeNs finish) {
    core::JobState s;
    s.status = core::JobStatus::kDone;
    s.first_start_ns = start;
    s.finish_ns = finish;
    return s;
  };
  run::PolicyRun r;
  r.policy = "fifo";
  r.lane_mode = core::LaneMode::kExclusive;
  r.outcome.jobs = {done(0, test::ms(1000)), done(test::ms(1000), test::ms(1200)), done(test::ms(1200), test::ms(1500))};
  core::JobState rejected;
  rejected.status = core::JobStatus::kRejected;
  rejected.set_reason("too big");
  r.outcome.jobs.push_back(rejected);
  core::JobState failed = done(test::ms(2000), test::ms(2100));
  failed.status = core::JobStatus::kFailed;
  failed.set_reason("kernel failed");
  r.outcome.jobs.push_back(failed);
  r.metrics = core::compute_metrics(specs, r.outcome.jobs);
  const nlohmann::json j = run::result_json(specs, r);
  CHECK(j["policy"] == "fifo");
  CHECK(j["lane_mode"] == "exclusive");
  CHECK(j["makespan_s"].get<double>() == doctest::Approx(2.1));
  CHECK(j["p95_jct_s"].get<double>() == doctest::Approx(1.0));
  CHECK(j["jobs_total"] == 5);
  CHECK(j["jobs_done"] == 3);
  CHECK(j["jobs_rejected"] == 1);
  CHECK(j["jobs_failed"] == 1);
  CHECK_FALSE(j.contains("cluster"));
  REQUIRE(j["jobs"].size() == 5);
  CHECK(j["jobs"][1]["id"] == "b");
  CHECK(j["jobs"][1]["arrival_s"].get<double>() == doctest::Approx(0.25));
  CHECK(j["jobs"][1]["start_s"].get<double>() == doctest::Approx(1.0));
  CHECK(j["jobs"][1]["queuing_s"].get<double>() == doctest::Approx(0.75));
  CHECK(j["jobs"][1]["jct_s"].get<double>() == doctest::Approx(0.95));
  CHECK(j["jobs"][1]["status"] == "done");
  CHECK(j["jobs"][3]["status"] == "rejected");
  CHECK(j["jobs"][3]["reason"] == "too big");
  CHECK(j["jobs"][3]["start_s"].is_null());
  CHECK(j["jobs"][3]["finish_s"].is_null());
  CHECK(j["jobs"][3]["jct_s"].is_null());
  CHECK(j["jobs"][4]["status"] == "failed");
  // The document and the streamed array are the same bytes.
  run::JsonWriter w;
  run::write_results_json(w, specs, {r});
  CHECK(run::results_json(specs, {r}).dump(2) == w.text());
}

TEST_CASE("gpu_time: busy GPU-time at Helios scale (6,416 GPUs for six months) and the finished jobs' work") {
  // GPU-nanoseconds of such a run pass 2^63: the integral is kept in seconds.
  run::PolicyRun r;
  const core::TimeNs half_year = 180LL * 24 * 3600 * 1'000'000'000LL;
  r.gpus_busy = {{0, 6416}, {half_year, 3000}, {2 * half_year, 0}};
  auto big = test::job("big", 0, 10, 1'000'000'000, 0, 1);
  big.gpus = 4;
  const std::vector<core::JobSpec> jobs = {big, test::job("left", 0, 5, 1'000'000'000, 0, 1)};
  r.outcome.jobs.resize(2);
  r.outcome.jobs[0].status = core::JobStatus::kDone;
  r.outcome.jobs[1].status = core::JobStatus::kRejected;
  const run::GpuTime t = run::gpu_time(jobs, r);
  const double half_year_s = 180.0 * 24 * 3600;
  CHECK(t.busy_s == doctest::Approx((6416 + 3000) * half_year_s).epsilon(1e-12));
  CHECK(t.work_s == 40.0);  // 4 GPUs x 10 s; the rejected job asked nothing that ran
}
