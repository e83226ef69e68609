#pragma once
/// A fake executor for tests: an ideal GPU that advances its clock one iteration boundary at a
/// time. Every iteration of job j takes exactly spec.iter_ns, the first one of a run extra_ns
/// more, plus the switching cost when the lane's previous run was of another job; lanes never
/// slow each other down. Deliberately naive (no work accounting, no
/// interference) so that it is obviously right and can check the simulator.
#include <algorithm>
#include <map>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/executor.h"
#include "core/job.h"
#include "core/units.h"

namespace salus::test {

class FakeExecutor final : public core::Executor {
 public:
  explicit FakeExecutor(std::span<const core::JobSpec> jobs, core::TimeNs switch_cost_ns = 0)
      : jobs_(jobs), switch_cost_ns_(switch_cost_ns) {}

  core::TimeNs now() const override { return now_; }

  void admit(core::JobIndex job, const core::JobSpec&, core::Bytes) override { admitted.push_back(job); }
  void release(core::JobIndex job) override { released.push_back(job); }
  void lane_closed(core::LaneId lane) override {
    if (!closed_lanes.insert(lane).second) throw std::logic_error("fake executor: lane " + std::to_string(lane) + " closed twice");
    last_job_.erase(lane);
  }

  void start(const core::Dispatch& d) override {
    for (const Run& r : runs_) {
      if (r.d.lane == d.lane) throw std::logic_error("fake executor: two runs in lane " + std::to_string(d.lane));
    }
    if (d.iterations <= 0 || d.extra_ns < 0) throw std::logic_error("fake executor: bad dispatch");
    if (closed_lanes.count(d.lane) != 0) throw std::logic_error("fake executor: a run in closed lane " + std::to_string(d.lane));
    Run r;
    r.d = d;
    r.start_ns = now_;
    const auto last = last_job_.find(d.lane);
    r.switch_ns = last != last_job_.end() && last->second != d.job ? switch_cost_ns_ : 0;
    last_job_[d.lane] = d.job;
    r.next_boundary = now_ + d.extra_ns + r.switch_ns + iter(d.job);
    runs_.push_back(r);
    dispatches.push_back(d);
    dispatch_times.push_back(now_);
  }

  void stop_at_boundary(core::LaneId lane) override {
    for (Run& r : runs_) {
      if (r.d.lane != lane) continue;
      // A boundary exactly at now (an iteration of this run ended at this instant) is "at or
      // after now": the run ends here. Otherwise it ends when the iteration in flight ends.
      if (r.done >= 1 && r.last_boundary == now_) {
        r.ends_now = true;
      } else {
        r.stop = true;
      }
      return;
    }
  }

  void wait(core::TimeNs deadline, std::vector<core::Completion>& out) override {
    while (true) {
      bool any = false;
      for (Run& r : runs_) {
        if (r.ends_now) {
          r.complete = true;
          any = true;
        }
      }
      if (any) {
        collect(out);
        return;
      }
      core::TimeNs t = core::kNever;
      for (const Run& r : runs_) t = std::min(t, r.next_boundary);
      if (t > deadline || runs_.empty()) {
        if (deadline == core::kNever) throw std::logic_error("fake executor: wait for nothing");
        now_ = std::max(now_, deadline);
        return;
      }
      now_ = t;
      for (Run& r : runs_) {
        if (r.next_boundary != t) continue;
        ++r.done;
        r.last_boundary = t;
        if (r.done == r.d.iterations || r.stop) {
          r.complete = true;
          any = true;
        } else {
          r.next_boundary = t + iter(r.d.job);
        }
      }
      if (any) {
        collect(out);
        return;
      }
    }
  }

  /// Every dispatch the loop made, and when.
  std::vector<core::Dispatch> dispatches;
  std::vector<core::TimeNs> dispatch_times;
  std::vector<core::JobIndex> admitted;
  std::vector<core::JobIndex> released;
  /// Lanes the loop closed (Executor::lane_closed); a run in one of them is an error.
  std::set<core::LaneId> closed_lanes;

 private:
  struct Run {
    core::Dispatch d;
    core::TimeNs start_ns = 0;
    core::TimeNs switch_ns = 0;
    core::TimeNs next_boundary = 0;
    core::TimeNs last_boundary = -1;
    std::int64_t done = 0;
    bool stop = false;
    bool ends_now = false;
    bool complete = false;
  };

  core::TimeNs iter(core::JobIndex j) const { return jobs_[static_cast<std::size_t>(j)].iter_ns; }

  void collect(std::vector<core::Completion>& out) {
    std::vector<Run> kept;
    for (const Run& r : runs_) {
      if (r.complete) {
        core::Completion c{r.d.job, r.d.lane, r.done, r.start_ns, now_, false, {}};
        c.switch_ns = r.switch_ns;
        out.push_back(std::move(c));
      } else {
        kept.push_back(r);
      }
    }
    runs_ = std::move(kept);
  }

  std::span<const core::JobSpec> jobs_;
  core::TimeNs switch_cost_ns_;
  std::map<core::LaneId, core::JobIndex> last_job_;
  std::vector<Run> runs_;
  core::TimeNs now_ = 0;
};

}  // namespace salus::test
