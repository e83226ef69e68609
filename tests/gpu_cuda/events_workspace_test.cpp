// The CUDA device's timestamps and cuBLAS workspace: CUDA-event marks time device work, also
// across two contexts; the real executor's switch latency comes from them; a training pass with
// fully connected layers takes cuBLAS's workspace from its lane and allocates nothing on the
// device; TF32 math runs and stays near FP32. Runs only where a GPU is visible (gpu_main.cpp).
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

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
using core::TimeNs;

TimeNs host_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::vector<float> losses(gpu::Device& device, const std::string& workload, int steps) {
  auto ops = device.create_ops();
  auto net = gpu::build_model(workload);
  const Bytes p = gpu::align_up(net->persistent_bytes());
  const Bytes e = gpu::align_up(net->ephemeral_bytes(*ops, true));
  gpu::MemoryPool pool(device, p + e);
  net->bind(*ops, pool.base(), 3);
  gpu::Arena lane = pool.region(p, e);
  std::vector<float> out;
  for (int i = 0; i < steps; ++i) out.push_back(net->train_step(*ops, lane, gpu::TrainConfig{}, true));
  return out;
}

}  // namespace

TEST_CASE("cuda marks: events time device work, and the gap between two contexts' marks") {
  auto device = gpu::make_cuda_device(0);
  auto a = device->create_ops();
  auto b = device->create_ops();
  constexpr std::int64_t kFloats = 64 << 20;  // 256 MiB of fills: milliseconds of device work
  gpu::MemoryPool pool(*device, kFloats * 4);
  auto* x = reinterpret_cast<float*>(pool.base());
  auto begin = a->create_mark();
  auto end = a->create_mark();
  REQUIRE(begin != nullptr);
  REQUIRE(end != nullptr);
  a->fill(kFloats, x, 0.0f);  // loads the kernel
  a->synchronize();
  const TimeNs host0 = host_ns();
  a->record_mark(*begin);
  for (int i = 0; i < 8; ++i) a->fill(kFloats, x, static_cast<float>(i));
  a->record_mark(*end);
  a->synchronize();
  const TimeNs host = host_ns() - host0;
  const TimeNs device_ns = a->mark_elapsed_ns(*begin, *end);
  MESSAGE("8 fills of 256 MiB: ", device_ns / 1000, " us on the device's clock, ", host / 1000, " us on the host's");
  CHECK(device_ns > 0);
  CHECK(device_ns <= host);

  // end of a's work (mark on a's stream) to a mark on b's idle stream 2 ms of host time later.
  a->record_mark(*begin);
  a->synchronize();
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  auto later = b->create_mark();
  b->record_mark(*later);
  const TimeNs gap = b->mark_elapsed_ns(*begin, *later);
  MESSAGE("gap across contexts after a 2 ms sleep: ", gap / 1000, " us");
  CHECK(gap >= 2 * core::kNsPerMs - 100'000);  // the event clock's resolution is about 0.5 us
  CHECK(gap < core::kNsPerS);
}

TEST_CASE("the real executor's switch latency on cuda comes from events, one per switch") {
  auto device = gpu::make_cuda_device(0);
  auto ops = device->create_ops();
  std::vector<core::JobSpec> specs;
  for (const char* id : {"x", "y"}) {
    auto net = gpu::build_model("lenet_8");
    core::JobSpec s = test::job(id, 0, 20, test::ms(1), gpu::align_up(net->persistent_bytes()),
                                gpu::align_up(net->ephemeral_bytes(*ops, true)));
    s.workload = "lenet_8";
    specs.push_back(s);
  }
  const auto jobs = test::trace(specs);
  const auto policy = policies::make_policy("fair");  // one lane, the two jobs take turns
  core::SchedulerOptions opts;
  opts.capacity = 64 * core::kMiB;
  opts.lane_mode = core::LaneMode::kSingle;
  gpu::RealExecutor real(*device, opts.capacity, jobs, gpu::RealOptions{});
  const core::ScheduleOutcome out = core::run_schedule(jobs, *policy, real, opts);
  CHECK(out.jobs[0].status == core::JobStatus::kDone);
  CHECK(out.jobs[1].status == core::JobStatus::kDone);
  CHECK(std::string(real.switch_latency_clock()) == "cuda_events");
  const std::vector<TimeNs> gaps = real.switch_latencies();
  CHECK(out.switches > 10);
  CHECK(static_cast<std::int64_t>(gaps.size()) == out.switches);
  TimeNs worst = 0;
  for (TimeNs g : gaps) {
    CHECK(g > 0);
    worst = std::max(worst, g);
  }
  MESSAGE(gaps.size(), " switches, the longest ", worst / 1000, " us");
  CHECK(worst < core::kNsPerS);
}

TEST_CASE("cuBLAS takes its workspace from the lane: a training pass allocates nothing outside the pool") {
  auto device = gpu::make_cuda_device(0);
  {
    // Load the kernels (lazy module loading takes device memory) on another context first.
    (void)losses(*device, "mlp_64", 2);
  }
  auto net = gpu::build_model("mlp_64");  // fully connected layers only: its workspace is cuBLAS's
  const Bytes before_handles = *device->used_memory();
  auto ops = device->create_ops();
  const Bytes after_handles = *device->used_memory();
  const Bytes p = gpu::align_up(net->persistent_bytes());
  const Bytes e = gpu::align_up(net->ephemeral_bytes(*ops, true));
  CHECK(ops->blas_workspace_bytes() >= 4 * core::kMiB);
  CHECK(e >= ops->blas_workspace_bytes());  // the workspace is part of the lane's E
  gpu::MemoryPool pool(*device, p + e);
  const Bytes with_pool = *device->used_memory();
  net->bind(*ops, pool.base(), 5);
  gpu::Arena lane = pool.region(p, e);
  for (int i = 0; i < 3; ++i) net->train_step(*ops, lane, gpu::TrainConfig{}, true);
  ops->synchronize();
  const Bytes after_passes = *device->used_memory();
  MESSAGE("a new context's handles took ", (after_handles - before_handles) / 1024, " KiB; cuBLAS workspace ",
          ops->blas_workspace_bytes() / core::kMiB, " MiB from the lane");
  CHECK(after_passes == with_pool);
}

TEST_CASE("tf32 math: training runs and its losses stay within 1e-2 of fp32's") {
  auto fp32 = gpu::make_cuda_device(0, gpu::MathMode::kFp32);
  auto tf32 = gpu::make_cuda_device(0, gpu::MathMode::kTf32);
  CHECK(tf32->math() == gpu::MathMode::kTf32);
  for (const char* w : {"lenet_8", "resnet50_2"}) {
    CAPTURE(w);
    const std::vector<float> want = losses(*fp32, w, 3);
    const std::vector<float> got = losses(*tf32, w, 3);
    for (std::size_t i = 0; i < want.size(); ++i) {
      INFO("step ", i + 1, ": fp32 ", want[i], ", tf32 ", got[i]);
      CHECK(std::isfinite(got[i]));
      CHECK(std::fabs(got[i] - want[i]) <= 1e-2 * std::fabs(want[i]));
    }
  }
}
