#include "cluster/preemptive.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <utility>
#include <vector>

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
  explicit FreeGpus(const ClusterSpec& c) : spec_(c), by_node_(nodes(c)) {
    std::set<core::Bytes> caps;
    for (std::size_t g = 0; g < c.gpus.size(); ++g) {
      by_node_[static_cast<std::size_t>(c.gpus[g].node)].insert(static_cast<std::int32_t>(g));
      caps.insert(c.gpus[g].capacity);
    }
    one_size_ = caps.size() <= 1;
    for (std::size_t n = 0; n < by_node_.size(); ++n) order_.insert({by_node_[n].size(), n});
    free_ = c.gpus.size();
  }

  std::size_t free() const { return free_; }

  /// Free GPUs with at least `need` bytes.
  std::size_t free_for(core::Bytes need) const {
    if (one_size_) return spec_.gpus.empty() || spec_.gpus[0].capacity >= need ? free_ : 0;
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
  bool one_size_ = true;
};

/// The engine's state of one job.
struct Job {
  TimeNs remaining = 0;    // work left at solo speed
  TimeNs busy_from = 0;    // while running: the instant it progresses from (after a restart)
  TimeNs run_start = 0;    // while running: its run's start
  std::vector<std::int32_t> gpus;       // while running: its GPUs
  std::vector<std::int32_t> last_gpus;  // its last run's GPUs
  bool ran = false;
};

class Engine {
 public:
  Engine(std::span<const JobSpec> jobs, const std::string& policy, const PreemptiveOptions& opts)
      : specs_(jobs), opts_(opts), policy_(make_lease_policy(policy, opts.lease)), free_(opts.cluster) {
    core::check_jobs(jobs);
    if (!opts.cluster.kinds.empty()) {
      throw core::InputError("--policy " + policy + ": a cluster policy runs GPUs of one kind and speed; this cluster names kinds (" +
                             std::to_string(opts.cluster.kinds.size()) + "): use a per-GPU policy there");
    }
    if (opts.progress_every < 1) throw std::invalid_argument("progress_every must be at least 1");
    for (const JobSpec& s : jobs) {
      if (!s.requests_ns().empty()) {
        throw core::InputError("--policy " + policy + ": job '" + s.id.str() +
                               "' serves requests (an inference job); the cluster policies run training jobs only");
      }
    }
  }

  ClusterOutcome run();

 private:
  std::size_t at(JobIndex j) const { return static_cast<std::size_t>(j); }
  void finish_runs(TimeNs t);
  void arrive(JobIndex j, TimeNs t);
  void decide(TimeNs t);
  void stop(JobIndex j, TimeNs t);  // its run ends at t (finished or preempted)
  TimeNs next_finish() const;
  void note_busy(TimeNs t);

  std::span<const JobSpec> specs_;
  const PreemptiveOptions& opts_;
  std::unique_ptr<LeasePolicy> policy_;
  FreeGpus free_;
  std::vector<Job> jobs_;
  std::vector<LeaseJob> view_;
  std::vector<JobIndex> running_;  // jobs holding GPUs
  std::vector<JobIndex> order_;    // scratch: the policy's order
  ClusterOutcome out_;
  TimeNs prev_ = 0;                // the last instant decided
  std::int64_t active_ = 0;        // arrived, not ended
  std::int64_t idle_instants_ = 0; // instants in a row with jobs running and none progressing
};

void Engine::stop(JobIndex j, TimeNs t) {
  Job& s = jobs_[at(j)];
  JobState& st = out_.outcome.jobs[at(j)];
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
  out_.job_runs.push_back(JobRun{.job = j, .start_ns = s.run_start, .end_ns = t, .gpus = s.gpus});
  free_.give_back(s.gpus);
  s.last_gpus = std::move(s.gpus);
  s.gpus.clear();
  view_[at(j)].running = false;
  st.running = false;
  running_.erase(std::find(running_.begin(), running_.end(), j));
}

void Engine::finish_runs(TimeNs t) {
  std::vector<JobIndex> done;
  bool progressed = false;
  for (const JobIndex j : running_) {
    Job& s = jobs_[at(j)];
    const TimeNs from = std::max(prev_, s.busy_from);
    if (t > from) {
      s.remaining -= std::min(s.remaining, t - from);
      progressed = true;
    }
    if (s.remaining == 0) done.push_back(j);
  }
  // Attained service counts progress only (LeaseJob::busy_from), so restarts cannot keep every
  // job from progressing; were a policy to, the run stops with this rather than going on forever.
  idle_instants_ = progressed || running_.empty() ? 0 : idle_instants_ + 1;
  SALUS_INVARIANT(idle_instants_ < 1'000'000, "preemptive: jobs progress (a million instants passed without any)",
                  std::to_string(t));
  // In arrival order, as the peers look at them.
  std::sort(done.begin(), done.end(), [&](JobIndex a, JobIndex b) {
    return out_.outcome.jobs[at(a)].submit_rank < out_.outcome.jobs[at(b)].submit_rank;
  });
  for (const JobIndex j : done) {
    stop(j, t);
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
  std::size_t able = 0;
  for (const GpuSpec& g : opts_.cluster.gpus) able += g.capacity >= need ? 1 : 0;
  if (able < static_cast<std::size_t>(s.gpus)) {
    st.status = JobStatus::kRejected;
    st.set_reason("needs " + std::to_string(s.gpus) + " GPUs with P + E = " + core::format_size(need) +
                  ", the cluster has " + std::to_string(able) + " that large");
    return;
  }
  st.status = JobStatus::kPending;
  jobs_[at(j)].remaining = s.solo_ns() + s.first_iter_extra_ns;
  ++active_;
  policy_->arrive(j, t);
}

void Engine::decide(TimeNs t) {
  policy_->update(t, view_);
  order_.clear();
  policy_->order(order_);
  // Which jobs hold GPUs from t on: the policy's order, each that fits the GPUs left.
  std::size_t left = opts_.cluster.gpus.size();
  std::vector<JobIndex> keep, start;
  for (const JobIndex j : order_) {
    const auto k = static_cast<std::size_t>(specs_[at(j)].gpus);
    if (k > left) continue;
    left -= k;
    (view_[at(j)].running ? keep : start).push_back(j);
  }
  // Preempt the running jobs not kept, then place the others: a job keeps its GPUs, so the free
  // ones after the preemptions are exactly those the starting jobs share. With GPUs of several
  // sizes a starting job may find none that fits among them: it waits.
  std::vector<JobIndex> preempted;
  for (const JobIndex j : running_) {
    if (std::find(keep.begin(), keep.end(), j) == keep.end()) preempted.push_back(j);
  }
  for (const JobIndex j : preempted) {
    stop(j, t);
    ++out_.preemptions;
  }
  for (const JobIndex j : start) {
    const JobSpec& s = specs_[at(j)];
    const core::Bytes need = s.persistent + s.ephemeral;
    const auto k = static_cast<std::size_t>(s.gpus);
    if (free_.free_for(need) < k) continue;
    Job& job = jobs_[at(j)];
    job.gpus = free_.take(k, need);
    JobState& st = out_.outcome.jobs[at(j)];
    if (job.ran) {
      job.busy_from = t + opts_.restart_cost_ns;
      std::vector<std::int32_t> a = job.gpus, b = job.last_gpus;
      std::sort(a.begin(), a.end());
      std::sort(b.begin(), b.end());
      if (a != b) ++out_.migrations;
    } else {
      job.busy_from = t;
      st.first_start_ns = t;
      st.status = JobStatus::kAdmitted;
      st.admitted_ns = t;
      ++out_.placements;
    }
    job.ran = true;
    job.run_start = t;
    view_[at(j)].busy_from = job.busy_from;
    st.running = true;
    view_[at(j)].running = true;
    running_.push_back(j);
    ++out_.outcome.dispatches;
  }
  policy_->scheduled(view_);
  note_busy(t);
}

TimeNs Engine::next_finish() const {
  TimeNs next = core::kNever;
  for (const JobIndex j : running_) {
    const Job& s = jobs_[at(j)];
    next = std::min(next, std::max(prev_, s.busy_from) + s.remaining);
  }
  return next;
}

void Engine::note_busy(TimeNs t) {
  const auto busy = static_cast<std::int32_t>(opts_.cluster.gpus.size() - free_.free());
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
  jobs_.assign(n, Job{});
  view_.assign(n, LeaseJob{});
  for (std::size_t j = 0; j < n; ++j) view_[j].gpus = specs_[j].gpus;
  out_.outcome.jobs.assign(n, JobState{});
  out_.job_gpus = JobGpus(n);
  if (opts_.record_timeline) out_.gpu_timelines.resize(opts_.cluster.gpus.size());
  policy_->begin(specs_);
  // Arrival order, ties in trace order.
  std::vector<JobIndex> arrivals(n);
  std::iota(arrivals.begin(), arrivals.end(), JobIndex{0});
  std::stable_sort(arrivals.begin(), arrivals.end(),
                   [&](JobIndex a, JobIndex b) { return specs_[at(a)].arrival_ns < specs_[at(b)].arrival_ns; });
  for (std::size_t r = 0; r < n; ++r) out_.outcome.jobs[at(arrivals[r])].submit_rank = static_cast<std::int32_t>(r);
  std::size_t next_arrival = 0;
  TimeNs t = n > 0 ? specs_[at(arrivals[0])].arrival_ns : 0;
  prev_ = t;
  note_busy(t);
  while (next_arrival < n || active_ > 0) {
    finish_runs(t);
    for (; next_arrival < n && specs_[at(arrivals[next_arrival])].arrival_ns <= t; ++next_arrival) {
      arrive(arrivals[next_arrival], t);
    }
    decide(t);
    prev_ = t;
    ++out_.events;
    if (opts_.progress && out_.events % opts_.progress_every == 0) {
      opts_.progress(core::Progress{.now = t, .events = out_.events, .jobs = out_.outcome.jobs});
    }
    TimeNs next = next_finish();
    if (next_arrival < n) next = std::min(next, specs_[at(arrivals[next_arrival])].arrival_ns);
    if (active_ > 0) next = std::min(next, policy_->next_change(t, view_));
    if (next == core::kNever) break;
    SALUS_INVARIANT(next > t || (next == t && active_ == 0), "preemptive: time moves forward",
                    std::to_string(t) + " -> " + std::to_string(next));
    t = next;
  }
  out_.outcome.steps = out_.events;
  for (std::size_t j = 0; j < n; ++j) {
    for (const std::int32_t g : jobs_[j].last_gpus) out_.job_gpus.add(j, g);
    out_.outcome.iterations += out_.outcome.jobs[j].iterations_done;
  }
  out_.outcome.switches = out_.preemptions;
  for (std::size_t j = 0; j < n; ++j) out_.promotions += policy_->promotions(static_cast<JobIndex>(j));
  return std::move(out_);
}

}  // namespace

ClusterOutcome run_preemptive(std::span<const core::JobSpec> jobs, const std::string& policy,
                              const PreemptiveOptions& opts) {
  Engine e(jobs, policy, opts);
  return e.run();
}

}  // namespace salus::cluster
