#pragma once
/// Aggregate figures of a run (the paper's Table 1) and the summary JSON schema shared by the
/// simulator and the real backend:
///   {"policy", "lane_mode", "makespan_s", "avg_queuing_s", "avg_jct_s", "p95_jct_s", ...,
///    "jobs": [{"id", "workload", "arrival_s", "start_s", "finish_s", "jct_s", "queuing_s",
///              "status", "reason", "iterations", "lane"}]}
#include <cstdint>
#include <span>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/job.h"
#include "core/policy.h"
#include "core/scheduler.h"
#include "core/units.h"

namespace salus::core {

/// Figures over the jobs that finished ("done"). JCT = finish - arrival; queuing = start of the
/// first iteration - arrival; makespan = last finish - first arrival of a job that ran;
/// p95 is the nearest-rank 95th percentile (the ceil(0.95 n)-th smallest JCT).
struct RunMetrics {
  std::int64_t jobs = 0;
  std::int64_t done = 0;
  std::int64_t rejected = 0;
  std::int64_t failed = 0;
  std::int64_t interrupted = 0;
  TimeNs makespan_ns = 0;
  double avg_queuing_s = 0;
  double avg_jct_s = 0;
  TimeNs p95_jct_ns = 0;
  TimeNs median_jct_ns = 0;
};

/// Nearest-rank percentile (q in (0, 1]) of sorted values; 0 for an empty span.
TimeNs nearest_rank(std::span<const TimeNs> sorted, double q);

RunMetrics compute_metrics(std::span<const JobSpec> specs, std::span<const JobState> states);


}  // namespace salus::core
