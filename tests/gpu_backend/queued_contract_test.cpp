// The Executor contract (tests/support/executor_contract.h) on the real executor over a device
// that queues work (tests/gpu_backend/queued_device.h): the path a CUDA device takes, iteration
// i + 1 enqueued before the worker waits for i (lookahead 1) and iterations timed on the device's
// marks, with the contract's counts exact and its times in order. The contract's three jobs are
// real lenet_32 and mlp_64 jobs, admitted into the pool before each case, as on the CPU device
// (tests/real/executor_contract_test.cpp).
#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <span>
#include <vector>

#include "core/executor.h"
#include "gpu_backend/memory_pool.h"
#include "gpu_backend/model.h"
#include "gpu_backend/queued_device.h"
#include "gpu_backend/real_executor.h"

namespace {

using namespace salus;
using core::Dispatch;
using core::Executor;
using core::JobSpec;

struct QueuedHarness {
  static constexpr bool kExact = false;
  static constexpr int kLanes = 8;  // lane ids 0..7, each a region of the largest E

  explicit QueuedHarness(std::span<const JobSpec> contract_jobs)
      : device(std::make_unique<test::QueuedDevice>()), jobs(contract_jobs.begin(), contract_jobs.end()) {
    const auto ops = device->create_ops();
    core::Bytes persistent = 0;
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
    REQUIRE(exec->lookahead() == 1);
    core::Bytes offset = 0;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      exec->admit(static_cast<core::JobIndex>(i), jobs[i], offset);
      offset += jobs[i].persistent;
    }
  }
  Executor& executor() { return *exec; }
  void start(Dispatch d) {
    d.lane_size = lane_size;
    d.lane_offset = top - static_cast<core::Bytes>(d.lane + 1) * lane_size;
    exec->start(d);
  }

  std::unique_ptr<test::QueuedDevice> device;
  std::vector<JobSpec> jobs;
  core::Bytes lane_size = 0, top = 0;
  std::unique_ptr<gpu::MemoryPool> pool;
  std::unique_ptr<gpu::RealExecutor> exec;
};

}  // namespace

#define SALUS_CONTRACT_EXECUTORS QueuedHarness
#include "support/executor_contract.h"
