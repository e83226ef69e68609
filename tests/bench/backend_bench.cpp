// Single-job overhead of the service: the same model trained in a plain loop (Network + Ops, no
// scheduler) against one job run through run_schedule + RealExecutor (pool, worker thread,
// completion queue, policy decisions at boundaries).
//
//   ./build/tests/bench/backend_bench                      # CPU device, lenet_32 and mlp_64
//   SALUS_BENCH_DEVICE=cuda SALUS_BENCH_MODELS=resnet50_25,vgg16_25 ./build/tests/bench/backend_bench
//   SALUS_BENCH_DEVICE=cuda ./build/tests/bench/backend_bench --math tf32   # TF32 tensor cores
//
// --math fp32|tf32 (default fp32, exact FP32 as the CPU device computes; tf32 on CUDA only) is
// read before Google Benchmark's own flags and recorded in the output's context ("math").
//
// Reports training iterations per second (items/s) for each; the overhead is plain / service - 1,
// against plain_loop_sync_at_end (a framework's loop: the host runs ahead of the device and waits
// once, at the end). The service's figure includes admitting the job (building and initialising
// the model) once per 50 iterations, and its waits: for the admission, for the first iteration
// (its loss is read back) and for the last. On a device that queues work (CUDA) the service
// enqueues iteration i + 1 before it waits for iteration i (RealOptions::lookahead 1);
// service_lockstep/ runs it with lookahead 0 (each iteration waited for before the next is
// enqueued, the executor before issue 28), which costs what plain_loop/ costs against
// plain_loop_sync_at_end/. On the CPU device both are the same (operations run at once), so
// service_lockstep/ is registered only for a device that queues work.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
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

gpu::MathMode g_math = gpu::MathMode::kFp32;  // set once by main() from --math, before any benchmark runs

gpu::Device& device() {
  static std::unique_ptr<gpu::Device> d = gpu::make_device(env("SALUS_BENCH_DEVICE", "cpu"), g_math);
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

void service(benchmark::State& state, const std::string& model, int lookahead) {
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
  gpu::RealOptions options;
  options.lookahead = lookahead;
  gpu::RealExecutor exec(dev, pool_bytes(), jobs, options);  // contexts, then its pool (as salus-run)
  core::SchedulerOptions opts;
  opts.capacity = pool_bytes();
  opts.lane_mode = core::LaneMode::kExclusive;
  for (auto _ : state) {
    // Admission (building and initialising the model) is part of a job's life in the service.
    const core::ScheduleOutcome out = core::run_schedule(jobs, *policy, exec, opts);
    if (out.jobs[0].status != core::JobStatus::kDone) {
      state.SkipWithError(out.jobs[0].reason().c_str());
      break;
    }
  }
  state.SetItemsProcessed(state.iterations() * kIterations);  // items = training iterations
}

void BM_Service(benchmark::State& state, std::string model) { service(state, model, 1); }
void BM_ServiceLockstep(benchmark::State& state, std::string model) { service(state, model, 0); }

/// Registered once the device exists (main): service_lockstep/ only where the device queues work.
void register_models() {
  std::stringstream ss(env("SALUS_BENCH_MODELS", "lenet_32,mlp_64"));
  for (std::string m; std::getline(ss, m, ',');) {
    benchmark::RegisterBenchmark(("plain_loop/" + m).c_str(), BM_PlainLoop, m)->Unit(benchmark::kMillisecond)->UseRealTime();
    benchmark::RegisterBenchmark(("plain_loop_sync_at_end/" + m).c_str(), BM_PlainLoopAsync, m)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
    benchmark::RegisterBenchmark(("service/" + m).c_str(), BM_Service, m)->Unit(benchmark::kMillisecond)->UseRealTime();
    if (device().kind() != gpu::DeviceKind::kCpu) {
      benchmark::RegisterBenchmark(("service_lockstep/" + m).c_str(), BM_ServiceLockstep, m)
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  // --math VALUE or --math=VALUE, taken out of argv before Google Benchmark sees its flags.
  std::string math = "fp32";
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--math") == 0 && i + 1 < argc) {
      math = argv[++i];
    } else if (std::strncmp(argv[i], "--math=", 7) == 0) {
      math = argv[i] + 7;
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  try {
    g_math = gpu::parse_math_mode(math);
    (void)device();  // a device that cannot compute in this mode (tf32 on the cpu) is refused here
  } catch (const std::exception& e) {
    std::fprintf(stderr, "backend_bench: %s\n", e.what());
    return 2;
  }
  benchmark::AddCustomContext("math", gpu::to_string(g_math));
  benchmark::AddCustomContext("device", device().name());
  register_models();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
