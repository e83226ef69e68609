// Single-job overhead of the service: the same model trained in a plain loop (Network + Ops, no
// scheduler) against one job run through run_schedule + RealExecutor (pool, worker thread,
// completion queue, policy decisions at boundaries).
//
//   ./build/tests/bench/backend_bench                      # CPU device, lenet_32 and mlp_64
//   SALUS_BENCH_DEVICE=cuda SALUS_BENCH_MODELS=resnet50_25,vgg16_25 ./build/tests/bench/backend_bench
//
// Reports training iterations per second (items/s) for each; the overhead is plain / service - 1.
// The service's figure includes admitting the job (building and initialising the model) once per
// 50 iterations.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "core/scheduler.h"
#include "gpu_backend/device.h"
#include "gpu_backend/memory_pool.h"
#include "gpu_backend/model.h"
#include "gpu_backend/real_executor.h"
#include "policies/registry.h"

namespace {

using namespace salus;

constexpr int kIterations = 50;

std::string env(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : fallback;
}

gpu::Device& device() {
  static std::unique_ptr<gpu::Device> d = gpu::make_device(env("SALUS_BENCH_DEVICE", "cpu"));
  return *d;
}

core::Bytes pool_bytes() { return device().kind() == gpu::DeviceKind::kCpu ? 512 * core::kMiB : 16 * core::kGiB; }

/// The model trained in a plain loop. `sync_every_iteration`: wait for the device after each
/// iteration (what the service does at every boundary); otherwise only after the 50, as a
/// framework's training loop does (the honest baseline on a GPU, where the host runs ahead).
void plain_loop(benchmark::State& state, const std::string& model, bool sync_every_iteration) {
  gpu::Device& dev = device();
  auto net = gpu::build_model(model);
  auto ops = dev.create_ops();
  gpu::MemoryPool pool(dev, pool_bytes());
  const core::Bytes e = gpu::align_up(net->ephemeral_bytes(*ops, true));
  net->bind(*ops, pool.base(), 1);
  gpu::Arena lane = pool.region(pool.capacity() - e, e);
  const gpu::TrainConfig cfg;
  for (auto _ : state) {
    for (int i = 0; i < kIterations; ++i) {
      net->train_step(*ops, lane, cfg, false);
      if (sync_every_iteration) ops->synchronize();
    }
    ops->synchronize();
  }
  state.SetItemsProcessed(state.iterations() * kIterations);  // items = training iterations
}

void BM_PlainLoop(benchmark::State& state, std::string model) { plain_loop(state, model, true); }
void BM_PlainLoopAsync(benchmark::State& state, std::string model) { plain_loop(state, model, false); }

void BM_Service(benchmark::State& state, std::string model) {
  gpu::Device& dev = device();
  auto net = gpu::build_model(model);
  auto ops = dev.create_ops();
  core::JobSpec job;
  job.id = "solo";
  job.workload = model;
  job.iterations = kIterations;
  job.iter_ns = core::kNsPerMs;
  job.persistent = net->persistent_bytes();
  job.ephemeral = gpu::align_up(net->ephemeral_bytes(*ops, true));
  const std::vector<core::JobSpec> jobs{job};
  const auto policy = policies::make_policy("fifo");
  gpu::MemoryPool pool(dev, pool_bytes());
  gpu::RealExecutor exec(dev, pool, jobs, gpu::RealOptions{});
  core::SchedulerOptions opts;
  opts.capacity = pool_bytes();
  opts.lane_mode = core::LaneMode::kExclusive;
  for (auto _ : state) {
    // Admission (building and initialising the model) is part of a job's life in the service.
    const core::ScheduleOutcome out = core::run_schedule(jobs, *policy, exec, opts);
    if (out.jobs[0].status != core::JobStatus::kDone) {
      state.SkipWithError(out.jobs[0].reason.c_str());
      break;
    }
  }
  state.SetItemsProcessed(state.iterations() * kIterations);  // items = training iterations
}

int register_models() {
  std::stringstream ss(env("SALUS_BENCH_MODELS", "lenet_32,mlp_64"));
  for (std::string m; std::getline(ss, m, ',');) {
    benchmark::RegisterBenchmark(("plain_loop/" + m).c_str(), BM_PlainLoop, m)->Unit(benchmark::kMillisecond)->UseRealTime();
    benchmark::RegisterBenchmark(("plain_loop_sync_at_end/" + m).c_str(), BM_PlainLoopAsync, m)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
    benchmark::RegisterBenchmark(("service/" + m).c_str(), BM_Service, m)->Unit(benchmark::kMillisecond)->UseRealTime();
  }
  return 0;
}
const int kRegistered = register_models();

}  // namespace

BENCHMARK_MAIN();
