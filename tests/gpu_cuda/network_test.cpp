// Whole networks and the real executor on the first CUDA GPU: training steps of LeNet, ResNet-50
// and GoogLeNet give the CPU reference device's losses, two jobs train at once in two lanes, a
// job that overflows its lane fails without harming the job that next uses the same memory, and
// the pool's regions sit where their offsets say. Runs only where a GPU is visible (gpu_main.cpp).
//
// Every lane and persistent block is laid out in whole 256-byte units (gpu::kAlignment), as the
// pool and the executor require: P and E are rounded up with gpu::align_up before they are used.
#include <doctest/doctest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/job.h"
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
using core::JobSpec;
using core::JobStatus;
using test::ms;

/// Room left in every pool beyond what its jobs or networks need.
constexpr Bytes kSlack = core::kMiB;

/// The real figures of a training workload on `device`, in whole 256-byte units: P and the lane
/// memory of one iteration. E is measured with the device's own execution context: on CUDA it
/// includes the workspaces of the convolution algorithms cuDNN chose, so it differs from the CPU's.
struct Figures {
  Bytes persistent = 0, ephemeral = 0;
};
Figures figures(gpu::Device& device, const std::string& workload, bool train = true) {
  auto ops = device.create_ops();
  const auto net = gpu::build_model(workload);
  return {gpu::align_up(net->persistent_bytes()), gpu::align_up(net->ephemeral_bytes(*ops, train))};
}

/// The loss of each of the first `steps` training iterations of `workload` on `device`, from a
/// network bound with `seed`: its persistent block at offset 0 of a pool of its own, its lane
/// right above it.
std::vector<float> train_losses(gpu::Device& device, const std::string& workload, int steps, std::uint64_t seed) {
  auto ops = device.create_ops();
  auto net = gpu::build_model(workload);
  const Bytes p = gpu::align_up(net->persistent_bytes());
  const Bytes e = gpu::align_up(net->ephemeral_bytes(*ops, true));
  gpu::MemoryPool pool(device, p + e + kSlack);
  net->bind(*ops, pool.base(), seed);
  gpu::Arena lane = pool.region(p, e);
  const gpu::TrainConfig cfg;
  std::vector<float> losses;
  // read_loss = true: every step copies its loss back (and so waits for the device).
  for (int i = 0; i < steps; ++i) losses.push_back(net->train_step(*ops, lane, cfg, /*read_loss=*/true));
  ops->synchronize();
  return losses;
}

/// Trains `workload` for three steps from the same seed on the CPU and on CUDA device 0 and
/// checks every step's loss agrees to 1e-4 relative. The initial state is the same on both
/// devices (the generators are bit-identical); the losses then differ only by the order in which
/// cuDNN and cuBLAS sum (float32 throughout, no TF32), which two SGD steps must not amplify.
void check_losses_match_cpu(const std::string& workload) {
  constexpr int kSteps = 3;
  constexpr double kRelative = 1e-4;
  auto cpu = gpu::make_cpu_device();
  auto cuda = gpu::make_cuda_device(0);
  const std::vector<float> want = train_losses(*cpu, workload, kSteps, 7);
  const std::vector<float> got = train_losses(*cuda, workload, kSteps, 7);
  REQUIRE(want.size() == static_cast<std::size_t>(kSteps));
  REQUIRE(got.size() == static_cast<std::size_t>(kSteps));
  for (std::size_t step = 0; step < want.size(); ++step) {
    const double diff = std::fabs(static_cast<double>(got[step]) - static_cast<double>(want[step]));
    INFO(workload, " step ", step + 1, ": cpu loss ", want[step], ", cuda loss ", got[step], ", |diff| ", diff,
         " (allowed ", kRelative * std::fabs(static_cast<double>(want[step])), ")");
    CHECK(std::isfinite(want[step]));
    CHECK(std::isfinite(got[step]));
    CHECK(diff <= kRelative * std::fabs(static_cast<double>(want[step])));
  }
}

/// A job declaring the real P and E of its model on `device`.
JobSpec real_job(gpu::Device& device, std::string id, const std::string& workload, core::TimeNs arrival,
                 std::int64_t iterations) {
  const Figures f = figures(device, workload);
  JobSpec s = test::job(std::move(id), arrival, iterations, ms(1), f.persistent, f.ephemeral);
  s.workload = workload;
  return s;
}

struct CudaRun {
  core::ScheduleOutcome outcome;
  std::vector<gpu::RealJobStats> stats;
  int workers = 0;
  core::SchedulerOptions opts;
};

/// The jobs through the one scheduling loop and the real executor on `device`, in a pool with
/// room for all of them at once (the sum of their P and E, plus slack).
CudaRun run_on(gpu::Device& device, const std::vector<JobSpec>& jobs, const std::string& policy_name,
               core::LaneMode lanes) {
  const auto policy = policies::make_policy(policy_name);
  CudaRun r;
  r.opts.capacity = kSlack;
  for (const JobSpec& j : jobs) r.opts.capacity += j.persistent + j.ephemeral;
  r.opts.lane_mode = lanes;
  r.opts.record_timeline = true;
  gpu::MemoryPool pool(device, r.opts.capacity);
  gpu::RealExecutor real(device, pool, jobs, gpu::RealOptions{});
  r.outcome = core::run_schedule(jobs, *policy, real, r.opts);
  for (std::size_t i = 0; i < jobs.size(); ++i) r.stats.push_back(real.stats(static_cast<core::JobIndex>(i)));
  r.workers = real.workers();
  return r;
}

bool overlap(const core::Segment& a, const core::Segment& b) { return a.start_ns < b.end_ns && b.start_ns < a.end_ns; }

/// The first region the lane held (its first placement), from the run's lane moves.
const core::LaneMove* first_placement(const core::ScheduleOutcome& out, core::LaneId lane) {
  for (const core::LaneMove& m : out.lane_moves) {
    if (m.lane == lane) return &m;
  }
  return nullptr;
}

}  // namespace

// --- Whole networks against the CPU --------------------------------------------------------

TEST_CASE("cuda: lenet_8 trains three steps with the CPU's losses") { check_losses_match_cpu("lenet_8"); }

TEST_CASE("cuda: resnet50_2 trains three steps with the CPU's losses") {
  // Convolutions of every shape ResNet uses (1x1, 3x3, strided 7x7), batch normalisation in
  // training mode, max and global average pooling, residual adds.
  check_losses_match_cpu("resnet50_2");
}

TEST_CASE("cuda: googlenet_2 trains three steps with the CPU's losses") {
  // Inception blocks: concatenation of four branches and their gradients split back.
  check_losses_match_cpu("googlenet_2");
}

// --- The real executor ---------------------------------------------------------------------

TEST_CASE("cuda: pack with auto lanes trains two jobs at the same time in two lanes") {
  // Both jobs arrive at once and the pool holds both: pack opens a lane for each, and the
  // executor runs them concurrently, each on its own worker and CUDA stream.
  auto device = gpu::make_cuda_device(0);
  const std::vector<JobSpec> jobs = test::trace(
      {real_job(*device, "lenet", "lenet_32", 0, 400), real_job(*device, "mlp", "mlp_64", 0, 800)});
  const CudaRun r = run_on(*device, jobs, "pack", core::LaneMode::kAuto);
  const core::ScheduleOutcome& out = r.outcome;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    INFO("job ", jobs[i].id, ": ", core::to_string(out.jobs[i].status), " ", out.jobs[i].reason());
    REQUIRE(out.jobs[i].status == JobStatus::kDone);
    CHECK(out.jobs[i].iterations_done == jobs[i].iterations);
    const gpu::RealJobStats& s = r.stats[i];
    CHECK(s.iterations == jobs[i].iterations);
    CHECK(std::isfinite(s.loss_first));
    CHECK(std::isfinite(s.loss_last));
    CHECK(s.loss_last < s.loss_first);
    CHECK(s.persistent_used <= jobs[i].persistent);
    CHECK(s.ephemeral_peak <= jobs[i].ephemeral);
  }
  CHECK(out.jobs[0].lane != out.jobs[1].lane);
  CHECK(out.max_concurrent_lanes == 2);
  CHECK(r.workers == 2);
  // The jobs' lifetimes overlap, and so do runs of them in different lanes.
  CHECK(out.jobs[0].first_start_ns < out.jobs[1].finish_ns);
  CHECK(out.jobs[1].first_start_ns < out.jobs[0].finish_ns);
  bool concurrent = false;
  for (const core::Segment& a : out.segments) {
    for (const core::Segment& b : out.segments) concurrent |= a.lane != b.lane && overlap(a, b);
  }
  CHECK(concurrent);
}

TEST_CASE("cuda: a job that overflows its lane fails, and a later job trains in the same memory") {
  // The first job declares only the lane memory of a forward pass (its inference E): its first
  // training iteration launches the whole forward pass into its lane, loss included, and then
  // runs out of it at the backward pass's first buffer (ArenaOverflow), so the job fails with
  // the reason and its lane and persistent block are given back. The second job arrives
  // later and gets the same memory: its persistent block at the same offset, its lane at the top
  // of the pool, covering the region the failed iteration wrote. It must train exactly as it
  // does where the memory before it held nothing: the same losses as in the same trace whose
  // first job names no model and so never touches the device.
  auto device = gpu::make_cuda_device(0);
  std::vector<JobSpec> jobs = {real_job(*device, "small_e", "lenet_32", 0, 10),
                               real_job(*device, "later", "lenet_32", ms(300), 20)};
  jobs[0].ephemeral = figures(*device, "lenet_32", /*train=*/false).ephemeral;
  REQUIRE(jobs[0].ephemeral < jobs[1].ephemeral);
  jobs = test::trace(jobs);
  const CudaRun r = run_on(*device, jobs, "pack", core::LaneMode::kAuto);
  const core::ScheduleOutcome& out = r.outcome;

  const core::JobState& bad = out.jobs[0];
  INFO("failed job: ", core::to_string(bad.status), " ", bad.reason());
  CHECK(bad.status == JobStatus::kFailed);
  CHECK(bad.reason().find("overflow") != std::string::npos);
  CHECK(bad.reason().find("(its lane)") != std::string::npos);
  CHECK(bad.iterations_done == 0);
  CHECK(std::isnan(r.stats[0].loss_last));

  const core::JobState& later = out.jobs[1];
  INFO("later job: ", core::to_string(later.status), " ", later.reason());
  REQUIRE(later.status == JobStatus::kDone);
  CHECK(later.iterations_done == 20);
  CHECK(later.first_start_ns >= bad.finish_ns);
  CHECK(std::isfinite(r.stats[1].loss_first));
  CHECK(std::isfinite(r.stats[1].loss_last));
  CHECK(r.stats[1].loss_last < r.stats[1].loss_first);

  // The same memory: the persistent block where the failed job's was, the lane over its lane.
  CHECK(later.persistent_offset == bad.persistent_offset);
  const core::LaneMove* bad_lane = first_placement(out, bad.lane);
  const core::LaneMove* later_lane = first_placement(out, later.lane);
  REQUIRE(bad_lane != nullptr);
  REQUIRE(later_lane != nullptr);
  INFO("failed job's lane ", bad_lane->to_offset, "+", bad_lane->to_size, ", later job's lane ", later_lane->to_offset,
       "+", later_lane->to_size);
  CHECK(later_lane->to_offset <= bad_lane->to_offset);
  CHECK(bad_lane->to_offset + bad_lane->to_size <= later_lane->to_offset + later_lane->to_size);

  // The reference: the same trace and layout, the first job naming no model (it fails at its
  // first dispatch without running a kernel). The later job keeps its index, hence its seed.
  std::vector<JobSpec> clean = jobs;
  clean[0].workload = "no_such_model_32";
  const CudaRun ref = run_on(*device, clean, "pack", core::LaneMode::kAuto);
  REQUIRE(ref.outcome.jobs[0].status == JobStatus::kFailed);
  REQUIRE(ref.outcome.jobs[1].status == JobStatus::kDone);
  CHECK(ref.outcome.jobs[1].persistent_offset == later.persistent_offset);
  // Equal up to cuBLAS's freedom to pick other kernels for another stream's workspace; memory
  // left dirty or still being written by the failed iteration would change far more.
  CHECK(r.stats[1].loss_first == doctest::Approx(ref.stats[1].loss_first).epsilon(1e-5));
  CHECK(r.stats[1].loss_last == doctest::Approx(ref.stats[1].loss_last).epsilon(1e-5));
}

// --- The pool ------------------------------------------------------------------------------

TEST_CASE("cuda: pool regions start at their offsets and data round-trips near the top of the pool") {
  auto device = gpu::make_cuda_device(0);
  auto ops = device->create_ops();
  // Not a power of two: the top of the pool is not a round address.
  constexpr Bytes kCapacity = 8 * core::kMiB + 3 * gpu::kAlignment;
  gpu::MemoryPool pool(*device, kCapacity);
  CHECK(pool.capacity() == kCapacity);
  REQUIRE(pool.base() != nullptr);
  CHECK(reinterpret_cast<std::uintptr_t>(pool.base()) % gpu::kAlignment == 0);

  // An arena over [offset, capacity) hands out base() + offset first, then whole 256-byte units.
  for (const Bytes offset : {Bytes{0}, gpu::kAlignment, core::kMiB + 5 * gpu::kAlignment, kCapacity - 2 * gpu::kAlignment}) {
    INFO("offset ", offset);
    gpu::Arena a = pool.region(offset, kCapacity - offset);
    CHECK(a.size() == kCapacity - offset);
    CHECK(a.next() == pool.base() + offset);
    CHECK(a.allocate(1) == static_cast<void*>(pool.base() + offset));
    CHECK(a.allocate(1) == static_cast<void*>(pool.base() + offset + gpu::kAlignment));
  }

  // The top 4 KiB (where the first lane sits) and the first 4 KiB (the first persistent block),
  // each with its own values: what is written through one comes back unchanged and leaves the
  // other alone.
  constexpr Bytes kBytes = 4096;
  constexpr std::int64_t kCount = kBytes / static_cast<Bytes>(sizeof(float));
  gpu::Arena top = pool.region(kCapacity - kBytes, kBytes);
  gpu::Arena bottom = pool.region(0, kBytes);
  float* hi = top.allocate_array<float>(kCount);
  float* lo = bottom.allocate_array<float>(kCount);
  CHECK(reinterpret_cast<std::byte*>(hi) == pool.base() + kCapacity - kBytes);
  CHECK(reinterpret_cast<std::byte*>(lo) == pool.base());
  std::vector<float> hi_values(static_cast<std::size_t>(kCount)), lo_values(static_cast<std::size_t>(kCount));
  for (std::size_t i = 0; i < hi_values.size(); ++i) {
    hi_values[i] = 0.5f * static_cast<float>(i) - 100.0f;
    lo_values[i] = -static_cast<float>(i);
  }
  ops->to_device(hi_values.data(), hi, kBytes);
  ops->to_device(lo_values.data(), lo, kBytes);
  std::vector<float> back(static_cast<std::size_t>(kCount), std::numeric_limits<float>::quiet_NaN());
  ops->to_host(hi, back.data(), kBytes);
  CHECK(back == hi_values);
  // A kernel writes the region up to the pool's last byte.
  ops->fill(kCount, hi, 2.5f);
  ops->to_host(hi, back.data(), kBytes);
  ops->synchronize();
  CHECK(back == std::vector<float>(static_cast<std::size_t>(kCount), 2.5f));
  ops->to_host(lo, back.data(), kBytes);
  CHECK(back == lo_values);

  // The region is full: one more byte overflows it.
  CHECK_THROWS_AS(top.allocate(1), gpu::ArenaOverflow);
  // Regions off the 256-byte grid or past the end of the pool are refused.
  CHECK_THROWS_AS(pool.region(kCapacity - kBytes + 4, 256), std::logic_error);
  CHECK_THROWS_AS(pool.region(kCapacity - kBytes, kBytes + gpu::kAlignment), std::logic_error);
}
