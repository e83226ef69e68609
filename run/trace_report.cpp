#include "run/trace_report.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <map>

#include "core/units.h"
#include "run/output.h"

namespace salus::run {

namespace {

// printf onto the end of `out`.
__attribute__((format(printf, 2, 3))) void appendf(std::string& out, const char* format, ...) {
  char buf[512];
  va_list args;
  va_start(args, format);
  const int n = std::vsnprintf(buf, sizeof buf, format, args);
  va_end(args);
  if (n < 0) return;
  if (static_cast<std::size_t>(n) < sizeof buf) {
    out += buf;
    return;
  }
  std::string big(static_cast<std::size_t>(n) + 1, '\0');
  va_start(args, format);
  std::vsnprintf(big.data(), big.size(), format, args);
  va_end(args);
  big.resize(static_cast<std::size_t>(n));
  out += big;
}

std::string seconds_and_minutes(core::TimeNs ns) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f s (%.1f min)", core::to_seconds(ns), core::to_seconds(ns) / 60);
  return buf;
}

}  // namespace

void TraceStats::add(const core::JobSpec& j) {
  if (count_ == 0) first_ = last_ = j.arrival_ns;
  ++count_;
  first_ = std::min(first_, j.arrival_ns);
  last_ = std::max(last_, j.arrival_ns);
  solo_.push_back(j.solo_ns());
  total_ += j.solo_ns();
  const std::string_view name = j.workload.empty() ? std::string_view("(explicit figures)") : std::string_view(j.workload);
  auto it = mix_.find(name);
  if (it == mix_.end()) it = mix_.emplace(std::string(name), 0).first;
  ++it->second;
}

std::string TraceStats::text(const std::string& path, const traces::Trace& trace) {
  std::string out;
  for (const std::string& n : trace.notes) appendf(out, "note: %s\n", n.c_str());
  appendf(out, "trace: %s (%s, %s)\n", path.c_str(), traces::to_string(trace.format),
              run::count_text(count_, "job").c_str());
  if (count_ == 0) return out;
  std::vector<core::TimeNs>& solo = solo_;
  std::sort(solo.begin(), solo.end());
  const std::size_t n = solo.size();
  const core::TimeNs first = first_, last = last_;
  const core::Int128 total = total_;
  const auto& mix = mix_;
  const core::TimeNs span = last - first;
  appendf(out, "arrivals: first %s s, last %s s, span %s", run::seconds_text(first).c_str(),
              run::seconds_text(last).c_str(), seconds_and_minutes(span).c_str());
  if (n > 1) appendf(out, ", mean inter-arrival %.1f s", core::to_seconds(span) / static_cast<double>(n - 1));
  appendf(out, "\n");
  // Median: mean of the two middle values for an even count. p95: nearest rank, ceil(0.95 n).
  const core::TimeNs median = n % 2 ? solo[n / 2] : solo[n / 2 - 1] + (solo[n / 2] - solo[n / 2 - 1]) / 2;
  const std::size_t p95_rank = (95 * n + 99) / 100;
  const double total_s = static_cast<double>(total) / 1e9;
  appendf(out, "solo duration (iterations x iteration time):\n");
  appendf(out, "  median %s\n", seconds_and_minutes(median).c_str());
  const auto mean = static_cast<core::TimeNs>(total / static_cast<core::Int128>(n));
  appendf(out, "  mean   %s\n", seconds_and_minutes(mean).c_str());
  appendf(out, "  p95    %s\n", seconds_and_minutes(solo[p95_rank - 1]).c_str());
  appendf(out, "  min    %s\n", seconds_and_minutes(solo.front()).c_str());
  appendf(out, "  max    %s\n", seconds_and_minutes(solo.back()).c_str());
  appendf(out, "  total  %.1f s (%.1f min)", total_s, total_s / 60);
  if (span > 0) appendf(out, ", %.2f x the arrival span", total_s / core::to_seconds(span));
  appendf(out, "\n");
  std::size_t width = 0;
  for (const auto& [name, count] : mix) width = std::max(width, name.size());
  appendf(out, "workloads: %zu distinct\n", mix.size());
  for (const auto& [name, count] : mix) {
    appendf(out, "  %-*s %5lld  %5.1f%%\n", static_cast<int>(width), name.c_str(), static_cast<long long>(count),
                100.0 * static_cast<double>(count) / static_cast<double>(n));
  }
  return out;
}

std::string trace_stats_text(const std::string& path, const traces::Trace& trace) {
  TraceStats stats;
  for (const core::JobSpec& j : trace.jobs) stats.add(j);
  return stats.text(path, trace);
}


std::string shell_word(const std::string& s) {
  const bool plain = !s.empty() && s.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                                       "0123456789_-+=.,/:@%") == std::string::npos;
  if (plain) return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string generate_command(int jobs, std::uint64_t seed, const std::vector<std::pair<std::string, std::string>>& given) {
  std::string command = "salus-trace generate --jobs " + std::to_string(jobs) + " --seed " + std::to_string(seed);
  for (const auto& [option, value] : given) command += " --" + option + " " + shell_word(value);
  return command;
}

}  // namespace salus::run
