// Memory of jobs a trace gives no memory figure for (--assumed-memory, LoadOptions::assumed_memory)
// and the shares of one GPU that Alibaba's gpu_milli gives: what E, P and u each job gets, the
// notes that say so, and the refusals of bad values with their exact text.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "core/errors.h"
#include "traces/catalog.h"
#include "traces/trace.h"
#include "support/import.h"

namespace core = salus::core;
using salus::traces::AssumedMemory;
using salus::traces::Catalog;
using salus::traces::jobs_for_capacity;
using salus::traces::load_trace;
using salus::traces::LoadOptions;
using salus::traces::parse_assumed_memory;
using salus::traces::Trace;

namespace {

const std::string& kDir = salus::test::kImportDir;
constexpr core::Bytes GiB = core::kGiB;

const Catalog& catalog() { return salus::test::default_catalog(); }
using salus::test::has_note;

LoadOptions assuming(const std::string& text) {
  LoadOptions o;
  o.assumed_memory = parse_assumed_memory(text);
  return o;
}

}  // namespace

TEST_CASE("assumed memory: a fraction or a size, refused with the option named and what is wrong") {
  CHECK(parse_assumed_memory("1") == AssumedMemory{});  // the default: the whole GPU
  CHECK(parse_assumed_memory("0.5").share_ppm == 500'000);
  CHECK(parse_assumed_memory("0.5").bytes == 0);
  CHECK(parse_assumed_memory("0.000001").share_ppm == 1);
  CHECK(parse_assumed_memory("8GiB").bytes == 8 * GiB);
  CHECK(parse_assumed_memory("1536MiB").bytes == 1536 * core::kMiB);

  struct Case {
    std::string text, error;
  };
  const Case cases[] = {
      {"0", "--assumed-memory: a fraction of the GPU's memory must be in (0, 1], got '0' (a size needs a unit, e.g. 8GiB)"},
      {"1.5", "--assumed-memory: a fraction of the GPU's memory must be in (0, 1], got '1.5' (a size needs a unit, e.g. "
              "8GiB)"},
      {"-0.5", "--assumed-memory: a fraction of the GPU's memory must be in (0, 1], got '-0.5' (a size needs a unit, "
               "e.g. 8GiB)"},
      {"8", "--assumed-memory: a fraction of the GPU's memory must be in (0, 1], got '8' (a size needs a unit, e.g. 8GiB)"},
      {"1e-7", "--assumed-memory: '1e-7' is below one part per million of the GPU"},
      {"0GiB", "--assumed-memory: a size must be positive, got '0GiB'"},
      {"8XB", "--assumed-memory: expected a fraction in (0, 1] of the GPU's memory or a size with a unit (8GiB), got "
              "'8XB' (unknown size unit 'XB' (valid: B, KiB, MiB, GiB, TiB, KB, MB, GB, TB))"},
      {"half", "--assumed-memory: expected a fraction in (0, 1] of the GPU's memory or a size with a unit (8GiB), got "
               "'half' ('half' does not start with a number)"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.text);
    CHECK_THROWS_WITH_AS(parse_assumed_memory(c.text), c.error.c_str(), core::InputError);
  }
}

TEST_CASE("assumed memory: E of a fraction or a size for a GPU, a size capped at its capacity") {
  CHECK(AssumedMemory{}.for_capacity(16 * GiB) == 16 * GiB);
  CHECK(parse_assumed_memory("0.5").for_capacity(16 * GiB) == 8 * GiB);
  CHECK(parse_assumed_memory("0.5").for_capacity(4 * GiB) == 2 * GiB);
  CHECK(parse_assumed_memory("6GiB").for_capacity(16 * GiB) == 6 * GiB);
  CHECK(parse_assumed_memory("6GiB").for_capacity(4 * GiB) == 4 * GiB);
  // A fraction is rounded down to 256 bytes like a trace's share: 0.3 x 16 GiB = 5153960755.2 B.
  CHECK(parse_assumed_memory("0.3").for_capacity(16 * GiB) == 5'153'960'704);
}

TEST_CASE("assumed memory: shares of one GPU that add up to all of it fit on it together") {
  // Rounded to the byte, 300 + 300 + 400 gpu_milli of 16 GiB took 512 bytes more than the GPU
  // once the scheduler rounded each E up to 256 bytes; rounded down to 256 they fit.
  const core::Bytes cap = 16 * GiB;
  const core::Bytes a = salus::traces::share_of(cap, 300'000), b = salus::traces::share_of(cap, 400'000);
  CHECK(a % 256 == 0);
  CHECK(b % 256 == 0);
  CHECK(a + a + b <= cap);
  CHECK(a > cap * 3 / 10 - 256);
  CHECK(b > cap * 4 / 10 - 256);
  CHECK(salus::traces::share_of(cap, 250'000) == 4 * GiB);
}

TEST_CASE("assumed memory: alibaba pods of whole GPUs take it with u = 1, a pod sharing a GPU keeps its gpu_milli") {
  // alibaba.csv keeps pod 0 (1 GPU, gpu_milli 1000), pod 3 (gpu_milli 250) and pod 4 (8 GPUs).
  const Trace whole = load_trace(kDir + "alibaba.csv", catalog());
  CHECK(whole.whole_gpu == std::vector<bool>{true, true, true});
  CHECK(whole.memory_share_ppm == std::vector<std::int32_t>{1'000'000, 250'000, 1'000'000});
  CHECK(has_note(whole, "2 jobs have no memory figure: assumed the whole GPU (P = 0, E = capacity, u = 1), as Salus "
                        "assumes for a job that sends no estimates (--assumed-memory FRACTION|SIZE sets another)"));

  const Trace half = load_trace(kDir + "alibaba.csv", catalog(), assuming("0.5"));
  CHECK(has_note(half, "2 jobs have no memory figure: assumed 0.5 of the GPU's memory (P = 0, E = 0.5 x capacity, "
                       "u = 1; --assumed-memory 0.5)"));
  CHECK(has_note(half, "1 pod shares one GPU: memory E = gpu_milli / 1000 of the GPU (P = 0) and utilisation "
                       "u = gpu_milli / 1000"));
  std::vector<core::JobSpec> jobs = jobs_for_capacity(half, 16 * GiB);
  REQUIRE(jobs.size() == 3);
  CHECK(jobs[0].ephemeral == 8 * GiB);
  CHECK(jobs[0].persistent == 0);
  CHECK(jobs[0].gpu_util_ppm == 1'000'000);
  CHECK(jobs[1].ephemeral == 4 * GiB);  // its own share, whatever is assumed for the others
  CHECK(jobs[1].gpu_util_ppm == 250'000);
  CHECK(jobs[2].ephemeral == 8 * GiB);
  CHECK(jobs[2].gpus == 8);
  CHECK(jobs[2].gpu_util_ppm == 1'000'000);

  const Trace sized = load_trace(kDir + "alibaba.csv", catalog(), assuming("6GiB"));
  CHECK(has_note(sized, "2 jobs have no memory figure: assumed 6GiB of the GPU's memory (P = 0, E = 6GiB, at most the "
                        "capacity, u = 1; --assumed-memory 6GiB)"));
  jobs = jobs_for_capacity(sized, 16 * GiB);
  CHECK(jobs[0].ephemeral == 6 * GiB);
  CHECK(jobs[1].ephemeral == 4 * GiB);
  jobs = jobs_for_capacity(sized, 4 * GiB);  // capped at the capacity
  CHECK(jobs[0].ephemeral == 4 * GiB);
  CHECK(jobs[1].ephemeral == 1 * GiB);
}

TEST_CASE("assumed memory: every format's jobs with no memory figure take it, the others keep theirs") {
  struct Case {
    std::string file;
    LoadOptions options;
    std::string note;
  };
  LoadOptions gavel = assuming("0.25");
  gavel.throughputs = kDir + "gavel_throughputs.json";
  const std::string assumed = "0.25 of the GPU's memory (P = 0, E = 0.25 x capacity, u = 1; --assumed-memory 0.25)";
  const Case cases[] = {
      {"tiresias_fifo.csv", assuming("0.25"),
       "1 job names a model missing from the catalog (transformer): iteration time from duration/iterations, memory "
       "assumed to be " + assumed},
      {"gavel.tsv", gavel, "1 job's model is not in the catalog: memory assumed " + assumed},
      {"philly.json", assuming("0.25"), "2 jobs have no memory figure: assumed " + assumed},
      {"helios.csv", assuming("0.25"), "2 jobs have no memory figure: assumed " + assumed},
      {"alibaba.csv", assuming("0.25"), "2 jobs have no memory figure: assumed " + assumed},
      {"pollux.csv", assuming("0.25"), "1 job has no memory figure: assumed " + assumed},
  };
  for (const Case& c : cases) {
    CAPTURE(c.file);
    LoadOptions plain = c.options;
    plain.assumed_memory = {};
    const Trace before = load_trace(kDir + c.file, catalog(), plain);
    const Trace after = load_trace(kDir + c.file, catalog(), c.options);
    CHECK(has_note(after, c.note));
    const std::vector<core::JobSpec> a = jobs_for_capacity(before, 16 * GiB);
    const std::vector<core::JobSpec> b = jobs_for_capacity(after, 16 * GiB);
    REQUIRE(a.size() == b.size());
    int assumed_jobs = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
      CAPTURE(i);
      const bool no_figure = after.whole_gpu[i] && after.memory_share_ppm[i] == 1'000'000;
      assumed_jobs += no_figure ? 1 : 0;
      CHECK(b[i].ephemeral == (no_figure ? 4 * GiB : a[i].ephemeral));
      CHECK(a[i].ephemeral == (no_figure ? 16 * GiB : b[i].ephemeral));
      CHECK(b[i].persistent == a[i].persistent);
      CHECK(b[i].gpu_util_ppm == a[i].gpu_util_ppm);
      if (no_figure) CHECK(b[i].gpu_util_ppm == 1'000'000);
    }
    CHECK(assumed_jobs > 0);
  }
}
