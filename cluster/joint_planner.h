#pragma once
/// The joint and turn plans of gang jobs' GPUs, a speed mechanism of the cluster
/// (ClusterOptions::tuning.gang_plans), computed in the instant's planning phase (after the
/// placement, before any GPU dispatches) and handed to each GPU at its start_plan. The rounds
/// themselves are joint_plan.h's; this class keeps what it planned and asks the cluster only
/// through JointPlanner::Host.
///
/// Under FAIR and LAS a gang replica shares its GPU's one lane with 1-GPU jobs, which take their
/// turns with it one run at a time; without a plan, every such run is an instant of the loop. The
/// order of the turns on each GPU depends only on iteration counts (the policy's rotation:
/// Policy::plan, the replica one of its entries), never on timing, so from an instant where every
/// GPU of the gang decides (the end of a gang run: its replicas complete together) each GPU's
/// sequence of runs is fixed, and the only coupling between them is lock-step: a gang run starts
/// when the replica's turn has come on every GPU (S = the latest of the GPUs' R_a, each GPU's lane
/// held from its R_a), runs m iterations, m the fewest any GPU's turn holds (the GPUs whose turn
/// holds more choose the replica again at its end), and its first iteration ends when the slowest
/// replica's does (the job's first-iteration extra, and each lane's switching cost where its last
/// job was another), the later ones one solo iteration apart (each lane runs alone on its GPU).
/// That recurrence is computed here round by round, O(GPUs) per gang run plus O(jobs of a lane)
/// per 1-GPU run, into one plan per GPU (the runs, switches, lane time and first start per job,
/// exactly as the loop counts them run by run), all ending at one gang run's end E:
///  - not speculative: E is at or before the next arrival (nothing can be bound to these GPUs
///    before it), no gang job waiting in the cluster queue can be placed on them (each hosts a
///    gang), and there is no joint plan while the queue holds a job one of these GPUs admits
///    (Host::plannable), so nothing touches them before E: no rewind;
///  - it stops before the round in which a 1-GPU job would finish (its finish would change the
///    GPU's memory), or at the end of the gang run that finishes the gang (all replicas finish at
///    E, as run by run);
///  - every GPU of the gang takes part (touched at this instant, its lane the only one and idle,
///    Scheduler::offer_plan gives its rotation); the plans are computed in the instant's planning
///    phase (JointPlanner::plan: after the placement, before any dispatch) and handed to each at its
///    start_plan, checked against the offer it makes then. No plan without at least one whole
///    gang run.
/// At E every GPU of the gang gets its plan's completion and decides, as at a gang run's end; the
/// Gang's own state is as a gang run's end leaves it (not running, nothing chosen).
///
/// Turn plans:
/// A GPU of a gang job whose replica is not chosen there, while no joint plan runs (the gang's
/// other GPUs wait for it with the replica chosen, or chose at other instants, or their joint plan
/// did not fit): its rotation's 1-GPU runs up to the replica's turn are fixed (the order depends
/// only on iteration counts) and nothing else of the cluster depends on them but the instants they
/// end at (for the cluster queue's gang jobs: the trace, as a joint plan's), so they are planned
/// in one go (joint::run_before_turn) and the GPU decides at the last one's end, as run by run.
/// Not speculative, as a joint plan: it ends by the next arrival, the GPU hosts a gang (no gang
/// job is placed on it) and admits nothing the queue holds; and it stops before a run that would
/// finish a job. Handed over at the GPU's start_plan as a joint plan's part is (JointPlanner::take).
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "cluster/joint_plan.h"
#include "core/executor.h"
#include "core/job.h"
#include "sim/sim_executor.h"

namespace salus::cluster {

class JointPlanner {
 public:
  /// A gang job as the plans read it.
  struct Gang {
    bool running = false;  ///< a gang run in flight
    bool chosen = false;   ///< some replica chosen (a gang run forming)
    std::span<const std::int32_t> gpus;
    std::span<const core::JobIndex> replicas;
    std::span<const char> is_chosen;  ///< per replica
    std::string_view id;  ///< the job's id (invariants)
  };
  /// What the planner keeps per GPU, held by the cluster with the GPU's runtime (built at its
  /// first use, so a cluster of a million GPUs does not size this by them).
  struct GpuState {
    core::PlanDispatch offer;  ///< what its loop offered (Scheduler::offer_plan)
    core::PlanReport report;   ///< what its plan does
    core::TimeNs at = -1;      ///< the instant a plan was computed for it, until its start_plan (-1: none waiting)
    core::TimeNs end = -1;     ///< the end of the last plan it ran (never rewound)
  };
  /// The plans' counters (ClusterOutcome's).
  struct Counters {
    std::int64_t joint_plans = 0, joint_gang_runs = 0, joint_paced_plans = 0, turn_plans = 0, turn_plan_runs = 0;
    std::int64_t joint_period_rounds = 0;  ///< gang runs skipped as whole periods (joint::plan_rounds)
    std::int64_t turn_jumped = 0;  ///< turn plans' iterations taken in closed form (joint::run_before_turn)
    std::int64_t gang_iterations = 0;
  };
  /// What the plans read of the cluster.
  class Host {
   public:
    virtual ~Host() = default;
    /// The gang GPU g hosts a replica of (-1: none), and whether that replica is admitted there.
    virtual std::int32_t gang_on(std::int32_t g) const = 0;
    virtual bool gang_admitted(std::int32_t g) const = 0;
    virtual Gang gang(std::int32_t k) const = 0;
    virtual GpuState& gpu_state(std::int32_t g) = 0;
    /// GPU g's simulator when it can take part in a plan from t0 (stepped at t0, nothing running,
    /// admitting nothing the cluster queue holds), else null.
    virtual const sim::SimExecutor* plannable(std::int32_t g, core::TimeNs t0) = 0;
    /// GPU g's loop's plan from t0 (Scheduler::offer_plan) into `out`; false when it offers none.
    virtual bool offer(std::int32_t g, core::TimeNs t0, core::PlanDispatch& out) = 0;
    /// The next arrival in the trace (core::kNever: none).
    virtual core::TimeNs next_arrival() const = 0;
  };

  /// The planning phase of instant `now`: the joint plans of the gangs of the GPUs touched, and
  /// the turn plans of those GPUs where their gang has none. A template over the cluster's type H
  /// (a final class deriving from Host), so that the tests asked of every GPU touched at every
  /// instant inline; the plans themselves are computed out of line.
  template <class H>
  void plan(core::TimeNs now, std::span<const std::int32_t> touched, H& host) {
    static_assert(std::is_base_of_v<Host, H>);
    for (const std::int32_t g : touched) {
      if (!host.gang_admitted(g)) continue;
      const std::int32_t k = host.gang_on(g);
      const auto i = static_cast<std::size_t>(k);
      if (i >= gang_at_.size()) {
        gang_at_.resize(i + 1, -1);
        gang_joint_.resize(i + 1, 0);
      }
      const Gang gang = host.gang(k);
      if (gang_at_[i] != now) {
        gang_at_[i] = now;
        gang_joint_[i] = !gang.running && !gang.chosen && plan_gang(gang, now, host) ? 1 : 0;
      }
      // A turn plan computed at this instant's first asking stands.
      if (gang_joint_[i] == 0 && !gang.running && host.gpu_state(g).at != now) turn_plan(g, gang, now, host);
    }
  }
  /// Whether GPU g has a plan computed at `now` waiting for its start_plan.
  static bool ready(const GpuState& s, core::TimeNs now) { return s.at == now; }
  /// GPU g's start_plan at `now` with its loop's plan `p`: false when none was computed for it;
  /// else `report` is the plan computed (p must be the offer it was computed from).
  bool take(std::int32_t g, core::TimeNs now, const core::PlanDispatch& p, core::PlanReport& report, Host& host);
  /// Every GPU given a plan at `now` started it (its loop offered it, so it takes it).
  void check_taken(core::TimeNs now, Host& host);
  bool waiting() const { return !waiting_.empty(); }
  /// Gang k ended: its entry starts afresh for the next gang given its index.
  void forget(std::int32_t k) {
    if (static_cast<std::size_t>(k) >= gang_at_.size()) return;
    gang_at_[static_cast<std::size_t>(k)] = -1;
    gang_joint_[static_cast<std::size_t>(k)] = 0;
  }
  const Counters& counters() const { return counters_; }
  /// Whether plans skip whole periods of rounds (ClusterOptions::tuning.periodic_plans).
  void skip_periods(bool on) { scratch_.skip_periods = on; }
  /// Whether turn plans jump in closed form (ClusterOptions::tuning.turn_jumps).
  void jump_turns(bool on) { scratch_.jump_turns = on; }

 private:
  /// The joint plan of an idle gang's GPUs (no run in flight, no replica chosen).
  bool plan_gang(const Gang& gang, core::TimeNs t0, Host& host);
  bool turn_plan(std::int32_t g, const Gang& gang, core::TimeNs now, Host& host);
  bool offer_lane(std::int32_t g, core::JobIndex replica, core::TimeNs t0, joint::Lane& lane, Host& host);

  std::vector<core::TimeNs> gang_at_;  // per gang: the instant a joint plan was last decided for its GPUs
  std::vector<char> gang_joint_;       // and whether one was computed then
  // Scratch: every job of every GPU's plan (slots), each GPU's lane, the rounds' (to take one
  // back); and the GPUs whose plan waits for their start_plan.
  std::vector<joint::Slot> slots_;
  std::vector<joint::Lane> lanes_;
  joint::Scratch scratch_;
  std::vector<std::int32_t> waiting_;
  Counters counters_;
};

}  // namespace salus::cluster
