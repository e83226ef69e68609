#include "run/output.h"
#include "traces/csv.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <charconv>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <functional>
#include <cstdio>
#include <stdexcept>
#include <string_view>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/errors.h"

namespace salus::run {

using traces::append_csv_field;

std::string file_type_text(unsigned mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISREG(mode)) return "a regular file";
  return "not a regular file";
}

std::string write_failed(const std::string& path, int error) {
  return path + ": cannot write: " + (error != 0 ? std::strerror(error) : "write failed") +
         " (the old file, if any, is as it was)";
}

std::string not_a_regular_file(unsigned mode) {
  return "is " + file_type_text(mode) + ", not a regular file (an output replaces only a regular file)";
}

namespace {

// Appends the exact decimal seconds of a nanosecond count (seconds_text) without a temporary.
void append_seconds(std::string& out, core::TimeNs ns) {
  const bool neg = ns < 0;
  const unsigned long long a = neg ? 0ULL - static_cast<unsigned long long>(ns) : static_cast<unsigned long long>(ns);
  char buf[48];
  char* p = buf;
  if (neg) *p++ = '-';
  p = std::to_chars(p, buf + sizeof buf, a / 1'000'000'000ULL).ptr;
  unsigned long long frac = a % 1'000'000'000ULL;
  if (frac != 0) {
    *p++ = '.';
    int digits = 9;
    while (frac % 10 == 0) {
      frac /= 10;
      --digits;
    }
    for (int i = digits - 1; i >= 0; --i) {
      p[i] = static_cast<char>('0' + frac % 10);
      frac /= 10;
    }
    p += digits;
  }
  out.append(buf, p);
}

}  // namespace

std::string seconds_text(core::TimeNs ns) {
  std::string s;
  append_seconds(s, ns);
  return s;
}

namespace {

void append_mib(std::string& out, core::Bytes b) {
  char buf[48];
  int n = std::snprintf(buf, sizeof buf, "%.6f", core::to_mib(b));
  while (n > 0 && buf[n - 1] == '0') --n;
  if (n > 0 && buf[n - 1] == '.') --n;
  out.append(buf, static_cast<std::size_t>(n));
}

template <typename Int>
void append_int(std::string& out, Int v) {
  char buf[24];
  out.append(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
}

void append_opt_seconds(std::string& out, core::TimeNs ns) {
  if (ns >= 0) append_seconds(out, ns);
}

void create_parent(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path p(path);
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path(), ec);
}

// Temporaries removed when a catchable signal ends the program (SIGHUP, SIGINT, SIGTERM, SIGQUIT;
// SIGKILL cannot be caught and leaves at worst one stray temporary). The one process-wide state of
// this file: a signal handler has nowhere else to look. Each slot is claimed by an OutFile for its
// temporary's life; the handler only reads slots marked ready and calls unlink(), which is
// async-signal-safe. A handler is installed only over the default action, so a program's own
// (salus-run's SIGINT, which ends its run and writes the outputs) and an ignored signal stay.
constexpr std::size_t kTemporarySlots = 64;
constexpr std::size_t kTemporaryPathBytes = 4096;
struct TemporarySlot {
  std::atomic<int> state{0};  // 0 free, 1 being filled, 2 ready
  char path[kTemporaryPathBytes];
};
TemporarySlot g_temporaries[kTemporarySlots];

extern "C" void remove_temporaries_and_reraise(int sig) {
  for (TemporarySlot& slot : g_temporaries) {
    if (slot.state.load() == 2) ::unlink(slot.path);
  }
  // SA_RESETHAND restored the default action: raised again, the signal ends the program as it
  // would have, with its status.
  ::raise(sig);
}

void install_temporary_cleanup() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (const int sig : {SIGHUP, SIGINT, SIGTERM, SIGQUIT}) {
      struct sigaction current {};
      if (::sigaction(sig, nullptr, &current) != 0 || current.sa_handler != SIG_DFL) continue;
      struct sigaction mine {};
      mine.sa_handler = remove_temporaries_and_reraise;
      sigemptyset(&mine.sa_mask);
      mine.sa_flags = SA_RESETHAND;
      ::sigaction(sig, &mine, nullptr);
    }
  });
}

// The slot holding `path`, or -1 when none is free or the path does not fit (then a signal leaves it).
int claim_temporary(const std::string& path) {
  install_temporary_cleanup();
  if (path.size() >= kTemporaryPathBytes) return -1;
  for (std::size_t k = 0; k < kTemporarySlots; ++k) {
    int expected = 0;
    if (g_temporaries[k].state.compare_exchange_strong(expected, 1)) {
      std::memcpy(g_temporaries[k].path, path.c_str(), path.size() + 1);
      g_temporaries[k].state.store(2);
      return static_cast<int>(k);
    }
  }
  return -1;
}

void release_temporary(int slot) {
  if (slot >= 0) g_temporaries[static_cast<std::size_t>(slot)].state.store(0);
}

// After a rename: the folder's entry reaches the disk (the file's bytes did by fsync before it).
void sync_folder(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  const int fd = ::open(parent.empty() ? "." : parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

// A file written through a buffer that is flushed as it fills, so an output of any size costs a
// megabyte of memory. Callers append to line() and call row() after each line. The bytes go to a
// temporary file beside the target (".<name>.tmp-<pid>-<n>", same folder, so same file system),
// synced and renamed over the target by close(), and the folder synced: a run killed at any moment
// (or a machine that loses power) leaves the previous complete file or the new complete one, never
// a torn one; a catchable signal removes the temporary. Not closed (an exception on the way), the
// temporary is removed and the target left as it was. The target, when it exists, must be a
// regular file (never a device, FIFO or socket: check_target), and the new file gets its
// permissions.
class OutFile {
 public:
  explicit OutFile(std::string path) : path_(std::move(path)) {
    create_parent(path_);
    const std::optional<struct stat> old = check_target();
    const mode_t mode = old ? (old->st_mode & 0777) : 0;
    static std::atomic<unsigned> counter{0};
    const std::filesystem::path p(path_);
    tmp_ = (p.parent_path() / ("." + p.filename().string() + ".tmp-" + std::to_string(::getpid()) + "-" +
                               std::to_string(counter++)))
               .string();
    slot_ = claim_temporary(tmp_);
    // Truncated, not exclusive: a temporary of the same name is a stray of a killed run whose pid
    // this one reuses (containers repeat pids).
    const int fd = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, old ? mode : 0666);
    if (fd >= 0 && old) {
      ::fchmod(fd, mode);  // exactly the old file's, whatever the umask
      // Root writing another user's file gives it back to them; elsewhere this fails, harmlessly.
      if (old->st_uid != ::geteuid() || old->st_gid != ::getegid()) {
        [[maybe_unused]] const int ignored = ::fchown(fd, old->st_uid, old->st_gid);
      }
    }
    f_ = fd < 0 ? nullptr : ::fdopen(fd, "wb");
    if (f_ == nullptr) {
      const int e = errno;
      if (fd >= 0) ::close(fd);
      ::unlink(tmp_.c_str());
      release_temporary(slot_);
      throw core::InputError(path_ + ": cannot open for writing (" + std::strerror(e) + ")");
    }
    buf_.reserve(kFlushBytes + 4096);
  }
  OutFile(const OutFile&) = delete;
  OutFile& operator=(const OutFile&) = delete;
  ~OutFile() {
    if (f_ != nullptr) {
      std::fclose(f_);
      std::remove(tmp_.c_str());
    }
    release_temporary(slot_);
  }
  std::string& line() { return buf_; }
  void row() {
    if (buf_.size() >= kFlushBytes) flush();
  }
  /// Flushes, syncs, closes and renames into place; throws core::InputError when any write failed
  /// or the target became something other than a regular file (the target then is as it was).
  void close() {
    flush();
    if (std::fflush(f_) != 0 || ::fsync(::fileno(f_)) != 0) fail(errno);
    if (std::fclose(f_) != 0) fail(errno);
    f_ = nullptr;
    if (failed_) {
      std::remove(tmp_.c_str());
      throw core::InputError(write_failed(path_, error_));
    }
    try {
      check_target();  // again: it may have been made a FIFO or device since the file was opened
    } catch (...) {
      std::remove(tmp_.c_str());
      throw;
    }
    if (std::rename(tmp_.c_str(), path_.c_str()) != 0) {
      const int e = errno;
      std::remove(tmp_.c_str());
      throw core::InputError(path_ + ": cannot write (" + std::strerror(e) + ")");
    }
    release_temporary(slot_);
    slot_ = -1;
    sync_folder(path_);
  }
  std::FILE* file() { return f_; }

 private:
  static constexpr std::size_t kFlushBytes = 1 << 20;
  // The file the output replaces (none: there is none); throws when the target is not a regular
  // file.
  std::optional<struct stat> check_target() const {
    struct stat st {};
    if (::stat(path_.c_str(), &st) != 0) return std::nullopt;
    if (!S_ISREG(st.st_mode)) {
      throw core::InputError(path_ + ": " + not_a_regular_file(st.st_mode));
    }
    return st;
  }
  void flush() {
    if (!buf_.empty() && std::fwrite(buf_.data(), 1, buf_.size(), f_) != buf_.size()) fail(errno);
    buf_.clear();
  }
  void fail(int e) {
    if (!failed_) error_ = e;
    failed_ = true;
  }
  std::string path_, tmp_;
  std::FILE* f_ = nullptr;
  std::string buf_;
  bool failed_ = false;
  int error_ = 0;  // errno of the first failure
  int slot_ = -1;
};

}  // namespace

namespace {

/// A time column's unit, chosen from its largest figure: seconds under 100 s, minutes under
/// 100 min, else hours.
struct TimeUnit {
  const char* name = "s";
  double seconds = 1;
};
TimeUnit unit_for(double longest_s) {
  if (longest_s < 100) return {"s", 1};
  if (longest_s < 6000) return {"min", 60};
  return {"h", 3600};
}

/// `seconds` in `unit` with two decimals; a figure that would read 0.00 but is not zero gets three
/// significant digits instead (0.00139 h), so that no time in a table reads as nothing.
std::string time_text(double seconds, TimeUnit unit) {
  const double v = seconds / unit.seconds;
  char text[48];
  if (v != 0 && std::abs(v) < 0.005) {
    std::snprintf(text, sizeof text, "%.3g %s", v, unit.name);
  } else {
    std::snprintf(text, sizeof text, "%.2f %s", v, unit.name);
  }
  return text;
}

/// The four time columns of the table, in order: makespan, average queuing, average JCT, p95 JCT.
std::array<double, 4> time_columns(const core::RunMetrics& m) {
  return {core::to_seconds(m.makespan_ns), m.avg_queuing_s, m.avg_jct_s, core::to_seconds(m.p95_jct_ns)};
}
std::array<TimeUnit, 4> table_units(const std::vector<PolicyRun>& runs) {
  std::array<double, 4> longest{};
  for (const PolicyRun& r : runs) {
    if (r.metrics.done == 0) continue;
    const std::array<double, 4> c = time_columns(r.metrics);
    for (std::size_t k = 0; k < c.size(); ++k) longest[k] = std::max(longest[k], c[k]);
  }
  std::array<TimeUnit, 4> units;
  for (std::size_t k = 0; k < units.size(); ++k) units[k] = unit_for(longest[k]);
  return units;
}

}  // namespace

std::string count_text(std::size_t n, const std::string& noun, const std::string& plural) {
  return std::to_string(n) + " " + (n == 1 ? noun : plural.empty() ? noun + "s" : plural);
}

void print_table(std::ostream& os, const std::vector<PolicyRun>& runs) {
  // Each time column in its own unit (seconds, minutes or hours, from its largest figure), so that
  // a short queuing time beside a long makespan does not read "0.00 h". Count columns widen to
  // their largest count.
  const std::array<TimeUnit, 4> units = table_units(runs);
  auto digits = [](long long v) { return static_cast<int>(std::to_string(v).size()); };
  int w_done = 6, w_rejected = 9, w_failed = 7, w_interrupted = 12;
  for (const PolicyRun& r : runs) {
    w_done = std::max(w_done, digits(r.metrics.done));
    w_rejected = std::max(w_rejected, digits(r.metrics.rejected));
    w_failed = std::max(w_failed, digits(r.metrics.failed));
    w_interrupted = std::max(w_interrupted, digits(r.metrics.interrupted));
  }
  char line[384];
  std::snprintf(line, sizeof line, "%-8s %-10s %12s %14s %12s %12s %*s %*s %*s %*s\n", "Policy", "Lanes", "Makespan",
                "Avg. Queuing", "Avg. JCT", "95% JCT", w_done, "Done", w_rejected, "Rejected", w_failed, "Failed",
                w_interrupted, "Interrupted");
  os << line;
  // A run in which no job finished has no makespan, queuing or JCT: a dash, not 0.00 s. The dash
  // is three bytes of UTF-8 but one column: padded by hand.
  auto cell = [&](double seconds, bool any, int width, TimeUnit unit) {
    if (any) {
      const std::string t = time_text(seconds, unit);
      return std::string(static_cast<std::size_t>(std::max(0, width - static_cast<int>(t.size()))), ' ') + t;
    }
    return std::string(static_cast<std::size_t>(width - 1), ' ') + "\u2014";
  };
  for (const PolicyRun& r : runs) {
    const core::RunMetrics& m = r.metrics;
    const bool any = m.done > 0;
    std::snprintf(line, sizeof line, "%-8s %-10s %s %s %s %s %*lld %*lld %*lld %*lld\n", r.policy.c_str(),
                  core::to_string(r.lane_mode), cell(core::to_seconds(m.makespan_ns), any, 12, units[0]).c_str(),
                  cell(m.avg_queuing_s, any, 14, units[1]).c_str(), cell(m.avg_jct_s, any, 12, units[2]).c_str(),
                  cell(core::to_seconds(m.p95_jct_ns), any, 12, units[3]).c_str(), w_done, static_cast<long long>(m.done),
                  w_rejected, static_cast<long long>(m.rejected), w_failed, static_cast<long long>(m.failed),
                  w_interrupted, static_cast<long long>(m.interrupted));
    os << line;
  }
}

nlohmann::json results_json(const std::vector<core::JobSpec>& jobs, const std::vector<PolicyRun>& runs) {
  // The one writer of the schema (write_result), read back: a document equal to what the
  // streamed summary holds.
  JsonWriter w;
  write_results_json(w, jobs, runs);
  return nlohmann::json::parse(w.text());
}

nlohmann::json result_json(const std::vector<core::JobSpec>& jobs, const PolicyRun& run) {
  JsonWriter w;
  write_result(w, jobs, run);
  return nlohmann::json::parse(w.text());
}

std::string read_text_tail(const std::string& path, std::size_t max_bytes) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return "";
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  return text.size() > max_bytes ? text.substr(text.size() - max_bytes) : text;
}

void write_text_file(const std::string& path, const std::string& text) {
  OutFile f(path);  // atomic: a temporary renamed into place
  f.line() = text;
  f.close();
}

void write_text_file(const std::string& path,
                     const std::function<void(const std::function<void(std::string_view)>& sink)>& produce) {
  OutFile f(path);
  produce([&f](std::string_view piece) {
    f.line().append(piece);
    f.row();
  });
  f.close();
}

void write_timeline_rows(const std::vector<core::Segment>& segments, const std::function<void(const core::Segment&)>& row) {
  // Segments come in completion order, one per dispatched run; rows go out in start order (ties:
  // lane). A run that continues the lane's previous one (same job, starting when it ended, no
  // switching cost: a run cut at a boundary and resumed) extends its row. A row is written once
  // the next segment of its lane has shown it closed and every earlier row is written, so only
  // rows still open wait in memory.
  std::vector<std::uint32_t> order(segments.size());
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = static_cast<std::uint32_t>(k);
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    const core::Segment& x = segments[a];
    const core::Segment& y = segments[b];
    return x.start_ns != y.start_ns ? x.start_ns < y.start_ns : x.lane < y.lane;
  });
  struct Pending {
    core::Segment row;
    bool closed;
  };
  std::deque<Pending> pending;
  std::int64_t front_id = 0;      // id of pending.front()
  std::vector<std::int64_t> open;  // per lane: id of its open row, -1 when none
  for (const std::uint32_t k : order) {
    const core::Segment& g = segments[k];
    const auto lane = static_cast<std::size_t>(g.lane);
    if (lane >= open.size()) open.resize(lane + 1, -1);
    if (open[lane] >= front_id) {
      Pending& p = pending[static_cast<std::size_t>(open[lane] - front_id)];
      if (g.rotation == 0 && p.row.job == g.job && p.row.end_ns == g.start_ns && g.switch_ns == 0) {
        p.row.end_ns = g.end_ns;
        p.row.iterations += g.iterations;
        continue;
      }
      p.closed = true;
    }
    // A rotation's rows are whole: nothing extends them.
    open[lane] = g.rotation == 0 ? front_id + static_cast<std::int64_t>(pending.size()) : -1;
    pending.push_back({g, g.rotation != 0});
    while (!pending.empty() && pending.front().closed) {
      row(pending.front().row);
      pending.pop_front();
      ++front_id;
    }
  }
  for (const Pending& p : pending) row(p.row);
}

const char* to_string(TimelineMode m) {
  switch (m) {
    case TimelineMode::kOff: return "off";
    case TimelineMode::kRuns: return "runs";
    case TimelineMode::kFull: return "full";
  }
  return "?";
}

TimelineMode parse_timeline_mode(const std::string& text, const std::string& option) {
  if (text == "off") return TimelineMode::kOff;
  if (text == "runs") return TimelineMode::kRuns;
  if (text == "full") return TimelineMode::kFull;
  throw core::InputError(option + ": unknown timeline mode '" + text + "' (valid: off, runs, full)");
}

namespace {

/// One CSV row appended to an OutFile's line: each field adds the comma before it, end() the line
/// end. Every CSV the programs write goes through it (and text fields through append_csv_field).
class Row {
 public:
  explicit Row(OutFile& f) : f_(f), l_(f.line()) {}
  Row& text(std::string_view v) { return sep(), append_csv_field(l_, v), *this; }
  Row& word(std::string_view v) { return sep(), l_ += v, *this; }  ///< a field that never needs quotes
  template <typename Int>
  Row& integer(Int v) { return sep(), append_int(l_, v), *this; }
  Row& seconds(core::TimeNs ns) { return sep(), append_seconds(l_, ns), *this; }
  Row& opt_seconds(core::TimeNs ns) { return sep(), append_opt_seconds(l_, ns), *this; }  ///< empty when < 0
  Row& mib(core::Bytes b) { return sep(), append_mib(l_, b), *this; }
  Row& none() { return sep(), *this; }  ///< an empty field
  void end() {
    l_ += '\n';
    f_.row();
  }

 private:
  void sep() {
    if (any_) l_ += ',';
    any_ = true;
  }
  OutFile& f_;
  std::string& l_;
  bool any_ = false;
};

/// DIR/<policy>_jobs.csv; returns the JCTs of the jobs done, ascending (for jct_cdf.csv).
std::vector<core::TimeNs> write_jobs_csv(const std::string& path, const std::vector<core::JobSpec>& jobs,
                                         const core::ScheduleOutcome& o) {
  OutFile f(path);
  f.line() += "id,workload,arrival_s,start_s,finish_s,jct_s,queuing_s,status,lane,iterations,reason\n";
  std::vector<core::TimeNs> jcts;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const core::JobSpec& s = jobs[i];
    const core::JobState& st = o.jobs[i];
    const core::TimeNs jct = st.finish_ns < 0 ? -1 : st.finish_ns - s.arrival_ns;
    const core::TimeNs q = st.first_start_ns < 0 ? -1 : st.first_start_ns - s.arrival_ns;
    Row(f).text(s.id).text(s.workload).seconds(s.arrival_ns).opt_seconds(st.first_start_ns).opt_seconds(st.finish_ns)
        .opt_seconds(jct).opt_seconds(q).word(core::to_string(st.status)).integer(st.lane)
        .integer(st.iterations_done).text(st.reason()).end();
    if (st.status == core::JobStatus::kDone) jcts.push_back(jct);
  }
  f.close();
  std::sort(jcts.begin(), jcts.end());
  return jcts;
}

/// The rows of jct_cdf.csv for one policy: each finished job's JCT, ascending, with the fraction.
void append_cdf_rows(OutFile& cdf, const std::string& policy, const std::vector<core::TimeNs>& jcts) {
  for (std::size_t k = 0; k < jcts.size(); ++k) {
    char frac[32];
    std::snprintf(frac, sizeof frac, "%.6f", static_cast<double>(k + 1) / static_cast<double>(jcts.size()));
    Row(cdf).word(policy).seconds(jcts[k]).word(frac).end();
  }
}

// A cluster of several GPUs (PolicyRun::gpu_timelines) writes each file's rows GPU by GPU, each
// row led by its GPU (a `gpu` column before the one-GPU columns, whose files stay as they were);
// every GPU's rows are those a GPU alone writes, in the same order.

/// The GPUs' timelines of a run: one GPU's outcome (gpu -1: no gpu column), or each GPU's.
template <typename Fn>
void for_each_gpu(const PolicyRun& r, Fn fn) {
  if (r.gpu_timelines.empty()) {
    fn(-1, r.outcome.segments, r.outcome.memory, r.outcome.lane_moves);
    return;
  }
  for (std::size_t g = 0; g < r.gpu_timelines.size(); ++g) {
    const core::Timeline& t = r.gpu_timelines[g];
    fn(static_cast<std::int64_t>(g), t.segments, t.memory, t.lane_moves);
  }
}

/// A row, led by its GPU's field when there is one.
Row gpu_row(OutFile& f, std::int64_t gpu) {
  Row r(f);
  if (gpu >= 0) r.integer(gpu);
  return r;
}

const char* gpu_column(const PolicyRun& r) { return r.gpu_timelines.empty() ? "" : "gpu,"; }

/// DIR/<policy>_timeline.csv: one row per run (write_timeline_rows).
void write_timeline_csv(const std::string& path, const std::vector<core::JobSpec>& jobs, const PolicyRun& run) {
  OutFile f(path);
  (f.line() += gpu_column(run)) += "lane,job_id,start_s,end_s,iterations,switch_s,rotation\n";
  for_each_gpu(run, [&](std::int64_t gpu, const std::vector<core::Segment>& segments, const auto&, const auto&) {
    write_timeline_rows(segments, [&](const core::Segment& g) {
      Row r = gpu_row(f, gpu);
      r.integer(g.lane).text(jobs[static_cast<std::size_t>(g.job)].id).seconds(g.start_ns).seconds(g.end_ns)
          .integer(g.iterations).seconds(g.switch_ns);
      g.rotation != 0 ? r.integer(g.rotation) : r.none();
      r.end();
    });
  });
  f.close();
}

/// DIR/<policy>_memory.csv: one row per change of the memory in use.
void write_memory_csv(const std::string& path, const PolicyRun& run) {
  OutFile f(path);
  (f.line() += gpu_column(run)) += "time_s,persistent_mib,lanes_reserved_mib,ephemeral_active_mib,lanes\n";
  for_each_gpu(run, [&](std::int64_t gpu, const auto&, const std::vector<core::MemorySample>& memory, const auto&) {
    for (const core::MemorySample& m : memory) {
      gpu_row(f, gpu).seconds(m.time_ns).mib(m.persistent).mib(m.lanes_reserved).mib(m.ephemeral_active)
          .integer(m.lanes).end();
    }
  });
  f.close();
}

/// DIR/<policy>_lane_moves.csv: every lane placed, moved or resized (from_offset empty when new).
void write_lane_moves_csv(const std::string& path, const PolicyRun& run) {
  OutFile f(path);
  (f.line() += gpu_column(run)) += "time_s,lane,from_offset_mib,from_size_mib,to_offset_mib,to_size_mib\n";
  for_each_gpu(run, [&](std::int64_t gpu, const auto&, const auto&, const std::vector<core::LaneMove>& moves) {
    for (const core::LaneMove& mv : moves) {
      Row r = gpu_row(f, gpu);
      r.seconds(mv.time_ns).integer(mv.lane);
      mv.from_offset != core::kUnplaced ? r.mib(mv.from_offset) : r.none();
      r.mib(mv.from_size).mib(mv.to_offset).mib(mv.to_size).end();
    }
  });
  f.close();
}

}  // namespace

bool run_file_name(std::string_view name) {
  if (name == "summary.json" || name == "jct_cdf.csv") return true;
  for (const std::string_view suffix :
       {"_jobs.csv", "_timeline.csv", "_memory.csv", "_lane_moves.csv", "_job_gpus.csv", "_job_runs.csv", "_gpus_busy.csv",
        "_jct_by_size.csv"}) {
    if (name.size() > suffix.size() && name.substr(name.size() - suffix.size()) == suffix) return true;
  }
  return false;
}

void write_run_files(const std::string& dir, const std::vector<core::JobSpec>& jobs, const std::vector<PolicyRun>& runs,
                     TimelineMode timeline) {
  OutFile cdf(dir + "/jct_cdf.csv");
  cdf.line() += "policy,jct_s,fraction\n";
  for (const PolicyRun& r : runs) {
    const std::string base = dir + "/" + r.policy;
    append_cdf_rows(cdf, r.policy, write_jobs_csv(base + "_jobs.csv", jobs, r.outcome));
    if (r.cluster) write_cluster_files(dir, jobs, r);
    if (timeline != TimelineMode::kOff) write_timeline_csv(base + "_timeline.csv", jobs, r);
    write_memory_csv(base + "_memory.csv", r);
    write_lane_moves_csv(base + "_lane_moves.csv", r);
  }
  cdf.close();
}

// One entry of "results": the schema's one writer, members in sorted order (as nlohmann keeps them).
void write_result(JsonWriter& w, const std::vector<core::JobSpec>& jobs, const PolicyRun& r) {
  const core::ScheduleOutcome& o = r.outcome;
  const core::RunMetrics& m = r.metrics;
  w.begin_object();
  w.key("admissions");
  w.begin_object();
  w.key("existing_lane");
  w.value(o.admissions_existing_lane);
  w.key("grown_lane");
  w.value(o.admissions_grown_lane);
  w.key("new_lane");
  w.value(o.admissions_new_lane);
  w.end_object();
  w.key("avg_jct_s");
  w.value(m.avg_jct_s);
  w.key("avg_queuing_s");
  w.value(m.avg_queuing_s);
  if (r.cluster) {
    w.key("cluster");
    write_cluster_result(w, jobs, r);
  }
  w.key("iterations");
  w.value(o.iterations);
  w.key("jobs");
  w.begin_array();
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const core::JobSpec& s = jobs[i];
    const core::JobState& st = o.jobs[i];
    const bool started = st.first_start_ns >= 0;
    const bool finished = st.finish_ns >= 0;
    w.begin_object();
    w.key("arrival_s");
    w.value(core::to_seconds(s.arrival_ns));
    w.key("finish_s");
    finished ? w.value(core::to_seconds(st.finish_ns)) : w.null();
    w.key("id");
    w.value(s.id.view());
    w.key("iterations");
    w.value(st.iterations_done);
    w.key("jct_s");
    finished ? w.value(core::to_seconds(st.finish_ns - s.arrival_ns)) : w.null();
    w.key("lane");
    w.value(st.lane);
    w.key("queuing_s");
    started ? w.value(core::to_seconds(st.first_start_ns - s.arrival_ns)) : w.null();
    w.key("reason");
    w.value(st.reason());
    w.key("start_s");
    started ? w.value(core::to_seconds(st.first_start_ns)) : w.null();
    w.key("status");
    w.value(core::to_string(st.status));
    w.key("workload");
    w.value(s.workload.view());
    w.end_object();
  }
  w.end_array();
  w.key("jobs_done");
  w.value(m.done);
  w.key("jobs_failed");
  w.value(m.failed);
  w.key("jobs_interrupted");
  w.value(m.interrupted);
  w.key("jobs_rejected");
  w.value(m.rejected);
  w.key("jobs_total");
  w.value(m.jobs);
  w.key("lane_mode");
  w.value(core::to_string(r.lane_mode));
  w.key("lanes_opened");
  w.value(o.lanes_opened);
  w.key("makespan_s");
  w.value(core::to_seconds(m.makespan_ns));
  w.key("max_concurrent_lanes");
  w.value(o.max_concurrent_lanes);
  w.key("median_jct_s");
  w.value(core::to_seconds(m.median_jct_ns));
  w.key("p95_jct_s");
  w.value(core::to_seconds(m.p95_jct_ns));
  w.key("page_ins");
  w.value(o.page_ins);
  w.key("page_outs");
  w.value(o.page_outs);
  w.key("policy");
  w.value(r.policy);
  w.key("switches");
  w.value(o.switches);
  w.end_object();
}

void write_results_json(JsonWriter& w, const std::vector<core::JobSpec>& jobs, const std::vector<PolicyRun>& runs) {
  w.begin_array();
  for (const PolicyRun& r : runs) write_result(w, jobs, r);
  w.end_array();
}

void write_summary_json(const std::string& path, const nlohmann::json& header, const std::vector<core::JobSpec>& jobs,
                        const std::vector<PolicyRun>& runs) {
  if (!header.is_object()) throw std::logic_error("write_summary_json: the header must be a JSON object");
  OutFile f(path);
  {
    JsonWriter w(f.file());
    write_summary(w, header, jobs, runs);
    if (!w.finish()) throw core::InputError(write_failed(path, w.error()));
  }
  f.close();
}

void write_summary(JsonWriter& w, const nlohmann::json& header, const std::vector<core::JobSpec>& jobs,
                   const std::vector<PolicyRun>& runs) {
  if (!header.is_object()) throw std::logic_error("write_summary: the header must be a JSON object");
  bool results_done = false;
  auto results = [&] {
    w.key("results");
    write_results_json(w, jobs, runs);
    results_done = true;
  };
  w.begin_object();
  for (const auto& item : header.items()) {
    if (item.key() == "results") continue;
    if (!results_done && item.key() > "results") results();
    w.key(item.key());
    w.value(item.value());
  }
  if (!results_done) results();
  w.end_object();
}

// ---- Cluster runs ------------------------------------------------------------------------------

nlohmann::json cluster_config_json(const cluster::ClusterSpec& cluster, const std::string& placement,
                                   cluster::QueueDiscipline queue, cluster::GangMode gangs) {
  nlohmann::json mem = nlohmann::json::array();
  for (const cluster::GpuSpec& g : cluster.gpus) mem.push_back(g.capacity);
  nlohmann::json j = {{"gpus", cluster.gpus.size()},
                      {"nodes", cluster.gpus.empty() ? 0 : cluster.gpus.back().node + 1},
                      {"gpu_mem_bytes", std::move(mem)},
                      {"placement", placement},
                      {"queue", cluster::to_string(queue)},
                      {"gangs", cluster::to_string(gangs)}};
  if (!cluster.kinds.empty()) {
    // A heterogeneous cluster: its kinds (name, memory, relative speed, how many GPUs) and the
    // kind of each GPU (an index into "kinds", -1 for a GPU of no named kind).
    std::vector<std::int64_t> count(cluster.kinds.size(), 0);
    nlohmann::json gpu_kinds = nlohmann::json::array();
    for (const cluster::GpuSpec& g : cluster.gpus) {
      gpu_kinds.push_back(g.kind);
      if (g.kind >= 0) ++count[static_cast<std::size_t>(g.kind)];
    }
    nlohmann::json kinds = nlohmann::json::array();
    for (std::size_t k = 0; k < cluster.kinds.size(); ++k) {
      const cluster::GpuKind& kind = cluster.kinds[k];
      kinds.push_back({{"name", kind.name},
                       {"gpu_mem_bytes", kind.memory},
                       {"speed", static_cast<double>(kind.speed_ppm) / static_cast<double>(cluster::kSpeedOne)},
                       {"gpus", count[k]}});
    }
    j["kinds"] = std::move(kinds);
    j["gpu_kinds"] = std::move(gpu_kinds);
  }
  return j;
}

std::vector<SizeJct> jct_by_size(const std::vector<core::JobSpec>& jobs, const PolicyRun& run) {
  std::map<std::int32_t, std::pair<std::int64_t, core::Int128>> by;  // gpus -> (count, sum of JCT)
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const core::JobState& st = run.outcome.jobs[i];
    if (st.status != core::JobStatus::kDone) continue;
    auto& [count, sum] = by[jobs[i].gpus];
    ++count;
    sum += st.finish_ns - jobs[i].arrival_ns;
  }
  std::vector<SizeJct> out;
  for (const auto& [gpus, v] : by) {
    out.push_back({gpus, v.first, static_cast<double>(v.second) / static_cast<double>(v.first) / 1e9});
  }
  return out;
}

GpuTime gpu_time(const std::vector<core::JobSpec>& jobs, const PolicyRun& run) {
  GpuTime out;
  // In seconds: GPU-nanoseconds pass 2^63 on a Helios-scale run (6,416 GPUs over six months).
  for (std::size_t i = 0; i + 1 < run.gpus_busy.size(); ++i) {
    out.busy_s += core::to_seconds(run.gpus_busy[i + 1].time_ns - run.gpus_busy[i].time_ns) * run.gpus_busy[i].gpus;
  }
  double work = 0;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    if (run.outcome.jobs[i].status != core::JobStatus::kDone) continue;
    work += static_cast<double>(jobs[i].gpus) * core::to_seconds(jobs[i].solo_ns() + jobs[i].first_iter_extra_ns);
  }
  out.work_s = work;
  return out;
}

void write_cluster_result(JsonWriter& w, const std::vector<core::JobSpec>& jobs, const PolicyRun& run) {
  const GpuTime time = gpu_time(jobs, run);
  w.begin_object();
  w.key("busy_gpu_s");
  w.value(time.busy_s);
  if (run.preemptive) {  // keys in sorted order: gpu_sharing before gpus_busy
    w.key("gpu_sharing");
    w.value(run.gpu_sharing);
  }
  w.key("gpus_busy");
  w.begin_array();
  for (const auto& [t, n] : run.gpus_busy) {
    w.begin_array();
    w.value(core::to_seconds(t));
    w.value(static_cast<std::int64_t>(n));
    w.end_array();
  }
  w.end_array();
  w.key("jct_by_size");
  w.begin_array();
  for (const SizeJct& s : jct_by_size(jobs, run)) {
    w.begin_object();
    w.key("avg_jct_s");
    w.value(s.avg_jct_s);
    w.key("gpus");
    w.value(static_cast<std::int64_t>(s.gpus));
    w.key("jobs");
    w.value(s.jobs);
    w.end_object();
  }
  w.end_array();
  w.key("job_gpus");
  w.begin_array();
  for (std::size_t j = 0; j < run.job_gpus.size(); ++j) {
    w.begin_array();
    for (std::int32_t x : run.job_gpus[j]) w.value(static_cast<std::int64_t>(x));
    w.end_array();
  }
  w.end_array();
  if (run.preemptive) {
    w.key("migrations");
    w.value(run.migrations);
  }
  w.key("placement");
  w.value(run.placement);
  if (run.preemptive) {
    w.key("preemptions");
    w.value(run.preemptions);
    w.key("promotions");
    w.value(run.promotions);
  }
  w.key("work_gpu_s");
  w.value(time.work_s);
  w.end_object();
}

void print_cluster_report(std::ostream& os, const std::vector<core::JobSpec>& jobs, const std::vector<PolicyRun>& runs) {
  char line[256];
  const TimeUnit jct_unit = table_units(runs)[2];
  for (const PolicyRun& r : runs) {
    if (!r.cluster) continue;
    std::int32_t peak = 0;
    for (const auto& [t, n] : r.gpus_busy) peak = std::max(peak, n);
    std::string sizes;
    for (const SizeJct& s : jct_by_size(jobs, r)) {
      // In the unit of the table's Avg. JCT column, printed just above.
      sizes += (sizes.empty() ? "" : "; ") + count_text(static_cast<std::size_t>(s.gpus), "GPU") + ": " +
               count_text(static_cast<std::size_t>(s.jobs), "job") + ", avg " + time_text(s.avg_jct_s, jct_unit);
    }
    const GpuTime time = gpu_time(jobs, r);
    std::snprintf(line, sizeof line, "%-8s placement %s, GPUs busy at most %d, busy GPU-time %s for %s of work; JCT by size: ",
                  r.policy.c_str(), r.placement.c_str(), peak, time_text(time.busy_s, jct_unit).c_str(),
                  time_text(time.work_s, jct_unit).c_str());
    os << line << (sizes.empty() ? "no job finished" : sizes) << "\n";
    if (r.preemptive) {
      std::snprintf(line, sizeof line, "%-8s %lld preemptions, %lld restarts on other GPUs, %lld promotions (%zu runs)\n",
                    r.policy.c_str(), static_cast<long long>(r.preemptions), static_cast<long long>(r.migrations),
                    static_cast<long long>(r.promotions), static_cast<std::size_t>(r.runs));
      os << line;
    }
  }
}

void print_paging_report(std::ostream& os, const std::vector<PolicyRun>& runs) {
  char line[160];
  for (const PolicyRun& r : runs) {
    std::snprintf(line, sizeof line, "%-8s paging: %lld page-outs, %lld page-ins\n", r.policy.c_str(),
                  static_cast<long long>(r.outcome.page_outs), static_cast<long long>(r.outcome.page_ins));
    os << line;
  }
}

namespace {

/// "3+1+2": a job's GPUs as the CSV files write them.
std::string gpu_list_text(std::span<const std::int32_t> gpus) {
  std::string out;
  for (const std::int32_t g : gpus) {
    if (!out.empty()) out += '+';
    append_int(out, g);
  }
  return out;
}

}  // namespace

void write_cluster_files(const std::string& dir, const std::vector<core::JobSpec>& jobs, const PolicyRun& run) {
  const std::string base = dir + "/" + run.policy;
  OutFile gf(base + "_job_gpus.csv");
  gf.line() += "id,gpus\n";
  for (std::size_t i = 0; i < jobs.size(); ++i) Row(gf).text(jobs[i].id).word(gpu_list_text(run.job_gpus[i])).end();
  gf.close();
  OutFile bf(base + "_gpus_busy.csv");
  bf.line() += "time_s,gpus_busy\n";
  for (const auto& [t, n] : run.gpus_busy) Row(bf).seconds(t).integer(n).end();
  bf.close();
  if (run.preemptive) {
    // Every run of every job: where and when (a preempted job runs several times, anywhere).
    OutFile rf(base + "_job_runs.csv");
    rf.line() += "id,start_s,end_s,gpus\n";
    for (const cluster::JobRun& x : run.job_runs) {
      Row(rf).text(jobs[static_cast<std::size_t>(x.job)].id).seconds(x.start_ns).seconds(x.end_ns).word(gpu_list_text(x.gpus)).end();
    }
    rf.close();
  }
  OutFile sf(base + "_jct_by_size.csv");
  sf.line() += "gpus,jobs,avg_jct_s\n";
  for (const SizeJct& s : jct_by_size(jobs, run)) {
    char avg[32];
    std::snprintf(avg, sizeof avg, "%.6f", s.avg_jct_s);
    Row(sf).integer(s.gpus).integer(s.jobs).word(avg).end();
  }
  sf.close();
}

void print_report(const std::vector<std::string>& notes, const std::vector<core::JobSpec>& jobs,
                  const std::vector<PolicyRun>& runs) {
  for (const std::string& n : notes) std::printf("note: %s\n", n.c_str());
  // A job rejected or failed alike under several policies is one note naming them all ("all
  // policies" when every run agrees); past kMaxJobNotes such notes the rest are counted, as a
  // large trace can reject thousands of jobs (each run's <policy>_jobs.csv lists them all).
  constexpr std::size_t kMaxJobNotes = 20;
  std::size_t printed = 0, held_back = 0;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    std::vector<std::pair<std::string, std::vector<std::string>>> groups;  // "status: reason" -> policies
    for (const PolicyRun& r : runs) {
      const core::JobState& st = r.outcome.jobs[i];
      if (st.status != core::JobStatus::kRejected && st.status != core::JobStatus::kFailed) continue;
      const std::string what = std::string(core::to_string(st.status)) + ": " + st.reason();
      auto g = std::find_if(groups.begin(), groups.end(), [&](const auto& x) { return x.first == what; });
      if (g == groups.end()) groups.push_back({what, {r.policy}});
      else g->second.push_back(r.policy);
    }
    for (const auto& [what, policies] : groups) {
      if (printed == kMaxJobNotes) {
        ++held_back;
        continue;
      }
      ++printed;
      std::string who;
      if (runs.size() > 1 && policies.size() == runs.size()) {
        who = "all policies";
      } else {
        for (const std::string& p : policies) who += (who.empty() ? "" : ", ") + p;
      }
      std::printf("note: job %s %s (%s)\n", jobs[i].id.c_str(), what.c_str(), who.c_str());
    }
  }
  if (held_back > 0) {
    std::printf("note: %zu more %s of rejected or failed jobs not shown (see <policy>_jobs.csv with --out)\n", held_back,
                held_back == 1 ? "note" : "notes");
  }
  std::ostringstream table;
  print_table(table, runs);
  std::fputs(table.str().c_str(), stdout);
  std::fflush(stdout);
}

void write_outputs(const nlohmann::json& summary, const std::string& summary_path, const std::string& out_dir,
                   const std::vector<core::JobSpec>& jobs, const std::vector<PolicyRun>& runs) {
  const std::string text = summary.dump(2) + "\n";
  if (!summary_path.empty()) write_text_file(summary_path, text);
  if (!out_dir.empty()) {
    write_run_files(out_dir, jobs, runs);
    write_text_file(out_dir + "/summary.json", text);
    std::printf("wrote %s/{summary.json,jct_cdf.csv,<policy>_{jobs,timeline,memory,lane_moves}.csv}\n", out_dir.c_str());
  }
}

void write_streamed_outputs(const nlohmann::json& header, const std::string& summary_path, const std::string& out_dir,
                            const std::vector<core::JobSpec>& jobs, const std::vector<PolicyRun>& runs,
                            TimelineMode timeline) {
  std::string first;  // the summary is streamed once, then copied
  auto write_summary = [&](const std::string& path) {
    if (first.empty()) {
      write_summary_json(path, header, jobs, runs);
      first = path;
      return;
    }
    std::error_code ec;
    if (std::filesystem::equivalent(first, path, ec)) return;  // the same file named twice
    // Copied through an OutFile, as every output is written (a copy over the target truncates it
    // first: a run killed then left it empty).
    std::ifstream in(first, std::ios::binary);
    if (!in) throw core::InputError(first + ": cannot read back");
    OutFile f(path);
    char chunk[1 << 16];
    while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
      f.line().append(chunk, static_cast<std::size_t>(in.gcount()));
      f.row();
    }
    f.close();
  };
  if (!summary_path.empty()) write_summary(summary_path);
  if (!out_dir.empty()) {
    write_run_files(out_dir, jobs, runs, timeline);
    write_summary(out_dir + "/summary.json");
    std::printf("wrote %s/{summary.json,jct_cdf.csv,<policy>_{jobs,%smemory,lane_moves}.csv}\n", out_dir.c_str(),
                timeline == TimelineMode::kOff ? "" : "timeline,");
  }
}


nlohmann::json sim_summary_header(const std::string& trace_path, const traces::Trace& trace,
                                  const std::string& profiles, const SimConfig& cfg, double time_scale,
                                  const std::vector<std::string>& notes) {
  nlohmann::json summary;
  summary["tool"] = "salus-sim";
  summary["trace"] = trace_path;
  summary["trace_format"] = traces::to_string(trace.format);
  summary["profiles"] = profiles;
  summary["gpu_mem_bytes"] = cfg.capacity;
  summary["interference"] = cfg.interference;
  if (cfg.interference == "shares") summary["share_exponent"] = cfg.share_exponent;
  summary["switch_cost_ms"] = static_cast<double>(cfg.switch_cost_ns) / 1e6;
  summary["lane_shrink"] = cfg.lane_shrink;
  summary["paging"] = cfg.paging;
  if (cfg.paging) summary["paging_gbps"] = static_cast<double>(cfg.paging_bytes_per_s) / 1e9;
  summary["seed"] = cfg.seed;
  summary["profile_noise"] = cfg.profile_noise;
  summary["time_scale"] = time_scale;
  if (cfg.cluster) {
    summary["cluster"] = cluster_config_json(*cfg.cluster, cfg.placement.empty() ? "per policy" : cfg.placement, cfg.queue, cfg.gangs);
  }
  summary["notes"] = notes;
  return summary;
}

}  // namespace salus::run
