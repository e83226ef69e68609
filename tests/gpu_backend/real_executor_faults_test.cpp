// The real executor's layout and fault containment on the CPU device: every region it is handed
// is 256-byte aligned and inside the pool for traces of odd sizes; an iteration that needs more
// than its lane writes nothing outside it (guard bytes around the lane) and the lane's next job
// runs; a device that is lost (a sticky error, provoked here by a test double of the CPU
// device's context) ends the run with every job failed.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/errors.h"
#include "core/scheduler.h"
#include "core/units.h"
#include "gpu_backend/cpu_ops.h"
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
using test::ms;

struct Figures {
  Bytes persistent = 0, ephemeral = 0;
};
Figures figures(const std::string& workload) {
  auto device = gpu::make_cpu_device();
  auto ops = device->create_ops();
  const auto net = gpu::build_model(workload);
  return {net->persistent_bytes(), net->ephemeral_bytes(*ops, true)};
}

JobSpec real_job(std::string id, const std::string& workload, core::TimeNs arrival, std::int64_t iterations,
                 Bytes persistent, Bytes ephemeral, core::TimeNs iter_ns = ms(2)) {
  JobSpec s = test::job(std::move(id), arrival, iterations, iter_ns, persistent, ephemeral);
  s.workload = workload;
  return s;
}

/// Passes everything to the real executor and records (and checks) each region it is handed.
class Recording final : public core::Executor {
 public:
  Recording(core::Executor& inner, std::span<const JobSpec> jobs, Bytes pool_bytes)
      : inner_(inner), jobs_(jobs), pool_bytes_(pool_bytes) {}
  core::TimeNs now() const override { return inner_.now(); }
  void admit(core::JobIndex j, const JobSpec& s, Bytes offset) override {
    INFO("job ", s.id, ": P ", s.persistent, " at ", offset);
    CHECK(offset % 256 == 0);
    CHECK(offset >= 0);
    CHECK(offset + gpu::align_up(s.persistent) <= pool_bytes_);
    blocks.push_back({offset, gpu::align_up(s.persistent)});
    inner_.admit(j, s, offset);
  }
  void release(core::JobIndex j) override { inner_.release(j); }
  void start(const core::Dispatch& d) override {
    INFO("job ", jobs_[static_cast<std::size_t>(d.job)].id, ": lane at ", d.lane_offset, ", size ", d.lane_size);
    CHECK(d.lane_offset % 256 == 0);
    CHECK(d.lane_size % 256 == 0);
    CHECK(d.lane_offset >= 0);
    CHECK(d.lane_offset + d.lane_size <= pool_bytes_);
    lanes.push_back({d.lane_offset, d.lane_size});
    inner_.start(d);
  }
  void stop_at_boundary(core::LaneId lane) override { inner_.stop_at_boundary(lane); }
  void wait(core::TimeNs deadline, std::vector<core::Completion>& out) override { inner_.wait(deadline, out); }

  std::vector<std::pair<Bytes, Bytes>> blocks;  // offset, size
  std::vector<std::pair<Bytes, Bytes>> lanes;   // offset, size

 private:
  core::Executor& inner_;
  std::span<const JobSpec> jobs_;
  Bytes pool_bytes_;
};

/// The CPU device's context, losing the device (as a sticky CUDA error does) at the `fail_at`-th
/// ReLU of all contexts of its device; from then on every ReLU and synchronize fails the same way.
struct LossState {
  std::atomic<int> relus{0};
  int fail_at = 1 << 30;
  std::atomic<bool> lost{false};
};

class LosingOps final : public gpu::CpuOps {
 public:
  explicit LosingOps(LossState& s) : s_(s) {}
  void relu_forward(std::int64_t count, const float* x, float* y) override {
    if (s_.relus.fetch_add(1) + 1 >= s_.fail_at) s_.lost = true;
    check();
    gpu::CpuOps::relu_forward(count, x, y);
  }
  void synchronize() override { check(); }

 private:
  void check() const {
    if (s_.lost) {
      throw gpu::DeviceError("relu_forward failed: an illegal memory access was encountered (cudaErrorIllegalAddress)",
                             true);
    }
  }
  LossState& s_;
};

class LosingDevice final : public gpu::Device {
 public:
  explicit LosingDevice(LossState& s) : cpu_(gpu::make_cpu_device()), s_(s) {}
  gpu::DeviceKind kind() const override { return gpu::DeviceKind::kCpu; }
  std::string name() const override { return "cpu (losing)"; }
  Bytes free_memory() const override { return cpu_->free_memory(); }
  std::optional<Bytes> used_memory() const override { return std::nullopt; }
  gpu::MathMode math() const override { return gpu::MathMode::kFp32; }
  void* allocate(Bytes bytes) override { return cpu_->allocate(bytes); }
  void deallocate(void* p) override { cpu_->deallocate(p); }
  std::unique_ptr<gpu::Ops> create_ops() override { return std::make_unique<LosingOps>(s_); }

 private:
  std::unique_ptr<gpu::Device> cpu_;
  LossState& s_;
};

}  // namespace

TEST_CASE("randomized traces with odd P, E and capacity: every region the real executor gets is aligned and in the pool") {
  const Figures lenet = figures("lenet_32"), mlp = figures("mlp_64");
  auto device = gpu::make_cpu_device();
  int runs = 0, done = 0;
  for (std::uint32_t seed = 1; seed <= 4; ++seed) {
    std::mt19937_64 rng(seed);
    auto extra = [&](Bytes hi) { return std::uniform_int_distribution<Bytes>(1, hi)(rng) | 1; };  // odd
    std::vector<JobSpec> specs;
    for (int j = 0; j < 6; ++j) {
      const bool is_lenet = (rng() & 1) != 0;
      const Figures& f = is_lenet ? lenet : mlp;
      specs.push_back(real_job("j" + std::to_string(j), is_lenet ? "lenet_32" : "mlp_64",
                               ms(static_cast<std::int64_t>(rng() % 20)), 1 + static_cast<std::int64_t>(rng() % 2),
                               f.persistent + extra(100'000), f.ephemeral + extra(300'000)));
    }
    const auto jobs = test::trace(specs);
    // An odd pool, smaller than the six jobs together, so that some wait and lanes move.
    const Bytes pool_bytes = (12 * core::kMiB + extra(1'000'000)) | 1;
    for (const char* name : {"pack", "fair", "srtf"}) {
      CAPTURE(seed);
      CAPTURE(name);
      const auto policy = policies::make_policy(name);
      core::SchedulerOptions opts;
      opts.capacity = pool_bytes;
      opts.lane_mode = policy->default_lane_mode();
      gpu::MemoryPool pool(*device, pool_bytes);
      gpu::RealExecutor real(*device, pool, jobs, gpu::RealOptions{});
      Recording rec(real, jobs, pool_bytes);
      const core::ScheduleOutcome out = core::run_schedule(jobs, *policy, rec, opts);
      for (std::size_t i = 0; i < jobs.size(); ++i) {
        INFO("job ", jobs[i].id, ": ", out.jobs[i].reason());
        CHECK(out.jobs[i].status == JobStatus::kDone);
        done += out.jobs[i].status == JobStatus::kDone;
      }
      CHECK(rec.blocks.size() == jobs.size());
      CHECK(rec.lanes.size() >= jobs.size());
      ++runs;
    }
  }
  CHECK(runs == 12);
  CHECK(done == 72);
}

TEST_CASE("an iteration that needs more than its lane writes nothing outside it, and the lane's next job runs") {
  // One lane (srtf) holding both jobs, as large as mlp_64's iteration; lenet_32 (shorter, so it
  // runs first) needs more and overflows. The pool is larger than the scheduler's capacity, so
  // guard bytes sit above the lane, and the free space between the persistent blocks and the lane
  // guards it from below. Everything but the two persistent blocks and the lane is filled with a
  // canary pattern before the run and checked after it.
  const Figures lenet = figures("lenet_32"), mlp = figures("mlp_64");
  REQUIRE(lenet.ephemeral > mlp.ephemeral);
  const auto jobs = test::trace({real_job("over", "lenet_32", 0, 1, lenet.persistent, mlp.ephemeral, ms(1)),
                                 real_job("next", "mlp_64", 0, 3, mlp.persistent, mlp.ephemeral, ms(50))});
  constexpr Bytes kCapacity = 16 * core::kMiB, kGuard = 64 * core::kKiB;
  constexpr unsigned char kCanary = 0xA5;
  auto device = gpu::make_cpu_device();
  gpu::MemoryPool pool(*device, kCapacity + kGuard);
  std::memset(pool.base(), kCanary, static_cast<std::size_t>(kCapacity + kGuard));
  const auto policy = policies::make_policy("srtf");
  core::SchedulerOptions opts;
  opts.capacity = kCapacity;
  opts.lane_mode = core::LaneMode::kSingle;
  gpu::RealExecutor real(*device, pool, jobs, gpu::RealOptions{});
  Recording rec(real, jobs, kCapacity);
  const core::ScheduleOutcome out = core::run_schedule(jobs, *policy, rec, opts);

  const core::JobState& over = out.jobs[0];
  CHECK(over.status == JobStatus::kFailed);
  CHECK(over.reason().find("ephemeral memory overflow: needs ") == 0);
  CHECK(over.reason().find("but its region holds " + core::format_size(gpu::align_up(mlp.ephemeral)) + " (its lane)") !=
        std::string::npos);
  CHECK(over.iterations_done == 0);
  const core::JobState& next = out.jobs[1];
  CHECK(next.status == JobStatus::kDone);
  CHECK(next.iterations_done == 3);
  CHECK(real.stats(1).loss_last < real.stats(1).loss_first);
  REQUIRE(rec.lanes.size() == 2);
  CHECK(rec.lanes[0] == rec.lanes[1]);  // the same lane, the same region
  const auto [lane_offset, lane_size] = rec.lanes[0];
  CHECK(lane_offset + lane_size == kCapacity);
  REQUIRE(rec.blocks.size() == 2);
  std::vector<bool> owned(static_cast<std::size_t>(kCapacity + kGuard), false);
  for (const auto& [offset, size] : rec.blocks) std::fill_n(owned.begin() + offset, size, true);
  std::fill_n(owned.begin() + lane_offset, lane_size, true);
  Bytes guard_bytes = 0, changed = 0, first_changed = -1;
  for (Bytes b = 0; b < kCapacity + kGuard; ++b) {
    if (owned[static_cast<std::size_t>(b)]) continue;
    ++guard_bytes;
    if (static_cast<unsigned char>(pool.base()[b]) != kCanary) {
      if (first_changed < 0) first_changed = b;
      ++changed;
    }
  }
  INFO("lane [", lane_offset, ", ", lane_offset + lane_size, "), first changed byte outside it at ", first_changed);
  CHECK(guard_bytes >= kGuard + 4 * core::kMiB);  // above the lane and between the blocks and the lane
  CHECK(changed == 0);
  // And the iteration did write inside its lane before it ran out (the overflow came mid-pass).
  bool lane_written = false;
  for (Bytes b = lane_offset; b < lane_offset + lane_size && !lane_written; ++b) {
    lane_written = static_cast<unsigned char>(pool.base()[b]) != kCanary;
  }
  CHECK(lane_written);
}

TEST_CASE("a lost device (sticky error) ends the run: every running and waiting job fails with the reason") {
  // pack: a and b train at once in two lanes, w waits for memory, late arrives long after the loss.
  // The 40th ReLU of the process loses the device (during a's or b's first iterations).
  const Figures lenet = figures("lenet_32"), mlp = figures("mlp_64");
  const auto jobs = test::trace({real_job("a", "lenet_32", 0, 2000, lenet.persistent, lenet.ephemeral),
                                 real_job("b", "mlp_64", 0, 2000, mlp.persistent, mlp.ephemeral),
                                 real_job("w", "lenet_32", 0, 5, 8 * core::kMiB, lenet.ephemeral),
                                 real_job("late", "mlp_64", ms(60'000), 5, mlp.persistent, mlp.ephemeral)});
  LossState state;
  state.fail_at = 40;
  LosingDevice device(state);
  const auto policy = policies::make_policy("pack");
  core::SchedulerOptions opts;
  opts.capacity = 16 * core::kMiB;
  opts.lane_mode = core::LaneMode::kAuto;
  gpu::MemoryPool pool(device, opts.capacity);
  gpu::RealOptions two_workers;
  two_workers.workers = 2;
  gpu::RealExecutor real(device, pool, jobs, two_workers);
  const core::ScheduleOutcome out = core::run_schedule(jobs, *policy, real, opts);
  CHECK(real.device_lost());
  CHECK(out.fatal_error.find("relu_forward failed: an illegal memory access") == 0);
  int fatal_reported = 0;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    INFO("job ", jobs[i].id, ": ", out.jobs[i].reason());
    CHECK(out.jobs[i].status == JobStatus::kFailed);
    CHECK(out.jobs[i].iterations_done < jobs[i].iterations);
    fatal_reported += out.jobs[i].reason() == out.fatal_error;
  }
  CHECK(fatal_reported >= 1);
  for (std::size_t i : {std::size_t{2}, std::size_t{3}}) {
    CHECK(out.jobs[i].reason() == "not run to the end: the device was lost (" + out.fatal_error + ")");
    CHECK(out.jobs[i].first_start_ns == -1);
  }
  // The run ended at once: long before late arrives (and a and b could train their 2000
  // iterations: 10 s at least on this device; stretched under a sanitizer, below late's 60 s).
  CHECK(out.end_ns < std::min(ms(10'000) * test::kSanitizerSlowdown, ms(59'000)));
}

TEST_CASE("--math: fp32 and tf32 by name, unknown names listed, tf32 refused on the cpu device") {
  CHECK(gpu::parse_math_mode("fp32") == gpu::MathMode::kFp32);
  CHECK(gpu::parse_math_mode("tf32") == gpu::MathMode::kTf32);
  CHECK(std::string(gpu::to_string(gpu::MathMode::kTf32)) == "tf32");
  CHECK_THROWS_WITH_AS(gpu::parse_math_mode("fp16"), "--math: unknown math mode 'fp16' (valid: fp32, tf32)",
                       core::InputError);
  CHECK_THROWS_WITH_AS(gpu::make_device("cpu", gpu::MathMode::kTf32),
                       "--math tf32: the cpu device computes in FP32 only (valid on cpu: fp32)", core::InputError);
  const auto cpu = gpu::make_device("cpu", gpu::MathMode::kFp32);
  CHECK(cpu->math() == gpu::MathMode::kFp32);
  CHECK_FALSE(cpu->used_memory().has_value());
  auto ops = cpu->create_ops();
  CHECK(ops->blas_workspace_bytes() == 0);
  CHECK(ops->create_mark() == nullptr);
}
