#include "traces/trace.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "traces/csv.h"
#include "traces/fields.h"
#include "traces/reader_steps.h"

namespace salus::traces {
namespace {

using nlohmann::json;
using namespace fields;

// ---- native records (CSV and JSON) ---------------------------------------------------------

enum Column { kJobId, kWorkload, kArrival, kIterations, kPersistent, kEphemeral, kIterMs, kGpuUtil, kPriority, kGpus, kColumnCount };
constexpr std::array<const char*, kColumnCount> kColumnNames = {
    "job_id", "workload", "arrival_s", "iterations", "persistent_mib", "ephemeral_mib", "iter_ms", "gpu_util", "priority", "gpus"};

std::string column_list() {
  std::string out;
  for (const char* name : kColumnNames) out += (out.empty() ? "" : ", ") + std::string(name);
  return out;
}

std::optional<Column> find_column(std::string_view name) {
  for (int c = 0; c < kColumnCount; ++c) {
    if (name == kColumnNames[static_cast<std::size_t>(c)]) return static_cast<Column>(c);
  }
  return std::nullopt;
}

// One record as text; an empty cell means "not given" (use the catalog where there is one).
using RawJob = std::array<std::string, kColumnCount>;

core::JobSpec make_job(const RawJob& raw, const Catalog& catalog, const Place& place) {
  core::JobSpec job;
  job.id = raw[kJobId];
  if (job.id.empty()) place.fail("job_id is missing");
  job.workload = raw[kWorkload];
  const WorkloadProfile* profile = nullptr;
  if (!job.workload.empty()) {
    profile = catalog.find(job.workload);
    if (!profile) place.fail(catalog.unknown_workload(job.workload));
  }
  if (raw[kArrival].empty()) place.fail("arrival_s is missing");
  job.arrival_ns = seconds_field(place, "arrival_s", raw[kArrival], false);
  if (raw[kIterations].empty()) place.fail("iterations is missing");
  job.iterations = count_field(place, "iterations", raw[kIterations]);

  std::vector<std::string> missing;
  auto mib = [&](Column c, core::Bytes from_catalog) -> core::Bytes {
    const std::string name = kColumnNames[c];
    if (raw[c].empty()) {
      if (!profile) missing.push_back(name);
      return from_catalog;
    }
    const double v = decimal_field(place, name, raw[c], ">= 0", [](double x) { return x >= 0; });
    const std::optional<core::Bytes> bytes = core::bytes_from_mib(v);
    if (!bytes) place.fail(name + " is too large, got " + fields::quoted(raw[c]));
    return *bytes;
  };
  job.persistent = mib(kPersistent, profile ? profile->persistent : 0);
  job.ephemeral = mib(kEphemeral, profile ? profile->ephemeral : 0);
  if (raw[kIterMs].empty()) {
    if (!profile) missing.push_back("iter_ms");
    job.iter_ns = profile ? profile->iter_ns : 1;
  } else {
    const double ms = decimal_field(place, "iter_ms", raw[kIterMs], "> 0", [](double x) { return x > 0; });
    const std::optional<core::TimeNs> ns = core::ns_from_ms(ms);
    if (!ns) place.fail("iter_ms is too large, got " + fields::quoted(raw[kIterMs]));
    if (*ns <= 0) place.fail("iter_ms rounds to 0 ns, got " + fields::quoted(raw[kIterMs]));
    job.iter_ns = *ns;
  }
  if (!missing.empty()) {
    std::string list;
    for (const std::string& m : missing) list += (list.empty() ? "" : ", ") + m;
    place.fail("no workload, so persistent_mib, ephemeral_mib and iter_ms are all required (missing: " + list + ")");
  }
  if (!raw[kGpuUtil].empty()) job.gpu_util_ppm = util_field(place, raw[kGpuUtil]);
  else if (profile) job.gpu_util_ppm = profile->gpu_util_ppm;
  else job.gpu_util_ppm = 1'000'000;
  // The catalog's first-iteration extra goes with the catalog's iteration time: a row that gives
  // its own iter_ms has no measured first iteration.
  if (profile && raw[kIterMs].empty()) job.first_iter_extra_ns = profile->first_iter_extra_ns;
  if (profile) job.switch_ns = profile->switch_ns;
  // Optional, for the priority policy; 0 when absent or empty.
  if (!raw[kPriority].empty()) job.priority = priority_field(place, raw[kPriority]);
  // Optional: GPUs the job runs on at once (a cluster gang-schedules it); 1 when absent.
  if (!raw[kGpus].empty()) {
    const std::int64_t gpus = count_field(place, "gpus", raw[kGpus]);
    if (gpus > std::numeric_limits<std::int32_t>::max()) place.fail("gpus is too large, got " + fields::quoted(raw[kGpus]));
    job.gpus = static_cast<std::int32_t>(gpus);
  }
  check_solo_time(place, job);
  return job;
}

// `rows` is positioned after the header.
void load_native_csv(Trace& trace, const CsvRow& header, CsvReader& rows, const Catalog& catalog) {
  const std::string& path = trace.path;
  std::array<int, kColumnCount> index;
  index.fill(-1);
  std::vector<std::string> extra;
  for (std::size_t i = 0; i < header.fields.size(); ++i) {
    const std::string& name = header.fields[i];
    if (name.empty()) throw core::InputError(core::at(path, header.line, "column " + std::to_string(i + 1) + " has no name"));
    const std::optional<Column> c = find_column(name);
    if (!c) {
      // Kept as a note, not an error; a likely misspelling of a column is named.
      extra.push_back(name);
      continue;
    }
    if (index[*c] >= 0) throw core::InputError(core::at(path, header.line, "duplicate column '" + name + "'"));
    index[*c] = static_cast<int>(i);
  }
  for (Column c : {kJobId, kArrival, kIterations}) {
    if (index[c] < 0) {
      const std::string near = core::nearest_name(kColumnNames[c], extra);
      throw core::InputError(core::at(path, header.line, std::string("missing required column '") + kColumnNames[c] + "'" +
                                                              (near.empty() ? "" : " (did you misspell it as '" + near + "'?)")));
    }
  }
  for (const std::string& name : extra) {
    trace.notes.push_back("column '" + name + "' is not a native column, ignored (valid: " + column_list() + ")" +
                          core::did_you_mean(name, kColumnNames));
  }
  if (index[kWorkload] < 0 && (index[kPersistent] < 0 || index[kEphemeral] < 0 || index[kIterMs] < 0)) {
    throw core::InputError(core::at(
        path, header.line, "missing column 'workload' (without it, persistent_mib, ephemeral_mib and iter_ms are all required)"));
  }
  FirstSeen first;
  RawJob raw;  // reused: assigning a cell keeps the string's capacity, so no allocation per cell
  for (std::size_t r = 0; rows.next(); ++r) {
    check_field_count(path, header, rows);
    for (int c = 0; c < kColumnCount; ++c) {
      const int i = index[static_cast<std::size_t>(c)];
      if (i >= 0) raw[static_cast<std::size_t>(c)].assign(rows.fields()[static_cast<std::size_t>(i)]);
    }
    const Place place{path, rows.line(), r};
    first.prefetch(raw[kJobId]);
    add_job(trace, make_job(raw, catalog, place), place, first);
  }
  if (trace.jobs.empty() && trace.streamed == 0) throw core::InputError(core::at(path, header.line, "no jobs"));
}

void load_json(Trace& trace, std::string_view text, const Catalog& catalog) {
  const std::string& path = trace.path;
  const json doc = parse_json(text, path);
  const json* records = nullptr;
  std::string key;
  if (doc.is_array()) {
    records = &doc;
  } else if (doc.is_object()) {
    for (const auto& item : doc.items()) {
      if (item.key() != "jobs") throw core::InputError(core::at(path, 1, "unknown key '" + text_excerpt(item.key()) + "' (valid: jobs)"));
    }
    if (!doc.contains("jobs") || !doc.at("jobs").is_array()) {
      throw core::InputError(core::at(path, 1, "missing \"jobs\" array"));
    }
    records = &doc.at("jobs");
    key = "jobs";
  } else {
    throw core::InputError(core::at(path, 1, "expected an array of jobs or an object with a \"jobs\" array"));
  }
  if (records->empty()) throw core::InputError(core::at(path, 1, "no jobs"));

  const std::vector<long> lines = json_array_element_lines(text, key);
  FirstSeen first;
  std::set<std::string> unknown_keys;
  for (std::size_t r = 0; r < records->size(); ++r) {
    const json& record = (*records)[r];
    const Place place{path, lines.size() == records->size() ? lines[r] : 0, r};
    if (!record.is_object()) place.fail("a job must be a JSON object, got " + json_excerpt(record));
    RawJob raw;
    for (const auto& item : record.items()) {
      const std::optional<Column> c = find_column(item.key());
      if (!c) {
        unknown_keys.insert(item.key());  // a note, as for an unknown CSV column
        continue;
      }
      const json& v = item.value();
      std::string& cell = raw[*c];
      if (v.is_null()) continue;  // like an empty CSV cell
      if (*c == kJobId) {
        if (v.is_string()) cell = v.get<std::string>();
        else if (v.is_number_integer()) cell = v.dump();
        else place.fail("job_id must be a string or an integer, got " + json_excerpt(v));
      } else if (*c == kWorkload) {
        if (!v.is_string()) place.fail("workload must be a string, got " + json_excerpt(v));
        cell = v.get<std::string>();
      } else {
        if (!v.is_number()) place.fail(std::string(kColumnNames[*c]) + " must be a JSON number, got " + json_excerpt(v));
        cell = v.dump();
      }
    }
    add_job(trace, make_job(raw, catalog, place), place, first);
  }
  for (const std::string& key : unknown_keys) {
    trace.notes.push_back("key '" + key + "' is not a native key, ignored (valid: " + column_list() + ")" +
                          core::did_you_mean(key, kColumnNames));
  }
}

// ---- Tiresias -----------------------------------------------------------------------------

// `rows` is positioned after the header.
void load_tiresias(Trace& trace, const CsvRow& header, CsvReader& rows, const Catalog& catalog, const LoadOptions& options) {
  using namespace steps;
  const TiresiasHeader h = map_tiresias_header(trace.path, header);
  TiresiasCounts counts;
  FirstSeen first;
  for (std::size_t r = 0; rows.next(); ++r) {
    check_field_count(trace.path, header, rows);
    const Place place{trace.path, rows.line(), r};
    TiresiasRow row = read_tiresias_row(place, h, rows);
    const WorkloadProfile* profile = tiresias_profile(catalog, row.model, counts);
    const bool whole_gpu = tiresias_times(row, profile, h.counted(), options, counts);
    unique_tiresias_id(row.job, trace.jobs, first, counts);
    if (row.job.gpus > 1) ++counts.multi_gpu;
    check_solo_time(place, row.job);
    add_job(trace, std::move(row.job), place, first);
    trace.whole_gpu.back() = whole_gpu;
  }
  if (trace.jobs.empty()) throw core::InputError(core::at(trace.path, header.line, "no jobs"));
  note_tiresias(trace, h, counts, options);
}

// ---- readers of the table ------------------------------------------------------------------

void reserve_jobs(Trace& trace, TraceInput& input) {
  // A job per row at most, the rows counted by a first pass of the reader itself: growing the
  // vector instead would hold the old and the new array at once (twice the jobs' memory at the
  // last doubling). Counting stops at the first error, which the second pass reports in its
  // place; a count no allocation can hold is not reserved (the rows then fail, or grow the vector).
  std::size_t rows = 0;
  try {
    CsvReader counter = input.rows();
    while (counter.next()) ++rows;
  } catch (const core::InputError&) {
  }
  try {
    trace.jobs.reserve(rows);
    trace.whole_gpu.reserve(rows);
    trace.memory_share_ppm.reserve(rows);
  } catch (const std::bad_alloc&) {
    return;
  }
  advise_huge_pages(trace.jobs.data(), trace.jobs.capacity() * sizeof(core::JobSpec));
}

void read_native(Trace& trace, TraceInput& input, const Catalog& catalog, const LoadOptions&) {
  if (trace.sink == nullptr) reserve_jobs(trace, input);
  CsvReader rows = input.rows();
  if (!rows.next()) throw core::InputError(core::at(trace.path, 1, "no jobs"));
  const CsvRow header{rows.line(), {rows.fields().begin(), rows.fields().end()}};
  load_native_csv(trace, header, rows, catalog);
}

void read_json(Trace& trace, TraceInput& input, const Catalog& catalog, const LoadOptions&) {
  load_json(trace, input.text(core::TextBound::kJson), catalog);
}

void read_tiresias(Trace& trace, TraceInput& input, const Catalog& catalog, const LoadOptions& options) {
  reserve_jobs(trace, input);
  CsvReader rows = input.rows();
  if (!rows.next()) throw core::InputError(core::at(trace.path, 1, "no jobs"));
  const CsvRow header{rows.line(), {rows.fields().begin(), rows.fields().end()}};
  load_tiresias(trace, header, rows, catalog, options);
}

constexpr core::RegistryEntry<TraceFormatInfo> kFormats[] = {
    {"native", "Salus CSV: job_id, arrival_s, iterations, workload and/or persistent_mib, ephemeral_mib, iter_ms",
     {read_native, TraceFormat::kNative,
      "arrival = arrival_s; duration = iterations x iter_ms (or the workload's catalog iteration time); GPUs = gpus "
      "(default 1); memory = persistent_mib, ephemeral_mib (or the catalog's)"}},
    {"json", "the native records as a JSON array, or {\"jobs\": [...]}",
     {read_json, TraceFormat::kJson, "as native, one JSON object per job"}},
    {"tiresias", "Tiresias simulator CSV: job_id,num_gpu,submit_time,iterations,model_name,duration,interval "
                 "(or without iterations, as tf_job.csv)",
     {read_tiresias, TraceFormat::kTiresias,
      "arrival = submit_time; duration = duration (iteration time = duration / iterations; --durations catalog: "
      "the catalog's iteration time); no iterations column: duration / the catalog's iteration time of the model, "
      "else / --assumed-iter-ms; GPUs = num_gpu; memory and utilisation from the catalog by model_name "
      "(smallest batch variant when it names none), else --assumed-memory (default the whole GPU); a repeated job_id "
      "made unique with #n; interval ignored"}},
    {"gavel", "Gavel trace: headerless TSV of 10 fields, job_type ... arrival_time (physical_cluster), or 7 "
              "(simulation traces, traces/msr)",
     {read_gavel, TraceFormat::kGavel,
      "arrival = arrival_time; iterations = total_steps; iteration time = 1 / the steps per second of "
      "(job_type, scale_factor) in --throughputs (Gavel's JSON, worker type v100 unless --worker-type), else the "
      "catalog's entry for the model and batch size in job_type; GPUs = scale_factor; priority = priority_weight "
      "rounded (7 fields: job_type, command, num_steps_arg, needs_data_dir, total_steps, arrival_time, "
      "scale_factor; priority 0); memory from the catalog, else --assumed-memory (default the whole GPU); command, "
      "working_directory, num_steps_arg, needs_data_dir and SLO ignored"}},
    {"philly", "Microsoft Philly cluster_job_log: JSON list of jobs with attempts",
     {read_philly, TraceFormat::kPhilly,
      "arrival = submitted_time (seconds after the earliest in the file); duration = the sum over attempts of "
      "end_time - start_time; GPUs = the gpus listed in the last attempt's detail; memory --assumed-memory (default "
      "the whole GPU), u = 1; "
      "iterations of --assumed-iter-ms; jobs that never ran (no attempt with both times) skipped with a count"}},
    {"helios", "Helios / Venus cluster_log.csv: job_id,user,vc,gpu_num,...,submit_time,...,duration",
     {read_helios, TraceFormat::kHelios,
      "arrival = submit_time (seconds after the earliest in the file; a number or YYYY-MM-DD HH:MM:SS); duration = "
      "duration; GPUs = gpu_num; memory --assumed-memory (default the whole GPU), u = 1; iterations of --assumed-iter-ms; CPU-only jobs "
      "(gpu_num 0) and jobs of duration 0 skipped with a count"}},
    {"alibaba", "Alibaba PAI GPU-sharing pods (cluster-trace-gpu-v2023): name,...,gpu_milli,...,scheduled_time",
     {read_alibaba, TraceFormat::kAlibaba,
      "arrival = creation_time (seconds after the earliest in the file); duration = deletion_time - scheduled_time; GPUs = num_gpu; memory = gpu_milli / "
      "1000 of the GPU (E, P = 0) and utilisation = gpu_milli / 1000 for a pod sharing one GPU; pods of whole "
      "GPUs (gpu_milli 1000, or num_gpu > 1) give no memory figure: --assumed-memory (default the whole GPU), u = 1; "
      "iterations of --assumed-iter-ms; CPU-only pods (num_gpu 0) and pods "
      "never scheduled or not deleted skipped with a count"}},
    {"acme", "Acme (Shanghai AI Lab) trace_seren.csv / trace_kalos.csv: job_id,user,node_num,gpu_num,...,type,state,"
             "submit_time,...,duration,queue,gpu_time",
     {read_acme, TraceFormat::kAcme,
      "arrival = submit_time (seconds after the earliest in the file; dates with a UTC offset taken in UTC); duration "
      "= duration; GPUs = gpu_num; memory --assumed-memory (default the whole GPU), u = 1; iterations of "
      "--assumed-iter-ms; every end state replayed for its duration; CPU-only jobs (gpu_num 0), jobs with no or a "
      "zero duration skipped with a count"}},
    {"lucid", "Lucid / Venus cluster_full_log.csv: job_id,user,vc,jobname,gpu_num,cpu_num,state,submit_time,duration,"
              "...,gpu_util,gmem_util,gmem",
     {read_lucid, TraceFormat::kLucid,
      "arrival = submit_time (seconds after the earliest); duration = duration; GPUs = gpu_num; memory E = gmem MiB "
      "(P = 0) and u = gpu_util / 100 where gmem > 0, else --assumed-memory (default the whole GPU), u = 1; "
      "iterations of --assumed-iter-ms; CPU-only jobs and jobs of duration 0 skipped with a count"}},
    {"pai2020", "Alibaba PAI 2020 pai_task_table (cluster-trace-gpu-v2020), headerless: job_name,task_name,inst_num,"
                "status,start_time,end_time,plan_cpu,plan_mem,plan_gpu,gpu_type",
     {read_pai2020, TraceFormat::kPai2020,
      "one job per task; arrival = start_time (the task's launch, seconds after the earliest); duration = end_time - "
      "start_time; GPUs = inst_num x ceil(plan_gpu / 100), a gang; plan_gpu < 100: memory E = plan_gpu % of the GPU "
      "(P = 0), u = plan_gpu %, else --assumed-memory (default the whole GPU), u = 1; iterations of "
      "--assumed-iter-ms; CPU tasks and tasks without both times skipped with a count; pai_job_table and "
      "pai_instance_table refused (no GPU demand)"}},
    {"pollux", "Pollux / AdaptDL workload CSV: name,time,application,num_replicas,batch_size",
     {read_pollux, TraceFormat::kPollux,
      "arrival = time; GPUs = num_replicas; memory, utilisation and iteration time from the catalog entry for "
      "application (imagenet: resnet50, deepspeech2: speech, else its own name) nearest to batch_size, else the "
      "--assumed-memory (default the whole GPU) and --assumed-iter-ms; solo time = a duration column (seconds), which the layout lacks and a "
      "replay needs (Pollux derives it from its application profiles): a trace without one is refused"}},
};

constexpr core::Registry<TraceFormatInfo> kFormatRegistry("trace format", kFormats);

// The header's cells, for recognising a CSV.
bool has_columns(const CsvRow& header, std::initializer_list<std::string_view> names) {
  for (std::string_view n : names) {
    if (std::find(header.fields.begin(), header.fields.end(), n) == header.fields.end()) return false;
  }
  return true;
}

// A splitmix64 step: a job's sampling draw from (seed, position) alone.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// --window and --sample: keeps the selected jobs, renumbered in file order.
void select_jobs(Trace& trace, const LoadOptions& options) {
  const bool window = options.window_start || options.window_end;
  const bool sample = options.sample < 1.0;
  if (!window && !sample) return;
  const core::TimeNs start = options.window_start.value_or(0);
  const core::TimeNs end = options.window_end.value_or(core::kNever);
  // Threshold on 53 random bits: keep when draw < sample * 2^53.
  const auto threshold = static_cast<std::uint64_t>(options.sample * 9007199254740992.0);
  std::size_t kept = 0;
  const std::size_t total = trace.jobs.size();
  for (std::size_t i = 0; i < total; ++i) {
    const core::JobSpec& j = trace.jobs[i];
    if (window && (j.arrival_ns < start || j.arrival_ns >= end)) continue;
    if (sample && (mix(options.seed ^ mix(i)) >> 11) >= threshold) continue;
    if (kept != i) {
      trace.jobs[kept] = std::move(trace.jobs[i]);
      trace.whole_gpu[kept] = trace.whole_gpu[i];
      trace.memory_share_ppm[kept] = trace.memory_share_ppm[i];
    }
    trace.jobs[kept].trace_order = static_cast<std::int32_t>(kept);
    if (window) {
      trace.jobs[kept].arrival_ns -= start;
      if (!trace.jobs[kept].requests_ns().empty()) {
        std::vector<core::TimeNs> requests = trace.jobs[kept].requests_ns();
        for (core::TimeNs& r : requests) r -= start;
        trace.jobs[kept].set_requests_ns(std::move(requests));
      }
    }
    ++kept;
  }
  trace.jobs.resize(kept);
  trace.whole_gpu.resize(kept);
  trace.memory_share_ppm.resize(kept);
  std::string what;
  if (window) {
    auto secs = [](core::TimeNs t) {
      char text[40];
      std::snprintf(text, sizeof text, "%.9g s", core::to_seconds(t));
      return std::string(text);
    };
    what = "arriving in [" + secs(start) + ", " + (options.window_end ? secs(end) : std::string("end")) +
           "), shifted to start at 0";
  }
  if (sample) {
    char text[96];
    std::snprintf(text, sizeof text, "%ssampled with probability %g (seed %llu)", window ? ", " : "", options.sample,
                  static_cast<unsigned long long>(options.seed));
    what += text;
  }
  trace.notes.push_back("kept " + std::to_string(kept) + " of " + std::to_string(total) + " jobs: " + what);
  if (kept == 0) throw core::InputError(trace.path + ": no jobs left after --window/--sample");
}

}  // namespace

// ---- Tiresias' steps (reader_steps.h) -------------------------------------------------------

namespace steps {

TiresiasHeader map_tiresias_header(const std::string& path, const CsvRow& header) {
  TiresiasHeader h;
  h.index.fill(-1);
  for (std::size_t i = 0; i < header.fields.size(); ++i) {
    const std::string& name = header.fields[i];
    const auto it = std::find(kTiresiasNames.begin(), kTiresiasNames.end(), std::string_view(name));
    if (it == kTiresiasNames.end()) {
      h.extra.push_back("'" + name + "'");
      continue;
    }
    const auto c = static_cast<std::size_t>(it - kTiresiasNames.begin());
    if (h.index[c] >= 0) throw core::InputError(core::at(path, header.line, "duplicate column '" + name + "'"));
    h.index[c] = static_cast<int>(i);
  }
  // Tiresias' duration-only traces (simulator/tf_job.csv: job_id, num_gpu, submit_time,
  // start_time, duration, model_size, aggr_interval, model_name, model_scale) have no iterations:
  // the iteration time is then the catalog's for the model, else --assumed-iter-ms, and the job
  // runs duration / that many iterations (the remainder on the first), so its solo time is the
  // trace's duration.
  for (std::size_t c = 0; c < kTColumnCount; ++c) {
    if (c != kTInterval && c != kTIterations && h.index[c] < 0) {
      throw core::InputError(
          core::at(path, header.line, std::string("missing required column '") + kTiresiasNames[c] + "' in a Tiresias trace"));
    }
  }
  return h;
}

TiresiasRow read_tiresias_row(const Place& place, const TiresiasHeader& h, const CsvReader& rows) {
  auto cell = [&](TiresiasColumn c) { return rows.fields()[static_cast<std::size_t>(h.index[c])]; };
  TiresiasRow row;
  core::JobSpec& job = row.job;
  job.id = cell(kTJobId);
  if (job.id.empty()) place.fail("job_id is missing");
  const std::int64_t num_gpu = count_field(place, "num_gpu", cell(kTNumGpu));
  if (num_gpu > std::numeric_limits<std::int32_t>::max()) place.fail("num_gpu is too large, got " + quoted(cell(kTNumGpu)));
  job.gpus = static_cast<std::int32_t>(num_gpu);
  job.arrival_ns = seconds_field(place, "submit_time", cell(kTSubmit), false);
  if (h.counted()) job.iterations = count_field(place, "iterations", cell(kTIterations));
  row.model = cell(kTModel);
  if (row.model.empty()) place.fail("model_name is missing");
  row.duration = seconds_field(place, "duration", cell(kTDuration), true);
  return row;
}

const WorkloadProfile* tiresias_profile(const Catalog& catalog, const std::string& model, TiresiasCounts& counts) {
  const WorkloadProfile* profile = catalog.find(model);
  if (!profile) {
    profile = catalog.find_model(model);
    if (profile) {
      auto& m = counts.mapped[model];
      m.first = profile->name;
      ++m.second;
    }
  }
  return profile;
}

bool tiresias_times(TiresiasRow& row, const WorkloadProfile* profile, bool counted, const LoadOptions& options,
                    TiresiasCounts& counts) {
  core::JobSpec& job = row.job;
  if (profile) {
    ++counts.from_catalog;
    job.workload = profile->name;
    job.persistent = profile->persistent;
    job.ephemeral = profile->ephemeral;
    job.gpu_util_ppm = profile->gpu_util_ppm;
    job.switch_ns = profile->switch_ns;
    if (!counted) job.iterations = std::max<std::int64_t>(1, row.duration / profile->iter_ns);
    if (options.durations == DurationSource::kTrace) {
      set_duration(job, row.duration, job.iterations);
    } else {
      job.iter_ns = profile->iter_ns;
      job.first_iter_extra_ns = profile->first_iter_extra_ns;
    }
    return false;
  }
  ++counts.missing_jobs;
  counts.missing_models.insert(row.model);
  job.workload = row.model;
  job.persistent = 0;
  job.ephemeral = 0;  // jobs_for_capacity sets E = capacity
  job.gpu_util_ppm = 1'000'000;
  if (counted) {
    set_duration(job, row.duration, job.iterations);
  } else {
    set_duration_assumed(job, row.duration, options.assumed_iter_ns);
  }
  return true;
}

// Tiresias' simulator keeps jobs by their order, not by job_id (tf_job.csv gives both of its
// jobs the id 10): a repeated id is made unique as "10#2", "10#3", ... and said in a note.
void unique_tiresias_id(core::JobSpec& job, const std::vector<core::JobSpec>& jobs, const FirstSeen& first,
                        TiresiasCounts& counts) {
  if (first.find(jobs, job.id) < 0) return;
  const std::string base = job.id;
  for (std::int64_t n = 2;; ++n) {
    job.id = base + "#" + std::to_string(n);
    if (first.find(jobs, job.id) < 0) break;
  }
  if (counts.renamed.size() < 3) counts.renamed.push_back(base + " -> " + job.id);
  ++counts.renamed_count;
}

void note_tiresias(Trace& trace, const TiresiasHeader& h, const TiresiasCounts& counts, const LoadOptions& options) {
  const bool trace_durations = options.durations == DurationSource::kTrace;
  if (h.counted()) {
    trace.notes.push_back("tiresias: arrival from submit_time, GPUs from num_gpu, iterations from iterations; " +
                          std::string(trace_durations ? "solo time = duration (iteration time = duration / iterations, "
                                                        "the remainder on the first iteration)"
                                                      : "iteration time from the catalog, duration ignored "
                                                        "(--durations catalog)"));
  } else {
    char assumed[64];
    std::snprintf(assumed, sizeof assumed, "%g ms", static_cast<double>(options.assumed_iter_ns) / 1e6);
    trace.notes.push_back(std::string("tiresias (duration-only, no iterations column): arrival from submit_time, GPUs "
                                      "from num_gpu; iterations = duration / the catalog's iteration time of the model, "
                                      "else duration / ") +
                          assumed + " (--assumed-iter-ms), at least 1" +
                          (trace_durations ? ", the remainder on the first, so each solo time equals duration"
                                           : "; iteration time from the catalog (--durations catalog)"));
  }
  const std::int64_t renamed_count = counts.renamed_count, from_catalog = counts.from_catalog;
  const std::int64_t missing_jobs = counts.missing_jobs, multi_gpu = counts.multi_gpu;
  if (renamed_count > 0) {
    trace.notes.push_back(std::to_string(renamed_count) + plural(renamed_count, " job repeats", " jobs repeat") +
                          " an earlier job_id (Tiresias keeps jobs by their order): made unique with #n (" +
                          joined(counts.renamed) + (renamed_count > 3 ? ", ..." : "") + ")");
  }
  if (from_catalog > 0) {
    trace.notes.push_back(std::to_string(from_catalog) + plural(from_catalog, " job takes", " jobs take") +
                          (trace_durations ? " P, E and gpu_util from the catalog"
                                           : " P, E, iteration time and gpu_util from the catalog (their duration is ignored)"));
  }
  if (!counts.mapped.empty()) {
    std::int64_t n = 0;
    std::string list;
    for (const auto& [model, variant] : counts.mapped) {
      n += variant.second;
      list += (list.empty() ? "" : ", ") + model + " -> " + variant.first + " (" + std::to_string(variant.second) +
              plural(variant.second, " job)", " jobs)");
    }
    trace.notes.push_back(std::to_string(n) + plural(n, " job names a model", " jobs name models") +
                          " without batch size, mapped to the smallest batch variant in the catalog: " + list);
  }
  if (missing_jobs > 0) {
    std::string list;
    for (const std::string& m : counts.missing_models) list += (list.empty() ? "" : ", ") + m;
    trace.notes.push_back(std::to_string(missing_jobs) + plural(missing_jobs, " job names ", " jobs name ") +
                          (counts.missing_models.size() == 1 ? "a model" : "models") + " missing from the catalog (" +
                          list + "): iteration time from duration/iterations, memory assumed to be " +
                          options.assumed_memory.describe());
  }
  if (multi_gpu > 0) {
    trace.notes.push_back(std::to_string(multi_gpu) + plural(multi_gpu, " job has", " jobs have") +
                          " num_gpu > 1 (JobSpec::gpus)");
  }
  if (h.index[kTInterval] >= 0) trace.notes.push_back("the interval column is ignored");
  if (!h.extra.empty()) trace.notes.push_back("columns not in the Tiresias layout, ignored: " + joined(h.extra));
}

}  // namespace steps

const char* to_string(TraceFormat f) {
  switch (f) {
    case TraceFormat::kNative: return "native";
    case TraceFormat::kJson: return "json";
    case TraceFormat::kTiresias: return "tiresias";
    case TraceFormat::kGavel: return "gavel";
    case TraceFormat::kPhilly: return "philly";
    case TraceFormat::kHelios: return "helios";
    case TraceFormat::kAlibaba: return "alibaba";
    case TraceFormat::kPollux: return "pollux";
    case TraceFormat::kAcme: return "acme";
    case TraceFormat::kLucid: return "lucid";
    case TraceFormat::kPai2020: return "pai2020";
    case TraceFormat::kUnknown: return "unknown";
  }
  return "unknown";
}

const core::Registry<TraceFormatInfo>& trace_format_registry() { return kFormatRegistry; }

TraceFormat detect_format(std::string_view text) {
  std::size_t i = text.substr(0, 3) == "\xEF\xBB\xBF" ? 3 : 0;
  while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n')) ++i;
  if (i < text.size() && (text[i] == '{' || text[i] == '[')) {
    // Philly's job log is a list of objects with "submitted_time" and "attempts"; the native JSON
    // has neither key.
    const std::string_view head = text.substr(0, 1 << 16);
    return head.find("\"submitted_time\"") != std::string_view::npos ? TraceFormat::kPhilly : TraceFormat::kJson;
  }
  // The first line that is not blank or a comment.
  std::size_t start = i;
  while (start < text.size() && text[start] == '#') {
    const std::size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) return TraceFormat::kNative;
    start = nl + 1;
    while (start < text.size() && (text[start] == ' ' || text[start] == '\r' || text[start] == '\n')) ++start;
  }
  const std::size_t nl = text.find('\n', start);
  const std::string_view first = text.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
  const auto tabs = std::count(first.begin(), first.end(), '\t');
  if (tabs == 9 || tabs == 6) return TraceFormat::kGavel;
  CsvRow header;
  try {
    CsvReader rows(first, "");
    if (!rows.next()) return TraceFormat::kNative;
    header.fields.assign(rows.fields().begin(), rows.fields().end());
  } catch (const core::InputError&) {
    return TraceFormat::kNative;  // the native reader reports the quoting error with its line
  }
  if (has_columns(header, {"num_gpu", "submit_time", "model_name"})) return TraceFormat::kTiresias;
  if (has_columns(header, {"gpu_num", "submit_time", "duration", "gmem", "gpu_util"})) return TraceFormat::kLucid;
  if (has_columns(header, {"gpu_num", "submit_time", "duration", "type", "gpu_time"})) return TraceFormat::kAcme;
  if (has_columns(header, {"gpu_num", "submit_time", "duration"})) return TraceFormat::kHelios;
  // A job log of the Helios family missing its duration: the reader names the missing column
  // (the native reader would name arrival_s).
  if (has_columns(header, {"gpu_num", "submit_time"})) return TraceFormat::kHelios;
  if (has_columns(header, {"gpu_milli", "num_gpu"})) return TraceFormat::kAlibaba;  // the reader refuses a list without times
  if (has_columns(header, {"application", "num_replicas", "batch_size"})) return TraceFormat::kPollux;
  if (has_columns(header, {"job_name", "task_name", "inst_num", "plan_gpu"})) return TraceFormat::kPai2020;
  // Alibaba PAI 2020's tables have no header: a status among the documented ones in field 4 of a
  // row of 10 (pai_task_table), 6 (pai_job_table) or 9 (pai_instance_table) fields.
  if (const std::size_t n = header.fields.size(); (n == 10 || n == 6 || n == 9) && n > 4) {
    const std::string& status = header.fields[n == 9 ? 5 : 3];
    for (const char* s : {"Terminated", "Failed", "Running", "Waiting", "Interrupted", "Ready"}) {
      if (status == s) return TraceFormat::kPai2020;
    }
  }
  for (const char* native : kColumnNames) {
    if (has_columns(header, {native})) return TraceFormat::kNative;
  }
  return TraceFormat::kUnknown;
}

namespace {

// The first line of `text` as a reader sees it, cut to 100 characters, for "format not recognised".
std::string first_line_of(std::string_view text) {
  std::size_t start = text.substr(0, 3) == "\xEF\xBB\xBF" ? 3 : 0;
  while (start < text.size() && (text[start] == '\n' || text[start] == '\r' || text[start] == ' ')) ++start;
  std::size_t end = text.find('\n', start);
  if (end == std::string_view::npos) end = text.size();
  std::string line(text.substr(start, std::min<std::size_t>(end - start, 100)));
  if (!line.empty() && line.back() == '\r') line.pop_back();
  for (char& c : line) {
    if (c == '\t') c = ' ';
    if (static_cast<unsigned char>(c) < 0x20) c = '?';
  }
  return line + (end - start > 100 ? "..." : "");
}

}  // namespace

namespace {

// `head` is the input's beginning (all of it in memory, or the first bytes of a file): the format
// is found from it.
Trace load(TraceInput& input, std::string_view head, const Catalog& catalog, const LoadOptions& options,
           const JobSink* sink = nullptr) {
  const std::string& path = input.path();
  Trace trace;
  trace.path = path;
  const TraceFormatInfo* info = nullptr;
  if (options.format.empty()) {
    const TraceFormat f = detect_format(head);
    if (f == TraceFormat::kUnknown) {
      std::string known;
      for (const auto& e : kFormatRegistry.entries()) known += (known.empty() ? "" : ", ") + std::string(e.name);
      throw core::InputError(core::at(path, 1, "format not recognised: its first line reads '" + first_line_of(head) +
                                                   "'; known formats: " + known +
                                                   " (`salus-trace formats` lists their columns; --format NAME reads "
                                                   "the file as one of them)"));
    }
    for (const auto& e : kFormatRegistry.entries()) {
      if (e.factory.format == f) info = &e.factory;
    }
  } else {
    const auto* e = kFormatRegistry.find(options.format);
    if (!e) throw core::InputError("--format: " + kFormatRegistry.unknown(options.format));
    info = &e->factory;
  }
  trace.format = info->format;
  trace.assumed_memory = options.assumed_memory;
  // Only the native reader hands jobs over as it reads them: the others come back to their jobs
  // (arrivals shifted to the first, ids made unique), and --window and --sample choose afterwards.
  const bool stream = sink != nullptr && trace.format == TraceFormat::kNative && !options.window_start &&
                      !options.window_end && options.sample >= 1.0;
  if (stream) trace.sink = sink;
  info->read(trace, input, catalog, options);
  trace.sink = nullptr;
  select_jobs(trace, options);
  if (sink != nullptr && !stream) {
    for (const core::JobSpec& j : trace.jobs) (*sink)(j);
    trace.streamed = static_cast<std::int64_t>(trace.jobs.size());
    trace.jobs = {};
    trace.whole_gpu = {};
    trace.memory_share_ppm = {};
  }
  return trace;
}

}  // namespace

Trace load_trace_text(std::string_view text, const std::string& path, const Catalog& catalog, const LoadOptions& options) {
  check_utf8(text, path);
  TraceInput input(text, path);
  return load(input, text, catalog, options);
}

namespace {

Trace load_file(const std::string& path, const Catalog& catalog, const LoadOptions& options, const JobSink* sink) {
  // The file is not read whole here: its first bytes tell the format, and the format's reader
  // reads on (CSV row by row, in a window of a few times the bound on a line).
  core::InputFile file(path, "trace file");
  std::string head;
  const bool whole = core::append_from(file, head, kMaxLineBytes + (std::size_t{1} << 16)) < kMaxLineBytes + (std::size_t{1} << 16);
  const std::string_view checked = whole ? std::string_view(head) : std::string_view(head).substr(0, core::complete_utf8_prefix(head));
  check_utf8(checked, path);
  TraceInput input(file);
  return load(input, head, catalog, options, sink);
}

}  // namespace

Trace load_trace(const std::string& path, const Catalog& catalog, const LoadOptions& options) {
  return load_file(path, catalog, options, nullptr);
}

Trace load_trace_streamed(const std::string& path, const Catalog& catalog, const LoadOptions& options,
                          const JobSink& sink) {
  return load_file(path, catalog, options, &sink);
}

// The scheduler rounds every E up to its alignment (core::kAlignment, 256 bytes in every run) and
// the capacity down. A share's E is rounded down to it here, so that shares of one GPU that add up
// to at most the whole of it (Alibaba pods of 300, 300 and 400 gpu_milli) fit on it together, as
// they do in the cluster the trace comes from; rounded to the byte, three of them would need up to
// 256 bytes each more than the GPU has.
core::Bytes share_of(core::Bytes capacity, std::int32_t share_ppm) {
  const auto exact = static_cast<core::Bytes>(static_cast<core::Int128>(capacity) * share_ppm / 1'000'000);
  return exact / core::kAlignment * core::kAlignment;
}

std::vector<core::JobSpec> jobs_for_capacity(const Trace& trace, core::Bytes capacity) {
  Trace copy = trace;
  return jobs_for_capacity(std::move(copy), capacity);
}

std::vector<core::JobSpec> jobs_for_capacity(Trace&& trace, core::Bytes capacity) {
  return jobs_for_capacity(std::move(trace), [capacity](const core::JobSpec&) { return capacity; });
}

std::vector<core::JobSpec> jobs_for_capacity(Trace&& trace,
                                             const std::function<core::Bytes(const core::JobSpec&)>& capacity_of) {
  std::vector<core::JobSpec> jobs = std::move(trace.jobs);
  trace.jobs.clear();
  for (std::size_t i = 0; i < jobs.size() && i < trace.whole_gpu.size(); ++i) {
    if (trace.whole_gpu[i]) {
      const core::Bytes capacity = capacity_of(jobs[i]);
      const std::int32_t share = i < trace.memory_share_ppm.size() ? trace.memory_share_ppm[i] : 1'000'000;
      jobs[i].persistent = 0;
      jobs[i].ephemeral = share >= 1'000'000 ? trace.assumed_memory.for_capacity(capacity) : share_of(capacity, share);
    }
  }
  // They described the jobs now moved out (5 bytes a job, held through the run otherwise).
  trace.whole_gpu = {};
  trace.memory_share_ppm = {};
  return jobs;
}

core::Bytes AssumedMemory::for_capacity(core::Bytes capacity) const {
  if (bytes > 0) return std::min(bytes, capacity);
  if (share_ppm >= 1'000'000) return capacity;
  return share_of(capacity, share_ppm);
}

namespace {

// A size as --assumed-memory reads it back, exactly: "8GiB", "1536MiB", "1000000B".
std::string size_text(core::Bytes b) {
  if (b % core::kGiB == 0) return std::to_string(b / core::kGiB) + "GiB";
  if (b % core::kMiB == 0) return std::to_string(b / core::kMiB) + "MiB";
  return std::to_string(b) + "B";
}

}  // namespace

std::string AssumedMemory::describe() const {
  if (bytes > 0) {
    const std::string size = size_text(bytes);
    return size + " of the GPU's memory (P = 0, E = " + size + ", at most the capacity, u = 1; --assumed-memory " +
           size + ")";
  }
  if (share_ppm >= 1'000'000) {
    return "the whole GPU (P = 0, E = capacity, u = 1), as Salus assumes for a job that sends no estimates "
           "(--assumed-memory FRACTION|SIZE sets another)";
  }
  char text[160];
  const double f = static_cast<double>(share_ppm) / 1e6;
  std::snprintf(text, sizeof text, "%g of the GPU's memory (P = 0, E = %g x capacity, u = 1; --assumed-memory %g)", f, f, f);
  return text;
}

AssumedMemory parse_assumed_memory(const std::string& text) {
  const std::string what = "--assumed-memory: ";
  AssumedMemory m;
  if (const std::optional<double> v = parse_decimal(text)) {
    // A plain number is a fraction of the GPU's memory; a size needs its unit.
    if (!(*v > 0 && *v <= 1)) {
      throw core::InputError(what + "a fraction of the GPU's memory must be in (0, 1], got '" + text +
                             "' (a size needs a unit, e.g. 8GiB)");
    }
    m.share_ppm = static_cast<std::int32_t>(std::llround(*v * 1e6));
    if (m.share_ppm <= 0) throw core::InputError(what + "'" + text + "' is below one part per million of the GPU");
    return m;
  }
  std::string why;
  const std::optional<core::Bytes> size = core::parse_size(text, &why);
  if (!size) {
    throw core::InputError(what + "expected a fraction in (0, 1] of the GPU's memory or a size with a unit (8GiB), got '" +
                           text + "' (" + why + ")");
  }
  if (*size <= 0) throw core::InputError(what + "a size must be positive, got '" + text + "'");
  m.bytes = *size;
  return m;
}

std::int64_t fold_onto_one_gpu(std::vector<core::JobSpec>& jobs) {
  std::int64_t folded = 0;
  for (core::JobSpec& j : jobs) {
    if (j.gpus <= 1) continue;
    ++folded;
    const core::TimeNs limit = std::numeric_limits<core::TimeNs>::max() / j.gpus;
    // Saturates rather than overflows; check_solo_time bounded iterations * iter_ns at load.
    j.iter_ns = j.iter_ns > limit ? limit : j.iter_ns * j.gpus;
    j.first_iter_extra_ns = j.first_iter_extra_ns > limit ? limit : j.first_iter_extra_ns * j.gpus;
    if (j.iterations > std::numeric_limits<core::TimeNs>::max() / j.iter_ns) {
      throw core::InputError("job " + j.id + ": iteration time * gpus does not fit in 64-bit nanoseconds");
    }
    j.gpus = 1;
  }
  return folded;
}

std::vector<core::JobSpec> scale_time(std::vector<core::JobSpec> jobs, double factor) {
  if (!(factor >= 1.0) || !std::isfinite(factor)) throw core::InputError("--time-scale: must be a number >= 1");
  for (core::JobSpec& j : jobs) {
    j.arrival_ns = static_cast<core::TimeNs>(std::llround(static_cast<double>(j.arrival_ns) / factor));
    j.iterations = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(static_cast<double>(j.iterations) / factor)));
  }
  return jobs;
}

std::pair<core::TimeNs, core::TimeNs> parse_window(const std::string& text) {
  const std::size_t colon = text.find(':');
  if (colon == std::string::npos) throw core::InputError("--window: expected START:END in seconds, got '" + text + "'");
  auto part = [&](const std::string& s, const char* which) {
    std::string why;
    const std::optional<core::TimeNs> ns = core::parse_duration(s, &why);
    if (!ns) throw core::InputError(std::string("--window: ") + which + ": " + why);
    return *ns;
  };
  const core::TimeNs start = part(text.substr(0, colon), "START");
  const core::TimeNs end = part(text.substr(colon + 1), "END");
  if (end <= start) throw core::InputError("--window: END must be after START, got '" + text + "'");
  return {start, end};
}

}  // namespace salus::traces
