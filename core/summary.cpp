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

nlohmann::json result_json(std::string_view policy, LaneMode mode, std::span<const JobSpec> specs,
                           const ScheduleOutcome& outcome, const RunMetrics& m) {
  nlohmann::json r;
  r["policy"] = std::string(policy);
  r["lane_mode"] = to_string(mode);
  r["makespan_s"] = to_seconds(m.makespan_ns);
  r["avg_queuing_s"] = m.avg_queuing_s;
  r["avg_jct_s"] = m.avg_jct_s;
  r["p95_jct_s"] = to_seconds(m.p95_jct_ns);
  r["median_jct_s"] = to_seconds(m.median_jct_ns);
  r["jobs_total"] = m.jobs;
  r["jobs_done"] = m.done;
  r["jobs_rejected"] = m.rejected;
  r["jobs_failed"] = m.failed;
  r["jobs_interrupted"] = m.interrupted;
  r["lanes_opened"] = outcome.lanes_opened;
  r["max_concurrent_lanes"] = outcome.max_concurrent_lanes;
  r["admissions"] = {{"new_lane", outcome.admissions_new_lane},
                     {"existing_lane", outcome.admissions_existing_lane},
                     {"grown_lane", outcome.admissions_grown_lane}};
  r["switches"] = outcome.switches;
  r["iterations"] = outcome.iterations;
  nlohmann::json jobs = nlohmann::json::array();
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const JobSpec& s = specs[i];
    const JobState& st = outcome.jobs[i];
    nlohmann::json j;
    j["id"] = s.id;
    j["workload"] = s.workload;
    j["arrival_s"] = to_seconds(s.arrival_ns);
    const bool started = st.first_start_ns >= 0;
    const bool finished = st.finish_ns >= 0;
    j["start_s"] = started ? nlohmann::json(to_seconds(st.first_start_ns)) : nlohmann::json(nullptr);
    j["finish_s"] = finished ? nlohmann::json(to_seconds(st.finish_ns)) : nlohmann::json(nullptr);
    j["jct_s"] = finished ? nlohmann::json(to_seconds(st.finish_ns - s.arrival_ns)) : nlohmann::json(nullptr);
    j["queuing_s"] = started ? nlohmann::json(to_seconds(st.first_start_ns - s.arrival_ns)) : nlohmann::json(nullptr);
    j["status"] = to_string(st.status);
    j["reason"] = st.reason;
    j["iterations"] = st.iterations_done;
    j["lane"] = st.lane;
    jobs.push_back(std::move(j));
  }
  r["jobs"] = std::move(jobs);
  return r;
}

}  // namespace salus::core
