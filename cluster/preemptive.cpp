#include "cluster/preemptive.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <queue>
#include <tuple>
#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "cluster/job_slots.h"
#include "core/errors.h"

namespace salus::cluster {
namespace {

using core::JobIndex;
using core::JobSpec;
using core::JobState;
using core::JobStatus;
using core::TimeNs;

/// The free GPUs, by node, and where a job that starts goes (preemptive.h: one node if one has
/// enough, the fewest such first; else the nodes with the most free first).
class FreeGpus {
 public:
  /// The GPUs of kind `kind` (all of them for -1).
  FreeGpus(const ClusterSpec& c, std::int32_t kind) : spec_(c), by_node_(nodes(c)) {
    std::set<core::Bytes> caps;
    for (std::size_t g = 0; g < c.gpus.size(); ++g) {
      if (kind >= 0 && c.gpus[g].kind != kind) continue;
      by_node_[static_cast<std::size_t>(c.gpus[g].node)].insert(static_cast<std::int32_t>(g));
      caps.insert(c.gpus[g].capacity);
      ++free_;
    }
    one_size_ = caps.size() <= 1;
    capacity_ = caps.empty() ? 0 : *caps.begin();
    for (std::size_t n = 0; n < by_node_.size(); ++n) order_.insert({by_node_[n].size(), n});
  }

  std::size_t free() const { return free_; }
  /// Free GPUs with at least `need` bytes.
  std::size_t free_for(core::Bytes need) const {
    if (one_size_) return capacity_ >= need ? free_ : 0;
    std::size_t n = 0;
    for (const auto& node : by_node_) {
      for (const std::int32_t g : node) n += fits(g, need) ? 1 : 0;
    }
    return n;
  }

  /// Takes k free GPUs with at least `need` bytes (free_for(need) >= k).
  std::vector<std::int32_t> take(std::size_t k, core::Bytes need) {
    std::vector<std::int32_t> out;
    if (one_size_) {
      // The node with the fewest free GPUs that has k, else the most free first.
      if (auto it = order_.lower_bound({k, 0}); it != order_.end()) {
        take_from(it->second, k, need, out);
      } else {
        while (out.size() < k) take_from(std::prev(order_.end())->second, k - out.size(), need, out);
      }
      return out;
    }
    // GPUs of several sizes: the same rule over the GPUs that fit, by a scan of the nodes.
    std::size_t best = by_node_.size();
    std::size_t best_count = 0;
    std::vector<std::pair<std::size_t, std::size_t>> counts;  // (-count, node) for the spread
    for (std::size_t n = 0; n < by_node_.size(); ++n) {
      std::size_t c = 0;
      for (const std::int32_t g : by_node_[n]) c += fits(g, need) ? 1 : 0;
      if (c >= k && (best == by_node_.size() || c < best_count)) {
        best = n;
        best_count = c;
      }
      if (c > 0) counts.emplace_back(c, n);
    }
    if (best < by_node_.size()) {
      take_from(best, k, need, out);
      return out;
    }
    std::stable_sort(counts.begin(), counts.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    for (const auto& [c, n] : counts) {
      if (out.size() == k) break;
      take_from(n, k - out.size(), need, out);
    }
    return out;
  }

  void give_back(std::span<const std::int32_t> gpus) {
    for (const std::int32_t g : gpus) {
      const auto n = static_cast<std::size_t>(spec_.gpus[static_cast<std::size_t>(g)].node);
      order_.erase({by_node_[n].size(), n});
      by_node_[n].insert(g);
      order_.insert({by_node_[n].size(), n});
      ++free_;
    }
  }

 private:
  static std::size_t nodes(const ClusterSpec& c) {
    std::int32_t n = 0;
    for (const GpuSpec& g : c.gpus) n = std::max(n, g.node + 1);
    return static_cast<std::size_t>(n);
  }
  bool fits(std::int32_t g, core::Bytes need) const { return spec_.gpus[static_cast<std::size_t>(g)].capacity >= need; }
  /// Up to k of node n's free GPUs that fit, lowest-numbered first, into out.
  void take_from(std::size_t n, std::size_t k, core::Bytes need, std::vector<std::int32_t>& out) {
    order_.erase({by_node_[n].size(), n});
    for (auto it = by_node_[n].begin(); it != by_node_[n].end() && k > 0;) {
      if (!fits(*it, need)) {
        ++it;
        continue;
      }
      out.push_back(*it);
      it = by_node_[n].erase(it);
      --free_;
      --k;
    }
    order_.insert({by_node_[n].size(), n});
  }

  const ClusterSpec& spec_;
  std::vector<std::set<std::int32_t>> by_node_;
  std::set<std::pair<std::size_t, std::size_t>> order_;  // (free GPUs, node)
  std::size_t free_ = 0;
  core::Bytes capacity_ = 0;  // the GPUs' memory, when one_size_
  bool one_size_ = true;
};

/// The engine's state of one job in the system (arrived, not finished), in a slot reused after
/// it: the state is sized by the jobs present, not by the trace.
struct Job {
  TimeNs remaining = 0;    // work left at solo speed, as of its run's start (while running) or now
  TimeNs busy_from = 0;    // while running: the instant it progresses from (after a restart)
  TimeNs until = core::kNever;  // while running: the end of its lease (it progresses to then, then idles)
  TimeNs run_start = 0;    // while running: its run's start
  std::int64_t stamp = 0;  // finish-heap entries of another stamp are stale (kept across jobs)
  std::vector<std::int32_t> gpus;  // while running: its GPUs; else its last run's
  std::int64_t speed = kSpeedOne;  // while running: its speed there (ppm)
  bool ran = false;
  bool running = false;
};

class Engine {
 public:
  Engine(std::span<const JobSpec> jobs, const std::string& policy, const PreemptiveOptions& opts)
      : specs_(jobs), opts_(opts), policy_(make_lease_policy(policy, opts.lease)), kinds_(opts.cluster) {
    core::check_jobs(jobs);
    if (!opts.cluster.kinds.empty() && !policy_->runs_kinds()) {
      throw core::InputError("--policy " + policy + ": this cluster policy runs GPUs of one kind and speed; this cluster names kinds (" +
                             std::to_string(opts.cluster.kinds.size()) + "): use max-min or a per-GPU policy there");
    }
    check_lease_inputs(jobs, opts.cluster, "--policy " + policy);
    if (opts.cluster.kinds.empty()) {
      free_.emplace_back(opts.cluster, -1);
    } else {
      for (std::size_t k = 0; k < opts.cluster.kinds.size(); ++k) free_.emplace_back(opts.cluster, static_cast<std::int32_t>(k));
    }
    if (opts.progress_every < 1) throw std::invalid_argument("progress_every must be at least 1");
  }

  ClusterOutcome run();

 private:
  using Entry = std::tuple<TimeNs, std::int32_t, JobIndex, std::int64_t>;  // (finish, rank, job, stamp)

  std::size_t at(JobIndex j) const { return static_cast<std::size_t>(j); }
  Job& job(JobIndex j) { return jobs_[j]; }
  void finish_runs(TimeNs t);
  void arrive(JobIndex j, TimeNs t);
  void decide(TimeNs t);
  void stop(JobIndex j, TimeNs t);  // its run ends at t (finished or preempted)
  /// Its work done from busy_from to t (to the end of its lease, if sooner), from busy_from = t on.
  static void progress(Job& s, TimeNs t) {
    const TimeNs to = std::min(t, s.until);
    s.remaining -= std::min(s.remaining, lease_work(std::max<TimeNs>(0, to - s.busy_from), s.speed));
    s.busy_from = std::max(s.busy_from, t);
  }
  /// Its finish, if it comes within its lease.
  void push_finish(JobIndex j) {
    Job& s = job(j);
    const TimeNs end = s.busy_from + lease_time(s.remaining, s.speed);
    if (end <= s.until) finishes_.emplace(end, out_.outcome.jobs[at(j)].submit_rank, j, s.stamp);
  }
  TimeNs next_finish();
  void note_busy(TimeNs t);

  std::span<const JobSpec> specs_;
  const PreemptiveOptions& opts_;
  std::unique_ptr<LeasePolicy> policy_;
  FreeGpus& pool(std::int32_t gpu) {
    return free_[opts_.cluster.kinds.empty() ? 0 : static_cast<std::size_t>(opts_.cluster.gpus[static_cast<std::size_t>(gpu)].kind)];
  }
  std::size_t free_gpus() const {
    std::size_t n = 0;
    for (const FreeGpus& f : free_) n += f.free();
    return n;
  }

  std::vector<FreeGpus> free_;  // per kind (one for a cluster of no kinds)
  LeaseKinds kinds_;
  JobSlots<Job> jobs_;                   // the jobs arrived and not finished
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> finishes_;
  LeaseDecision decision_;
  std::vector<JobIndex> done_;     // scratch
  ClusterOutcome out_;
  std::int64_t active_ = 0;        // arrived, not ended
  std::int64_t quiet_ = 0;         // instants in a row with no arrival and no finish
};

void Engine::stop(JobIndex j, TimeNs t) {
  Job& s = job(j);
  JobState& st = out_.outcome.jobs[at(j)];
  progress(s, t);
  st.gpu_time_ns += t - s.run_start;
  const JobSpec& spec = specs_[at(j)];
  const TimeNs work = spec.solo_ns() + spec.first_iter_extra_ns;
  st.iterations_done = std::min(spec.iterations, (work - s.remaining) / spec.iter_ns);
  if (opts_.record_timeline) {
    for (const std::int32_t g : s.gpus) {
      out_.gpu_timelines[static_cast<std::size_t>(g)].segments.push_back(
          core::Segment{.lane = 0, .job = j, .start_ns = s.run_start, .end_ns = t, .iterations = 0});
    }
  }
  if (opts_.record_runs) out_.job_runs.push_back(JobRun{.job = j, .start_ns = s.run_start, .end_ns = t, .gpus = s.gpus});
  ++out_.runs;
  for (const std::int32_t g : s.gpus) pool(g).give_back(std::span<const std::int32_t>(&g, 1));
  s.running = false;
  ++s.stamp;
  st.running = false;
}

void Engine::finish_runs(TimeNs t) {
  done_.clear();
  while (next_finish() <= t) {
    done_.push_back(std::get<2>(finishes_.top()));
    finishes_.pop();
  }
  // In arrival order (the heap's ties), as the peers look at them.
  for (const JobIndex j : done_) {
    stop(j, t);
    for (const std::int32_t g : job(j).gpus) out_.job_gpus.add(at(j), g);  // its last run's
    jobs_.release(j);
    JobState& st = out_.outcome.jobs[at(j)];
    st.status = JobStatus::kDone;
    st.finish_ns = t;
    st.iterations_done = specs_[at(j)].iterations;
    policy_->finish(j, t);
    --active_;
    out_.outcome.end_ns = t;
  }
}

void Engine::arrive(JobIndex j, TimeNs t) {
  const JobSpec& s = specs_[at(j)];
  JobState& st = out_.outcome.jobs[at(j)];
  const core::Bytes need = s.persistent + s.ephemeral;
  // The most GPUs with room of one kind it can run on (a cluster of no kinds: one pool).
  std::size_t fit = 0;
  for (std::size_t k = 0; k < free_.size(); ++k) fit = std::max(fit, kinds_.able(s, static_cast<std::int32_t>(k)));
  if (fit < static_cast<std::size_t>(s.gpus)) {
    st.status = JobStatus::kRejected;
    st.set_reason("needs " + std::to_string(s.gpus) + " GPUs with P + E = " + core::format_size(need) + ", the cluster has " +
                  std::to_string(fit) + (opts_.cluster.kinds.empty() ? "" : " of one kind it runs on") + " that large");
    return;
  }
  st.status = JobStatus::kPending;
  jobs_.take(j, [](Job& reused) {
         reused.ran = reused.running = false;
         reused.gpus.clear();  // keeps its capacity
       }).remaining = s.solo_ns() + s.first_iter_extra_ns;
  ++active_;
  policy_->arrive(j, t);
}

void Engine::decide(TimeNs t) {
  decision_.clear();
  policy_->decide(t, decision_);
  for (const JobIndex j : decision_.preempt) {
    stop(j, t);
    ++out_.preemptions;
  }
  for (const auto& [j, until] : decision_.extend) {
    Job& s = job(j);
    SALUS_INVARIANT(s.running && until > t, "preemptive: a lease extended is a running job's, into the future",
                    std::to_string(t));
    progress(s, t);
    s.until = until;
    ++s.stamp;  // its finish entry, if any, is for the old lease
    push_finish(j);
  }
  SALUS_INVARIANT(decision_.start_until.empty() || decision_.start_until.size() == decision_.start.size(),
                  "preemptive: a lease end for every start, or none", std::to_string(decision_.start_until.size()));
  SALUS_INVARIANT(decision_.start_kind.empty() || decision_.start_kind.size() == decision_.start.size(),
                   "preemptive: a kind for every start, or none", std::to_string(decision_.start_kind.size()));
  SALUS_INVARIANT(opts_.cluster.kinds.empty() || decision_.start_kind.size() == decision_.start.size(),
                   "preemptive: on a cluster with kinds, the policy names each start's kind", std::to_string(t));
  for (std::size_t i = 0; i < decision_.start.size(); ++i) {
    const JobIndex j = decision_.start[i];
    const JobSpec& s = specs_[at(j)];
    const core::Bytes need = s.persistent + s.ephemeral;
    const auto k = static_cast<std::size_t>(s.gpus);
    const std::int32_t kind = decision_.start_kind.empty() ? 0 : decision_.start_kind[i];
    FreeGpus& free = free_[static_cast<std::size_t>(kind)];
    const std::int64_t speed = kinds_.speed(s, kind);
    if (speed <= 0 || free.free_for(need) < k) {
      policy_->unplaced(j, t);  // GPUs of several sizes: none free that it can use
      continue;
    }
    Job& job = this->job(j);
    job.speed = speed;
    std::vector<std::int32_t> gpus = free.take(k, need);
    JobState& st = out_.outcome.jobs[at(j)];
    if (job.ran) {
      job.busy_from = t + opts_.restart_cost_ns;
      std::vector<std::int32_t> a = gpus;
      std::sort(a.begin(), a.end());
      std::sort(job.gpus.begin(), job.gpus.end());
      if (a != job.gpus) ++out_.migrations;
    } else {
      job.busy_from = t;
      st.first_start_ns = t;
      st.status = JobStatus::kAdmitted;
      st.admitted_ns = t;
      ++out_.placements;
    }
    job.gpus = std::move(gpus);
    job.ran = true;
    job.running = true;
    job.run_start = t;
    ++job.stamp;
    st.running = true;
    job.until = decision_.start_until.empty() ? core::kNever : decision_.start_until[i];
    SALUS_INVARIANT(job.until > t, "preemptive: a lease ends after it starts", std::to_string(t));
    push_finish(j);
    ++out_.outcome.dispatches;
  }
  note_busy(t);
}

TimeNs Engine::next_finish() {
  while (!finishes_.empty()) {
    const auto& [time, rank, j, stamp] = finishes_.top();
    if (jobs_.has(j)) {
      const Job& s = job(j);
      if (s.running && s.stamp == stamp) return time;
    }
    finishes_.pop();
  }
  return core::kNever;
}

void Engine::note_busy(TimeNs t) {
  const auto busy = static_cast<std::int32_t>(opts_.cluster.gpus.size() - free_gpus());
  if (out_.busy.empty() || out_.busy.back().gpus != busy) {
    if (!out_.busy.empty() && out_.busy.back().time_ns == t) {
      out_.busy.back().gpus = busy;
    } else {
      out_.busy.push_back(BusySample{.time_ns = t, .gpus = busy});
    }
  }
}

ClusterOutcome Engine::run() {
  const std::size_t n = specs_.size();
  jobs_.clear(n);
  out_.outcome.jobs.assign(n, JobState{});
  out_.job_gpus = JobGpus(n);
  if (opts_.record_timeline) out_.gpu_timelines.resize(opts_.cluster.gpus.size());
  policy_->begin(specs_, opts_.cluster, opts_.restart_cost_ns);
  const std::vector<JobIndex> arrivals = rank_arrivals(specs_, out_.outcome.jobs);
  std::size_t next_arrival = 0;
  TimeNs t = n > 0 ? specs_[at(arrivals[0])].arrival_ns : 0;
  note_busy(t);
  while (next_arrival < n || active_ > 0) {
    const std::int64_t before = active_;
    const std::size_t arrived = next_arrival;
    finish_runs(t);
    for (; next_arrival < n && specs_[at(arrivals[next_arrival])].arrival_ns <= t; ++next_arrival) {
      arrive(arrivals[next_arrival], t);
    }
    decide(t);
    ++out_.events;
    // Instants with no finish, no arrival and no lease begun (demotions, promotions) are bounded
    // by the policy's rules; were they not, the run stops here rather than going on for ever. A
    // lease begun or renewed (a round's) is progress: the job runs, from the end of its restart.
    const bool leased = !decision_.start.empty() || !decision_.extend.empty();
    quiet_ = active_ == before && next_arrival == arrived && !leased ? quiet_ + 1 : 0;
    SALUS_INVARIANT(quiet_ < 100'000'000, "preemptive: jobs finish (a hundred million instants passed without a finish or an arrival)",
                    std::to_string(t));
    if (opts_.progress && out_.events % opts_.progress_every == 0) {
      opts_.progress(core::Progress{.now = t, .events = out_.events, .jobs = out_.outcome.jobs});
    }
    TimeNs next = next_finish();
    if (next_arrival < n) next = std::min(next, specs_[at(arrivals[next_arrival])].arrival_ns);
    if (active_ > 0) next = std::min(next, policy_->next_change(t));
    if (next == core::kNever) break;
    SALUS_INVARIANT(next > t, "preemptive: time moves forward", std::to_string(t) + " -> " + std::to_string(next));
    t = next;
  }
  out_.outcome.steps = out_.events;
  for (std::size_t j = 0; j < n; ++j) out_.outcome.iterations += out_.outcome.jobs[j].iterations_done;
  out_.promotions = policy_->promotions();
  out_.outcome.switches = out_.preemptions;
  return std::move(out_);
}

}  // namespace

void check_lease_inputs(std::span<const core::JobSpec> jobs, const ClusterSpec& cluster, const std::string& who) {
  for (const GpuSpec& g : cluster.gpus) {
    if (cluster.kinds.empty() && g.speed_ppm != kSpeedOne) {
      throw core::InputError(who + ": the cluster policies give GPUs of several speeds only as named kinds "
                             "(a cluster file's kind column); this cluster has speeds and no kinds");
    }
  }
  for (const JobSpec& s : jobs) {
    if (!s.requests_ns().empty()) {
      throw core::InputError(who + ": job '" + s.id.str() +
                             "' serves requests (an inference job); the cluster policies run training jobs only");
    }
  }
}

std::vector<core::JobIndex> rank_arrivals(std::span<const core::JobSpec> jobs, std::span<core::JobState> states) {
  std::vector<JobIndex> arrivals(jobs.size());
  std::iota(arrivals.begin(), arrivals.end(), JobIndex{0});
  std::stable_sort(arrivals.begin(), arrivals.end(), [&](JobIndex a, JobIndex b) {
    return jobs[static_cast<std::size_t>(a)].arrival_ns < jobs[static_cast<std::size_t>(b)].arrival_ns;
  });
  for (std::size_t r = 0; r < arrivals.size(); ++r) {
    states[static_cast<std::size_t>(arrivals[r])].submit_rank = static_cast<std::int32_t>(r);
  }
  return arrivals;
}

ClusterOutcome run_preemptive(std::span<const core::JobSpec> jobs, const std::string& policy,
                              const PreemptiveOptions& opts) {
  if (!opts.gpu_policy.empty()) return run_lanes_beneath(jobs, policy, opts);
  Engine e(jobs, policy, opts);
  return e.run();
}

}  // namespace salus::cluster
