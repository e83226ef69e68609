// The scheduling loop on random traces: every policy and lane mode finishes every job, keeps the
// safety condition (checked by the loop after every change), and batching runs of iterations
// changes nothing, to the nanosecond, compared with deciding at every single iteration boundary,
// under every interference model (the Decision contract in core/policy.h).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/scheduler.h"
#include "policies/registry.h"
#include "sim/interference.h"
#include "sim/sim_executor.h"
#include "support/jobs.h"

using namespace salus;

namespace {

/// Plans against deciding at every boundary: every job's admission, first start, GPU time,
/// iterations and finish, and the run's switches, iterations and end.
void check_same_schedule(const core::ScheduleOutcome& planned, const core::ScheduleOutcome& stepped) {
  CHECK(test::finishes(planned) == test::finishes(stepped));
  REQUIRE(planned.jobs.size() == stepped.jobs.size());
  for (std::size_t j = 0; j < planned.jobs.size(); ++j) {
    CHECK(planned.jobs[j].admitted_ns == stepped.jobs[j].admitted_ns);
    CHECK(planned.jobs[j].first_start_ns == stepped.jobs[j].first_start_ns);
    CHECK(planned.jobs[j].gpu_time_ns == stepped.jobs[j].gpu_time_ns);
    CHECK(planned.jobs[j].iterations_done == stepped.jobs[j].iterations_done);
  }
  CHECK(planned.switches == stepped.switches);
  CHECK(planned.iterations == stepped.iterations);
  CHECK(planned.end_ns == stepped.end_ns);
}

std::vector<core::JobSpec> random_trace(std::uint64_t seed, int n) {
  std::mt19937_64 rng(seed);
  auto pick = [&](std::int64_t lo, std::int64_t hi) { return lo + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(hi - lo + 1)); };
  std::vector<core::JobSpec> jobs;
  core::TimeNs t = 0;
  for (int i = 0; i < n; ++i) {
    if (pick(0, 3) != 0) t += test::ms(pick(0, 400));  // a quarter arrive together with the previous one
    jobs.push_back(test::job("j" + std::to_string(i), t, pick(1, 60), test::ms(pick(1, 50)) + pick(0, 999'999),
                             test::mib(pick(0, 3000)), test::mib(pick(0, 9000)),
                             static_cast<std::int32_t>(pick(100'000, 1'000'000))));
    // Workload names for the pair table (a fifth have none: the models' fallbacks), priorities
    // for the priority policy, a first-iteration extra now and then.
    const std::int64_t w = pick(0, 4);
    if (w < 4) jobs.back().workload = "w" + std::to_string(w);
    jobs.back().priority = static_cast<std::int32_t>(pick(0, 2));
    if (pick(0, 3) == 0) jobs.back().first_iter_extra_ns = pick(0, 5'000'000);
    // A third pay a switching cost of their own (a catalog entry's switch_ms), the others the
    // run's; taken from the iteration time, so that the traces' other draws stay as they were.
    if (i % 3 == 1) jobs.back().switch_ns = jobs.back().iter_ns % 2'000'000;
  }
  return test::trace(std::move(jobs));
}

/// Wraps a policy and never lets a choice stand for more than one iteration.
class OneIterationAtATime final : public core::Policy {
 public:
  explicit OneIterationAtATime(std::unique_ptr<core::Policy> p) : p_(std::move(p)) {}
  std::string_view name() const override { return p_->name(); }
  std::string_view description() const override { return p_->description(); }
  core::LaneMode default_lane_mode() const override { return p_->default_lane_mode(); }
  bool supports(core::LaneMode m) const override { return p_->supports(m); }
  void begin(std::span<const core::JobSpec> specs) override { p_->begin(specs); }
  std::int64_t admission_key(const core::SchedulerView& v, core::JobIndex j) const override {
    return p_->admission_key(v, j);
  }
  void on_admit(const core::SchedulerView& v, core::JobIndex j) override { p_->on_admit(v, j); }
  void on_join(const core::SchedulerView& v, const core::LaneSnapshot& l, core::JobIndex j) override {
    p_->on_join(v, l, j);
  }
  void on_iterations_done(const core::SchedulerView& v, const core::RunReport& r) override {
    p_->on_iterations_done(v, r);
  }
  void on_finish(const core::SchedulerView& v, core::JobIndex j, core::LaneId l) override { p_->on_finish(v, j, l); }
  core::Decision choose(const core::SchedulerView& v, const core::LaneSnapshot& l) override {
    core::Decision d = p_->choose(v, l);
    d.max_iterations = 1;
    return d;
  }

 private:
  std::unique_ptr<core::Policy> p_;
};

core::ScheduleOutcome run(const std::vector<core::JobSpec>& jobs, core::Policy& policy, core::LaneMode mode,
                          const sim::InterferenceModel& model, core::TimeNs switch_cost, bool paging = false,
                          bool timeline = true, bool timeline_plans = false) {
  core::SchedulerOptions opts;
  opts.capacity = test::gib(16);
  opts.lane_mode = mode;
  opts.paging = paging;
  opts.record_timeline = timeline;  // a run that records no timeline lets FAIR and LAS plan
  opts.timeline_plans = timeline_plans;  // and so does one that records plans as rotations
  sim::SimExecutor exec(jobs, model, {}, switch_cost, paging ? 3'000'000'000 : 0);
  return core::run_schedule(jobs, policy, exec, opts);
}

struct Setup {
  const char* policy;
  core::LaneMode mode;
};
constexpr Setup kSetups[] = {
    {"fifo", core::LaneMode::kExclusive}, {"srtf", core::LaneMode::kSingle}, {"srtf", core::LaneMode::kAuto},
    {"pack", core::LaneMode::kAuto},      {"pack", core::LaneMode::kSingle}, {"fair", core::LaneMode::kSingle},
    {"fair", core::LaneMode::kAuto},      {"las", core::LaneMode::kSingle},   {"las", core::LaneMode::kAuto},
    {"priority", core::LaneMode::kSingle}, {"priority", core::LaneMode::kAuto},
};

}  // namespace

TEST_CASE("random traces: every policy and lane mode finishes every admissible job, with and without paging") {
  const sim::UtilisationInterference profiled;
  std::int64_t paged = 0;
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    const auto jobs = random_trace(seed, 3 + static_cast<int>(seed % 20));
    for (const Setup& s : kSetups) {
     for (const bool paging : {false, true}) {
      if (paging && s.mode == core::LaneMode::kExclusive) continue;
      CAPTURE(seed);
      const std::string policy_name = s.policy;
      CAPTURE(policy_name);
      const std::string mode_name = core::to_string(s.mode);
      CAPTURE(mode_name);
      CAPTURE(paging);
      const auto policy = policies::make_policy(s.policy);
      const core::ScheduleOutcome out = run(jobs, *policy, s.mode, profiled, test::ms(2), paging);
      paged += out.page_outs;
      CHECK(out.page_ins == out.page_outs);  // every paged-out job came back to finish
      std::int64_t iterations = 0;
      for (std::size_t i = 0; i < jobs.size(); ++i) {
        const core::JobState& st = out.jobs[i];
        REQUIRE(st.status == core::JobStatus::kDone);  // P + E <= 12 GiB < 16 GiB: nothing is rejected
        CHECK(st.iterations_done == jobs[i].iterations);
        CHECK(st.first_start_ns >= jobs[i].arrival_ns);
        CHECK(st.finish_ns >= st.first_start_ns + jobs[i].solo_ns());
        iterations += jobs[i].iterations;
      }
      CHECK(out.iterations == iterations);
      // Segments of one lane never overlap in time, and a job is never in two places at once.
      std::vector<core::Segment> seg = out.segments;
      std::sort(seg.begin(), seg.end(), [](const auto& a, const auto& b) {
        return a.lane != b.lane ? a.lane < b.lane : a.start_ns < b.start_ns;
      });
      for (std::size_t k = 1; k < seg.size(); ++k) {
        if (seg[k].lane == seg[k - 1].lane) CHECK(seg[k].start_ns >= seg[k - 1].end_ns);
      }
      if (s.mode != core::LaneMode::kAuto) CHECK(out.max_concurrent_lanes <= 1);
      for (const core::MemorySample& m : out.memory) CHECK(m.persistent + m.lanes_reserved <= test::gib(16));
     }
    }
  }
  CHECK(paged > 100);  // paging did happen on these traces
}

TEST_CASE("batched runs decide exactly as deciding at every iteration boundary, under every interference model") {
  const sim::PairSlowdowns pairs = {{{"w0", "w1"}, 1'400'000}, {{"w1", "w0"}, 1'900'000}, {{"w0", "w2"}, 1'100'000},
                                    {{"w2", "w0"}, 2'300'000}, {{"w1", "w2"}, 1'650'000}, {{"w3", "w1"}, 900'000},
                                    {{"w2", "w3"}, 1'333'333}, {{"w0", "w0"}, 1'700'000}};
  const sim::ShareWeights weights = {{"w0", 0.7}, {"w1", 1.3}, {"w2", 2.1}, {"w3", 0.5}};
  const sim::CrowdFactors crowds = {{3, 1'150'000}, {6, 870'000}};
  const sim::Capacities capacities = {{"w0", {{3, 1.25}, {6, 1.4}}}, {"w2", {{2, 0.9}, {4, 1.1}}}};
  const std::vector<std::unique_ptr<sim::InterferenceModel>> models = [&] {
    std::vector<std::unique_ptr<sim::InterferenceModel>> m;
    for (const std::string& name : sim::interference_names()) {
      m.push_back(sim::make_interference(name, &pairs, &weights, 0.8, &crowds, &capacities));
    }
    return m;
  }();
  REQUIRE(models.size() == 6);
  int differing_iterations = 0;  // batched runs that did cover several iterations
  for (std::uint64_t seed = 100; seed < 220; ++seed) {
    const auto jobs = random_trace(seed, 2 + static_cast<int>(seed % 12));
    for (const auto& model : models) {
      for (const Setup& s : kSetups) {
        CAPTURE(seed);
        const std::string policy_name = s.policy;
        CAPTURE(policy_name);
        const std::string model_name(model->name());
        CAPTURE(model_name);
        const std::string mode_name = core::to_string(s.mode);
        CAPTURE(mode_name);
        const auto batched_policy = policies::make_policy(s.policy);
        OneIterationAtATime stepped_policy(policies::make_policy(s.policy));
        // Paging where it can act (a policy with priorities): every fourth trace.
        const bool paging = seed % 4 == 0 && s.mode != core::LaneMode::kExclusive;
        CAPTURE(paging);
        const auto batched = run(jobs, *batched_policy, s.mode, *model, test::ms(3), paging);
        const auto stepped = run(jobs, stepped_policy, s.mode, *model, test::ms(3), paging);
        CHECK(batched.page_outs == stepped.page_outs);
        CHECK(test::finishes(batched) == test::finishes(stepped));
        for (std::size_t j = 0; j < jobs.size(); ++j) {
          CHECK(batched.jobs[j].admitted_ns == stepped.jobs[j].admitted_ns);
          CHECK(batched.jobs[j].gpu_time_ns == stepped.jobs[j].gpu_time_ns);
        }
        CHECK(batched.switches == stepped.switches);
        CHECK(batched.lane_moves.size() == stepped.lane_moves.size());
        CHECK(batched.dispatches <= stepped.dispatches);
        differing_iterations += batched.dispatches < stepped.dispatches;
      }
    }
  }
  CHECK(differing_iterations > 1000);  // batching did happen: the comparison is not vacuous
}
#include <doctest/doctest.h>
#include <cstdio>

TEST_CASE("plans (FAIR's and LAS's rotations run in one go) give exactly the results of deciding at every boundary") {
  const sim::PairSlowdowns pairs = {{{"w0", "w1"}, 1'400'000}, {{"w1", "w0"}, 1'900'000}, {{"w0", "w2"}, 1'100'000},
                                    {{"w2", "w0"}, 2'300'000}, {{"w1", "w2"}, 1'650'000}, {{"w3", "w1"}, 900'000}};
  const sim::ShareWeights weights = {{"w0", 0.7}, {"w1", 1.3}, {"w2", 2.1}, {"w3", 0.5}};
  const sim::CrowdFactors crowds = {{3, 1'150'000}, {6, 870'000}};
  const sim::Capacities capacities = {{"w0", {{3, 1.25}, {6, 1.4}}}, {"w2", {{2, 0.9}, {4, 1.1}}}};
  std::vector<std::unique_ptr<sim::InterferenceModel>> models;
  for (const std::string& name : sim::interference_names()) {
    models.push_back(sim::make_interference(name, &pairs, &weights, 0.8, &crowds, &capacities));
  }
  REQUIRE(models.size() == 6);
  std::int64_t plans = 0, planned_iterations = 0, closed_form = 0;
  for (std::uint64_t seed = 300; seed < 400; ++seed) {
    // Longer jobs than above, so that rotations span many iterations between events.
    auto jobs = random_trace(seed, 2 + static_cast<int>(seed % 12));
    for (core::JobSpec& j : jobs) {
      j.iterations *= 1 + static_cast<std::int64_t>(seed % 7);
      // Half the traces take their iteration times from a few values, so that rotations are
      // regular (jobs share the least step) and the simulator counts them in closed form.
      if (seed % 2 == 0) j.iter_ns = test::ms(4) * (1 + j.trace_order % 3) + (seed % 4 == 0 ? 0 : 777);
    }
    for (const auto& model : models) {
      for (const Setup& s : kSetups) {
        CAPTURE(seed);
        const std::string policy_name = s.policy;
        CAPTURE(policy_name);
        const std::string model_name(model->name());
        CAPTURE(model_name);
        const std::string mode_name = core::to_string(s.mode);
        CAPTURE(mode_name);
        const auto planned_policy = policies::make_policy(s.policy);
        OneIterationAtATime stepped_policy(policies::make_policy(s.policy));  // forwards no plan
        const auto planned = run(jobs, *planned_policy, s.mode, *model, test::ms(3), false, false);
        const auto stepped = run(jobs, stepped_policy, s.mode, *model, test::ms(3), false, true);
        CHECK(stepped.plans == 0);
        // The same plans with a timeline of rotations: the same results, and each rotation's
        // rows (one per job that ran in it) hold exactly the single-iteration runs of the
        // stepped run inside its span, with their switching costs; its memory sample shows the
        // largest E among them.
        const auto policy_t = policies::make_policy(s.policy);
        const auto rotated = run(jobs, *policy_t, s.mode, *model, test::ms(3), false, true, true);
        CHECK(rotated.plans == planned.plans);
        CHECK(test::finishes(rotated) == test::finishes(planned));
        CHECK(rotated.switches == planned.switches);
        CHECK(rotated.dispatches == planned.dispatches);
        CHECK(rotated.end_ns == planned.end_ns);
        std::int64_t rotation_iterations = 0;
        for (std::size_t k = 0; k < rotated.segments.size(); ++k) {
          const core::Segment& g = rotated.segments[k];
          if (g.rotation == 0) continue;
          std::int64_t iters = 0;
          core::TimeNs sw = 0;
          core::Bytes envelope = 0;
          for (const core::Segment& e : stepped.segments) {
            if (e.lane != g.lane || e.start_ns < g.start_ns || e.end_ns > g.end_ns) continue;
            if (e.job == g.job) {
              iters += e.iterations;
              sw += e.switch_ns;
            }
            envelope = std::max(envelope, jobs[static_cast<std::size_t>(e.job)].ephemeral);
          }
          CHECK(iters == g.iterations);
          CHECK(sw == g.switch_ns);
          rotation_iterations += g.iterations;
          if (k == 0 || rotated.segments[k - 1].rotation != g.rotation) {  // the rotation's first row
            const auto at = std::upper_bound(rotated.memory.begin(), rotated.memory.end(), g.start_ns,
                                             [](core::TimeNs t, const core::MemorySample& m) { return t < m.time_ns; });
            REQUIRE(at != rotated.memory.begin());
            CHECK(std::prev(at)->ephemeral_active == envelope);
          }
        }
        CHECK(rotated.iterations == planned.iterations);
        if (planned.plans > 0) CHECK(rotation_iterations > 0);
        plans += planned.plans;
        closed_form += planned.plan_closed_form;
        check_same_schedule(planned, stepped);
        CHECK(planned.max_concurrent_lanes == stepped.max_concurrent_lanes);
        if (planned.plans > 0) planned_iterations += planned.iterations;
        CHECK(planned.steps <= stepped.steps);
      }
    }
  }
  // Plans did run, over many iterations: the comparison is not vacuous.
  CHECK(plans > 2000);
  CHECK(planned_iterations > 100000);
  CHECK(closed_form > 10000);  // and the regular rotations were counted in closed form
  MESSAGE("plans ", plans, ", iterations of runs with plans ", planned_iterations, ", in closed form ", closed_form);
}

TEST_CASE("plans over long queues in one lane (jumps bisect for the last level that fits) match per-boundary decisions") {
  const sim::UtilisationInterference profiled;
  std::int64_t plans = 0, closed_form = 0;
  for (std::uint64_t seed = 500; seed < 530; ++seed) {
    auto jobs = random_trace(seed, 30 + static_cast<int>(seed % 20));
    for (core::JobSpec& j : jobs) {
      // Long jobs arriving every 0.3 s: dozens share the lane, with long rotations between arrivals.
      j.arrival_ns = static_cast<core::TimeNs>(j.trace_order) * test::ms(300);
      j.iterations *= 20;
      j.persistent = test::mib(50);
      j.ephemeral = test::mib(500);
      if (seed % 2 == 0) j.iter_ns = test::ms(3) * (1 + j.trace_order % 4) + 311;
    }
    for (const char* name : {"fair", "las"}) {
      CAPTURE(seed);
      CAPTURE(name);
      const auto planned_policy = policies::make_policy(name);
      OneIterationAtATime stepped_policy(policies::make_policy(name));
      const auto planned = run(jobs, *planned_policy, core::LaneMode::kSingle, profiled, test::ms(2), false, false);
      const auto stepped = run(jobs, stepped_policy, core::LaneMode::kSingle, profiled, test::ms(2), false, false);
      plans += planned.plans;
      closed_form += planned.plan_closed_form;
      CHECK(test::finishes(planned) == test::finishes(stepped));
      for (std::size_t j = 0; j < jobs.size(); ++j) {
        CHECK(planned.jobs[j].first_start_ns == stepped.jobs[j].first_start_ns);
        CHECK(planned.jobs[j].gpu_time_ns == stepped.jobs[j].gpu_time_ns);
      }
      CHECK(planned.switches == stepped.switches);
      CHECK(planned.end_ns == stepped.end_ns);
    }
  }
  CHECK(plans > 500);
  CHECK(closed_form > 100000);
  MESSAGE("long queues: plans ", plans, ", in closed form ", closed_form);
}

namespace {

/// Compares a run with plans against one deciding at every boundary (OneIterationAtATime
/// forwards no plan): every job's start, lane time, iterations and finish, the switches and the
/// end. Returns the planned run.
core::ScheduleOutcome check_plans_match_stepped(const std::vector<core::JobSpec>& jobs, const char* name,
                                                core::LaneMode mode, const sim::InterferenceModel& model) {
  const auto planned_policy = policies::make_policy(name);
  OneIterationAtATime stepped_policy(policies::make_policy(name));
  auto planned = run(jobs, *planned_policy, mode, model, test::ms(1), false, false);
  const auto stepped = run(jobs, stepped_policy, mode, model, test::ms(1), false, false);
  CHECK(stepped.plans == 0);
  check_same_schedule(planned, stepped);
  CHECK(planned.steps <= stepped.steps);
  return planned;
}

/// Jobs as salus-sim replays Alibaba's pod lists (--assumed-iter-ms 1000): iterations of one
/// second (times the GPUs of a multi-GPU pod), the remainder of the duration on the first, most
/// taking the whole GPU as E and the others a share of it; arrivals 0-400 s apart, so that
/// many jobs share the lane and arrive while rotations run; log-uniform lengths, a tenth long,
/// and the second job of 28-56 hours (more than a plan's keys reach above its least level).
std::vector<core::JobSpec> one_second_jobs(std::uint64_t seed, int n) {
  core::TimeNs t = 0;
  return test::random_jobs(seed, n, 1, [&t](core::JobSpec& j, int i, auto pick) {
    j.arrival_ns = t;
    t += pick(0, 399) * core::kNsPerS + test::ms(pick(0, 999));
    const std::int64_t gpus = pick(0, 9) == 0 ? std::int64_t{1} << pick(1, 3) : 1;
    j.iter_ns = gpus * core::kNsPerS;
    j.iterations = static_cast<std::int64_t>(std::exp(static_cast<double>(pick(0, 7000)) / 1000.0)) *
                   (pick(0, 9) == 0 ? 10 : 1);
    if (i == 1) j.iterations = pick(100'000, 200'000);
    j.first_iter_extra_ns = pick(0, 999'999'999);
    const std::int64_t share = pick(0, 9) < 6 ? 10 : pick(1, 9);
    j.persistent = 0;
    j.ephemeral = test::gib(16) / 10 * share;
    j.gpu_util_ppm = static_cast<std::int32_t>(share * 100'000);
    if (pick(0, 3) == 0) j.switch_ns = pick(0, 5'000'000);
  });
}

}  // namespace

TEST_CASE("plans over long jobs of 1-s iterations, many in one lane, arrivals during rotations, match per-boundary decisions") {
  const sim::UtilisationInterference profiled;
  std::int64_t plans = 0, closed_form = 0, iterations = 0, steps = 0;
  for (std::uint64_t seed = 600; seed < 612; ++seed) {
    const auto jobs = one_second_jobs(seed, 20 + static_cast<int>(seed % 4) * 10);
    for (const char* name : {"fair", "las"}) {
      for (const core::LaneMode mode : {core::LaneMode::kSingle, core::LaneMode::kAuto}) {
        CAPTURE(seed);
        CAPTURE(name);
        const std::string mode_name = core::to_string(mode);
        CAPTURE(mode_name);
        const auto planned = check_plans_match_stepped(jobs, name, mode, profiled);
        plans += planned.plans;
        closed_form += planned.plan_closed_form;
        iterations += planned.iterations;
        steps += planned.steps;
      }
    }
  }
  CHECK(plans > 1000);
  CHECK(closed_form > 100'000);      // rotations counted in closed form
  CHECK(steps * 100 < iterations);      // plans run while the long job is in the lane
  MESSAGE("1-s iterations: plans ", plans, ", loop steps ", steps, ", iterations ", iterations, ", in closed form ",
          closed_form);
}

TEST_CASE("a plan across service levels days apart runs whole: LAS's newcomer catching up 50 hours") {
  // a runs alone for 50 hours; b arrives and, under LAS, runs until it has caught up with a's
  // 50 hours of service, then they alternate until the first finishes: one plan from b's arrival
  // to that finish, though its levels span far more than a plan's keys reach above its least
  // level (2^46 ns, 19.5 h). Hour-long iterations (+1 ns, so that no boundary falls on b's arrival).
  const core::TimeNs hour = 3600 * core::kNsPerS;
  const auto jobs = test::trace({test::job("a", 0, 100, hour + 1, test::mib(100), test::mib(1000)),
                                 test::job("b", 50 * hour, 100, hour + 1, test::mib(100), test::mib(1000))});
  const sim::UtilisationInterference profiled;
  const auto planned = check_plans_match_stepped(jobs, "las", core::LaneMode::kSingle, profiled);
  CHECK(planned.plans == 1);
  // b arrives during a's 50th iteration, where a's run is cut; b runs 50 to reach a's level
  // (a first at equal levels), then a, b, ..., a: a's other 50 and 49 of b's, each run after
  // b's first a switch (1 ms).
  CHECK(planned.jobs[0].finish_ns == (50 + 50 + 50 + 49) * (hour + 1) + (1 + 50 + 49) * core::kNsPerMs);
  CHECK(planned.steps <= 5);
}

TEST_CASE("plans across service levels more than a day apart match per-boundary decisions") {
  // Iterations of 20 minutes to 3 hours: LAS's newcomer arriving 1-3 days after the others has
  // that much service to catch up with, more than the 2^46 ns (19.5 h) a plan's keys reach above
  // its least level; FAIR's rotation after the last arrival climbs as far.
  const sim::UtilisationInterference profiled;
  std::int64_t plans = 0;
  for (std::uint64_t seed = 700; seed < 760; ++seed) {
    const int n = 4 + static_cast<int>(seed % 6) * 6;
    core::TimeNs t = 0;
    const auto jobs = test::random_jobs(seed, n, 1, [&t](core::JobSpec& j, int, auto pick) {
      j.arrival_ns = t;
      t += (pick(0, 2) == 0 ? 0 : pick(20, 70)) * 3600 * core::kNsPerS;
      j.iter_ns = pick(20, 180) * 60 * core::kNsPerS + pick(0, 999);
      j.iterations = pick(5, 120);
      j.first_iter_extra_ns = pick(0, 3) == 0 ? pick(0, 999'999'999) : 0;
      j.persistent = test::mib(100);
      j.ephemeral = test::mib(pick(100, 4000));
    });
    for (const char* name : {"fair", "las"}) {
      CAPTURE(seed);
      CAPTURE(name);
      plans += check_plans_match_stepped(jobs, name, core::LaneMode::kSingle, profiled).plans;
    }
  }
  CHECK(plans > 1000);
  MESSAGE("levels days apart: plans ", plans);
}
