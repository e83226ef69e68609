#pragma once
/// Hand-built scheduler states for policy unit tests: jobs with chosen progress, all admitted to
/// lane 0, and a call of Policy::choose on a chosen subset in a chosen order.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "core/job.h"
#include "core/policy.h"
#include "core/units.h"

namespace salus::test {

class PolicyState {
 public:
  /// Adds an admitted job of lane 0; returns its index. trace_order defaults to the index.
  core::JobIndex add(core::TimeNs arrival_ns, std::int64_t iterations, core::TimeNs iter_ns,
                     std::int64_t iterations_done = 0, std::int64_t lane_iterations = 0, std::int32_t trace_order = -1) {
    core::JobSpec s;
    s.id = "j" + std::to_string(specs.size());
    s.arrival_ns = arrival_ns;
    s.iterations = iterations;
    s.iter_ns = iter_ns;
    s.trace_order = trace_order >= 0 ? trace_order : static_cast<std::int32_t>(specs.size());
    core::JobState st;
    st.status = core::JobStatus::kAdmitted;
    st.lane = 0;
    st.iterations_done = iterations_done;
    st.lane_iterations = lane_iterations;
    st.admit_seq = static_cast<std::int64_t>(specs.size());
    specs.push_back(s);
    states.push_back(st);
    return static_cast<core::JobIndex>(specs.size() - 1);
  }

  /// Calls p.choose on a view of these jobs. JobState::submit_rank (the job's position in arrival
  /// order, ties by trace order, as the loop assigns it at arrival) is filled in first.
  core::Decision choose(const core::Policy& p, std::vector<core::JobIndex> lane_jobs, core::JobIndex last_job = core::kNoJob,
                        core::TimeNs now = 0) {
    std::vector<std::size_t> order(specs.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return core::arrives_before(specs[a], specs[b]); });
    for (std::size_t r = 0; r < order.size(); ++r) states[order[r]].submit_rank = static_cast<std::int64_t>(r);
    const core::SchedulerView v{now, specs, states};
    return p.choose(v, core::LaneSnapshot{0, lane_jobs, last_job});
  }

  std::vector<core::JobSpec> specs;
  std::vector<core::JobState> states;
};

}  // namespace salus::test
