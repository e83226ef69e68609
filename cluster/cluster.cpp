// The cluster's loop (cluster/README.md, "The model"): each instant's steps in order, the executor
// each GPU's Scheduler sees, and run_cluster. The Cluster itself: cluster_model.h.
#include "cluster/cluster.h"

#include <algorithm>
#include <numeric>

#include "cluster/cluster_model.h"

namespace salus::cluster {

namespace model {

std::int32_t GpuExecutor::gang_of(JobIndex r) const { return cluster_.replica_gang(r); }
void GpuExecutor::admit(JobIndex job, const JobSpec& spec, Bytes offset) {
  sim_.admit(job, spec, offset);
  cluster_.on_admit(gpu_, job);
}
void GpuExecutor::release(JobIndex job) {
  sim_.release(job);
  cluster_.on_release(gpu_, job);
}
void GpuExecutor::start(const Dispatch& d) {
  if (gang_of(d.job) >= 0) {
    cluster_.gang_chosen(gpu_, d);
    return;
  }
  sim_.start(d);
}
void GpuExecutor::stop_at_boundary(LaneId lane) {
  const JobIndex r = gang_lane(lane);
  if (r != core::kNoJob) {
    cluster_.gang_cut(r);
    return;
  }
  sim_.stop_at_boundary(lane);
}
void GpuExecutor::wait(TimeNs deadline, std::vector<Completion>& out) { cluster_.collect(gpu_, deadline, out); }
void GpuExecutor::note_transfer(LaneId lane) {
  if (const JobIndex r = gang_lane(lane); r != core::kNoJob) cluster_.gang_transfer(r);
}
bool GpuExecutor::supports_plans() const { return cluster_.plans(); }
std::int64_t GpuExecutor::iterations_by_next_boundary(LaneId lane, TimeNs t) const {
  const JobIndex r = gang_lane(lane);
  if (r == core::kNoJob) return sim_.iterations_by_next_boundary(lane, t);
  const std::int64_t done = cluster_.gang_run_iterations(r);
  if (done < 0) return kHeldLane;
  const std::int64_t sub = sim_.iterations_by_next_boundary(lane, t);
  return sub < 0 ? sub : done + sub;
}

bool GpuExecutor::plans_lone_job() const { return cluster_.gang_plans() && cluster_.gang_admitted(gpu_); }
// Spares the policy's plan where start_plan below would refuse it: outside a replay, plan_deadline
// is now because a gang job waiting in the cluster queue could take this GPU, or the lane (the only one: plans run
// alone) holds this GPU's gang replica and neither a joint plan of the gang's GPUs nor this GPU's
// turn plan runs from now (computed before any GPU dispatched: JointPlanner::plan).
bool GpuExecutor::plans_now() const {
  if (speculation_.replaying()) return true;
  if (cluster_.gang_admitted(gpu_)) return cluster_.joint_plan_ready(gpu_);
  return !cluster_.gang_queue_blocks(gpu_);
}
// A plan runs in the simulator as on one GPU, but must end by the first instant a job could be
// bound to this GPU (Cluster::plan_deadline): a plan is never cut, and a job joining the lane
// would have cut the run at the next boundary. A plan with a gang replica is the GPU's part of
// its gang's joint plan, computed with the others', or its turn plan (JointPlanner::plan).
bool GpuExecutor::start_plan(const core::PlanDispatch& p, core::PlanReport& report) {
  for (const core::PlanJob& j : p.jobs) {
    if (gang_of(j.job) >= 0) {
      return !speculation_.replaying() && cluster_.take_joint_plan(gpu_, p, report);
    }
  }
  const TimeNs now = sim_.now();
  // On one GPU every job is given to it without a choice: the rule's deadline is the next
  // arrival, nothing is speculative, and the plans are run_schedule's.
  const TimeNs rule = speculation_.replaying() ? core::kNever : cluster_.plan_deadline(gpu_);
  const TimeNs deadline = speculation_.plan_deadline(now, p.deadline, rule, cluster_.gpus() > 1);
  if (deadline <= now) return false;
  plan_ = p;
  plan_.deadline = deadline;
  return sim_.start_plan(plan_, report);
}

// ---- The loop ---------------------------------------------------------------------------------

ClusterOutcome Cluster::run() {
  const std::size_t n = jobs_.size();
  std::vector<JobIndex>& order = order_;
  order.resize(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](JobIndex a, JobIndex b) { return core::arrives_before(jobs_[a], jobs_[b]); });
  rank_.assign(n, -1);
  slot_of_.assign(n, core::kNoJob);
  job_gpus_ = JobGpus(n);
  speculation_.begin(jobs_, order, [&](JobIndex j) { return fixed_gpu(j) >= 0; });
  std::size_t& cursor = cursor_;
  cursor = 0;
  std::int64_t busy_recorded = 0;
  TimeNs end = 0;
  while (true) {
    const TimeNs next_arrival = cursor < n ? jobs_[order[cursor]].arrival_ns : core::kNever;
    // Every GPU takes a step at 0, as run_schedule's loop does before its first wait.
    TimeNs t = result_.events == 0 ? 0 : std::min(next_arrival, steps_.top_time());
    if (t == core::kNever) break;
    now_ = t;
    instant_seq_ = touch_log_.seq();
    taken_ = false;
    // Every GPU built takes a step at 0, as run_schedule's loop does before its first wait (a GPU
    // built later steps first when it is used: until then it is idle, and a step changes nothing).
    if (result_.events++ == 0) {
      for (std::int32_t g = 0; g < static_cast<std::int32_t>(gpus_.size()); ++g) {
        if (at(g).rt) touch(g);
      }
    }
    end = std::max(end, t);
    // 1. Every GPU with an event now reports its completions (a gang's iteration ends when its
    //    last replica's does).
    while (steps_.top_time() == t) {
      const std::int32_t g = steps_.top();
      steps_.set(g, core::kNever);
      advance(g, t);
    }
    resolve_gangs(t);
    // 2. The steps of run_schedule at t on each such GPU: completions, arrivals, the boundary
    //    split; the cluster's placement between them and schedule.
    for (std::int32_t g : touched_) at(g).event = at(g).rt->sched->take_completions(at(g).rt->completions);
    taken_ = true;
    first_new_rank_ = -1;
    for (; cursor < n && jobs_[order[cursor]].arrival_ns == t; ++cursor) {
      arrive(order[cursor], static_cast<std::int64_t>(cursor), t);
    }
    for (std::int32_t g : touched_) {
      if (at(g).event) at(g).rt->sched->split_at_instant(t, true, scratch_);
    }
    // The placement judges every GPU as this instant leaves it (its finishes, lane moves and
    // shrinks, its own queue's admissions: Scheduler::settle), before it dispatches.
    for (std::int32_t g : touched_) at(g).rt->sched->settle(t, at(g).event);
    place(t);
    batches_.note_layouts(touched_, *this);
    if (gang_plans()) planner_.plan(t, touched_, *this);
    for (std::int32_t g : touched_) at(g).rt->sched->schedule(t, at(g).event);
    if (planner_.waiting()) planner_.check_taken(t, *this);
    // 3. Gang runs whose every replica was chosen start now; batched gang runs are cut back
    //    where lock-step could differ from them.
    start_ready_gangs(t);
    batches_.check(t, touched_, gpus_.size(), *this);
    SALUS_INVARIANT(gang_iteration_ends_.empty(), "a gang iteration started at t ends after t", std::to_string(t));
    // 4. When each GPU stepped needs its next step.
    for (std::int32_t g : touched_) {
      at(g).touched = false;
      index_room(g);
      reschedule(g, t);
    }
    touched_.clear();
    if (busy_ != busy_recorded || result_.busy.empty()) {
      if (!result_.busy.empty() && result_.busy.back().time_ns == t) {
        result_.busy.back().gpus = static_cast<std::int32_t>(busy_);
      } else {
        result_.busy.push_back({t, static_cast<std::int32_t>(busy_)});
      }
      busy_recorded = busy_;
    }
    retire_ended();
    if (opts_.progress && result_.events % opts_.progress_every == 0) {
      merge_live();
      opts_.progress({now_, result_.events, result_.outcome.jobs});
    }
  }
  SALUS_INVARIANT(queue_.empty(), "the cluster queue drains", std::to_string(queue_.size()) + " jobs left");
  return finish(end);
}

}  // namespace model

void add_gpu_counters(core::ScheduleOutcome& sum, const core::ScheduleOutcome& gpu) {
  sum.lanes_opened += gpu.lanes_opened;
  sum.max_concurrent_lanes = std::max(sum.max_concurrent_lanes, gpu.max_concurrent_lanes);
  sum.admissions_new_lane += gpu.admissions_new_lane;
  sum.admissions_existing_lane += gpu.admissions_existing_lane;
  sum.admissions_grown_lane += gpu.admissions_grown_lane;
  sum.dispatches += gpu.dispatches;
  sum.switches += gpu.switches;
  sum.page_outs += gpu.page_outs;
  sum.page_ins += gpu.page_ins;
  sum.plans += gpu.plans;
  sum.plan_closed_form += gpu.plan_closed_form;
}

ClusterOutcome run_cluster(std::span<const core::JobSpec> jobs, const std::string& policy, const ClusterOptions& opts) {
  model::Cluster c(jobs, policy, opts);
  return c.run();
}

}  // namespace salus::cluster
