#pragma once
/// gpus_needed's early stop: while a cluster of N GPUs runs the trace, a lower bound on the
/// average it will end with, from what has certainly happened by the simulated time `now`; once
/// the bound exceeds the bound the search holds N to, N misses, and the run is stopped
/// (experiments/README.md, gpus_needed). A speed mechanism only: a run stopped by it would have
/// missed the bound had it gone on (tests/experiments/bound_watch_test.cpp compares the answers
/// with and without it).
#include <cstdint>
#include <span>
#include <vector>

#include "core/job.h"
#include "core/scheduler.h"
#include "core/units.h"

namespace salus::experiments {

/// Which average the search bounds: JCT (finish - arrival) or queuing (first start - arrival),
/// both over the jobs done (core::compute_metrics).
enum class BoundKind { kAvgJct, kAvgQueuing };

/// Thrown out of the simulator's loop by BoundWatch::hook when the run certainly misses the
/// bound; gpus_needed catches it. Not a std::exception: nothing between the hook and gpus_needed
/// may take it for an error.
struct BoundMissed {
  core::TimeNs at_ns = 0;     ///< the simulated time at which the run was stopped
  double lower_bound_s = 0;   ///< the average it would have ended with is at least this (seconds)
};

/// The lower bound at a progress call, with the bound it held: the run misses when
/// `lower_bound_s > bound_s` (compared as core::compute_metrics computes the average).
///
/// At `now`, for each job that has arrived and is not rejected: JCT >= min(now, finish) -
/// arrival, queuing >= min(now, first start) - arrival (a time not yet reached counts as now).
/// Jobs not yet arrived count 0. The sum is divided by the jobs not rejected so far. Valid for a
/// run that meets the bound, where every job ends done or rejected (gpus_needed's meets):
/// rejection happens only at arrival, so each arrived job counted ends done and in the average,
/// and the average's divisor, the jobs done, is at most the jobs not rejected so far. A run that
/// does not end with every job done or rejected misses whatever its average.
///
/// With run floors (the constructor's `floor_ns`, JCT only), a job cannot finish sooner than its
/// floor f after it starts (its iterations run one after another, none faster than solo):
///  - an open job counts max(now, start + f) - arrival, its start the first start shown if
///    reached by now, else now;
///  - a job not yet arrived counts min(f, B), B the bound. It may yet be rejected, leaving the sum
///    and the divisor; capped at B, the decision stays sound: if the sum with every such job
///    exceeds B x the divisor, removing any r of them removes at most r x B from the sum and r
///    from the divisor, so the average left still exceeds B. The lower bound itself is then the
///    average's only where no job is rejected after `now`.
class BoundWatch {
 public:
  /// `jobs` outlives the watch (the trace the run is given, in its order). `floor_ns`: empty, or
  /// per job the least time from its first start to its finish (solo_floors where the run's
  /// iterations are never faster than the profile); read for kAvgJct only.
  BoundWatch(std::span<const core::JobSpec> jobs, BoundKind kind, double bound_s, std::vector<core::TimeNs> floor_ns = {});

  /// The lower bound from the states a progress hook is shown (one per job; a cluster's gang job:
  /// its replicas' merged, cluster::ClusterOptions::progress). Calls must come from one run,
  /// `p.now` non-decreasing: what has ended by `now` is kept and not looked at again, so a call
  /// costs the jobs arrived and not yet ended plus the jobs arrived since the last call.
  double lower_bound_s(const core::Progress& p);

  /// Throws BoundMissed when the lower bound at `p` exceeds the bound.
  void check(const core::Progress& p);

  double bound_s() const { return bound_s_; }

 private:
  /// The time the bounded event happened to job j, or core::kNever if it has not in the states
  /// shown.
  core::TimeNs event_ns(std::span<const core::JobState> states, std::size_t job) const;

  std::span<const core::JobSpec> jobs_;
  BoundKind kind_;
  std::vector<core::TimeNs> floor_ns_;    // per job, or empty
  double bound_s_;
  std::vector<std::size_t> order_;        // job indices by arrival
  std::size_t cursor_ = 0;                // order_[0, cursor_) have arrived by the last call
  core::Int128 future_ns_ = 0;            // sum of min(floor, bound) over order_[cursor_, end)
  core::TimeNs cap_ns_ = 0;               // the bound in whole nanoseconds, at most the bound
  std::vector<std::size_t> open_;         // arrived, not rejected, their event not yet happened
  core::Int128 closed_ns_ = 0;            // sum of event - arrival over the jobs whose event happened
  std::int64_t rejected_ = 0;             // jobs seen rejected
};

/// Per job, the least time from its first start to its finish in a run whose iterations each take
/// at least the profile's time (no profile noise, no GPU kind faster than the profile: gpus_needed's
/// uniform clusters): every iteration after the other at solo speed, the first with its extra.
std::vector<core::TimeNs> solo_floors(std::span<const core::JobSpec> jobs);

/// A progress hook for a run: calls `also` (the progress meter, or nothing), then watch.check.
/// The watch outlives the run.
core::ProgressHook watch_hook(BoundWatch& watch, core::ProgressHook also);

}  // namespace salus::experiments
