#include "core/scheduler.h"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <stdexcept>
#include <string>

#include "core/errors.h"
#include "core/huge_pages.h"
#include "core/pending_queue.h"

namespace salus::core {

const char* to_string(LaneMode m) {
  switch (m) {
    case LaneMode::kExclusive: return "exclusive";
    case LaneMode::kSingle: return "single";
    case LaneMode::kAuto: return "auto";
  }
  return "?";
}

const char* to_string(JobStatus s) {
  switch (s) {
    case JobStatus::kNotArrived: return "not_arrived";
    case JobStatus::kPending: return "pending";
    case JobStatus::kAdmitted: return "admitted";
    case JobStatus::kDone: return "done";
    case JobStatus::kRejected: return "rejected";
    case JobStatus::kFailed: return "failed";
    case JobStatus::kInterrupted: return "interrupted";
  }
  return "?";
}

std::int64_t JobState::ready_iterations(const JobSpec& spec, TimeNs now) const {
  if (spec.requests_ns().empty()) return remaining_iterations(spec);
  const auto next = spec.requests_ns().begin() + iterations_done;
  return std::upper_bound(next, spec.requests_ns().end(), now) - next;
}

namespace {

/// Scheduling state of one lane that the memory layout does not need to know.
struct LaneSchedule {
  std::vector<JobIndex> jobs;  // admitted, unfinished, in admission order
  JobIndex last_job = kNoJob;
  JobIndex running = kNoJob;
  bool cut = false;             // stop_at_boundary already requested for the current run
  bool needs_decision = false;  // a job joined (or was paged back in) since the current run started
  bool plan = false;            // the run in flight is a plan (Planning::start_plan)
  std::int32_t paged = 0;       // of its jobs, how many are paged out
};

/// Inference request gating, the one place that reads JobSpec::requests_ns: an inference job's
/// iteration i serves request i and may not start before it arrives. The gate says which jobs of a
/// lane have work ready, when the next request arrives (a deadline for the loop's wait), which
/// busy lanes must decide again because a request of another of their jobs arrived (as they would
/// had they been dispatched iteration by iteration), and records each served request's latency.
/// Training jobs pass through untouched, so a trace without inference jobs pays nothing.
class RequestGate {
 public:
  RequestGate(std::span<const JobSpec> specs, std::span<JobState> states) : specs_(specs), states_(states) {}
  void rebase(std::span<const JobSpec> specs, std::span<JobState> states) {
    specs_ = specs;
    states_ = states;
  }

  bool gates(JobIndex j) const { return !spec(j).requests_ns().empty(); }
  /// Whether some admitted, unfinished job is gated.
  bool any() const { return !jobs_.empty(); }
  void add(JobIndex j) {
    if (gates(j)) jobs_.push_back(j);
  }
  void remove(JobIndex j) {
    if (gates(j)) jobs_.erase(std::find(jobs_.begin(), jobs_.end(), j));
  }

  /// Iterations a dispatch may run: one for an inference job (each request's end is then known).
  std::int64_t run_length(JobIndex j, std::int64_t wanted) const { return gates(j) ? 1 : wanted; }

  /// A run of job j ended with `iterations` done (before JobState::iterations_done counts them).
  void served(JobIndex j, std::int64_t iterations, TimeNs end_ns) {
    if (!gates(j) || iterations == 0) return;
    SALUS_INVARIANT(iterations == 1, "an inference run serves one request", spec(j).id);
    JobState& st = states_[static_cast<std::size_t>(j)];
    st.add_request_latency(end_ns - spec(j).requests_ns()[static_cast<std::size_t>(st.iterations_done)]);
  }

  /// The lane's jobs with work ready at `now`; the lane's own list when no job is gated.
  std::span<const JobIndex> ready(std::span<const JobIndex> lane_jobs, TimeNs now) {
    if (jobs_.empty()) return lane_jobs;
    scratch_.clear();
    for (JobIndex j : lane_jobs) {
      if (state(j).ready_iterations(spec(j), now) > 0) scratch_.push_back(j);
    }
    return scratch_;
  }

  /// The earliest request still to arrive for an admitted inference job that waits for one.
  TimeNs next_request(TimeNs now) const {
    TimeNs t = kNever;
    for (JobIndex j : jobs_) {
      const JobState& st = state(j);
      if (st.running) continue;  // unfinished: finish() drops a job from the gate
      const TimeNs r = spec(j).requests_ns()[static_cast<std::size_t>(st.iterations_done)];
      if (r > now) t = std::min(t, r);
    }
    return t;
  }

  /// Calls cut(lane) for each lane of an idle inference job whose request has arrived.
  template <typename Cut>
  void recheck(TimeNs now, Cut&& cut) const {
    for (JobIndex j : jobs_) {
      const JobState& st = state(j);
      if (!st.running && st.ready_iterations(spec(j), now) > 0) cut(st.lane);
    }
  }

 private:
  const JobSpec& spec(JobIndex j) const { return specs_[static_cast<std::size_t>(j)]; }
  const JobState& state(JobIndex j) const { return states_[static_cast<std::size_t>(j)]; }

  std::span<const JobSpec> specs_;
  std::span<JobState> states_;
  std::vector<JobIndex> jobs_;  // admitted, unfinished jobs with request streams
  std::vector<JobIndex> scratch_;
};

}  // namespace

class Loop {
  friend class Scheduler;

 public:
  /// `states`: one per spec, where job progress is kept; empty: the loop keeps its own (out_.jobs).
  Loop(std::span<const JobSpec> specs, Policy& policy, Executor& exec, const SchedulerOptions& opts,
       std::span<JobState> states = {})
      : specs_(specs),
        policy_(policy),
        exec_(exec),
        opts_(opts),
        lanes_(opts.capacity, opts.lane_mode == LaneMode::kAuto ? opts.max_lanes : 1, opts.lane_shrink, opts.alignment),
        requests_(specs, {}) {
    if (states.empty()) {
      // 136 bytes a job, written whole here: huge pages spare tens of thousands of page faults
      // on a 200k-job trace (core/huge_pages.h; traces/ does the same for the trace).
      out_.jobs.reserve(specs.size());
      advise_huge_pages(out_.jobs.data(), out_.jobs.capacity() * sizeof(JobState));
      out_.jobs.resize(specs.size());
      states = out_.jobs;
    }
    states_ = states;
    requests_ = RequestGate(specs_, states_);
    policy_.begin(specs_);
  }

  ScheduleOutcome run() {
    const std::size_t n = specs_.size();
    // Arrival order. Traces usually come in it: then a check, and no array of every job.
    std::vector<JobIndex> sorted;
    auto earlier = [&](JobIndex a, JobIndex b) { return arrives_before(spec(a), spec(b)); };
    bool in_order = true;
    for (std::size_t k = 1; k < n && in_order; ++k) {
      in_order = !earlier(static_cast<JobIndex>(k), static_cast<JobIndex>(k - 1));
    }
    if (!in_order) {
      sorted.resize(n);
      std::iota(sorted.begin(), sorted.end(), 0);
      std::stable_sort(sorted.begin(), sorted.end(), earlier);
    }
    auto order = [&](std::size_t k) { return in_order ? static_cast<JobIndex>(k) : sorted[k]; };
    std::size_t cursor = 0;
    std::vector<Completion> completions;
    while (true) {
      const TimeNs now = exec_.now();
      bool event = take_completions(completions);
      for (; cursor < n && spec(order(cursor)).arrival_ns <= now; ++cursor) {
        arrive(order(cursor), static_cast<std::int64_t>(cursor));
        event = true;
      }
      split_at_instant(now, event, completions);
      if (terminal_ == n) break;
      if (!out_.fatal_error.empty() || (opts_.stop != nullptr && opts_.stop->load())) {
        if (busy_lanes_ == 0) {
          interrupt_unfinished();
          break;
        }
        for (const Lane& l : lanes_.lanes()) {
          if (l.busy) cut_at_boundary(l.id);
        }
        exec_.wait(kNever, completions);
        continue;
      }
      next_arrival_ = cursor < n ? spec(order(cursor)).arrival_ns : kNever;
      schedule(now, event);
      const TimeNs deadline = std::min(cursor < n ? spec(order(cursor)).arrival_ns : kNever, requests_.next_request(now));
      SALUS_INVARIANT(busy_lanes_ > 0 || deadline != kNever, "progress: something runs or arrives",
                      std::to_string(pending_.size()) + " pending, " + std::to_string(admitted_) + " admitted, " +
                          describe_lanes());
      exec_.wait(deadline, completions);
      ++out_.steps;
      if (opts_.progress && out_.steps % opts_.progress_every == 0) opts_.progress(Progress{exec_.now(), out_.steps, states_});
    }
    out_.end_ns = exec_.now();
    if (opts_.record_timeline) sample_memory(out_.end_ns);
    return std::move(out_);
  }

  // ---- The loop body, one method per part, for Scheduler (a cluster steps one per GPU) ------

  /// Takes the completions of this instant (clears them). Returns true when one finished a job.
  bool take_completions(std::vector<Completion>& completions) {
    bool event = false;
    for (const Completion& c : completions) event |= on_completion(c);
    completions.clear();
    return event;
  }

  /// Admission looks at the layout of this instant: a lane waiting to move whose run is at an
  /// iteration boundary now stops there first, as it would had it been dispatched one
  /// iteration at a time, so batching never changes an admission.
  void split_at_instant(TimeNs now, bool event, std::vector<Completion>& completions) {
    while (event && split_runs_at_boundaries()) {
      exec_.wait(now, completions);
      for (const Completion& c : completions) on_completion(c);
      completions.clear();
    }
  }

  /// Where the loop's next wait ends at the latest (kNever: only a completion can wake it).
  TimeNs next_request(TimeNs now) const { return requests_.next_request(now); }

  /// True when a job of P and E would be admitted now (admit_kind is not kNo). The cluster's
  /// placement asks it of every GPU.
  bool can_admit_now(Bytes persistent, Bytes ephemeral) const {
    return admit_kind(persistent, ephemeral) != Scheduler::AdmitKind::kNo;
  }

  /// can_admit_now, and whether into a lane of its own. Exactly process_requests' answer for a
  /// job first in the queue: LaneManager::place is admit() without the change.
  Scheduler::AdmitKind admit_kind(Bytes persistent, Bytes ephemeral) const {
    using Kind = Scheduler::AdmitKind;
    if (!pending_.empty() || !lanes_.fits_alone(persistent, ephemeral)) return Kind::kNo;
    if (opts_.lane_mode == LaneMode::kExclusive) return admitted_ == 0 ? Kind::kNewLane : Kind::kNo;
    // Every case of FindLane needs sum P + P + sum L <= C: a cheap refusal first.
    if (lanes_.persistent_bytes() + lanes_.aligned(persistent) + lanes_.lanes_bytes() > lanes_.capacity()) return Kind::kNo;
    switch (lanes_.place(persistent, ephemeral).choice) {
      case LaneChoice::kNotFound: return Kind::kNo;
      case LaneChoice::kNewLane: return Kind::kNewLane;
      default: return Kind::kExistingLane;
    }
  }

  bool starts_at_once(JobIndex job, TimeNs now) const {
    const JobSpec& s = spec(job);
    const FindLaneResult r = lanes_.find_lane(s.persistent, s.ephemeral);
    SALUS_INVARIANT(r.choice == LaneChoice::kExistingLane || r.choice == LaneChoice::kGrownLane,
                    "starts_at_once is asked of a job joining a lane", s.id);
    const LaneSchedule& ls = sched_of(r.lane);
    // The lane decides next at its run's next boundary: the job running there is judged on what
    // it has left then (SRTF), where the executor can tell; a held lane starts no newcomer.
    std::int64_t done = Planning::kUnknownBoundary;
    if (ls.running != kNoJob) {
      done = planning_ != nullptr ? planning_->iterations_by_next_boundary(r.lane, now) : Planning::kUnknownBoundary;
      if (done == Planning::kHeldLane) return false;
    }
    if (policy_.newcomer() == Policy::Newcomer::kTakesTurn) return true;
    if (done <= 0) return policy_.starts_at_once(view(now), snapshot(r.lane, ls), job);
    // The running job's state as of that boundary, for the one question (put back after it). One
    // that finishes there counts with nothing left (SRTF: it comes first): so the answer only
    // turns from yes to no while the GPU takes no step, and a GPU not stepped since it refused a
    // job need not be asked again.
    JobState& st = states_[static_cast<std::size_t>(ls.running)];
    const std::int64_t before = st.iterations_done;
    st.iterations_done = std::min(spec(ls.running).iterations, before + done);
    const bool starts = policy_.starts_at_once(view(now), snapshot(r.lane, ls), job);
    st.iterations_done = before;
    return starts;
  }

  /// ProcessRequests now (the cluster, after binding a job to this GPU, so that the next
  /// placement sees the GPU's memory with it admitted).
  void rebase(std::span<const JobSpec> specs, std::span<JobState> states) {
    SALUS_INVARIANT(specs.size() == states.size() && specs.size() >= specs_.size(),
                    "a rebase keeps every job and gives one state per job", std::to_string(specs.size()));
    specs_ = specs;
    states_ = states;
    requests_.rebase(specs, states);
  }

  void admit_pending(TimeNs now) {
    if (!pending_.empty()) process_requests(now);
  }

  std::int64_t admitted_count() const { return admitted_; }
  std::size_t pending_count() const { return pending_.size(); }
  std::int64_t busy_lanes() const { return busy_lanes_; }
  const LaneManager& lanes() const { return lanes_; }
  ScheduleOutcome& outcome() { return out_; }

  void schedule(TimeNs now, bool event) { schedule_lanes(now, event); }

  /// The run ended at t (run()'s last lines).
  void end_at(TimeNs t) {
    out_.end_ns = t;
    if (opts_.record_timeline) sample_memory(out_.end_ns);
  }

 private:
  const JobSpec& spec(JobIndex j) const { return specs_[static_cast<std::size_t>(j)]; }
  JobState& state(JobIndex j) { return states_[static_cast<std::size_t>(j)]; }
  /// The lane's schedule. Lane ids are never reused (PACK opens a lane per job or so: 156k on
  /// the 200k-job native trace), so schedules live in slots that a lane takes when it first
  /// appears and gives back when it is gone (finish), few as the lanes alive at once.
  LaneSchedule& sched(LaneId id) {
    std::size_t slot = lane_sched_.size();
    for (std::size_t k = 0; k < lane_sched_.size(); ++k) {
      if (lane_ids_[k] == id) return lane_sched_[k];
      if (lane_ids_[k] == kNoLane && slot == lane_sched_.size()) slot = k;
    }
    if (slot == lane_sched_.size()) {
      lane_sched_.emplace_back();
      lane_ids_.push_back(kNoLane);
    }
    lane_ids_[slot] = id;
    lane_sched_[slot] = LaneSchedule{};
    return lane_sched_[slot];
  }
  const LaneSchedule& sched_of(LaneId id) const {
    for (std::size_t k = 0; k < lane_sched_.size(); ++k) {
      if (lane_ids_[k] == id) return lane_sched_[k];
    }
    SALUS_INVARIANT(false, "a live lane has a schedule", "lane " + std::to_string(id));
    return lane_sched_.front();
  }

  SchedulerView view(TimeNs now) const { return SchedulerView{now, specs_, states_}; }
  LaneSnapshot snapshot(LaneId id, const LaneSchedule& ls) const {
    return LaneSnapshot{id, ls.jobs, ls.last_job, ls.running};
  }

  /// Marks every unfinished job interrupted (the stop flag) or, when the device was lost, failed.
  void interrupt_unfinished() {
    const bool lost = !out_.fatal_error.empty();
    for (JobState& st : states_) {
      if (st.status == JobStatus::kDone || st.status == JobStatus::kRejected || st.status == JobStatus::kFailed) continue;
      st.status = lost ? JobStatus::kFailed : JobStatus::kInterrupted;
      st.set_reason(lost ? "not run to the end: the device was lost (" + out_.fatal_error + ")"
                         : "the run was interrupted before the job finished");
    }
  }

  /// Only lanes waiting to move matter: their position bounds the persistent region.
  bool split_runs_at_boundaries() {
    if (!lanes_.unsettled()) return false;
    bool any = false;
    for (const Lane& l : lanes_.lanes()) {
      if (l.busy && !lanes_.ready(l.id) && planning_ != nullptr && planning_->end_if_at_boundary(l.id)) any = true;
    }
    return any;
  }

  /// LaneManager::settle, counting a change of the layout.
  int settle(TimeNs now, std::vector<LaneMove>* log) {
    ++layout_version_;
    return lanes_.settle(now, log);
  }

  /// Asks the lane's run to end at its next iteration boundary (once per run).
  void cut_at_boundary(LaneId id) {
    LaneSchedule& ls = sched(id);
    if (ls.cut) return;
    exec_.stop_at_boundary(id);
    ls.cut = true;
  }

  void check_invariants() const {
    lanes_.check_invariants();
    for (const Lane& l : lanes_.lanes()) {
      const LaneSchedule& ls = sched_of(l.id);
      SALUS_INVARIANT(static_cast<std::int32_t>(ls.jobs.size()) == l.refs, "lane references match its jobs",
                      "lane " + std::to_string(l.id));
      Bytes largest = 0;
      for (JobIndex j : ls.jobs) {
        const Bytes e = lanes_.aligned(spec(j).ephemeral);
        SALUS_INVARIANT(e <= l.size, "lane size L_j >= E of each of its jobs",
                        "lane " + std::to_string(l.id) + ", job " + spec(j).id);
        largest = std::max(largest, e);
      }
      // Jobs that finished leave their lane at once, so with shrinking L_j is exactly the max.
      SALUS_INVARIANT(!opts_.lane_shrink || largest == l.size, "lane size L_j = max E over its jobs",
                      "lane " + std::to_string(l.id));
    }
  }

  std::string describe_lanes() const {
    std::string d = "persistent " + std::to_string(lanes_.persistent_bytes()) + ", lanes:";
    for (const Lane& l : lanes_.lanes()) {
      d += " [id " + std::to_string(l.id) + " size " + std::to_string(l.size) + " at " + std::to_string(l.offset) +
           "/" + std::to_string(l.placed_size) + " target " + std::to_string(lanes_.target_offset(l.id)) +
           (l.busy ? " busy" : "") + " refs " + std::to_string(l.refs) + "]";
    }
    return d;
  }

  void arrive(JobIndex j, std::int64_t rank) {
    const JobSpec& s = spec(j);
    JobState& st = state(j);
    st.submit_rank = rank;
    if (!lanes_.fits_alone(s.persistent, s.ephemeral)) {
      st.status = JobStatus::kRejected;
      std::string why = "needs P + E = " + format_size(s.persistent) + " + " + format_size(s.ephemeral) + " = " +
                        format_size(s.persistent + s.ephemeral) + ", more than the GPU's " + format_size(opts_.capacity);
      if (s.persistent + s.ephemeral <= opts_.capacity) {
        why += " once P and E are rounded up and C down to whole " + std::to_string(opts_.alignment) + "-byte units";
      }
      st.set_reason(std::move(why));
      ++terminal_;
      return;
    }
    st.status = JobStatus::kPending;
    pending_.push(j, policy_.admission_key(view(spec(j).arrival_ns), j), rank, s.persistent, s.ephemeral);
  }

  /// Returns true when the completion finished a job (an Algorithm 1 JobFinish event).
  bool on_completion(const Completion& c) {
    if (c.plan) return on_plan_completion(c);
    JobState& st = state(c.job);
    LaneSchedule& ls = sched(c.lane);
    SALUS_INVARIANT(st.running && ls.running == c.job && st.lane == c.lane, "completion matches a dispatched run",
                    "job " + std::to_string(c.job) + " lane " + std::to_string(c.lane));
    SALUS_INVARIANT(c.iterations_done >= 0 && st.iterations_done + c.iterations_done <= spec(c.job).iterations,
                    "completed iterations within the job", spec(c.job).id);
    requests_.served(c.job, c.iterations_done, c.end_ns);
    st.iterations_done += c.iterations_done;
    st.gpu_time_ns += c.end_ns - c.start_ns;
    st.running = false;
    out_.iterations += c.iterations_done;
    ls.running = kNoJob;
    ls.cut = false;
    lanes_.set_busy(c.lane, false);
    --busy_lanes_;
    ephemeral_active_ -= lanes_.aligned(spec(c.job).ephemeral);
    if (opts_.record_timeline && opts_.record_segments && (c.iterations_done > 0 || c.end_ns > c.start_ns)) {
      keep_rows(c.end_ns);
      out_.segments.push_back(Segment{c.lane, c.job, c.start_ns, c.end_ns, c.iterations_done, c.switch_ns});
    }
    policy_.on_iterations_done(view(c.end_ns), RunReport{c.job, c.lane, c.iterations_done, c.start_ns, c.end_ns});
    if (c.failed || c.fatal) {
      st.status = JobStatus::kFailed;
      st.set_reason(c.error.empty() ? "failed" : c.error);
      if (c.fatal && out_.fatal_error.empty()) out_.fatal_error = st.reason();
      finish(c.job, c.end_ns);
      return true;
    }
    if (st.iterations_done == spec(c.job).iterations) {
      st.status = JobStatus::kDone;
      finish(c.job, c.end_ns);
      return true;
    }
    if (std::find(withdrawing_.begin(), withdrawing_.end(), c.job) != withdrawing_.end()) {
      st.status = JobStatus::kInterrupted;  // finish() drops it from withdrawing_
      finish(c.job, c.end_ns);
      return true;
    }
    return false;
  }

  /// Scheduler::withdraw.
  void withdraw(JobIndex j, TimeNs now) {
    JobState& st = state(j);
    SALUS_INVARIANT(st.status == JobStatus::kPending || st.status == JobStatus::kAdmitted,
                    "a job withdrawn is pending or admitted", spec(j).id);
    SALUS_INVARIANT(!st.paged_out, "a job withdrawn is resident (no paging with withdrawals)", spec(j).id);
    if (st.status == JobStatus::kPending) {
      const bool queued = pending_.remove(j, spec(j).persistent, spec(j).ephemeral);
      SALUS_INVARIANT(queued, "a pending job is in the queue", spec(j).id);
      st.status = JobStatus::kInterrupted;
      st.finish_ns = now;
      ++terminal_;
      return;
    }
    if (!st.running) {
      st.status = JobStatus::kInterrupted;
      finish(j, now);
      return;
    }
    SALUS_INVARIANT(!sched(st.lane).plan, "a job withdrawn runs no plan", spec(j).id);
    if (std::find(withdrawing_.begin(), withdrawing_.end(), j) == withdrawing_.end()) withdrawing_.push_back(j);
    cut_at_boundary(st.lane);
  }

  void finish(JobIndex j, TimeNs t) {
    JobState& st = state(j);
    st.finish_ns = t;
    if (!withdrawing_.empty()) std::erase(withdrawing_, j);  // withdrawn but done first: its index may be given again
    LaneSchedule& ls = sched(st.lane);
    ls.jobs.erase(std::find(ls.jobs.begin(), ls.jobs.end(), j));
    requests_.remove(j);
    // With lane shrinking the lane may shrink here; it takes its smaller region at settle().
    lanes_.release(st.lane, spec(j).persistent, st.persistent_offset, spec(j).ephemeral);
    ++layout_version_;
    policy_.on_finish(view(t), j, st.lane);
    const bool lane_gone = ls.jobs.empty();
    if (ls.last_job == j && !lane_gone) {
      ls.last_job = kEndedJob;
      if (planning_ != nullptr) planning_->last_job_ended(st.lane);
    }
    if (lane_gone) {  // the lane is gone (Algorithm 1: ref == 0): its slot is free
      ls = LaneSchedule{};
      for (std::size_t k = 0; k < lane_ids_.size(); ++k) {
        if (lane_ids_[k] == st.lane) lane_ids_[k] = kNoLane;
      }
    }
    exec_.release(j);
    if (lane_gone) exec_.lane_closed(st.lane);
    --admitted_;
    ++terminal_;
  }

  /// Lane moves and ProcessRequests at this instant (schedule_lanes' first half).
  void settle_lanes(TimeNs now, bool event) {
    std::vector<LaneMove>* log = opts_.record_timeline ? &out_.lane_moves : nullptr;
    const std::size_t moves = out_.lane_moves.size();
    const bool moved = lanes_.unsettled() && settle(now, log) > 0;
    if (event || moved) {
      // ProcessRequests, and again after every lane move (Algorithm 1 LaneMoved).
      while (process_requests(now) >= 0 && lanes_.unsettled() && settle(now, log) > 0) {
      }
      // Memory changes only at these events, so this is where the safety condition is checked,
      // once per change of the layout (an arrival that stays pending changes nothing).
      if (opts_.check_invariants && checked_layout_ != layout_version_) {
        check_invariants();
        checked_layout_ = layout_version_;
      }
    }
    if (out_.lane_moves.size() > moves) keep_rows(now, static_cast<std::int64_t>(out_.lane_moves.size() - moves));
  }

  /// Scheduler::settle: the first half now, remembered so that schedule(now) does not do it again
  /// while nothing changed in between.
  void settle_only(TimeNs now, bool event) {
    settle_lanes(now, event);
    settled_at_ = now;
    settled_layout_ = layout_version_;
    settled_pending_ = pending_.size();
  }

  void schedule_lanes(TimeNs now, bool event) {
    const bool settled = settled_at_ == now && settled_layout_ == layout_version_ && settled_pending_ == pending_.size();
    settled_at_ = -1;
    if (!settled) settle_lanes(now, event);
    requests_.recheck(now, [&](LaneId id) {
      if (sched(id).running != kNoJob) cut_at_boundary(id);
    });
    const bool all_ready = !lanes_.unsettled();
    for (const Lane& l : lanes_.lanes()) {
      LaneSchedule& ls = sched(l.id);
      const bool ready = all_ready || lanes_.ready(l.id);
      if (l.busy) {
        if (ls.needs_decision || !ready) cut_at_boundary(l.id);
        continue;
      }
      if (ready) dispatch(now, l, ls);
    }
    out_.max_concurrent_lanes = std::max<std::int64_t>(out_.max_concurrent_lanes, static_cast<std::int64_t>(lanes_.lanes().size()));
    if (opts_.record_timeline) sample_memory(now);
  }

  /// Algorithm 1 ProcessRequests; with paging, then paged-out jobs come back where memory allows
  /// (after the queue, so that a job is not paged in and out again at one instant). Returns the
  /// number of jobs admitted or paged in.
  int process_requests(TimeNs now) {
    int changed = 0;
    if (!pending_.empty()) {
      const bool exclusive = opts_.lane_mode == LaneMode::kExclusive;
      changed = pending_.process([&](JobIndex j) {
        if (exclusive && admitted_ > 0) return PendingQueue::Verdict::kStop;
        const JobSpec& s = spec(j);
        // Every case of FindLane needs sum P + P + sum L <= C: refused here without a search
        // (PACK's backlog tries every class of the queue at every event). Paging may make room.
        if (!paging_ && lanes_.persistent_bytes() + lanes_.aligned(s.persistent) + lanes_.lanes_bytes() > lanes_.capacity()) {
          return PendingQueue::Verdict::kBlocked;
        }
        FindLaneResult r = lanes_.admit(s.persistent, s.ephemeral);
        if (r.choice == LaneChoice::kNotFound && paging_) r = admit_by_paging(j, now);
        if (r.choice == LaneChoice::kNotFound) return PendingQueue::Verdict::kBlocked;
        admit(j, r, now);
        return PendingQueue::Verdict::kAdmitted;
      });
    }
    if (!paged_.empty()) changed += page_in(now);
    return changed;
  }

  // ---- Paging, the paper's failsafe (SchedulerOptions::paging) ----------------------------
  // A job's priority is the policy's admission key evaluated now (SRTF: remaining solo time).

  /// Pages out paused, resident jobs of lower priority than j (lowest first; among equals the
  /// latest arrival first) until j is admitted. If j still does not fit with all of them out,
  /// nothing is paged (their blocks go back where they were).
  FindLaneResult admit_by_paging(JobIndex j, TimeNs now) {
    const SchedulerView v = view(now);
    const std::int64_t key = policy_.admission_key(v, j);
    std::vector<std::pair<std::int64_t, JobIndex>> victims;  // (key, job)
    for (const Lane& l : lanes_.lanes()) {
      for (JobIndex k : sched(l.id).jobs) {
        const JobState& st = state(k);
        if (st.running || st.paged_out || spec(k).persistent == 0 || requests_.gates(k)) continue;
        const std::int64_t kk = policy_.admission_key(v, k);
        if (kk > key) victims.emplace_back(kk, k);
      }
    }
    std::sort(victims.begin(), victims.end(), [&](const auto& a, const auto& b) {
      return a.first != b.first ? a.first > b.first : state(a.second).submit_rank > state(b.second).submit_rank;
    });
    FindLaneResult r;
    std::size_t out = 0;
    ++layout_version_;  // pages out (and back in, when j still does not fit)
    while (out < victims.size()) {
      const JobIndex k = victims[out++].second;
      lanes_.page_out(spec(k).persistent, state(k).persistent_offset);
      r = lanes_.admit(spec(j).persistent, spec(j).ephemeral);
      if (r.choice != LaneChoice::kNotFound) break;
    }
    if (r.choice == LaneChoice::kNotFound) {
      for (std::size_t i = out; i-- > 0;) {
        const JobIndex k = victims[i].second;
        lanes_.page_in(spec(k).persistent, state(k).persistent_offset);
      }
      return r;
    }
    for (std::size_t i = 0; i < out; ++i) {
      const JobIndex k = victims[i].second;
      JobState& st = state(k);
      st.paged_out = true;
      st.persistent_offset = kUnplaced;
      ++sched(st.lane).paged;
      paged_.push_back(k);
      ++out_.page_outs;
      exec_.page_out(k, st.lane);
    }
    return r;
  }

  /// Pages paged-out jobs back in, highest priority first, each that fits (a smaller one may fit
  /// where a larger one does not). In the one lane this always makes progress: with nothing
  /// resident, the job whose E sets the lane's size fits, as it did when admitted. Returns how many.
  int page_in(TimeNs now) {
    const SchedulerView v = view(now);
    std::vector<std::pair<std::int64_t, JobIndex>> order;
    for (JobIndex k : paged_) order.emplace_back(policy_.admission_key(v, k), k);
    std::sort(order.begin(), order.end(), [&](const auto& a, const auto& b) {
      return a.first != b.first ? a.first < b.first : state(a.second).submit_rank < state(b.second).submit_rank;
    });
    int back = 0;
    for (const auto& [key, k] : order) {
      (void)key;
      const Bytes offset = lanes_.page_in(spec(k).persistent);
      if (offset == kUnplaced) continue;
      ++layout_version_;
      JobState& st = state(k);
      st.paged_out = false;
      st.persistent_offset = offset;
      LaneSchedule& ls = sched(st.lane);
      --ls.paged;
      ls.needs_decision = true;
      paged_.erase(std::find(paged_.begin(), paged_.end(), k));
      ++out_.page_ins;
      exec_.page_in(k, st.lane, offset);
      ++back;
    }
    return back;
  }

  void admit(JobIndex j, const FindLaneResult& r, TimeNs now) {
    ++layout_version_;  // LaneManager::admit placed it
    JobState& st = state(j);
    st.status = JobStatus::kAdmitted;
    st.lane = r.lane;
    st.admit_seq = next_admit_seq_++;
    st.admitted_ns = now;
    st.persistent_offset = r.persistent_offset;
    LaneSchedule& ls = sched(r.lane);
    ls.jobs.push_back(j);
    requests_.add(j);
    ls.needs_decision = true;
    policy_.on_admit(view(now), j);
    policy_.on_join(view(now), snapshot(r.lane, ls), j);
    switch (r.choice) {
      case LaneChoice::kNewLane: ++out_.admissions_new_lane; ++out_.lanes_opened; break;
      case LaneChoice::kExistingLane: ++out_.admissions_existing_lane; break;
      case LaneChoice::kGrownLane: ++out_.admissions_grown_lane; break;
      case LaneChoice::kNotFound: break;
    }
    ++admitted_;
    exec_.admit(j, spec(j), r.persistent_offset);
  }

  void dispatch(TimeNs now, const Lane& lane, LaneSchedule& ls) {
    if (ls.jobs.empty()) return;
    // The policy chooses among jobs with work ready: inference jobs wait for their requests,
    // paged-out jobs for their memory.
    std::span<const JobIndex> choices = requests_.ready(ls.jobs, now);
    if (ls.paged > 0) {
      resident_scratch_.clear();
      for (JobIndex j : choices) {
        if (!state(j).paged_out) resident_scratch_.push_back(j);
      }
      choices = resident_scratch_;
    }
    if (choices.empty()) return;
    if (plans_ && try_plan(now, lane, ls, choices)) return;
    const Decision d = policy_.choose(view(now), LaneSnapshot{lane.id, choices, ls.last_job, kNoJob});
    SALUS_INVARIANT(d.job >= 0 && static_cast<std::size_t>(d.job) < specs_.size() && state(d.job).lane == lane.id &&
                        state(d.job).status == JobStatus::kAdmitted,
                    "policy chooses an admitted job of the lane", std::string(policy_.name()));
    SALUS_INVARIANT(d.max_iterations >= 1, "policy runs at least one iteration", std::string(policy_.name()));
    JobState& st = state(d.job);
    const bool switched = ls.last_job != kNoJob && ls.last_job != d.job;
    Dispatch run;
    run.job = d.job;
    run.lane = lane.id;
    run.iterations = requests_.run_length(d.job, std::min(d.max_iterations, st.remaining_iterations(spec(d.job))));
    // The switching cost is the executor's (it knows the lane's last job too).
    run.extra_ns = st.iterations_done == 0 ? spec(d.job).first_iter_extra_ns : 0;
    run.lane_offset = lane.offset;
    run.lane_size = lane.size;
    lanes_.set_busy(lane.id, true);
    ++busy_lanes_;
    ephemeral_active_ += lanes_.aligned(spec(d.job).ephemeral);
    st.running = true;
    if (st.first_start_ns < 0) st.first_start_ns = now;
    ls.running = d.job;
    ls.last_job = d.job;
    ls.needs_decision = false;
    ls.cut = false;
    ++out_.dispatches;
    if (switched) ++out_.switches;
    exec_.start(run);
  }

  // ---- Plans: a lane's rotation run in one go (Policy::plan, Planning::start_plan) ----------
  // Only where nothing else can happen until the plan ends: the lane is the only one and idle,
  // no job is gated or paged, and the plan ends at or before the next arrival or with the first
  // finish. Its iterations are then exactly those the policy would choose run by run, and the
  // executor times them exactly as runs dispatched one by one (a lane alone runs at solo speed).
  // A run that records a timeline plans only with timeline_plans: each plan is then one rotation
  // in the timeline (a Segment per job) and one memory sample.

  bool try_plan(TimeNs now, const Lane& lane, LaneSchedule& ls, std::span<const JobIndex> choices) {
    if ((choices.size() < 2 && !planning_->plans_lone_job()) || ls.paged > 0 || requests_.any() || busy_lanes_ > 0 ||
        lanes_.lanes().size() != 1 || !planning_->plans_now()) {
      return false;
    }
    if (!build_plan(now, lane, ls, choices)) return false;
    if (!planning_->start_plan(plan_, plan_report_)) return false;
    const PlanReport& r = plan_report_;
    // What cancel_plan puts back.
    plan_undo_.started.clear();
    plan_undo_.needs_decision = ls.needs_decision;
    plan_undo_.cut = ls.cut;
    plan_undo_.now = now;
    for (std::size_t i = 0; i < plan_.jobs.size(); ++i) {
      JobState& st = state(plan_.jobs[i].job);
      if (st.first_start_ns < 0 && r.first_start_ns[i] >= 0) {
        st.first_start_ns = r.first_start_ns[i];
        plan_undo_.started.push_back(plan_.jobs[i].job);
      }
    }
    // The memory sample of a plan is its envelope: the largest E among the jobs that ran in it.
    plan_ephemeral_ = 0;
    for (std::size_t i = 0; i < plan_.jobs.size(); ++i) {
      if (r.iterations[i] > 0) plan_ephemeral_ = std::max(plan_ephemeral_, lanes_.aligned(spec(plan_.jobs[i].job).ephemeral));
    }
    lanes_.set_busy(lane.id, true);
    ++busy_lanes_;
    ephemeral_active_ += plan_ephemeral_;
    ls.plan = true;
    ls.last_job = r.last_job;
    ls.needs_decision = false;
    ls.cut = false;
    out_.dispatches += r.runs;
    out_.switches += r.switches;
    out_.plan_closed_form += r.closed_form;
    ++out_.plans;
    return true;
  }

  /// The plan of the lane's rotation among `choices` (Policy::plan) into plan_ and plan_entries_.
  bool build_plan(TimeNs now, const Lane& lane, const LaneSchedule& ls, std::span<const JobIndex> choices) {
    plan_entries_.clear();
    if (!policy_.plan(view(now), LaneSnapshot{lane.id, choices, ls.last_job, kNoJob}, plan_entries_)) return false;
    SALUS_INVARIANT(plan_entries_.size() == choices.size(), "a plan has one entry per job of the lane",
                    std::string(policy_.name()));
    plan_.lane = lane.id;
    plan_.last_job = ls.last_job;
    plan_.deadline = next_arrival_;
    plan_.lane_offset = lane.offset;
    plan_.lane_size = lane.size;
    plan_.jobs.clear();
    for (const RotationEntry& e : plan_entries_) {
      SALUS_INVARIANT(e.job >= 0 && static_cast<std::size_t>(e.job) < specs_.size() && state(e.job).lane == lane.id &&
                          state(e.job).status == JobStatus::kAdmitted && e.step > 0,
                      "a plan rotates admitted jobs of the lane", std::string(policy_.name()));
      const JobState& st = state(e.job);
      plan_.jobs.push_back(PlanJob{e.job, e.level, e.step, e.order, st.remaining_iterations(spec(e.job)),
                                   st.iterations_done == 0 ? spec(e.job).first_iter_extra_ns : 0});
    }
    return true;
  }

  /// The plan schedule(now) would hand the executor, if it would offer one (Scheduler::offer_plan).
  bool offer_plan(TimeNs now, PlanDispatch& out) {
    if (!plans_ || !pending_.empty() || !paged_.empty() || lanes_.unsettled() || requests_.any() || busy_lanes_ > 0 ||
        lanes_.lanes().size() != 1) {
      return false;
    }
    const Lane& lane = lanes_.lanes().front();
    LaneSchedule& ls = sched(lane.id);
    if ((ls.jobs.size() < 2 && !planning_->plans_lone_job()) || ls.paged > 0 || !build_plan(now, lane, ls, ls.jobs)) return false;
    out = plan_;
    return true;
  }

  /// Takes back the plan dispatched at `now` (this loop's last step; nothing of it has completed)
  /// and dispatches its lane again at `now`, as if the plan had never been started: the executor
  /// decides again how far a plan may run (a driver that ran the plan speculatively, past an
  /// instant it must now stop at, has lowered its deadline; cluster/).
  void replan(TimeNs now) {
    SALUS_INVARIANT(lanes_.lanes().size() == 1 && plan_undo_.now == now && exec_.now() == now,
                    "replan takes back the plan dispatched now", std::to_string(now));
    const Lane& lane = lanes_.lanes().front();
    LaneSchedule& ls = sched(lane.id);
    SALUS_INVARIANT(ls.plan && plan_.lane == lane.id, "replan takes back the plan in flight", std::to_string(now));
    const PlanReport& r = plan_report_;
    planning_->cancel_plan(lane.id);
    for (JobIndex j : plan_undo_.started) state(j).first_start_ns = -1;
    lanes_.set_busy(lane.id, false);
    --busy_lanes_;
    ephemeral_active_ -= plan_ephemeral_;
    ls.plan = false;
    ls.last_job = plan_.last_job;
    ls.needs_decision = plan_undo_.needs_decision;
    ls.cut = plan_undo_.cut;
    out_.dispatches -= r.runs;
    out_.switches -= r.switches;
    out_.plan_closed_form -= r.closed_form;
    --out_.plans;
    dispatch(now, lane, ls);
    if (opts_.record_timeline) {
      // schedule(now) sampled the plan's envelope; the instant's sample is the state now, as
      // though the plan had never run (only a cluster of several GPUs replans).
      if (!out_.memory.empty() && out_.memory.back().time_ns == now) out_.memory.pop_back();
      sample_memory(now);
    }
  }

  /// The plan in flight ended: its iterations count, and the job it finished (if any) finishes.
  bool on_plan_completion(const Completion& c) {
    LaneSchedule& ls = sched(c.lane);
    const PlanReport& r = plan_report_;
    SALUS_INVARIANT(ls.plan && c.lane == plan_.lane && c.end_ns == r.end_ns, "completion matches the plan in flight",
                    "lane " + std::to_string(c.lane));
    JobIndex finished = kNoJob;
    const bool rows = opts_.record_timeline && opts_.record_segments;
    for (std::size_t i = 0; i < plan_.jobs.size(); ++i) {
      const JobIndex j = plan_.jobs[i].job;
      JobState& st = state(j);
      if (rows && r.iterations[i] > 0) {
        keep_rows(c.end_ns);
        out_.segments.push_back(Segment{c.lane, j, c.start_ns, c.end_ns, r.iterations[i], r.switch_ns[i], out_.plans});
      }
      st.iterations_done += r.iterations[i];
      st.gpu_time_ns += r.busy_ns[i];
      out_.iterations += r.iterations[i];
      SALUS_INVARIANT(st.iterations_done <= spec(j).iterations, "completed iterations within the job", spec(j).id);
      if (st.iterations_done == spec(j).iterations) {
        SALUS_INVARIANT(finished == kNoJob, "a plan finishes at most one job", spec(j).id);
        finished = j;
      }
    }
    ls.plan = false;
    ls.cut = false;
    lanes_.set_busy(c.lane, false);
    --busy_lanes_;
    ephemeral_active_ -= plan_ephemeral_;
    policy_.on_plan_done(view(c.end_ns), c.lane, plan_entries_, r.iterations);
    if (finished == kNoJob) return false;
    state(finished).status = JobStatus::kDone;
    finish(finished, c.end_ns);
    return true;
  }

  void sample_memory(TimeNs now) {
    const MemorySample m{now, lanes_.persistent_bytes(), lanes_.lanes_bytes(), ephemeral_active_,
                         static_cast<std::int32_t>(lanes_.lanes().size())};
    auto& mem = out_.memory;
    if (!mem.empty()) {
      const MemorySample& b = mem.back();
      if (b.persistent == m.persistent && b.lanes_reserved == m.lanes_reserved &&
          b.ephemeral_active == m.ephemeral_active && b.lanes == m.lanes) {
        return;
      }
      if (b.time_ns == now) {
        mem.back() = m;
        return;
      }
    }
    keep_rows(now);
    mem.push_back(m);
  }
  /// `rows` more rows of the recording kept (SchedulerOptions::timeline_rows).
  void keep_rows(TimeNs now, std::int64_t rows = 1) {
    if (opts_.timeline_rows) opts_.timeline_rows->keep(now, rows);
  }

  std::span<const JobSpec> specs_;
  Policy& policy_;
  Executor& exec_;
  SchedulerOptions opts_;
  LaneManager lanes_;
  PendingQueue pending_;
  std::vector<LaneSchedule> lane_sched_;  // by slot (sched)
  std::vector<LaneId> lane_ids_;          // by slot: its lane, kNoLane when free
  ScheduleOutcome out_;
  std::span<JobState> states_;  // out_.jobs, or the caller's (Scheduler)
  RequestGate requests_;
  bool paging_ = opts_.paging && opts_.lane_mode == LaneMode::kSingle;
  std::vector<JobIndex> paged_;  // admitted jobs whose persistent memory is paged out
  std::vector<JobIndex> resident_scratch_;
  Planning* planning_ = exec_.planning();
  bool plans_ = planning_ != nullptr && planning_->supports_plans() && (!opts_.record_timeline || opts_.timeline_plans) && !paging_;
  TimeNs next_arrival_ = kNever;  // of the next job to arrive, for a plan's deadline
  std::vector<RotationEntry> plan_entries_;
  PlanDispatch plan_;
  PlanReport plan_report_;
  Bytes plan_ephemeral_ = 0;
  struct PlanUndo {
    TimeNs now = -1;                  // when the plan was dispatched
    bool needs_decision = false;      // the lane's flags before it
    bool cut = false;
    std::vector<JobIndex> started;    // jobs whose first start the plan set
  } plan_undo_;
  std::size_t terminal_ = 0;
  std::int64_t admitted_ = 0;
  std::vector<JobIndex> withdrawing_;   // running jobs withdrawn: they end at their run's boundary
  std::int64_t next_admit_seq_ = 0;
  std::int64_t busy_lanes_ = 0;
  Bytes ephemeral_active_ = 0;
  std::uint64_t layout_version_ = 1;  // bumped at every change of the memory layout
  // The instant settle_only last ran at, and the layout and queue it left (schedule_lanes).
  TimeNs settled_at_ = -1;
  std::uint64_t settled_layout_ = 0;
  std::size_t settled_pending_ = 0;
  std::uint64_t checked_layout_ = 0;  // the version check_invariants last saw
};

namespace {

void check_options(Policy& policy, Executor& executor, const SchedulerOptions& opts) {
  if (!policy.supports(opts.lane_mode)) {
    throw std::invalid_argument("policy '" + std::string(policy.name()) + "' does not support lane mode '" +
                                to_string(opts.lane_mode) + "'");
  }
  if (opts.capacity <= 0) throw std::invalid_argument("capacity must be positive");
  if (opts.max_lanes < 0) throw std::invalid_argument("max_lanes must not be negative");
  if (opts.progress_every < 1) throw std::invalid_argument("progress_every must be at least 1");
  if (opts.alignment < 1) throw std::invalid_argument("alignment must be at least 1 byte");
  if (opts.capacity < opts.alignment) throw std::invalid_argument("capacity must hold at least one alignment unit");
  if (opts.paging && opts.lane_mode == LaneMode::kSingle) {
    if (!executor.supports_paging()) throw std::invalid_argument("paging: the executor cannot page");
    // A lane grown for a job of higher priority must give the memory back when it finishes, or a
    // paged-out job might never fit again.
    if (!opts.lane_shrink) throw std::invalid_argument("paging needs lane shrinking");
  }
}

}  // namespace

void RowBudget::keep(TimeNs now, std::int64_t rows) {
  kept += rows;
  if (kept <= limit) return;
  char at[64];
  std::snprintf(at, sizeof at, "%.3f", static_cast<double>(now) / static_cast<double>(kNsPerS));
  throw InputError(what + ": the run kept more than " + std::to_string(limit) +
                   " rows for its files (runs, memory samples, lane moves: held in memory until written) by " + at +
                   " s of simulated time; " + advice);
}

void check_jobs(std::span<const JobSpec> jobs) {
  for (const JobSpec& s : jobs) {
    if (s.iterations <= 0 || s.iter_ns <= 0 || s.persistent < 0 || s.ephemeral < 0 || s.arrival_ns < 0 ||
        s.gpu_util_ppm <= 0 || s.gpu_util_ppm > 1'000'000 || s.first_iter_extra_ns < 0) {
      throw std::invalid_argument("job '" + s.id + "' has an out-of-range field");
    }
    if (!s.requests_ns().empty() &&
        (static_cast<std::int64_t>(s.requests_ns().size()) != s.iterations || s.requests_ns().front() < s.arrival_ns ||
         !std::is_sorted(s.requests_ns().begin(), s.requests_ns().end()))) {
      throw std::invalid_argument("job '" + s.id +
                                  "' needs one request time per iteration, non-decreasing, none before its arrival");
    }
  }
}

Scheduler::Scheduler(std::span<const JobSpec> specs, std::span<JobState> states, Policy& policy, Executor& executor,
                     const SchedulerOptions& opts, JobCheck check) {
  check_options(policy, executor, opts);
  if (check == JobCheck::kCheck) check_jobs(specs);
  if (states.size() != specs.size()) throw std::invalid_argument("Scheduler: one state per job");
  loop_ = std::make_unique<Loop>(specs, policy, executor, opts, states);
}
Scheduler::~Scheduler() = default;
bool Scheduler::take_completions(std::vector<Completion>& completions) { return loop_->take_completions(completions); }
void Scheduler::arrive(JobIndex j, std::int64_t rank) { loop_->arrive(j, rank); }
void Scheduler::split_at_instant(TimeNs now, bool event, std::vector<Completion>& scratch) {
  loop_->split_at_instant(now, event, scratch);
}
void Scheduler::schedule(TimeNs now, bool event) { loop_->schedule(now, event); }
void Scheduler::settle(TimeNs now, bool event) { loop_->settle_only(now, event); }
void Scheduler::admit_pending(TimeNs now) { loop_->admit_pending(now); }
void Scheduler::withdraw(JobIndex j, TimeNs now) { loop_->withdraw(j, now); }
void Scheduler::rebase(std::span<const JobSpec> specs, std::span<JobState> states) { loop_->rebase(specs, states); }
void Scheduler::replan(TimeNs now) { loop_->replan(now); }
bool Scheduler::offer_plan(TimeNs now, PlanDispatch& out) { return loop_->offer_plan(now, out); }
TimeNs Scheduler::next_request(TimeNs now) const { return loop_->next_request(now); }
bool Scheduler::can_admit_now(Bytes persistent, Bytes ephemeral) const {
  return loop_->can_admit_now(persistent, ephemeral);
}
Scheduler::AdmitKind Scheduler::admit_kind(Bytes persistent, Bytes ephemeral) const {
  return loop_->admit_kind(persistent, ephemeral);
}
bool Scheduler::starts_at_once(JobIndex job, TimeNs now) const { return loop_->starts_at_once(job, now); }
std::uint64_t Scheduler::layout_version() const { return loop_->layout_version_; }
std::int64_t Scheduler::admitted() const { return loop_->admitted_count(); }
std::size_t Scheduler::pending() const { return loop_->pending_count(); }
Bytes Scheduler::free_bytes() const {
  const LaneManager& l = loop_->lanes();
  return l.capacity() - l.persistent_bytes() - l.lanes_bytes();
}
ScheduleOutcome& Scheduler::outcome() { return loop_->outcome(); }
void Scheduler::end_at(TimeNs t) { loop_->end_at(t); }

ScheduleOutcome run_schedule(std::span<const JobSpec> jobs, Policy& policy, Executor& executor,
                             const SchedulerOptions& opts) {
  check_options(policy, executor, opts);
  check_jobs(jobs);
  Loop loop(jobs, policy, executor, opts);
  return loop.run();
}

}  // namespace salus::core
