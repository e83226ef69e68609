#include "cluster/joint_planner.h"

#include <string>

#include "core/errors.h"

namespace salus::cluster {

bool JointPlanner::turn_plan(std::int32_t g, const Gang& gang, core::TimeNs now, Host& host) {
  GpuState& s = host.gpu_state(g);
  if (s.at == now) return true;  // computed at this instant's first asking
  if (gang.running) return false;
  std::size_t i = 0;
  while (gang.gpus[i] != g) ++i;
  if (gang.is_chosen[i] != 0) return false;
  slots_.clear();
  joint::Lane lane;
  if (!offer_lane(g, gang.replicas[i], now, lane, host)) return false;
  const std::int64_t jumped = scratch_.turn_iterations_jumped;
  const std::int64_t runs = joint::run_before_turn(slots_, lane, host.next_arrival(), scratch_);
  counters_.turn_jumped += scratch_.turn_iterations_jumped - jumped;
  if (runs == 0) return false;
  const core::JobIndex last = s.offer.jobs[lane.last - lane.begin].job;
  joint::write_report(slots_, lane, last, lane.clock, s.report);
  s.at = now;
  waiting_.push_back(g);
  ++counters_.turn_plans;
  counters_.turn_plan_runs += runs;
  return true;
}

bool JointPlanner::take(std::int32_t g, core::TimeNs now, const core::PlanDispatch& p, core::PlanReport& report,
                        Host& host) {
  GpuState& s = host.gpu_state(g);
  if (s.at != now) return false;
  const core::PlanDispatch& o = s.offer;
  bool same = p.lane == o.lane && p.last_job == o.last_job && p.jobs.size() == o.jobs.size();
  for (std::size_t i = 0; same && i < p.jobs.size(); ++i) {
    const core::PlanJob &a = p.jobs[i], &b = o.jobs[i];
    same = a.job == b.job && a.level == b.level && a.step == b.step && a.order == b.order &&
           a.remaining == b.remaining && a.extra_ns == b.extra_ns;
  }
  SALUS_INVARIANT(same, "a GPU starts the joint plan computed from its offer", "GPU " + std::to_string(g));
  report = s.report;
  s.at = -1;
  s.end = report.end_ns;
  return true;
}

void JointPlanner::check_taken(core::TimeNs now, Host& host) {
  for (const std::int32_t g : waiting_) {
    SALUS_INVARIANT(host.gpu_state(g).at != now, "every GPU of a joint plan starts it", "GPU " + std::to_string(g));
  }
  waiting_.clear();
}

// The joint plans of a gang's GPUs (cluster/README.md, "Joint plans"; the rounds: joint_plan.h),
// computed at the end of a gang run from every GPU's offer, each handed to its GPU's start_plan:
// false when one of its GPUs cannot take part (not stepped at t0, busy, admitting a queued job,
// or no plan) or not one whole gang run fits.
bool JointPlanner::plan_gang(const Gang& gang, core::TimeNs t0, Host& host) {
  slots_.clear();
  lanes_.clear();
  for (std::size_t i = 0; i < gang.replicas.size(); ++i) {
    if (!offer_lane(gang.gpus[i], gang.replicas[i], t0, lanes_.emplace_back(), host)) return false;
  }
  joint::Replica replica;
  const bool alike = joint::replicas_alike(slots_, lanes_, std::string(gang.id), replica);
  const std::int64_t skipped = scratch_.periods_skipped;
  const joint::Outcome plan = joint::plan_rounds(slots_, lanes_, replica, t0, host.next_arrival(), scratch_);
  if (plan.rounds == 0) return false;
  counters_.joint_period_rounds += scratch_.periods_skipped - skipped;
  counters_.joint_paced_plans += alike ? 0 : 1;
  // Each GPU's report, waiting for its start_plan (take).
  for (std::size_t i = 0; i < gang.replicas.size(); ++i) {
    GpuState& s = host.gpu_state(gang.gpus[i]);
    joint::write_report(slots_, lanes_[i], gang.replicas[i], plan.end, s.report);
    s.at = t0;
    waiting_.push_back(gang.gpus[i]);
  }
  counters_.gang_iterations += plan.gang_iterations;
  ++counters_.joint_plans;
  counters_.joint_gang_runs += plan.rounds;
  return true;
}

// GPU g as a lane of slots_ from its offer, holding `replica`: false when it cannot take part.
bool JointPlanner::offer_lane(std::int32_t g, core::JobIndex replica, core::TimeNs t0, joint::Lane& lane, Host& host) {
  const sim::SimExecutor* sim = host.plannable(g, t0);
  if (sim == nullptr) return false;
  GpuState& s = host.gpu_state(g);
  if (!host.offer(g, t0, s.offer)) return false;
  SALUS_INVARIANT(sim->last_job(s.offer.lane) == s.offer.last_job, "a GPU's offer starts where its lane stands",
                  std::to_string(g));
  lane = joint::add_lane(s.offer, *sim, replica, t0, slots_);
  SALUS_INVARIANT(lane.replica != joint::kNoSlot, "a gang GPU's rotation holds its replica", std::to_string(g));
  return true;
}

}  // namespace salus::cluster
