// Importers for the public cluster traces: Gavel, Microsoft Philly, Helios/Venus, Alibaba PAI
// GPU-sharing (cluster-trace-gpu-v2023) and Pollux. Each maps its layout to JobSpecs as the format
// table in trace.cpp states, and says in Trace::notes what it took from where and what it assumed.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "traces/csv.h"
#include "traces/fields.h"
#include "traces/trace.h"

namespace salus::traces {
namespace {

using nlohmann::json;
using namespace fields;

// ---- shared pieces -------------------------------------------------------------------------

// "ResNet-50" -> "resnet50": lower-case letters and digits only, as the catalog names its models.
std::string model_key(std::string_view name) {
  std::string out;
  for (char c : name) {
    if (c >= 'A' && c <= 'Z') out += static_cast<char>(c - 'A' + 'a');
    else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) out += c;
  }
  return out;
}

// The catalog's "<model>_<batch>" entry whose batch is nearest to `batch` (ties: the smaller), or
// the model's smallest variant when batch <= 0; nullptr when the catalog has no such model.
const WorkloadProfile* find_batch(const Catalog& catalog, const std::vector<std::string>& names, const std::string& model,
                                  std::int64_t batch) {
  if (batch <= 0) return catalog.find_model(model);
  const std::string prefix = model + "_";
  const WorkloadProfile* best = nullptr;
  std::int64_t best_distance = 0;
  for (const std::string& name : names) {
    if (!name.starts_with(prefix)) continue;
    const std::string_view suffix = std::string_view(name).substr(prefix.size());
    if (suffix.empty() || suffix.size() > 9 || !std::all_of(suffix.begin(), suffix.end(), is_digit)) continue;
    const std::int64_t b = std::stoll(std::string(suffix));
    const std::int64_t d = b > batch ? b - batch : batch - b;
    const WorkloadProfile* p = catalog.find(name);
    if (!best || d < best_distance || (d == best_distance && b < std::stoll(best->name.substr(prefix.size())))) {
      best = p;
      best_distance = d;
    }
  }
  return best;
}

void use_profile(core::JobSpec& job, const WorkloadProfile& p) {
  job.workload = p.name;
  job.persistent = p.persistent;
  job.ephemeral = p.ephemeral;
  job.gpu_util_ppm = p.gpu_util_ppm;
}

std::int32_t gpus_field(const Place& place, const std::string& name, std::string_view text) {
  const std::int64_t n = count_field(place, name, text);
  if (n > std::numeric_limits<std::int32_t>::max()) place.fail(name + " is too large, got " + quoted(text));
  return static_cast<std::int32_t>(n);
}

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

// "YYYY-MM-DD HH:MM:SS" (or with 'T') as seconds since 1970 in ns, or a plain number of seconds.
std::optional<core::TimeNs> parse_time(std::string_view s) {
  if (const std::optional<double> v = parse_decimal(s)) {
    if (!(*v >= 0)) return std::nullopt;
    return core::ns_from_seconds(*v);
  }
  if (s.size() != 19 || s[4] != '-' || s[7] != '-' || (s[10] != ' ' && s[10] != 'T') || s[13] != ':' || s[16] != ':') {
    return std::nullopt;
  }
  auto num = [&](std::size_t at, std::size_t len) -> int {
    int v = 0;
    for (std::size_t i = at; i < at + len; ++i) {
      if (!is_digit(s[i])) return -1;
      v = v * 10 + (s[i] - '0');
    }
    return v;
  };
  const int y = num(0, 4), mo = num(5, 2), d = num(8, 2), h = num(11, 2), mi = num(14, 2), se = num(17, 2);
  if (y < 0 || mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 || h > 23 || mi < 0 || mi > 59 || se < 0 || se > 60) {
    return std::nullopt;
  }
  const std::int64_t days = days_from_civil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d));
  if (days < 0) return std::nullopt;  // before 1970: not a trace's clock
  const std::int64_t seconds = ((days * 24 + h) * 60 + mi) * 60 + se;  // < 4e11 for years up to 9999
  if (seconds > std::numeric_limits<core::TimeNs>::max() / core::kNsPerS) return std::nullopt;  // past 2262
  return seconds * core::kNsPerS;
}

core::TimeNs time_field(const Place& place, const std::string& name, std::string_view text) {
  const std::optional<core::TimeNs> t = parse_time(text);
  if (!t) place.fail(name + " must be seconds >= 0 or a date YYYY-MM-DD HH:MM:SS (1970 to 2262), got " + quoted(text));
  return *t;
}

// Arrivals on an absolute clock become seconds after the earliest one.
void shift_to_first_arrival(Trace& trace, const char* column) {
  if (trace.jobs.empty()) return;
  core::TimeNs first = core::kNever;
  for (const core::JobSpec& j : trace.jobs) first = std::min(first, j.arrival_ns);
  for (core::JobSpec& j : trace.jobs) j.arrival_ns -= first;
  trace.notes.push_back(std::string("arrival = ") + column + " minus the earliest of the jobs read (" +
                        std::to_string(first / core::kNsPerS) + " s on the trace's clock)");
}

// A CSV header mapped to the columns a format reads: index[c] is the position of names[c] or -1;
// the names of other columns are kept for a note.
template <std::size_t N>
std::array<int, N> map_header(const std::string& path, const CsvRow& header, const std::array<const char*, N>& names,
                              const std::vector<std::size_t>& required, const char* format, std::vector<std::string>* extra) {
  std::array<int, N> index;
  index.fill(-1);
  for (std::size_t i = 0; i < header.fields.size(); ++i) {
    const std::string& name = header.fields[i];
    const auto it = std::find_if(names.begin(), names.end(), [&](const char* n) { return name == n; });
    if (it == names.end()) {
      extra->push_back("'" + name + "'");
      continue;
    }
    const auto c = static_cast<std::size_t>(it - names.begin());
    if (index[c] >= 0) throw core::InputError(core::at(path, header.line, "duplicate column '" + name + "'"));
    index[c] = static_cast<int>(i);
  }
  for (std::size_t c : required) {
    if (index[c] < 0) {
      throw core::InputError(core::at(path, header.line, std::string("missing required column '") + names[c] + "' in " +
                                                              format + " trace"));
    }
  }
  return index;
}

void note_extra(Trace& trace, const std::vector<std::string>& extra) {
  if (!extra.empty()) trace.notes.push_back("columns not read, kept as they are: " + joined(extra));
}

void note_skipped(Trace& trace, std::int64_t n, const std::string& why) {
  if (n > 0) trace.notes.push_back("skipped " + std::to_string(n) + plural(n, " job", " jobs") + ": " + why);
}

void note_assumed(Trace& trace, std::int64_t whole, const LoadOptions& options) {
  if (whole > 0) {
    trace.notes.push_back(std::to_string(whole) + plural(whole, " job has", " jobs have") +
                          " no memory figure: assumed " + options.assumed_memory.describe());
  }
  char text[320];
  std::snprintf(text, sizeof text,
                "no iteration counts in the trace: iterations of %g ms assumed (--assumed-iter-ms), the remainder "
                "on the first, so each solo time equals the trace's duration",
                static_cast<double>(options.assumed_iter_ns) / 1e6);
  trace.notes.push_back(text);
}

CsvRow read_header(CsvReader& rows, const std::string& path) {
  if (!rows.next()) throw core::InputError(core::at(path, 1, "no jobs"));
  return CsvRow{rows.line(), {rows.fields().begin(), rows.fields().end()}};
}

void require_jobs(const Trace& trace, long line) {
  if (trace.jobs.empty()) throw core::InputError(core::at(trace.path, line, "no jobs"));
}

}  // namespace

// ---- Gavel ---------------------------------------------------------------------------------

void read_gavel(Trace& trace, std::string_view text, const Catalog& catalog, const LoadOptions& options) {
  const std::string& path = trace.path;
  // Throughputs: {worker_type: {"('<job_type>', <scale_factor>)": {"null": steps_per_s, ...}}}.
  json throughputs;
  std::string worker;
  if (!options.throughputs.empty()) {
    const std::string tp_text = read_text_file(options.throughputs, "throughputs file");
    const json doc = parse_json(tp_text, options.throughputs);
    if (!doc.is_object() || doc.empty()) {
      throw core::InputError(core::at(options.throughputs, 1, "expected an object {worker_type: {job: {\"null\": steps/s}}}"));
    }
    std::vector<std::string> workers;
    for (const auto& item : doc.items()) workers.push_back(item.key());
    worker = options.worker_type;
    if (worker.empty()) worker = doc.contains("v100") ? "v100" : workers.front();
    if (!doc.contains(worker)) {
      throw core::InputError(options.throughputs + ": unknown worker type '" + worker + "' (valid: " + joined(workers) + ")");
    }
    throughputs = doc.at(worker);
    if (!throughputs.is_object()) {
      throw core::InputError(core::at(options.throughputs, 1, "worker type '" + worker + "' must map to an object"));
    }
  }
  const std::vector<std::string> names = catalog.names();
  std::int64_t from_throughputs = 0, from_catalog = 0, whole = 0;
  std::map<std::string, std::string> mapped;  // job_type -> catalog entry
  FirstSeen first;
  std::size_t pos = 0;
  long line = 0;
  std::size_t r = 0;
  while (pos < text.size()) {
    ++line;
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view row = text.substr(pos, nl - pos);
    pos = nl + 1;
    if (line == 1 && row.substr(0, 3) == "\xEF\xBB\xBF") row.remove_prefix(3);
    if (!row.empty() && row.back() == '\r') row.remove_suffix(1);
    if (row.find_first_not_of(" \t") == std::string_view::npos || row.front() == '#') continue;
    std::vector<std::string_view> f;
    for (std::size_t start = 0;;) {
      const std::size_t tab = row.find('\t', start);
      f.push_back(row.substr(start, tab == std::string_view::npos ? std::string_view::npos : tab - start));
      if (tab == std::string_view::npos) break;
      start = tab + 1;
    }
    const Place place{path, line, r};
    if (f.size() != 10) {
      place.fail("expected 10 tab-separated fields (job_type, command, working_directory, num_steps_arg, "
                 "needs_data_dir, total_steps, scale_factor, priority_weight, SLO, arrival_time), found " +
                 std::to_string(f.size()));
    }
    core::JobSpec job;
    job.id = std::to_string(r);  // Gavel numbers jobs by their order in the trace
    const std::string job_type(f[0]);
    if (job_type.empty()) place.fail("job_type is missing");
    job.iterations = count_field(place, "total_steps", f[5]);
    job.gpus = gpus_field(place, "scale_factor", f[6]);
    const double weight = decimal_field(place, "priority_weight", f[7], ">= 0", [](double v) { return v >= 0 && v < 2e9; });
    job.priority = static_cast<std::int32_t>(std::llround(weight));
    job.arrival_ns = seconds_field(place, "arrival_time", f[9], false);
    // "ResNet-50 (batch size 64)" -> model resnet50, batch 64.
    std::string model = job_type;
    std::int64_t batch = 0;
    if (const std::size_t open = job_type.find(" (batch size "); open != std::string::npos && job_type.back() == ')') {
      model = job_type.substr(0, open);
      const std::string b = job_type.substr(open + 13, job_type.size() - open - 14);
      bool too_large = false;
      const std::optional<std::int64_t> v = parse_count(b, &too_large);
      if (!v || *v <= 0) place.fail("job_type '" + job_type + "': batch size must be a positive integer");
      batch = *v;
    }
    const WorkloadProfile* profile = find_batch(catalog, names, model_key(model), batch);
    if (profile) {
      use_profile(job, *profile);
      mapped[job_type] = profile->name;
    } else {
      job.workload = job_type;
      ++whole;
    }
    bool timed = false;
    if (!throughputs.is_null()) {
      const std::string key = "('" + job_type + "', " + std::to_string(job.gpus) + ")";
      if (const auto it = throughputs.find(key); it != throughputs.end()) {
        const json& entry = *it;
        if (!entry.is_object() || !entry.contains("null") || !entry.at("null").is_number() ||
            !(entry.at("null").get<double>() > 0)) {
          throw core::InputError(options.throughputs + ": " + worker + "/" + key + ": \"null\" must be a positive "
                                 "number (steps per second alone)");
        }
        const std::optional<core::TimeNs> ns = core::ns_from_seconds(1.0 / entry.at("null").get<double>());
        if (!ns || *ns <= 0) place.fail("the throughput of " + key + " gives no iteration time in 64-bit nanoseconds");
        job.iter_ns = *ns;
        timed = true;
        ++from_throughputs;
      }
    }
    if (!timed) {
      if (!profile) {
        place.fail("job_type '" + job_type + "': no throughput for it" +
                   (throughputs.is_null() ? std::string(" (no --throughputs file)") : " in " + options.throughputs) +
                   " and no catalog entry for model '" + model_key(model) + "' (catalog: " + catalog.names_joined() + ")");
      }
      job.iter_ns = profile->iter_ns;
      job.first_iter_extra_ns = profile->first_iter_extra_ns;
      ++from_catalog;
    }
    check_solo_time(place, job);
    add_job(trace, std::move(job), place, first);
    trace.whole_gpu.back() = profile == nullptr;
    ++r;
  }
  require_jobs(trace, 1);
  trace.notes.push_back("gavel: arrival from arrival_time, iterations from total_steps, GPUs from scale_factor, "
                        "priority from priority_weight (rounded); command, working_directory, num_steps_arg, "
                        "needs_data_dir and SLO not read");
  if (from_throughputs > 0) {
    trace.notes.push_back(std::to_string(from_throughputs) + plural(from_throughputs, " job takes", " jobs take") +
                          " its iteration time from " + options.throughputs + " (worker type " + worker +
                          ", 1 / steps per second alone)");
  }
  if (from_catalog > 0) {
    trace.notes.push_back(std::to_string(from_catalog) + plural(from_catalog, " job takes", " jobs take") +
                          " its iteration time from the catalog");
  }
  if (!mapped.empty()) {
    std::vector<std::string> list;
    for (const auto& [type, entry] : mapped) list.push_back(type + " -> " + entry);
    trace.notes.push_back("memory and utilisation from the catalog (nearest batch variant): " + joined(list));
  }
  if (whole > 0) {
    trace.notes.push_back(std::to_string(whole) + plural(whole, " job's", " jobs'") +
                          " model is not in the catalog: memory assumed " + options.assumed_memory.describe());
  }
}

// ---- Philly --------------------------------------------------------------------------------

void read_philly(Trace& trace, std::string_view text, const Catalog&, const LoadOptions& options) {
  const std::string& path = trace.path;
  const json doc = parse_json(text, path);
  if (!doc.is_array()) throw core::InputError(core::at(path, 1, "expected a JSON list of jobs (Philly cluster_job_log)"));
  const std::vector<long> lines = json_array_element_lines(text, "");
  FirstSeen first;
  std::int64_t never_ran = 0, no_gpus = 0;
  for (std::size_t r = 0; r < doc.size(); ++r) {
    const json& rec = doc[r];
    const Place place{path, lines.size() == doc.size() ? lines[r] : 0, r};
    if (!rec.is_object()) place.fail("a job must be a JSON object, got " + rec.dump());
    auto text_of = [&](const json& obj, const char* key, bool required) -> std::string {
      const auto it = obj.find(key);
      if (it == obj.end() || it->is_null()) {
        if (required) place.fail(std::string("missing \"") + key + "\"");
        return "";
      }
      if (it->is_string()) return it->get<std::string>();
      if (it->is_number()) return it->dump();
      place.fail(std::string("\"") + key + "\" must be a string, got " + it->dump());
    };
    core::JobSpec job;
    job.id = text_of(rec, "jobid", true);
    if (job.id.empty()) place.fail("jobid is empty");
    job.arrival_ns = time_field(place, "submitted_time", text_of(rec, "submitted_time", true));
    const auto attempts = rec.find("attempts");
    if (attempts == rec.end() || !attempts->is_array()) place.fail("missing \"attempts\" list");
    core::TimeNs ran = 0;
    std::int64_t gpus = 0;
    bool any = false;
    for (const json& a : *attempts) {
      if (!a.is_object()) place.fail("an attempt must be a JSON object, got " + a.dump());
      const std::string s = text_of(a, "start_time", false), e = text_of(a, "end_time", false);
      if (s.empty() || e.empty() || s == "None" || e == "None") continue;
      const core::TimeNs start = time_field(place, "start_time", s), end = time_field(place, "end_time", e);
      if (end < start) place.fail("an attempt ends (" + e + ") before it starts (" + s + ")");
      if (ran > core::kNever - (end - start)) place.fail("attempts too long for 64-bit nanoseconds");
      ran += end - start;
      any = true;
      gpus = 0;
      if (const auto d = a.find("detail"); d != a.end() && d->is_array()) {
        for (const json& host : *d) {
          if (host.is_object()) {
            if (const auto g = host.find("gpus"); g != host.end() && g->is_array()) gpus += static_cast<std::int64_t>(g->size());
          }
        }
      }
    }
    if (!any || ran <= 0) {
      ++never_ran;
      continue;
    }
    if (gpus == 0) {
      ++no_gpus;
      continue;
    }
    job.gpus = static_cast<std::int32_t>(std::min<std::int64_t>(gpus, std::numeric_limits<std::int32_t>::max()));
    job.workload = "";
    set_duration_assumed(job, ran, options.assumed_iter_ns);
    check_solo_time(place, job);
    add_job(trace, std::move(job), place, first);
    trace.whole_gpu.back() = true;
  }
  require_jobs(trace, 1);
  shift_to_first_arrival(trace, "submitted_time");
  trace.notes.push_back("philly: duration = the sum over attempts of end_time - start_time, GPUs = the gpus in the "
                        "last attempt's detail; user, vc and status not read");
  note_skipped(trace, never_ran, "no attempt with a start and end time (never ran)");
  note_skipped(trace, no_gpus, "no GPU in the last attempt's detail");
  note_assumed(trace, static_cast<std::int64_t>(trace.jobs.size()), options);
}

// ---- Helios / Venus ------------------------------------------------------------------------

void read_helios(Trace& trace, std::string_view text, const Catalog&, const LoadOptions& options) {
  const std::string& path = trace.path;
  enum { kId, kGpus, kSubmit, kDuration, kUser, kVc, kCpu, kNode, kState, kStart, kEnd, kQueue, kCount };
  constexpr std::array<const char*, kCount> names = {"job_id", "gpu_num", "submit_time", "duration", "user", "vc",
                                                     "cpu_num", "node_num", "state", "start_time", "end_time", "queue"};
  CsvReader rows(text, path);
  const CsvRow header = read_header(rows, path);
  std::vector<std::string> extra;
  const auto index = map_header(path, header, names, {kId, kGpus, kSubmit, kDuration}, "a Helios", &extra);
  FirstSeen first;
  std::int64_t cpu_only = 0, zero = 0;
  for (std::size_t r = 0; rows.next(); ++r) {
    check_field_count(path, header, rows);
    const Place place{path, rows.line(), r};
    auto cell = [&](int c) { return rows.fields()[static_cast<std::size_t>(index[static_cast<std::size_t>(c)])]; };
    core::JobSpec job;
    job.id = cell(kId);
    if (job.id.empty()) place.fail("job_id is missing");
    const std::int32_t gpus = gpu_count_field(place, "gpu_num", cell(kGpus));
    job.arrival_ns = time_field(place, "submit_time", cell(kSubmit));
    const core::TimeNs duration = seconds_field(place, "duration", cell(kDuration), false);
    if (gpus == 0) {
      ++cpu_only;
      continue;
    }
    if (duration == 0) {
      ++zero;
      continue;
    }
    job.gpus = gpus;
    set_duration_assumed(job, duration, options.assumed_iter_ns);
    check_solo_time(place, job);
    add_job(trace, std::move(job), place, first);
    trace.whole_gpu.back() = true;
  }
  require_jobs(trace, header.line);
  shift_to_first_arrival(trace, "submit_time");
  trace.notes.push_back("helios: duration = duration, GPUs = gpu_num; user, vc, cpu_num, node_num, state, start_time, "
                        "end_time and queue not read");
  note_skipped(trace, cpu_only, "CPU-only (gpu_num 0)");
  note_skipped(trace, zero, "duration 0");
  note_extra(trace, extra);
  note_assumed(trace, static_cast<std::int64_t>(trace.jobs.size()), options);
}

// ---- Alibaba PAI GPU-sharing ---------------------------------------------------------------

void read_alibaba(Trace& trace, std::string_view text, const Catalog&, const LoadOptions& options) {
  const std::string& path = trace.path;
  enum { kName, kGpus, kMilli, kCreate, kDelete, kSched, kCpu, kMem, kSpec, kQos, kPhase, kCount };
  constexpr std::array<const char*, kCount> names = {"name", "num_gpu", "gpu_milli", "creation_time", "deletion_time",
                                                     "scheduled_time", "cpu_milli", "memory_mib", "gpu_spec", "qos",
                                                     "pod_phase"};
  CsvReader rows(text, path);
  const CsvRow header = read_header(rows, path);
  std::vector<std::string> extra;
  const auto index = map_header(path, header, names, {kName, kGpus, kMilli, kCreate, kDelete, kSched}, "an Alibaba", &extra);
  FirstSeen first;
  std::int64_t cpu_only = 0, unscheduled = 0, running = 0, zero = 0, shared = 0;
  for (std::size_t r = 0; rows.next(); ++r) {
    check_field_count(path, header, rows);
    const Place place{path, rows.line(), r};
    auto cell = [&](int c) { return rows.fields()[static_cast<std::size_t>(index[static_cast<std::size_t>(c)])]; };
    core::JobSpec job;
    job.id = cell(kName);
    if (job.id.empty()) place.fail("name is missing");
    const std::int32_t gpus = gpu_count_field(place, "num_gpu", cell(kGpus));
    if (gpus == 0) {
      ++cpu_only;
      continue;
    }
    const double milli = decimal_field(place, "gpu_milli", cell(kMilli), "in [0, 1000]",
                                       [](double v) { return v >= 0 && v <= 1000; });
    job.arrival_ns = seconds_field(place, "creation_time", cell(kCreate), false);
    if (cell(kSched).empty()) {
      ++unscheduled;
      continue;
    }
    if (cell(kDelete).empty()) {
      ++running;
      continue;
    }
    const core::TimeNs scheduled = seconds_field(place, "scheduled_time", cell(kSched), false);
    const core::TimeNs deleted = seconds_field(place, "deletion_time", cell(kDelete), false);
    if (deleted <= scheduled) {
      ++zero;
      continue;
    }
    job.gpus = gpus;
    set_duration_assumed(job, deleted - scheduled, options.assumed_iter_ns);
    // gpu_milli: the share of one GPU a pod sharing it asked for, its memory and at least that share
    // of its compute (the trace's README), so E = share x capacity and u = share; Algorithm 1 then
    // gives pods that fit together lanes of their own. A pod of whole GPUs (gpu_milli 1000, or 0,
    // or num_gpu > 1) gives no memory figure: LoadOptions::assumed_memory, u = 1.
    const auto share = static_cast<std::int32_t>(std::llround(milli * 1000));
    const bool partial = gpus == 1 && share > 0 && share < 1'000'000;
    if (partial) {
      ++shared;
      job.gpu_util_ppm = share;
    }
    check_solo_time(place, job);
    add_job(trace, std::move(job), place, first);
    trace.whole_gpu.back() = true;
    trace.memory_share_ppm.back() = partial ? share : 1'000'000;
  }
  require_jobs(trace, header.line);
  shift_to_first_arrival(trace, "creation_time");
  trace.notes.push_back("alibaba: duration = deletion_time - scheduled_time, GPUs = num_gpu; cpu_milli, memory_mib, "
                        "gpu_spec, qos and pod_phase not read");
  if (shared > 0) {
    trace.notes.push_back(std::to_string(shared) + plural(shared, " pod shares", " pods share") +
                          " one GPU: memory E = gpu_milli / 1000 of the GPU (P = 0) and utilisation u = gpu_milli / 1000");
  }
  note_skipped(trace, cpu_only, "CPU-only pods (num_gpu 0)");
  note_skipped(trace, unscheduled, "never scheduled (no scheduled_time)");
  note_skipped(trace, running, "not deleted by the end of the trace (no deletion_time)");
  note_skipped(trace, zero, "deleted no later than scheduled");
  note_extra(trace, extra);
  const std::int64_t whole = static_cast<std::int64_t>(trace.jobs.size()) - shared;
  note_assumed(trace, whole, options);
}

// ---- Pollux --------------------------------------------------------------------------------

void read_pollux(Trace& trace, std::string_view text, const Catalog& catalog, const LoadOptions& options) {
  const std::string& path = trace.path;
  enum { kName, kTime, kApp, kReplicas, kBatch, kDuration, kCount };
  constexpr std::array<const char*, kCount> names = {"name", "time", "application", "num_replicas", "batch_size", "duration"};
  CsvReader rows(text, path);
  const CsvRow header = read_header(rows, path);
  std::vector<std::string> extra;
  const auto index = map_header(path, header, names, {kName, kTime, kApp, kReplicas, kBatch}, "a Pollux", &extra);
  if (index[kDuration] < 0) {
    throw core::InputError(core::at(path, header.line,
                                    "a Pollux workload has no job durations (Pollux derives them from its application "
                                    "profiles, which are not part of the trace): add a 'duration' column in seconds"));
  }
  const std::vector<std::string> catalog_names = catalog.names();
  const std::map<std::string, std::string> models = {{"imagenet", "resnet50"}, {"deepspeech2", "speech"}};
  std::map<std::string, std::string> mapped;
  std::int64_t whole = 0;
  FirstSeen first;
  for (std::size_t r = 0; rows.next(); ++r) {
    check_field_count(path, header, rows);
    const Place place{path, rows.line(), r};
    auto cell = [&](int c) { return rows.fields()[static_cast<std::size_t>(index[static_cast<std::size_t>(c)])]; };
    core::JobSpec job;
    job.id = cell(kName);
    if (job.id.empty()) place.fail("name is missing");
    job.arrival_ns = seconds_field(place, "time", cell(kTime), false);
    const std::string app(cell(kApp));
    if (app.empty()) place.fail("application is missing");
    job.gpus = gpus_field(place, "num_replicas", cell(kReplicas));
    const std::int64_t batch = count_field(place, "batch_size", cell(kBatch));
    const core::TimeNs duration = seconds_field(place, "duration", cell(kDuration), true);
    const auto m = models.find(app);
    const std::string model = m != models.end() ? m->second : model_key(app);
    const WorkloadProfile* profile = find_batch(catalog, catalog_names, model, batch);
    if (profile) {
      use_profile(job, *profile);
      mapped[app + " (batch " + std::to_string(batch) + ")"] = profile->name;
      set_duration_assumed(job, duration, profile->iter_ns);
    } else {
      job.workload = app;
      ++whole;
      set_duration_assumed(job, duration, options.assumed_iter_ns);
    }
    check_solo_time(place, job);
    add_job(trace, std::move(job), place, first);
    trace.whole_gpu.back() = profile == nullptr;
  }
  require_jobs(trace, header.line);
  trace.notes.push_back("pollux: arrival = time, GPUs = num_replicas, solo time = duration; batch sizes are the "
                        "submitted ones (Pollux's adaptive batch sizes are not modelled)");
  if (!mapped.empty()) {
    std::vector<std::string> list;
    for (const auto& [app, entry] : mapped) list.push_back(app + " -> " + entry);
    trace.notes.push_back("memory, utilisation and iteration time from the catalog (nearest batch variant): " + joined(list));
  }
  if (whole > 0) note_assumed(trace, whole, options);
  note_extra(trace, extra);
}

}  // namespace salus::traces
