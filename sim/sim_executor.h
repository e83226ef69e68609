#pragma once
/// The discrete-event executor: a simulated clock on int64 nanoseconds that jumps from event to
/// event. A run of n iterations costs O(1) events however large n is; only changes of the set of
/// running lanes (which change their speeds under interference) and stops cost work.
///
/// Rounding model. Progress is counted in work (solo nanoseconds). At slowdown s (ppm), an
/// iteration with w of its work done at time t ends at t + ceil((W - w) * s / 1e6), W its work
/// (iter_ns, plus the run's extra for its first iteration): time is rounded up at every iteration
/// boundary, and the later iterations of a run at constant slowdown each take
/// ceil(iter_ns * s / 1e6), so the boundaries of a batched run are in closed form. When the
/// slowdown changes at t, the iteration in flight keeps floor((t - t0) * 1e6 / s) more work (t0 its
/// start or the last change). Slowdowns are re-evaluated lazily, once the set of running lanes at
/// an instant is final (at the next wait), so a lane whose run ends and restarts with the same job
/// at the same instant does not disturb the others. Together these make a run batched over k
/// iterations end each of them exactly (to the nanosecond) where k runs of one iteration would,
/// under every interference model.
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "core/executor.h"
#include "core/job.h"
#include "sim/interference.h"
#include "sim/rotation.h"

namespace salus::sim {

class SimExecutor final : public core::Executor, public core::Planning {
 public:
  /// `actual_iter_ns[j]`, if not empty, is the time job j's iterations really take (e.g. the
  /// profile with noise); otherwise the profiled iter_ns, read from `jobs` at each dispatch (no
  /// copy: a cluster keeps one executor per GPU over one job table). The model must outlive the executor.
  /// `switch_cost_ns` is added to the first iteration of a run whose job differs from the job
  /// the lane ran last (the first job of a fresh lane pays nothing), unless the job has its own
  /// (JobSpec::switch_ns >= 0). `paging_bytes_per_s`: the
  /// host link's bandwidth for paging (0: this executor does not page); a transfer of P bytes
  /// takes ceil(P / bandwidth) and delays the lane's next run by that much.
  SimExecutor(std::span<const core::JobSpec> jobs, const InterferenceModel& model,
              std::vector<core::TimeNs> actual_iter_ns = {}, core::TimeNs switch_cost_ns = 0,
              std::int64_t paging_bytes_per_s = 0);
  /// The same with a table of actual iteration times shared by several executors (a cluster's
  /// GPUs of one speed: one table, not one copy per GPU); null: the profile's.
  SimExecutor(std::span<const core::JobSpec> jobs, const InterferenceModel& model, core::TimeNs switch_cost_ns,
              std::int64_t paging_bytes_per_s, std::shared_ptr<const std::vector<core::TimeNs>> actual_iter_ns);

  core::TimeNs now() const override { return now_; }
  void start(const core::Dispatch& d) override { start_paced(d, iter_time(d.job)); }
  /// As start, each iteration taking `iter_ns` of solo work instead of the job's own iteration
  /// time: a gang replica held to the pace of its slowest replica (cluster/, a batch of a gang
  /// across GPUs of different speeds, started with nothing beside it). Should a run start beside
  /// it, the iteration in flight becomes lock-step's (unpad): its own work, or its lane held.
  void start_paced(const core::Dispatch& d, core::TimeNs iter_ns);
  void stop_at_boundary(core::LaneId lane) override;
  bool end_if_at_boundary(core::LaneId lane) override;
  std::int64_t iterations_by_next_boundary(core::LaneId lane, core::TimeNs t) const override;
  bool supports_paging() const override { return paging_bytes_per_s_ > 0; }
  core::Planning* planning() override { return this; }
  /// Runs the plan's iterations one after the other at solo speed (the lane runs alone), each of
  /// the same work as in a run dispatched for it, in a tight loop over the plan's jobs, the
  /// fastest job in blocks, and jumped in closed form where it can be (sim/rotation.h).
  bool start_plan(const core::PlanDispatch& p, core::PlanReport& report) override;
  /// Takes back the plan in flight, started at now() (the clock has not moved since): the lane is
  /// idle again and its last job the plan's PlanDispatch::last_job, as before start_plan.
  void cancel_plan(core::LaneId lane) override;
  void last_job_ended(core::LaneId lane) override;
  /// The jobs' specs and actual iteration times moved (a driver whose table of jobs grows:
  /// cluster/'s replica slots): the same jobs at the same indices, perhaps more after them.
  /// `iter_ns` empty: the specs' iteration times.
  void rebase(std::span<const core::JobSpec> jobs, std::span<const core::TimeNs> iter_ns);
  /// Starts a plan whose report its driver computed (cluster/: the plans of a gang job's GPUs,
  /// computed together; cluster/README.md, "Joint plans"): the lane is busy until report.end_ns, when
  /// it completes as start_plan's plans do, and its last job is then report.last_job. The lane
  /// must stand where the plan starts (idle, PlanDispatch::last_job its last job, no transfer due).
  void start_computed_plan(const core::PlanDispatch& p, const core::PlanReport& report);
  /// What a driver computing a plan needs to time it as this executor would: job j's actual
  /// iteration time, the switching cost its run pays after another job's, the lane's last job.
  core::TimeNs iter_time(core::JobIndex j) const {
    const auto k = static_cast<std::size_t>(j);
    return iter_ns_.empty() ? jobs_[k].iter_ns : iter_ns_[k];
  }
  core::TimeNs switch_cost(core::JobIndex j) const {
    const core::TimeNs own = jobs_[static_cast<std::size_t>(j)].switch_ns;
    return own >= 0 ? own : switch_cost_ns_;
  }
  core::JobIndex last_job(core::LaneId lane) const {
    const std::size_t i = find_lane(lane);
    return i < last_job_.size() ? last_job_[i] : core::kNoJob;
  }
  /// The lane is gone (Executor::lane_closed): what is kept of it goes.
  void lane_closed(core::LaneId lane) override;
  /// The end of the plan in flight (kNever: none), without moving the clock.
  core::TimeNs plan_end_ns() const;
  /// Paced iterations made lock-step's because a run started beside them (unpad): those that
  /// ran their own work on, and those whose lane was held from then.
  std::int64_t unpadded_work() const { return unpadded_work_; }
  std::int64_t unpadded_held() const { return unpadded_held_; }
  void page_out(core::JobIndex job, core::LaneId lane) override { charge_transfer(job, lane); }
  void page_in(core::JobIndex job, core::LaneId lane, core::Bytes) override { charge_transfer(job, lane); }
  void wait(core::TimeNs deadline, std::vector<core::Completion>& out) override;
  /// When the next run completes if nothing else changes (kNever when none runs), without
  /// moving the clock: a driver of several executors under one clock (cluster/) waits on the
  /// earliest of them.
  core::TimeNs next_completion_ns();
  /// Runs in flight (busy lanes; a plan is one). A lane that runs alone runs at solo speed.
  std::size_t running() const { return runs_.size(); }
  /// Ends the lane's run after its iteration in flight at `t` (at a boundary of `t`: the
  /// iteration that starts there), when it was dispatched more; no-op when the lane is idle.
  /// `t` >= now(); when `t` > now(), the run's speed must stay as it is until `t` (nothing
  /// starts or ends beside it in between, or the model is ideal). For a driver that batches iterations it would otherwise dispatch
  /// one by one in lock-step across executors whose clocks lag its own (cluster/: gang jobs).
  void stop_after_iteration_at(core::LaneId lane, core::TimeNs t);

  // For a driver that batches a gang's lock-step beside co-runners (cluster/, GangBatches: a
  // batch whose slowest replica runs beside other lanes at a steady slowdown). Each takes the
  // lane's run in flight as the last wait or next_completion_ns left it (its slowdown
  // re-evaluated).
  /// What a run in flight is now (`running` false: the lane is idle).
  struct RunShape {
    bool running = false;
    bool held = false;               // its lane held, idle, out of the model's running set (unpad)
    std::int64_t slowdown = kSolo;
    core::TimeNs iter_ns = 0;        // solo work per iteration (more than own_ns: paced)
    core::TimeNs own_ns = 0;         // the job's own iteration time
    core::TimeNs sync_ns = 0;        // when its plan last changed (start, slowdown, unpad, pace)
    core::TimeNs period_ns = 0;      // each iteration after the first in flight at sync_ns
    core::TimeNs end_ns = 0;
    std::int64_t iterations = 0;     // dispatched (or cut back to)
  };
  RunShape shape(core::LaneId lane) const;
  /// Holds a run started now, with none of its work done, to `iter_ns` of solo work an
  /// iteration (at least its own): start_paced after the fact, for a run that runs alone.
  void pace(core::LaneId lane, core::TimeNs iter_ns);
  /// A paced run, alone, made lock-step's at `t` (>= now(), its speed the same until then)
  /// whatever the slowest replica does next: where some of its own work is left, the run ends
  /// with the iteration in flight at the end of that work (nullopt); else its own work ended
  /// before `t`, and it is taken out, its completion returned, ended at `t` (the lane idle, held
  /// by its driver until the slowest replica's end, as lock-step holds it).
  std::optional<core::Completion> unpad_at(core::LaneId lane, core::TimeNs t);

 private:
  struct Run {
    core::Dispatch d;
    core::TimeNs iter_ns = 0;
    core::TimeNs switch_ns = 0;      // switching cost added to the first iteration
    core::TimeNs extra_ns = 0;       // d.extra_ns plus switch_ns: the first iteration's extra work
    core::TimeNs start_ns = 0;
    std::int64_t slowdown = kSolo;
    core::TimeNs sync_ns = 0;        // when the slowdown last changed (or the run started)
    std::int64_t iter_at_sync = 0;   // the iteration in flight at sync_ns (0-based)
    core::TimeNs work_at_sync = 0;   // its work done at sync_ns
    core::TimeNs first_end_ns = 0;   // end of iteration iter_at_sync
    core::TimeNs period_ns = 0;      // each later iteration: ceil(iter_ns * slowdown / 1e6)
    core::TimeNs end_ns = 0;         // end of the run's last iteration
    bool plan = false;               // a plan (start_plan): runs to end_ns, never cut
    core::TimeNs own_ns = 0;         // the job's own iteration time (iter_ns more: paced, start_paced)
    bool held = false;               // a paced replica's lane held, idle, until end_ns (unpad)
  };
  /// Where a run is at t (t >= sync_ns): the iteration in flight and its work done.
  struct Progress {
    std::int64_t iteration = 0;
    core::TimeNs work = 0;
    bool at_boundary = false;  // t is exactly the end of iteration - 1
  };

  core::TimeNs duration(core::TimeNs work, std::int64_t slowdown) const;
  core::TimeNs iteration_work(const Run& r, std::int64_t i) const { return r.iter_ns + (i == 0 ? r.extra_ns : 0); }
  Progress progress(const Run& r, core::TimeNs t) const;
  void plan(Run& r) const;
  /// Ends the run after `iterations` (fewer than dispatched).
  void truncate(Run& r, std::int64_t iterations) const;
  void resync();
  /// A run starts beside a paced run (start_paced): lock-step has the replica run its own
  /// iteration and then hold its lane, idle, until the slowest replica's iteration ends. The
  /// iteration in flight becomes that: where some of its own work is left, its own work (the run
  /// ends with it, at the speed it runs at from now); else held, its end unchanged, out of the
  /// running set the model sees.
  void unpad(Run& r);
  const Run* find_run(core::LaneId lane) const;
  Run* find_run(core::LaneId lane) { return const_cast<Run*>(std::as_const(*this).find_run(lane)); }
  void charge_transfer(core::JobIndex job, core::LaneId lane);
  /// The lane's entry in lane_ids_ (lane_ids_.size(): none); lane_slot adds one.
  std::size_t find_lane(core::LaneId lane) const;
  std::size_t lane_slot(core::LaneId lane);

  std::span<const core::JobSpec> jobs_;
  const InterferenceModel& model_;
  std::shared_ptr<const std::vector<core::TimeNs>> iter_table_;  // owns iter_ns_'s table (may be shared)
  std::span<const core::TimeNs> iter_ns_;  // iter_time: job j's actual iteration time when given, else the spec's
  // switch_cost: what job j's first iteration after another job's pays: its own
  // (JobSpec::switch_ns) where the catalog measured one, else the run's switch_cost_ns_.
  core::TimeNs switch_cost_ns_;
  std::int64_t paging_bytes_per_s_;
  // Per lane that has run and not closed (a few: lanes are dropped at Executor::lane_closed, so
  // nothing here grows with the lanes a run opens, one per job under FIFO): its id, the job of its
  // last run, the paging transfers its next run waits for.
  std::vector<core::LaneId> lane_ids_;
  std::vector<core::JobIndex> last_job_;
  std::vector<core::TimeNs> transfer_ns_;
  std::vector<Run> runs_;  // in flight, at most one per lane, by lane id
  bool dirty_ = false;     // the set of running lanes changed since the last resync
  std::vector<RunningIteration> scratch_running_;
  std::vector<std::int64_t> scratch_slowdown_;
  std::vector<std::int64_t> scratch_seen_;  // the slowdowns of the runs the model sees (resync)
  rotation::Tables rotation_;  // start_plan's tables, kept between plans (sim/rotation.h)
  core::JobIndex plan_last_job_ = core::kNoJob;  // the plan in flight's PlanDispatch::last_job (cancel_plan)
  /// The lane runs the plan until `end`, its last job then `last` (start_plan, start_computed_plan).
  void run_plan(const core::PlanDispatch& p, std::int64_t iterations, core::JobIndex last, core::TimeNs end);

  core::TimeNs now_ = 0;
  std::int64_t unpadded_work_ = 0, unpadded_held_ = 0;
};

}  // namespace salus::sim
