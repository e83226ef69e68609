#pragma once
/// salus-trace's bodies: the summary `stats` prints of a trace, and the canonical command line
/// `generate` writes into the trace it draws.
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "traces/trace.h"

namespace salus::run {

/// What salus-trace stats reports, taken one job at a time (a trace streamed to it keeps 8 bytes a
/// job, its solo time, not the job).
class TraceStats {
 public:
  void add(const core::JobSpec& job);
  /// The report: the trace's notes, the count, the arrival span, the solo durations (median,
  /// mean, p95, min, max, total) and the workload mix.
  std::string text(const std::string& path, const traces::Trace& trace);

 private:
  std::size_t count_ = 0;
  core::TimeNs first_ = 0, last_ = 0;
  std::vector<core::TimeNs> solo_;
  core::Int128 total_ = 0;
  std::map<std::string, std::int64_t, std::less<>> mix_;
};

/// salus-trace stats' report of `trace` read from `path` (its jobs added to a TraceStats).
std::string trace_stats_text(const std::string& path, const traces::Trace& trace);

/// Text that a POSIX shell reads back as the same word ('...' only where needed).
std::string shell_word(const std::string& s);

/// The command that reproduces a generated trace: "salus-trace generate --jobs N --seed S" and
/// then each (option, value) of `given` in order, values shell-quoted.
std::string generate_command(int jobs, std::uint64_t seed, const std::vector<std::pair<std::string, std::string>>& given);

}  // namespace salus::run
