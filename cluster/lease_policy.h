#pragma once
/// Cluster policies that lease whole GPUs to jobs and take them back: the preemptive policies of
/// the literature (Tiresias' discretised 2D-LAS, ...), run by preemptive.h's engine. Unlike the
/// per-GPU policies (policies/: one core::Scheduler per GPU, a job bound to its GPU for life),
/// such a policy decides at every instant which jobs hold GPUs; a job it passes over is
/// preempted, and placed again, anywhere, when it is chosen again (docs/cluster.md, "Preemptive
/// cluster policies"). One registry table (core/registry.h).
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/job.h"
#include "core/registry.h"
#include "core/units.h"

namespace salus::cluster {

/// What a lease policy sees of each job at an instant (preemptive.h keeps it).
struct LeaseJob {
  std::int32_t gpus = 1;     ///< GPUs it needs (JobSpec::gpus)
  bool running = false;      ///< holds its GPUs: since the last decision and, after scheduled(), from now on
  /// While running: the instant it progresses from (its start, or the end of its restart after a
  /// preemption: PreemptiveOptions::restart_cost_ns). Attained service counts from there: a job
  /// restoring its checkpoint is not charged for it, so a restart cost cannot have jobs preempt
  /// one another forever without progress.
  core::TimeNs busy_from = 0;
};

/// When 2D-LAS looks at a running job's attained service (LeaseOptions::dlas_checks).
enum class DlasChecks {
  /// At the instant it reaches a threshold (the definition).
  kExact,
  /// Where Tiresias' simulator looks: at its events, the next one (with no arrival or finish) at
  /// now + (threshold - run time) / GPUs in whole seconds, floored, as its code computes it for
  /// dlas-gpu. For a 1-GPU job the two agree; a k-GPU job is demoted at a later instant.
  kTiresias,
};

/// The policies' options (salus-sim --dlas-thresholds, --dlas-starvation, --dlas-checks).
struct LeaseOptions {
  /// 2D-LAS: the attained service at which a job leaves queue i for queue i + 1, increasing
  /// (GPU-time for dlas-gpu, time for dlas). Default: Tiresias' (jobs.py queue_limit with
  /// num_queue 3: 3,250 and 7,200 s, so three queues).
  std::vector<core::TimeNs> dlas_thresholds_ns = {3250 * core::kNsPerS, 7200 * core::kNsPerS};
  /// Tiresias' solve_starvation knob: a waiting job below the first queue goes back to it once
  /// it has waited, since it first ran (or was last promoted), this many times its run time
  /// since then; its attained service starts again from 0. 0: never (Tiresias' dlas-gpu).
  double dlas_starvation = 0;
  DlasChecks dlas_checks = DlasChecks::kExact;
};

class LeasePolicy {
 public:
  virtual ~LeasePolicy() = default;
  virtual std::string_view name() const = 0;
  /// The trace, before any job arrives (jobs are indexed by it).
  virtual void begin(std::span<const core::JobSpec> jobs) = 0;
  /// Job j arrives at `now` (after the finishes at `now`, before update()).
  virtual void arrive(core::JobIndex j, core::TimeNs now) = 0;
  /// Job j finished at `now` (before the arrivals at `now`).
  virtual void finish(core::JobIndex j, core::TimeNs now) = 0;
  /// The instant's own decisions, before GPUs are given: the time since the last instant is
  /// accounted to each job as it was then (jobs[j].running), then queues change (demotions,
  /// promotions).
  virtual void update(core::TimeNs now, std::span<const LeaseJob> jobs) = 0;
  /// Every job waiting or running, best first: the engine gives GPUs in this order, passing over
  /// a job that does not fit (it waits, or is preempted if it ran).
  virtual void order(std::vector<core::JobIndex>& out) const = 0;
  /// GPUs were given: jobs[j].running is each job's state from now on.
  virtual void scheduled(std::span<const LeaseJob> jobs) = 0;
  /// The next instant after `now` at which update() may change the order with no arrival or
  /// finish before it; core::kNever when none.
  virtual core::TimeNs next_change(core::TimeNs now, std::span<const LeaseJob> jobs) const = 0;
  /// Times job j went back to the first queue (Tiresias' promotions), for the outputs.
  virtual std::int64_t promotions(core::JobIndex j) const {
    (void)j;
    return 0;
  }
};

using LeasePolicyFactory = std::unique_ptr<LeasePolicy> (*)(const LeaseOptions&);
using LeaseRegistry = core::Registry<LeasePolicyFactory>;

/// dlas-gpu, dlas.
const LeaseRegistry& lease_registry();
/// Whether `name` is a preemptive cluster policy (the engine of preemptive.h runs it).
bool is_lease_policy(std::string_view name);
/// Throws core::InputError listing the valid names.
std::unique_ptr<LeasePolicy> make_lease_policy(std::string_view name, const LeaseOptions& opts);
/// What the run assumes, for its notes: the policy's thresholds, knob and checks.
std::vector<std::string> lease_notes(std::string_view name, const LeaseOptions& opts);

}  // namespace salus::cluster
