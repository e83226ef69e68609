// The Gavel and Tiresias readers' steps (traces/reader_steps.h), each called on its own: the rows
// a Gavel trace yields, its two layouts, job types, the throughput look-up with --gavel-scaling,
// where memory and times come from; the Tiresias header, rows, catalog mapping, times and the
// renaming of repeated ids. Expected values are worked out by hand; errors are checked verbatim.
#include <doctest/doctest.h>

#include <string>
#include <string_view>
#include <vector>

#include "core/errors.h"
#include "support/import.h"
#include "traces/csv.h"
#include "traces/reader_steps.h"

namespace core = salus::core;
namespace steps = salus::traces::steps;
using salus::traces::LoadOptions;
using salus::traces::Trace;
using salus::traces::fields::Place;

namespace {

constexpr core::TimeNs kMs = core::kNsPerMs;
const std::string kPath = "t.trace";

const salus::traces::Catalog& catalog() { return salus::test::default_catalog(); }

steps::GavelThroughputs table(const char* json) {
  steps::GavelThroughputs tp;
  tp.table = nlohmann::json::parse(json);
  tp.worker = "v100";
  return tp;
}

}  // namespace

TEST_CASE("GavelRows: a BOM, CRs, blank and comment lines are skipped, line numbers kept, fields split at tabs") {
  const std::string text = "\xEF\xBB\xBF" "a\tb\r\n\n# note\n \t \nc\t\td\n";
  steps::GavelRows rows(text, kPath);
  REQUIRE(rows.next());
  CHECK(rows.line() == 1);
  CHECK(rows.fields() == std::vector<std::string_view>{"a", "b"});
  REQUIRE(rows.next());
  CHECK(rows.line() == 5);
  CHECK(rows.fields() == std::vector<std::string_view>{"c", "", "d"});
  CHECK_FALSE(rows.next());

  const std::string long_field = "x\t" + std::string(5000, 'y');
  steps::GavelRows bad(long_field, kPath);
  CHECK_THROWS_WITH_AS(bad.next(), "t.trace:1:3: a field of 5000 bytes, more than the 4096 bytes a field may have (is this the right file?)",
                       core::InputError);
}

TEST_CASE("check_gavel_layout: the first row sets 10 or 7 fields, every later row must match") {
  const Place p1{kPath, 1, 0}, p2{kPath, 2, 1};
  std::size_t layout = 0;
  steps::check_gavel_layout(p1, 7, layout);
  CHECK(layout == 7);
  steps::check_gavel_layout(p2, 7, layout);
  CHECK_THROWS_WITH_AS(steps::check_gavel_layout(p2, 10, layout),
                       "t.trace:2: expected 7 tab-separated fields (job_type, command, num_steps_arg, needs_data_dir, "
                       "total_steps, arrival_time, scale_factor) as on the first row, found 10",
                       core::InputError);
  std::size_t fresh = 0;
  CHECK_THROWS_WITH_AS(steps::check_gavel_layout(p1, 8, fresh),
                       "t.trace:1: expected 10 tab-separated fields (job_type, command, working_directory, num_steps_arg, "
                       "needs_data_dir, total_steps, scale_factor, priority_weight, SLO, arrival_time) or 7 (job_type, "
                       "command, num_steps_arg, needs_data_dir, total_steps, arrival_time, scale_factor), found 8",
                       core::InputError);
  CHECK(fresh == 0);
}

TEST_CASE("gavel_job reads each layout's columns: total_steps, scale_factor, priority_weight, arrival_time") {
  const Place p{kPath, 3, 2};
  const std::vector<std::string_view> ten{"A3C", "cmd", "/d", "--n", "1", "500", "2", "2.6", "-1", "30.5"};
  const salus::core::JobSpec j10 = steps::gavel_job(p, ten, 10, 2);
  CHECK(j10.id == "2");
  CHECK(j10.iterations == 500);
  CHECK(j10.gpus == 2);
  CHECK(j10.priority == 3);  // 2.6 rounded
  CHECK(j10.arrival_ns == 30'500 * kMs);
  const std::vector<std::string_view> seven{"A3C", "cmd", "--n", "1", "40", "7.0", "4"};
  const salus::core::JobSpec j7 = steps::gavel_job(p, seven, 7, 5);
  CHECK(j7.id == "5");
  CHECK(j7.iterations == 40);
  CHECK(j7.gpus == 4);
  CHECK(j7.priority == 0);
  CHECK(j7.arrival_ns == 7'000 * kMs);
  const std::vector<std::string_view> untyped{"", "cmd", "--n", "1", "40", "7.0", "4"};
  CHECK_THROWS_WITH_AS(steps::gavel_job(p, untyped, 7, 5), "t.trace:3: job_type is missing", core::InputError);
}

TEST_CASE("parse_gavel_job_type splits off ' (batch size N)'") {
  const Place p{kPath, 4, 3};
  const steps::GavelJobType r = steps::parse_gavel_job_type(p, "ResNet-50 (batch size 64)");
  CHECK(r.model == "ResNet-50");
  CHECK(r.batch == 64);
  const steps::GavelJobType a = steps::parse_gavel_job_type(p, "A3C");
  CHECK(a.model == "A3C");
  CHECK(a.batch == 0);
  CHECK_THROWS_WITH_AS(steps::parse_gavel_job_type(p, "LM (batch size 0)"),
                       "t.trace:4: job_type 'LM (batch size 0)': batch size must be a positive integer", core::InputError);
}

TEST_CASE("gavel_throughput_time: the k-GPU rate, else the one-GPU rate as --gavel-scaling says") {
  const Place p{kPath, 1, 0};
  const steps::GavelThroughputs tp = table(R"j({"('A3C', 1)": {"null": 4.0}, "('LM', 2)": {"null": 8.0}, "('Bad', 1)": {"null": 0}})j");
  LoadOptions o;
  o.throughputs = "tp.json";
  bool scaled = true;
  CHECK(steps::gavel_throughput_time(tp, o, p, "A3C", 1, &scaled) == 250 * kMs);
  CHECK_FALSE(scaled);
  CHECK(steps::gavel_throughput_time(tp, o, p, "LM", 2, &scaled) == 125 * kMs);  // its own entry
  CHECK_FALSE(scaled);
  CHECK(steps::gavel_throughput_time(tp, o, p, "A3C", 4, &scaled) == 62'500'000);  // linear: 4 x 4 steps/s
  CHECK(scaled);
  o.gavel_scaling = LoadOptions::GavelScaling::kNone;
  CHECK(steps::gavel_throughput_time(tp, o, p, "A3C", 4, &scaled) == 250 * kMs);
  CHECK(scaled);
  o.gavel_scaling = LoadOptions::GavelScaling::kRefuse;
  CHECK_FALSE(steps::gavel_throughput_time(tp, o, p, "A3C", 4, &scaled).has_value());
  CHECK_FALSE(scaled);
  CHECK_FALSE(steps::gavel_throughput_time(tp, o, p, "LM", 1, &scaled).has_value());
  CHECK_FALSE(steps::gavel_throughput_time(steps::GavelThroughputs{}, o, p, "A3C", 1, &scaled).has_value());
  CHECK_THROWS_WITH_AS(steps::gavel_throughput_time(tp, o, p, "Bad", 1, &scaled),
                       "tp.json: v100/('Bad', 1): \"null\" must be a positive number (steps per second alone)",
                       core::InputError);
}

TEST_CASE("gavel_memory and gavel_timing: the nearest batch variant, else the whole GPU, times from throughputs, else the catalog") {
  const Place p{kPath, 1, 0};
  const LoadOptions o;
  std::vector<std::string> names = catalog().names();
  steps::GavelCounts counts;
  salus::core::JobSpec job;
  const steps::GavelJobType resnet{"ResNet-50", 64};
  const salus::traces::WorkloadProfile* profile = steps::gavel_memory(job, "ResNet-50 (batch size 64)", resnet, catalog(), names, counts);
  REQUIRE(profile != nullptr);
  CHECK(profile->name == "resnet50_75");  // |64 - 75| < |64 - 50|
  CHECK(job.workload == "resnet50_75");
  CHECK(job.persistent == profile->persistent);
  CHECK(counts.mapped.at("ResNet-50 (batch size 64)") == "resnet50_75");
  steps::gavel_timing(job, p, "ResNet-50 (batch size 64)", resnet, profile, steps::GavelThroughputs{}, catalog(), o, counts);
  CHECK(job.iter_ns == profile->iter_ns);
  CHECK(counts.from_catalog == 1);

  salus::core::JobSpec a3c;
  a3c.gpus = 1;
  const steps::GavelJobType a{"A3C", 0};
  CHECK(steps::gavel_memory(a3c, "A3C", a, catalog(), names, counts) == nullptr);
  CHECK(a3c.workload == "A3C");
  CHECK(counts.whole == 1);
  CHECK_THROWS_WITH_AS(steps::gavel_timing(a3c, p, "A3C", a, nullptr, steps::GavelThroughputs{}, catalog(), o, counts),
                       ("t.trace:1: job_type 'A3C': no throughput for it (no --throughputs file) and no catalog entry for "
                        "model 'a3c' (catalog: " + catalog().names_joined() + ")").c_str(),
                       core::InputError);
  steps::gavel_timing(a3c, p, "A3C", a, nullptr, table(R"j({"('A3C', 1)": {"null": 2.0}})j"), catalog(), o, counts);
  CHECK(a3c.iter_ns == 500 * kMs);
  CHECK(counts.from_throughputs == 1);
  CHECK(counts.scaled == 0);
}

TEST_CASE("note_gavel names the layout and counts only what happened") {
  Trace t;
  steps::GavelCounts counts;
  counts.from_throughputs = 2;
  counts.scaled = 1;
  LoadOptions o;
  o.throughputs = "tp.json";
  steps::note_gavel(t, 7, counts, table("{}"), o);
  REQUIRE(t.notes.size() == 3);
  CHECK(t.notes[0].starts_with("gavel (7-field simulation trace): "));
  CHECK(t.notes[1] == "2 jobs take its iteration time from tp.json (worker type v100, 1 / steps per second alone)");
  CHECK(t.notes[2] == "1 job of k > 1 GPUs has no throughput at k GPUs in tp.json, only at 1: assumed k times the "
                      "one-GPU steps per second (--gavel-scaling linear; none: the one-GPU rate)");
}

TEST_CASE("map_tiresias_header: columns in any order, others kept for a note, iterations optional") {
  const salus::traces::CsvRow header{1, {"model_name", "x", "job_id", "duration", "submit_time", "num_gpu"}};
  const steps::TiresiasHeader h = steps::map_tiresias_header(kPath, header);
  CHECK(h.index[steps::kTModel] == 0);
  CHECK(h.index[steps::kTJobId] == 2);
  CHECK(h.index[steps::kTNumGpu] == 5);
  CHECK(h.index[steps::kTInterval] == -1);
  CHECK_FALSE(h.counted());
  CHECK(h.extra == std::vector<std::string>{"'x'"});
  CHECK_THROWS_WITH_AS(steps::map_tiresias_header(kPath, {1, {"job_id", "job_id"}}), "t.trace:1: duplicate column 'job_id'",
                       core::InputError);
  CHECK_THROWS_WITH_AS(steps::map_tiresias_header(kPath, {1, {"job_id", "num_gpu", "submit_time", "model_name"}}),
                       "t.trace:1: missing required column 'duration' in a Tiresias trace", core::InputError);
}

TEST_CASE("read_tiresias_row, tiresias_profile and tiresias_times: a row to a job") {
  const std::string text = "job_id,num_gpu,submit_time,iterations,model_name,duration\n7,2,1.5,10,vgg19,20\n";
  salus::traces::CsvReader rows(text, kPath);
  REQUIRE(rows.next());
  const steps::TiresiasHeader h =
      steps::map_tiresias_header(kPath, {1, {rows.fields().begin(), rows.fields().end()}});
  REQUIRE(rows.next());
  steps::TiresiasRow row = steps::read_tiresias_row(Place{kPath, rows.line(), 0}, h, rows);
  CHECK(row.job.id == "7");
  CHECK(row.job.gpus == 2);
  CHECK(row.job.arrival_ns == 1'500 * kMs);
  CHECK(row.job.iterations == 10);
  CHECK(row.model == "vgg19");
  CHECK(row.duration == 20'000 * kMs);

  steps::TiresiasCounts counts;
  const salus::traces::WorkloadProfile* vgg = steps::tiresias_profile(catalog(), "vgg19", counts);
  REQUIRE(vgg != nullptr);
  CHECK(vgg->name == "vgg19_25");  // the smallest variant
  CHECK(counts.mapped.at("vgg19") == std::pair<std::string, std::int64_t>{"vgg19_25", 1});
  CHECK(steps::tiresias_profile(catalog(), "vgg19_50", counts)->name == "vgg19_50");
  CHECK(counts.mapped.size() == 1);  // an exact name is not a mapping
  CHECK(steps::tiresias_profile(catalog(), "mystery", counts) == nullptr);

  // Counted, --durations trace: the trace's 20 s over its 10 iterations, the catalog's memory.
  LoadOptions o;
  CHECK_FALSE(steps::tiresias_times(row, vgg, true, o, counts));
  CHECK(row.job.workload == "vgg19_25");
  CHECK(row.job.persistent == vgg->persistent);
  CHECK(row.job.iter_ns == 2'000 * kMs);
  CHECK(counts.from_catalog == 1);
  // Not in the catalog, duration-only: 20 s / 3 s = 6 iterations of 20 s / 6, the 2 ns left on the first.
  steps::TiresiasRow missing{{}, "mystery", 20'000 * kMs};
  o.assumed_iter_ns = 3'000 * kMs;
  CHECK(steps::tiresias_times(missing, nullptr, false, o, counts));
  CHECK(missing.job.workload == "mystery");
  CHECK(missing.job.iterations == 6);
  CHECK(missing.job.iter_ns == 3'333'333'333);
  CHECK(missing.job.first_iter_extra_ns == 2);
  CHECK(counts.missing_jobs == 1);
  CHECK(counts.missing_models == std::set<std::string>{"mystery"});
}

TEST_CASE("unique_tiresias_id: a repeated id takes the first free #n, and the first three are kept for the note") {
  Trace t;
  salus::traces::fields::FirstSeen first;
  steps::TiresiasCounts counts;
  for (const char* id : {"10", "10#2", "11"}) {
    salus::core::JobSpec j;
    j.id = id;
    steps::unique_tiresias_id(j, t.jobs, first, counts);
    salus::traces::fields::add_job(t, j, Place{kPath, static_cast<long>(t.jobs.size()) + 2, t.jobs.size()}, first);
  }
  CHECK(counts.renamed_count == 0);
  salus::core::JobSpec again;
  again.id = "10";
  steps::unique_tiresias_id(again, t.jobs, first, counts);
  CHECK(again.id == "10#3");
  CHECK(counts.renamed == std::vector<std::string>{"10 -> 10#3"});
  CHECK(counts.renamed_count == 1);
}
