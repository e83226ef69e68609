// Gang jobs (cluster/README.md, "Gang jobs"): their lock-step runs, and what the joint plans and
// batched runs ask of the cluster about them (cluster_model.h).
#include "cluster/cluster_model.h"

namespace salus::cluster::model {

// ---- Gang jobs ------------------------------------------------------------------------------

// Every replica's GPU chose its replica: the gang run starts now, one iteration at a time on
// every GPU (the first carries the job's first-iteration extra and each lane's switching cost).
// After the first, the rest of the run is dispatched as one batch on every GPU (below).
// The gang runs whose every replica was chosen at t start. A gang run's start frees the lanes its
// replicas held since an earlier instant (a held lane starts no newcomer; a lane chosen at t was
// not held when the placement judged it): where a newcomer may join a lane (FAIR, LAS, SRTF,
// priority; no gang job, as the GPUs host one), the cluster queue is tried again on those GPUs
// at t, and what is bound there is dispatched at t (which may complete another gang's choice).
void Cluster::start_ready_gangs(TimeNs t) {
  const bool joins = newcomer_ != core::Policy::Newcomer::kWaits;
  while (!ready_gangs_.empty()) {
    freed_.clear();
    for (const std::int32_t k : ready_gangs_) {
      Gang& gang = gangs_[static_cast<std::size_t>(k)];
      if (!gang.running && joins) {
        for (std::size_t i = 0; i < gang.gpus.size(); ++i) {
          if (gang.run_start[i] < t) freed_.push_back(gang.gpus[i]);
        }
      }
      start_sub_runs(gang, t);
    }
    ready_gangs_.clear();
    if (queue_.empty() || freed_.empty()) return;
    for (const std::int32_t g : freed_) touch(g);
    rebound_.clear();
    second_pass_ = true;
    place(t);
    second_pass_ = false;
    std::sort(rebound_.begin(), rebound_.end());
    rebound_.erase(std::unique(rebound_.begin(), rebound_.end()), rebound_.end());
    for (const std::int32_t g : rebound_) at(g).rt->sched->schedule(t, true);
    if (planner_.waiting()) planner_.check_taken(now_, *this);
  }
}

void Cluster::start_sub_runs(Gang& gang, TimeNs t) {
  const bool first = !gang.running;
  if (first) {
    gang.running = true;
    gang.iterations = 0;
    gang.target = gang.chosen.front().iterations;
    for (const Dispatch& d : gang.chosen) gang.target = std::min(gang.target, d.iterations);
  }
  gang.sub_done = 0;
  gang.round_done = -1;
  // These sub-runs pay every transfer charged to the replicas' lanes so far: one paid by some
  // replicas only puts them out of phase, so that round is one iteration.
  const std::int64_t left = gang.target - gang.iterations;
  // A batch needs the replicas in phase: one iteration time on every GPU, or (GPUs of different
  // speeds) every faster replica held to the slowest one's pace where that changes nothing
  // (paceable); else lock-step, one iteration at a time, each ending when the slowest replica's
  // does. After the first, an iteration run alone (the last of a run, or after a batch was cut)
  // is paced too where it can be: a faster replica's GPU is then stepped where the slowest one's
  // is, whether the run went as a batch or one iteration at a time (and a joint plan need not
  // know where batches were cut: JointPlanner).
  TimeNs pace = 0;
  for (std::size_t i = 0; i < gang.replicas.size(); ++i) {
    pace = std::max(pace, at(gang.gpus[i]).rt->exec->sim().iter_time(gang.chosen[i].job));
  }
  bool in_phase = true, paceable = true;
  for (std::size_t i = 0; i < gang.replicas.size(); ++i) {
    if (at(gang.gpus[i]).rt->exec->sim().iter_time(gang.chosen[i].job) == pace) continue;
    in_phase = false;
    paceable = paceable && paceable_on(gang.gpus[i]);
  }
  const bool batch = !first && opts_.tuning.gang_batches && !gang.transfer && left > 1 && (in_phase || paceable);
  gang.transfer = false;
  if (batch) batches_.started(static_cast<std::int32_t>(&gang - gangs_.data()), t);
  for (std::size_t i = 0; i < gang.replicas.size(); ++i) {
    const std::int32_t g = gang.gpus[i];
    advance(g, t);  // brings its clock to t; nothing of it completes at t that was not taken yet
    Dispatch d = gang.chosen[i];
    d.iterations = batch ? left : 1;
    if (!first) d.extra_ns = 0;
    if (!first && !in_phase && paceable) {
      at(g).rt->exec->sim().start_paced(d, pace);
    } else {
      at(g).rt->exec->sim().start(d);
    }
  }
}

// Rounds of gang runs (an iteration, or a batch of them) that ended at t on every replica: go
// on, or end the run on every GPU.
void Cluster::resolve_gangs(TimeNs t) {
  while (!gang_iteration_ends_.empty()) {
    const std::int32_t k = gang_iteration_ends_.back();
    Gang& gang = gangs_[static_cast<std::size_t>(k)];
    gang_iteration_ends_.pop_back();
    gang.iterations += gang.round_done;
    result_.gang_iterations += gang.round_done;
    batches_.ended(k);
    if (!gang.cut && gang.iterations < gang.target) {
      start_sub_runs(gang, t);
      continue;
    }
    for (std::size_t i = 0; i < gang.replicas.size(); ++i) {
      const std::int32_t g = gang.gpus[i];
      advance(g, t);
      const Dispatch& d = gang.chosen[i];
      Completion c{d.job, d.lane, gang.iterations, gang.run_start[i], t, false, {}};
      c.switch_ns = gang.switch_ns[i];
      at(g).rt->completions.push_back(std::move(c));
      at(g).rt->exec->set_gang_lane(d.lane, core::kNoJob);
      gang.is_chosen[i] = 0;
    }
    gang.n_chosen = 0;
    gang.running = false;
    gang.cut = false;
    gang.iterations = 0;
  }
}

// ---- Joint and turn plans: cluster/joint_planner.h -----------------------------------------

// A batch beside other lanes (GangBatches, tuning.crowded_batches), at the instant it started,
// every replica's slowdown re-evaluated: lock-step goes as the batch does where every replica
// that runs beside another lane is the slowest (its period, at the slowdown its company gives
// it, the longest of the replicas'), unpaced, so that it runs without a gap and its company sees
// the same running set through every iteration; the other replicas, alone on their GPUs, are
// held to that period (paced) and end where it does. Should a replica's slowdown or pace change
// later (steady), the batch is cut.
bool Cluster::pace_crowded(std::int32_t k) {
  if (!opts_.tuning.crowded_batches || !opts_.tuning.pace_replicas || opts_.paging_bytes_per_s != 0) return false;
  const Gang& gang = gangs_[static_cast<std::size_t>(k)];
  TimeNs period = 0;
  for (std::size_t i = 0; i < gang.replicas.size(); ++i) {
    sim::SimExecutor& sim = at(gang.gpus[i]).rt->exec->sim();
    sim.next_completion_ns();  // the slowdowns at the end of the instant
    const sim::SimExecutor::RunShape r = sim.shape(gang.chosen[i].lane);
    if (!r.running || r.held || r.iterations < 2) return false;
    if (sim.running() > 1) {
      if (r.iter_ns != r.own_ns) return false;  // a paced replica beside others: unpadded, not steady
      period = std::max(period, r.period_ns);
    } else {
      period = std::max(period, r.own_ns);
    }
  }
  for (std::size_t i = 0; i < gang.replicas.size(); ++i) {
    sim::SimExecutor& sim = at(gang.gpus[i]).rt->exec->sim();
    const sim::SimExecutor::RunShape r = sim.shape(gang.chosen[i].lane);
    if (sim.running() > 1 && r.period_ns != period) return false;
  }
  for (std::size_t i = 0; i < gang.replicas.size(); ++i) {
    sim::SimExecutor& sim = at(gang.gpus[i]).rt->exec->sim();
    if (sim.running() == 1 && sim.shape(gang.chosen[i].lane).iter_ns != period) sim.pace(gang.chosen[i].lane, period);
  }
  ++result_.crowded_batches;
  return true;
}

bool Cluster::steady(std::int32_t k, TimeNs since) {
  const Gang& gang = gangs_[static_cast<std::size_t>(k)];
  for (std::size_t i = 0; i < gang.replicas.size(); ++i) {
    sim::SimExecutor& sim = at(gang.gpus[i]).rt->exec->sim();
    sim.next_completion_ns();
    const sim::SimExecutor::RunShape r = sim.shape(gang.chosen[i].lane);
    if (!r.running || r.held || r.sync_ns > since) return false;
  }
  return true;
}

// Ends every replica's batch with the iteration in flight at t. The replicas are in phase, so
// they end at one instant; the GPUs not stepped at t get their earlier end in the heap. A batch
// beside other lanes may be cut where its slowest replica's speed changed (its company came or
// left, and may change again before the iteration in flight ends): the paced replicas are made
// lock-step's at t (SimExecutor::unpad_at), each ending with its own work, or, that work done,
// taken out as ended, its lane held until the slowest replica's end.
void Cluster::cut_batch(std::int32_t k, TimeNs t, bool crowded) {
  const Gang& gang = gangs_[static_cast<std::size_t>(k)];
  for (std::size_t i = 0; i < gang.replicas.size(); ++i) {
    sim::SimExecutor& sim = at(gang.gpus[i]).rt->exec->sim();
    const core::LaneId lane = gang.chosen[i].lane;
    sim.stop_after_iteration_at(lane, t);
    if (!crowded) continue;
    sim.next_completion_ns();  // a run starting beside a paced replica at t unpads it first
    const sim::SimExecutor::RunShape r = sim.shape(lane);
    if (r.iter_ns <= r.own_ns) continue;
    ++result_.crowded_unpaced;
    if (const std::optional<Completion> c = sim.unpad_at(lane, t)) gang_sub_done(*c);
  }
  for (const std::int32_t g : gang.gpus) {
    if (!at(g).touched) reschedule(g, t);  // a touched GPU's next step is computed at the end of the instant
  }
}

// Whether GPU g admits now a 1-GPU job that waits in the cluster queue (checked per demand
// (P, E), FindLane being monotone in both; past kLookahead demands the answer is yes, which only
// cuts a batch or a plan that could have gone on). Batches (GangBatches::check) and plans
// (plan_deadline, where no gang job is queued) both ask it.
bool Cluster::admits_queued_job(std::int32_t g) {
  constexpr std::size_t kLookahead = 64;
  const core::Scheduler& sched = *at(g).rt->sched;
  if (queued_demands_.empty() || sched.pending() > 0) return false;  // nothing admitted while jobs are pending
  if (queued_demands_.size() > kLookahead) return true;
  for (const auto& [demand, count] : queued_demands_) {
    if (!sched.can_admit_now(demand.first, demand.second)) continue;
    if (queued_gangs_ == 0) return true;
    // Gang jobs of that demand do not count: none is placed on a GPU that hosts a gang.
    std::int64_t gangs = 0;
    for (const std::int32_t k : waiting_gangs_) {
      const JobSpec& s = jobs_[static_cast<std::size_t>(gangs_[static_cast<std::size_t>(k)].job)];
      gangs += s.persistent == demand.first && s.ephemeral == demand.second;
    }
    if (count > gangs) return true;
  }
  return false;
}

// Whether some gang job in the cluster queue has k GPUs that can start it now (try_place's test).
bool Cluster::queued_gang_placeable() {
  for (const std::int32_t k : waiting_gangs_) {
    Gang& gang = gangs_[static_cast<std::size_t>(k)];
    if (able_gpus(gang) >= static_cast<std::size_t>(jobs_[static_cast<std::size_t>(gang.job)].gpus)) return true;
  }
  return false;
}

// The GPUs that could take a replica of the gang's job now (no gang there, can_start), kept per
// gang while it waits and recounted only on the GPUs touched since (cluster/able_gpus.h): with 108
// GPUs and gang jobs waiting at millions of instants the full count was most of the run. A yes by
// joining a lane under a policy that orders newcomers (SRTF: on the lane jobs' remaining times
// at the instant) may turn no before the GPU is touched again: asked again at every count.
std::size_t Cluster::able_gpus(Gang& gang) {
  const JobIndex j = gang.job;
  return able_counter_.count(gang.able, touch_log_, instant_seq_, gpus_.size(), opts_.tuning.incremental_gang_queue,
                             [&](std::int32_t g) {
                               if (at(g).gang >= 0 || !shares_with_gangs(at(g), jobs_[static_cast<std::size_t>(j)])) {
                                 return Able::kNo;
                               }
                               const Start start = can_start(g, j);
                               if (start == Start::kNo) return Able::kNo;
                               return start == Start::kJoins && newcomer_ == core::Policy::Newcomer::kByOrder
                                          ? Able::kYesForNow
                                          : Able::kYes;
                             });
}

}  // namespace salus::cluster::model
