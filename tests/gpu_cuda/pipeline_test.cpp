// The real executor's paths of issue 28 on the first CUDA GPU: admission on its own thread and
// stream, ordered before the job's first kernel; iteration i + 1 enqueued before the worker waits
// for iteration i (lookahead 1), with iteration times from CUDA events; the Executor contract
// (tests/support/executor_contract.h) on it. Runs only where a GPU is visible (gpu_main.cpp).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/executor.h"
#include "core/scheduler.h"
#include "core/units.h"
#include "gpu_backend/device.h"
#include "gpu_backend/memory_pool.h"
#include "gpu_backend/model.h"
#include "gpu_backend/real_executor.h"
#include "policies/registry.h"
#include "support/jobs.h"

namespace {

using namespace salus;
using core::Bytes;
using core::Completion;
using core::JobSpec;

/// A job of `workload` declaring the real P and E of its model on `device` (256-byte units).
JobSpec job_on(gpu::Device& device, std::string id, const std::string& workload, std::int64_t iterations) {
  auto ops = device.create_ops();
  const auto net = gpu::build_model(workload);
  JobSpec s = test::job(std::move(id), 0, iterations, test::ms(1), gpu::align_up(net->persistent_bytes()),
                        gpu::align_up(net->ephemeral_bytes(*ops, true)));
  s.workload = workload;
  return s;
}

Completion next_completion(core::Executor& exec) {
  std::vector<Completion> out;
  while (out.empty()) exec.wait(core::kNever, out);
  REQUIRE(out.size() == 1);
  return out.front();
}

/// Each job admitted and dispatched at once, each in a lane of its own, on `device`; the jobs'
/// stats after every run completed.
std::vector<gpu::RealJobStats> admit_and_run(gpu::Device& device, const std::vector<JobSpec>& jobs, int lookahead) {
  Bytes persistent = 0, lanes = 0;
  for (const JobSpec& s : jobs) {
    persistent += s.persistent;
    lanes += s.ephemeral;
  }
  gpu::MemoryPool pool(device, persistent + lanes);
  gpu::RealOptions options;
  options.lookahead = lookahead;
  options.record_iterations = true;
  options.workers = static_cast<int>(jobs.size());
  gpu::RealExecutor exec(device, pool, jobs, options);
  Bytes block = 0, top = persistent + lanes;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const auto j = static_cast<core::JobIndex>(i);
    exec.admit(j, jobs[i], block);
    block += jobs[i].persistent;
    top -= jobs[i].ephemeral;
    core::Dispatch d;
    d.job = j;
    d.lane = static_cast<core::LaneId>(i);
    d.iterations = jobs[i].iterations;
    d.lane_offset = top;
    d.lane_size = jobs[i].ephemeral;
    exec.start(d);  // right after its admission was asked for: the worker waits for it
  }
  for (std::size_t k = 0; k < jobs.size(); ++k) {
    const Completion c = next_completion(exec);
    INFO("job ", jobs[static_cast<std::size_t>(c.job)].id, ": ", c.error);
    CHECK_FALSE(c.failed);
    CHECK(c.iterations_done == jobs[static_cast<std::size_t>(c.job)].iterations);
  }
  std::vector<gpu::RealJobStats> stats;
  for (std::size_t i = 0; i < jobs.size(); ++i) stats.push_back(exec.stats(static_cast<core::JobIndex>(i)));
  return stats;
}

}  // namespace

TEST_CASE("cuda: a job dispatched right after its admission trains from its initialised state, as on the CPU") {
  // Three jobs admitted and dispatched back to back, each in its own lane and stream: each
  // admission's kernels run on the admission thread's stream, and the job's first kernel must
  // come after them. Had it not, its first loss would not be the CPU device's (the same seeds).
  auto cuda = gpu::make_cuda_device(0);
  auto cpu = gpu::make_cpu_device();
  const std::vector<JobSpec> on_cuda = test::trace(
      {job_on(*cuda, "a", "lenet_32", 3), job_on(*cuda, "b", "resnet50_2", 3), job_on(*cuda, "c", "googlenet_2", 3)});
  const std::vector<JobSpec> on_cpu = test::trace(
      {job_on(*cpu, "a", "lenet_32", 3), job_on(*cpu, "b", "resnet50_2", 3), job_on(*cpu, "c", "googlenet_2", 3)});
  const auto got = admit_and_run(*cuda, on_cuda, 1);
  const auto want = admit_and_run(*cpu, on_cpu, 1);
  for (std::size_t i = 0; i < on_cuda.size(); ++i) {
    INFO(on_cuda[i].workload, ": cuda ", got[i].loss_first, " / ", got[i].loss_last, ", cpu ", want[i].loss_first,
         " / ", want[i].loss_last);
    CHECK(std::isfinite(got[i].loss_first));
    CHECK(std::fabs(got[i].loss_first - want[i].loss_first) <= 1e-4 * std::fabs(want[i].loss_first));
    CHECK(std::fabs(got[i].loss_last - want[i].loss_last) <= 1e-4 * std::fabs(want[i].loss_last));
  }
}

TEST_CASE("cuda: lookahead 1 trains what lookahead 0 trains, timed on CUDA events") {
  auto device = gpu::make_cuda_device(0);
  const std::vector<JobSpec> jobs = test::trace({job_on(*device, "a", "lenet_32", 40), job_on(*device, "b", "mlp_64", 40)});
  const auto ahead = admit_and_run(*device, jobs, 1);
  const auto lockstep = admit_and_run(*device, jobs, 0);
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    INFO(jobs[i].workload);
    CHECK(ahead[i].iterations == 40);
    CHECK(ahead[i].loss_last < ahead[i].loss_first);
    CHECK(ahead[i].loss_first == doctest::Approx(lockstep[i].loss_first).epsilon(1e-5));
    CHECK(ahead[i].loss_last == doctest::Approx(lockstep[i].loss_last).epsilon(1e-4));
    // One time per iteration after the first, each a positive device-clock interval.
    REQUIRE(ahead[i].iteration_times_ns.size() == 39);
    core::TimeNs sum = 0;
    for (core::TimeNs t : ahead[i].iteration_times_ns) {
      CHECK(t > 0);
      sum += t;
    }
    CHECK(sum == ahead[i].iteration_ns_total);
    MESSAGE(jobs[i].workload, ": mean iteration ", static_cast<double>(sum) / 39e3, " us with lookahead 1, ",
            static_cast<double>(lockstep[i].iteration_ns_total) / 39e3, " us with 0");
  }
}

TEST_CASE("cuda: every policy runs the three jobs to the end with lookahead 1") {
  // Runs cut at boundaries (joins, srtf's preemption, fair's turns) while an iteration is queued
  // behind the one in flight.
  auto device = gpu::make_cuda_device(0);
  std::vector<JobSpec> jobs = {job_on(*device, "a", "lenet_32", 200), job_on(*device, "b", "mlp_64", 150),
                               job_on(*device, "c", "lenet_32", 100)};
  jobs[2].arrival_ns = test::ms(20);
  jobs = test::trace(jobs);
  for (const std::string& name : policies::policy_names()) {
    CAPTURE(name);
    const auto policy = policies::make_policy(name);
    core::SchedulerOptions opts;
    opts.capacity = core::kMiB;
    for (const JobSpec& s : jobs) opts.capacity += s.persistent + s.ephemeral;
    opts.lane_mode = policy->default_lane_mode();
    gpu::RealExecutor exec(*device, opts.capacity, jobs, gpu::RealOptions{});
    REQUIRE(exec.lookahead() == 1);
    const core::ScheduleOutcome out = core::run_schedule(jobs, *policy, exec, opts);
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      INFO("job ", jobs[i].id, ": ", out.jobs[i].reason());
      CHECK(out.jobs[i].status == core::JobStatus::kDone);
      CHECK(exec.stats(static_cast<core::JobIndex>(i)).iterations == jobs[i].iterations);
      CHECK(exec.stats(static_cast<core::JobIndex>(i)).loss_last < exec.stats(static_cast<core::JobIndex>(i)).loss_first);
    }
    // One context was made before the trace (RealOptions{}); more only for lanes running at once.
    CHECK(exec.workers_made_in_run() <= std::max(0, static_cast<int>(out.max_concurrent_lanes) - 1));
    CHECK(static_cast<std::int64_t>(exec.switch_latencies().size()) == out.switches);
  }
}

namespace {

/// The contract's three jobs as real lenet_32 / mlp_64 jobs on CUDA device 0, admitted before
/// each case (as tests/real/executor_contract_test.cpp does on the CPU device).
struct CudaHarness {
  static constexpr bool kExact = false;
  static constexpr int kLanes = 8;

  explicit CudaHarness(std::span<const JobSpec> contract_jobs)
      : device(gpu::make_cuda_device(0)), jobs(contract_jobs.begin(), contract_jobs.end()) {
    auto ops = device->create_ops();
    Bytes persistent = 0;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      jobs[i].workload = i == 1 ? "mlp_64" : "lenet_32";
      const auto net = gpu::build_model(jobs[i].workload);
      jobs[i].persistent = gpu::align_up(net->persistent_bytes());
      jobs[i].ephemeral = gpu::align_up(net->ephemeral_bytes(*ops, true));
      lane_size = std::max(lane_size, jobs[i].ephemeral);
      persistent += jobs[i].persistent;
    }
    top = persistent + kLanes * lane_size;
    pool = std::make_unique<gpu::MemoryPool>(*device, top);
    exec = std::make_unique<gpu::RealExecutor>(*device, *pool, jobs, gpu::RealOptions{});
    Bytes offset = 0;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      exec->admit(static_cast<core::JobIndex>(i), jobs[i], offset);
      offset += jobs[i].persistent;
    }
  }
  core::Executor& executor() { return *exec; }
  void start(core::Dispatch d) {
    d.lane_size = lane_size;
    d.lane_offset = top - static_cast<Bytes>(d.lane + 1) * lane_size;
    exec->start(d);
  }

  std::unique_ptr<gpu::Device> device;
  std::vector<JobSpec> jobs;
  Bytes lane_size = 0, top = 0;
  std::unique_ptr<gpu::MemoryPool> pool;
  std::unique_ptr<gpu::RealExecutor> exec;
};

}  // namespace

#define SALUS_CONTRACT_EXECUTORS CudaHarness
#include "support/executor_contract.h"
