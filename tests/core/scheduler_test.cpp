// The scheduling loop (core/scheduler.cpp) driven by the fake executor, with small policies
// written here, so that these tests need nothing outside core/. Traces are tiny and every
// expected time is derived by hand in the comment above it (ns, ideal GPU).
#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/scheduler.h"
#include "support/fake_executor.h"
#include "support/jobs.h"
#include "support/test_policies.h"

namespace {

using namespace salus::core;
using salus::test::FakeExecutor;
using salus::test::gib;
using salus::test::job;
using salus::test::mib;
using salus::test::ms;
using salus::test::Seg;
using salus::test::trace;

using salus::test::FirstAdmitted;  // within a lane the earliest admitted job runs to completion

// One iteration at a time of the job with the fewest iterations done (ties: submitted first).
class Alternate final : public Policy {
 public:
  std::string_view name() const override { return "alternate"; }
  std::string_view description() const override { return "test"; }
  LaneMode default_lane_mode() const override { return LaneMode::kSingle; }
  bool supports(LaneMode) const override { return true; }
  Decision choose(const SchedulerView& v, const LaneSnapshot& lane) override {
    JobIndex best = kNoJob;
    for (JobIndex j : lane.jobs) {
      const auto i = static_cast<std::size_t>(j);
      if (best == kNoJob) {
        best = j;
        continue;
      }
      const auto b = static_cast<std::size_t>(best);
      if (v.states[i].iterations_done < v.states[b].iterations_done ||
          (v.states[i].iterations_done == v.states[b].iterations_done && earlier_submitted(v, j, best))) {
        best = j;
      }
    }
    return {best, 1};
  }
};

// Least remaining solo time, to completion (an SRTF written independently of policies/).
class Shortest final : public Policy {
 public:
  std::string_view name() const override { return "shortest"; }
  std::string_view description() const override { return "test"; }
  LaneMode default_lane_mode() const override { return LaneMode::kSingle; }
  bool supports(LaneMode) const override { return true; }
  Decision choose(const SchedulerView& v, const LaneSnapshot& lane) override {
    JobIndex best = lane.jobs.front();
    for (JobIndex j : lane.jobs) {
      const TimeNs l = v.states[static_cast<std::size_t>(j)].remaining_solo_ns(v.specs[static_cast<std::size_t>(j)]);
      const TimeNs lb = v.states[static_cast<std::size_t>(best)].remaining_solo_ns(v.specs[static_cast<std::size_t>(best)]);
      if (l < lb || (l == lb && earlier_submitted(v, j, best))) best = j;
    }
    return {best, v.states[static_cast<std::size_t>(best)].remaining_iterations(v.specs[static_cast<std::size_t>(best)])};
  }
};

// Supports only the exclusive mode.
class ExclusiveOnly final : public Policy {
 public:
  std::string_view name() const override { return "solo"; }
  std::string_view description() const override { return "test"; }
  LaneMode default_lane_mode() const override { return LaneMode::kExclusive; }
  bool supports(LaneMode m) const override { return m == LaneMode::kExclusive; }
  Decision choose(const SchedulerView&, const LaneSnapshot& lane) override { return {lane.jobs.front(), 1}; }
};

// Breaks the policy contract in a chosen way.
class Broken final : public Policy {
 public:
  explicit Broken(int how) : how_(how) {}
  std::string_view name() const override { return "broken"; }
  std::string_view description() const override { return "test"; }
  LaneMode default_lane_mode() const override { return LaneMode::kAuto; }
  bool supports(LaneMode) const override { return true; }
  Decision choose(const SchedulerView& v, const LaneSnapshot& lane) override {
    if (how_ == 0) return {static_cast<JobIndex>(v.specs.size()), 1};  // no such job
    if (how_ == 1) return {lane.jobs.front(), 0};                      // zero iterations
    // A job of another lane (or a pending one): the one with the highest index not in this lane.
    for (JobIndex j = static_cast<JobIndex>(v.specs.size()) - 1; j >= 0; --j) {
      if (std::find(lane.jobs.begin(), lane.jobs.end(), j) == lane.jobs.end()) return {j, 1};
    }
    return {lane.jobs.front(), 1};
  }

 private:
  int how_;
};

/// The loop's options plus the fake executor's switching cost (an executor's, not the loop's).
struct RunOptions : SchedulerOptions {
  TimeNs switch_cost_ns = 0;
};

ScheduleOutcome run(const std::vector<JobSpec>& jobs, Policy& p, RunOptions opts, FakeExecutor* exec_out = nullptr) {
  FakeExecutor exec(jobs, opts.switch_cost_ns);
  ScheduleOutcome out = run_schedule(jobs, p, exec, opts);
  // Every dispatch gives the job a lane that holds its ephemeral memory.
  for (const Dispatch& d : exec.dispatches) {
    INFO("job ", jobs[static_cast<std::size_t>(d.job)].id, " lane ", d.lane);
    CHECK(d.lane_size >= jobs[static_cast<std::size_t>(d.job)].ephemeral);
    CHECK(d.lane_offset >= 0);
    CHECK(d.lane_offset + d.lane_size <= opts.capacity);
  }
  for (const MemorySample& m : out.memory) {
    CHECK(m.persistent + m.lanes_reserved <= opts.capacity);
    CHECK(m.ephemeral_active <= m.lanes_reserved);
  }
  if (exec_out) *exec_out = exec;
  return out;
}

RunOptions options(LaneMode mode, Bytes capacity = gib(16), TimeNs switch_cost = 0) {
  RunOptions o;
  o.capacity = capacity;
  o.lane_mode = mode;
  o.switch_cost_ns = switch_cost;
  o.record_timeline = true;
  return o;
}

void check_segments(const ScheduleOutcome& out, const std::vector<Seg>& expected) {
  const std::vector<Seg> got = salus::test::segments(out);
  INFO("got segments:\n", salus::test::to_string(got));
  CHECK(got == salus::test::sorted(expected));
}

}  // namespace

TEST_CASE("run_schedule refuses a lane mode the policy does not support") {
  const auto jobs = trace({job("a", 0, 1, ms(1), 0, 0)});
  FakeExecutor exec(jobs);
  ExclusiveOnly p;
  CHECK_THROWS_WITH_AS(run_schedule(jobs, p, exec, options(LaneMode::kAuto)),
                       "policy 'solo' does not support lane mode 'auto'", std::invalid_argument);
  CHECK_THROWS_WITH_AS(run_schedule(jobs, p, exec, options(LaneMode::kSingle)),
                       "policy 'solo' does not support lane mode 'single'", std::invalid_argument);
}

TEST_CASE("run_schedule refuses out-of-range options and jobs with exact messages") {
  FirstAdmitted p;
  const auto ok = trace({job("a", 0, 1, ms(1), 0, 0)});
  FakeExecutor exec(ok);
  SchedulerOptions o = options(LaneMode::kAuto, 0);
  CHECK_THROWS_WITH_AS(run_schedule(ok, p, exec, o), "capacity must be positive", std::invalid_argument);
  std::vector<JobSpec> bad = {job("bad", 0, 1, ms(1), 0, 0)};
  SUBCASE("zero iterations") { bad[0].iterations = 0; }
  SUBCASE("zero iteration time") { bad[0].iter_ns = 0; }
  SUBCASE("negative persistent") { bad[0].persistent = -1; }
  SUBCASE("negative ephemeral") { bad[0].ephemeral = -1; }
  SUBCASE("negative arrival") { bad[0].arrival_ns = -1; }
  SUBCASE("zero utilisation") { bad[0].gpu_util_ppm = 0; }
  SUBCASE("utilisation above 1") { bad[0].gpu_util_ppm = 1'000'001; }
  SUBCASE("negative first-iteration extra") { bad[0].first_iter_extra_ns = -1; }
  FakeExecutor e2(bad);
  CHECK_THROWS_WITH_AS(run_schedule(bad, p, e2, options(LaneMode::kAuto)), "job 'bad' has an out-of-range field",
                       std::invalid_argument);
}

TEST_CASE("an empty trace ends at once") {
  const std::vector<JobSpec> none;
  FakeExecutor exec(none);
  FirstAdmitted p;
  const ScheduleOutcome out = run_schedule(none, p, exec, options(LaneMode::kAuto));
  CHECK(out.jobs.empty());
  CHECK(out.end_ns == 0);
  CHECK(out.dispatches == 0);
}

TEST_CASE("the loop closes every lane it opened, once, after its last job's release, and never runs in it again") {
  // 40 random jobs under a policy with auto lanes: lanes open and close all through the run. The
  // fake executor throws on a second close and on a run in a closed lane.
  const auto jobs = salus::test::random_jobs(7, 40, 1, [](JobSpec&, int, auto&) {});
  FirstAdmitted p;
  FakeExecutor exec(jobs);
  const ScheduleOutcome out = run_schedule(jobs, p, exec, options(LaneMode::kAuto));
  REQUIRE(out.lanes_opened > 1);
  CHECK(static_cast<std::int64_t>(exec.closed_lanes.size()) == out.lanes_opened);
  std::set<LaneId> used;
  for (const Dispatch& d : exec.dispatches) used.insert(d.lane);
  CHECK(used == exec.closed_lanes);
  CHECK(exec.released.size() == jobs.size());
}

TEST_CASE("a job that starts late: the clock jumps to its arrival") {
  // One job arriving at 2 s, 3 x 100 ms: runs 2.0 - 2.3 s.
  const auto jobs = trace({job("a", 2'000'000'000, 3, ms(100), mib(1), mib(1))});
  FirstAdmitted p;
  const ScheduleOutcome out = run(jobs, p, options(LaneMode::kAuto));
  CHECK(out.jobs[0].status == JobStatus::kDone);
  CHECK(out.jobs[0].admitted_ns == 2'000'000'000);
  CHECK(out.jobs[0].first_start_ns == 2'000'000'000);
  CHECK(out.jobs[0].finish_ns == 2'300'000'000);
  CHECK(out.jobs[0].iterations_done == 3);
  CHECK(out.jobs[0].gpu_time_ns == 300'000'000);
  CHECK(out.end_ns == 2'300'000'000);
  CHECK(out.iterations == 3);
  CHECK(out.dispatches == 1);
}

TEST_CASE("P + E > C is rejected at arrival with the reason: the other jobs are unaffected") {
  // a: 0 - 1.0 s alone in its lane. r (10 GiB + 7 GiB > 16 GiB) arrives at 0.35 s and is rejected
  // without disturbing a (no extra decision cuts a's run: one segment, one dispatch).
  const auto jobs = trace({job("a", 0, 10, ms(100), gib(1), gib(4)), job("r", ms(350), 1, ms(1), gib(10), gib(7)),
                           job("fits", ms(2000), 1, ms(100), gib(10), gib(6))});
  FirstAdmitted p;
  FakeExecutor exec(jobs);
  const ScheduleOutcome out = run(jobs, p, options(LaneMode::kAuto), &exec);
  const JobState& r = out.jobs[1];
  CHECK(r.status == JobStatus::kRejected);
  CHECK(r.reason() == "needs P + E = 10 GiB + 7 GiB = 17 GiB, more than the GPU's 16 GiB");
  CHECK(r.lane == kNoLane);
  CHECK(r.finish_ns == -1);
  CHECK(r.first_start_ns == -1);
  CHECK(r.admit_seq == -1);
  CHECK(out.jobs[0].status == JobStatus::kDone);
  CHECK(out.jobs[0].finish_ns == 1'000'000'000);
  // P + E == C exactly is not rejected: 2.0 - 2.1 s.
  CHECK(out.jobs[2].status == JobStatus::kDone);
  CHECK(out.jobs[2].finish_ns == 2'100'000'000);
  check_segments(out, {{0, 0, 0, 1'000'000'000, 10, 0}, {1, 2, 2'000'000'000, 2'100'000'000, 1, 0}});
  CHECK(exec.admitted == std::vector<JobIndex>{0, 2});  // the rejected job never reaches the executor
  CHECK(exec.released == std::vector<JobIndex>{0, 2});
}

TEST_CASE("the rejection reason formats sizes that are not whole GiB") {
  // 1000 MiB + 15.5 GiB = 16872 MiB = 16.4765625 GiB.
  const auto jobs = trace({job("r", 0, 1, ms(1), mib(1000), mib(15872))});
  FirstAdmitted p;
  const ScheduleOutcome out = run(jobs, p, options(LaneMode::kAuto));
  CHECK(out.jobs[0].status == JobStatus::kRejected);
  CHECK(out.jobs[0].reason() == "needs P + E = 1000.0 MiB + 15.50 GiB = 16.48 GiB, more than the GPU's 16 GiB");
  CHECK(out.dispatches == 0);
}

TEST_CASE("switch cost is paid by the first iteration of a run that changes the lane's job") {
  // Alternate, one lane, switch cost 1 ms; a: 3 x 10 ms, b: 2 x 10 ms, both at 0.
  //   0: a (first job in the lane: no cost) 0 - 10
  //  10: a 1 done, b 0 -> b, switch: 10 - 21
  //  21: 1 / 1 -> a (submitted first), switch: 21 - 32
  //  32: a 2, b 1 -> b, switch: 32 - 43, b done
  //  43: a, switch from b: 43 - 54, a done
  const auto jobs = trace({job("a", 0, 3, ms(10), mib(1), mib(1)), job("b", 0, 2, ms(10), mib(1), mib(1))});
  Alternate p;
  const ScheduleOutcome out = run(jobs, p, options(LaneMode::kSingle, gib(16), ms(1)));
  check_segments(out, {{0, 0, 0, ms(10), 1, 0},
                       {0, 1, ms(10), ms(21), 1, ms(1)},
                       {0, 0, ms(21), ms(32), 1, ms(1)},
                       {0, 1, ms(32), ms(43), 1, ms(1)},
                       {0, 0, ms(43), ms(54), 1, ms(1)}});
  CHECK(out.jobs[0].finish_ns == ms(54));
  CHECK(out.jobs[1].finish_ns == ms(43));
  CHECK(out.switches == 4);
  CHECK(out.dispatches == 5);
  // gpu_time includes the switching cost: a 10 + 11 + 11, b 11 + 11.
  CHECK(out.jobs[0].gpu_time_ns == ms(32));
  CHECK(out.jobs[1].gpu_time_ns == ms(22));
}

TEST_CASE("no switch cost when the same job runs again, nor for the first job of a lane") {
  SUBCASE("the same job, dispatched three times") {
    const auto jobs = trace({job("a", 0, 3, ms(10), mib(1), mib(1))});
    Alternate p;
    const ScheduleOutcome out = run(jobs, p, options(LaneMode::kSingle, gib(16), ms(1)));
    CHECK(out.dispatches == 3);
    CHECK(out.switches == 0);
    CHECK(out.jobs[0].finish_ns == ms(30));
  }
  SUBCASE("a later job in a fresh lane after the lane was removed") {
    // a: 0 - 10 ms, its lane is removed; b arrives at 50 ms and opens a new lane: 50 - 60 ms.
    const auto jobs = trace({job("a", 0, 1, ms(10), mib(1), mib(1)), job("b", ms(50), 1, ms(10), mib(1), mib(1))});
    Alternate p;
    const ScheduleOutcome out = run(jobs, p, options(LaneMode::kSingle, gib(16), ms(1)));
    CHECK(out.switches == 0);
    CHECK(out.jobs[1].finish_ns == ms(60));
    CHECK(out.jobs[1].lane == 1);
    CHECK(out.lanes_opened == 2);
  }
  SUBCASE("two lanes, each with its first job") {
    const auto jobs = trace({job("a", 0, 2, ms(10), mib(1), mib(1)), job("b", 0, 3, ms(10), mib(1), mib(1))});
    FirstAdmitted p;
    const ScheduleOutcome out = run(jobs, p, options(LaneMode::kAuto, gib(16), ms(1)));
    CHECK(out.switches == 0);
    CHECK(out.jobs[0].finish_ns == ms(20));
    CHECK(out.jobs[1].finish_ns == ms(30));
    CHECK(out.max_concurrent_lanes == 2);
  }
}

TEST_CASE("simultaneous arrivals are taken in trace order, whatever their position in the vector") {
  // Exclusive: one job at a time. x, y, z all arrive at 0 with trace order 2, 0, 1; w at 0 too but
  // listed first with trace order 3. Order: y, z, x, w, each 10 ms.
  std::vector<JobSpec> jobs = {job("w", 0, 1, ms(10), mib(1), mib(1)), job("x", 0, 1, ms(10), mib(1), mib(1)),
                               job("y", 0, 1, ms(10), mib(1), mib(1)), job("z", 0, 1, ms(10), mib(1), mib(1))};
  jobs[0].trace_order = 3;
  jobs[1].trace_order = 2;
  jobs[2].trace_order = 0;
  jobs[3].trace_order = 1;
  FirstAdmitted p;
  FakeExecutor exec(jobs);
  const ScheduleOutcome out = run(jobs, p, options(LaneMode::kExclusive), &exec);
  CHECK(out.jobs[2].finish_ns == ms(10));
  CHECK(out.jobs[3].finish_ns == ms(20));
  CHECK(out.jobs[1].finish_ns == ms(30));
  CHECK(out.jobs[0].finish_ns == ms(40));
  CHECK(out.jobs[2].admit_seq == 0);
  CHECK(out.jobs[3].admit_seq == 1);
  CHECK(out.jobs[1].admit_seq == 2);
  CHECK(out.jobs[0].admit_seq == 3);
  CHECK(exec.admitted == std::vector<JobIndex>{2, 3, 1, 0});
  // Exclusive admits the next job only when the previous one has finished.
  CHECK(out.jobs[3].admitted_ns == ms(10));
  CHECK(out.jobs[0].admitted_ns == ms(30));
}

TEST_CASE("a decision at an instant sees every arrival of that instant") {
  // long (10 x 10 ms) and short (1 x 10 ms) both at 0, long listed first: Shortest starts short.
  // short 0 - 10 ms, long 10 - 110 ms.
  const auto jobs = trace({job("long", 0, 10, ms(10), mib(1), mib(1)), job("short", 0, 1, ms(10), mib(1), mib(1))});
  Shortest p;
  const ScheduleOutcome out = run(jobs, p, options(LaneMode::kSingle));
  check_segments(out, {{0, 1, 0, ms(10), 1, 0}, {0, 0, ms(10), ms(110), 10, 0}});
}

TEST_CASE("an arrival at the instant a run ends is seen by the decision at that boundary") {
  // a: 2 x 50 ms from 0 (done at 100 ms); b (1 x 10 ms) and c (5 x 10 ms) arrive at exactly 100 ms.
  // The decision at 100 ms sees a's finish and both arrivals: b 100 - 110, c 110 - 160.
  // c arriving at 100 ms also cuts nothing: a's run ended at that instant.
  const auto jobs = trace({job("a", 0, 2, ms(50), mib(1), mib(1)), job("c", ms(100), 5, ms(10), mib(1), mib(1)),
                           job("b", ms(100), 1, ms(10), mib(1), mib(1))});
  Shortest p;
  const ScheduleOutcome out = run(jobs, p, options(LaneMode::kSingle));
  check_segments(out, {{0, 0, 0, ms(100), 2, 0}, {1, 2, ms(100), ms(110), 1, 0}, {1, 1, ms(110), ms(160), 5, 0}});
}

TEST_CASE("a job joining a lane stops the run at the next boundary for a new decision") {
  // long: 10 x 100 ms at 0. short: 1 x 100 ms arrives at 250 ms, joins the lane; long is cut at its
  // boundary at 300 ms. Shortest: short 300 - 400, long 400 - 1100.
  const auto jobs = trace({job("long", 0, 10, ms(100), mib(1), mib(1)), job("short", ms(250), 1, ms(100), mib(1), mib(1))});
  Shortest p;
  FakeExecutor exec(jobs);
  const ScheduleOutcome out = run(jobs, p, options(LaneMode::kSingle), &exec);
  check_segments(out, {{0, 0, 0, ms(300), 3, 0}, {0, 1, ms(300), ms(400), 1, 0}, {0, 0, ms(400), ms(1100), 7, 0}});
  REQUIRE(exec.dispatches.size() == 3);
  CHECK(exec.dispatches[0].iterations == 10);
  CHECK(exec.dispatches[2].iterations == 7);
  CHECK(out.jobs[1].admitted_ns == ms(250));
  CHECK(out.jobs[1].first_start_ns == ms(300));
}

TEST_CASE("a lane below a removed one moves up at its next boundary: admission waits for the room") {
  // C = 10 GiB, auto lanes, FirstAdmitted.
  //   a: P 1, E 3, 2 x 100 ms  -> lane 0 at [7, 10) GiB, 0 - 200 ms
  //   b: P 1, E 3, 10 x 150 ms -> lane 1 at [4, 7) GiB (1 + 1 + 3 + 3 = 8 <= 10), from 0
  //   c: P 4, E 1, 3 x 100 ms, arrives at 250 ms.
  // 200 ms: a done, lane 0 removed, lane 1's target is [7, 10) but b is in an iteration (boundaries
  //   at 150, 300, ...): b is cut at 300 ms.
  // 250 ms: by the sums c fits a new lane (1 + 4 + 3 + 1 = 9 <= 10), but its persistent memory
  //   must sit below the lowest lane, still at 4 GiB: 1 + 4 = 5 > 4. c waits.
  // 300 ms: b's run ends (2 iterations); lane 1 moves up to 7 GiB; Algorithm 1 LaneMoved:
  //   c is admitted into a new lane 2 at [6, 7) GiB. b resumes 300 - 1500 ms (8 x 150), c runs
  //   300 - 600 ms.
  const auto jobs = trace({job("a", 0, 2, ms(100), gib(1), gib(3)), job("b", 0, 10, ms(150), gib(1), gib(3)),
                           job("c", ms(250), 3, ms(100), gib(4), gib(1))});
  FirstAdmitted p;
  SUBCASE("with the timeline") {
    const ScheduleOutcome out = run(jobs, p, options(LaneMode::kAuto, gib(10)));
    CHECK(out.jobs[0].finish_ns == ms(200));
    CHECK(out.jobs[1].finish_ns == ms(1500));
    CHECK(out.jobs[2].finish_ns == ms(600));
    CHECK(out.jobs[2].admitted_ns == ms(300));
    CHECK(out.jobs[2].lane == 2);
    check_segments(out, {{0, 0, 0, ms(200), 2, 0},
                         {1, 1, 0, ms(300), 2, 0},
                         {1, 1, ms(300), ms(1500), 8, 0},
                         {2, 2, ms(300), ms(600), 3, 0}});
    INFO("moves:\n", salus::test::to_string(out.lane_moves));
    REQUIRE(out.lane_moves.size() == 4);
    CHECK(salus::test::same_move(out.lane_moves[0], {0, 0, kUnplaced, 0, gib(7), gib(3)}));
    CHECK(salus::test::same_move(out.lane_moves[1], {0, 1, kUnplaced, 0, gib(4), gib(3)}));
    CHECK(salus::test::same_move(out.lane_moves[2], {ms(300), 1, gib(4), gib(3), gib(7), gib(3)}));
    CHECK(salus::test::same_move(out.lane_moves[3], {ms(300), 2, kUnplaced, 0, gib(6), gib(1)}));
    CHECK(out.lanes_opened == 3);
    CHECK(out.admissions_new_lane == 3);
    // Memory at the end: nothing resident.
    REQUIRE_FALSE(out.memory.empty());
    CHECK(out.memory.back().persistent == 0);
    CHECK(out.memory.back().lanes_reserved == 0);
    CHECK(out.memory.back().ephemeral_active == 0);
    CHECK(out.memory.back().lanes == 0);
    CHECK(out.memory.front().time_ns == 0);
    CHECK(out.memory.front().persistent == gib(2));
    CHECK(out.memory.front().lanes_reserved == gib(6));
    CHECK(out.memory.front().ephemeral_active == gib(6));
  }
  SUBCASE("without the timeline nothing is recorded, the schedule is the same") {
    RunOptions o = options(LaneMode::kAuto, gib(10));
    o.record_timeline = false;
    const ScheduleOutcome out = run(jobs, p, o);
    CHECK(out.segments.empty());
    CHECK(out.lane_moves.empty());
    CHECK(out.memory.empty());
    CHECK(salus::test::finishes(out) == std::vector<TimeNs>{ms(200), ms(1500), ms(600)});
  }
}

TEST_CASE("memory forces a job to wait: when a lane goes, it grows the remaining lane") {
  // C = 10 GiB, auto lanes, FirstAdmitted.
  //   a: P 2, E 4, 10 x 100 ms -> lane 0 at [6, 10)
  //   b: P 2, E 2,  3 x 100 ms -> lane 1 at [4, 6) (2 + 2 + 4 + 2 = 10)
  //   c: P 1, E 5,  2 x 100 ms at 100 ms: new 4 + 1 + 6 + 5 = 16, existing 11 > 10, grow lane 1:
  //      11 - 2 + 5 = 14, lane 0: 11 - 4 + 5 = 12: waits.
  // 300 ms: b done, lane 1 removed (P 2, L 4). c: new 2 + 1 + 4 + 5 = 12 > 10; no lane >= 5;
  //   grow lane 0: 7 - 4 + 5 = 8 <= 10 -> lane 0 grows to 5 GiB (target [5, 10)). a is at its
  //   boundary (300 ms): its run ends, lane 0 moves down, a resumes 300 - 1000, then c 1000 - 1200.
  const auto jobs = trace({job("a", 0, 10, ms(100), gib(2), gib(4)), job("b", 0, 3, ms(100), gib(2), gib(2)),
                           job("c", ms(100), 2, ms(100), gib(1), gib(5))});
  FirstAdmitted p;
  FakeExecutor exec(jobs);
  const ScheduleOutcome out = run(jobs, p, options(LaneMode::kAuto, gib(10)), &exec);
  CHECK(salus::test::finishes(out) == std::vector<TimeNs>{ms(1000), ms(300), ms(1200)});
  CHECK(out.jobs[2].admitted_ns == ms(300));
  CHECK(out.jobs[2].lane == 0);
  CHECK(out.admissions_new_lane == 2);
  CHECK(out.admissions_grown_lane == 1);
  CHECK(out.admissions_existing_lane == 0);
  check_segments(out, {{0, 0, 0, ms(300), 3, 0},
                       {1, 1, 0, ms(300), 3, 0},
                       {0, 0, ms(300), ms(1000), 7, 0},
                       {0, 2, ms(1000), ms(1200), 2, 0}});
  INFO("moves:\n", salus::test::to_string(out.lane_moves));
  REQUIRE(out.lane_moves.size() == 3);
  CHECK(salus::test::same_move(out.lane_moves[2], {ms(300), 0, gib(6), gib(4), gib(5), gib(5)}));
  REQUIRE(exec.dispatches.size() == 4);
  CHECK(exec.dispatches[2].lane_offset == gib(5));
  CHECK(exec.dispatches[2].lane_size == gib(5));
}

TEST_CASE("single lane: a job whose E the lane already holds waits while sum P + P + L > C") {
  // C = 10 GiB, one lane. a (P 4, E 4, 10 x 100 ms) and b (P 3, E 2, 2 x 100 ms) both arrive at 0.
  // a opens the lane (L = 4). b: existing lane needs 4 + 3 + 4 = 11 <= 10: no; the lane already
  // holds E = 2, so growing does not apply (lanes do not shrink): b waits. a runs 0 - 1000 ms,
  // the lane goes, b opens a new one at 1000 ms: 1000 - 1200 ms.
  // (Shrinking the lane to 2 GiB would let a's 4 GiB iterations run in a 2 GiB lane, 11 GiB in use.)
  const auto jobs = trace({job("a", 0, 10, ms(100), gib(4), gib(4)), job("b", 0, 2, ms(100), gib(3), gib(2))});
  FirstAdmitted p;
  const ScheduleOutcome out = run(jobs, p, options(LaneMode::kSingle, gib(10)));
  CHECK(out.jobs[1].admitted_ns == ms(1000));
  CHECK(salus::test::finishes(out) == std::vector<TimeNs>{ms(1000), ms(1200)});
}

TEST_CASE("counters and the executor's admit/release calls") {
  // Two lanes (auto): a 0 - 300 ms (3 x 100), b 0 - 200 ms (1 x 200); c at 100 ms into a third lane,
  // 100 - 150 ms (5 x 10).
  const auto jobs = trace({job("a", 0, 3, ms(100), gib(1), gib(1)), job("b", 0, 1, ms(200), gib(1), gib(1)),
                           job("c", ms(100), 5, ms(10), gib(1), gib(1))});
  FirstAdmitted p;
  FakeExecutor exec(jobs);
  const ScheduleOutcome out = run(jobs, p, options(LaneMode::kAuto), &exec);
  CHECK(salus::test::finishes(out) == std::vector<TimeNs>{ms(300), ms(200), ms(150)});
  CHECK(out.iterations == 9);
  CHECK(out.dispatches == 3);
  CHECK(out.lanes_opened == 3);
  CHECK(out.max_concurrent_lanes == 3);
  CHECK(out.end_ns == ms(300));
  CHECK(out.steps >= 3);
  CHECK(exec.admitted == std::vector<JobIndex>{0, 1, 2});
  CHECK(exec.released == std::vector<JobIndex>{2, 1, 0});
  for (const JobState& s : out.jobs) {
    CHECK(s.status == JobStatus::kDone);
    CHECK_FALSE(s.running);
  }
}

TEST_CASE("a policy that breaks its contract trips a named invariant") {
  const auto jobs = trace({job("a", 0, 2, ms(10), mib(1), mib(1)), job("b", ms(100), 2, ms(10), mib(1), mib(1))});
  SUBCASE("no such job") {
    Broken p(0);
    FakeExecutor exec(jobs);
    CHECK_THROWS_WITH_AS(run_schedule(jobs, p, exec, options(LaneMode::kAuto)),
                         doctest::Contains("policy chooses an admitted job of the lane"), std::logic_error);
  }
  SUBCASE("zero iterations") {
    Broken p(1);
    FakeExecutor exec(jobs);
    CHECK_THROWS_WITH_AS(run_schedule(jobs, p, exec, options(LaneMode::kAuto)),
                         doctest::Contains("policy runs at least one iteration"), std::logic_error);
  }
  SUBCASE("a job that is not in the lane (not arrived yet)") {
    Broken p(2);
    FakeExecutor exec(jobs);
    CHECK_THROWS_WITH_AS(run_schedule(jobs, p, exec, options(LaneMode::kAuto)),
                         doctest::Contains("policy chooses an admitted job of the lane"), std::logic_error);
  }
}

namespace {

// Wraps the fake executor and fails every run of one job after its first iteration.
class FailingExecutor final : public Executor {
 public:
  FailingExecutor(std::span<const JobSpec> jobs, JobIndex victim) : inner_(jobs), victim_(victim) {}
  TimeNs now() const override { return inner_.now(); }
  void start(const Dispatch& d) override { inner_.start(d); }
  void stop_at_boundary(LaneId lane) override { inner_.stop_at_boundary(lane); }
  void wait(TimeNs deadline, std::vector<Completion>& out) override {
    const std::size_t before = out.size();
    inner_.wait(deadline, out);
    for (std::size_t i = before; i < out.size(); ++i) {
      if (out[i].job == victim_) {
        out[i].failed = true;
        out[i].error = "kernel failed";
      }
    }
  }

 private:
  FakeExecutor inner_;
  JobIndex victim_;
};

}  // namespace

TEST_CASE("a run that fails ends its job with the executor's reason: the others go on") {
  // Exclusive: a (2 x 10 ms) fails at the end of its run (20 ms); b then runs 20 - 50 ms.
  const auto jobs = trace({job("a", 0, 2, ms(10), mib(1), mib(1)), job("b", 0, 3, ms(10), mib(1), mib(1))});
  FailingExecutor exec(jobs, 0);
  FirstAdmitted p;
  const ScheduleOutcome out = run_schedule(jobs, p, exec, options(LaneMode::kExclusive));
  CHECK(out.jobs[0].status == JobStatus::kFailed);
  CHECK(out.jobs[0].reason() == "kernel failed");
  CHECK(out.jobs[0].finish_ns == ms(20));
  CHECK(out.jobs[1].status == JobStatus::kDone);
  CHECK(out.jobs[1].finish_ns == ms(50));
}

// JobSpec::first_iter_extra_ns (a catalog's first_iter_ms - iter_ms): the job's first dispatch
// is lengthened by it, once; later dispatches and resumed runs are not. The segment's switch
// field records the switching cost only.
namespace {

JobSpec with_first_extra(JobSpec s, TimeNs extra) {
  s.first_iter_extra_ns = extra;
  return s;
}

std::vector<TimeNs> dispatch_extras(const FakeExecutor& exec) {
  std::vector<TimeNs> v;
  for (const Dispatch& d : exec.dispatches) v.push_back(d.extra_ns);
  return v;
}

}  // namespace

TEST_CASE("first-iteration extra under FIFO (exclusive, first admitted): each job's only run is longer") {
  // a: 3 x 10 ms + 5 ms extra, b: 2 x 10 ms + 4 ms extra, both at 0; one job at a time, each the
  // first of its own lane, so a switching cost never applies.
  //   a 0 - 35 (5 + 30), b 35 - 59 (4 + 20). The same with a switch cost of 1 ms.
  const auto jobs = trace({with_first_extra(job("a", 0, 3, ms(10), mib(1), mib(1)), ms(5)),
                           with_first_extra(job("b", 0, 2, ms(10), mib(1), mib(1)), ms(4))});
  FirstAdmitted p;
  for (const TimeNs sw : {TimeNs{0}, ms(1)}) {
    CAPTURE(sw);
    FakeExecutor exec(jobs);
    const ScheduleOutcome out = run(jobs, p, options(LaneMode::kExclusive, gib(16), sw), &exec);
    CHECK(salus::test::finishes(out) == std::vector<TimeNs>{ms(35), ms(59)});
    check_segments(out, {{0, 0, 0, ms(35), 3, 0}, {1, 1, ms(35), ms(59), 2, 0}});
    CHECK(dispatch_extras(exec) == std::vector<TimeNs>{ms(5), ms(4)});
    CHECK(out.jobs[0].gpu_time_ns == ms(35));
    CHECK(out.jobs[1].gpu_time_ns == ms(24));
    CHECK(out.switches == 0);
  }
}

TEST_CASE("first-iteration extra under SRTF: paid by the first run, not by the resumed one") {
  // One lane, Shortest (SRTF). long: 10 x 100 ms + 50 ms extra at 0; short: 1 x 100 ms + 30 ms
  // extra at 200 ms. long's first iteration takes 50 + 100 ms: its boundaries are 150, 250, 350, ...
  SUBCASE("no switching cost") {
    //   long 0 - 250 (2 iterations: 150 + 100), cut for short, which joined at 200.
    //   short (100 left < 800) 250 - 380 (30 + 100), its first and only run.
    //   long resumes 380 - 1180 (8 x 100: no extra, it is not its first dispatch).
    const auto jobs = trace({with_first_extra(job("long", 0, 10, ms(100), mib(1), mib(1)), ms(50)),
                             with_first_extra(job("short", ms(200), 1, ms(100), mib(1), mib(1)), ms(30))});
    Shortest p;
    FakeExecutor exec(jobs);
    const ScheduleOutcome out = run(jobs, p, options(LaneMode::kSingle), &exec);
    CHECK(salus::test::finishes(out) == std::vector<TimeNs>{ms(1180), ms(380)});
    check_segments(out, {{0, 0, 0, ms(250), 2, 0}, {0, 1, ms(250), ms(380), 1, 0}, {0, 0, ms(380), ms(1180), 8, 0}});
    CHECK(dispatch_extras(exec) == std::vector<TimeNs>{ms(50), ms(30), 0});
    CHECK(out.jobs[0].gpu_time_ns == ms(1050));
    CHECK(out.jobs[1].gpu_time_ns == ms(130));
  }
  SUBCASE("switching cost 10 ms: the segment records 10 ms, not the first iteration's extra") {
    //   long 0 - 250 (the lane's first job: no switch; 50 ms extra).
    //   short 250 - 390 (10 switch + 30 extra + 100), switch field 10 ms.
    //   long 390 - 1200 (10 switch + 800), switch field 10 ms.
    const auto jobs = trace({with_first_extra(job("long", 0, 10, ms(100), mib(1), mib(1)), ms(50)),
                             with_first_extra(job("short", ms(200), 1, ms(100), mib(1), mib(1)), ms(30))});
    Shortest p;
    FakeExecutor exec(jobs);
    const ScheduleOutcome out = run(jobs, p, options(LaneMode::kSingle, gib(16), ms(10)), &exec);
    CHECK(salus::test::finishes(out) == std::vector<TimeNs>{ms(1200), ms(390)});
    check_segments(out,
                   {{0, 0, 0, ms(250), 2, 0}, {0, 1, ms(250), ms(390), 1, ms(10)}, {0, 0, ms(390), ms(1200), 8, ms(10)}});
    // The loop asks for the first-iteration extra only; the executor adds its switching cost.
    CHECK(dispatch_extras(exec) == std::vector<TimeNs>{ms(50), ms(30), 0});
    CHECK(out.switches == 2);
    CHECK(out.jobs[0].gpu_time_ns == ms(1060));
    CHECK(out.jobs[1].gpu_time_ns == ms(140));
  }
  SUBCASE("cut inside the first iteration: that iteration carries the extra, the rest do not") {
    //   short arrives at 20 ms, inside long's first iteration (0 - 150): long is cut at 150 (1).
    //   short 150 - 280 (30 + 100); long resumes 280 - 1180 (9 x 100).
    const auto jobs = trace({with_first_extra(job("long", 0, 10, ms(100), mib(1), mib(1)), ms(50)),
                             with_first_extra(job("short", ms(20), 1, ms(100), mib(1), mib(1)), ms(30))});
    Shortest p;
    FakeExecutor exec(jobs);
    const ScheduleOutcome out = run(jobs, p, options(LaneMode::kSingle), &exec);
    CHECK(salus::test::finishes(out) == std::vector<TimeNs>{ms(1180), ms(280)});
    check_segments(out, {{0, 0, 0, ms(150), 1, 0}, {0, 1, ms(150), ms(280), 1, 0}, {0, 0, ms(280), ms(1180), 9, 0}});
    CHECK(dispatch_extras(exec) == std::vector<TimeNs>{ms(50), ms(30), 0});
  }
}

TEST_CASE("first-iteration extra with one iteration per dispatch: only each job's first dispatch") {
  // Alternate, one lane; a: 3 x 10 ms + 5 ms extra, b: 2 x 10 ms + 3 ms extra, both at 0.
  SUBCASE("no switching cost") {
    //   a 0 - 15 (5 + 10), b 15 - 28 (3 + 10), a 28 - 38, b 38 - 48 (done), a 48 - 58 (done).
    const auto jobs = trace({with_first_extra(job("a", 0, 3, ms(10), mib(1), mib(1)), ms(5)),
                             with_first_extra(job("b", 0, 2, ms(10), mib(1), mib(1)), ms(3))});
    Alternate p;
    FakeExecutor exec(jobs);
    const ScheduleOutcome out = run(jobs, p, options(LaneMode::kSingle), &exec);
    check_segments(out, {{0, 0, 0, ms(15), 1, 0},
                         {0, 1, ms(15), ms(28), 1, 0},
                         {0, 0, ms(28), ms(38), 1, 0},
                         {0, 1, ms(38), ms(48), 1, 0},
                         {0, 0, ms(48), ms(58), 1, 0}});
    CHECK(dispatch_extras(exec) == std::vector<TimeNs>{ms(5), ms(3), 0, 0, 0});
    CHECK(salus::test::finishes(out) == std::vector<TimeNs>{ms(58), ms(48)});
  }
  SUBCASE("switching cost 1 ms") {
    //   a 0 - 15 (no switch), b 15 - 29 (1 + 3 + 10), a 29 - 40 (1 + 10), b 40 - 51, a 51 - 62.
    //   Every segment after the first records 1 ms, b's first one too.
    const auto jobs = trace({with_first_extra(job("a", 0, 3, ms(10), mib(1), mib(1)), ms(5)),
                             with_first_extra(job("b", 0, 2, ms(10), mib(1), mib(1)), ms(3))});
    Alternate p;
    FakeExecutor exec(jobs);
    const ScheduleOutcome out = run(jobs, p, options(LaneMode::kSingle, gib(16), ms(1)), &exec);
    check_segments(out, {{0, 0, 0, ms(15), 1, 0},
                         {0, 1, ms(15), ms(29), 1, ms(1)},
                         {0, 0, ms(29), ms(40), 1, ms(1)},
                         {0, 1, ms(40), ms(51), 1, ms(1)},
                         {0, 0, ms(51), ms(62), 1, ms(1)}});
    CHECK(dispatch_extras(exec) == std::vector<TimeNs>{ms(5), ms(3), 0, 0, 0});  // the switch is the executor's
    CHECK(salus::test::finishes(out) == std::vector<TimeNs>{ms(62), ms(51)});
    CHECK(out.switches == 4);
  }
}

TEST_CASE("withdraw: a pending job and an idle one leave at once, a running one at its next boundary, with its iterations") {
  // 16 GiB, one lane (FirstAdmitted runs the earliest admitted job to completion). a and b
  // (P 1 GiB, E 4 GiB, 100 ms iterations) are admitted at 0, a runs; c (P 12 GiB) waits: 1 + 1 +
  // 12 + 4 > 16.
  const auto jobs = trace({job("a", 0, 10, ms(100), gib(1), gib(4)), job("b", 0, 5, ms(100), gib(1), gib(4)),
                           job("c", 0, 3, ms(100), gib(12), gib(4))});
  std::vector<JobState> states(jobs.size());
  FirstAdmitted policy;
  FakeExecutor exec(jobs);
  SchedulerOptions opts;
  opts.lane_mode = LaneMode::kSingle;
  Scheduler s(jobs, states, policy, exec, opts);
  std::vector<Completion> done, scratch;
  for (JobIndex j = 0; j < 3; ++j) s.arrive(j, j);
  s.split_at_instant(0, true, scratch);
  s.schedule(0, true);
  REQUIRE(states[0].running);
  REQUIRE(states[1].status == JobStatus::kAdmitted);
  REQUIRE(states[2].status == JobStatus::kPending);
  REQUIRE(s.pending() == 1);

  s.withdraw(2, 0);  // pending: out of the queue at once
  CHECK(states[2].status == JobStatus::kInterrupted);
  CHECK(states[2].finish_ns == 0);
  CHECK(s.pending() == 0);
  s.withdraw(1, 0);  // admitted, idle: released at once
  CHECK(states[1].status == JobStatus::kInterrupted);
  CHECK(states[1].iterations_done == 0);
  CHECK(exec.released == std::vector<JobIndex>{1});
  CHECK(s.admitted() == 1);
  s.schedule(0, true);

  // a runs 10 iterations from 0; withdrawn at 250 ms it stops at its boundary at 300 ms with 3 done.
  exec.wait(ms(250), done);
  REQUIRE(done.empty());
  REQUIRE(exec.now() == ms(250));
  s.withdraw(0, ms(250));
  CHECK(states[0].status == JobStatus::kAdmitted);
  s.schedule(ms(250), false);
  exec.wait(kNever, done);
  REQUIRE(exec.now() == ms(300));
  CHECK(s.take_completions(done));  // a job ended: an event
  CHECK(states[0].status == JobStatus::kInterrupted);
  CHECK(states[0].iterations_done == 3);
  CHECK(states[0].finish_ns == ms(300));
  CHECK(s.admitted() == 0);
  CHECK(exec.released == std::vector<JobIndex>{1, 0});
  s.schedule(ms(300), true);
  CHECK(exec.dispatches.size() == 1);  // nothing runs again
}

TEST_CASE("withdraw: a job that finishes on the boundary it was withdrawn at is done, and its index is free for another") {
  // a (2 iterations of 100 ms) is withdrawn at 150 ms: its run ends at 200 ms with its last
  // iteration, so it is done. Index 0 is then given to a new job (a driver's slot reused): when b
  // joins its lane, its run is cut at the next boundary and it goes on, not withdrawn.
  auto jobs = trace({job("a", 0, 2, ms(100), gib(1), gib(4)), job("b", 0, 5, ms(100), gib(1), gib(4))});
  std::vector<JobState> states(jobs.size());
  FirstAdmitted policy;
  FakeExecutor exec(jobs);
  SchedulerOptions opts;
  opts.lane_mode = LaneMode::kSingle;
  Scheduler s(jobs, states, policy, exec, opts);
  std::vector<Completion> done, scratch;
  s.arrive(0, 0);
  s.schedule(0, true);
  exec.wait(ms(150), done);
  s.withdraw(0, ms(150));
  s.schedule(ms(150), false);
  exec.wait(kNever, done);
  CHECK(s.take_completions(done));
  CHECK(states[0].status == JobStatus::kDone);
  CHECK(states[0].iterations_done == 2);
  s.schedule(ms(200), true);
  // Index 0 again: 10 iterations from 200 ms; b joins at 250 ms.
  jobs[0].iterations = 10;
  jobs[0].arrival_ns = ms(200);
  states[0] = JobState{};
  s.rebase(jobs, states);
  s.arrive(0, 2);
  s.schedule(ms(200), true);
  exec.wait(ms(250), done);
  s.arrive(1, 3);
  s.split_at_instant(ms(250), true, scratch);
  s.schedule(ms(250), true);
  exec.wait(kNever, done);  // cut at 300 ms for the new decision
  REQUIRE(exec.now() == ms(300));
  CHECK_FALSE(s.take_completions(done));
  CHECK(states[0].status == JobStatus::kAdmitted);
  CHECK(states[0].iterations_done == 1);
}
