// Importers for the public cluster traces: Gavel, Microsoft Philly, Helios/Venus, Acme, Lucid,
// Alibaba PAI GPU-sharing (cluster-trace-gpu-v2023), Alibaba PAI 2020 and Pollux. Each maps its layout to JobSpecs as the format
// table in trace.cpp states, and says in Trace::notes what it took from where and what it assumed.
#include <algorithm>
#include <cmath>
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
#include "traces/reader_steps.h"
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

// "YYYY-MM-DD HH:MM:SS" (or with 'T') as seconds since 1970 in ns, or a plain number of seconds. A
// UTC offset may follow the time ("+08:00", "-0500", "Z", as Acme writes its times): the instant
// is then taken in UTC, so that times written in different offsets compare.
std::optional<core::TimeNs> parse_time(std::string_view s) {
  if (const std::optional<double> v = parse_decimal(s)) {
    if (!(*v >= 0)) return std::nullopt;
    return core::ns_from_seconds(*v);
  }
  std::int64_t offset_s = 0;
  if (s.size() == 20 && s[19] == 'Z') {
    s = s.substr(0, 19);
  } else if ((s.size() == 25 || s.size() == 24) && (s[19] == '+' || s[19] == '-')) {
    const std::string_view z = s.substr(20);
    const bool colon = z.size() == 5;
    if (colon && z[2] != ':') return std::nullopt;
    const char d[4] = {z[0], z[1], z[colon ? 3 : 2], z[colon ? 4 : 3]};
    for (char c : d) {
      if (!is_digit(c)) return std::nullopt;
    }
    const int hh = (d[0] - '0') * 10 + (d[1] - '0'), mm = (d[2] - '0') * 10 + (d[3] - '0');
    if (hh > 23 || mm > 59) return std::nullopt;
    offset_s = (s[19] == '+' ? 1 : -1) * (hh * 3600 + mm * 60);
    s = s.substr(0, 19);
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
  const std::int64_t seconds = ((days * 24 + h) * 60 + mi) * 60 + se - offset_s;  // < 4e11 for years up to 9999
  if (seconds < 0) return std::nullopt;  // before 1970 in UTC
  if (seconds > std::numeric_limits<core::TimeNs>::max() / core::kNsPerS) return std::nullopt;  // past 2262
  return seconds * core::kNsPerS;
}

core::TimeNs time_field(const Place& place, const std::string& name, std::string_view text) {
  const std::optional<core::TimeNs> t = parse_time(text);
  if (!t) {
    place.fail(name + " must be seconds >= 0 or a date YYYY-MM-DD HH:MM:SS, optionally with a UTC offset such as "
                      "+08:00 (1970 to 2262), got " + quoted(text));
  }
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

// Appends a job whose memory is a share of the GPU: `share_ppm` < 1e6 (an Alibaba pod's gpu_milli,
// a PAI task's plan_gpu) gives E that share of the GPU and u = the share; 1e6 (whole GPUs) gives
// the assumed memory, u as the job has it.
void add_share_job(Trace& trace, core::JobSpec job, const Place& place, FirstSeen& first, std::int32_t share_ppm) {
  if (share_ppm < 1'000'000) job.gpu_util_ppm = share_ppm;
  check_solo_time(place, job);
  add_job(trace, std::move(job), place, first);
  trace.whole_gpu.back() = true;
  trace.memory_share_ppm.back() = share_ppm;
}

// How many jobs gave each value of a column a reader counts but does not use (Acme's end states,
// PAI's GPU types), for a note: at most 16 distinct values, so a broken file cannot grow it.
class ValueCounts {
 public:
  void add(std::string_view value) {
    if (value.empty()) return;
    const std::string v(value);
    if (counts_.size() < 16 || counts_.count(v)) ++counts_[v];
  }
  bool empty() const { return counts_.empty(); }
  // "COMPLETED 2, FAILED 1"
  std::string text() const {
    std::vector<std::string> list;
    for (const auto& [value, n] : counts_) list.push_back(value + " " + std::to_string(n));
    return joined(list);
  }

 private:
  std::map<std::string, std::int64_t> counts_;
};

CsvRow read_header(CsvReader& rows, const std::string& path) {
  if (!rows.next()) throw core::InputError(core::at(path, 1, "no jobs"));
  return CsvRow{rows.line(), {rows.fields().begin(), rows.fields().end()}};
}

void require_jobs(const Trace& trace, long line) {
  if (trace.jobs.empty()) throw core::InputError(core::at(trace.path, line, "no jobs"));
}

}  // namespace

// ---- Gavel ---------------------------------------------------------------------------------

namespace steps {

GavelThroughputs load_gavel_throughputs(const LoadOptions& options) {
  GavelThroughputs tp;
  if (options.throughputs.empty()) return tp;
  const std::string tp_text = read_text_file(options.throughputs, "throughputs file", TextBound::kJson);
  const json doc = parse_json(tp_text, options.throughputs);
  if (!doc.is_object() || doc.empty()) {
    throw core::InputError(core::at(options.throughputs, 1, "expected an object {worker_type: {job: {\"null\": steps/s}}}"));
  }
  std::vector<std::string> workers;
  for (const auto& item : doc.items()) workers.push_back(item.key());
  tp.worker = options.worker_type;
  if (tp.worker.empty()) tp.worker = doc.contains("v100") ? "v100" : workers.front();
  if (!doc.contains(tp.worker)) {
    throw core::InputError(options.throughputs + ": unknown worker type '" + tp.worker + "' (valid: " + joined(workers) + ")");
  }
  for (const auto& item : doc.items()) {
    if (!item.value().is_object()) {
      throw core::InputError(core::at(options.throughputs, 1, "worker type '" + text_excerpt(item.key()) + "' must map to an object"));
    }
    tp.workers.emplace_back(item.key(), item.value());
  }
  tp.table = doc.at(tp.worker);
  return tp;
}

bool GavelRows::next() {
  while (pos_ < text_.size()) {
    ++line_;
    std::size_t nl = text_.find('\n', pos_);
    if (nl == std::string_view::npos) nl = text_.size();
    std::string_view row = text_.substr(pos_, nl - pos_);
    pos_ = nl + 1;
    if (row.size() > kMaxLineBytes + 1) core::line_too_long(path_, line_);
    if (line_ == 1 && row.substr(0, 3) == "\xEF\xBB\xBF") row.remove_prefix(3);
    if (!row.empty() && row.back() == '\r') row.remove_suffix(1);
    if (row.find_first_not_of(" \t") == std::string_view::npos || row.front() == '#') continue;
    fields_.clear();
    for (std::size_t start = 0;;) {
      const std::size_t tab = row.find('\t', start);
      fields_.push_back(row.substr(start, tab == std::string_view::npos ? std::string_view::npos : tab - start));
      if (fields_.back().size() > kMaxFieldBytes) field_too_long(path_, line_, start + 1, fields_.back().size());
      if (fields_.size() > kMaxFieldsPerLine) core::too_many_fields(path_, line_);
      if (tab == std::string_view::npos) break;
      start = tab + 1;
    }
    return true;
  }
  return false;
}

namespace {

constexpr const char* kGavel10 =
    "job_type, command, working_directory, num_steps_arg, needs_data_dir, total_steps, scale_factor, priority_weight, "
    "SLO, arrival_time";
constexpr const char* kGavel7 = "job_type, command, num_steps_arg, needs_data_dir, total_steps, arrival_time, scale_factor";

}  // namespace

// Two layouts: the physical-cluster traces' 10 fields and the simulation traces' 7
// (scheduler/traces/msr: no working_directory, priority_weight or SLO; arrival before
// scale_factor). The first row decides; every row must then have as many.
void check_gavel_layout(const Place& place, std::size_t count, std::size_t& layout) {
  if (layout == 0) {
    if (count != 10 && count != 7) {
      place.fail("expected 10 tab-separated fields (" + std::string(kGavel10) + ") or 7 (" + kGavel7 + "), found " +
                 std::to_string(count));
    }
    layout = count;
  } else if (count != layout) {
    place.fail("expected " + std::to_string(layout) + " tab-separated fields (" + (layout == 10 ? kGavel10 : kGavel7) +
               ") as on the first row, found " + std::to_string(count));
  }
}

core::JobSpec gavel_job(const Place& place, const std::vector<std::string_view>& f, std::size_t layout, std::size_t index) {
  const bool ten = layout == 10;
  core::JobSpec job;
  job.id = std::to_string(index);  // Gavel numbers jobs by their order in the trace
  if (f[0].empty()) place.fail("job_type is missing");
  job.iterations = count_field(place, "total_steps", f[ten ? 5 : 4]);
  job.gpus = gpus_field(place, "scale_factor", f[6]);
  if (ten) {
    const double weight = decimal_field(place, "priority_weight", f[7], ">= 0", [](double v) { return v >= 0 && v < 2e9; });
    job.priority = static_cast<std::int32_t>(std::llround(weight));
  }
  job.arrival_ns = seconds_field(place, "arrival_time", f[ten ? 9 : 5], false);
  return job;
}

GavelJobType parse_gavel_job_type(const Place& place, const std::string& job_type) {
  GavelJobType t{job_type, 0};
  if (const std::size_t open = job_type.find(" (batch size "); open != std::string::npos && job_type.back() == ')') {
    t.model = job_type.substr(0, open);
    const std::string b = job_type.substr(open + 13, job_type.size() - open - 14);
    bool too_large = false;
    const std::optional<std::int64_t> v = parse_count(b, &too_large);
    if (!v || *v <= 0) place.fail("job_type '" + job_type + "': batch size must be a positive integer");
    t.batch = *v;
  }
  return t;
}

const WorkloadProfile* gavel_memory(core::JobSpec& job, const std::string& job_type, const GavelJobType& type,
                                    const Catalog& catalog, const std::vector<std::string>& names, GavelCounts& counts) {
  const WorkloadProfile* profile = find_batch(catalog, names, model_key(type.model), type.batch);
  if (profile) {
    use_profile(job, *profile);
    counts.mapped[job_type] = profile->name;
  } else {
    job.workload = job_type;
    ++counts.whole;
  }
  return profile;
}

namespace {

/// Steps per second of "('<job_type>', <gpus>)" in `table` (worker type `worker`), or, for
/// gpus > 1 without that entry, of "('<job_type>', 1)" as --gavel-scaling says (`*scaled` set);
/// nullopt when the table has neither. Throws for an entry whose "null" is not a positive number
/// (or, with zero_ok, not a number >= 0: Gavel writes 0 where the job cannot run on that worker).
std::optional<double> gavel_rate(const json& table, const std::string& worker, const LoadOptions& options,
                                 const std::string& job_type, std::int32_t gpus, bool* scaled, std::string* key_out,
                                 bool zero_ok = false) {
  *scaled = false;
  std::string key = "('" + job_type + "', " + std::to_string(gpus) + ")";
  double scale = 1;
  auto it = table.find(key);
  if (it == table.end() && gpus > 1 && options.gavel_scaling != LoadOptions::GavelScaling::kRefuse) {
    // Only the one-GPU rate is known: --gavel-scaling says what k GPUs make of it.
    const std::string one = "('" + job_type + "', 1)";
    if (const auto it1 = table.find(one); it1 != table.end()) {
      it = it1;
      key = one;
      scale = options.gavel_scaling == LoadOptions::GavelScaling::kLinear ? gpus : 1;
      *scaled = true;
    }
  }
  *key_out = key;
  if (it == table.end()) return std::nullopt;
  const json& entry = *it;
  if (!entry.is_object() || !entry.contains("null") || !entry.at("null").is_number() ||
      !(entry.at("null").get<double>() > 0 || (zero_ok && entry.at("null").get<double>() == 0))) {
    throw core::InputError(options.throughputs + ": " + worker + "/" + key + ": \"null\" must be a " +
                           (zero_ok ? "number >= 0" : "positive number") + " (steps per second alone)");
  }
  return scale * entry.at("null").get<double>();
}

}  // namespace

std::optional<core::TimeNs> gavel_throughput_time(const GavelThroughputs& tp, const LoadOptions& options,
                                                  const Place& place, const std::string& job_type, std::int32_t gpus,
                                                  bool* scaled) {
  *scaled = false;
  if (tp.table.is_null()) return std::nullopt;
  std::string key;
  const std::optional<double> rate = gavel_rate(tp.table, tp.worker, options, job_type, gpus, scaled, &key);
  if (!rate) return std::nullopt;
  const std::optional<core::TimeNs> ns = core::ns_from_seconds(1.0 / *rate);
  if (!ns || *ns <= 0) place.fail("the throughput of " + key + " gives no iteration time in 64-bit nanoseconds");
  return ns;
}

std::vector<core::KindSpeed> gavel_kind_speeds(const GavelThroughputs& tp, const LoadOptions& options, const Place& place,
                                               const std::string& job_type, std::int32_t gpus) {
  std::vector<core::KindSpeed> speeds;
  if (tp.workers.size() < 2) return speeds;
  bool scaled = false;
  std::string key;
  const std::optional<double> own = gavel_rate(tp.table, tp.worker, options, job_type, gpus, &scaled, &key);
  if (!own) return speeds;
  for (const auto& [worker, table] : tp.workers) {
    if (worker == tp.worker) {
      speeds.push_back({worker, 1'000'000});  // exactly iter_ns
      continue;
    }
    const std::optional<double> rate = gavel_rate(table, worker, options, job_type, gpus, &scaled, &key, true);
    if (!rate) continue;
    if (*rate == 0) {  // Gavel's mark of a job that cannot run on this worker type
      speeds.push_back({worker, 0});
      continue;
    }
    const double ppm = std::round(*rate / *own * 1e6);
    if (!(ppm >= 1 && ppm <= 1e9)) {
      place.fail("the throughput of " + key + " on " + worker + " is " + std::to_string(*rate / *own) + " times its rate on " +
                 tp.worker + " (a speed must lie in [1e-6, 1000])");
    }
    speeds.push_back({worker, static_cast<std::int64_t>(ppm)});
  }
  return speeds;
}

void gavel_timing(core::JobSpec& job, const Place& place, const std::string& job_type, const GavelJobType& type,
                  const WorkloadProfile* profile, const GavelThroughputs& tp, const Catalog& catalog,
                  const LoadOptions& options, GavelCounts& counts) {
  bool scaled = false;
  if (const std::optional<core::TimeNs> ns = gavel_throughput_time(tp, options, place, job_type, job.gpus, &scaled)) {
    job.iter_ns = *ns;
    job.set_kind_speeds(gavel_kind_speeds(tp, options, place, job_type, job.gpus));
    if (scaled) ++counts.scaled;
    ++counts.from_throughputs;
    return;
  }
  if (!profile) {
    place.fail("job_type '" + job_type + "': no throughput for it" +
               (tp.table.is_null() ? std::string(" (no --throughputs file)") : " in " + options.throughputs) +
               " and no catalog entry for model '" + model_key(type.model) + "' (catalog: " + catalog.names_joined() + ")");
  }
  job.iter_ns = profile->iter_ns;
  job.first_iter_extra_ns = profile->first_iter_extra_ns;
  ++counts.from_catalog;
}

void note_gavel(Trace& trace, std::size_t layout, const GavelCounts& counts, const GavelThroughputs& tp,
                const LoadOptions& options) {
  if (layout == 10) {
    trace.notes.push_back("gavel: arrival from arrival_time, iterations from total_steps, GPUs from scale_factor, "
                          "priority from priority_weight (rounded); command, working_directory, num_steps_arg, "
                          "needs_data_dir and SLO not read");
  } else {
    trace.notes.push_back("gavel (7-field simulation trace): arrival from arrival_time, iterations from total_steps, "
                          "GPUs from scale_factor; no priority_weight (every job priority 0); command, num_steps_arg "
                          "and needs_data_dir not read");
  }
  const std::int64_t from_throughputs = counts.from_throughputs, scaled = counts.scaled;
  const std::int64_t from_catalog = counts.from_catalog, whole = counts.whole;
  if (from_throughputs > 0) {
    trace.notes.push_back(std::to_string(from_throughputs) + plural(from_throughputs, " job takes", " jobs take") +
                          " its iteration time from " + options.throughputs + " (worker type " + tp.worker +
                          ", 1 / steps per second alone)");
  }
  if (scaled > 0) {
    trace.notes.push_back(
        std::to_string(scaled) + plural(scaled, " job of k > 1 GPUs has", " jobs of k > 1 GPUs have") + " no throughput at k GPUs in " +
        options.throughputs + ", only at 1: " +
        (options.gavel_scaling == LoadOptions::GavelScaling::kLinear
             ? "assumed k times the one-GPU steps per second (--gavel-scaling linear; none: the one-GPU rate)"
             : "assumed the one-GPU steps per second (--gavel-scaling none)"));
  }
  if (from_catalog > 0) {
    trace.notes.push_back(std::to_string(from_catalog) + plural(from_catalog, " job takes", " jobs take") +
                          " its iteration time from the catalog");
  }
  if (!counts.mapped.empty()) {
    std::vector<std::string> list;
    for (const auto& [type, entry] : counts.mapped) list.push_back(type + " -> " + entry);
    trace.notes.push_back("memory and utilisation from the catalog (nearest batch variant): " + joined(list));
  }
  if (whole > 0) {
    trace.notes.push_back(std::to_string(whole) + plural(whole, " job's", " jobs'") +
                          " model is not in the catalog: memory assumed " + options.assumed_memory.describe());
  }
}

}  // namespace steps

void read_gavel(Trace& trace, TraceInput& input, const Catalog& catalog, const LoadOptions& options) {
  using namespace steps;
  const GavelThroughputs tp = load_gavel_throughputs(options);
  const std::vector<std::string> names = catalog.names();
  GavelCounts counts;
  FirstSeen first;
  const std::string_view text = input.text(core::TextBound::kLines);
  GavelRows rows(text, trace.path);
  std::size_t layout = 0;  // fields per row: 10 or 7, set by the first row
  for (std::size_t r = 0; rows.next(); ++r) {
    const Place place{trace.path, rows.line(), r};
    check_gavel_layout(place, rows.fields().size(), layout);
    core::JobSpec job = gavel_job(place, rows.fields(), layout, r);
    const std::string job_type(rows.fields()[0]);
    const GavelJobType type = parse_gavel_job_type(place, job_type);
    const WorkloadProfile* profile = gavel_memory(job, job_type, type, catalog, names, counts);
    gavel_timing(job, place, job_type, type, profile, tp, catalog, options, counts);
    check_solo_time(place, job);
    add_job(trace, std::move(job), place, first);
    trace.whole_gpu.back() = profile == nullptr;
  }
  require_jobs(trace, 1);
  note_gavel(trace, layout, counts, tp, options);
}

// ---- Philly --------------------------------------------------------------------------------

void read_philly(Trace& trace, TraceInput& input, const Catalog&, const LoadOptions& options) {
  const std::string& path = trace.path;
  const std::string_view text = input.text(core::TextBound::kJson);
  const json doc = parse_json(text, path);
  if (!doc.is_array()) throw core::InputError(core::at(path, 1, "expected a JSON list of jobs (Philly cluster_job_log)"));
  const std::vector<long> lines = json_array_element_lines(text, "");
  FirstSeen first;
  std::int64_t never_ran = 0, no_gpus = 0;
  for (std::size_t r = 0; r < doc.size(); ++r) {
    const json& rec = doc[r];
    const Place place{path, lines.size() == doc.size() ? lines[r] : 0, r};
    if (!rec.is_object()) place.fail("a job must be a JSON object, got " + json_excerpt(rec));
    auto text_of = [&](const json& obj, const char* key, bool required) -> std::string {
      const auto it = obj.find(key);
      if (it == obj.end() || it->is_null()) {
        if (required) place.fail(std::string("missing \"") + key + "\"");
        return "";
      }
      if (it->is_string()) return it->get<std::string>();
      if (it->is_number()) return it->dump();
      place.fail(std::string("\"") + key + "\" must be a string, got " + json_excerpt(*it));
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
      if (!a.is_object()) place.fail("an attempt must be a JSON object, got " + json_excerpt(a));
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

// ---- job logs: Helios / Venus, Acme, Lucid ------------------------------------------------

// A job log's rows: an id, a GPU count, a submission time and a run time (Helios' cluster_log.csv,
// Acme's trace_seren.csv / trace_kalos.csv, Lucid's cluster_full_log.csv), one job per GPU job.
// `memory(job, cell)` gives the job what the format says of its memory and utilisation and returns
// true, or false when it says nothing (then --assumed-memory). Returns how many jobs had a figure.
struct JobLog {
  const char* format;    // "a Helios", for errors
  const char* id;        // the id column
  const char* gpus;      // the GPU count column
  const char* submit;    // the submission time column
  const char* duration;  // the run time column, seconds
  std::string note;      // how the format's columns were read, noted after the arrivals
  bool skip_empty_duration = false;  // Acme: a job cancelled before it started has no duration
};

template <std::size_t N, typename Memory>
std::int64_t read_job_log(Trace& trace, TraceInput& input, const LoadOptions& options, const JobLog& log,
                          const std::array<const char*, N>& names, Memory memory) {
  const std::string& path = trace.path;
  CsvReader rows = input.rows();
  const CsvRow header = read_header(rows, path);
  std::vector<std::string> extra;
  const auto index = map_header(path, header, names, {0, 1, 2, 3}, log.format, &extra);
  FirstSeen first;
  std::int64_t cpu_only = 0, zero = 0, no_duration = 0, figures = 0;
  for (std::size_t r = 0; rows.next(); ++r) {
    check_field_count(path, header, rows);
    const Place place{path, rows.line(), r};
    auto cell = [&](std::size_t c) -> std::string_view {
      return index[c] < 0 ? std::string_view() : rows.fields()[static_cast<std::size_t>(index[c])];
    };
    core::JobSpec job;
    job.id = cell(0);
    if (job.id.empty()) place.fail(std::string(log.id) + " is missing");
    const std::int32_t gpus = gpu_count_field(place, log.gpus, cell(1));
    job.arrival_ns = time_field(place, log.submit, cell(2));
    if (gpus == 0) {
      ++cpu_only;
      continue;
    }
    if (log.skip_empty_duration && cell(3).empty()) {
      ++no_duration;
      continue;
    }
    const core::TimeNs duration = seconds_field(place, log.duration, cell(3), false);
    if (duration == 0) {
      ++zero;
      continue;
    }
    job.gpus = gpus;
    set_duration_assumed(job, duration, options.assumed_iter_ns);
    const bool figure = memory(job, place, cell);
    check_solo_time(place, job);
    add_job(trace, std::move(job), place, first);
    trace.whole_gpu.back() = !figure;
    figures += figure ? 1 : 0;
  }
  require_jobs(trace, header.line);
  shift_to_first_arrival(trace, log.submit);
  trace.notes.push_back(log.note);
  note_skipped(trace, cpu_only, std::string("CPU-only (") + log.gpus + " 0)");
  note_skipped(trace, no_duration, std::string("no ") + log.duration);
  note_skipped(trace, zero, std::string(log.duration) + " 0");
  note_extra(trace, extra);
  return figures;
}

void read_helios(Trace& trace, TraceInput& input, const Catalog&, const LoadOptions& options) {
  constexpr std::array<const char*, 12> names = {"job_id", "gpu_num", "submit_time", "duration", "user", "vc",
                                                 "cpu_num", "node_num", "state", "start_time", "end_time", "queue"};
  read_job_log(trace, input, options,
               {"a Helios", "job_id", "gpu_num", "submit_time", "duration",
                "helios: duration = duration, GPUs = gpu_num; user, vc, cpu_num, node_num, state, start_time, "
                "end_time and queue not read"},
               names, [](core::JobSpec&, const Place&, auto&&) { return false; });
  note_assumed(trace, static_cast<std::int64_t>(trace.jobs.size()), options);
}

void read_acme(Trace& trace, TraceInput& input, const Catalog&, const LoadOptions& options) {
  constexpr std::array<const char*, 17> names = {
      "job_id",   "gpu_num",    "submit_time", "duration", "user",           "node_num",           "cpu_num",
      "type",     "state",      "start_time",  "end_time", "queue",          "gpu_time",           "mem_per_pod_GB",
      "fail_time", "stop_time", "shared_mem_per_pod"};
  ValueCounts states;
  read_job_log(trace, input, options,
               {"an Acme", "job_id", "gpu_num", "submit_time", "duration",
                "acme: duration = duration (end_time - start_time), GPUs = gpu_num, times in UTC from their offsets; "
                "user, node_num, cpu_num, type, state, start_time, end_time, queue, gpu_time and Kalos' pod memory "
                "not read (host memory, not GPU memory)",
                true},
               names, [&](core::JobSpec&, const Place&, auto&& cell) {
                 states.add(cell(8));
                 return false;
               });
  if (!states.empty()) {
    trace.notes.push_back("every GPU job is replayed for its duration whatever its end state (" + states.text() +
                          "): a FAILED or CANCELLED job held its GPUs that long");
  }
  note_assumed(trace, static_cast<std::int64_t>(trace.jobs.size()), options);
}

void read_lucid(Trace& trace, TraceInput& input, const Catalog&, const LoadOptions& options) {
  constexpr std::array<const char*, 17> names = {"job_id", "gpu_num", "submit_time", "duration", "gmem",
                                                 "gpu_util", "user",   "vc",          "jobname",  "cpu_num",
                                                 "state",  "dataset",  "model",       "batchsize", "amp",
                                                 "speed",  "gmem_util"};
  const std::int64_t figures = read_job_log(
      trace, input, options,
      {"a Lucid", "job_id", "gpu_num", "submit_time", "duration",
       "lucid: duration = duration, GPUs = gpu_num; memory E = gmem MiB per GPU (P = 0) and utilisation = gpu_util / "
       "100 where gmem > 0 (utilisation 1 where gpu_util is 0 or empty); user, vc, jobname, cpu_num, state, dataset, "
       "model, batchsize, amp, speed and gmem_util not read"},
      names, [](core::JobSpec& job, const Place& place, auto&& cell) {
        // gmem: the job's GPU memory in MiB as profiled (Lucid's colocate_info.csv reads 4,500 to
        // 15,000 for one-GPU jobs); gpu_util: its GPU utilisation in percent.
        const std::string_view gmem = cell(4), util = cell(5);
        if (gmem.empty()) return false;
        const double mib = decimal_field(place, "gmem", gmem, "MiB in [0, 1e9)", [](double v) { return v >= 0 && v < 1e9; });
        if (mib <= 0) return false;
        job.persistent = 0;
        job.ephemeral = static_cast<core::Bytes>(std::llround(mib * 1024 * 1024));
        job.gpu_util_ppm = 1'000'000;
        if (!util.empty()) {
          const double pct = decimal_field(place, "gpu_util", util, "percent in [0, 100]",
                                           [](double v) { return v >= 0 && v <= 100; });
          if (pct > 0) job.gpu_util_ppm = static_cast<std::int32_t>(std::llround(pct * 10'000));
        }
        return true;
      });
  if (figures > 0) {
    trace.notes.push_back(std::to_string(figures) + plural(figures, " job takes", " jobs take") +
                          " its memory from gmem and utilisation from gpu_util");
  }
  note_assumed(trace, static_cast<std::int64_t>(trace.jobs.size()) - figures, options);
}

// ---- Alibaba PAI GPU-sharing ---------------------------------------------------------------

void read_alibaba(Trace& trace, TraceInput& input, const Catalog&, const LoadOptions& options) {
  const std::string& path = trace.path;
  enum { kName, kGpus, kMilli, kCreate, kDelete, kSched, kCpu, kMem, kSpec, kQos, kPhase, kCount };
  constexpr std::array<const char*, kCount> names = {"name", "num_gpu", "gpu_milli", "creation_time", "deletion_time",
                                                     "scheduled_time", "cpu_milli", "memory_mib", "gpu_spec", "qos",
                                                     "pod_phase"};
  CsvReader rows = input.rows();
  const CsvRow header = read_header(rows, path);
  auto has = [&](const char* name) { return std::find(header.fields.begin(), header.fields.end(), name) != header.fields.end(); };
  if (!has("creation_time") && !has("deletion_time") && !has("scheduled_time")) {
    throw core::InputError(core::at(
        path, header.line,
        "an Alibaba v2023 pod list without times (no creation_time, deletion_time or scheduled_time, as in the "
        "openb_pod_list_multigpu variants): it says which pods to pack, not when they arrive or how long they run, "
        "which a replay needs; use a pod list with those columns (openb_pod_list_default.csv, the gpushare, gpuspec "
        "and cpu variants)"));
  }
  std::vector<std::string> extra;
  const auto index = map_header(path, header, names, {kName, kGpus, kMilli, kCreate, kDelete, kSched}, "an Alibaba", &extra);
  FirstSeen first;
  std::int64_t cpu_only = 0, unscheduled = 0, running = 0, zero = 0, shared = 0, limited = 0;
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
    if (index[kSpec] >= 0 && !cell(kSpec).empty()) {
      job.set_gpu_kinds(std::string(cell(kSpec)));
      ++limited;
    }
    set_duration_assumed(job, deleted - scheduled, options.assumed_iter_ns);
    // gpu_milli: the share of one GPU a pod sharing it asked for, its memory and at least that share
    // of its compute (the trace's README), so E = share x capacity and u = share; Algorithm 1 then
    // gives pods that fit together lanes of their own. A pod of whole GPUs (gpu_milli 1000, or 0,
    // or num_gpu > 1) gives no memory figure: LoadOptions::assumed_memory, u = 1.
    const auto share = static_cast<std::int32_t>(std::llround(milli * 1000));
    const bool partial = gpus == 1 && share > 0 && share < 1'000'000;
    shared += partial ? 1 : 0;
    add_share_job(trace, std::move(job), place, first, partial ? share : 1'000'000);
  }
  require_jobs(trace, header.line);
  shift_to_first_arrival(trace, "creation_time");
  trace.notes.push_back("alibaba: duration = deletion_time - scheduled_time, GPUs = num_gpu, gpu_spec = the GPU kinds "
                        "a pod may run on; cpu_milli, memory_mib, qos and pod_phase not read");
  if (limited > 0) {
    trace.notes.push_back(std::to_string(limited) + plural(limited, " pod names", " pods name") +
                          " GPU models in gpu_spec: honoured on a cluster whose GPUs have kinds (--cluster with a kind "
                          "column, or the v2023 node list), ignored elsewhere");
  }
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

// ---- Alibaba PAI 2020 (cluster-trace-gpu-v2020) ------------------------------------------

// The tables ship without a header (the header is a separate .header file): pai_task_table's rows
// are job_name, task_name, inst_num, status, start_time, end_time, plan_cpu, plan_mem, plan_gpu,
// gpu_type. A copy with that header line first is read too.
constexpr std::array<const char*, 10> kPaiTaskColumns = {"job_name", "task_name", "inst_num",  "status",   "start_time",
                                                         "end_time", "plan_cpu",  "plan_mem", "plan_gpu", "gpu_type"};

void read_pai2020(Trace& trace, TraceInput& input, const Catalog&, const LoadOptions& options) {
  const std::string& path = trace.path;
  CsvReader rows = input.rows();
  if (!rows.next()) throw core::InputError(core::at(path, 1, "no jobs"));
  const std::size_t width = rows.fields().size();
  if (width == 6) {
    throw core::InputError(core::at(path, rows.line(),
                                    "an Alibaba PAI 2020 pai_job_table (job_name, inst_id, user, status, start_time, "
                                    "end_time) gives no GPU demand: read pai_task_table, whose tasks carry plan_gpu "
                                    "and inst_num"));
  }
  if (width == 9) {
    throw core::InputError(core::at(path, rows.line(),
                                    "an Alibaba PAI 2020 pai_instance_table gives no GPU demand: read pai_task_table, "
                                    "whose tasks carry plan_gpu and inst_num"));
  }
  if (width != kPaiTaskColumns.size()) {
    throw core::InputError(core::at(path, rows.line(), "expected the 10 fields of pai_task_table (" +
                                                           std::string("job_name, task_name, inst_num, status, "
                                                                       "start_time, end_time, plan_cpu, plan_mem, "
                                                                       "plan_gpu, gpu_type), found ") +
                                                           std::to_string(width)));
  }
  const bool headed = rows.fields()[0] == "job_name";
  if (headed) {
    for (std::size_t c = 0; c < kPaiTaskColumns.size(); ++c) {
      if (rows.fields()[c] != kPaiTaskColumns[c]) {
        throw core::InputError(core::at(path, rows.line(), "column " + std::to_string(c + 1) + " of a pai_task_table "
                                                           "header must be '" + kPaiTaskColumns[c] + "', found " +
                                                           quoted(rows.fields()[c])));
      }
    }
  }
  const CsvRow header{rows.line(), {kPaiTaskColumns.begin(), kPaiTaskColumns.end()}};
  FirstSeen first;
  std::int64_t cpu_only = 0, unfinished = 0, zero = 0, shared = 0;
  ValueCounts types;
  bool pending = !headed;  // the first row, already read, is a task
  for (std::size_t r = 0; pending || rows.next(); ++r) {
    pending = false;
    check_field_count(path, header, rows);
    const Place place{path, rows.line(), r};
    const auto& f = rows.fields();
    core::JobSpec job;
    if (f[0].empty()) place.fail("job_name is missing");
    job.id = std::string(f[0]) + "/" + std::string(f[1]);  // a job's tasks run as jobs of their own
    // plan_gpu: GPUs per instance in percent (50: half a GPU); empty or 0: a CPU task.
    const double plan = f[8].empty() ? 0.0
                                     : decimal_field(place, "plan_gpu", f[8], "percent in [0, 1e6]",
                                                     [](double v) { return v >= 0 && v <= 1e6; });
    if (plan <= 0) {
      ++cpu_only;
      continue;
    }
    const double inst = decimal_field(place, "inst_num", f[2], "a whole number in [1, 1e6]",
                                      [](double v) { return v >= 1 && v <= 1e6 && v == std::floor(v); });
    if (f[4].empty() || f[5].empty()) {
      ++unfinished;
      continue;
    }
    job.arrival_ns = seconds_field(place, "start_time", f[4], false);
    const core::TimeNs end = seconds_field(place, "end_time", f[5], false);
    if (end <= job.arrival_ns) {
      ++zero;
      continue;
    }
    // Each instance takes ceil(plan_gpu / 100) GPUs; a task's instances run together, a gang.
    const auto per_instance = static_cast<std::int64_t>(std::ceil(plan / 100.0 - 1e-9));
    const std::int64_t gpus = static_cast<std::int64_t>(inst) * per_instance;
    if (gpus > std::numeric_limits<std::int32_t>::max()) place.fail("inst_num x plan_gpu / 100 GPUs is too many");
    job.gpus = static_cast<std::int32_t>(gpus);
    set_duration_assumed(job, end - job.arrival_ns, options.assumed_iter_ns);
    // Below 100 % an instance shares its GPU: as an Alibaba v2023 pod's gpu_milli, its memory and
    // at least that share of its compute.
    const auto share = static_cast<std::int32_t>(std::llround(plan * 10'000));
    const bool partial = share < 1'000'000;
    shared += partial ? 1 : 0;
    types.add(f[9]);
    add_share_job(trace, std::move(job), place, first, partial ? share : 1'000'000);
  }
  require_jobs(trace, header.line);
  shift_to_first_arrival(trace, "start_time");
  trace.notes.push_back("alibaba pai 2020 (pai_task_table" + std::string(headed ? "" : ", no header") +
                        "): one job per task (job_name/task_name); arrival = the task's start_time (its launch: the "
                        "trace's queuing before it is not replayed); duration = end_time - start_time; GPUs = inst_num "
                        "x ceil(plan_gpu / 100), the instances a gang; status, plan_cpu and plan_mem not read");
  if (shared > 0) {
    trace.notes.push_back(std::to_string(shared) + plural(shared, " task's instances share", " tasks' instances share") +
                          " their GPU (plan_gpu < 100): memory E = plan_gpu % of the GPU (P = 0), utilisation "
                          "u = plan_gpu %");
  }
  if (!types.empty()) {
    trace.notes.push_back("gpu_type not read, every GPU taken alike (" + types.text() + ")");
  }
  note_skipped(trace, cpu_only, "CPU tasks (plan_gpu empty or 0)");
  note_skipped(trace, unfinished, "no start_time or end_time (never started, or running at the trace's end)");
  note_skipped(trace, zero, "ended no later than started");
  note_assumed(trace, static_cast<std::int64_t>(trace.jobs.size()) - shared, options);
}

// ---- Pollux --------------------------------------------------------------------------------

void read_pollux(Trace& trace, TraceInput& input, const Catalog& catalog, const LoadOptions& options) {
  const std::string& path = trace.path;
  enum { kName, kTime, kApp, kReplicas, kBatch, kDuration, kCount };
  constexpr std::array<const char*, kCount> names = {"name", "time", "application", "num_replicas", "batch_size", "duration"};
  CsvReader rows = input.rows();
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
