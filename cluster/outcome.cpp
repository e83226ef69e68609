// Replica slots and the run's outcome (cluster/README.md, "State and what it costs";
// cluster_model.h).
#include "cluster/cluster_model.h"

namespace salus::cluster::model {

// ---- Replicas -----------------------------------------------------------------------------

JobIndex Cluster::add_replicas(JobIndex j, std::int64_t rank) {
  const JobSpec& s = jobs_[static_cast<std::size_t>(j)];
  std::int32_t k = -1;
  if (s.gpus > 1) {
    if (free_gangs_.empty()) {
      k = static_cast<std::int32_t>(gangs_.size());
      gangs_.emplace_back();
    } else {
      k = free_gangs_.back();
      free_gangs_.pop_back();
    }
    Gang& g = gangs_[static_cast<std::size_t>(k)];
    const auto w = static_cast<std::size_t>(s.gpus);
    g.job = j;
    g.replicas.reserve(w);
    g.gpus.assign(w, -1);
    g.chosen.assign(w, Dispatch{});
    g.is_chosen.assign(w, 0);
    g.run_start.assign(w, 0);
    g.switch_ns.assign(w, 0);
  }
  const TimeNs base = opts_.actual_iter_ns.empty() ? s.iter_ns : opts_.actual_iter_ns[static_cast<std::size_t>(j)];
  JobIndex first = core::kNoJob;
  for (std::int32_t i = 0; i < s.gpus; ++i) {
    const JobIndex r = replicas_.add(s, j, k, i);
    if (replicas_.take_grown()) rebase();
    replicas_.state(r).submit_rank = rank;
    for (IterTable& t : iter_tables_) t.ns[static_cast<std::size_t>(r)] = gpu_iter_ns(base, speed_for(t.key, j));
    if (k >= 0) gangs_[static_cast<std::size_t>(k)].replicas.push_back(r);
    if (i == 0) first = r;
  }
  slot_of_[static_cast<std::size_t>(j)] = first;
  return first;
}

// The replica table grew: every GPU's Scheduler and simulator see it where it is now.
void Cluster::rebase() {
  for (IterTable& t : iter_tables_) t.ns.resize(replicas_.size(), 0);
  for (Gpu& gpu : gpus_) {
    if (!gpu.rt) continue;  // built later, with the spans as they are then
    gpu.rt->sched->rebase(replicas_.specs(), replicas_.states());
    gpu.rt->exec->sim().rebase(replicas_.specs(), iter_times(gpu));
  }
}

JobState Cluster::merged_state(JobIndex j) const {
  const JobIndex r0 = slot_of_[static_cast<std::size_t>(j)];
  JobState st = replicas_.state(r0);
  const std::int32_t k = replicas_.gang(r0);
  if (k < 0) return st;
  const Gang& gang = gangs_[static_cast<std::size_t>(k)];
  for (std::size_t i = 1; i < gang.replicas.size(); ++i) {
    const JobState& o = replicas_.state(gang.replicas[i]);
    // The gang starts when its last replica is first chosen (the others' lanes were held).
    if (o.first_start_ns < 0 || st.first_start_ns < 0) {
      st.first_start_ns = -1;
    } else {
      st.first_start_ns = std::max(st.first_start_ns, o.first_start_ns);
    }
    st.finish_ns = std::max(st.finish_ns, o.finish_ns);
    st.gpu_time_ns += o.gpu_time_ns;
    if (st.status == JobStatus::kDone && o.status != JobStatus::kDone) {
      st.status = o.status;
      st.set_reason(o.reason());
    }
  }
  return st;
}

void Cluster::retire_ended() {
  const auto ended = [&](JobIndex r) {
    const JobStatus st = replicas_.state(r).status;
    return st == JobStatus::kDone || st == JobStatus::kRejected || st == JobStatus::kFailed ||
           st == JobStatus::kInterrupted;
  };
  for (const JobIndex r : ended_) {
    const JobIndex j = replicas_.owner(r);
    if (j == core::kNoJob) continue;  // retired with another replica's entry
    const std::int32_t k = replicas_.gang(r);
    if (k >= 0 && !std::all_of(gangs_[static_cast<std::size_t>(k)].replicas.begin(),
                               gangs_[static_cast<std::size_t>(k)].replicas.end(), ended)) {
      continue;  // the gang's other replicas end later
    }
    result_.outcome.jobs[static_cast<std::size_t>(j)] = merged_state(j);
    if (!reuse_slots_) continue;
    if (opts_.sched.record_timeline) {
      for (const std::int32_t g : job_gpus_[static_cast<std::size_t>(j)]) name_runs(g);
    }
    if (k >= 0) {
      Gang& gang = gangs_[static_cast<std::size_t>(k)];
      for (const JobIndex q : gang.replicas) replicas_.free(q);
      gang = Gang{};
      batches_.forget(k);
      planner_.forget(k);
      free_gangs_.push_back(k);
    } else {
      replicas_.free(r);
    }
    slot_of_[static_cast<std::size_t>(j)] = core::kNoJob;
  }
  ended_.clear();
}

void Cluster::name_runs(std::int32_t g) {
  if (!at(g).rt) return;
  GpuRuntime& rt = *at(g).rt;
  std::vector<core::Segment>& runs = rt.sched->outcome().segments;
  for (std::size_t i = rt.named; i < runs.size(); ++i) runs[i].job = replicas_.owner(runs[i].job);
  rt.named = runs.size();
}

void Cluster::merge_live() {
  for (JobIndex r = 0; r < static_cast<JobIndex>(replicas_.size()); ++r) {
    const JobIndex j = replicas_.owner(r);
    if (j != core::kNoJob && replicas_.pos(r) == 0) result_.outcome.jobs[static_cast<std::size_t>(j)] = merged_state(j);
  }
}

// The input jobs' states (those still live merged from their replicas'), and the GPUs' counters
// summed.
ClusterOutcome Cluster::finish(TimeNs end) {
  core::ScheduleOutcome& out = result_.outcome;
  const JointPlanner::Counters& plans = planner_.counters();
  result_.joint_plans += plans.joint_plans;
  result_.joint_gang_runs += plans.joint_gang_runs;
  result_.joint_paced_plans += plans.joint_paced_plans;
  result_.joint_period_rounds += plans.joint_period_rounds;
  result_.turn_plans += plans.turn_plans;
  result_.turn_plan_runs += plans.turn_plan_runs;
  result_.turn_jumped += plans.turn_jumped;
  result_.gang_iterations += plans.gang_iterations;
  result_.rewinds += speculation_.rewinds();
  retire_ended();
  merge_live();
  if (gpus_.size() == 1) runtime(0);  // its (empty) recording is the outcome's
  for (Gpu& gpu : gpus_) {
    if (!gpu.rt) continue;  // never used: every counter 0
    core::ScheduleOutcome& o = gpu.rt->sched->outcome();
    add_gpu_counters(out, o);
    result_.unpadded_work += gpu.rt->exec->sim().unpadded_work();
    result_.unpadded_held += gpu.rt->exec->sim().unpadded_held();
    out.steps += o.steps;
    out.iterations += o.iterations;
    if (out.fatal_error.empty()) out.fatal_error = o.fatal_error;
  }
  if (gpus_.size() == 1) {
    gpus_.front().rt->sched->end_at(end);
    name_runs(0);
    core::ScheduleOutcome& o = gpus_.front().rt->sched->outcome();
    out.segments = std::move(o.segments);
    out.memory = std::move(o.memory);
    out.lane_moves = std::move(o.lane_moves);
  } else if (opts_.sched.record_timeline) {
    // Each GPU's recording, its rows naming the input job rather than the replica.
    result_.gpu_timelines.reserve(gpus_.size());
    for (Gpu& gpu : gpus_) {
      gpu.rt->sched->end_at(end);
      name_runs(static_cast<std::int32_t>(&gpu - gpus_.data()));
      core::ScheduleOutcome& o = gpu.rt->sched->outcome();
      result_.gpu_timelines.push_back({std::move(o.segments), std::move(o.memory), std::move(o.lane_moves)});
    }
  }
  out.end_ns = end;
  result_.job_gpus = std::move(job_gpus_);
  return std::move(result_);
}

}  // namespace salus::cluster::model
