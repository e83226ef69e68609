#include "cluster/dlas.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <queue>
#include <string>
#include <tuple>
#include <vector>

#include "cluster/job_slots.h"
#include "core/errors.h"

namespace salus::cluster {
namespace {

using core::JobIndex;
using core::TimeNs;

/// Queues Q0 .. Qk (k thresholds). A job arrives at the end of Q0; while it runs its attained
/// service grows (run time, times its GPUs for dlas-gpu) and when it reaches Qi's threshold it
/// moves to the end of Q(i+1). GPUs go to the queues in order, each queue in its order, past a
/// job that does not fit; after each decision a queue's waiting jobs move behind its running
/// ones (in their order), so a running job keeps its place ahead of those waiting in its queue.
/// With the starvation knob, a waiting job below Q0 whose waiting time since it first ran (or was
/// last promoted) reaches knob x its run time since then goes back to the end of Q0, its
/// attained service from 0 again. Jobs are looked at in arrival order (demotions and promotions
/// of one instant join a queue in that order). All of it is Tiresias' dlas_sim_jobs
/// (simulator/run_sim.py) read line by line; its instants are where it looks (DlasChecks).
///
/// Tiresias walks every job at every event; here the cost of an instant does not grow with the
/// jobs running. Each queue is three lists: its running jobs, its waiting jobs (each in queue
/// order), and its tail (jobs demoted or promoted into it at this instant, behind both). Times
/// are kept as of an instant (executed from acc_from on while running, waited from wait_from on
/// while waiting). Demotions and promotions come from heaps of the instants they are due. A
/// decision first walks the waiting jobs only, each queue's running GPUs summed: if the jobs it
/// starts fit the free GPUs, no running job is passed over (each has at least the free GPUs as
/// slack), so that is the walk's answer; otherwise the whole walk is made. The differential
/// tests (tests/cluster/preemptive_test.cpp) hold it to the rules stepped second by second and to
/// Tiresias' own outputs.
class Dlas final : public LeasePolicy {
 public:
  Dlas(const LeaseOptions& o, bool gpu_time) : opts_(o), gpu_time_(gpu_time) {
    for (std::size_t i = 0; i < o.dlas_thresholds_ns.size(); ++i) {
      SALUS_INVARIANT(o.dlas_thresholds_ns[i] > 0 && (i == 0 || o.dlas_thresholds_ns[i] > o.dlas_thresholds_ns[i - 1]),
                      "dlas: thresholds are positive and increasing", std::to_string(i));
    }
    SALUS_INVARIANT(o.dlas_starvation >= 0, "dlas: the starvation knob is not negative", std::to_string(o.dlas_starvation));
  }

  std::string_view name() const override { return gpu_time_ ? "dlas-gpu" : "dlas"; }

  void begin(std::span<const core::JobSpec> jobs, const ClusterSpec& cluster, TimeNs restart_ns) override {
    if (restart_ns > 0 && opts_.dlas_checks == DlasChecks::kTiresias) {
      throw core::InputError("--dlas-checks tiresias emulates Tiresias' simulator, which has no restart cost: give "
                             "--restart-cost-ms 0 or --dlas-checks exact");
    }
    specs_ = jobs;
    gpus_ = static_cast<std::int64_t>(cluster.gpus.size());
    restart_ns_ = restart_ns;
    jobs_.clear(jobs.size());
    promotions_ = 0;
    queues_.assign(opts_.dlas_thresholds_ns.size() + 1, Queue{});
    next_rank_ = 0;
  }

  void arrive(JobIndex j, TimeNs now) override {
    Job& s = jobs_.take(j, [](Job& reused) { reused = Job{}; });
    s.rank = next_rank_++;
    s.queue = 0;
    s.wait_from = now;
    push(j, List::kWaiting, 0);
  }

  void finish(JobIndex j, TimeNs now) override {
    (void)now;
    remove(j);
    at(j).running = false;
    ++at(j).stamp;
    promotions_ += at(j).promotions;
    jobs_.release(j);
  }

  void decide(TimeNs now, LeaseDecision& out) override;

  void unplaced(JobIndex j, TimeNs now) override {
    // Back to where it waited: the front of its queue's waiting jobs, its times as they were.
    Job& s = at(j);
    remove(j);
    s.running = false;
    s.ran = s.ran_before;
    s.wait_from = now;
    ++s.stamp;
    push_front(j, static_cast<std::size_t>(s.queue));
    watch_waiting(j, now);
  }

  TimeNs next_change(TimeNs now) override;

  std::int64_t promotions() const override { return promotions_; }
  bool takes_room() const override { return true; }

 private:
  enum class List : std::uint8_t { kNone, kRunning, kWaiting, kTail };
  struct Job {
    JobIndex prev = core::kNoJob, next = core::kNoJob;  // in its list
    List list = List::kNone;
    bool running = false;     // holds GPUs (a running job may sit in a tail at an instant)
    bool ran = false;         // has started before (a start after a preemption restores first)
    bool ran_before = false;  // `ran` before this instant's start (unplaced)
    bool progressed = false;  // has run some time (Tiresias' total_executed_time > 0)
    std::int32_t queue = 0;
    std::int32_t rank = 0;    // arrival order
    std::int64_t stamp = 0;   // heap entries of another stamp are stale
    TimeNs executed = 0;      // run time since it arrived or was last promoted, as of acc_from
    TimeNs acc_from = 0;      // while running: the instant `executed` grows from (after a restart)
    TimeNs waited = 0;        // waiting time after it first ran, since its last promotion, as of wait_from
    TimeNs wait_from = 0;     // while waiting: the instant `waited` grows from
    std::int64_t promotions = 0;
    std::int8_t mark = 0;     // during a decision: +1 starts, -1 is preempted
  };
  struct Chain {
    JobIndex head = core::kNoJob, tail = core::kNoJob;
  };
  struct Queue {
    Chain running, waiting, tail;
    std::int64_t running_gpus = 0;       // in `running`
    std::int64_t tail_running_gpus = 0;  // running jobs in `tail`
    std::map<std::int32_t, std::int64_t> waiting_sizes;  // GPUs -> waiting jobs of that size (in `waiting`)
  };
  /// (instant, rank, job, stamp): due first, then in arrival order.
  using Entry = std::tuple<TimeNs, std::int32_t, JobIndex, std::int64_t>;
  using Heap = std::priority_queue<Entry, std::vector<Entry>, std::greater<>>;

  Job& at(JobIndex j) { return jobs_[j]; }
  const Job& at(JobIndex j) const { return jobs_[j]; }
  std::int32_t gpus_of(JobIndex j) const { return specs_[static_cast<std::size_t>(j)].gpus; }
  std::size_t last_queue() const { return queues_.size() - 1; }

  TimeNs executed_at(const Job& s, TimeNs now) const {
    return s.running ? s.executed + std::max<TimeNs>(0, now - s.acc_from) : s.executed;
  }
  TimeNs waited_at(const Job& s, TimeNs now) const {
    return !s.running && s.executed > 0 ? s.waited + (now - s.wait_from) : s.waited;
  }
  /// Run time at which a job of j's GPUs reaches threshold q (service >= threshold).
  TimeNs run_to_threshold(JobIndex j, std::size_t q) const {
    const TimeNs limit = opts_.dlas_thresholds_ns[q];
    const std::int64_t rate = gpu_time_ ? gpus_of(j) : 1;
    return (limit + rate - 1) / rate;
  }
  /// Waiting time at which a job below Q0 is promoted: knob x its run time, truncated to the ns;
  /// with Tiresias' checks to the second, as it computes int(executed_time * solve_starvation).
  TimeNs starve_after(const Job& s) const {
    const double x = static_cast<double>(s.executed) * opts_.dlas_starvation;
    if (opts_.dlas_checks == DlasChecks::kTiresias) {
      return static_cast<TimeNs>(x / static_cast<double>(core::kNsPerS)) * core::kNsPerS;
    }
    return static_cast<TimeNs>(x);
  }

  Chain& chain(std::size_t q, List l) {
    Queue& Q = queues_[q];
    return l == List::kRunning ? Q.running : l == List::kWaiting ? Q.waiting : Q.tail;
  }
  void count(JobIndex j, std::int64_t sign) {
    const Job& s = at(j);
    Queue& Q = queues_[static_cast<std::size_t>(s.queue)];
    const std::int32_t g = gpus_of(j);
    if (s.list == List::kRunning) Q.running_gpus += sign * g;
    if (s.list == List::kTail && s.running) Q.tail_running_gpus += sign * g;
    if (s.list == List::kWaiting) {
      if ((Q.waiting_sizes[g] += sign) == 0) Q.waiting_sizes.erase(g);
    }
  }
  void push(JobIndex j, List l, std::size_t q) {
    Job& s = at(j);
    s.queue = static_cast<std::int32_t>(q);
    s.list = l;
    Chain& c = chain(q, l);
    s.prev = c.tail;
    s.next = core::kNoJob;
    (c.tail == core::kNoJob ? c.head : at(c.tail).next) = j;
    c.tail = j;
    count(j, +1);
  }
  void push_front(JobIndex j, std::size_t q) {
    Job& s = at(j);
    s.queue = static_cast<std::int32_t>(q);
    s.list = List::kWaiting;
    Chain& c = chain(q, List::kWaiting);
    s.prev = core::kNoJob;
    s.next = c.head;
    (c.head == core::kNoJob ? c.tail : at(c.head).prev) = j;
    c.head = j;
    count(j, +1);
  }
  void remove(JobIndex j) {
    Job& s = at(j);
    if (s.list == List::kNone) return;
    count(j, -1);
    Chain& c = chain(static_cast<std::size_t>(s.queue), s.list);
    (s.prev == core::kNoJob ? c.head : at(s.prev).next) = s.next;
    (s.next == core::kNoJob ? c.tail : at(s.next).prev) = s.prev;
    s.prev = s.next = core::kNoJob;
    s.list = List::kNone;
  }

  /// Heap entries for a job that runs (its next demotion; Tiresias' look) or waits (its promotion).
  void watch_running(JobIndex j) {
    const Job& s = at(j);
    const auto q = static_cast<std::size_t>(s.queue);
    if (q == last_queue()) return;
    demote_.emplace(s.acc_from + std::max<TimeNs>(0, run_to_threshold(j, q) - s.executed), s.rank, j, s.stamp);
    if (opts_.dlas_checks == DlasChecks::kTiresias) {
      // Tiresias looks at (queue_limit - executed_time) / num_gpu seconds after each event (Python
      // 2's integer division): the instant executed reaches the threshold, C, sets it.
      looks_[gpus_of(j)].emplace(s.acc_from + (opts_.dlas_thresholds_ns[q] - s.executed), s.rank, j, s.stamp);
    }
  }
  void watch_waiting(JobIndex j, TimeNs now) {
    const Job& s = at(j);
    if (opts_.dlas_starvation > 0 && s.queue > 0 && s.progressed && s.executed > 0) {
      promote_.emplace(now + std::max<TimeNs>(0, starve_after(s) - waited_at(s, now)), s.rank, j, s.stamp);
    }
  }
  bool valid(const Entry& e) const {
    if (!jobs_.has(std::get<2>(e))) return false;  // ended
    const Job& s = at(std::get<2>(e));
    return s.stamp == std::get<3>(e) && s.list != List::kNone;
  }
  /// The earliest valid entry's instant, stale ones dropped; kNever if none.
  TimeNs top(Heap& h) {
    while (!h.empty() && !valid(h.top())) h.pop();
    return h.empty() ? core::kNever : std::get<0>(h.top());
  }

  void start(JobIndex j, TimeNs now) {
    Job& s = at(j);
    s.waited = waited_at(s, now);
    s.ran_before = s.ran;
    s.acc_from = now + (s.ran ? restart_ns_ : 0);
    s.ran = true;
    s.running = true;
  }
  void stop(JobIndex j, TimeNs now) {
    Job& s = at(j);
    s.executed = executed_at(s, now);
    s.progressed = s.progressed || s.executed > 0;
    s.running = false;
    s.wait_from = now;
  }
  void apply_due(TimeNs now);
  void full_walk(LeaseDecision& out);
  bool fast_walk(std::vector<JobIndex>& start);
  /// Lanes beneath: the short walk through the room (LeaseRoom::place_waiting).
  bool room_walk(LeaseDecision& out);

  LeaseOptions opts_;
  bool gpu_time_;
  std::span<const core::JobSpec> specs_;
  std::int64_t gpus_ = 0;
  TimeNs restart_ns_ = 0;
  JobSlots<Job> jobs_;                    // the jobs arrived and not finished
  std::int64_t promotions_ = 0;           // of the jobs finished
  std::vector<Queue> queues_;
  std::int32_t next_rank_ = 0;
  Heap demote_, promote_;
  std::map<std::int32_t, Heap> looks_;  // Tiresias' checks: by GPUs, the instant executed reaches the threshold
  std::vector<JobIndex> changed_;       // scratch: jobs demoted or promoted at this instant
  std::vector<JobIndex> order_;         // scratch: every job in walk order (lanes beneath)
  std::vector<std::pair<JobIndex, bool>> waiting_;  // scratch: the waiting jobs, a running job after each
  std::vector<std::int64_t> later_running_;         // scratch: room_walk's
  std::vector<std::vector<JobIndex>> by_queue_;  // scratch: a decision's preempted jobs by queue
};

void Dlas::apply_due(TimeNs now) {
  // Every demotion and promotion due by now, in arrival order (Tiresias' loop over its runnable
  // jobs), one queue each.
  changed_.clear();
  for (Heap* h : {&demote_, &promote_}) {
    while (top(*h) <= now) {
      changed_.push_back(std::get<2>(h->top()));
      h->pop();
    }
  }
  std::sort(changed_.begin(), changed_.end(), [&](JobIndex a, JobIndex b) { return at(a).rank < at(b).rank; });
  changed_.erase(std::unique(changed_.begin(), changed_.end()), changed_.end());
  for (const JobIndex j : changed_) {
    Job& s = at(j);
    const auto q = static_cast<std::size_t>(s.queue);
    remove(j);
    ++s.stamp;
    if (s.running) {
      push(j, List::kTail, q + 1);  // demoted: service reached Q(q)'s threshold
    } else {
      s.waited = 0;                 // promoted: back to Q0, service from 0
      s.executed = 0;
      s.wait_from = now;
      ++s.promotions;
      push(j, List::kTail, 0);
    }
  }
}

bool Dlas::fast_walk(std::vector<JobIndex>& start) {
  // The walk over the waiting jobs, every running job kept: left at a job = the GPUs less those
  // of the running jobs ahead of it and of the jobs it starts ahead of it.
  std::int64_t running_total = 0;
  for (const Queue& Q : queues_) running_total += Q.running_gpus + Q.tail_running_gpus;
  const std::int64_t free = gpus_ - running_total;
  std::int64_t ahead = 0, taken = 0;
  for (std::size_t q = 0; q < queues_.size(); ++q) {
    Queue& Q = queues_[q];
    ahead += Q.running_gpus;
    if (!Q.waiting_sizes.empty()) {
      const std::int32_t smallest = Q.waiting_sizes.begin()->first;
      for (JobIndex j = Q.waiting.head; j != core::kNoJob && gpus_ - ahead - taken >= smallest; j = at(j).next) {
        if (gpus_of(j) <= gpus_ - ahead - taken) {
          taken += gpus_of(j);
          start.push_back(j);
        }
      }
    }
    for (JobIndex j = Q.tail.head; j != core::kNoJob; j = at(j).next) {
      if (at(j).running) {
        ahead += gpus_of(j);
      } else if (gpus_of(j) <= gpus_ - ahead - taken) {
        taken += gpus_of(j);
        start.push_back(j);
      }
    }
    if (taken > free) return false;
  }
  return true;
}

bool Dlas::room_walk(LeaseDecision& out) {
  // The waiting jobs in order, each with whether a running job comes after it: in its queue's
  // tail (behind it, for a tail job) or in a later queue.
  waiting_.clear();
  std::vector<std::int64_t>& later = later_running_;  // per queue: running jobs' GPUs in later queues
  later.assign(queues_.size() + 1, 0);
  for (std::size_t q = queues_.size(); q-- > 0;) {
    later[q] = later[q + 1] + queues_[q].running_gpus + queues_[q].tail_running_gpus;
  }
  for (std::size_t q = 0; q < queues_.size(); ++q) {
    const Queue& Q = queues_[q];
    const bool after_waiting = Q.tail_running_gpus > 0 || later[q + 1] > 0;
    for (JobIndex j = Q.waiting.head; j != core::kNoJob; j = at(j).next) waiting_.emplace_back(j, after_waiting);
    std::int64_t tail_left = Q.tail_running_gpus;  // running tail jobs' GPUs behind the one at hand
    for (JobIndex j = Q.tail.head; j != core::kNoJob; j = at(j).next) {
      if (at(j).running) {
        tail_left -= gpus_of(j);
      } else {
        waiting_.emplace_back(j, tail_left > 0 || later[q + 1] > 0);
      }
    }
  }
  return room_->place_waiting(waiting_, out);
}

void Dlas::full_walk(LeaseDecision& out) {
  std::int64_t left = gpus_;
  for (Queue& Q : queues_) {
    for (const Chain* c : {&Q.running, &Q.waiting, &Q.tail}) {
      for (JobIndex j = c->head; j != core::kNoJob; j = at(j).next) {
        const bool fits = gpus_of(j) <= left;
        if (fits) left -= gpus_of(j);
        if (fits && !at(j).running) out.start.push_back(j);
        if (!fits && at(j).running) out.preempt.push_back(j);
      }
    }
  }
}

void Dlas::decide(TimeNs now, LeaseDecision& out) {
  apply_due(now);
  if (room_ != nullptr) {
    // Lanes beneath: the engine places by memory, the waiting jobs alone where it can (as
    // fast_walk), else the whole order.
    if (!opts_.dlas_short_walks || !room_walk(out)) {
      order_.clear();
      for (Queue& Q : queues_) {
        for (const Chain* c : {&Q.running, &Q.waiting, &Q.tail}) {
          for (JobIndex j = c->head; j != core::kNoJob; j = at(j).next) order_.push_back(j);
        }
      }
      room_->place(order_, out);
    }
  } else if (!opts_.dlas_short_walks || !fast_walk(out.start)) {
    out.start.clear();
    full_walk(out);
  }
  for (const JobIndex j : out.preempt) at(j).mark = -1;
  for (const JobIndex j : out.start) at(j).mark = +1;
  // The new lists, queue by queue: running = the running kept, then those started from the
  // waiting jobs, then the tail's running (each in order); waiting = those preempted, then the
  // waiting not started, then the tail's waiting (Tiresias: each queue's pending jobs moved to
  // its end). The walks list jobs in queue order, so each queue's share of them is in order.
  by_queue_.resize(queues_.size());
  for (auto& b : by_queue_) b.clear();
  for (const JobIndex j : out.preempt) {
    if (at(j).list == List::kRunning) by_queue_[static_cast<std::size_t>(at(j).queue)].push_back(j);
  }
  for (std::size_t q = 0; q < queues_.size(); ++q) {
    std::vector<JobIndex>& preempted = by_queue_[q];
    for (auto it = preempted.rbegin(); it != preempted.rend(); ++it) {
      remove(*it);
      push_front(*it, q);
    }
  }
  for (const JobIndex j : out.start) {
    if (at(j).list != List::kWaiting) continue;  // a tail's: below
    const auto q = static_cast<std::size_t>(at(j).queue);
    remove(j);
    push(j, List::kRunning, q);
  }
  for (std::size_t q = 0; q < queues_.size(); ++q) {
    Queue& Q = queues_[q];
    while (Q.tail.head != core::kNoJob) {
      const JobIndex j = Q.tail.head;
      const bool runs = at(j).mark > 0 || (at(j).running && at(j).mark == 0);
      remove(j);
      push(j, runs ? List::kRunning : List::kWaiting, q);
    }
  }
  // Times, and the heap entries of every job whose state changed.
  for (const JobIndex j : out.preempt) stop(j, now);
  for (const JobIndex j : out.start) start(j, now);
  for (const JobIndex j : out.preempt) {
    ++at(j).stamp;
    watch_waiting(j, now);
  }
  for (const JobIndex j : out.start) {
    ++at(j).stamp;
    watch_running(j);
  }
  for (const JobIndex j : changed_) {
    Job& s = at(j);
    if (s.mark == 0) {
      ++s.stamp;
      if (s.running) {
        watch_running(j);
      } else {
        watch_waiting(j, now);
      }
    }
  }
  for (const JobIndex j : out.preempt) at(j).mark = 0;
  for (const JobIndex j : out.start) at(j).mark = 0;
}

TimeNs Dlas::next_change(TimeNs now) {
  TimeNs next = std::min(top(promote_), opts_.dlas_checks == DlasChecks::kExact ? top(demote_) : core::kNever);
  if (opts_.dlas_checks == DlasChecks::kTiresias) {
    for (auto& [gpus, h] : looks_) {
      const TimeNs c = top(h);
      if (c == core::kNever) continue;
      const std::int64_t rate = gpu_time_ ? gpus : 1;
      next = std::min(next, now + (c - now) / (rate * core::kNsPerS) * core::kNsPerS);
    }
  }
  return next == core::kNever ? next : std::max(next, now + 1);
}

}  // namespace

std::unique_ptr<LeasePolicy> make_dlas(const LeaseOptions& opts, bool gpu_time) {
  return std::make_unique<Dlas>(opts, gpu_time);
}

}  // namespace salus::cluster
