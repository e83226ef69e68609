#pragma once
/// Progress of long simulations on stderr (salus-sim, salus-experiment; off with --quiet). The
/// loops (core::run_schedule, cluster::run_cluster) call a core::ProgressHook every few thousand
/// steps and read no clock; this is where the wall clock is read and the line printed.
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <ostream>
#include <span>
#include <string>

#include "core/job.h"
#include "core/scheduler.h"

namespace salus::run {

/// Prints nothing during the first second after it is made (a short run stays silent), then
/// "LABEL: D of N jobs done, T simulated, R jobs/s (E events/s)": on a terminal one line
/// rewritten in place ('\r') at most four times a second and cleared when the run ends (end_run),
/// elsewhere (a log file, a pipe) one line every five seconds. It writes only to `out`. Hooks
/// may be called from several threads (gpus_needed runs configurations side by side).
class ProgressMeter {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;
  /// `terminal`: `out` is a terminal (isatty). `clock`: the wall clock (tests give their own).
  ProgressMeter(std::ostream& out, bool terminal, Clock clock = &std::chrono::steady_clock::now);
  ProgressMeter(const ProgressMeter&) = delete;
  ProgressMeter& operator=(const ProgressMeter&) = delete;

  /// The hook for one run of `jobs` called `label` (e.g. "salus-sim: srtf"), shown one state per
  /// job (on a cluster too: a k-GPU job counts once, when it is done). `jobs` and the meter
  /// outlive the run.
  core::ProgressHook hook(std::string label, std::span<const core::JobSpec> jobs);
  /// The run ended: on a terminal the line, if one is shown, is cleared, so that whatever is
  /// printed next (to stdout or stderr) starts on a clean line.
  void end_run();

  /// Lines printed so far (each rewrite on a terminal counts).
  std::int64_t lines() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return lines_;
  }

 private:
  void update(const std::string& label, std::span<const core::JobSpec> jobs, const core::Progress& p,
              std::chrono::steady_clock::time_point run_start);

  mutable std::mutex mutex_;
  std::ostream& out_;
  bool terminal_;
  Clock clock_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_{};
  bool shown_ = false;  // a line is on the terminal now
  std::size_t width_ = 0;  // of that line, to blank it
  std::int64_t lines_ = 0;
};

/// "12.3 h", "45.2 min", "8.0 s": a simulated time for the progress line.
std::string duration_text(core::TimeNs ns);

}  // namespace salus::run
