// The real executor driven by the one scheduling loop (core::run_schedule) on the CPU device:
// every policy runs real LeNet/MLP training to the end, the loop's schedule holds on a real
// clock, and faults (a lane or a persistent block too small, an unknown model, Ctrl-C) stop only
// what they concern.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/scheduler.h"
#include "core/units.h"
#include "run/sim_runner.h"
#include "gpu_backend/device.h"
#include "gpu_backend/memory_pool.h"
#include "gpu_backend/model.h"
#include "gpu_backend/real_executor.h"
#include "policies/registry.h"
#include "support/jobs.h"
#include "support/sanitizers.h"

namespace {

using namespace salus;
using core::Bytes;
using core::JobSpec;
using core::JobStatus;
using test::mib;
using test::ms;

constexpr Bytes kPool = 64 * core::kMiB;

/// The real figures of a workload on the CPU device: P and the lane memory of one iteration.
struct Figures {
  Bytes persistent = 0, ephemeral = 0;
};
Figures figures(const std::string& workload) {
  auto device = gpu::make_cpu_device();
  auto ops = device->create_ops();
  std::string name = workload;
  const bool infer = name.size() > 6 && name.compare(name.size() - 6, 6, "_infer") == 0;
  if (infer) name.resize(name.size() - 6);
  const auto net = gpu::build_model(name);
  return {net->persistent_bytes(), net->ephemeral_bytes(*ops, !infer)};
}

/// A job declaring exactly the real P and E of its model.
JobSpec real_job(std::string id, const std::string& workload, core::TimeNs arrival, std::int64_t iterations,
                 core::TimeNs iter_ns = ms(2)) {
  const Figures f = figures(workload);
  JobSpec s = test::job(std::move(id), arrival, iterations, iter_ns, f.persistent, f.ephemeral);
  s.workload = workload;
  return s;
}

struct RealRun {
  core::ScheduleOutcome outcome;
  std::vector<gpu::RealJobStats> stats;
  std::vector<core::TimeNs> switch_latencies;
  int workers = 0;
  core::SchedulerOptions opts;
};

RealRun run_real(const std::vector<JobSpec>& jobs, const std::string& policy_name,
                 std::optional<core::LaneMode> lanes = std::nullopt, const std::atomic<bool>* stop = nullptr) {
  const auto policy = policies::make_policy(policy_name);
  run::SimConfig cfg;
  cfg.lanes = lanes;
  RealRun r;
  r.opts.capacity = kPool;
  r.opts.lane_mode = run::lane_mode_for(*policy, cfg);
  r.opts.record_timeline = true;
  r.opts.stop = stop;
  auto device = gpu::make_cpu_device();
  gpu::MemoryPool pool(*device, kPool);
  gpu::RealExecutor real(*device, pool, jobs, gpu::RealOptions{});
  r.outcome = core::run_schedule(jobs, *policy, real, r.opts);
  for (std::size_t i = 0; i < jobs.size(); ++i) r.stats.push_back(real.stats(static_cast<core::JobIndex>(i)));
  r.switch_latencies = real.switch_latencies();
  r.workers = real.workers();
  return r;
}

bool overlap(const core::Segment& a, const core::Segment& b) { return a.start_ns < b.end_ns && b.start_ns < a.end_ns; }

/// What every real schedule must satisfy. Like support/checks.h's check_schedule, less what only
/// an ideal clock gives: the loop stamps a job's first start when it dispatches it, the executor
/// stamps a segment when its worker begins, a little later.
void check_real_schedule(const std::vector<JobSpec>& jobs, const RealRun& r) {
  const core::ScheduleOutcome& out = r.outcome;
  REQUIRE(out.jobs.size() == jobs.size());
  std::vector<std::int64_t> iterations(jobs.size(), 0);
  std::vector<core::TimeNs> first(jobs.size(), core::kNever), last(jobs.size(), -1);
  for (const core::Segment& s : out.segments) {
    const auto j = static_cast<std::size_t>(s.job);
    INFO("segment of ", jobs[j].id, " in lane ", s.lane, ": ", s.start_ns, "..", s.end_ns);
    CHECK(s.iterations >= 1);
    CHECK(s.start_ns < s.end_ns);
    CHECK(s.start_ns >= jobs[j].arrival_ns);
    CHECK(s.switch_ns == 0);
    iterations[j] += s.iterations;
    first[j] = std::min(first[j], s.start_ns);
    last[j] = std::max(last[j], s.end_ns);
  }
  for (const core::Segment& a : out.segments) {
    for (const core::Segment& b : out.segments) {
      if (&a == &b) continue;
      INFO("segments ", jobs[static_cast<std::size_t>(a.job)].id, " ", a.start_ns, "..", a.end_ns, " (lane ", a.lane,
           ") and ", jobs[static_cast<std::size_t>(b.job)].id, " ", b.start_ns, "..", b.end_ns, " (lane ", b.lane, ")");
      if (a.lane == b.lane || r.opts.lane_mode == core::LaneMode::kExclusive) CHECK_FALSE(overlap(a, b));
    }
  }
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    INFO("job ", jobs[j].id);
    const core::JobState& st = out.jobs[j];
    if (st.status != JobStatus::kDone) continue;
    CHECK(iterations[j] == jobs[j].iterations);
    CHECK(st.iterations_done == jobs[j].iterations);
    CHECK_FALSE(st.running);
    CHECK(st.admitted_ns >= jobs[j].arrival_ns);
    CHECK(st.first_start_ns >= st.admitted_ns);
    CHECK(st.first_start_ns <= first[j]);
    CHECK(last[j] == st.finish_ns);
  }
  for (const core::MemorySample& m : out.memory) {
    INFO("memory sample at ", m.time_ns);
    CHECK(m.persistent + m.lanes_reserved <= r.opts.capacity);
    CHECK(m.ephemeral_active <= m.lanes_reserved);
  }
}

/// Three jobs, the third arriving while the others run.
std::vector<JobSpec> three_jobs() {
  return test::trace({real_job("lenet_a", "lenet_32", 0, 16, ms(2)), real_job("mlp_b", "mlp_64", 0, 12, ms(1)),
                      real_job("lenet_c", "lenet_32", ms(10), 8, ms(2))});
}

}  // namespace

TEST_CASE("every policy trains every job to the end on the CPU device") {
  const std::vector<JobSpec> jobs = three_jobs();
  for (const std::string& name : policies::policy_names()) {
    CAPTURE(name);
    const RealRun r = run_real(jobs, name);
    // The loop's own checks: lanes never run two things at once, exclusive mode never overlaps,
    // segments add up to each job's iterations, the safety condition held at every sample.
    check_real_schedule(jobs, r);
    CHECK(r.outcome.iterations == 16 + 12 + 8);
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      INFO("job ", jobs[i].id);
      const core::JobState& st = r.outcome.jobs[i];
      const gpu::RealJobStats& s = r.stats[i];
      CHECK(st.status == JobStatus::kDone);
      CHECK(st.reason().empty());
      CHECK(st.iterations_done == jobs[i].iterations);
      CHECK(s.iterations == jobs[i].iterations);
      CHECK(std::isfinite(s.loss_first));
      CHECK(std::isfinite(s.loss_last));
      CHECK(s.loss_last < s.loss_first);
      CHECK(s.iteration_ns_total > 0);
      CHECK(s.first_iteration_ns > 0);
      // The first iteration is reported on its own, not in the total of the later ones.
      CHECK(s.first_iteration_ns + s.iteration_ns_total <= st.gpu_time_ns);
      CHECK_FALSE(s.inference);
      // The real figures are exactly what the job declared.
      CHECK(s.persistent_used == jobs[i].persistent);
      CHECK(s.ephemeral_peak == jobs[i].ephemeral);
      CHECK(st.finish_ns <= r.outcome.end_ns);
    }
    CHECK(r.workers >= 1);
    CHECK(r.workers <= r.outcome.max_concurrent_lanes);
  }
}

TEST_CASE("fifo runs one job at a time, in arrival order") {
  const std::vector<JobSpec> jobs = three_jobs();
  const RealRun r = run_real(jobs, "fifo");
  CHECK(r.opts.lane_mode == core::LaneMode::kExclusive);
  const auto& segs = r.outcome.segments;
  REQUIRE(segs.size() >= 3);
  for (std::size_t a = 0; a < segs.size(); ++a) {
    for (std::size_t b = a + 1; b < segs.size(); ++b) {
      INFO("segments ", a, " and ", b);
      CHECK_FALSE(overlap(segs[a], segs[b]));
    }
  }
  const auto& st = r.outcome.jobs;
  CHECK(st[0].finish_ns <= st[1].first_start_ns);
  CHECK(st[1].finish_ns <= st[2].first_start_ns);
  CHECK(r.workers == 1);
  CHECK(r.switch_latencies.empty());  // every job gets a fresh lane: nothing to switch from
}

TEST_CASE("pack with auto lanes runs two jobs in two lanes at the same time") {
  const std::vector<JobSpec> jobs =
      test::trace({real_job("a", "lenet_32", 0, 30), real_job("b", "lenet_32", 0, 30)});
  const RealRun r = run_real(jobs, "pack", core::LaneMode::kAuto);
  check_real_schedule(jobs, r);
  REQUIRE(r.outcome.jobs[0].status == JobStatus::kDone);
  REQUIRE(r.outcome.jobs[1].status == JobStatus::kDone);
  CHECK(r.outcome.jobs[0].lane != r.outcome.jobs[1].lane);
  CHECK(r.outcome.max_concurrent_lanes == 2);
  CHECK(r.workers == 2);
  bool concurrent = false;
  for (const core::Segment& a : r.outcome.segments) {
    for (const core::Segment& b : r.outcome.segments) concurrent |= a.lane != b.lane && overlap(a, b);
  }
  CHECK(concurrent);
  CHECK(r.switch_latencies.empty());
}

TEST_CASE("switch latencies are recorded when jobs alternate in a lane (srtf, fair)") {
  // Solo times 24, 12 and 36 ms as the profile says: srtf runs b, a, c one after the other in its
  // single lane (two switches); fair alternates at iteration boundaries.
  const std::vector<JobSpec> jobs = test::trace({real_job("a", "lenet_32", 0, 12, ms(2)),
                                                 real_job("b", "mlp_64", 0, 12, ms(1)),
                                                 real_job("c", "lenet_32", 0, 18, ms(2))});
  for (const char* name : {"srtf", "fair"}) {
    CAPTURE(name);
    const RealRun r = run_real(jobs, name);
    check_real_schedule(jobs, r);
    CHECK(r.opts.lane_mode == core::LaneMode::kSingle);
    CHECK(r.outcome.switches > 0);
    // One latency per run that changed the lane's job, as the loop counts them.
    CHECK(static_cast<std::int64_t>(r.switch_latencies.size()) == r.outcome.switches);
    for (core::TimeNs l : r.switch_latencies) CHECK(l >= 0);
    if (std::string(name) == "srtf") {
      const auto& st = r.outcome.jobs;
      CHECK(st[1].finish_ns <= st[0].first_start_ns);
      CHECK(st[0].finish_ns <= st[2].first_start_ns);
      CHECK(r.outcome.switches == 2);
    } else {
      CHECK(r.outcome.switches > 2);
    }
  }
}

TEST_CASE("a job whose lane is smaller than its iteration needs fails and the others finish") {
  const Figures lenet = figures("lenet_32");
  std::vector<JobSpec> jobs = {real_job("ok_a", "lenet_32", 0, 10), real_job("small_e", "lenet_32", 0, 10),
                               real_job("ok_b", "mlp_64", 0, 10)};
  // Declared E: half of what an iteration takes (in whole 256-byte units, as the pool's regions are).
  jobs[1].ephemeral = gpu::align_up(lenet.ephemeral / 2);
  jobs = test::trace(jobs);
  // Under fifo and pack (auto lanes, room for all) every job's lane is exactly its declared E.
  for (const char* name : {"fifo", "pack"}) {
    CAPTURE(name);
    const RealRun r = run_real(jobs, name, core::LaneMode::kAuto);
    const core::JobState& bad = r.outcome.jobs[1];
    CHECK(bad.status == JobStatus::kFailed);
    CHECK(bad.reason().find("ephemeral memory overflow") != std::string::npos);
    CHECK(bad.reason().find("(its lane)") != std::string::npos);
    CHECK(bad.iterations_done == 0);
    CHECK(bad.finish_ns >= 0);
    CHECK(std::isnan(r.stats[1].loss_last));
    for (std::size_t i : {std::size_t{0}, std::size_t{2}}) {
      INFO("job ", jobs[i].id);
      CHECK(r.outcome.jobs[i].status == JobStatus::kDone);
      CHECK(r.outcome.jobs[i].iterations_done == 10);
      CHECK(r.stats[i].loss_last < r.stats[i].loss_first);
    }
  }
}

TEST_CASE("a job whose persistent state is larger than its declared P fails at its first dispatch") {
  const Figures lenet = figures("lenet_32");
  std::vector<JobSpec> jobs = {real_job("ok_a", "mlp_64", 0, 6), real_job("small_p", "lenet_32", 0, 6),
                               real_job("ok_b", "lenet_32", ms(5), 6)};
  jobs[1].persistent = lenet.persistent - gpu::kAlignment;  // one 256-byte unit short
  jobs = test::trace(jobs);
  for (const std::string& name : policies::policy_names()) {
    CAPTURE(name);
    const RealRun r = run_real(jobs, name);
    const core::JobState& bad = r.outcome.jobs[1];
    CHECK(bad.status == JobStatus::kFailed);
    // Exact bytes where the rounded figure would hide them (format_size prints bytes when it can).
    const auto exact = [](core::Bytes b) {
      const std::string s = core::format_size(b);
      return s.ends_with(" B") ? s : s + " (" + std::to_string(b) + " B)";
    };
    CHECK(bad.reason() == "its persistent state needs " + exact(lenet.persistent) + " but the trace declares P = " +
                            exact(lenet.persistent - gpu::kAlignment));
    CHECK(bad.iterations_done == 0);
    CHECK(r.stats[1].persistent_used == lenet.persistent);
    CHECK(r.stats[1].iterations == 0);
    CHECK(r.outcome.jobs[0].status == JobStatus::kDone);
    CHECK(r.outcome.jobs[2].status == JobStatus::kDone);
  }
}

TEST_CASE("a workload with no real model fails with the reason and the others finish") {
  std::vector<JobSpec> jobs = {real_job("ok", "mlp_64", 0, 5),
                               test::job("vae", 0, 5, ms(2), mib(1), mib(1)),
                               real_job("ok2", "lenet_32", 0, 5)};
  jobs[1].workload = "vae_64";
  jobs = test::trace(jobs);
  const RealRun r = run_real(jobs, "pack");
  CHECK(r.outcome.jobs[1].status == JobStatus::kFailed);
  CHECK(r.outcome.jobs[1].reason() == "no real model for workload 'vae_64'");
  CHECK(r.outcome.jobs[0].status == JobStatus::kDone);
  CHECK(r.outcome.jobs[2].status == JobStatus::kDone);
}

TEST_CASE("inference jobs (_infer) run forward passes in a lane of the inference size") {
  const std::vector<JobSpec> jobs =
      test::trace({real_job("serve", "lenet_32_infer", 0, 10), real_job("train", "lenet_32", 0, 10)});
  CHECK(jobs[0].ephemeral < jobs[1].ephemeral);
  const RealRun r = run_real(jobs, "pack", core::LaneMode::kAuto);
  CHECK(r.outcome.jobs[0].status == JobStatus::kDone);
  CHECK(r.outcome.jobs[1].status == JobStatus::kDone);
  CHECK(r.stats[0].inference);
  CHECK(r.stats[0].iterations == 10);
  CHECK(std::isnan(r.stats[0].loss_first));
  CHECK(std::isnan(r.stats[0].loss_last));
  CHECK(r.stats[0].ephemeral_peak == jobs[0].ephemeral);
  CHECK_FALSE(r.stats[1].inference);
  CHECK(r.stats[1].loss_last < r.stats[1].loss_first);
}

TEST_CASE("the stop flag ends the run at iteration boundaries and marks unfinished jobs interrupted") {
  // Far more work than the test waits for: two long jobs running, one not arrived yet.
  const std::vector<JobSpec> jobs = test::trace({real_job("long_a", "lenet_32", 0, 1'000'000),
                                                 real_job("long_b", "mlp_64", 0, 1'000'000),
                                                 real_job("later", "lenet_32", ms(60'000), 10)});
  std::atomic<bool> stop{false};
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100) * test::kSanitizerSlowdown);
    stop.store(true);
  });
  const auto t0 = std::chrono::steady_clock::now();
  const RealRun r = run_real(jobs, "pack", core::LaneMode::kAuto, &stop);
  const auto took = std::chrono::steady_clock::now() - t0;
  stopper.join();
  CHECK(took < std::chrono::seconds(5) * test::kSanitizerSlowdown);  // it returned long before the work was done
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    INFO("job ", jobs[i].id);
    const core::JobState& st = r.outcome.jobs[i];
    CHECK(st.status == JobStatus::kInterrupted);
    CHECK(st.reason() == "the run was interrupted before the job finished");
    CHECK_FALSE(st.running);
    CHECK(st.iterations_done == r.stats[i].iterations);
  }
  CHECK(r.outcome.jobs[0].iterations_done > 0);
  CHECK(r.outcome.jobs[1].iterations_done > 0);
  CHECK(r.outcome.jobs[2].iterations_done == 0);
  CHECK(r.outcome.jobs[2].first_start_ns < 0);
}

TEST_CASE("the stop flag ends a run that is only waiting for arrivals") {
  const std::vector<JobSpec> jobs = test::trace({real_job("a", "lenet_32", ms(3'600'000), 5)});
  std::atomic<bool> stop{false};
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100) * test::kSanitizerSlowdown);
    stop.store(true);
  });
  const auto t0 = std::chrono::steady_clock::now();
  const RealRun r = run_real(jobs, "srtf", std::nullopt, &stop);
  const auto took = std::chrono::steady_clock::now() - t0;
  stopper.join();
  CHECK(took < std::chrono::seconds(5) * test::kSanitizerSlowdown);
  CHECK(r.outcome.jobs[0].status == JobStatus::kInterrupted);
  CHECK(r.outcome.iterations == 0);
}

TEST_CASE("a stop flag already set runs nothing") {
  const std::vector<JobSpec> jobs = test::trace({real_job("a", "lenet_32", 0, 5), real_job("b", "mlp_64", 0, 5)});
  const std::atomic<bool> stop{true};
  for (const std::string& name : policies::policy_names()) {
    CAPTURE(name);
    const RealRun r = run_real(jobs, name, std::nullopt, &stop);
    CHECK(r.outcome.iterations == 0);
    CHECK(r.outcome.dispatches == 0);
    for (const core::JobState& st : r.outcome.jobs) CHECK(st.status == JobStatus::kInterrupted);
  }
}

TEST_CASE("a job's losses do not depend on the policy or on what shares the device") {
  // Each job's seed depends only on its index in the trace, and its memory (persistent block and
  // lane) is its own, so running alone (fifo), time-sliced in one lane (srtf, fair) or beside
  // others in lanes of their own (pack) trains exactly the same numbers.
  const std::vector<JobSpec> jobs = three_jobs();
  const RealRun alone = run_real(jobs, "fifo");
  for (const char* name : {"srtf", "pack", "fair"}) {
    CAPTURE(name);
    const RealRun r = run_real(jobs, name);
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      INFO("job ", jobs[i].id);
      CHECK(r.stats[i].loss_first == alone.stats[i].loss_first);
      CHECK(r.stats[i].loss_last == alone.stats[i].loss_last);
    }
  }
}
