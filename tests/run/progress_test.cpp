// Progress of long runs: the loops (one GPU and the cluster) call the hook now and then without
// changing the run, and the meter prints nothing for a second, then rewrites one line on a
// terminal (cleared at the run's end) or prints a line every few seconds elsewhere.
#include <doctest/doctest.h>

#include <chrono>
#include <sstream>
#include <string>
#include <vector>

#include "core/summary.h"
#include "run/progress.h"
#include "run/output.h"
#include "run/sim_runner.h"
#include "support/jobs.h"

using namespace salus;

namespace {

/// Many short jobs, so that a run takes several thousand loop steps; some need two GPUs.
std::vector<core::JobSpec> busy_trace(int gang_every) {
  return test::random_jobs(7, 3000, 1, [&](core::JobSpec& j, int i, auto&) {
    if (gang_every > 0 && i % gang_every == 0) j.gpus = 2;
  });
}

std::string outcome_text(const run::PolicyRun& r) {
  return run::result_json({}, r).dump() + std::to_string(r.outcome.steps);
}

}  // namespace

TEST_CASE("the progress hook sees the run every kProgressEvery steps and changes nothing") {
  for (const bool on_cluster : {false, true}) {
    CAPTURE(on_cluster);
    const std::vector<core::JobSpec> jobs = busy_trace(on_cluster ? 10 : 0);
    for (const char* policy : {"fifo", "srtf", "pack", "fair"}) {
      CAPTURE(policy);
      run::SimConfig cfg;
      if (on_cluster) cfg.cluster = cluster::ClusterSpec::uniform(4, cfg.capacity);
      const run::PolicyRun plain = run::simulate(jobs, policy, cfg);
      std::vector<std::int64_t> events;
      std::int64_t last_done = 0;
      core::TimeNs last_now = 0;
      bool monotone = true;
      cfg.progress = [&](const core::Progress& p) {
        events.push_back(p.events);
        std::int64_t done = 0;
        for (const core::JobState& s : p.jobs) done += s.status == core::JobStatus::kDone ? 1 : 0;
        monotone &= done >= last_done && p.now >= last_now;
        last_done = done;
        last_now = p.now;
      };
      const run::PolicyRun watched = run::simulate(jobs, policy, cfg);
      CHECK(outcome_text(watched) == outcome_text(plain));
      REQUIRE_FALSE(events.empty());
      for (std::size_t i = 0; i < events.size(); ++i) CHECK(events[i] == static_cast<std::int64_t>(i + 1) * core::kProgressEvery);
      CHECK(monotone);
      CHECK(last_done > 0);
    }
  }
}

TEST_CASE("ProgressMeter: silent for a second, then one line rewritten on a terminal, cleared at the end") {
  using namespace std::chrono_literals;
  std::chrono::steady_clock::time_point now{};
  std::ostringstream out;
  run::ProgressMeter meter(out, true, [&] { return now; });
  std::vector<core::JobSpec> jobs(4);
  jobs[2].gpus = 3;  // a gang job: one (merged) state, counted once
  std::vector<core::JobState> states(4);
  const core::ProgressHook hook = meter.hook("salus-sim: fair", jobs);
  hook({core::kNsPerS, 1024, states});
  now += 900ms;
  hook({2 * core::kNsPerS, 2048, states});
  CHECK(out.str().empty());  // under a second
  now += 200ms;
  states[0].status = core::JobStatus::kDone;
  states[2].status = core::JobStatus::kDone;
  hook({7200 * 3600 * core::kNsPerS, 4096, states});
  const std::string first = "salus-sim: fair: 2 of 4 jobs done, 7200.0 h simulated, 2 jobs/s (3724 events/s)";
  CHECK(out.str() == "\r" + first);
  now += 100ms;  // too soon to rewrite
  hook({7200 * 3600 * core::kNsPerS, 5120, states});
  CHECK(meter.lines() == 1);
  now += 300ms;
  hook({90 * core::kNsPerS, 6144, states});
  CHECK(meter.lines() == 2);
  // The shorter line is padded over the longer one.
  const std::string second = "salus-sim: fair: 2 of 4 jobs done, 90.0 s simulated, 1 jobs/s (4096 events/s)";
  REQUIRE(second.size() + 2 == first.size());
  CHECK(out.str() == "\r" + first + "\r" + second + "  ");
  meter.end_run();
  CHECK(out.str() == "\r" + first + "\r" + second + "  \r" + std::string(second.size(), ' ') + "\r");
  const std::size_t before = out.str().size();
  meter.end_run();  // nothing shown: nothing to clear
  CHECK(out.str().size() == before);
  // The next run's line keeps to the same pace (many short runs do not flicker).
  const core::ProgressHook next = meter.hook("salus-sim: srtf", jobs);
  next({0, 1024, states});
  CHECK(meter.lines() == 2);
  now += 250ms;
  next({0, 2048, states});
  CHECK(meter.lines() == 3);
}

TEST_CASE("ProgressMeter elsewhere than a terminal: a line every five seconds, nothing to clear") {
  using namespace std::chrono_literals;
  std::chrono::steady_clock::time_point now{};
  std::ostringstream out;
  run::ProgressMeter meter(out, false, [&] { return now; });
  std::vector<core::JobSpec> jobs(2);
  std::vector<core::JobState> states(2);
  const core::ProgressHook hook = meter.hook("gpus_needed: Salus PACK on 8 GPUs", jobs);
  now += 2s;
  hook({0, 1024, states});
  now += 4s;
  hook({0, 2048, states});
  now += 2s;
  hook({125 * core::kNsPerS, 20480, states});
  CHECK(out.str() == "gpus_needed: Salus PACK on 8 GPUs: 0 of 2 jobs done, 0.0 s simulated, 0 jobs/s (512 events/s)\n"
                     "gpus_needed: Salus PACK on 8 GPUs: 0 of 2 jobs done, 2.1 min simulated, 0 jobs/s (2560 events/s)\n");
  meter.end_run();
  CHECK(meter.lines() == 2);
  CHECK(out.str().back() == '\n');
}

TEST_CASE("duration_text") {
  CHECK(run::duration_text(0) == "0.0 s");
  CHECK(run::duration_text(119 * core::kNsPerS) == "119.0 s");
  CHECK(run::duration_text(150 * core::kNsPerS) == "2.5 min");
  CHECK(run::duration_text(7200 * core::kNsPerS) == "2.0 h");
}
