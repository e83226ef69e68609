#include "traces/trace.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "traces/csv.h"

namespace salus::traces {
namespace {

using nlohmann::json;

// ---- field parsing -------------------------------------------------------------------------

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// A plain decimal such as "12", "-0.5", ".25", "1e-3". Rejects inf, nan, hex and trailing text.
std::optional<double> parse_decimal(std::string_view s) {
  std::size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  std::size_t digits = 0;
  while (i < s.size() && is_digit(s[i])) ++i, ++digits;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && is_digit(s[i])) ++i, ++digits;
  }
  if (digits == 0) return std::nullopt;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (i == s.size() || !is_digit(s[i])) return std::nullopt;
    while (i < s.size() && is_digit(s[i])) ++i;
  }
  if (i != s.size()) return std::nullopt;
  // from_chars takes no leading '+', and is locale-independent unlike strtod.
  const std::size_t start = s[0] == '+' ? 1 : 0;
  double value = 0;
  const auto [end, ec] = std::from_chars(s.data() + start, s.data() + s.size(), value);
  if (ec == std::errc::result_out_of_range) {
    // Too small underflows to 0, too large is infinite; callers reject the latter as too large.
    const std::size_t e = s.find_first_of("eE");
    return e != std::string_view::npos && s[e + 1] == '-' ? 0.0 : std::numeric_limits<double>::infinity();
  }
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return value;
}

// Plain digits only: "300", not "3e2", "+3" or "300.0". Sets `too_large` on int64 overflow.
std::optional<std::int64_t> parse_count(std::string_view s, bool* too_large) {
  *too_large = false;
  if (s.empty() || !std::all_of(s.begin(), s.end(), is_digit)) return std::nullopt;
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec == std::errc::result_out_of_range) {
    *too_large = true;
    return std::nullopt;
  }
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return value;
}

std::string plural(std::int64_t n, const char* one, const char* many) { return n == 1 ? one : many; }

// Names errors after the record: "path:line: what", or "path: job N: what" when the line of a
// JSON record cannot be found.
struct Place {
  const std::string& path;
  long line;          // 0 when unknown
  std::size_t index;  // 0-based position in the file

  std::string operator()(const std::string& what) const {
    if (line > 0) return core::at(path, line, what);
    return path + ": job " + std::to_string(index + 1) + ": " + what;
  }
  [[noreturn]] void fail(const std::string& what) const { throw core::InputError((*this)(what)); }
  std::string where_first() const {
    return line > 0 ? "first at line " + std::to_string(line) : "first is job " + std::to_string(index + 1);
  }
};

// The cell as it appears in messages ("got '...'"); only built on the error path.
std::string quoted(std::string_view text) { return "'" + std::string(text) + "'"; }

template <typename Ok>
double decimal_field(const Place& place, const std::string& name, std::string_view text, const char* range, Ok ok) {
  const std::optional<double> v = parse_decimal(text);
  if (!v || std::isnan(*v) || !ok(*v)) place.fail(name + " must be a number " + range + ", got " + quoted(text));
  return *v;
}

std::int64_t count_field(const Place& place, const std::string& name, std::string_view text) {
  bool too_large = false;
  const std::optional<std::int64_t> v = parse_count(text, &too_large);
  if (too_large) place.fail(name + " is too large, got " + quoted(text));
  if (!v || *v <= 0) place.fail(name + " must be a positive integer, got " + quoted(text));
  return *v;
}

core::TimeNs seconds_field(const Place& place, const std::string& name, std::string_view text, bool positive) {
  const double s = decimal_field(place, name, text, positive ? "> 0" : ">= 0",
                                 [positive](double v) { return positive ? v > 0 : v >= 0; });
  const std::optional<core::TimeNs> ns = core::ns_from_seconds(s);
  if (!ns) place.fail(name + " is too large, got " + quoted(text));
  if (positive && *ns <= 0) place.fail(name + " rounds to 0 ns, got " + quoted(text));
  return *ns;
}

std::int32_t util_field(const Place& place, std::string_view text) {
  const double u = decimal_field(place, "gpu_util", text, "in (0, 1]", [](double v) { return v > 0 && v <= 1; });
  const auto ppm = static_cast<std::int32_t>(std::llround(u * 1e6));
  if (ppm <= 0) place.fail("gpu_util rounds to 0 (resolution 1e-6), got " + quoted(text));
  return ppm;
}

// A signed integer of plain digits ("3", "-1"; not "1.0" or "1e2") in int32 range.
std::int32_t priority_field(const Place& place, const std::string& text) {
  std::string_view digits = text;
  const bool negative = !digits.empty() && digits.front() == '-';
  if (negative) digits.remove_prefix(1);
  bool too_large = false;
  const std::optional<std::int64_t> v = digits.empty() ? std::nullopt : parse_count(digits, &too_large);
  const std::int64_t limit = std::numeric_limits<std::int32_t>::max();
  if (too_large || (v && *v > limit)) place.fail("priority is out of range (at most " + std::to_string(limit) + " either way), got '" + text + "'");
  if (!v) place.fail("priority must be an integer (higher runs first), got '" + text + "'");
  return static_cast<std::int32_t>(negative ? -*v : *v);
}

void check_solo_time(const Place& place, const core::JobSpec& job) {
  if (job.iterations > std::numeric_limits<core::TimeNs>::max() / job.iter_ns) {
    place.fail("iterations * iteration time does not fit in 64-bit nanoseconds");
  }
}

// ---- native records (CSV and JSON) ---------------------------------------------------------

enum Column { kJobId, kWorkload, kArrival, kIterations, kPersistent, kEphemeral, kIterMs, kGpuUtil, kPriority, kColumnCount };
constexpr std::array<const char*, kColumnCount> kColumnNames = {
    "job_id", "workload", "arrival_s", "iterations", "persistent_mib", "ephemeral_mib", "iter_ms", "gpu_util", "priority"};

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
    if (!profile) place.fail("unknown workload '" + job.workload + "' (valid: " + catalog.names_joined() + ")");
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
    if (!bytes) place.fail(name + " is too large, got '" + raw[c] + "'");
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
    if (!ns) place.fail("iter_ms is too large, got '" + raw[kIterMs] + "'");
    if (*ns <= 0) place.fail("iter_ms rounds to 0 ns, got '" + raw[kIterMs] + "'");
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
  // Optional, for the priority policy; 0 when absent or empty.
  if (!raw[kPriority].empty()) job.priority = priority_field(place, raw[kPriority]);
  check_solo_time(place, job);
  return job;
}

// The job_ids seen so far and where each was first seen ("first at line 3"): an open-addressing
// table of (job index, hash of its id) into the trace's jobs, whose own strings are the keys. A
// trace of millions of jobs costs no allocation per job, and a new id compares against another
// job's string only when their hashes agree.
class FirstSeen {
 public:
  // The index of the earlier job with this id, or -1.
  std::int64_t find(const std::vector<core::JobSpec>& jobs, std::string_view id) const {
    if (slots_.empty()) return -1;
    const std::uint32_t h = hash(id);
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = h & mask;; i = (i + 1) & mask) {
      const Slot& s = slots_[i];
      if (s.job == 0) return -1;
      if (s.hash == h && jobs[s.job - 1].id == id) return static_cast<std::int64_t>(s.job - 1);
    }
  }
  // Starts loading the slot where `id` would go: the table is larger than the caches, and the
  // row's other fields are parsed while the load is in flight.
  void prefetch(std::string_view id) const {
    if (!slots_.empty()) __builtin_prefetch(&slots_[hash(id) & (slots_.size() - 1)]);
  }
  // Records the last job of `jobs`, found at `place`.
  void add(const std::vector<core::JobSpec>& jobs, const Place& place) {
    if (where_.empty()) {
      where_.reserve(jobs.capacity());
      advise_huge_pages(where_.data(), where_.capacity() * sizeof(where_[0]));
    }
    where_.push_back({place.line, place.index});
    const Slot added{static_cast<std::uint32_t>(jobs.size()), hash(jobs.back().id)};
    if (jobs.size() * 2 > slots_.size()) {  // load factor at most 1/2; sized for the reserved jobs at once
      std::size_t n = std::max<std::size_t>(64, slots_.size() * 2);
      while (n < jobs.capacity() * 2) n *= 2;
      std::vector<Slot> old;
      old.reserve(n);
      advise_huge_pages(old.data(), n * sizeof(Slot));
      old.resize(n);
      old.swap(slots_);
      for (const Slot& s : old) {
        if (s.job != 0) put(s);
      }
    }
    put(added);
  }
  std::string where_first(std::int64_t k) const {
    const auto& [line, index] = where_[static_cast<std::size_t>(k)];
    return line > 0 ? "first at line " + std::to_string(line) : "first is job " + std::to_string(index + 1);
  }

 private:
  struct Slot {
    std::uint32_t job = 0;  // index + 1; 0: empty
    std::uint32_t hash = 0;
  };
  static std::uint32_t hash(std::string_view id) {
    const std::size_t h = std::hash<std::string_view>{}(id);
    return static_cast<std::uint32_t>(h ^ (h >> 32));
  }
  void put(const Slot& s) {
    const std::size_t mask = slots_.size() - 1;
    std::size_t i = s.hash & mask;
    while (slots_[i].job != 0) i = (i + 1) & mask;
    slots_[i] = s;
  }
  std::vector<Slot> slots_;
  std::vector<std::pair<long, std::size_t>> where_;
};

// Appends a job, rejecting a job_id seen before.
void add_job(Trace& trace, core::JobSpec job, const Place& place, FirstSeen& first) {
  if (const std::int64_t k = first.find(trace.jobs, job.id); k >= 0) {
    place.fail("duplicate job_id '" + job.id + "' (" + first.where_first(k) + ")");
  }
  job.trace_order = static_cast<std::int32_t>(trace.jobs.size());
  trace.jobs.push_back(std::move(job));
  trace.whole_gpu.push_back(false);
  first.add(trace.jobs, place);
}

void check_field_count(const std::string& path, const CsvRow& header, const CsvReader& row) {
  if (row.fields().size() != header.fields.size()) {
    throw core::InputError(core::at(path, row.line(),
                                    "expected " + std::to_string(header.fields.size()) + " fields, found " +
                                        std::to_string(row.fields().size())));
  }
}

// `rows` is positioned after the header.
void load_native_csv(Trace& trace, const CsvRow& header, CsvReader& rows, const Catalog& catalog) {
  const std::string& path = trace.path;
  std::array<int, kColumnCount> index;
  index.fill(-1);
  for (std::size_t i = 0; i < header.fields.size(); ++i) {
    const std::string& name = header.fields[i];
    if (name.empty()) throw core::InputError(core::at(path, header.line, "column " + std::to_string(i + 1) + " has no name"));
    const std::optional<Column> c = find_column(name);
    if (!c) throw core::InputError(core::at(path, header.line, "unknown column '" + name + "' (valid: " + column_list() + ")"));
    if (index[*c] >= 0) throw core::InputError(core::at(path, header.line, "duplicate column '" + name + "'"));
    index[*c] = static_cast<int>(i);
  }
  for (Column c : {kJobId, kArrival, kIterations}) {
    if (index[c] < 0) {
      throw core::InputError(core::at(path, header.line, std::string("missing required column '") + kColumnNames[c] + "'"));
    }
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
  if (trace.jobs.empty()) throw core::InputError(core::at(path, header.line, "no jobs"));
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
      if (item.key() != "jobs") throw core::InputError(core::at(path, 1, "unknown key '" + item.key() + "' (valid: jobs)"));
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
  for (std::size_t r = 0; r < records->size(); ++r) {
    const json& record = (*records)[r];
    const Place place{path, lines.size() == records->size() ? lines[r] : 0, r};
    if (!record.is_object()) place.fail("a job must be a JSON object, got " + record.dump());
    RawJob raw;
    for (const auto& item : record.items()) {
      const std::optional<Column> c = find_column(item.key());
      if (!c) place.fail("unknown key '" + item.key() + "' (valid: " + column_list() + ")");
      const json& v = item.value();
      std::string& cell = raw[*c];
      if (v.is_null()) continue;  // like an empty CSV cell
      if (*c == kJobId) {
        if (v.is_string()) cell = v.get<std::string>();
        else if (v.is_number_integer()) cell = v.dump();
        else place.fail("job_id must be a string or an integer, got " + v.dump());
      } else if (*c == kWorkload) {
        if (!v.is_string()) place.fail("workload must be a string, got " + v.dump());
        cell = v.get<std::string>();
      } else {
        if (!v.is_number()) place.fail(std::string(kColumnNames[*c]) + " must be a JSON number, got " + v.dump());
        cell = v.dump();
      }
    }
    add_job(trace, make_job(raw, catalog, place), place, first);
  }
}

// ---- Tiresias -----------------------------------------------------------------------------

enum TiresiasColumn { kTJobId, kTNumGpu, kTSubmit, kTIterations, kTModel, kTDuration, kTInterval, kTColumnCount };
constexpr std::array<const char*, kTColumnCount> kTiresiasNames = {
    "job_id", "num_gpu", "submit_time", "iterations", "model_name", "duration", "interval"};

bool is_tiresias_header(const CsvRow& header) {
  auto has = [&](std::string_view name) {
    return std::find(header.fields.begin(), header.fields.end(), name) != header.fields.end();
  };
  return has("num_gpu") && has("submit_time") && has("model_name");
}

// `rows` is positioned after the header.
void load_tiresias(Trace& trace, const CsvRow& header, CsvReader& rows, const Catalog& catalog) {
  const std::string& path = trace.path;
  std::array<int, kTColumnCount> index;
  index.fill(-1);
  for (std::size_t i = 0; i < header.fields.size(); ++i) {
    const std::string& name = header.fields[i];
    const auto it = std::find(kTiresiasNames.begin(), kTiresiasNames.end(), std::string_view(name));
    if (it == kTiresiasNames.end()) {
      std::string valid;
      for (const char* n : kTiresiasNames) valid += (valid.empty() ? "" : ", ") + std::string(n);
      throw core::InputError(
          core::at(path, header.line, "unknown column '" + name + "' in a Tiresias trace (valid: " + valid + ")"));
    }
    const auto c = static_cast<std::size_t>(it - kTiresiasNames.begin());
    if (index[c] >= 0) throw core::InputError(core::at(path, header.line, "duplicate column '" + name + "'"));
    index[c] = static_cast<int>(i);
  }
  for (std::size_t c = 0; c < kTColumnCount; ++c) {
    if (c != kTInterval && index[c] < 0) {
      throw core::InputError(
          core::at(path, header.line, std::string("missing required column '") + kTiresiasNames[c] + "' in a Tiresias trace"));
    }
  }
  std::int64_t from_catalog = 0;
  std::map<std::string, std::pair<std::string, std::int64_t>> mapped;  // model -> (variant, jobs)
  std::int64_t missing_jobs = 0;
  std::set<std::string> missing_models;
  std::int64_t multi_gpu = 0;
  FirstSeen first;
  for (std::size_t r = 0; rows.next(); ++r) {
    check_field_count(path, header, rows);
    const Place place{path, rows.line(), r};
    auto cell = [&](TiresiasColumn c) { return rows.fields()[static_cast<std::size_t>(index[c])]; };
    core::JobSpec job;
    job.id = cell(kTJobId);
    if (job.id.empty()) place.fail("job_id is missing");
    const std::int64_t num_gpu = count_field(place, "num_gpu", cell(kTNumGpu));
    job.arrival_ns = seconds_field(place, "submit_time", cell(kTSubmit), false);
    job.iterations = count_field(place, "iterations", cell(kTIterations));
    const std::string model(cell(kTModel));
    if (model.empty()) place.fail("model_name is missing");
    const core::TimeNs duration = seconds_field(place, "duration", cell(kTDuration), true);

    const WorkloadProfile* profile = catalog.find(model);
    if (!profile) {
      profile = catalog.find_model(model);
      if (profile) {
        auto& m = mapped[model];
        m.first = profile->name;
        ++m.second;
      }
    }
    bool whole_gpu = false;
    if (profile) {
      ++from_catalog;
      job.workload = profile->name;
      job.persistent = profile->persistent;
      job.ephemeral = profile->ephemeral;
      job.iter_ns = profile->iter_ns;
      job.gpu_util_ppm = profile->gpu_util_ppm;
      job.first_iter_extra_ns = profile->first_iter_extra_ns;
    } else {
      ++missing_jobs;
      missing_models.insert(model);
      whole_gpu = true;
      job.workload = model;
      job.persistent = 0;
      job.ephemeral = 0;  // placeholder: jobs_for_capacity sets E = capacity
      job.iter_ns = std::max<core::TimeNs>(1, (duration + job.iterations / 2) / job.iterations);
      job.gpu_util_ppm = 1'000'000;
    }
    if (num_gpu > 1) {
      ++multi_gpu;
      if (job.iter_ns > std::numeric_limits<core::TimeNs>::max() / num_gpu) {
        place.fail("iteration time * num_gpu does not fit in 64-bit nanoseconds");
      }
      job.iter_ns *= num_gpu;
    }
    check_solo_time(place, job);
    add_job(trace, std::move(job), place, first);
    trace.whole_gpu.back() = whole_gpu;
  }
  if (trace.jobs.empty()) throw core::InputError(core::at(path, header.line, "no jobs"));

  if (from_catalog > 0) {
    trace.notes.push_back(std::to_string(from_catalog) + plural(from_catalog, " job takes", " jobs take") +
                          " P, E, iteration time and gpu_util from the catalog (their duration is ignored)");
  }
  if (!mapped.empty()) {
    std::int64_t n = 0;
    std::string list;
    for (const auto& [model, variant] : mapped) {
      n += variant.second;
      list += (list.empty() ? "" : ", ") + model + " -> " + variant.first + " (" + std::to_string(variant.second) +
              plural(variant.second, " job)", " jobs)");
    }
    trace.notes.push_back(std::to_string(n) + plural(n, " job names a model", " jobs name models") +
                          " without batch size, mapped to the smallest batch variant in the catalog: " + list);
  }
  if (missing_jobs > 0) {
    std::string list;
    for (const std::string& m : missing_models) list += (list.empty() ? "" : ", ") + m;
    trace.notes.push_back(std::to_string(missing_jobs) + plural(missing_jobs, " job names ", " jobs name ") +
                          (missing_models.size() == 1 ? "a model" : "models") + " missing from the catalog (" + list +
                          "): iteration time from duration/iterations, memory assumed to be the whole GPU (P = 0, "
                          "E = capacity), as Salus assumes for a job that sends no estimates");
  }
  if (multi_gpu > 0) {
    trace.notes.push_back(std::to_string(multi_gpu) + plural(multi_gpu, " job", " jobs") +
                          " with num_gpu > 1 replayed on one GPU, iteration time × num_gpu (same total GPU-time)");
  }
  if (index[kTInterval] >= 0) trace.notes.push_back("the interval column is ignored");
}

}  // namespace

const char* to_string(TraceFormat f) {
  switch (f) {
    case TraceFormat::kNative: return "native";
    case TraceFormat::kJson: return "json";
    case TraceFormat::kTiresias: return "tiresias";
  }
  return "unknown";
}

Trace load_trace(const std::string& path, const Catalog& catalog) {
  const std::string text = read_text_file(path, "trace file");
  Trace trace;
  trace.path = path;

  std::size_t i = text.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
  while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n')) ++i;
  if (i < text.size() && (text[i] == '{' || text[i] == '[')) {
    trace.format = TraceFormat::kJson;
    load_json(trace, text, catalog);
    return trace;
  }
  // One job per line at most: reserving keeps a large trace from being copied as it grows.
  trace.jobs.reserve(static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) + 1);
  advise_huge_pages(trace.jobs.data(), trace.jobs.capacity() * sizeof(core::JobSpec));
  trace.whole_gpu.reserve(trace.jobs.capacity());
  CsvReader rows(text, path);
  if (!rows.next()) throw core::InputError(core::at(path, 1, "no jobs"));
  const CsvRow header{rows.line(), {rows.fields().begin(), rows.fields().end()}};
  if (is_tiresias_header(header)) {
    trace.format = TraceFormat::kTiresias;
    load_tiresias(trace, header, rows, catalog);
  } else {
    trace.format = TraceFormat::kNative;
    load_native_csv(trace, header, rows, catalog);
  }
  return trace;
}

std::vector<core::JobSpec> jobs_for_capacity(const Trace& trace, core::Bytes capacity) {
  Trace copy = trace;
  return jobs_for_capacity(std::move(copy), capacity);
}

std::vector<core::JobSpec> jobs_for_capacity(Trace&& trace, core::Bytes capacity) {
  std::vector<core::JobSpec> jobs = std::move(trace.jobs);
  trace.jobs.clear();
  for (std::size_t i = 0; i < jobs.size() && i < trace.whole_gpu.size(); ++i) {
    if (trace.whole_gpu[i]) {
      jobs[i].persistent = 0;
      jobs[i].ephemeral = capacity;
    }
  }
  return jobs;
}

std::vector<core::JobSpec> scale_time(std::vector<core::JobSpec> jobs, double factor) {
  if (!(factor >= 1.0) || !std::isfinite(factor)) throw core::InputError("--time-scale: must be a number >= 1");
  for (core::JobSpec& j : jobs) {
    j.arrival_ns = static_cast<core::TimeNs>(std::llround(static_cast<double>(j.arrival_ns) / factor));
    j.iterations = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(static_cast<double>(j.iterations) / factor)));
  }
  return jobs;
}

}  // namespace salus::traces
