#include "core/summary.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace salus::core {

TimeNs nearest_rank(std::span<const TimeNs> sorted, double q) {
  if (sorted.empty()) return 0;
  auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  rank = std::clamp<std::size_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

RunMetrics compute_metrics(std::span<const JobSpec> specs, std::span<const JobState> states) {
  RunMetrics m;
  m.jobs = static_cast<std::int64_t>(specs.size());
  std::vector<TimeNs> jcts;
  Int128 jct_sum = 0;
  Int128 queue_sum = 0;
  TimeNs first_arrival = kNever;
  TimeNs last_finish = 0;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const JobState& st = states[i];
    if (st.status == JobStatus::kRejected) {
      ++m.rejected;
      continue;
    }
    if (st.status == JobStatus::kFailed) ++m.failed;
    if (st.status == JobStatus::kInterrupted) ++m.interrupted;
    if (st.first_start_ns >= 0 || st.finish_ns >= 0) first_arrival = std::min(first_arrival, specs[i].arrival_ns);
    if (st.finish_ns >= 0) last_finish = std::max(last_finish, st.finish_ns);
    if (st.status != JobStatus::kDone) continue;
    ++m.done;
    const TimeNs jct = st.finish_ns - specs[i].arrival_ns;
    jcts.push_back(jct);
    jct_sum += jct;
    queue_sum += st.first_start_ns - specs[i].arrival_ns;
  }
  if (first_arrival != kNever) m.makespan_ns = last_finish - first_arrival;
  if (m.done > 0) {
    m.avg_jct_s = static_cast<double>(jct_sum) / static_cast<double>(m.done) / 1e9;
    m.avg_queuing_s = static_cast<double>(queue_sum) / static_cast<double>(m.done) / 1e9;
    std::sort(jcts.begin(), jcts.end());
    m.p95_jct_ns = nearest_rank(jcts, 0.95);
    m.median_jct_ns = nearest_rank(jcts, 0.5);
  }
  return m;
}

}  // namespace salus::core
