#include "cluster/dlas.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

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

  void begin(std::span<const core::JobSpec> jobs) override {
    specs_ = jobs;
    jobs_.assign(jobs.size(), Job{});
    queues_.assign(opts_.dlas_thresholds_ns.size() + 1, {});
    runnable_.clear();
  }

  void arrive(JobIndex j, TimeNs now) override {
    Job& s = jobs_[static_cast<std::size_t>(j)];
    s.since = now;
    s.queue = 0;
    queues_[0].push_back(j);
    runnable_.push_back(j);
  }

  void finish(JobIndex j, TimeNs now) override {
    (void)now;
    erase(queues_[static_cast<std::size_t>(jobs_[static_cast<std::size_t>(j)].queue)], j);
    erase(runnable_, j);
  }

  void update(TimeNs now, std::span<const LeaseJob> view) override {
    const std::size_t last = queues_.size() - 1;
    for (const JobIndex j : runnable_) {
      Job& s = jobs_[static_cast<std::size_t>(j)];
      const LeaseJob& v = view[static_cast<std::size_t>(j)];
      const TimeNs dt = now - s.since;
      const TimeNs from = s.since;
      s.since = now;
      if (v.running) {
        const TimeNs run = std::max<TimeNs>(0, now - std::max(from, v.busy_from));  // a restart is not service
        s.executed += run;
        s.total += run;
        const auto q = static_cast<std::size_t>(s.queue);
        if (q < last && service(j) >= opts_.dlas_thresholds_ns[q]) move(j, q + 1);
        continue;
      }
      if (s.executed > 0) s.waited += dt;
      if (starving(s)) {
        s.executed = 0;
        s.waited = 0;
        ++s.promotions;
        move(j, 0);
      }
    }
  }

  void order(std::vector<JobIndex>& out) const override {
    for (const std::vector<JobIndex>& q : queues_) out.insert(out.end(), q.begin(), q.end());
  }

  void scheduled(std::span<const LeaseJob> view) override {
    for (std::vector<JobIndex>& q : queues_) {
      std::stable_partition(q.begin(), q.end(), [&](JobIndex j) { return view[static_cast<std::size_t>(j)].running; });
    }
  }

  TimeNs next_change(TimeNs now, std::span<const LeaseJob> view) const override {
    const std::size_t last = queues_.size() - 1;
    TimeNs next = core::kNever;
    for (const JobIndex j : runnable_) {
      const Job& s = jobs_[static_cast<std::size_t>(j)];
      const auto q = static_cast<std::size_t>(s.queue);
      TimeNs at = core::kNever;
      if (view[static_cast<std::size_t>(j)].running) {
        if (q == last) continue;
        const TimeNs base = std::max(now, view[static_cast<std::size_t>(j)].busy_from);
        const TimeNs limit = opts_.dlas_thresholds_ns[q];
        const std::int64_t rate = gpu_time_ ? specs_[static_cast<std::size_t>(j)].gpus : 1;
        if (opts_.dlas_checks == DlasChecks::kExact || rate == 1) {
          // The instant its service reaches the threshold.
          at = base + (limit - service(j) + rate - 1) / rate;
        } else {
          // Tiresias: (queue_limit - executed_time) / num_gpu in whole seconds, floored (Python
          // 2's integer division), with executed_time the run time, not times the GPUs.
          at = base + (limit - s.executed) / (rate * core::kNsPerS) * core::kNsPerS;
        }
      } else if (opts_.dlas_starvation > 0 && q > 0 && s.total > 0 && s.executed > 0) {
        at = now + (starve_after(s) - s.waited);
      }
      next = std::min(next, std::max(at, now + 1));
    }
    return next;
  }

  std::int64_t promotions(JobIndex j) const override { return jobs_[static_cast<std::size_t>(j)].promotions; }

 private:
  struct Job {
    TimeNs since = 0;      // the instant its times were last brought up to
    TimeNs executed = 0;   // run time since it arrived or was last promoted (Tiresias' executed_time)
    TimeNs total = 0;      // run time since it arrived (total_executed_time)
    TimeNs waited = 0;     // waiting time after it first ran, since its last promotion (last_pending_time)
    std::int32_t queue = 0;
    std::int64_t promotions = 0;
  };

  TimeNs service(JobIndex j) const {
    const Job& s = jobs_[static_cast<std::size_t>(j)];
    return gpu_time_ ? s.executed * specs_[static_cast<std::size_t>(j)].gpus : s.executed;
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
  bool starving(const Job& s) const {
    return opts_.dlas_starvation > 0 && s.queue > 0 && s.total > 0 && s.executed > 0 && s.waited >= starve_after(s);
  }
  void move(JobIndex j, std::size_t to) {
    Job& s = jobs_[static_cast<std::size_t>(j)];
    erase(queues_[static_cast<std::size_t>(s.queue)], j);
    s.queue = static_cast<std::int32_t>(to);
    queues_[to].push_back(j);
  }
  static void erase(std::vector<JobIndex>& v, JobIndex j) {
    const auto it = std::find(v.begin(), v.end(), j);
    SALUS_INVARIANT(it != v.end(), "dlas: a job is in the list it leaves", std::to_string(j));
    v.erase(it);
  }

  LeaseOptions opts_;
  bool gpu_time_;
  std::span<const core::JobSpec> specs_;
  std::vector<Job> jobs_;
  std::vector<std::vector<JobIndex>> queues_;
  std::vector<JobIndex> runnable_;  // arrived and not finished, in arrival order
};

}  // namespace

std::unique_ptr<LeasePolicy> make_dlas(const LeaseOptions& opts, bool gpu_time) {
  return std::make_unique<Dlas>(opts, gpu_time);
}

}  // namespace salus::cluster
