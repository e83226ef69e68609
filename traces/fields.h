#pragma once
/// Field parsing and bookkeeping shared by the trace readers (trace.cpp, import_public.cpp): plain
/// decimals and counts, errors named "path:line: what", the duplicate-job_id table. Internal to
/// salus_traces.
#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/errors.h"
#include "core/job.h"
#include "traces/csv.h"
#include "traces/trace.h"

namespace salus::traces::fields {

// ---- field parsing -------------------------------------------------------------------------

inline bool is_digit(char c) { return c >= '0' && c <= '9'; }

// A plain decimal such as "12", "-0.5", ".25", "1e-3". Rejects inf, nan, hex and trailing text.
inline std::optional<double> parse_decimal(std::string_view s) {
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
inline std::optional<std::int64_t> parse_count(std::string_view s, bool* too_large) {
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

inline std::string plural(std::int64_t n, const char* one, const char* many) { return n == 1 ? one : many; }

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

// The cell as it appears in messages ("got '...'"); only built on the error path. A long cell is
// cut to its first 60 bytes and its length, so that a message stays a line.
inline std::string quoted(std::string_view text) {
  if (text.size() <= 80) return "'" + text_excerpt(text) + "'";
  return "'" + text_excerpt(text.substr(0, 60), 60) + "...' (" + std::to_string(text.size()) + " bytes)";
}

template <typename Ok>
inline double decimal_field(const Place& place, const std::string& name, std::string_view text, const char* range, Ok ok) {
  const std::optional<double> v = parse_decimal(text);
  if (!v || std::isnan(*v) || !ok(*v)) place.fail(name + " must be a number " + range + ", got " + quoted(text));
  return *v;
}

inline std::int64_t count_field(const Place& place, const std::string& name, std::string_view text) {
  bool too_large = false;
  const std::optional<std::int64_t> v = parse_count(text, &too_large);
  if (too_large) place.fail(name + " is too large, got " + quoted(text));
  if (!v || *v <= 0) place.fail(name + " must be a positive integer, got " + quoted(text));
  return *v;
}

/// A GPU count column: an integer >= 0 (0: a CPU-only job, which importers skip) that fits JobSpec::gpus.
inline std::int32_t gpu_count_field(const Place& place, const std::string& name, std::string_view text) {
  bool too_large = false;
  const std::optional<std::int64_t> v = parse_count(text, &too_large);
  if (!v || *v > std::numeric_limits<std::int32_t>::max()) {
    place.fail(name + " must be an integer >= 0, got " + quoted(text));
  }
  return static_cast<std::int32_t>(*v);
}

inline core::TimeNs seconds_field(const Place& place, const std::string& name, std::string_view text, bool positive) {
  const double s = decimal_field(place, name, text, positive ? "> 0" : ">= 0",
                                 [positive](double v) { return positive ? v > 0 : v >= 0; });
  const std::optional<core::TimeNs> ns = core::ns_from_seconds(s);
  if (!ns) place.fail(name + " is too large, got " + quoted(text));
  if (positive && *ns <= 0) place.fail(name + " rounds to 0 ns, got " + quoted(text));
  return *ns;
}

inline std::int32_t util_field(const Place& place, std::string_view text) {
  const double u = decimal_field(place, "gpu_util", text, "in (0, 1]", [](double v) { return v > 0 && v <= 1; });
  const auto ppm = static_cast<std::int32_t>(std::llround(u * 1e6));
  if (ppm <= 0) place.fail("gpu_util rounds to 0 (resolution 1e-6), got " + quoted(text));
  return ppm;
}

// A signed integer of plain digits ("3", "-1"; not "1.0" or "1e2") in int32 range.
inline std::int32_t priority_field(const Place& place, const std::string& text) {
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

inline void check_solo_time(const Place& place, const core::JobSpec& job) {
  if (job.iterations > std::numeric_limits<core::TimeNs>::max() / job.iter_ns) {
    place.fail("iterations * iteration time does not fit in 64-bit nanoseconds");
  }
}

// The job_ids seen so far and where each was first seen ("first at line 3"): an open-addressing
// table of (job index, hash of its id) into the trace's jobs, whose own strings are the keys. A
// trace of millions of jobs costs no allocation per job, and a new id compares against another
// job's string only when their hashes agree.
class FirstSeen {
 public:
  // The index of the earlier job with this id, or -1.
  std::int64_t find(const std::vector<core::JobSpec>& jobs, std::string_view id) const {
    return probe(id, [&](std::uint32_t job) { return jobs[job].id == id; });
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
    where_.push_back(place.line > 0 ? place.line : -static_cast<std::int64_t>(place.index) - 1);
    const Slot added{static_cast<std::uint32_t>(jobs.size()), hash(jobs.back().id)};
    if (jobs.size() * 4 > slots_.size() * 3) {  // load factor at most 3/4; sized for the reserved jobs at once
      std::size_t n = std::max<std::size_t>(64, slots_.size() * 2);
      while (n * 3 < jobs.capacity() * 4) n *= 2;
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
  // The same for jobs that are not kept (streaming): the table keeps its own copy of each id.
  std::int64_t find_own(std::string_view id) const {
    return probe(id, [&](std::uint32_t job) { return own_id(job) == id; });
  }
  void add_own(std::string_view id, const Place& place) {
    ids_.append(id);
    id_ends_.push_back(ids_.size());
    where_.push_back(place.line > 0 ? place.line : -static_cast<std::int64_t>(place.index) - 1);
    const Slot added{static_cast<std::uint32_t>(id_ends_.size()), hash(id)};
    if (id_ends_.size() * 4 > slots_.size() * 3) {
      std::vector<Slot> old(std::max<std::size_t>(64, slots_.size() * 2));
      old.swap(slots_);
      for (const Slot& s : old) {
        if (s.job != 0) put(s);
      }
    }
    put(added);
  }
  std::string where_first(std::int64_t k) const {
    const std::int64_t w = where_[static_cast<std::size_t>(k)];
    return w > 0 ? "first at line " + std::to_string(w) : "first is job " + std::to_string(-w);
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
  // The index of the earlier job whose id hashes as `id` and `same(index)` says is it, or -1.
  template <typename Same>
  std::int64_t probe(std::string_view id, Same&& same) const {
    if (slots_.empty()) return -1;
    const std::uint32_t h = hash(id);
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = h & mask;; i = (i + 1) & mask) {
      const Slot& s = slots_[i];
      if (s.job == 0) return -1;
      if (s.hash == h && same(s.job - 1)) return static_cast<std::int64_t>(s.job - 1);
    }
  }
  void put(const Slot& s) {
    const std::size_t mask = slots_.size() - 1;
    std::size_t i = s.hash & mask;
    while (slots_[i].job != 0) i = (i + 1) & mask;
    slots_[i] = s;
  }
  std::string_view own_id(std::size_t k) const {
    const std::size_t start = k == 0 ? 0 : id_ends_[k - 1];
    return std::string_view(ids_).substr(start, id_ends_[k] - start);
  }
  std::vector<Slot> slots_;
  std::string ids_;                   // streaming: every id, end to end
  std::vector<std::uint64_t> id_ends_;  // where each ends in ids_
  std::vector<std::int64_t> where_;  // each job's line, or -(its index + 1) where it has none (JSON)
};

// Appends a job, rejecting a job_id seen before; streaming (trace.sink), hands it to the sink.
inline void add_job(Trace& trace, core::JobSpec job, const Place& place, FirstSeen& first) {
  if (trace.sink != nullptr) {
    if (const std::int64_t k = first.find_own(job.id); k >= 0) {
      place.fail("duplicate job_id '" + job.id + "' (" + first.where_first(k) + ")");
    }
    job.trace_order = static_cast<std::int32_t>(trace.streamed);
    first.add_own(job.id, place);
    (*trace.sink)(job);
    ++trace.streamed;
    return;
  }
  if (const std::int64_t k = first.find(trace.jobs, job.id); k >= 0) {
    place.fail("duplicate job_id '" + job.id + "' (" + first.where_first(k) + ")");
  }
  job.trace_order = static_cast<std::int32_t>(trace.jobs.size());
  trace.jobs.push_back(std::move(job));
  trace.whole_gpu.push_back(false);
  trace.memory_share_ppm.push_back(1'000'000);
  first.add(trace.jobs, place);
}

inline void check_field_count(const std::string& path, const CsvRow& header, const CsvReader& row) {
  if (row.fields().size() != header.fields.size()) {
    throw core::InputError(core::at(path, row.line(),
                                    "expected " + std::to_string(header.fields.size()) + " fields, found " +
                                        std::to_string(row.fields().size())));
  }
}

}  // namespace salus::traces::fields

namespace salus::traces::fields {

/// Gives `job` a solo time of exactly `duration` over `iterations` iterations: iter_ns =
/// duration / iterations (at least 1 ns), the remainder on the first iteration
/// (first_iter_extra_ns).
inline void set_duration(core::JobSpec& job, core::TimeNs duration, std::int64_t iterations) {
  job.iterations = iterations;
  job.iter_ns = std::max<core::TimeNs>(1, duration / iterations);
  job.first_iter_extra_ns = std::max<core::TimeNs>(0, duration - job.iter_ns * iterations);
}

/// The same for a trace without iteration counts: max(1, duration / assumed) iterations.
inline void set_duration_assumed(core::JobSpec& job, core::TimeNs duration, core::TimeNs assumed_iter_ns) {
  set_duration(job, duration, std::max<std::int64_t>(1, duration / assumed_iter_ns));
}

/// "a, b, c".
inline std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace salus::traces::fields

namespace salus::traces {
// The importers of the public traces (import_public.cpp), read through trace_format_registry().
void read_gavel(Trace& trace, TraceInput& input, const Catalog& catalog, const LoadOptions& options);
void read_philly(Trace& trace, TraceInput& input, const Catalog& catalog, const LoadOptions& options);
void read_helios(Trace& trace, TraceInput& input, const Catalog& catalog, const LoadOptions& options);
void read_alibaba(Trace& trace, TraceInput& input, const Catalog& catalog, const LoadOptions& options);
void read_pollux(Trace& trace, TraceInput& input, const Catalog& catalog, const LoadOptions& options);
void read_acme(Trace& trace, TraceInput& input, const Catalog& catalog, const LoadOptions& options);
void read_lucid(Trace& trace, TraceInput& input, const Catalog& catalog, const LoadOptions& options);
void read_pai2020(Trace& trace, TraceInput& input, const Catalog& catalog, const LoadOptions& options);
}  // namespace salus::traces
