// A job's arrival, the cluster queue and the placement (cluster/README.md, "When a job is
// bound"; cluster_model.h).
#include "cluster/cluster_model.h"

namespace salus::cluster::model {

// ---- Arrival and placement ----------------------------------------------------------------

void Cluster::bind(JobIndex r, std::int32_t g, std::int64_t rank, TimeNs t, bool admit_now) {
  touch(g);
  if (second_pass_) rebound_.push_back(g);
  Gpu& gpu = at(g);
  if (admit_now) gpu.rt->sched->split_at_instant(t, true, scratch_);
  gpu.event = true;
  const JobIndex j = replicas_.owner(r);
  job_gpus_.add(static_cast<std::size_t>(j), g);
  gpu.rt->exec->speculation().note_bind(t);
  const std::int32_t gang = replicas_.gang(r);
  if (gang >= 0) {
    gpu.gang = gang;
    gangs_[static_cast<std::size_t>(gang)].gpus[static_cast<std::size_t>(replicas_.pos(r))] = g;
  }
  bind_count(g);
  if (opts_.queue == QueueDiscipline::kEasy) gpu.free_at = std::max(gpu.free_at, t + solo_on(j, gpu));
  gpu.rt->sched->arrive(r, rank);
  if (replicas_.state(r).status == JobStatus::kRejected) {
    unbind(g);
    ended_.push_back(r);
    return;
  }
  if (admit_now) gpu.rt->sched->admit_pending(t);
}

std::int64_t Cluster::able_gpus(Bytes need, std::uint64_t kinds) const {
  std::int64_t able = 0;
  for (const auto& [c, count] : gpus_of_class_) {
    if (std::get<0>(c) >= need && (std::get<1>(c) & kinds) != 0) able += count;
  }
  return able;
}

std::int32_t Cluster::fixed_gpu(JobIndex j) const {
  const JobSpec& s = jobs_[static_cast<std::size_t>(j)];
  // A job limited to some kinds always goes through the queue (its one able GPU need not be the
  // largest; none able: arrive rejects it).
  // Under strict and EASY, a job one GPU can hold queues as every other (bound at its arrival, it
  // would wait in that GPU's own queue and start there before the jobs ahead of it in the
  // cluster's); one none can hold still goes to the largest, which rejects it.
  if (s.gpus != 1 || kind_set_of(j) != 0) return -1;
  const std::int64_t able = able_gpus(aligned(s.persistent) + aligned(s.ephemeral), kAnyKind);
  // With exclusive gangs the one GPU may hold a gang: it goes through the queue too.
  if (able > 1 || (able == 1 && (opts_.queue != QueueDiscipline::kBackfill || opts_.gangs == GangMode::kExclusive))) return -1;
  // The one GPU that can hold it is the only one of the largest memory; when none can, the
  // lowest-numbered of the largest.
  return largest_gpu_;
}

// Where a plan must end by, on the binding rule (cluster/speculation.h says why it is exact).
TimeNs Cluster::plan_deadline(std::int32_t g) {
  if (gang_queue_blocks(g) || admits_queued_job(g)) return now_;
  return speculation_.stop(cursor_, g == largest_gpu_);
}

void Cluster::arrive(JobIndex j, std::int64_t rank, TimeNs t) {
  const JobSpec& s = jobs_[static_cast<std::size_t>(j)];
  rank_[static_cast<std::size_t>(j)] = static_cast<JobIndex>(rank);
  const Bytes need = aligned(s.persistent) + aligned(s.ephemeral);
  // GPUs that could ever hold a replica.
  const std::int64_t able = able_gpus(need, allowed_of(j));
  if (const std::int32_t target = fixed_gpu(j); target >= 0) {
    // No choice to defer: the one GPU that can hold it (or, when none can, the largest, whose
    // scheduler rejects it with its reason) takes it now, and it waits in that GPU's own queue.
    bind(add_replicas(j, rank), target, rank, t, false);
    return;
  }
  if (able < s.gpus) {
    const bool limited = kind_set_of(j) != 0;
    std::string reason = "needs " + std::to_string(s.gpus) + " GPUs" + (limited ? " of kind " + s.gpu_kinds() : "") +
                         " with P + E = " + core::format_size(s.persistent + s.ephemeral) + " free, the cluster has " +
                         std::to_string(able) + " that large";
    if (limited && allowed_of(j) == 0) {
      reason = "gpu_kinds '" + s.gpu_kinds() + "': the cluster has no GPU of those kinds (kinds: " + job_kinds_->names() + ")";
    }
    // No replica: the job's state is its outcome at once.
    JobState& st = result_.outcome.jobs[static_cast<std::size_t>(j)];
    st.status = JobStatus::kRejected;
    st.set_reason(std::move(reason));
    st.submit_rank = rank;
    return;
  }
  if (first_new_rank_ < 0) first_new_rank_ = rank;
  // Its replicas' submit rank is its arrival rank from now on (the policies' tie-break, and
  // Policy::starts_at_once compares it with the lane's jobs' while it waits here).
  const JobIndex r0 = add_replicas(j, rank);
  // The queue is visited in the policy's admission order (SRTF: least solo time first; priority:
  // highest first; the others: arrival order), as each GPU's own pending queue is. The class key
  // keeps gang jobs apart from 1-GPU jobs of the same P and E (the queue skips the rest of a class
  // once one of its jobs starts nowhere, which holds for equal demands because starts_at_once is
  // monotone in admission order).
  const std::int64_t key = probe_->admission_key(core::SchedulerView{t, replicas_.specs(), replicas_.states()}, r0);
  // (The class also keeps jobs of different allowed kinds apart.) The queue compares classes for
  // equality only: one number per (P, E, GPUs, allowed kinds) seen, no packing that could overflow.
  const auto cls = class_ids_.try_emplace({s.persistent, s.ephemeral, s.gpus, kind_set_of(j)},
                                          static_cast<std::int64_t>(class_ids_.size()));
  queue_.push(j, key, rank, cls.first->second, 0);
  ++queued_demands_[{s.persistent, s.ephemeral}];
  if (s.gpus > 1) {
    ++queued_gangs_;
    waiting_gangs_.push_back(replicas_.gang(r0));
  }
}

core::PendingQueue::Verdict Cluster::try_place(JobIndex j, TimeNs t) {
  const JobSpec& s = jobs_[static_cast<std::size_t>(j)];
  const std::int64_t rank = rank_[static_cast<std::size_t>(j)];
  loads_.clear();
  joins_.clear();
  // Under backfill a job refused at the last pass was refused by every GPU, and only the GPUs
  // changed since are asked again. Under strict and EASY a job may not have been asked at all
  // (behind the stop) or refused for the reservation only: every candidate is asked.
  const bool fresh = (rank >= first_new_rank_ && first_new_rank_ >= 0) || opts_.queue != QueueDiscipline::kBackfill;
  // Where it cannot start: the end of the pass (strict), or the reservation it makes as the first
  // such job (EASY), else its class waits (PendingQueue::Verdict::kBlocked).
  const auto blocked = [&] {
    if (opts_.queue == QueueDiscipline::kStrict) return core::PendingQueue::Verdict::kStop;
    if (opts_.queue == QueueDiscipline::kEasy && !reservation_.active) reserve(j);
    return core::PendingQueue::Verdict::kBlocked;
  };
  // Candidates where the job starts in a lane of its own (loads_) and where it joins a lane and
  // starts by its policy's turn (joins_): the placement chooses among the first while there are
  // any (nobody waits for it there), else among the second.
  auto consider = [&](std::int32_t g) {
    Gpu& gpu = at(g);
    if (s.gpus > 1 && gpu.gang >= 0) return;  // one gang job per GPU: gangs cannot hold each other
    if (!shares_with_gangs(gpu, s)) return;
    const Start start = can_start(g, j);
    if (start == Start::kNo) return;
    (start == Start::kNewLane ? loads_ : joins_)
        .push_back(GpuLoad{g, gpu.capacity, free_bytes(gpu), gpu.jobs, gpu.util_ppm});
  };
  if (s.gpus > 1) {
    // Too few GPUs can take it (the same test as consider's, counted incrementally): blocked. A
    // gang job tried for the first time is not counted (a count from scratch asks every GPU; most
    // gang jobs are placed at their first try): its count starts at its first refusal.
    Gang& gang = gang_of(slot_of_[static_cast<std::size_t>(j)]);
    if (gang.able.known && able_gpus(gang) < static_cast<std::size_t>(s.gpus)) return blocked();
    gather_candidates(j);
    for (const std::int32_t g : candidates_) consider(g);
  } else if (fresh) {
    // A job queued at this instant: the GPUs where it may get a lane of its own, in GPU order
    // (first-fit: up to the first where it does, unless a reservation may take it away).
    gather_candidates(j);
    for (const std::int32_t g : candidates_) {
      consider(g);
      if (first_candidate_ && !loads_.empty() && !reservation_.active) break;
    }
  } else {
    // A job that fitted nowhere at the last pass: only the GPUs changed since can take it.
    for (std::int32_t g : touched_) consider(g);
  }
  // Where it gets a lane of its own nowhere (a gang job: on fewer GPUs than it needs, or on GPUs
  // of several speeds, where keep_speed counts the GPUs it joins a lane on too), every GPU with
  // jobs is asked whether it would join one there, as are the idle GPUs gather_candidates gave.
  const bool gathered = s.gpus > 1 || fresh;
  const bool joins = newcomer_ != core::Policy::Newcomer::kWaits && opts_.sched.lane_mode != core::LaneMode::kExclusive;
  if (gathered && joins &&
      (s.gpus > 1 ? loads_.size() < static_cast<std::size_t>(s.gpus) || !uniform_speed_ : loads_.empty())) {
    loads_.clear();
    joins_.clear();
    std::size_t idle_at = 0;
    for (std::int32_t g = 0; g < static_cast<std::int32_t>(gpus_.size()); ++g) {
      if (at(g).bound > 0) {
        consider(g);
        continue;
      }
      // Of the idle GPUs, those gather_candidates gave (candidates_ is in GPU order).
      while (idle_at < candidates_.size() && candidates_[idle_at] < g) ++idle_at;
      if (idle_at < candidates_.size() && candidates_[idle_at] == g) consider(g);
    }
  }
  if (static_cast<std::int32_t>(loads_.size() + joins_.size()) < s.gpus) {
    // A gang job refused: its count starts now, so that its next tries ask only the GPUs touched
    // since (with too few, it is refused without a scan).
    if (s.gpus > 1) able_gpus(gang_of(slot_of_[static_cast<std::size_t>(j)]));
    return blocked();
  }
  if (reservation_.active && keep_reservation(j, t) && static_cast<std::int32_t>(loads_.size() + joins_.size()) < s.gpus) {
    return core::PendingQueue::Verdict::kPassOver;  // it could start, but not without delaying the reservation
  }
  const JobIndex r0 = slot_of_[static_cast<std::size_t>(j)];
  const std::int32_t k = replicas_.gang(r0);
  for (std::int32_t i = 0; i < s.gpus; ++i) {
    std::vector<GpuLoad>& from = loads_.empty() ? joins_ : loads_;
    const std::size_t c = placement_(s, from);
    SALUS_INVARIANT(c < from.size(), "placement chooses a candidate", opts_.placement);
    const std::int32_t g = from[c].gpu;
    from.erase(from.begin() + static_cast<std::ptrdiff_t>(c));
    bind(k >= 0 ? gangs_[static_cast<std::size_t>(k)].replicas[static_cast<std::size_t>(i)] : r0, g, rank, t, true);
    index_room(g);
    if (i == 0 && s.gpus > 1) keep_speed(j, speed_on(at(g), j), s.gpus - 1);
  }
  ++result_.placements;
  if (const auto it = queued_demands_.find({s.persistent, s.ephemeral}); --it->second == 0) queued_demands_.erase(it);
  if (k >= 0) {
    --queued_gangs_;
    gangs_[static_cast<std::size_t>(k)].able.forget();
    waiting_gangs_.erase(std::find(waiting_gangs_.begin(), waiting_gangs_.end(), k));
  }
  return core::PendingQueue::Verdict::kAdmitted;
}

// GPU g's entry in roomy_ brought up to date: the GPUs with jobs whose memory layout or queue may
// have changed since are those touched at this instant (a GPU changes only when stepped or bound).
void Cluster::index_room(std::int32_t g) {
  if (opts_.sched.lane_mode != core::LaneMode::kAuto) return;
  const Gpu& gpu = at(g);
  const Bytes room = gpu.bound == 0 || gpu.rt->sched->pending() > 0 ? -1 : gpu.rt->sched->free_bytes();
  if (room != roomy_.room(g)) roomy_.set(g, room);
}

// EASY: input job j cannot start at t. The GPUs that can ever hold it are ordered: first those
// that could take it now, then the others by when their replicas are expected to have ended
// (Gpu::free_at, which may be past: an estimate overrun), ties by GPU number; j's reservation is
// the first s.gpus of them, from the expected end of the last (a GPU free now: before any time).
// Neither depends on t, only on the GPUs' states. O(GPUs log GPUs), once per pass that has a job
// waiting.
void Cluster::reserve(JobIndex j) {
  const JobSpec& s = jobs_[static_cast<std::size_t>(j)];
  free_order_.clear();
  for (std::int32_t g = 0; g < static_cast<std::int32_t>(gpus_.size()); ++g) {
    const Gpu& gpu = at(g);
    if (!allowed(gpu, j) || !fresh_fits(gpu, s)) continue;  // it can never hold j
    const bool now = gpu.bound == 0 || ((s.gpus == 1 || gpu.gang < 0) && can_start(g, j) != Start::kNo);
    free_order_.emplace_back(now ? std::numeric_limits<TimeNs>::min() : gpu.free_at, g);
  }
  if (free_order_.size() < static_cast<std::size_t>(s.gpus)) return;  // arrive rejected such a job
  const auto k = static_cast<std::ptrdiff_t>(s.gpus);
  std::nth_element(free_order_.begin(), free_order_.begin() + (k - 1), free_order_.end());
  std::sort(free_order_.begin(), free_order_.begin() + k);
  reservation_.active = true;
  reservation_.at = free_order_[static_cast<std::size_t>(k - 1)].first;
  reservation_.gpus.clear();
  for (std::ptrdiff_t i = 0; i < k; ++i) reservation_.gpus.push_back(free_order_[static_cast<std::size_t>(i)].second);
  std::sort(reservation_.gpus.begin(), reservation_.gpus.end());
}

bool Cluster::keep_reservation(JobIndex j, TimeNs t) {
  const auto reserved_past = [&](const GpuLoad& c) {
    return std::binary_search(reservation_.gpus.begin(), reservation_.gpus.end(), c.gpu) &&
           t + solo_on(j, at(c.gpu)) > reservation_.at;
  };
  const std::size_t before = loads_.size() + joins_.size();
  std::erase_if(loads_, reserved_past);
  std::erase_if(joins_, reserved_past);
  return loads_.size() + joins_.size() < before;
}

// The GPUs that may start input job j in a lane of its own, in GPU order: those with jobs whose
// free memory holds its P + E (roomy_), and of each class of idle GPUs (interchangeable: every
// placement breaks ties by GPU number) the lowest-numbered k, k its GPUs. O(those GPUs), not
// O(GPUs): on a loaded cluster of whole-GPU jobs only the idle classes' first GPUs.
void Cluster::gather_candidates(JobIndex j) {
  const JobSpec& s = jobs_[static_cast<std::size_t>(j)];
  candidates_.clear();
  for (const auto& [c, set] : idle_) {
    std::int32_t n = 0;
    for (auto it = set.begin(); it != set.end() && n < s.gpus; ++it, ++n) candidates_.push_back(*it);
  }
  // A few idle GPUs, then the GPUs with room, already in GPU order: sort the first, merge.
  std::sort(candidates_.begin(), candidates_.end());
  const auto idle = static_cast<std::ptrdiff_t>(candidates_.size());
  roomy_.each_at_least(aligned(s.persistent) + aligned(s.ephemeral), [&](std::int32_t g) {
    candidates_.push_back(g);
    return true;
  });
  std::inplace_merge(candidates_.begin(), candidates_.begin() + idle, candidates_.end());
}

// The queue is tried on the GPUs touched at t (and, for a job queued at t, on the candidates).
// Where a job waits for its turn in no lane (PACK, FIFO: Policy::Newcomer::kWaits) a GPU's
// answers depend only on its memory layout, its own queue and whether it hosts a gang: when no job
// was queued at t and every GPU touched is as the last pass that judged it left it, every queued
// job would be refused again (each was refused by every GPU as it stands), and the pass is
// skipped. (A pass only fills GPUs, and the answers are monotone in what a GPU holds, so the
// state a pass leaves is one every job left in the queue was refused by.)
void Cluster::place(TimeNs t) {
  if (queue_.empty()) return;
  std::sort(touched_.begin(), touched_.end());
  for (const std::int32_t g : touched_) index_room(g);
  // Not under EASY: there a pass need not leave every queued job refused, which the skip assumes.
  // With lanes a GPU that could take the reserving job now is reserved even if its other jobs run
  // long; a job placed on it later in the pass (one that ends by the reservation) takes that room,
  // and the next pass, seeing the GPU busy until its jobs end, reserves others, which can free the
  // GPUs an earlier job was passed over for (PACK on a generated gang trace: job 568 passed over at
  // one instant, placed at the next with no GPU changed). So EASY decides at every instant.
  if (!second_pass_ && first_new_rank_ < 0 && newcomer_ == core::Policy::Newcomer::kWaits &&
      opts_.queue != QueueDiscipline::kEasy &&
      std::all_of(touched_.begin(), touched_.end(), [&](std::int32_t g) { return at(g).placed == placed_key(g); })) {
    return;
  }
  reservation_.active = false;
  queue_.process([&](JobIndex j) { return try_place(j, t); });
  reservation_.active = false;
  for (const std::int32_t g : touched_) at(g).placed = placed_key(g);
}

}  // namespace salus::cluster::model
