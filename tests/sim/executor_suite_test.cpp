// The executor suite: written once, run against every executor that can run on an ideal GPU:
// the fake executor of the tests (iteration by iteration) and the discrete-event simulator with
// no interference. Every schedule below is derived by hand in the comment above it; times in ns.
#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

#include "core/scheduler.h"
#include "policies/registry.h"
#include "sim/interference.h"
#include "sim/sim_executor.h"
#include "support/checks.h"
#include "support/fake_executor.h"
#include "support/jobs.h"

namespace {

using namespace salus::core;
using salus::test::gib;
using salus::test::job;
using salus::test::mib;
using salus::test::ms;
using salus::test::Seg;
using salus::test::trace;

struct FakeHarness {
  FakeHarness(std::span<const JobSpec> jobs, TimeNs switch_cost) : exec(jobs, switch_cost) {}
  salus::test::FakeExecutor exec;
};

struct SimHarness {
  SimHarness(std::span<const JobSpec> jobs, TimeNs switch_cost) : exec(jobs, model, {}, switch_cost) {}
  salus::sim::NoInterference model;  // declared first: exec keeps a reference to it
  salus::sim::SimExecutor exec;
};

struct Run {
  std::string policy;
  Bytes capacity = gib(16);
  TimeNs switch_cost_ns = 0;
  std::optional<LaneMode> mode = std::nullopt;
  bool shrink = true;
};

template <typename H>
ScheduleOutcome run(const std::vector<JobSpec>& jobs, const Run& r) {
  const auto policy = salus::policies::make_policy(r.policy);
  SchedulerOptions o;
  o.capacity = r.capacity;
  o.lane_mode = r.mode.value_or(policy->default_lane_mode());
  o.record_timeline = true;
  o.lane_shrink = r.shrink;
  H h(jobs, r.switch_cost_ns);
  ScheduleOutcome out = run_schedule(jobs, *policy, h.exec, o);
  salus::test::check_schedule(jobs, out, o, true, r.switch_cost_ns);
  return out;
}

void check_segments(const ScheduleOutcome& out, const std::vector<Seg>& expected) {
  const std::vector<Seg> got = salus::test::segments(out);
  INFO("got segments:\n", salus::test::to_string(got));
  CHECK(got == salus::test::sorted(expected));
}

constexpr TimeNs s_(double seconds) { return static_cast<TimeNs>(seconds * 1000) * kNsPerMs; }

}  // namespace

#define EXECUTORS FakeHarness, SimHarness

TEST_CASE_TEMPLATE("example: FIFO runs a, b, c one after the other", H, EXECUTORS) {
  // a 0 - 1.0 s, b (arrived 0.25) 1.0 - 1.2, c (arrived 0.5) 1.2 - 1.5. Exclusive: no lane is shared.
  const auto jobs = salus::test::paper_example();
  const ScheduleOutcome out = run<H>(jobs, {"fifo"});
  CHECK(salus::test::finishes(out) == std::vector<TimeNs>{1'000'000'000, 1'200'000'000, 1'500'000'000});
  check_segments(out, {{0, 0, 0, s_(1.0), 10, 0}, {1, 1, s_(1.0), s_(1.2), 2, 0}, {2, 2, s_(1.2), s_(1.5), 3, 0}});
  CHECK(out.jobs[1].admitted_ns == s_(1.0));
  CHECK(out.jobs[2].admitted_ns == s_(1.2));
  CHECK(out.switches == 0);
  CHECK(out.max_concurrent_lanes == 1);
}

TEST_CASE_TEMPLATE("example: SRTF preempts a for the shorter b and c", H, EXECUTORS) {
  // One lane. a runs from 0; b joins at 0.25, a is cut at its boundary 0.3 (3 iterations);
  // b (200 ms left) < a (700): b 0.3 - 0.5. At 0.5 b finishes and c arrives: c (300) < a (700):
  // c 0.5 - 0.8, then a 0.8 - 1.5.
  const auto jobs = salus::test::paper_example();
  const ScheduleOutcome out = run<H>(jobs, {"srtf"});
  CHECK(salus::test::finishes(out) == std::vector<TimeNs>{1'500'000'000, 500'000'000, 800'000'000});
  check_segments(out, {{0, 0, 0, s_(0.3), 3, 0},
                       {0, 1, s_(0.3), s_(0.5), 2, 0},
                       {0, 2, s_(0.5), s_(0.8), 3, 0},
                       {0, 0, s_(0.8), s_(1.5), 7, 0}});
  CHECK(out.lanes_opened == 1);
  CHECK(out.admissions_existing_lane == 2);
}

TEST_CASE_TEMPLATE("example: PACK runs each job in its own lane", H, EXECUTORS) {
  // a lane 0 (1000 + 4000 MiB); b at 0.25: 5000 + 1000 + 4000 = 10000 <= 16384 MiB: lane 1,
  // 0.25 - 0.45; c at 0.5: lane 1 is gone, new lane 2, 0.5 - 0.8. a 0 - 1.0.
  const auto jobs = salus::test::paper_example();
  const ScheduleOutcome out = run<H>(jobs, {"pack"});
  CHECK(salus::test::finishes(out) == std::vector<TimeNs>{1'000'000'000, 450'000'000, 800'000'000});
  check_segments(out, {{0, 0, 0, s_(1.0), 10, 0}, {1, 1, s_(0.25), s_(0.45), 2, 0}, {2, 2, s_(0.5), s_(0.8), 3, 0}});
  CHECK(out.lanes_opened == 3);
  CHECK(out.max_concurrent_lanes == 2);
  CHECK(out.admissions_new_lane == 3);
  CHECK(out.jobs[2].lane == 2);
}

TEST_CASE_TEMPLATE("example: FAIR equalises service since the last join", H, EXECUTORS) {
  // One lane. a from 0; b joins at 0.25 (counts reset); a is cut at 0.3 and its in-flight
  // iteration counts: a 100, b 0.
  //   0.3: b (0 < 100), runner-up a, b later: k = ceil(100/100) = 1: b 0.3 - 0.4 (100 / 100)
  //   0.4: tie, a earlier: k = 0/100 + 1 = 1: a 0.4 - 0.5
  //   0.5: c arrives (a's run ended at that instant): all reset to 0: a (earliest) 0.5 - 0.6
  //   0.6: a 100, b 0, c 0: b (earlier than c), k = 1: 0.6 - 0.7, b done
  //   0.7: c 0 < a 100: c 0.7 - 0.8; a 0.8 - 0.9; c 0.9 - 1.0; a 1.0 - 1.1; c 1.1 - 1.2 done
  //   1.2: a alone, 3 left: 1.2 - 1.5
  const auto jobs = salus::test::paper_example();
  const ScheduleOutcome out = run<H>(jobs, {"fair"});
  CHECK(salus::test::finishes(out) == std::vector<TimeNs>{1'500'000'000, 700'000'000, 1'200'000'000});
  check_segments(out, {{0, 0, 0, s_(0.3), 3, 0},
                       {0, 1, s_(0.3), s_(0.4), 1, 0},
                       {0, 0, s_(0.4), s_(0.5), 1, 0},
                       {0, 0, s_(0.5), s_(0.6), 1, 0},
                       {0, 1, s_(0.6), s_(0.7), 1, 0},
                       {0, 2, s_(0.7), s_(0.8), 1, 0},
                       {0, 0, s_(0.8), s_(0.9), 1, 0},
                       {0, 2, s_(0.9), s_(1.0), 1, 0},
                       {0, 0, s_(1.0), s_(1.1), 1, 0},
                       {0, 2, s_(1.1), s_(1.2), 1, 0},
                       {0, 0, s_(1.2), s_(1.5), 3, 0}});
}

TEST_CASE_TEMPLATE("example: SRTF and FAIR in auto lane mode pack like PACK", H, EXECUTORS) {
  // Memory allows a lane per job, so each job runs alone in its lane: same times as PACK.
  const auto jobs = salus::test::paper_example();
  for (const char* p : {"srtf", "fair", "pack"}) {
    INFO(p);
    const ScheduleOutcome out = run<H>(jobs, {p, gib(16), 0, LaneMode::kAuto});
    CHECK(salus::test::finishes(out) == std::vector<TimeNs>{1'000'000'000, 450'000'000, 800'000'000});
  }
}

TEST_CASE_TEMPLATE("a job with P + E > C is rejected: the others run as if it were not there", H, EXECUTORS) {
  std::vector<JobSpec> jobs = salus::test::paper_example();
  jobs.insert(jobs.begin() + 1, job("huge", ms(100), 5, ms(100), gib(10), gib(7)));
  jobs = trace(jobs);
  const std::vector<std::pair<const char*, std::vector<TimeNs>>> expected = {
      {"fifo", {s_(1.0), -1, s_(1.2), s_(1.5)}},
      {"srtf", {s_(1.5), -1, s_(0.5), s_(0.8)}},
      {"pack", {s_(1.0), -1, s_(0.45), s_(0.8)}},
      {"fair", {s_(1.5), -1, s_(0.7), s_(1.2)}},
  };
  for (const auto& [policy, finish] : expected) {
    INFO(policy);
    const ScheduleOutcome out = run<H>(jobs, {policy});
    CHECK(out.jobs[1].status == JobStatus::kRejected);
    CHECK(out.jobs[1].reason() == "needs P + E = 10 GiB + 7 GiB = 17 GiB, more than the GPU's 16 GiB");
    CHECK(out.jobs[1].iterations_done == 0);
    CHECK(salus::test::finishes(out) == finish);
  }
}

TEST_CASE_TEMPLATE("switch cost: SRTF pays it at every change of job in the lane", H, EXECUTORS) {
  // Switch cost 10 ms. a 0 - 0.3 (first job: free). b: 0.3 + 10 ms + 200 ms = 0.51 (c arriving
  // at 0.5 cuts b at its boundary 0.51, which is its end anyway). c: 0.51 + 0.01 + 0.3 = 0.82.
  // a: 0.82 + 0.01 + 0.7 = 1.53.
  const auto jobs = salus::test::paper_example();
  const ScheduleOutcome out = run<H>(jobs, {"srtf", gib(16), ms(10)});
  CHECK(salus::test::finishes(out) == std::vector<TimeNs>{1'530'000'000, 510'000'000, 820'000'000});
  check_segments(out, {{0, 0, 0, s_(0.3), 3, 0},
                       {0, 1, s_(0.3), s_(0.51), 2, ms(10)},
                       {0, 2, s_(0.51), s_(0.82), 3, ms(10)},
                       {0, 0, s_(0.82), s_(1.53), 7, ms(10)}});
  CHECK(out.switches == 3);
}

TEST_CASE_TEMPLATE("switch cost: FAIR, and the iteration in flight at a join counts after it", H, EXECUTORS) {
  // Switch cost 10 ms, one lane.
  //   a 0 - 0.3 (free, cut at 0.3 after b joined at 0.25): a 100, b 0
  //   b 0.3 - 0.41 (10 + 100); 100 / 100: a (earlier) 0.41 - 0.52
  //   c joins at 0.5 while a's iteration is in flight: all reset, a's iteration (ends 0.52) counts
  //   after the join: a 100, b 0, c 0. b (earlier than c) 0.52 - 0.63, b done.
  //   c 0.63 - 0.74 (a 100, c 100); a (tie, earlier) 0.74 - 0.85 (200); c 0.85 - 0.96 (200);
  //   a 0.96 - 1.07 (300); c 1.07 - 1.18, c done; a: 4 left: 1.18 + 0.01 + 0.4 = 1.59.
  // Total: 1.5 s of work + 9 switches x 10 ms = 1.59 s.
  const auto jobs = salus::test::paper_example();
  const ScheduleOutcome out = run<H>(jobs, {"fair", gib(16), ms(10)});
  CHECK(salus::test::finishes(out) == std::vector<TimeNs>{1'590'000'000, 630'000'000, 1'180'000'000});
  check_segments(out, {{0, 0, 0, s_(0.3), 3, 0},
                       {0, 1, s_(0.3), s_(0.41), 1, ms(10)},
                       {0, 0, s_(0.41), s_(0.52), 1, ms(10)},
                       {0, 1, s_(0.52), s_(0.63), 1, ms(10)},
                       {0, 2, s_(0.63), s_(0.74), 1, ms(10)},
                       {0, 0, s_(0.74), s_(0.85), 1, ms(10)},
                       {0, 2, s_(0.85), s_(0.96), 1, ms(10)},
                       {0, 0, s_(0.96), s_(1.07), 1, ms(10)},
                       {0, 2, s_(1.07), s_(1.18), 1, ms(10)},
                       {0, 0, s_(1.18), s_(1.59), 4, ms(10)}});
  CHECK(out.switches == 9);
}

TEST_CASE_TEMPLATE("switch cost: FIFO and PACK never pay it in the example", H, EXECUTORS) {
  // FIFO: every job is the first of its own lane. PACK: likewise (three lanes).
  const auto jobs = salus::test::paper_example();
  const ScheduleOutcome fifo = run<H>(jobs, {"fifo", gib(16), ms(10)});
  CHECK(salus::test::finishes(fifo) == std::vector<TimeNs>{1'000'000'000, 1'200'000'000, 1'500'000'000});
  CHECK(fifo.switches == 0);
  const ScheduleOutcome pack = run<H>(jobs, {"pack", gib(16), ms(10)});
  CHECK(salus::test::finishes(pack) == std::vector<TimeNs>{1'000'000'000, 450'000'000, 800'000'000});
  CHECK(pack.switches == 0);
}

TEST_CASE_TEMPLATE("simultaneous arrivals: FIFO order is trace order, not vector position", H, EXECUTORS) {
  // All at t = 0, trace orders 2, 0, 3, 1: order q (0), s (1), p (2), r (3); each 100 ms x 1.
  std::vector<JobSpec> jobs = {job("p", 0, 1, ms(100), mib(1), mib(1)), job("q", 0, 1, ms(100), mib(1), mib(1)),
                               job("r", 0, 1, ms(100), mib(1), mib(1)), job("s", 0, 1, ms(100), mib(1), mib(1))};
  jobs[0].trace_order = 2;
  jobs[1].trace_order = 0;
  jobs[2].trace_order = 3;
  jobs[3].trace_order = 1;
  const ScheduleOutcome out = run<H>(jobs, {"fifo"});
  CHECK(salus::test::finishes(out) == std::vector<TimeNs>{ms(300), ms(100), ms(400), ms(200)});
  CHECK(out.jobs[1].submit_rank == 0);
  CHECK(out.jobs[3].submit_rank == 1);
  CHECK(out.jobs[0].submit_rank == 2);
  CHECK(out.jobs[2].submit_rank == 3);
}

TEST_CASE_TEMPLATE("simultaneous arrivals: SRTF ties in remaining time go by trace order", H, EXECUTORS) {
  // x, y: both at 0, 2 x 100 ms (200 ms). Trace order: y (0) before x (1), so y starts.
  // z (1 x 100 ms) arrives at 0.1, exactly at y's boundary: y's run ends there (1 done).
  // 0.1: x 200, y 100, z 100: y and z tie, y arrived first: y 0.1 - 0.2.
  // 0.2: z (100) < x (200): z 0.2 - 0.3, x 0.3 - 0.5.
  std::vector<JobSpec> jobs = {job("x", 0, 2, ms(100), mib(1), mib(1)), job("y", 0, 2, ms(100), mib(1), mib(1)),
                               job("z", ms(100), 1, ms(100), mib(1), mib(1))};
  jobs[0].trace_order = 1;
  jobs[1].trace_order = 0;
  jobs[2].trace_order = 2;
  const ScheduleOutcome out = run<H>(jobs, {"srtf"});
  CHECK(salus::test::finishes(out) == std::vector<TimeNs>{ms(500), ms(200), ms(300)});
}

TEST_CASE_TEMPLATE("FIFO never runs two jobs at once", H, EXECUTORS) {
  // Six jobs with overlapping arrivals: each starts at max(arrival, previous finish).
  //   j0 0, 3 x 50 -> 0 - 150;   j1 10, 1 x 200 -> 150 - 350;  j2 20, 4 x 25 -> 350 - 450
  //   j3 500, 2 x 10 -> 500 - 520; j4 505, 1 x 1 -> 520 - 521; j5 505, 5 x 2 -> 521 - 531
  const auto jobs = trace({job("j0", 0, 3, ms(50), gib(4), gib(4)), job("j1", ms(10), 1, ms(200), gib(1), gib(1)),
                           job("j2", ms(20), 4, ms(25), gib(2), gib(8)), job("j3", ms(500), 2, ms(10), gib(1), gib(1)),
                           job("j4", ms(505), 1, ms(1), gib(1), gib(1)), job("j5", ms(505), 5, ms(2), gib(1), gib(1))});
  const ScheduleOutcome out = run<H>(jobs, {"fifo"});
  CHECK(salus::test::finishes(out) == std::vector<TimeNs>{ms(150), ms(350), ms(450), ms(520), ms(521), ms(531)});
  CHECK(out.dispatches == 6);
  CHECK(out.max_concurrent_lanes == 1);
}

TEST_CASE_TEMPLATE("PACK: a lane below a removed one moves up at its next boundary, recorded", H, EXECUTORS) {
  // C = 10 GiB.
  //   a: P 1, E 3, 2 x 100 ms  -> lane 0 at [7, 10) GiB, 0 - 0.2
  //   b: P 1, E 3, 10 x 150 ms -> lane 1 at [4, 7) GiB, from 0
  //   c: P 4, E 1, 3 x 100 ms, at 0.25.
  // 0.2: lane 0 removed; lane 1 must move up to 7 GiB: b is cut at its boundary 0.3.
  // 0.25: c fits by the sums (1 + 4 + 3 + 1 = 9) but not below lane 1 (1 + 4 > 4 GiB): waits.
  // 0.3: lane 1 moves up; c is admitted (new lane 2 at [6, 7)); b 0.3 - 1.5, c 0.3 - 0.6.
  const auto jobs = trace({job("a", 0, 2, ms(100), gib(1), gib(3)), job("b", 0, 10, ms(150), gib(1), gib(3)),
                           job("c", ms(250), 3, ms(100), gib(4), gib(1))});
  const ScheduleOutcome out = run<H>(jobs, {"pack", gib(10)});
  CHECK(salus::test::finishes(out) == std::vector<TimeNs>{ms(200), ms(1500), ms(600)});
  CHECK(out.jobs[2].admitted_ns == ms(300));
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
}

TEST_CASE_TEMPLATE("PACK: memory forces a job to wait, then it grows the remaining lane", H, EXECUTORS) {
  // C = 10 GiB.
  //   a: P 2, E 4, 10 x 100 ms -> lane 0 at [6, 10)
  //   b: P 2, E 2,  3 x 100 ms -> lane 1 at [4, 6) (2 + 2 + 4 + 2 = 10)
  //   c: P 1, E 5,  2 x 100 ms at 0.1: new 16, existing 11 > 10, grow lane 1: 14, lane 0: 12: waits.
  // 0.3: b done, lane 1 removed. c: new 2 + 1 + 4 + 5 = 12; no lane >= 5; grow lane 0:
  //   7 - 4 + 5 = 8 -> lane 0 becomes 5 GiB. a is at its boundary: cut, lane 0 moves down to
  //   [5, 10), a resumes 0.3 - 1.0 (earliest admitted first), c 1.0 - 1.2.
  const auto jobs = trace({job("a", 0, 10, ms(100), gib(2), gib(4)), job("b", 0, 3, ms(100), gib(2), gib(2)),
                           job("c", ms(100), 2, ms(100), gib(1), gib(5))});
  const ScheduleOutcome out = run<H>(jobs, {"pack", gib(10)});
  CHECK(salus::test::finishes(out) == std::vector<TimeNs>{ms(1000), ms(300), ms(1200)});
  CHECK(out.jobs[2].admitted_ns == ms(300));
  CHECK(out.admissions_grown_lane == 1);
  check_segments(out, {{0, 0, 0, ms(300), 3, 0},
                       {1, 1, 0, ms(300), 3, 0},
                       {0, 0, ms(300), ms(1000), 7, 0},
                       {0, 2, ms(1000), ms(1200), 2, 0}});
  REQUIRE(out.lane_moves.size() == 3);
  CHECK(salus::test::same_move(out.lane_moves[2], {ms(300), 0, gib(6), gib(4), gib(5), gib(5)}));
}

TEST_CASE_TEMPLATE("SRTF: admission limited by memory in the single lane", H, EXECUTORS) {
  // C = 10 GiB, one lane.
  //   a: P 4, E 4, 10 x 100 ms at 0 -> the lane (L = 4) at [6, 10)
  //   b: P 3, E 2,  2 x 100 ms at 0.1: 4 + 3 + 4 = 11 > 10: waits
  //   c: P 1, E 1,  3 x 100 ms at 0.2: 4 + 1 + 4 = 9 <= 10: admitted (b still waits: Algorithm 1
  //      goes on down the queue). a is cut at 0.2 (2 done): c (300) < a (800): c 0.2 - 0.5.
  //   0.5: c done; b: 4 + 3 + 4 = 11: still waits. a 0.5 - 1.3.
  //   1.3: a done, the lane goes; b opens a new one: 1.3 - 1.5.
  const auto jobs = trace({job("a", 0, 10, ms(100), gib(4), gib(4)), job("b", ms(100), 2, ms(100), gib(3), gib(2)),
                           job("c", ms(200), 3, ms(100), gib(1), gib(1))});
  const ScheduleOutcome out = run<H>(jobs, {"srtf", gib(10)});
  CHECK(salus::test::finishes(out) == std::vector<TimeNs>{ms(1300), ms(1500), ms(500)});
  CHECK(out.jobs[1].admitted_ns == ms(1300));
  CHECK(out.jobs[2].admitted_ns == ms(200));
  check_segments(out, {{0, 0, 0, ms(200), 2, 0},
                       {0, 2, ms(200), ms(500), 3, 0},
                       {0, 0, ms(500), ms(1300), 8, 0},
                       {1, 1, ms(1300), ms(1500), 2, 0}});
}

TEST_CASE_TEMPLATE("SRTF: admission by priority: the shorter of two simultaneous jobs is admitted first", H, EXECUTORS) {
  // C = 10 GiB, one lane. a (P 4, E 4, 10 x 100 ms) and b (P 3, E 2, 2 x 100 ms) both at 0.
  // SRTF admits by least remaining time (paper §4.2), so b comes first and opens the lane
  // (L = 2). a: growing the lane to 4 needs 3 + 4 + 4 = 11 > 10: a waits. b 0 - 0.2; the lane
  // goes with b, a opens a new one: 0.2 - 1.2. (In arrival order a would have been admitted
  // first and b would have waited until 1.0.)
  const auto jobs = trace({job("a", 0, 10, ms(100), gib(4), gib(4)), job("b", 0, 2, ms(100), gib(3), gib(2))});
  const ScheduleOutcome out = run<H>(jobs, {"srtf", gib(10)});
  CHECK(out.jobs[1].admitted_ns == 0);
  CHECK(out.jobs[0].admitted_ns == ms(200));
  CHECK(salus::test::finishes(out) == std::vector<TimeNs>{ms(1200), ms(200)});
}

TEST_CASE_TEMPLATE("lane shrinking: the lane follows the largest E of its jobs down, recorded as a move", H, EXECUTORS) {
  // C = 10 GiB, SRTF, one lane. big (P 1, E 6, 2 x 100 ms) and small (P 1, E 1, 5 x 100 ms) at 0;
  // late (P 4, E 1, 1 x 100 ms) at 0.05.
  //   0: big (200 ms) is admitted first and opens the lane L = 6 at [4, 10); small joins it
  //      (1 + 1 + 6 = 8 <= 10). big runs 0 - 0.2 (shortest).
  //   0.05: late: 2 + 4 + 6 = 12 > 10: waits.
  //   0.2: big finishes: the lane shrinks to small's E = 1 and moves to [9, 10) at once (idle):
  //      late fits now (1 + 4 + 1 = 6): admitted at 0.2; late (100) before small (500):
  //      late 0.2 - 0.3, small 0.3 - 0.8.
  // Without shrinking the lane keeps L = 6 (1 + 4 + 6 = 11 > 10) and late waits for small:
  // small 0.2 - 0.7, late 0.7 - 0.8
  // (the lane is removed with small at 0.7 and late opens a new one).
  const auto jobs = trace({job("big", 0, 2, ms(100), gib(1), gib(6)), job("small", 0, 5, ms(100), gib(1), gib(1)),
                           job("late", ms(50), 1, ms(100), gib(4), gib(1))});
  const ScheduleOutcome out = run<H>(jobs, {"srtf", gib(10)});
  CHECK(salus::test::finishes(out) == std::vector<TimeNs>{ms(200), ms(800), ms(300)});
  CHECK(out.jobs[2].admitted_ns == ms(200));
  REQUIRE(out.lane_moves.size() == 2);  // placed at 0, shrunk at 0.2
  CHECK(salus::test::same_move(out.lane_moves[1], {ms(200), 0, gib(4), gib(6), gib(9), gib(1)}));
  const ScheduleOutcome kept = run<H>(jobs, {"srtf", gib(10), 0, std::nullopt, false});
  CHECK(salus::test::finishes(kept) == std::vector<TimeNs>{ms(200), ms(700), ms(800)});
  CHECK(kept.jobs[2].admitted_ns == ms(700));
}

TEST_CASE_TEMPLATE("LAS: the newcomer runs until it has caught up, ties to the earlier arrival", H, EXECUTORS) {
  // One lane, 100 ms iterations. a: 3 at 0; b: 2 at 0.1.
  //   a 0 - 0.1 (1 iteration, attained 100); b joins at 0.1, exactly a boundary: b (0) runs
  //   0.1 - 0.2 (100, tied with a: a is earlier) a 0.2 - 0.3 (200), b 0.3 - 0.4 (done), a 0.4 - 0.5.
  const auto jobs = trace({job("a", 0, 3, ms(100), mib(1), mib(1)), job("b", ms(100), 2, ms(100), mib(1), mib(1))});
  const ScheduleOutcome out = run<H>(jobs, {"las"});
  CHECK(salus::test::finishes(out) == std::vector<TimeNs>{ms(500), ms(400)});
  check_segments(out, {{0, 0, 0, ms(100), 1, 0},
                       {0, 1, ms(100), ms(200), 1, 0},
                       {0, 0, ms(200), ms(300), 1, 0},
                       {0, 1, ms(300), ms(400), 1, 0},
                       {0, 0, ms(400), ms(500), 1, 0}});
}

TEST_CASE_TEMPLATE("priority: a higher level preempts at the next boundary, FIFO within a level", H, EXECUTORS) {
  // One lane, 100 ms iterations. a: 5 at 0, priority 0; b: 2 at 0.15, priority 2; c: 1 at 0.16,
  // priority 2. a 0 - 0.2 (cut at its boundary after b joins), b 0.2 - 0.4, c 0.4 - 0.5 (same
  // level, later), a 0.5 - 0.8.
  auto jobs = trace({job("a", 0, 5, ms(100), mib(1), mib(1)), job("b", ms(150), 2, ms(100), mib(1), mib(1)),
                     job("c", ms(160), 1, ms(100), mib(1), mib(1))});
  jobs[1].priority = 2;
  jobs[2].priority = 2;
  const ScheduleOutcome out = run<H>(jobs, {"priority"});
  CHECK(salus::test::finishes(out) == std::vector<TimeNs>{ms(800), ms(400), ms(500)});
  check_segments(out, {{0, 0, 0, ms(200), 2, 0},
                       {0, 1, ms(200), ms(400), 2, 0},
                       {0, 2, ms(400), ms(500), 1, 0},
                       {0, 0, ms(500), ms(800), 3, 0}});
}

TEST_CASE_TEMPLATE("priority: admission follows the levels, not arrival", H, EXECUTORS) {
  // C = 10 GiB, one lane. a (P 5, E 2, 3 x 100 ms, level 0) and b (P 5, E 2, 1 x 100 ms, level 1)
  // arrive at 0 and cannot both be admitted (5 + 5 + 2 > 10): b, the higher level, first:
  // b 0 - 0.1, then a 0.1 - 0.4.
  auto jobs = trace({job("a", 0, 3, ms(100), gib(5), gib(2)), job("b", 0, 1, ms(100), gib(5), gib(2))});
  jobs[1].priority = 1;
  const ScheduleOutcome out = run<H>(jobs, {"priority", gib(10)});
  CHECK(out.jobs[1].admitted_ns == 0);
  CHECK(out.jobs[0].admitted_ns == ms(100));
  CHECK(salus::test::finishes(out) == std::vector<TimeNs>{ms(400), ms(100)});
}

TEST_CASE_TEMPLATE("FAIR: three jobs with different iteration times", H, EXECUTORS) {
  // One lane; a 6 x 100 ms, b 4 x 50 ms, c 2 x 200 ms, all at 0 (trace order a, b, c).
  // (service a/b/c in ms -> chosen, runner-up, k)
  //   0    : 0/0/0       -> a, b, tie won: 0/100 + 1 = 1     a 0 - 0.1
  //   0.1  : 100/0/0     -> b, c, tie won: 1                 b 0.1 - 0.15
  //   0.15 : 100/50/0    -> c, b (50), c later: ceil(50/200) = 1   c 0.15 - 0.35
  //   0.35 : 100/50/200  -> b, a (100), b later: ceil(50/50) = 1   b 0.35 - 0.4
  //   0.4  : 100/100/200 -> a (tie, earlier), b: 1           a 0.4 - 0.5
  //   0.5  : 200/100/200 -> b, a (200, earlier than c), b later: ceil(100/50) = 2 = all it has left
  //                                                          b 0.5 - 0.6 (done)
  //   0.6  : 200/-/200   -> a (tie, earlier), 1             a 0.6 - 0.7
  //   0.7  : 300/-/200   -> c, a, ceil(100/200) = 1          c 0.7 - 0.9 (done)
  //   0.9  : a alone, 3 left                                 a 0.9 - 1.2
  const auto jobs = trace({job("a", 0, 6, ms(100), mib(1), mib(1)), job("b", 0, 4, ms(50), mib(1), mib(1)),
                           job("c", 0, 2, ms(200), mib(1), mib(1))});
  const ScheduleOutcome out = run<H>(jobs, {"fair"});
  CHECK(salus::test::finishes(out) == std::vector<TimeNs>{ms(1200), ms(600), ms(900)});
  check_segments(out, {{0, 0, 0, ms(100), 1, 0},
                       {0, 1, ms(100), ms(150), 1, 0},
                       {0, 2, ms(150), ms(350), 1, 0},
                       {0, 1, ms(350), ms(400), 1, 0},
                       {0, 0, ms(400), ms(500), 1, 0},
                       {0, 1, ms(500), ms(600), 2, 0},
                       {0, 0, ms(600), ms(700), 1, 0},
                       {0, 2, ms(700), ms(900), 1, 0},
                       {0, 0, ms(900), ms(1200), 3, 0}});
}

TEST_CASE_TEMPLATE("the same trace run twice gives the same outcome", H, EXECUTORS) {
  std::vector<JobSpec> jobs = salus::test::paper_example();
  jobs.push_back(job("d", ms(250), 4, ms(30), gib(3), gib(6)));
  jobs.push_back(job("e", ms(700), 1, ms(500), gib(2), gib(9)));
  jobs = trace(jobs);
  for (const char* policy : {"fifo", "srtf", "pack", "fair"}) {
    INFO(policy);
    const ScheduleOutcome x = run<H>(jobs, {policy, gib(16), ms(3)});
    const ScheduleOutcome y = run<H>(jobs, {policy, gib(16), ms(3)});
    CHECK(salus::test::segments(x) == salus::test::segments(y));
    CHECK(salus::test::finishes(x) == salus::test::finishes(y));
    REQUIRE(x.lane_moves.size() == y.lane_moves.size());
    for (std::size_t i = 0; i < x.lane_moves.size(); ++i) CHECK(salus::test::same_move(x.lane_moves[i], y.lane_moves[i]));
    REQUIRE(x.memory.size() == y.memory.size());
    for (std::size_t i = 0; i < x.memory.size(); ++i) {
      CHECK(x.memory[i].time_ns == y.memory[i].time_ns);
      CHECK(x.memory[i].persistent == y.memory[i].persistent);
      CHECK(x.memory[i].lanes_reserved == y.memory[i].lanes_reserved);
      CHECK(x.memory[i].ephemeral_active == y.memory[i].ephemeral_active);
    }
    CHECK(x.dispatches == y.dispatches);
    CHECK(x.switches == y.switches);
    CHECK(x.end_ns == y.end_ns);
  }
}
