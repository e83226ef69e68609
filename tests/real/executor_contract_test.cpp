// The Executor contract (tests/support/executor_contract.h) on the real executor, CPU device: the
// contract's three jobs become real lenet_32 and mlp_64 jobs with their models' P and E, admitted
// into a pool before the case starts, each lane a region at the top of the pool. A real clock:
// counts exact, times in order (see the header).
#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <span>
#include <vector>

#include "core/executor.h"
#include "gpu_backend/device.h"
#include "gpu_backend/memory_pool.h"
#include "gpu_backend/model.h"
#include "gpu_backend/real_executor.h"

namespace {

using namespace salus;
using core::Dispatch;
using core::Executor;
using core::JobSpec;

/// The contract's jobs as real ones: job 0 and 2 lenet_32, job 1 mlp_64, P and E of their models.
std::vector<JobSpec> as_real(std::span<const JobSpec> jobs, gpu::Device& device) {
  const auto ops = device.create_ops();
  std::vector<JobSpec> out(jobs.begin(), jobs.end());
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i].workload = i == 1 ? "mlp_64" : "lenet_32";
    const auto net = gpu::build_model(out[i].workload);
    out[i].persistent = gpu::align_up(net->persistent_bytes());
    out[i].ephemeral = gpu::align_up(net->ephemeral_bytes(*ops, true));
  }
  return out;
}

struct RealHarness {
  static constexpr bool kExact = false;
  static constexpr int kLanes = 8;  // lane ids 0..7, each a region of the largest E

  explicit RealHarness(std::span<const JobSpec> contract_jobs)
      : device(gpu::make_cpu_device()), jobs(as_real(contract_jobs, *device)) {
    core::Bytes persistent = 0;
    for (const JobSpec& s : jobs) {
      lane_size = std::max(lane_size, s.ephemeral);
      persistent += s.persistent;
    }
    pool = std::make_unique<gpu::MemoryPool>(*device, persistent + kLanes * lane_size);
    exec = std::make_unique<gpu::RealExecutor>(*device, *pool, jobs, gpu::RealOptions{});
    core::Bytes offset = 0;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      exec->admit(static_cast<core::JobIndex>(i), jobs[i], offset);
      offset += jobs[i].persistent;
    }
    top = persistent + kLanes * lane_size;
  }
  Executor& executor() { return *exec; }
  void start(Dispatch d) {
    d.lane_size = lane_size;
    d.lane_offset = top - static_cast<core::Bytes>(d.lane + 1) * lane_size;
    exec->start(d);
  }

  std::unique_ptr<gpu::Device> device;
  std::vector<JobSpec> jobs;
  core::Bytes lane_size = 0, top = 0;
  std::unique_ptr<gpu::MemoryPool> pool;
  std::unique_ptr<gpu::RealExecutor> exec;
};

}  // namespace

#define SALUS_CONTRACT_EXECUTORS RealHarness
#include "support/executor_contract.h"
