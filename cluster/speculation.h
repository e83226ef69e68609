#pragma once
/// Speculative plans, a speed mechanism of the cluster (ClusterOptions::tuning.plans, on more
/// than one GPU): a GPU runs its policy's plan past arrivals the placement may give it, and is
/// rewound when one is bound to it. This unit keeps the speculation's state (per GPU: its horizon
/// clock and a rewind's replay; per run: where in the arrival order plans must stop) and runs a
/// rewind through Speculation::Host.
///
/// A GPU running a plan changes in nothing the rest of the cluster sees: its admitted jobs and
/// memory stay as they are until the plan's last iteration, the only one that can finish a job,
/// so its answers to the placement (can_admit_now, free_bytes, jobs, util) are those of the
/// plan's start, and the cluster queue, tried on the GPUs touched at an instant, finds it
/// refusing every queued job at every instant of the plan: a job queued before the plan's start
/// it refused then (or there is no plan, below), one queued since it refused at its arrival.
/// Plans are speculative: one runs past arrivals that the placement may give to this GPU. Should
/// one be bound to it at an instant a inside its plan, touch() rewinds it (Speculation::rewind): the
/// plan is taken back and the GPU is stepped privately from the plan's start up to a with plans
/// ending by a, exactly as it would have been stepped had the plan been given deadline a (nothing
/// it does before a is seen by the rest of the cluster: no job finishes there, since the plan
/// would have ended at that finish). What a plan cannot run past is what touches the GPU without
/// a bind, or binds in a way the rewind does not see coming:
///  - a gang job's arrival: it may wait in the cluster queue, and while it waits it is tried on
///    every GPU at every instant, the instants of this GPU's boundaries included;
///  - on largest_gpu_, a job given to it without a choice: on a one-GPU cluster every job is, so
///    the deadline is run_schedule's (the next arrival) and so are the plans; elsewhere such jobs
///    are rare (only the largest GPU holds them), and stopping there costs little;
/// and there is no plan (the deadline is now) while a gang job waits in the queue where that keeps
/// the GPU from planning (Cluster::gang_queue_blocks: under EASY, or a policy other than FAIR and
/// LAS), or while the queue holds a job this GPU can admit now (it refused them at this instant's
/// placement, but its lane may have moved since: schedule settles lanes after placement). The queue is checked once
/// per demand (P, E), FindLane being monotone in both; the checks are bounded, and past the bound
/// the answer is now, which is as safe and only shorter.
///
/// GPU g, whose plan started at s (its clock) runs past now, is bound a job at now. Take the
/// plan back, dispatch again at s with plans ending by now, and step it through its own events
/// in (s, now) as run()'s loop would have: take the completions, schedule (no job finishes, so
/// there is nothing to split, and the loop's event flag is false). Arrivals
/// between s and now went to other GPUs or the queue (none was bound to g, this is the first
/// bind since s; none was a gang job or given to g without a choice: Cluster::plan_deadline), and
/// the queue holds nothing g can admit (the paragraph above), so at those instants the cluster
/// has nothing else for g. What ends exactly at now is left to touch().
#include <algorithm>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "core/job.h"
#include "core/units.h"

namespace salus::cluster {

class Speculation {
 public:
  /// What the speculation keeps per GPU, held by the cluster with the GPU's runtime.
  class GpuState {
   public:
    /// A job was bound to the GPU at t (the horizon's clock).
    void note_bind(core::TimeNs t) {
      if (last_bind_ >= 0) bind_interval_ = (3 * bind_interval_ + (t - last_bind_)) / 4;
      last_bind_ = t;
    }
    /// While a rewind replays the GPU: the instant its plans end by (core::kNever: none).
    core::TimeNs replay_until() const { return replay_until_; }
    bool replaying() const { return replay_until_ != core::kNever; }
    /// The deadline of a plan that starts at `now` with the policy's `deadline`, where the
    /// binding rule lets it run to `rule` (the cluster's plan deadline): in a replay, the replay's
    /// end; else the rule's, and on more than one GPU (`speculative`) at most the horizon.
    core::TimeNs plan_deadline(core::TimeNs now, core::TimeNs deadline, core::TimeNs rule, bool speculative) const {
      if (replaying()) return std::min(deadline, replay_until_);
      deadline = std::min(deadline, rule);
      return speculative ? std::min(deadline, now + horizon(now)) : deadline;
    }

   private:
    friend class Speculation;
    /// The speculation horizon: a plan runs at most this long past its start. A plan taken back
    /// (rewind) wastes what the simulator computed past the bind, once per bind; each plan costs
    /// its set-up, O(jobs in the lane). Where the simulator steps a plan's iterations one by one
    /// (LAS: 60 M of its 1.5 G iterations on the README's 100k-job first-fit run), unbounded
    /// plans wasted 0.83 G iterations in rewinds; where it counts them in closed form (FAIR) short
    /// plans cost more in set-ups. The horizon is four times the time between binds to this GPU (a
    /// moving average, or the time since the last bind when longer): on that run, one run each,
    /// 2 to 32 times were within the machine's noise of each other (FAIR 7.4-9.0 s, LAS 6.6-7.9 s),
    /// 1/8 took FAIR 20-22 s, and no horizon FAIR 8.3 s and LAS 7.5 s. Any deadline before the
    /// rule's is exact (the loop goes on from the plan's end, run by run or with another plan), so
    /// the horizon sets speed only, never a result.
    static constexpr core::TimeNs kMinHorizon = core::kNsPerMs;
    core::TimeNs horizon(core::TimeNs now) const {
      return std::max(kMinHorizon, 4 * std::max(bind_interval_, last_bind_ >= 0 ? now - last_bind_ : 0));
    }
    core::TimeNs replay_until_ = core::kNever;
    core::TimeNs last_bind_ = -1;
    core::TimeNs bind_interval_ = core::kNsPerS;
  };

  /// What a rewind does to a GPU.
  class Host {
   public:
    virtual ~Host() = default;
    virtual GpuState& speculation(std::int32_t g) = 0;
    /// GPU g's clock (its simulator's).
    virtual core::TimeNs clock(std::int32_t g) const = 0;
    /// Takes back the plan GPU g dispatched at its clock, and dispatches its lane again there
    /// (Scheduler::replan).
    virtual void replan(std::int32_t g, core::TimeNs t) = 0;
    /// GPU g's next completion (its simulator's).
    virtual core::TimeNs next_completion(std::int32_t g) const = 0;
    /// Steps GPU g alone at t, as the run's loop would: its completions of t taken (none may
    /// finish a job), then its schedule with no event.
    virtual void step_alone(std::int32_t g, core::TimeNs t) = 0;
  };

  /// The run's arrival order (input jobs), and which of them a plan on the largest GPU cannot run
  /// past besides the gang jobs (those given to it without a choice).
  void begin(std::span<const core::JobSpec> jobs, std::span<const core::JobIndex> order,
             const std::function<bool(core::JobIndex)>& given_to_largest);
  /// The arrival of the first job from position `cursor` of the arrival order on that a plan
  /// cannot run past: a gang job's, and on the largest GPU also one given to it without a choice
  /// (core::kNever: none).
  core::TimeNs stop(std::size_t cursor, bool largest) const {
    return arrival_at((largest ? stop_largest_ : stop_gang_)[cursor]);
  }
  /// GPU g, whose plan started at its clock and runs past `now`, is bound a job at `now`: the
  /// plan is taken back and the GPU stepped alone from its clock up to `now`, its plans ending by
  /// `now`. What ends exactly at `now` is the caller's.
  void rewind(std::int32_t g, core::TimeNs now, Host& host);
  std::int64_t rewinds() const { return rewinds_; }

 private:
  core::TimeNs arrival_at(std::int32_t pos) const {
    return static_cast<std::size_t>(pos) == order_.size() ? core::kNever
                                                          : jobs_[static_cast<std::size_t>(order_[static_cast<std::size_t>(pos)])].arrival_ns;
  }
  std::span<const core::JobSpec> jobs_;
  std::span<const core::JobIndex> order_;
  // From each position of the arrival order: the position of the first gang job at or after it
  // (stop_gang_), and of the first gang job or job given to the largest GPU without a choice
  // (stop_largest_); n where there is none.
  std::vector<std::int32_t> stop_gang_, stop_largest_;
  std::int64_t rewinds_ = 0;
};

}  // namespace salus::cluster
