// Inference jobs: request streams (JobSpec::requests_ns), each request one iteration that may
// not start before the request arrives. Schedules computed by hand.
#include <doctest/doctest.h>

#include <stdexcept>
#include <vector>

#include "run/sim_runner.h"
#include "support/jobs.h"

using namespace salus;
using salus::test::mib;
using salus::test::ms;

namespace {

core::JobSpec inference(std::string id, core::TimeNs iter_ns, std::vector<core::TimeNs> requests) {
  core::JobSpec s = test::job(std::move(id), 0, static_cast<std::int64_t>(requests.size()), iter_ns, mib(100), mib(200));
  s.set_requests_ns(std::move(requests));
  return s;
}

run::SimConfig config(core::TimeNs switch_cost, std::optional<core::LaneMode> lanes = std::nullopt) {
  run::SimConfig cfg;
  cfg.interference = "none";
  cfg.switch_cost_ns = switch_cost;
  cfg.lanes = lanes;
  return cfg;
}

}  // namespace

TEST_CASE("inference: a request waits for the previous one, never starts before it arrives") {
  // 5 ms per request; requests at 0, 10, 12 ms: served 0-5, 10-15, 15-20.
  const auto jobs = test::trace({inference("i", ms(5), {0, ms(10), ms(12)})});
  const auto run = run::simulate(jobs, "fifo", config(ms(1)));
  const core::JobState& st = run.outcome.jobs[0];
  CHECK(st.status == core::JobStatus::kDone);
  CHECK(st.finish_ns == ms(20));
  CHECK(st.request_latency_ns() == std::vector<core::TimeNs>{ms(5), ms(5), ms(8)});
}

TEST_CASE("inference: two models share one lane, each switch pays the switching cost") {
  // a: 5 ms, requests 0 and 20 ms; b: 4 ms, requests 2 and 21 ms; one lane, 1 ms per switch.
  // a 0-5; b 5-10 (5 + 1 + 4); a 20-26; b 26-31.
  const auto jobs = test::trace({inference("a", ms(5), {0, ms(20)}), inference("b", ms(4), {ms(2), ms(21)})});
  const auto run = run::simulate(jobs, "pack", config(ms(1), core::LaneMode::kSingle));
  CHECK(run.outcome.jobs[0].request_latency_ns() == std::vector<core::TimeNs>{ms(5), ms(6)});
  CHECK(run.outcome.jobs[1].request_latency_ns() == std::vector<core::TimeNs>{ms(8), ms(10)});
  CHECK(run.outcome.jobs[0].finish_ns == ms(26));
  CHECK(run.outcome.jobs[1].finish_ns == ms(31));
  CHECK(run.outcome.switches == 3);
}

TEST_CASE("inference: a request arriving mid-run makes the lane decide again at the next boundary") {
  // FAIR, one lane: training job t (10 x 10 ms) runs alone while i has no request; i's request
  // at 15 ms cuts t's run at 20 ms (2 iterations); i has less service and runs 20-23 (1 ms switch
  // + 2 ms); t resumes at 23 with a switch: 23 + 1 + 8 x 10 = 104.
  auto jobs = test::trace({test::job("t", 0, 10, ms(10), mib(100), mib(200)), inference("i", ms(2), {ms(15)})});
  const auto run = run::simulate(jobs, "fair", config(ms(1), core::LaneMode::kSingle));
  CHECK(run.outcome.jobs[1].request_latency_ns() == std::vector<core::TimeNs>{ms(8)});
  CHECK(run.outcome.jobs[1].finish_ns == ms(23));
  CHECK(run.outcome.jobs[0].finish_ns == ms(104));
  CHECK(run.outcome.jobs[0].request_latency_ns().empty());
}

TEST_CASE("inference: models in separate lanes serve concurrently") {
  // Auto lanes, enough memory: each model gets its own lane, so b's request is not delayed by a.
  const auto jobs = test::trace({inference("a", ms(10), {0}), inference("b", ms(10), {ms(1)})});
  const auto run = run::simulate(jobs, "pack", config(ms(1), core::LaneMode::kAuto));
  CHECK(run.outcome.jobs[0].request_latency_ns() == std::vector<core::TimeNs>{ms(10)});
  CHECK(run.outcome.jobs[1].request_latency_ns() == std::vector<core::TimeNs>{ms(10)});
}

TEST_CASE("inference: request times must be one per iteration, sorted, not before arrival") {
  auto bad_count = inference("x", ms(1), {0, ms(1)});
  bad_count.iterations = 3;
  CHECK_THROWS_AS(run::simulate(test::trace({bad_count}), "pack", config(0)), std::invalid_argument);
  auto unsorted = inference("x", ms(1), {ms(2), ms(1)});
  CHECK_THROWS_AS(run::simulate(test::trace({unsorted}), "pack", config(0)), std::invalid_argument);
  auto early = inference("x", ms(1), {ms(1)});
  early.arrival_ns = ms(2);
  CHECK_THROWS_AS(run::simulate(test::trace({early}), "pack", config(0)), std::invalid_argument);
}

TEST_CASE("auto lanes with a cap: max_lanes bounds the lanes Algorithm 1 opens") {
  // Two jobs that would each get a lane (2 x 300 MiB in 16 GiB); capped at one lane they share it
  // and PACK runs them one after the other: a 0-30 ms, b 30-60 ms (+1 ms switch).
  const auto jobs = test::trace({test::job("a", 0, 3, ms(10), mib(100), mib(200)),
                                 test::job("b", 0, 3, ms(10), mib(100), mib(200))});
  auto cfg = config(ms(1), core::LaneMode::kAuto);
  cfg.max_lanes = 1;
  const auto capped = run::simulate(jobs, "pack", cfg);
  CHECK(capped.outcome.lanes_opened == 1);
  CHECK(capped.outcome.jobs[1].finish_ns == ms(61));
  cfg.max_lanes = 0;
  const auto free = run::simulate(jobs, "pack", cfg);
  CHECK(free.outcome.lanes_opened == 2);
  CHECK(free.outcome.jobs[1].finish_ns == ms(30));
}
