// The whole-process paths around the simulator core: reading a trace and writing the outputs.
//
//   ./build/tests/bench/io_bench --benchmark_counters_tabular=true
//
// Inputs are made here with the project's own generator, as scripts/bench-process.sh makes them
// with salus-trace: 200k jobs at 85 % offered load (seed 1, mean inter-arrival 326 s against a
// mean solo time of 277 s) for the parse and summary paths, and the 1,000-job default trace under
// FAIR for the --out files (one lane time-shared by every admitted job: the largest timeline; the
// run does not plan, so its timeline has a row per run, as salus-sim --timeline full writes).
//   CsvReader     tokenising the trace's text (no job built)
//   CsvReaderStreamed  the CSV reader streaming the trace's file (as load_trace reads it)
//   LoadTrace     traces::load_trace: read, tokenise, parse numbers, look up the catalog
//   WriteSummary  the streamed summary JSON of a FIFO run (write_summary_json)
//   BuildSummary  the same summary as an nlohmann document and dump(2), what salus-sim did before
//   WriteRunFiles the --out CSVs of a FAIR run (timeline off and runs)
//   GenerateHelios/N  salus-trace generate --shape helios --jobs N: drawing the jobs, and the native
//                 CSV written in pieces to a sink that only counts them (no file); N = 3360000 is
//                 the full Helios-scale trace
#include <benchmark/benchmark.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <unistd.h>

#include "run/output.h"
#include "run/sim_runner.h"
#include "traces/catalog.h"
#include "traces/csv.h"
#include "traces/generator.h"
#include "traces/trace.h"

namespace {

using namespace salus;
namespace fs = std::filesystem;

const traces::Catalog& catalog() {
  static const traces::Catalog c = traces::Catalog::load(traces::Catalog::default_path());
  return c;
}

fs::path scratch_dir() {
  static const fs::path dir = [] {
    const fs::path d = fs::temp_directory_path() / ("salus_io_bench_" + std::to_string(::getpid()));
    fs::create_directories(d);
    return d;
  }();
  return dir;
}

// Generated once per process and written to a scratch file.
const std::string& trace_path(int jobs) {
  static std::string large, small;
  std::string& path = jobs == 1000 ? small : large;
  if (path.empty()) {
    traces::GeneratorOptions opt;
    opt.jobs = jobs;
    opt.seed = 1;
    if (jobs != 1000) opt.mean_interarrival_s = 326;  // 85 % load; 1,000 jobs: the default, overloaded
    const std::string csv = traces::to_native_csv(traces::generate_trace(catalog(), opt), "io_bench");
    path = (scratch_dir() / ("trace_" + std::to_string(jobs) + ".csv")).string();
    run::write_text_file(path, csv);
  }
  return path;
}

// Every row of the reader split into its fields: the rows, the fields' bytes kept live.
std::int64_t read_rows(traces::CsvReader& reader) {
  std::int64_t rows = 0;
  std::size_t bytes = 0;
  while (reader.next()) {
    ++rows;
    for (std::string_view f : reader.fields()) bytes += f.size();
  }
  benchmark::DoNotOptimize(bytes);
  return rows;
}

void BM_CsvReader(benchmark::State& state) {
  const std::string text = traces::read_text_file(trace_path(200'000), "trace", traces::TextBound::kLines);
  std::int64_t rows = 0;
  for (auto _ : state) {
    traces::CsvReader reader(text, trace_path(200'000));
    rows = read_rows(reader);
  }
  state.counters["rows"] = static_cast<double>(rows);
  state.SetBytesProcessed(static_cast<std::int64_t>(text.size()) * state.iterations());
}

// The streaming CsvReader from the file (as load_trace reads a CSV trace): reading and splitting
// rows in a window, with the bounds on fields and rows, before any field is parsed.
void BM_CsvReaderStreamed(benchmark::State& state) {
  std::int64_t rows = 0;
  for (auto _ : state) {
    salus::core::InputFile file(trace_path(200'000), "trace");
    traces::CsvReader reader(file);
    rows = read_rows(reader);
  }
  state.counters["rows"] = static_cast<double>(rows);
}

void BM_LoadTrace(benchmark::State& state) {
  std::size_t jobs = 0;
  for (auto _ : state) {
    const traces::Trace t = traces::load_trace(trace_path(200'000), catalog());
    jobs = t.jobs.size();
    benchmark::DoNotOptimize(t.jobs.data());
  }
  state.counters["jobs/s"] = benchmark::Counter(static_cast<double>(jobs) * state.iterations(),
                                                benchmark::Counter::kIsRate);
}

struct Runs {
  std::vector<core::JobSpec> jobs;
  std::vector<run::PolicyRun> runs;
};

const Runs& runs_of(const std::string& policy, int n, bool timeline) {
  static std::vector<std::pair<std::string, Runs>> cache;
  const std::string key = policy + std::to_string(n) + (timeline ? "t" : "");
  for (const auto& [k, r] : cache) {
    if (k == key) return r;
  }
  Runs r;
  r.jobs = traces::jobs_for_capacity(traces::load_trace(trace_path(n), catalog()), 16 * core::kGiB);
  run::SimConfig cfg;
  cfg.record_timeline = timeline;
  r.runs.push_back(run::simulate(r.jobs, policy, cfg));
  cache.emplace_back(key, std::move(r));
  return cache.back().second;
}

nlohmann::json header() {
  nlohmann::json h;
  h["tool"] = "io_bench";
  h["notes"] = nlohmann::json::array();
  return h;
}

void BM_WriteSummary(benchmark::State& state) {
  const Runs& r = runs_of("fifo", 200'000, false);
  const std::string path = (scratch_dir() / "summary.json").string();
  for (auto _ : state) run::write_summary_json(path, header(), r.jobs, r.runs);
  state.SetBytesProcessed(static_cast<std::int64_t>(fs::file_size(path)) * state.iterations());
}

void BM_BuildSummary(benchmark::State& state) {
  const Runs& r = runs_of("fifo", 200'000, false);
  const std::string path = (scratch_dir() / "summary_doc.json").string();
  for (auto _ : state) {
    nlohmann::json s = header();
    s["results"] = run::results_json(r.jobs, r.runs);
    run::write_text_file(path, s.dump(2) + "\n");
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(fs::file_size(path)) * state.iterations());
}

void BM_WriteRunFiles(benchmark::State& state, run::TimelineMode mode) {
  const Runs& r = runs_of("fair", 1000, true);
  const fs::path dir = scratch_dir() / "out";
  for (auto _ : state) run::write_run_files(dir.string(), r.jobs, r.runs, mode);
  std::uintmax_t bytes = 0;
  for (const auto& e : fs::directory_iterator(dir)) bytes += e.file_size();
  state.counters["MB written"] = static_cast<double>(bytes) / 1e6;
  state.counters["segments"] = static_cast<double>(r.runs[0].outcome.segments.size());
  state.counters["memory rows"] = static_cast<double>(r.runs[0].outcome.memory.size());
}

}  // namespace

void BM_GenerateHelios(benchmark::State& state) {
  traces::GeneratorOptions typed;
  typed.jobs = static_cast<int>(state.range(0));
  const traces::GeneratorOptions opt =
      traces::shaped_options("helios", typed, [](std::string_view name) { return name == "jobs"; });
  std::size_t bytes = 0;
  double load = 0;
  for (auto _ : state) {
    const traces::GeneratedTrace trace = traces::generate_trace(catalog(), opt);
    bytes = 0;
    traces::write_trace_csv(trace, "io_bench", traces::TraceLayout::kNative,
                            [&bytes](std::string_view piece) { bytes += piece.size(); });
    load = traces::offered_load(trace).load;
    benchmark::DoNotOptimize(bytes);
  }
  state.counters["jobs/s"] = benchmark::Counter(static_cast<double>(opt.jobs) * static_cast<double>(state.iterations()),
                                                benchmark::Counter::kIsRate);
  state.counters["MB"] = static_cast<double>(bytes) / 1e6;
  state.counters["load"] = load;
}

BENCHMARK(BM_CsvReader)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CsvReaderStreamed)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_LoadTrace)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_WriteSummary)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BuildSummary)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_WriteRunFiles, timeline_off, run::TimelineMode::kOff)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_WriteRunFiles, timeline_runs, run::TimelineMode::kRuns)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GenerateHelios)->Arg(100'000)->Arg(3'360'000)->Unit(benchmark::kMillisecond);

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  std::error_code ec;
  fs::remove_all(scratch_dir(), ec);
  return 0;
}
