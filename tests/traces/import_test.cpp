// The importers of the public traces, on small fixtures written from each documented layout
// (tests/data/traces/import/): which column gives arrival, duration, GPUs and memory, what is
// skipped and assumed, and the notes that say so. Expected values are worked out by hand.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "core/errors.h"
#include "support/temp_files.h"
#include "traces/catalog.h"
#include "traces/csv.h"
#include "traces/trace.h"
#include "support/import.h"

namespace core = salus::core;
using salus::traces::Catalog;
using salus::traces::LoadOptions;
using salus::traces::load_trace;
using salus::traces::Trace;
using salus::traces::TraceFormat;

namespace {

const std::string& kDir = salus::test::kImportDir;
constexpr core::TimeNs s = core::kNsPerS;
constexpr core::TimeNs ms = core::kNsPerMs;

const Catalog& catalog() { return salus::test::default_catalog(); }
using salus::test::has_note;

// Solo time including the first iteration's extra: what the trace's duration must equal.
core::TimeNs solo(const core::JobSpec& j) { return j.iterations * j.iter_ns + j.first_iter_extra_ns; }

LoadOptions with_throughputs(const std::string& worker = "") {
  LoadOptions o;
  o.throughputs = kDir + "gavel_throughputs.json";
  o.worker_type = worker;
  return o;
}

}  // namespace

TEST_CASE("import: every fixture is recognised by its header or shape") {
  CHECK(load_trace(kDir + "tiresias_fifo.csv", catalog()).format == TraceFormat::kTiresias);
  CHECK(load_trace(kDir + "gavel.tsv", catalog(), with_throughputs()).format == TraceFormat::kGavel);
  CHECK(load_trace(kDir + "philly.json", catalog()).format == TraceFormat::kPhilly);
  CHECK(load_trace(kDir + "helios.csv", catalog()).format == TraceFormat::kHelios);
  CHECK(load_trace(kDir + "alibaba.csv", catalog()).format == TraceFormat::kAlibaba);
  CHECK(load_trace(kDir + "pollux.csv", catalog()).format == TraceFormat::kPollux);
  CHECK(load_trace(kDir + "gavel_msr.tsv", catalog(), with_throughputs()).format == TraceFormat::kGavel);
  CHECK(load_trace(kDir + "tiresias_tf_job.csv", catalog()).format == TraceFormat::kTiresias);
  CHECK(load_trace(kDir + "acme_seren.csv", catalog()).format == TraceFormat::kAcme);
  CHECK(load_trace(kDir + "lucid_full_log.csv", catalog()).format == TraceFormat::kLucid);
  CHECK(load_trace(kDir + "pai_task_table.csv", catalog()).format == TraceFormat::kPai2020);
  CHECK(salus::traces::trace_format_registry().names_joined() ==
        "native, json, tiresias, gavel, philly, helios, alibaba, acme, lucid, pai2020, pollux");
}

TEST_CASE("import: tiresias takes the solo time from duration, memory from the catalog") {
  const Trace t = load_trace(kDir + "tiresias_fifo.csv", catalog());
  REQUIRE(t.jobs.size() == 5);
  // vgg16: 3 s over 7 iterations = 428571428 ns each, 4 ns left over on the first.
  CHECK(t.jobs[2].iter_ns == 428'571'428);
  CHECK(t.jobs[2].first_iter_extra_ns == 4);
  const std::vector<core::TimeNs> durations = {50 * s, 7 * s, 3 * s, 100'500 * ms, 10 * s};
  for (std::size_t i = 0; i < durations.size(); ++i) CHECK(solo(t.jobs[i]) == durations[i]);
  const auto* googlenet = catalog().find("googlenet_25");
  CHECK(t.jobs[1].workload == "googlenet_25");
  CHECK(t.jobs[1].persistent == googlenet->persistent);
  CHECK(t.jobs[1].gpu_util_ppm == googlenet->gpu_util_ppm);
  CHECK(t.whole_gpu == std::vector<bool>{false, false, false, false, true});

  LoadOptions catalog_times;
  catalog_times.durations = salus::traces::DurationSource::kCatalog;
  const Trace c = load_trace(kDir + "tiresias_fifo.csv", catalog(), catalog_times);
  CHECK(c.jobs[1].iter_ns == googlenet->iter_ns);
  CHECK(c.jobs[1].first_iter_extra_ns == googlenet->first_iter_extra_ns);
  CHECK(has_note(c, "4 jobs take P, E, iteration time and gpu_util from the catalog (their duration is ignored)"));
}

TEST_CASE("import: gavel with a throughputs file, the catalog where it has no entry") {
  const Trace t = load_trace(kDir + "gavel.tsv", catalog(), with_throughputs());
  REQUIRE(t.jobs.size() == 3);
  const auto* r75 = catalog().find("resnet50_75");  // batch 64: nearer 75 than 50
  // ResNet-50 (batch size 64) on 1 GPU: 4 steps/s on v100 -> 250 ms; 1000 steps.
  CHECK(t.jobs[0].id == "0");
  CHECK(t.jobs[0].workload == "resnet50_75");
  CHECK(t.jobs[0].iter_ns == 250 * ms);
  CHECK(t.jobs[0].iterations == 1000);
  CHECK(t.jobs[0].gpus == 1);
  CHECK(t.jobs[0].persistent == r75->persistent);
  CHECK(t.jobs[0].priority == 1);
  // Transformer on 2 GPUs: 8 steps/s -> 125 ms; not in the catalog: the whole GPU.
  CHECK(t.jobs[1].iter_ns == 125 * ms);
  CHECK(t.jobs[1].gpus == 2);
  CHECK(t.jobs[1].arrival_ns == 30'500 * ms);
  CHECK(t.jobs[1].priority == 2);
  CHECK(t.whole_gpu == std::vector<bool>{false, true, false});
  // ResNet-50 on 4 GPUs: no throughput for scale factor 4, only for 1 (4 steps/s): --gavel-scaling
  // linear (the default) takes 4 x 4 steps/s; refuse falls back to the catalog's iteration time.
  CHECK(t.jobs[2].iter_ns == 62'500'000);
  CHECK(t.jobs[2].gpus == 4);
  CHECK(t.jobs[2].iterations == 10);
  CHECK(has_note(t, "3 jobs take its iteration time from " + kDir + "gavel_throughputs.json" +
                        " (worker type v100, 1 / steps per second alone)"));
  LoadOptions refuse = with_throughputs();
  refuse.gavel_scaling = LoadOptions::GavelScaling::kRefuse;
  CHECK(load_trace(kDir + "gavel.tsv", catalog(), refuse).jobs[2].iter_ns == r75->iter_ns);
}

TEST_CASE("import: gavel's throughputs per worker type give each job its own speed on the other types") {
  using Speeds = std::vector<core::KindSpeed>;
  const Trace t = load_trace(kDir + "gavel.tsv", catalog(), with_throughputs());
  REQUIRE(t.jobs.size() == 3);
  // ResNet-50 on 1 GPU: 1 step/s on k80 against 4 on v100 (the worker type iter_ns came from).
  CHECK(t.jobs[0].kind_speeds() == Speeds{{"k80", 250'000}, {"v100", 1'000'000}});
  // Transformer on 2 GPUs: k80 has no rate for it, so it runs at the kind's speed there.
  CHECK(t.jobs[1].kind_speeds() == Speeds{{"v100", 1'000'000}});
  // ResNet-50 on 4 GPUs: both rates scaled from one GPU (linear), so the ratio stays 1/4.
  CHECK(t.jobs[2].kind_speeds() == Speeds{{"k80", 250'000}, {"v100", 1'000'000}});
  // Read with k80 as the worker type (ResNet-50 only: k80 has no Transformer rate): v100 is four
  // times faster.
  const std::string resnet = salus::test::temp_file(
      "gavel_resnet.tsv", "ResNet-50 (batch size 64)\tcd x && python3 main.py\t/data\t--num_steps\t1\t1000\t1\t1\t-1\t0\n");
  const Trace k80 = load_trace(resnet, catalog(), with_throughputs("k80"));
  CHECK(k80.jobs[0].iter_ns == 1000 * ms);
  CHECK(k80.jobs[0].kind_speeds() == Speeds{{"k80", 1'000'000}, {"v100", 4'000'000}});
  // A throughputs file of one worker type gives no speeds of its own.
  const std::string one = salus::test::temp_file("gavel_one_worker.json",
                                                 R"j({"v100": {"('ResNet-50 (batch size 64)', 1)": {"null": 4.0}}})j");
  LoadOptions o;
  o.throughputs = one;
  CHECK(load_trace(resnet, catalog(), o).jobs[0].iter_ns == 250 * ms);
  CHECK(load_trace(resnet, catalog(), o).jobs[0].kind_speeds().empty());
  // A job timed from the catalog (no throughputs file) has none either.
  CHECK(load_trace(resnet, catalog()).jobs[0].kind_speeds().empty());
}

TEST_CASE("import: gavel errors name the line and the way out") {
  // k80 has no Transformer: the catalog has none either.
  CHECK_THROWS_WITH_AS(load_trace(kDir + "gavel.tsv", catalog(), with_throughputs("k80")),
                       (kDir + "gavel.tsv:2: job_type 'Transformer (batch size 128)': no throughput for it in " + kDir +
                        "gavel_throughputs.json and no catalog entry for model 'transformer' (catalog: " +
                        catalog().names_joined() + ")")
                           .c_str(),
                       core::InputError);
  CHECK_THROWS_WITH_AS(load_trace(kDir + "gavel.tsv", catalog(), with_throughputs("a100")),
                       (kDir + "gavel_throughputs.json: unknown worker type 'a100' (valid: k80, v100)").c_str(),
                       core::InputError);
  const std::string bad = salus::test::temp_file("gavel_bad.tsv", "A\tb\tc\td\te\t10\t1\t1\t-1\t0\nA\tb\tc\n");
  LoadOptions gavel;
  gavel.format = "gavel";
  CHECK_THROWS_WITH_AS(load_trace(bad, catalog(), gavel),
                       (bad + ":1: job_type 'A': no throughput for it (no --throughputs file) and no catalog entry for "
                              "model 'a' (catalog: " + catalog().names_joined() + ")").c_str(),
                       core::InputError);
}

TEST_CASE("import: philly sums the attempts, counts the last attempt's GPUs, skips jobs that never ran") {
  const Trace t = load_trace(kDir + "philly.json", catalog());
  REQUIRE(t.jobs.size() == 2);
  CHECK(t.jobs[0].id == "application_1");
  CHECK(t.jobs[0].arrival_ns == 0);
  CHECK(solo(t.jobs[0]) == 600 * s);
  CHECK(t.jobs[0].iterations == 600);  // 1 s assumed per iteration
  CHECK(t.jobs[0].gpus == 2);
  CHECK(t.jobs[1].arrival_ns == 30 * s);
  CHECK(solo(t.jobs[1]) == 15 * s);  // 10 s + 5 s
  CHECK(t.jobs[1].gpus == 4);        // gpu3 on m2, gpu0-2 on m3
  CHECK(t.whole_gpu == std::vector<bool>{true, true});
  CHECK(has_note(t, "skipped 1 job: no attempt with a start and end time (never ran)"));
}

TEST_CASE("import: helios skips CPU-only and zero-length jobs, keeps unknown columns as a note") {
  const Trace t = load_trace(kDir + "helios.csv", catalog());
  REQUIRE(t.jobs.size() == 2);
  CHECK(t.jobs[0].id == "j1");
  CHECK(t.jobs[0].gpus == 8);
  CHECK(solo(t.jobs[0]) == 3600 * s);
  CHECK(t.jobs[1].id == "j4");
  CHECK(t.jobs[1].arrival_ns == 120 * s);
  CHECK(t.jobs[1].iterations == 2);  // 2.5 s: two iterations of 1.25 s
  CHECK(t.jobs[1].iter_ns == 1250 * ms);
  CHECK(has_note(t, "skipped 1 job: CPU-only (gpu_num 0)"));
  CHECK(has_note(t, "skipped 1 job: duration 0"));
  CHECK(has_note(t, "columns not read, kept as they are: 'extra_col'"));
}

TEST_CASE("import: alibaba gives a pod sharing a GPU its gpu_milli share of memory and utilisation") {
  const Trace t = load_trace(kDir + "alibaba.csv", catalog());
  REQUIRE(t.jobs.size() == 3);
  CHECK(t.jobs[0].id == "openb-pod-0000");
  CHECK(t.jobs[0].arrival_ns == 0);
  CHECK(solo(t.jobs[0]) == 4990 * s);
  CHECK(t.jobs[1].id == "openb-pod-0003");
  CHECK(t.jobs[1].arrival_ns == 300 * s);
  CHECK(t.jobs[1].gpu_util_ppm == 250'000);
  CHECK(t.jobs[2].gpus == 8);
  CHECK(solo(t.jobs[2]) == 2990 * s);
  const std::vector<core::JobSpec> jobs = salus::traces::jobs_for_capacity(t, 16 * core::kGiB);
  CHECK(jobs[0].ephemeral == 16 * core::kGiB);
  CHECK(jobs[1].ephemeral == 4 * core::kGiB);
  CHECK(jobs[1].persistent == 0);
  CHECK(has_note(t, "skipped 1 job: CPU-only pods (num_gpu 0)"));
  CHECK(has_note(t, "skipped 1 job: never scheduled (no scheduled_time)"));
  CHECK(has_note(t, "skipped 1 job: not deleted by the end of the trace (no deletion_time)"));
}

TEST_CASE("import: pollux maps applications to the catalog and needs a duration column") {
  const Trace t = load_trace(kDir + "pollux.csv", catalog());
  REQUIRE(t.jobs.size() == 3);
  CHECK(t.jobs[0].workload == "cifar10");
  CHECK(t.whole_gpu == std::vector<bool>{true, false, false});
  CHECK(t.jobs[1].workload == "resnet50_75");
  CHECK(t.jobs[1].gpus == 4);
  // As many of the catalog's iterations as fit in the duration, stretched to fill it exactly.
  CHECK(t.jobs[1].iterations == 7200 * s / catalog().find("resnet50_75")->iter_ns);
  CHECK(t.jobs[1].iter_ns == 7200 * s / t.jobs[1].iterations);
  CHECK(solo(t.jobs[1]) == 7200 * s);
  CHECK(t.jobs[2].workload == "speech_25");
  CHECK(solo(t.jobs[2]) == 1800 * s);
  CHECK_THROWS_WITH_AS(load_trace(kDir + "pollux_no_duration.csv", catalog()),
                       (kDir + "pollux_no_duration.csv:1: a Pollux workload has no job durations (Pollux derives them "
                               "from its application profiles, which are not part of the trace): add a 'duration' "
                               "column in seconds").c_str(),
                       core::InputError);
}

TEST_CASE("import: --format forces a reader, an unknown name lists the formats") {
  LoadOptions o;
  o.format = "helios";
  CHECK_THROWS_WITH_AS(load_trace(kDir + "tiresias_fifo.csv", catalog(), o),
                       (kDir + "tiresias_fifo.csv:1: missing required column 'gpu_num' in a Helios trace").c_str(),
                       core::InputError);
  o.format = "helio";
  CHECK_THROWS_WITH_AS(load_trace(kDir + "helios.csv", catalog(), o),
                       "--format: unknown trace format 'helio' (valid: native, json, tiresias, gavel, philly, helios, "
                       "alibaba, acme, lucid, pai2020, pollux); did you mean 'helios'?",
                       core::InputError);
}

TEST_CASE("import: --window keeps jobs from START up to END shifted to 0, --sample is seeded and stable") {
  LoadOptions o;
  o.window_start = 10 * s;
  o.window_end = 61 * s;
  const Trace t = load_trace(kDir + "tiresias_fifo.csv", catalog(), o);
  REQUIRE(t.jobs.size() == 2);  // submitted at 10 and 60; 61 is outside
  CHECK(t.jobs[0].id == "2");
  CHECK(t.jobs[0].arrival_ns == 0);
  CHECK(t.jobs[1].arrival_ns == 50 * s);
  CHECK(t.jobs[1].trace_order == 1);
  CHECK(t.notes.back() == "kept 2 of 5 jobs: arriving in [10 s, 61 s), shifted to start at 0");

  std::string csv = "job_id,arrival_s,iterations,persistent_mib,ephemeral_mib,iter_ms\n";
  for (int i = 0; i < 1000; ++i) csv += "j" + std::to_string(i) + "," + std::to_string(i) + ",1,1,1,1\n";
  const std::string path = salus::test::temp_file("sample.csv", csv);
  LoadOptions sample;
  sample.sample = 0.25;
  sample.seed = 7;
  const Trace a = load_trace(path, catalog(), sample);
  const Trace b = load_trace(path, catalog(), sample);
  CHECK(a.jobs.size() > 200);
  CHECK(a.jobs.size() < 300);
  REQUIRE(a.jobs.size() == b.jobs.size());
  for (std::size_t i = 0; i < a.jobs.size(); ++i) CHECK(a.jobs[i].id == b.jobs[i].id);
  sample.seed = 8;
  const Trace c = load_trace(path, catalog(), sample);
  bool differs = c.jobs.size() != a.jobs.size();
  for (std::size_t i = 0; !differs && i < a.jobs.size(); ++i) differs = a.jobs[i].id != c.jobs[i].id;
  CHECK(differs);
}

TEST_CASE("import: text that is not UTF-8 is refused with its line") {
  const std::string path =
      salus::test::temp_file("latin1.csv", "job_id,arrival_s,iterations,persistent_mib,ephemeral_mib,iter_ms\n"
                                           "a,0,1,1,1,1\nb\xE9,0,1,1,1,1\n");
  CHECK_THROWS_WITH_AS(load_trace(path, catalog()), (path + ":3: not UTF-8 text (byte 0xE9)").c_str(), core::InputError);
  CHECK(salus::traces::first_invalid_utf8("ok \xC3\xA9 \xE2\x80\x94") == std::string::npos);
  CHECK(salus::traces::first_invalid_utf8("\xC0\xAF") == 0);        // overlong '/'
  CHECK(salus::traces::first_invalid_utf8("ab\xED\xA0\x80") == 2);  // a surrogate
  CHECK(salus::traces::first_invalid_utf8("\xF0\x9F\x98") == 0);    // cut short
}

TEST_CASE("import: the native CSV's optional gpus column") {
  const std::string path = salus::test::temp_file(
      "gpus.csv", "job_id,arrival_s,iterations,persistent_mib,ephemeral_mib,iter_ms,gpus\na,0,1,1,1,1,4\nb,0,1,1,1,1,\n");
  const Trace t = load_trace(path, catalog());
  CHECK(t.jobs[0].gpus == 4);
  CHECK(t.jobs[1].gpus == 1);
  std::vector<core::JobSpec> jobs = t.jobs;
  CHECK(salus::traces::fold_onto_one_gpu(jobs) == 1);
  CHECK(jobs[0].iter_ns == 4 * ms);
  CHECK(jobs[0].gpus == 1);
}

TEST_CASE("import: inputs found by fuzzing are bad input, not crashes") {
  // A date past 2262 overflowed 64-bit nanoseconds (UBSan, helios and philly).
  const std::string helios = salus::test::temp_file(
      "helios_2262.csv", "job_id,gpu_num,submit_time,duration\nj1,1,9999-12-31 23:59:59,10\n");
  CHECK_THROWS_WITH_AS(load_trace(helios, catalog()),
                       (helios + ":2: submit_time must be seconds >= 0 or a date YYYY-MM-DD HH:MM:SS, optionally "
                                 "with a UTC offset such as +08:00 (1970 to 2262), got '9999-12-31 23:59:59'").c_str(),
                       core::InputError);
  // A number beyond a double escaped the JSON parser as nlohmann's out_of_range (native JSON).
  const std::string json = salus::test::temp_file("overflow.json", "{\n  \"jobs\": [\n    {\"job_id\": 1e400}\n  ]\n}\n");
  CHECK_THROWS_WITH_AS(load_trace(json, catalog()), (json + ":3: invalid JSON: number overflow parsing '1e400'").c_str(),
                       core::InputError);
}

namespace {

// A note containing `text` (the new readers' notes carry counts and lists around it).
bool note_contains(const Trace& t, const std::string& text) {
  for (const std::string& n : t.notes) {
    if (n.find(text) != std::string::npos) return true;
  }
  return false;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST_CASE("import: gavel's 7-field simulation traces, and k-GPU jobs measured only at one GPU") {
  const Trace t = load_trace(kDir + "gavel_msr.tsv", catalog(), with_throughputs());
  REQUIRE(t.jobs.size() == 3);
  CHECK(t.jobs[0].iter_ns == 250 * ms);  // ('ResNet-50 (batch size 64)', 1): 4 steps/s
  CHECK(t.jobs[0].iterations == 100);
  CHECK(t.jobs[1].arrival_ns == 6'500 * ms);
  CHECK(t.jobs[1].gpus == 2);
  CHECK(t.jobs[1].iter_ns == 125 * ms);  // ('Transformer (batch size 128)', 2): 8 steps/s
  CHECK(t.jobs[2].gpus == 4);
  CHECK(t.jobs[2].iterations == 40);
  CHECK(t.jobs[2].iter_ns == 62'500'000);  // linear: 4 GPUs x 4 steps/s
  for (const core::JobSpec& j : t.jobs) CHECK(j.priority == 0);
  CHECK(note_contains(t, "gavel (7-field simulation trace)"));
  CHECK(note_contains(t, "1 job of k > 1 GPUs has no throughput at k GPUs"));
  LoadOptions none = with_throughputs();
  none.gavel_scaling = LoadOptions::GavelScaling::kNone;
  CHECK(load_trace(kDir + "gavel_msr.tsv", catalog(), none).jobs[2].iter_ns == 250 * ms);
  LoadOptions refuse = with_throughputs();
  refuse.gavel_scaling = LoadOptions::GavelScaling::kRefuse;
  // Refused, the job falls back to the catalog's resnet50 entry (as any job missing from the file).
  const Trace r = load_trace(kDir + "gavel_msr.tsv", catalog(), refuse);
  CHECK(r.jobs[2].iter_ns == catalog().find(r.jobs[2].workload)->iter_ns);
  // A row of another width than the first is an error naming both layouts' counts.
  const std::string mixed = salus::test::temp_file(
      "gavel_mixed.tsv", "ResNet-50 (batch size 64)\tcmd\t-s\t1\t10\t0\t1\nA\tcmd\tdir\t-s\t1\t10\t1\t1\t-1\t0\n");
  CHECK_THROWS_WITH_AS(load_trace(mixed, catalog(), with_throughputs()),
                       doctest::Contains(":2: expected 7 tab-separated fields"), core::InputError);
}

TEST_CASE("import: tiresias duration-only traces (tf_job.csv) take iterations from the catalog") {
  const Trace t = load_trace(kDir + "tiresias_tf_job.csv", catalog());
  REQUIRE(t.jobs.size() == 3);
  const core::TimeNs vgg = catalog().find("vgg19_25")->iter_ns;
  CHECK(t.jobs[0].id == "10");
  CHECK(t.jobs[1].id == "10#2");  // the repeated id, made unique
  CHECK(t.jobs[0].gpus == 2);
  CHECK(t.jobs[0].iterations == std::max<std::int64_t>(1, 20 * s / vgg));
  CHECK(solo(t.jobs[0]) == 20 * s);
  CHECK(solo(t.jobs[1]) == 3 * s);
  // A model missing from the catalog: 5.5 s of 1 s iterations = 5 of 1.1 s.
  CHECK(t.jobs[2].iterations == 5);
  CHECK(t.jobs[2].iter_ns == 1'100 * ms);
  CHECK(solo(t.jobs[2]) == 5'500 * ms);
  CHECK(t.whole_gpu[2]);
  CHECK(note_contains(t, "tiresias (duration-only, no iterations column)"));
  CHECK(note_contains(t, "1 job repeats an earlier job_id"));
}

TEST_CASE("import: acme job traces, times with UTC offsets, every end state replayed") {
  const Trace t = load_trace(kDir + "acme_seren.csv", catalog());
  REQUIRE(t.jobs.size() == 3);
  CHECK(t.jobs[0].id == "5778432");
  CHECK(t.jobs[0].arrival_ns == 0);
  CHECK(t.jobs[0].gpus == 8);
  CHECK(solo(t.jobs[0]) == 117 * s);
  CHECK(t.jobs[1].arrival_ns == 336 * s);  // 00:23:58 - 00:18:22, both +08:00
  // 11:30:00-05:00 is 16:30:00 UTC, 00:30:00+08:00: 698 s after the first.
  CHECK(t.jobs[2].id == "5778472");
  CHECK(t.jobs[2].arrival_ns == 698 * s);
  CHECK(t.jobs[2].gpus == 2);
  CHECK(note_contains(t, "skipped 1 job: CPU-only (gpu_num 0)"));
  CHECK(note_contains(t, "skipped 1 job: no duration"));
  CHECK(note_contains(t, "whatever its end state (COMPLETED 2, FAILED 1)"));
  CHECK(note_contains(t, "3 jobs have no memory figure"));
}

TEST_CASE("import: lucid full logs give memory and utilisation per job") {
  const Trace t = load_trace(kDir + "lucid_full_log.csv", catalog());
  REQUIRE(t.jobs.size() == 3);
  CHECK(t.jobs[0].ephemeral == core::Bytes{5106} << 20);
  CHECK(t.jobs[0].persistent == 0);
  CHECK(t.jobs[0].gpu_util_ppm == 625'000);
  CHECK_FALSE(t.whole_gpu[0]);
  CHECK(t.jobs[1].gpus == 2);
  CHECK(t.jobs[1].ephemeral == core::Bytes{8192} << 20);
  CHECK(t.jobs[1].gpu_util_ppm == 1'000'000);  // gpu_util 0: no figure
  CHECK(t.jobs[1].arrival_ns == 60 * s);
  CHECK(solo(t.jobs[1]) == 1'200 * s);
  CHECK(t.whole_gpu[2]);  // gmem 0: the assumed memory
  CHECK(note_contains(t, "2 jobs take its memory from gmem"));
  CHECK(note_contains(t, "skipped 1 job: CPU-only (gpu_num 0)"));
}

TEST_CASE("import: alibaba pai 2020 task tables, headerless, plan_gpu in percent") {
  const Trace t = load_trace(kDir + "pai_task_table.csv", catalog());
  REQUIRE(t.jobs.size() == 3);
  CHECK(t.jobs[0].id == "4f057009a5d481acec67b088/tensorflow");
  CHECK(t.jobs[0].gpus == 1);
  CHECK(t.memory_share_ppm[0] == 500'000);  // 50 % of a GPU
  CHECK(t.jobs[0].gpu_util_ppm == 500'000);
  CHECK(solo(t.jobs[0]) == 38 * s);
  CHECK(t.jobs[1].gpus == 2);  // 2 instances x 100 %
  CHECK(t.memory_share_ppm[1] == 1'000'000);
  CHECK(t.jobs[1].arrival_ns == 8 * s);
  CHECK(t.jobs[2].gpus == 2);  // 1 instance x 200 %
  CHECK(solo(t.jobs[2]) == 50'500 * ms);
  CHECK(note_contains(t, "skipped 1 job: CPU tasks"));
  CHECK(note_contains(t, "skipped 1 job: no start_time or end_time"));
  CHECK(note_contains(t, "gpu_type not read, every GPU taken alike (MISC 1, P100 1, V100 1)"));
  // The same table with its documented header line first reads alike.
  std::string headed = "job_name,task_name,inst_num,status,start_time,end_time,plan_cpu,plan_mem,plan_gpu,gpu_type\n";
  headed += read_text(kDir + "pai_task_table.csv");
  const Trace h = load_trace(salus::test::temp_file("pai_headed.csv", headed), catalog());
  CHECK(h.jobs.size() == 3);
  CHECK(h.jobs[2].gpus == 2);
  // The job table gives no GPU demand: refused with the table to read instead.
  CHECK_THROWS_WITH_AS(load_trace(kDir + "pai_job_table.csv", catalog()),
                       doctest::Contains("pai_job_table (job_name, inst_id, user, status, start_time, end_time) gives "
                                         "no GPU demand: read pai_task_table"),
                       core::InputError);
}

TEST_CASE("import: a file no reader recognises, and a pod list without times, are refused with the reason") {
  const std::string odd = salus::test::temp_file("durations_only.csv", "duration\n121\n122\n");
  CHECK_THROWS_WITH_AS(load_trace(odd, catalog()),
                       (odd + ":1: format not recognised: its first line reads 'duration'; known formats: native, json, "
                              "tiresias, gavel, philly, helios, alibaba, acme, lucid, pai2020, pollux (`salus-trace "
                              "formats` lists their columns; --format NAME reads the file as one of them)")
                           .c_str(),
                       core::InputError);
  // A native header with a misspelt column is still the native reader's to explain.
  const std::string typo = salus::test::temp_file("typo.csv", "job_id,arival_s,iterations\na,0,1\n");
  CHECK_THROWS_WITH_AS(load_trace(typo, catalog()), doctest::Contains("missing required column 'arrival_s'"),
                       core::InputError);
  const std::string pods = salus::test::temp_file(
      "multigpu.csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli\nopenb-pod-0000,12000,16384,1,1000\n");
  CHECK_THROWS_WITH_AS(load_trace(pods, catalog()), doctest::Contains(":1: an Alibaba v2023 pod list without times"),
                       core::InputError);
}

TEST_CASE("import: alibaba keeps a pod's gpu_spec as the GPU kinds it may run on") {
  const Trace t = load_trace(kDir + "alibaba.csv", catalog());
  REQUIRE(t.jobs.size() == 3);
  CHECK(t.jobs[0].gpu_kinds().empty());
  CHECK(t.jobs[1].gpu_kinds().empty());
  CHECK(t.jobs[2].gpu_kinds() == "A100");
  CHECK(has_note(t, "1 pod names GPU models in gpu_spec: honoured on a cluster whose GPUs have kinds (--cluster with a "
                    "kind column, or the v2023 node list), ignored elsewhere"));
  const std::string two = salus::test::temp_file(
      "alibaba_spec.csv",
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
      "p0,1000,1024,1,1000,V100M16|V100M32,LS,Succeeded,0,100,0\n");
  const Trace u = load_trace(two, catalog());
  REQUIRE(u.jobs.size() == 1);
  CHECK(u.jobs[0].gpu_kinds() == "V100M16|V100M32");
}
