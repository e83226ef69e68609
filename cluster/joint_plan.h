#pragma once
/// The steps of JointPlanner (joint_planner.h): the joint plans of a gang job's GPUs, computed round by round
/// (cluster/README.md, "Joint plans"). Internal to cluster/: joint_planner.cpp and tests/cluster include it.
///
/// Each GPU's offer (core::PlanDispatch) becomes a lane of slots, one per job of its rotation,
/// the gang's replica among them. A round runs every lane's 1-GPU runs up to the replica's turn
/// (the head of the lane's rotation, least (level, order)); the gang run starts when the turn has
/// come on every GPU, at S = max over the lanes of their clocks, runs m iterations (the fewest any
/// lane's turn holds) and ends at E = S + the first iteration (the most over the lanes of the
/// replica's iteration time there and the switching cost where the lane's last job was another)
/// + the extra + (m - 1) times the slowest replica's iteration time (gang_end); every lane's clock
/// is then E.
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/executor.h"
#include "sim/sim_executor.h"

namespace salus::cluster::joint {

using core::TimeNs;

/// A lane's last job when it is no slot of the lane: another job, or none.
inline constexpr std::size_t kOtherJob = ~std::size_t{0}, kNoSlot = kOtherJob - 1;

/// One job of a GPU's rotation, and what the joint plan has run of it.
struct Slot {
  TimeNs level = 0, step = 1, work = 0, switch_cost = 0, extra = 0;
  std::int64_t order = 0, left = 0;
  std::int64_t iterations = 0;
  TimeNs busy = 0, first_start = -1, switched = 0;
};
/// One GPU's rotation: slots [begin, end), the replica's slot, the lane's last job (a slot, or
/// kOtherJob / kNoSlot) and clock, its runs and switches.
struct Lane {
  std::size_t begin = 0, end = 0, replica = 0, last = 0;
  TimeNs clock = 0;
  std::int64_t runs = 0, switches = 0;
  /// Where the replica's turn came last (run_to_turn): the replica's iterations before it passes
  /// the least of the lane's other slots (none: unbounded; not capped by what it has left). A
  /// gang run of m moves only the replica, by m: turn - m; the replica heads the lane while
  /// turn > 0, with no scan. 0: not known (a 1-GPU run since) or the replica no longer heads.
  std::int64_t turn = 0;
};
/// The replicas' job: the same on every GPU but its iteration time there; `work` is the slowest
/// replica's (each lane's own is its slot's).
struct Replica {
  TimeNs work = 0, switch_cost = 0, extra = 0;
  std::int64_t left = 0;
};
/// The joint plan: its gang runs, their iterations, and its end.
struct Outcome {
  std::int64_t rounds = 0, gang_iterations = 0;
  TimeNs end = 0;
};
/// plan_rounds' scratch, kept between plans, and whether it skips whole periods
/// (`skip_periods`: a speed mechanism, ClusterOptions::tuning.periodic_plans; see plan_rounds).
struct Scratch {
  // The state kept every few rounds (plan_rounds: a round that does not fit is taken back by
  // going back to it).
  std::vector<Slot> kept_slots;
  std::vector<Lane> kept_lanes;
  std::int64_t rounds_again = 0;  ///< rounds run again so, over every plan (a counter for the tests)
  bool skip_periods = true;
  // The state after round `snap_round` (Brent's cycle search: taken at rounds 1, 2, 4, ...).
  std::vector<Slot> snap_slots;
  std::vector<Lane> snap_lanes;
  std::int64_t snap_round = 0, snap_rep_left = 0, snap_gang_iterations = 0, next_snap = 1;
  bool snapped = false;
  std::int64_t periods_skipped = 0;  ///< rounds skipped, over every plan (a counter for the tests)
  /// Whether turn plans jump in closed form (run_before_turn; ClusterOptions::tuning.turn_jumps),
  /// their tables, and the 1-GPU iterations jumped over every plan (a counter for the tests).
  bool jump_turns = true;
  sim::rotation::Tables turn_tables;
  std::int64_t turn_iterations_jumped = 0;
};

/// Appends the offer's jobs as slots (timed as `sim` times them) and returns its lane at `t0`;
/// lane.replica is kNoSlot when the offer does not hold `replica`.
Lane add_lane(const core::PlanDispatch& offer, const sim::SimExecutor& sim, core::JobIndex replica, TimeNs t0,
              std::vector<Slot>& slots);
/// The replica (`out`, its work the slowest replica's iteration time); false when the lanes'
/// replicas differ in iteration time (GPUs of different speeds). The replicas must otherwise
/// stand alike (an invariant, naming `id`).
bool replicas_alike(std::span<const Slot> slots, std::span<const Lane> lanes, const std::string& id, Replica& out);
/// The head's run from the head of its lane: its iterations before `next`, the least of the
/// others (nullptr: none), at most what it has left.
std::int64_t stretch(const Slot& h, const Slot* next);
/// The same, not capped by what it has left (nullptr: the most an int64 holds).
std::int64_t reach(const Slot& h, const Slot* next);
/// The head of the lane's rotation (least (level, order)) and the least of the others (kNoSlot: none).
std::pair<std::size_t, std::size_t> head(std::span<const Slot> slots, const Lane& lane);
/// Runs the lane's 1-GPU runs up to its replica's turn. Returns the turn's length (the replica's
/// stretch), or 0 when the round does not fit: a job would finish, or a run would end past
/// `deadline` (the lane is then torn: plan_rounds goes back to a state it kept).
std::int64_t run_to_turn(std::span<Slot> slots, Lane& lane, TimeNs deadline);
/// The lane's 1-GPU runs before its replica's turn, from its clock, as run_to_turn runs them,
/// but stopping before a run that would finish its job or end past `deadline`, or where the
/// replica's turn has come (JointPlanner's turn plans: one GPU's plan while its gang's other GPUs wait
/// for it). Returns the runs.
///
/// Jumps (Scratch::jump_turns): the 1-GPU jobs below the replica's level rotate among
/// themselves, often for tens of thousands of runs (LAS: jobs far below the gang's attained
/// service). Where only the job of least step can run twice in a row, the iterations below a
/// level are taken in closed form (sim/rotation.h, `jump`, the replica's level its ceiling), then
/// the last run of the jump is taken back, so that the lane stands where a run ends as stepping
/// would leave it, and stepping goes on from there: every count (runs, switches, lane time, each
/// slot's) and the point where the plan stops are those of stepping run by run.
std::int64_t run_before_turn(std::span<Slot> slots, Lane& lane, TimeNs deadline, Scratch& scratch);
/// The end E of a gang run of m iterations started at S = `start`: lock-step, each iteration ends
/// when the slowest replica's does; the first takes `first` (the most, over the lanes, of the
/// replica's iteration time and the switching cost where the lane's last job was another) and
/// the replicas' extra, the others the slowest replica's iteration time.
inline TimeNs gang_end(const Replica& rep, TimeNs start, std::int64_t m, TimeNs first) {
  return start + first + rep.extra + (m - 1) * rep.work;
}
/// The gang run of m iterations ending at `e`: every lane's replica runs them (its lane held from
/// the lane's clock, its switching cost `switch_cost` paid where the lane's last job was another),
/// and every lane's clock moves to e.
void run_gang(std::span<Slot> slots, std::span<Lane> lanes, TimeNs switch_cost, std::int64_t m, TimeNs e);
/// The rounds from t0: each lane's runs to the replica's turn, then the gang run, while the round
/// ends by `deadline` and no 1-GPU job finishes in it, or until the replicas finish. The round
/// that does not fit is taken back by going back to a state kept every 64 rounds (and after
/// periods are skipped) and running the rounds since again (Scratch::rounds_again counts them):
/// nothing is logged per run.
///
/// Periods (Scratch::skip_periods): a round depends on the lanes only through each slot's level
/// relative to its lane's replica, its job's constants, what it has left and its extra, and the
/// lane's last job, and every round ends with every lane's clock at E and its last job the replica.
/// So where the state after round b has every slot's level, relative to its lane's replica, as after
/// an earlier round a (every extra 0 then), rounds a+1..b repeat exactly for as long as no slot's
/// `left` and no deadline would stop one of them: the rounds are skipped n periods at once, every
/// count moved by n times its change over a..b, n the most that leaves every slot that ran at
/// least one iteration (then each of the period's runs still leaves its job one: k < left) and the
/// last period's end by the deadline. Equal iteration times (a trace of durations only, every
/// iteration the assumed 1 s) make a round its own period; steps of no common measure rarely
/// repeat, and the search (Brent's: the state kept at rounds 1, 2, 4, ..., each round compared
/// with the last kept, a mismatch usually at the first slot) costs little.
Outcome plan_rounds(std::span<Slot> slots, std::vector<Lane>& lanes, Replica rep, TimeNs t0, TimeNs deadline,
                    Scratch& scratch);
/// Lane `lane`'s report: per job of its offer (in the offer's order) what the plan ran.
void write_report(std::span<const Slot> slots, const Lane& lane, core::JobIndex last_job, TimeNs end,
                  core::PlanReport& r);

}  // namespace salus::cluster::joint
