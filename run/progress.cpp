#include "run/progress.h"

#include <algorithm>
#include <cstdio>
#include <utility>

namespace salus::run {

namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

constexpr milliseconds kSilentFor{1000};       // a run shorter than this prints nothing
constexpr milliseconds kTerminalEvery{250};    // rewrites of the line on a terminal
constexpr milliseconds kLogEvery{5000};        // lines elsewhere

bool ended(const core::JobState& s) {
  return s.status == core::JobStatus::kDone || s.status == core::JobStatus::kRejected ||
         s.status == core::JobStatus::kFailed || s.status == core::JobStatus::kInterrupted;
}

/// 1234567 -> "1,234,567".
std::string grouped(std::int64_t v) {
  std::string digits = std::to_string(v < 0 ? -v : v);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return v < 0 ? "-" + out : out;
}

/// A rate per second with one significant decimal at most: "870", "38.4k", "1.2M".
std::string rate_text(double per_s) {
  char buf[32];
  if (per_s >= 1e6) std::snprintf(buf, sizeof buf, "%.1fM", per_s / 1e6);
  else if (per_s >= 1e4) std::snprintf(buf, sizeof buf, "%.1fk", per_s / 1e3);
  else std::snprintf(buf, sizeof buf, "%.0f", per_s);
  return buf;
}

}  // namespace

std::string duration_text(core::TimeNs ns) {
  const double s = static_cast<double>(ns) / 1e9;
  char buf[32];
  if (s >= 7200) std::snprintf(buf, sizeof buf, "%.1f h", s / 3600);
  else if (s >= 120) std::snprintf(buf, sizeof buf, "%.1f min", s / 60);
  else std::snprintf(buf, sizeof buf, "%.1f s", s);
  return buf;
}

ProgressMeter::ProgressMeter(std::ostream& out, bool terminal, Clock clock)
    : out_(out), terminal_(terminal), clock_(std::move(clock)), start_(clock_()) {}

core::ProgressHook ProgressMeter::hook(std::string label, std::span<const core::JobSpec> jobs) {
  const steady_clock::time_point run_start = clock_();
  return [this, label = std::move(label), jobs, run_start](const core::Progress& p) { update(label, jobs, p, run_start); };
}

void ProgressMeter::update(const std::string& label, std::span<const core::JobSpec> jobs, const core::Progress& p,
                           steady_clock::time_point run_start) {
  const std::lock_guard<std::mutex> lock(mutex_);
  const steady_clock::time_point now = clock_();
  if (now - start_ < kSilentFor) return;
  if (lines_ > 0 && now - last_ < (terminal_ ? kTerminalEvery : kLogEvery)) return;
  last_ = now;
  // Counted only when printed, a few times a second: the loops keep no count of their own.
  std::int64_t done = 0;
  for (const core::JobState& s : p.jobs) done += ended(s) ? 1 : 0;
  const double secs = std::max(1e-3, std::chrono::duration<double>(now - run_start).count());
  std::string line = label + ": " + grouped(done) + " of " + grouped(static_cast<std::int64_t>(jobs.size())) +
                     " jobs done, " + duration_text(p.now) + " simulated, " +
                     rate_text(static_cast<double>(done) / secs) + " jobs/s (" +
                     rate_text(static_cast<double>(p.events) / secs) + " events/s)";
  if (terminal_) {
    const std::size_t width = line.size();
    if (width < width_) line.append(width_ - width, ' ');
    width_ = width;
    out_ << '\r' << line << std::flush;
    shown_ = true;
  } else {
    out_ << line << '\n' << std::flush;
  }
  ++lines_;
}

void ProgressMeter::end_run() {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (!shown_) return;
  out_ << '\r' << std::string(width_, ' ') << '\r' << std::flush;
  shown_ = false;
  width_ = 0;
}

}  // namespace salus::run
