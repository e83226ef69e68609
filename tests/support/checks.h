#pragma once
/// Checks every finished schedule must pass, whatever the trace and policy (doctest assertions).
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <vector>

#include "core/scheduler.h"
#include "support/jobs.h"

namespace salus::test {

/// ideal: iterations take exactly their solo time (no interference, actual = profiled times).
/// switch_cost_ns: the executor's switching cost.
inline void check_schedule(std::span<const core::JobSpec> jobs, const core::ScheduleOutcome& out,
                           const core::SchedulerOptions& opts, bool ideal, core::TimeNs switch_cost_ns) {
  REQUIRE(out.jobs.size() == jobs.size());
  std::map<core::JobIndex, std::int64_t> iterations;
  std::map<core::JobIndex, core::TimeNs> first_start, last_end;
  std::map<core::LaneId, std::vector<Seg>> by_lane;
  std::vector<Seg> all = segments(out);
  for (const Seg& s : all) {
    INFO("segment ", to_string(s));
    const core::JobSpec& spec = jobs[static_cast<std::size_t>(s.job)];
    CHECK(s.iterations >= 1);
    CHECK(s.start_ns >= spec.arrival_ns);
    if (ideal) CHECK(s.end_ns - s.start_ns == s.iterations * spec.iter_ns + s.switch_ns);
    CHECK((s.switch_ns == 0 || s.switch_ns == switch_cost_ns));
    iterations[s.job] += s.iterations;
    if (!first_start.count(s.job)) first_start[s.job] = s.start_ns;
    last_end[s.job] = std::max(last_end[s.job], s.end_ns);
    by_lane[s.lane].push_back(s);
  }
  for (auto& [lane, v] : by_lane) {
    for (std::size_t i = 1; i < v.size(); ++i) {
      INFO("lane ", lane, ": ", to_string(v[i - 1]), " then ", to_string(v[i]));
      CHECK(v[i - 1].end_ns <= v[i].start_ns);
    }
  }
  if (opts.lane_mode == core::LaneMode::kExclusive) {
    for (std::size_t i = 1; i < all.size(); ++i) {
      INFO("exclusive: ", to_string(all[i - 1]), " then ", to_string(all[i]));
      CHECK(all[i - 1].end_ns <= all[i].start_ns);
    }
  }
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    const core::JobState& st = out.jobs[j];
    INFO("job ", jobs[j].id);
    const auto idx = static_cast<core::JobIndex>(j);
    if (st.status == core::JobStatus::kRejected) {
      CHECK(jobs[j].persistent + jobs[j].ephemeral > opts.capacity);
      CHECK(iterations.count(idx) == 0);
      continue;
    }
    CHECK(jobs[j].persistent + jobs[j].ephemeral <= opts.capacity);
    CHECK(st.status == core::JobStatus::kDone);
    CHECK(st.iterations_done == jobs[j].iterations);
    CHECK_FALSE(st.running);
    CHECK(st.admitted_ns >= jobs[j].arrival_ns);
    CHECK(st.first_start_ns >= st.admitted_ns);
    if (opts.record_timeline) {
      CHECK(iterations[idx] == jobs[j].iterations);
      CHECK(first_start[idx] == st.first_start_ns);
      CHECK(last_end[idx] == st.finish_ns);
    }
  }
  for (const core::MemorySample& m : out.memory) {
    INFO("memory sample at ", m.time_ns);
    CHECK(m.persistent + m.lanes_reserved <= opts.capacity);
    CHECK(m.ephemeral_active <= m.lanes_reserved);
  }
}

}  // namespace salus::test
