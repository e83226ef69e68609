// Loading traces in the three formats into exact JobSpecs (nanoseconds, bytes, ppm).
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/errors.h"
#include "support/temp_files.h"
#include "traces/catalog.h"
#include "traces/trace.h"

namespace core = salus::core;
using salus::traces::Catalog;
using salus::traces::jobs_for_capacity;
using salus::traces::load_trace;
using salus::traces::Trace;
using salus::traces::TraceFormat;

namespace {

using salus::test::temp_file;

// A catalog with round figures, so expected values can be written by hand.
Catalog test_catalog() {
  return Catalog::load(temp_file("catalog.json", R"({
  "format": "salus-catalog/1",
  "gpu": "test",
  "workloads": [
    {"name": "alpha_10", "persistent_mib": 100, "ephemeral_mib": 1000, "iter_ms": 10, "gpu_util": 0.5, "source": "t"},
    {"name": "alpha_20", "persistent_mib": 100, "ephemeral_mib": 2000, "iter_ms": 20, "gpu_util": 0.75, "source": "t"},
    {"name": "beta", "persistent_mib": 1.5, "ephemeral_mib": 2.25, "iter_ms": 0.5, "gpu_util": 1, "source": "t"}
  ]
})"));
}

const std::string kExamples = SALUS_SOURCE_DIR "/traces/examples/";

void check_job(const core::JobSpec& j, const std::string& id, const std::string& workload, core::TimeNs arrival,
               std::int64_t iterations, core::Bytes persistent, core::Bytes ephemeral, core::TimeNs iter_ns,
               std::int32_t util_ppm, std::int32_t order) {
  INFO("job ", id);
  CHECK(j.id == id);
  CHECK(j.workload == workload);
  CHECK(j.arrival_ns == arrival);
  CHECK(j.iterations == iterations);
  CHECK(j.persistent == persistent);
  CHECK(j.ephemeral == ephemeral);
  CHECK(j.iter_ns == iter_ns);
  CHECK(j.gpu_util_ppm == util_ppm);
  CHECK(j.trace_order == order);
}

void check_same_jobs(const Trace& a, const Trace& b) {
  REQUIRE(a.jobs.size() == b.jobs.size());
  for (std::size_t i = 0; i < a.jobs.size(); ++i) {
    const core::JobSpec& x = a.jobs[i];
    check_job(b.jobs[i], x.id, x.workload, x.arrival_ns, x.iterations, x.persistent, x.ephemeral, x.iter_ns,
              x.gpu_util_ppm, x.trace_order);
  }
  CHECK(a.whole_gpu == b.whole_gpu);
}

constexpr core::Bytes MiB = core::kMiB;
constexpr core::TimeNs ms = core::kNsPerMs;
constexpr core::TimeNs s = core::kNsPerS;

}  // namespace

TEST_CASE("native csv: hand.csv, explicit figures only") {
  const Trace t = load_trace(kExamples + "hand.csv", Catalog::load_default());
  CHECK(t.format == TraceFormat::kNative);
  CHECK(t.path == kExamples + "hand.csv");
  CHECK(t.notes.empty());
  REQUIRE(t.jobs.size() == 3);
  check_job(t.jobs[0], "a", "", 0, 10, 1000 * MiB, 4000 * MiB, 100 * ms, 1'000'000, 0);
  check_job(t.jobs[1], "b", "", 250 * ms, 2, 500 * MiB, 2000 * MiB, 50 * ms, 1'000'000, 1);
  check_job(t.jobs[2], "c", "", 500 * ms, 4, 2000 * MiB, 8000 * MiB, 200 * ms, 1'000'000, 2);
  CHECK(t.whole_gpu == std::vector<bool>{false, false, false});
}

TEST_CASE("native csv: catalog figures, per-field overrides, any column order, rounding to nearest") {
  const std::string path = temp_file("overrides.csv",
                                     "gpu_util,iter_ms,ephemeral_mib,persistent_mib,iterations,arrival_s,workload,job_id\n"
                                     ",,,,7,1.5,alpha_10,x\n"
                                     "0.25,15.5,,50,3,2,alpha_20,y\n"
                                     ",0.0004,1,0.5,1,0.0000000014,,z\n"
                                     "0.000002,,,,1,1e1,beta,w\n");
  const Trace t = load_trace(path, test_catalog());
  REQUIRE(t.jobs.size() == 4);
  check_job(t.jobs[0], "x", "alpha_10", 1500 * ms, 7, 100 * MiB, 1000 * MiB, 10 * ms, 500'000, 0);
  check_job(t.jobs[1], "y", "alpha_20", 2 * s, 3, 50 * MiB, 2000 * MiB, 15'500'000, 250'000, 1);
  check_job(t.jobs[2], "z", "", 1, 1, MiB / 2, MiB, 400, 1'000'000, 2);
  check_job(t.jobs[3], "w", "beta", 10 * s, 1, 3 * MiB / 2, 9 * MiB / 4, 500'000, 2, 3);
}

TEST_CASE("native csv: the workload column may be absent when all figures are explicit") {
  const std::string path = temp_file("no_workload.csv",
                                     "job_id,arrival_s,iterations,persistent_mib,ephemeral_mib,iter_ms,gpu_util\r\n"
                                     "\"quoted, id\",0,5,1,2,3,\r\n");
  const Trace t = load_trace(path, test_catalog());
  REQUIRE(t.jobs.size() == 1);
  check_job(t.jobs[0], "quoted, id", "", 0, 5, MiB, 2 * MiB, 3 * ms, 1'000'000, 0);
}

TEST_CASE("native csv and json: the optional priority column, 0 where absent or empty") {
  const std::string csv = temp_file("priority.csv",
                                    "job_id,workload,arrival_s,iterations,priority\n"
                                    "a,beta,0,1,3\nb,beta,0,1,-2\nc,beta,0,1,\n");
  const Trace t = load_trace(csv, test_catalog());
  REQUIRE(t.jobs.size() == 3);
  CHECK(t.jobs[0].priority == 3);
  CHECK(t.jobs[1].priority == -2);
  CHECK(t.jobs[2].priority == 0);
  const std::string js = temp_file("priority.json",
                                   R"([{"job_id": "a", "workload": "beta", "arrival_s": 0, "iterations": 1, "priority": 7},
                                       {"job_id": "b", "workload": "beta", "arrival_s": 0, "iterations": 1}])");
  const Trace u = load_trace(js, test_catalog());
  REQUIRE(u.jobs.size() == 2);
  CHECK(u.jobs[0].priority == 7);
  CHECK(u.jobs[1].priority == 0);
}

TEST_CASE("native csv: small.csv takes catalog figures and overrides them per field") {
  const Catalog c = Catalog::load_default();
  const Trace t = load_trace(kExamples + "small.csv", c);
  REQUIRE(t.jobs.size() == 8);
  const auto* resnet = c.find("resnet50_25");
  check_job(t.jobs[0], "j1", "resnet50_25", 0, 300, resnet->persistent, resnet->ephemeral, resnet->iter_ns,
            resnet->gpu_util_ppm, 0);
  check_job(t.jobs[3], "j4", "", 10 * s, 500, 800 * MiB, 2048 * MiB, 40 * ms, 600'000, 3);
  const auto* inception = c.find("inception3_25");
  check_job(t.jobs[5], "j6", "inception3_25", 25 * s, 200, inception->persistent, inception->ephemeral,
            inception->iter_ns, 850'000, 5);
  const auto* resnet50 = c.find("resnet50_50");
  check_job(t.jobs[6], "j7", "resnet50_50", 40 * s, 150, resnet50->persistent, 6000 * MiB, resnet50->iter_ns,
            resnet50->gpu_util_ppm, 6);
  check_job(t.jobs[7], "j8", "", 55 * s, 300, 256 * MiB, 1024 * MiB, 25'500'000, 1'000'000, 7);
}

TEST_CASE("json: small.json is the same trace as small.csv") {
  const Catalog c = Catalog::load_default();
  const Trace csv = load_trace(kExamples + "small.csv", c);
  const Trace json = load_trace(kExamples + "small.json", c);
  CHECK(json.format == TraceFormat::kJson);
  check_same_jobs(csv, json);
}

TEST_CASE("json: a top-level array, integer job ids, and null meaning use the catalog") {
  const std::string path = temp_file("array.json",
                                     "[\n"
                                     "  {\"job_id\": 7, \"workload\": \"alpha_10\", \"arrival_s\": 0.5, \"iterations\": 2,"
                                     " \"iter_ms\": null, \"gpu_util\": 1e-1},\n"
                                     "  {\"job_id\": \"b\", \"arrival_s\": 1, \"iterations\": 3, \"persistent_mib\": 0,"
                                     " \"ephemeral_mib\": 4096, \"iter_ms\": 12.25}\n"
                                     "]\n");
  const Trace t = load_trace(path, test_catalog());
  CHECK(t.format == TraceFormat::kJson);
  REQUIRE(t.jobs.size() == 2);
  check_job(t.jobs[0], "7", "alpha_10", 500 * ms, 2, 100 * MiB, 1000 * MiB, 10 * ms, 100'000, 0);
  check_job(t.jobs[1], "b", "", s, 3, 0, 4 * core::kGiB, 12'250'000, 1'000'000, 1);
}

TEST_CASE("tiresias: tiresias_small.csv maps models to the catalog and explains how") {
  const Catalog c = Catalog::load_default();
  const Trace t = load_trace(kExamples + "tiresias_small.csv", c);
  CHECK(t.format == TraceFormat::kTiresias);
  REQUIRE(t.jobs.size() == 10);
  CHECK(t.notes == std::vector<std::string>{
                       "tiresias: arrival from submit_time, GPUs from num_gpu, iterations from iterations; solo time = "
                       "duration (iteration time = duration / iterations, the remainder on the first iteration)",
                       "9 jobs take P, E and gpu_util from the catalog",
                       "7 jobs name models without batch size, mapped to the smallest batch variant in the catalog: "
                       "alexnet -> alexnet_25 (1 job), googlenet -> googlenet_25 (1 job), resnet152 -> resnet152_25 "
                       "(1 job), resnet50 -> resnet50_25 (1 job), superres -> superres_32 (1 job), vae -> vae_64 "
                       "(1 job), vgg16 -> vgg16_25 (1 job)",
                       "1 job names a model missing from the catalog (transformer): iteration time from "
                       "duration/iterations, memory assumed to be the whole GPU (P = 0, E = capacity, u = 1), as Salus "
                       "assumes for a job that sends no estimates (--assumed-memory FRACTION|SIZE sets another)",
                       "1 job has num_gpu > 1 (JobSpec::gpus)", "the interval column is ignored"});

  // The iteration time is the trace's duration / iterations: 25 s / 200 = 125 ms.
  const auto* resnet = c.find("resnet50_25");
  check_job(t.jobs[0], "1", "resnet50_25", 0, 200, resnet->persistent, resnet->ephemeral, 125 * ms,
            resnet->gpu_util_ppm, 0);
  const auto* vgg = c.find("vgg16_50");  // exact name; num_gpu = 2 is kept in gpus (folded by the programs)
  check_job(t.jobs[2], "3", "vgg16_50", 6 * s, 100, vgg->persistent, vgg->ephemeral, 800 * ms, vgg->gpu_util_ppm, 2);
  CHECK(t.jobs[2].gpus == 2);
  CHECK(t.jobs[0].gpus == 1);
  // transformer: 120 s / 400 iterations = 300 ms; memory unknown.
  check_job(t.jobs[4], "5", "transformer", 14 * s, 400, 0, 0, 300 * ms, 1'000'000, 4);
  CHECK(t.whole_gpu == std::vector<bool>{false, false, false, false, true, false, false, false, false, false});
}

TEST_CASE("tiresias: missing models, multi-GPU jobs and rounding of duration/iterations") {
  const std::string path = temp_file("tiresias.csv",
                                     "model_name,job_id,duration,submit_time,num_gpu,iterations\n"
                                     "foo,1,10,0,1,3\n"
                                     "bar,2,1,5.5,4,1000\n"
                                     "foo,3,0.000000002,7,1,4\n"
                                     "alpha,4,99,8,2,10\n");
  const Trace t = load_trace(path, test_catalog());
  REQUIRE(t.jobs.size() == 4);
  // 10 s / 3 iterations: 3333333333 ns each and the 1 ns left over on the first.
  check_job(t.jobs[0], "1", "foo", 0, 3, 0, 0, 3'333'333'333, 1'000'000, 0);
  CHECK(t.jobs[0].first_iter_extra_ns == 1);
  check_job(t.jobs[1], "2", "bar", 5500 * ms, 1000, 0, 0, 1 * ms, 1'000'000, 1);
  CHECK(t.jobs[1].gpus == 4);
  check_job(t.jobs[2], "3", "foo", 7 * s, 4, 0, 0, 1, 1'000'000, 2);  // 2 ns / 4 iterations: at least 1 ns
  CHECK(t.jobs[2].first_iter_extra_ns == 0);
  // A catalog model still takes the trace's duration: 99 s / 10; P, E and u from alpha_10.
  check_job(t.jobs[3], "4", "alpha_10", 8 * s, 10, 100 * MiB, 1000 * MiB, 9900 * ms, 500'000, 3);
  CHECK(t.whole_gpu == std::vector<bool>{true, true, true, false});
  CHECK(t.notes == std::vector<std::string>{
                       "tiresias: arrival from submit_time, GPUs from num_gpu, iterations from iterations; solo time = "
                       "duration (iteration time = duration / iterations, the remainder on the first iteration)",
                       "1 job takes P, E and gpu_util from the catalog",
                       "1 job names a model without batch size, mapped to the smallest batch variant in the catalog: "
                       "alpha -> alpha_10 (1 job)",
                       "3 jobs name models missing from the catalog (bar, foo): iteration time from duration/iterations, "
                       "memory assumed to be the whole GPU (P = 0, E = capacity, u = 1), as Salus assumes for a job "
                       "that sends no estimates (--assumed-memory FRACTION|SIZE sets another)",
                       "2 jobs have num_gpu > 1 (JobSpec::gpus)"});
}

TEST_CASE("jobs_for_capacity: whole-GPU jobs get E = capacity, others are unchanged") {
  const Trace t = load_trace(kExamples + "tiresias_small.csv", Catalog::load_default());
  const core::Bytes capacity = 16 * core::kGiB;
  const std::vector<core::JobSpec> jobs = jobs_for_capacity(t, capacity);
  REQUIRE(jobs.size() == t.jobs.size());
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    INFO("job ", i);
    if (t.whole_gpu[i]) {
      CHECK(jobs[i].persistent == 0);
      CHECK(jobs[i].ephemeral == capacity);
    } else {
      CHECK(jobs[i].persistent == t.jobs[i].persistent);
      CHECK(jobs[i].ephemeral == t.jobs[i].ephemeral);
    }
    CHECK(jobs[i].iter_ns == t.jobs[i].iter_ns);
    CHECK(jobs[i].id == t.jobs[i].id);
  }
  CHECK(jobs[4].ephemeral == capacity);
  CHECK(t.jobs[4].ephemeral == 0);  // the trace itself keeps the placeholder
  CHECK(jobs_for_capacity(t, 8 * core::kGiB)[4].ephemeral == 8 * core::kGiB);
}

TEST_CASE("trace: format names") {
  CHECK(std::string(salus::traces::to_string(TraceFormat::kNative)) == "native");
  CHECK(std::string(salus::traces::to_string(TraceFormat::kJson)) == "json");
  CHECK(std::string(salus::traces::to_string(TraceFormat::kTiresias)) == "tiresias");
}
