#pragma once
/// Cluster policies that lease whole GPUs to jobs and take them back: the preemptive policies of
/// the literature (Tiresias' discretised 2D-LAS, ...), run by preemptive.h's engine. Unlike the
/// per-GPU policies (policies/: one core::Scheduler per GPU, a job bound to its GPU for life),
/// such a policy decides at every instant which jobs hold GPUs; a job it passes over is
/// preempted, and placed again, anywhere, when it is chosen again (docs/cluster.md, "Preemptive
/// cluster policies"). One registry table (core/registry.h).
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/cluster_file.h"
#include "core/job.h"
#include "core/registry.h"
#include "core/units.h"

namespace salus::cluster {

/// What a lease policy decides at an instant (LeasePolicy::decide).
struct LeaseDecision {
  /// Empty again, its vectors' capacity kept (an engine's scratch, one per instant).
  void clear() {
    preempt.clear();
    start.clear();
    start_kind.clear();
    start_until.clear();
    extend.clear();
  }
  std::vector<core::JobIndex> preempt;  ///< running jobs that stop now
  std::vector<core::JobIndex> start;    ///< waiting jobs that start now, in the policy's order
  /// On a cluster with GPU kinds (a policy whose runs_kinds()), parallel to `start`: the kind
  /// (ClusterSpec::kinds index) whose GPUs each job starts on. Empty otherwise.
  std::vector<std::int32_t> start_kind;
  /// Leases that end (round-based policies): parallel to `start` when not empty, the instant each
  /// started job stops progressing and holds its GPUs idle until the policy decides again
  /// (core::kNever: it runs on). Empty: every start runs on.
  std::vector<core::TimeNs> start_until;
  /// Running jobs that keep their GPUs under a new lease ending at the instant given: progress
  /// resumes now if their last lease had ended.
  std::vector<std::pair<core::JobIndex, core::TimeNs>> extend;
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
  /// Speed only: false makes every decision walk every job, as Tiresias does (the differential
  /// test compares; cluster/dlas.cpp says why the short walk gives the same answer); with lanes
  /// beneath, every policy's decision through the whole LeaseRoom::place (max-min's too).
  bool dlas_short_walks = true;
  /// max-min: the round length (Gavel's time_per_iteration, 360 s by default).
  core::TimeNs round_ns = 360 * core::kNsPerS;
  /// max-min: the least time between two computations of the allocation (Gavel's
  /// minimum_time_between_allocation_resets, 1,920 s by default; 0: at every round whose jobs
  /// changed). A job that arrives between them has no share until the next one.
  core::TimeNs reset_ns = 1920 * core::kNsPerS;
};

/// Where the jobs a policy leases go when each GPU runs them in Salus lanes (salus-sim
/// --gpu-sharing; preemptive.h, "Lanes beneath"): a GPU then holds as many leased jobs as its
/// memory admits, so whether a job keeps or gets GPUs is the engine's to say, not a count of
/// GPUs. The policy hands it every job in its order and takes its answer as its decision.
class LeaseRoom {
 public:
  virtual ~LeaseRoom() = default;
  /// `order`: every job in the system, running or waiting, highest priority first. Appends to
  /// out.start the waiting jobs that start and to out.preempt the running ones that stop, each
  /// in that order.
  virtual void place(std::span<const core::JobIndex> order, LeaseDecision& out) = 0;
  /// The short walk (LeaseOptions::dlas_short_walks): the waiting jobs alone, in order, each with
  /// whether a running job comes after it in the order. Places each beside every job already on
  /// the GPUs (displacing none) and appends those placed to out.start; returns false, and leaves
  /// `out` as it was, where a job that fits nowhere so has a running job after it (which place()
  /// might preempt for it): the caller then makes the whole walk. Where it returns true its answer
  /// is place()'s (every running job kept).
  virtual bool place_waiting(std::span<const std::pair<core::JobIndex, bool>> waiting, LeaseDecision& out) = 0;
};

class LeasePolicy {
 public:
  virtual ~LeasePolicy() = default;
  virtual std::string_view name() const = 0;
  /// The trace (jobs are indexed by it), the cluster's GPUs, and the time a job that starts again
  /// after a preemption spends restoring before it progresses (not service: a restart cannot have
  /// jobs preempt one another forever with none progressing).
  virtual void begin(std::span<const core::JobSpec> jobs, const ClusterSpec& cluster, core::TimeNs restart_ns) = 0;
  /// Whether it runs clusters with GPU kinds (LeaseDecision::start_kind); the engine refuses them
  /// otherwise.
  virtual bool runs_kinds() const { return false; }
  /// Job j arrives at `now` (after the finishes at `now`, before decide()).
  virtual void arrive(core::JobIndex j, core::TimeNs now) = 0;
  /// Job j, running, finished at `now` (before the arrivals at `now`).
  virtual void finish(core::JobIndex j, core::TimeNs now) = 0;
  /// The instant's decision, after its finishes and arrivals: the running jobs to preempt and the
  /// waiting jobs to start, whose GPUs (by count) the free ones after the preemptions hold. The
  /// policy takes it as done (a start the engine cannot place comes back through unplaced()).
  /// `out` comes empty (the engine clears it).
  virtual void decide(core::TimeNs now, LeaseDecision& out) = 0;
  /// A job decide() started found no free GPUs it can use (GPUs of several sizes): it waits, as
  /// it did before.
  virtual void unplaced(core::JobIndex j, core::TimeNs now) = 0;
  /// The next instant after `now` at which decide() may change something with no arrival or
  /// finish before it (a demotion, a promotion, where Tiresias looks); core::kNever when none.
  virtual core::TimeNs next_change(core::TimeNs now) = 0;
  /// Whether it decides through a LeaseRoom (lanes beneath it) when given one; the engine
  /// refuses lanes beneath a policy that does not.
  virtual bool takes_room() const { return false; }
  /// The room its decisions go through from now on (null: it counts GPUs itself).
  void set_room(LeaseRoom* room) { room_ = room; }
  /// Times jobs went back to the first queue (Tiresias' promotions), summed over the jobs
  /// finished, for the outputs.
  virtual std::int64_t promotions() const { return 0; }

 protected:
  LeaseRoom* room_ = nullptr;
};

using LeasePolicyFactory = std::unique_ptr<LeasePolicy> (*)(const LeaseOptions&);
using LeaseRegistry = core::Registry<LeasePolicyFactory>;

/// dlas-gpu, dlas, max-min.
const LeaseRegistry& lease_registry();
/// Whether `name` is a preemptive cluster policy (the engine of preemptive.h runs it).
bool is_lease_policy(std::string_view name);
/// Throws core::InputError listing the valid names.
std::unique_ptr<LeasePolicy> make_lease_policy(std::string_view name, const LeaseOptions& opts);
/// What the run assumes, for its notes: the policy's thresholds, knob and checks, or rounds.
std::vector<std::string> lease_notes(std::string_view name, const LeaseOptions& opts);

/// A cluster's GPU kinds as the lease policies and their engine see them, built once per run: a
/// cluster with no kinds is one kind, 0, at speed 1 (the engine refuses GPUs of other speeds
/// there).
class LeaseKinds {
 public:
  explicit LeaseKinds(const ClusterSpec& cluster);
  /// Job `spec`'s speed (ppm, kSpeedOne: its iter_ns) on the GPUs of kind k: its own
  /// (JobSpec::kind_speeds) or the kind's; 0 where it cannot run there (its gpu_kinds leave the
  /// kind out, its own speed there is 0, or no GPU of the kind has room for P + E).
  std::int64_t speed(const core::JobSpec& spec, std::int32_t k) const;
  /// The GPUs of kind k that job `spec` can run on: those with room for its P + E where its
  /// speed there is not 0 (the engine rejects at arrival a job with fewer than its width on
  /// every kind).
  std::size_t able(const core::JobSpec& spec, std::int32_t k) const;

 private:
  const ClusterSpec* cluster_;
  std::vector<std::map<core::Bytes, std::size_t>> by_memory_;  // per kind: its GPUs by memory
};
/// Time to do `work` (ns at speed 1) at `speed_ppm`, rounded up; work done in `elapsed` at it,
/// rounded down (so a run of lease_time(w, v) does at least w).
core::TimeNs lease_time(core::TimeNs work, std::int64_t speed_ppm);
core::TimeNs lease_work(core::TimeNs elapsed, std::int64_t speed_ppm);

}  // namespace salus::cluster
