#include <algorithm>
#include <set>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "core/errors.h"
#include "policies/builtin.h"
#include "policies/least_service.h"

namespace salus::policies {
namespace {

using core::JobIndex;
using core::TimeNs;

/// FAIR keeps its own service counter. A job's service is the solo time of the iterations it
/// completed since the last job joined its lane (iterations x iter_ms): counting profiled solo
/// time rather than wall time keeps the decision independent of interference and lets a run be
/// planned exactly (see max_iterations). A join resets every service of the lane to 0; only the
/// iteration in flight at the join counts after it (the run is cut at that iteration's end); one
/// that ended exactly at the join instant counts before it.
///
/// Finding the least-served job must not cost a scan of the lane: with thousands of jobs
/// resident and one iteration per dispatch, a scan made FAIR quadratic. Per lane:
///  - members: every job of the lane by arrival rank;
///  - served: the jobs with service > 0 since the last join, by (service, rank): a balanced tree,
///    so the least and the runner-up are its first two entries;
///  - a join starts a new epoch instead of touching every job: a job's counter is valid only if
///    stamped with the lane's current epoch, else its service is 0. The jobs with service 0 are
///    members minus served; the earliest of them is found by a cursor over members that only
///    moves forward within an epoch (a job's service never drops back to 0 until the next join).
/// Every operation is O(log n) amortised. A plan (a rotation run in one go) only updates the
/// counters of the jobs that ran; `served` is rebuilt from them when a decision next needs it.
///
/// The per-job counters live in a hash map holding only the jobs admitted to this GPU and not yet
/// finished (added at the join, dropped at the finish), not in an array over the whole trace: a
/// cluster keeps one FAIR object per GPU, and 1,000 arrays of 100k counters took 2.4 GB.
class Fair final : public core::Policy {
 public:
  std::string_view name() const override { return "fair"; }
  std::string_view description() const override { return kFairDescription; }
  core::LaneMode default_lane_mode() const override { return core::LaneMode::kSingle; }
  bool supports(core::LaneMode m) const override { return m != core::LaneMode::kExclusive; }
  /// A join resets the lane's service: the newcomer takes its turn in the next rotation.
  Newcomer newcomer() const override { return Newcomer::kTakesTurn; }

  void begin(std::span<const core::JobSpec> specs) override {
    (void)specs;
    jobs_.clear();
    lanes_.clear();
  }

  void on_join(const core::SchedulerView& v, const core::LaneSnapshot& lane, JobIndex job) override {
    LaneService& ls = lanes_[lane.id];
    ++ls.epoch;
    ls.served.clear();
    ls.served_stale = false;  // every service is 0 now
    const auto [it, added] = jobs_.try_emplace(job);
    SALUS_INVARIANT(added, "fair: a job joins a lane once", v.specs[static_cast<std::size_t>(job)].id);
    JobService& js = it->second;
    js.rank = v.states[static_cast<std::size_t>(job)].submit_rank;
    ls.members.insert({js.rank, job});
    ls.cursor = ls.members.begin();
    ls.in_flight_at_join = lane.running;
    ls.join_ns = v.now;
  }

  void on_iterations_done(const core::SchedulerView& v, const core::RunReport& run) override {
    LaneService& ls = lane(run.lane);
    std::int64_t n = run.iterations;
    if (ls.in_flight_at_join == run.job) {
      n = run.end_ns > ls.join_ns ? std::min<std::int64_t>(1, run.iterations) : 0;
    }
    ls.in_flight_at_join = core::kNoJob;
    serve(v, ls, run.job, n);
  }

  /// The rotation: every job's iterations at its service levels, ties by arrival rank, which is
  /// exactly what choose picks at each boundary (the least (service, rank) runs until it would
  /// overtake the runner-up). Not among a subset of the lane.
  bool plan(const core::SchedulerView& v, const core::LaneSnapshot& lane, std::vector<core::RotationEntry>& out) override {
    LaneService& ls = lane_state(lane.id);
    if (lane.jobs.size() != ls.members.size()) return false;
    for (JobIndex j : lane.jobs) {
      const TimeNs d = v.specs[static_cast<std::size_t>(j)].iter_ns;
      const JobService& js = at(j);
      out.push_back({j, (js.epoch == ls.epoch ? js.iterations : 0) * d, d, js.rank});
    }
    return true;
  }

  void on_plan_done(const core::SchedulerView&, core::LaneId lane_id, std::span<const core::RotationEntry> entries,
                    std::span<const std::int64_t> iterations) override {
    LaneService& ls = lane(lane_id);
    SALUS_INVARIANT(ls.in_flight_at_join == core::kNoJob, "fair: no join during a plan", "lane " + std::to_string(lane_id));
    SALUS_INVARIANT(entries.size() == ls.members.size(), "fair: a plan covers the lane", "lane " + std::to_string(lane_id));
    // Every job of the lane is in the plan. Only the counters of the jobs that ran change here;
    // `served` is left stale and rebuilt when a decision or a single run next needs it: plans
    // follow plans while the lane is alone (one per arrival and finish), and sorting the lane's
    // jobs after each of them was most of FAIR's time with thousands of jobs in the lane.
    for (std::size_t i = 0; i < entries.size(); ++i) {
      if (iterations[i] == 0) continue;
      JobService& js = at(entries[i].job);
      if (js.epoch != ls.epoch) {
        js.epoch = ls.epoch;
        js.iterations = 0;
      }
      js.iterations += iterations[i];
    }
    ls.served_stale = true;
  }

  void on_finish(const core::SchedulerView& v, JobIndex job, core::LaneId lane_id) override {
    LaneService& ls = lane(lane_id);
    JobService& js = at(job);
    if (ls.cursor != ls.members.end() && ls.cursor->second == job) ++ls.cursor;
    ls.members.erase({js.rank, job});
    if (!ls.served_stale && js.epoch == ls.epoch && js.iterations > 0) {
      ls.served.erase({js.iterations * v.specs[static_cast<std::size_t>(job)].iter_ns, js.rank, job});
    }
    jobs_.erase(job);
    if (ls.members.empty()) lanes_.erase(lane_id);
  }

  core::Decision choose(const core::SchedulerView& v, const core::LaneSnapshot& lane) override {
    LaneService& ls = lane_state(lane.id);
    if (lane.jobs.size() != ls.members.size()) return choose_among(v, ls, lane.jobs);
    refresh(v, ls);
    // The earliest job with service 0, if any.
    while (ls.cursor != ls.members.end() && service_iterations(ls, ls.cursor->second) > 0) ++ls.cursor;
    const std::size_t zero = ls.members.size() - ls.served.size();
    JobIndex best, second = core::kNoJob;
    TimeNs best_s = 0, second_s = 0;
    if (zero > 0) {
      SALUS_INVARIANT(ls.cursor != ls.members.end(), "fair: a job with service 0 is found", std::to_string(zero));
      best = ls.cursor->second;
      if (zero > 1) return {best, 1};  // another job at 0 comes later in arrival order: it wins next
      if (!ls.served.empty()) std::tie(second_s, std::ignore, second) = *ls.served.begin();
    } else {
      auto it = ls.served.begin();
      std::tie(best_s, std::ignore, best) = *it;
      if (++it != ls.served.end()) std::tie(second_s, std::ignore, second) = *it;
    }
    return run_until_overtaken(v, LeastTwo{best, second, best_s, second_s});
  }

 private:
  struct JobService {
    std::int64_t epoch = -1;      // the lane epoch its counter belongs to
    std::int64_t iterations = 0;  // iterations since the last join (valid in that epoch)
    std::int64_t rank = 0;        // arrival rank
  };
  struct LaneService {
    std::int64_t epoch = 0;
    std::set<std::pair<std::int64_t, JobIndex>> members;
    std::set<std::tuple<TimeNs, std::int64_t, JobIndex>> served;
    bool served_stale = false;  // a plan ran since `served` was last right (on_plan_done)
    std::set<std::pair<std::int64_t, JobIndex>>::iterator cursor;
    JobIndex in_flight_at_join = core::kNoJob;
    TimeNs join_ns = 0;
  };

  JobService& at(JobIndex j) {
    const auto it = jobs_.find(j);
    SALUS_INVARIANT(it != jobs_.end(), "fair: the job joined a lane and has not finished", std::to_string(j));
    return it->second;
  }
  const JobService& at(JobIndex j) const {
    const auto it = jobs_.find(j);
    SALUS_INVARIANT(it != jobs_.end(), "fair: the job joined a lane and has not finished", std::to_string(j));
    return it->second;
  }
  /// `n` more iterations of `job` count as service in its lane.
  void serve(const core::SchedulerView& v, LaneService& ls, JobIndex job, std::int64_t n) {
    if (n == 0) return;
    refresh(v, ls);
    JobService& js = at(job);
    const TimeNs d = v.specs[static_cast<std::size_t>(job)].iter_ns;
    if (js.epoch == ls.epoch && js.iterations > 0) ls.served.erase({js.iterations * d, js.rank, job});
    if (js.epoch != ls.epoch) {
      js.epoch = ls.epoch;
      js.iterations = 0;
    }
    js.iterations += n;
    ls.served.insert({js.iterations * d, js.rank, job});
  }
  /// Rebuilds `served` from the counters after plans (on_plan_done leaves it stale): the lane's
  /// jobs with service > 0, sorted once and inserted in order.
  void refresh(const core::SchedulerView& v, LaneService& ls) {
    if (!ls.served_stale) return;
    ls.served_stale = false;
    plan_served_.clear();
    for (const auto& [rank, job] : ls.members) {
      const JobService& js = at(job);
      if (js.epoch == ls.epoch && js.iterations > 0) {
        plan_served_.emplace_back(js.iterations * v.specs[static_cast<std::size_t>(job)].iter_ns, rank, job);
      }
    }
    std::sort(plan_served_.begin(), plan_served_.end());
    ls.served.clear();
    for (const auto& e : plan_served_) ls.served.emplace_hint(ls.served.end(), e);
  }
  LaneService& lane(core::LaneId id) {
    auto it = lanes_.find(id);
    SALUS_INVARIANT(it != lanes_.end(), "fair: the lane's jobs joined it", "lane " + std::to_string(id));
    return it->second;
  }
  LaneService& lane_state(core::LaneId id) { return lane(id); }
  std::int64_t service_iterations(const LaneService& ls, JobIndex j) const {
    const JobService& js = at(j);
    return js.epoch == ls.epoch ? js.iterations : 0;
  }

  /// best keeps winning while (best_s + m * d, best) < (second_s, second), for m = 0 .. k-1.
  /// Among a subset of the lane (inference jobs waiting for a request are left out): a scan.
  core::Decision choose_among(const core::SchedulerView& v, const LaneService& ls, std::span<const JobIndex> jobs) const {
    return run_until_overtaken(v, least_two(v, jobs, [&](JobIndex j) {
                                 return service_iterations(ls, j) * v.specs[static_cast<std::size_t>(j)].iter_ns;
                               }));
  }

  std::unordered_map<JobIndex, JobService> jobs_;  // the admitted, unfinished jobs of this GPU
  std::unordered_map<core::LaneId, LaneService> lanes_;
  std::vector<std::tuple<TimeNs, std::int64_t, JobIndex>> plan_served_;  // refresh's scratch
};

}  // namespace

std::unique_ptr<core::Policy> make_fair() { return std::make_unique<Fair>(); }

}  // namespace salus::policies
