#pragma once
/// Hand-built scheduler states for policy unit tests: jobs with chosen progress, all admitted to
/// lane 0, and a call of Policy::choose on a chosen subset in a chosen order. The policy is
/// driven through its hooks first, as the loop would: begin, then each chosen job admitted and
/// joined (in index order), then each job's lane_iterations reported as one run after the joins.
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
    st.admit_seq = static_cast<std::int64_t>(specs.size());
    specs.push_back(s);
    states.push_back(st);
    served.push_back(lane_iterations);
    return static_cast<core::JobIndex>(specs.size() - 1);
  }

  /// Calls p.choose on a view of these jobs. JobState::submit_rank (the job's position in arrival
  /// order, ties by trace order, as the loop assigns it at arrival) is filled in first.
  core::Decision choose(core::Policy& p, std::vector<core::JobIndex> lane_jobs, core::JobIndex last_job = core::kNoJob,
                        core::TimeNs now = 0) {
    std::vector<std::size_t> order(specs.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return core::arrives_before(specs[a], specs[b]); });
    for (std::size_t r = 0; r < order.size(); ++r) states[order[r]].submit_rank = static_cast<std::int64_t>(r);
    const core::SchedulerView v{now, specs, states};
    p.begin(specs);
    std::vector<core::JobIndex> joined(lane_jobs);
    std::sort(joined.begin(), joined.end());
    for (std::size_t k = 0; k < joined.size(); ++k) {
      p.on_admit(v, joined[k]);
      p.on_join(v, core::LaneSnapshot{0, std::span<const core::JobIndex>(joined.data(), k + 1), core::kNoJob, core::kNoJob},
                joined[k]);
    }
    for (core::JobIndex j : joined) {
      const std::int64_t n = served[static_cast<std::size_t>(j)];
      if (n > 0) p.on_iterations_done(v, core::RunReport{j, 0, n, now, now});
    }
    return p.choose(v, core::LaneSnapshot{0, lane_jobs, last_job, core::kNoJob});
  }

  std::vector<core::JobSpec> specs;
  std::vector<core::JobState> states;
  std::vector<std::int64_t> served;  ///< lane_iterations per job: iterations since the last join
};

}  // namespace salus::test
