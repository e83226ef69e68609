#pragma once
/// The discrete-event executor: a simulated clock on int64 nanoseconds that jumps from event to
/// event. A run of n iterations costs O(1) events however large n is; only changes of the set of
/// running lanes (which change their speeds under interference) and stops cost work.
#include <cstdint>
#include <span>
#include <vector>

#include "core/executor.h"
#include "core/job.h"
#include "sim/interference.h"

namespace salus::sim {

class SimExecutor final : public core::Executor {
 public:
  /// `actual_iter_ns[j]`, if not empty, is the time job j's iterations really take (e.g. the
  /// profile with noise); otherwise the profiled iter_ns. The model must outlive the executor.
  SimExecutor(std::span<const core::JobSpec> jobs, const InterferenceModel& model,
              std::vector<core::TimeNs> actual_iter_ns = {});

  core::TimeNs now() const override { return now_; }
  void start(const core::Dispatch& d) override;
  void stop_at_boundary(core::LaneId lane) override;
  bool end_if_at_boundary(core::LaneId lane) override;
  void wait(core::TimeNs deadline, std::vector<core::Completion>& out) override;

 private:
  /// Progress is counted in "work": solo nanoseconds. At slowdown s (ppm), work advances by
  /// elapsed * kSolo / s.
  struct Run {
    core::Dispatch d;
    core::TimeNs iter_ns = 0;
    core::TimeNs start_ns = 0;
    core::TimeNs work_total = 0;     // extra + iterations * iter_ns
    core::TimeNs work_at_sync = 0;   // work done at sync_ns
    core::TimeNs sync_ns = 0;
    std::int64_t slowdown = kSolo;
    core::TimeNs end_ns = 0;
  };

  core::TimeNs work_done(const Run& r, core::TimeNs t) const;
  void schedule_end(Run& r) const;
  void resync();

  std::span<const core::JobSpec> jobs_;
  const InterferenceModel& model_;
  std::vector<core::TimeNs> iter_ns_;
  std::vector<Run> runs_;  // in flight, at most one per lane
  std::vector<RunningIteration> scratch_running_;
  std::vector<std::int64_t> scratch_slowdown_;
  core::TimeNs now_ = 0;
};

}  // namespace salus::sim
