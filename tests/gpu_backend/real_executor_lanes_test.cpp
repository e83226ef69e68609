// The real executor's admission and iteration pipeline (issue 28): an admission runs on its own
// thread and context, so a slow one holds up neither the loop nor another lane's completions, and
// the job's first iteration comes after it; on a device that queues work (a CUDA stream; here the
// queued test double of the CPU device, tests/gpu_backend/queued_device.h) a run enqueues
// iteration i + 1 before it waits for iteration i, so the device never runs dry at a boundary
// inside a run, and a stop asked for ends the run after the iterations enqueued by then.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/executor.h"
#include "core/scheduler.h"
#include "core/units.h"
#include "gpu_backend/cpu_ops.h"
#include "gpu_backend/device.h"
#include "gpu_backend/memory_pool.h"
#include "gpu_backend/model.h"
#include "gpu_backend/queued_device.h"
#include "gpu_backend/real_executor.h"
#include "policies/registry.h"
#include "support/jobs.h"

namespace {

using namespace salus;
using core::Bytes;
using core::Completion;
using core::JobSpec;
using core::JobStatus;
using test::ms;

constexpr Bytes kPool = 64 * core::kMiB;

/// A job declaring its model's real P and E (on the CPU device), in whole 256-byte units.
JobSpec real_job(std::string id, const std::string& workload, core::TimeNs arrival, std::int64_t iterations) {
  auto cpu = gpu::make_cpu_device();
  auto ops = cpu->create_ops();
  const auto net = gpu::build_model(workload);
  JobSpec s = test::job(std::move(id), arrival, iterations, ms(2), gpu::align_up(net->persistent_bytes()),
                        gpu::align_up(net->ephemeral_bytes(*ops, true)));
  s.workload = workload;
  return s;
}

core::Dispatch dispatch(core::JobIndex job, core::LaneId lane, std::int64_t iterations, Bytes offset, Bytes size) {
  core::Dispatch d;
  d.job = job;
  d.lane = lane;
  d.iterations = iterations;
  d.lane_offset = offset;
  d.lane_size = size;
  return d;
}

/// Waits for the next completion (the real executor may return early with none).
Completion next_completion(core::Executor& exec) {
  std::vector<Completion> out;
  while (out.empty()) exec.wait(core::kNever, out);
  REQUIRE(out.size() == 1);
  return out.front();
}

// --- Admission off the loop -------------------------------------------------------------------

/// A gate an admission waits at: the CPU device's context, whose fill_labels (the last step of
/// initialising a network's persistent state) waits while the gate is shut for networks of
/// `gated_batch` samples. Shut for at most 20 s: an executor that admitted on its caller's thread
/// would otherwise hang the test instead of failing it.
struct Gate {
  int gated_batch = -1;
  std::mutex m;
  std::condition_variable cv;
  bool open = false;
  bool waiting = false;    // an admission waits at the gate now
  bool timed_out = false;  // it waited 20 s and went on
  void let_through() {
    {
      std::lock_guard<std::mutex> lk(m);
      open = true;
    }
    cv.notify_all();
  }
  bool has_waiter() {
    std::lock_guard<std::mutex> lk(m);
    return waiting;
  }
  /// Waits (up to 10 s) until an admission waits at the gate.
  bool wait_for_waiter() {
    for (int i = 0; i < 1000 && !has_waiter(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return has_waiter();
  }
};

class GatedOps final : public gpu::CpuOps {
 public:
  explicit GatedOps(Gate& g) : g_(g) {}
  void fill_labels(int n, std::int32_t* labels, int classes, std::uint64_t seed) override {
    if (n == g_.gated_batch) {
      std::unique_lock<std::mutex> lk(g_.m);
      g_.waiting = true;
      if (!g_.cv.wait_for(lk, std::chrono::seconds(20), [&] { return g_.open; })) g_.timed_out = true;
      g_.waiting = false;
    }
    gpu::CpuOps::fill_labels(n, labels, classes, seed);
  }

 private:
  Gate& g_;
};

class GatedDevice final : public gpu::Device {
 public:
  explicit GatedDevice(Gate& g) : cpu_(gpu::make_cpu_device()), g_(g) {}
  gpu::DeviceKind kind() const override { return gpu::DeviceKind::kCpu; }
  std::string name() const override { return "cpu (gated admissions)"; }
  Bytes free_memory() const override { return cpu_->free_memory(); }
  std::optional<Bytes> used_memory() const override { return std::nullopt; }
  gpu::MathMode math() const override { return gpu::MathMode::kFp32; }
  void* allocate(Bytes bytes) override { return cpu_->allocate(bytes); }
  void deallocate(void* p) override { cpu_->deallocate(p); }
  std::unique_ptr<gpu::Ops> create_ops() override { return std::make_unique<GatedOps>(g_); }

 private:
  std::unique_ptr<gpu::Device> cpu_;
  Gate& g_;
};

/// job b's losses when nothing holds its admission: the same executor calls on the plain CPU device.
std::pair<float, float> reference_losses(const std::vector<JobSpec>& jobs, core::JobIndex b, Bytes offset,
                                         std::int64_t iterations) {
  auto cpu = gpu::make_cpu_device();
  gpu::MemoryPool pool(*cpu, kPool);
  gpu::RealExecutor exec(*cpu, pool, jobs, gpu::RealOptions{});
  exec.admit(b, jobs[static_cast<std::size_t>(b)], offset);
  exec.start(dispatch(b, 1, iterations, kPool - jobs[static_cast<std::size_t>(b)].ephemeral,
                      jobs[static_cast<std::size_t>(b)].ephemeral));
  (void)next_completion(exec);
  return {exec.stats(b).loss_first, exec.stats(b).loss_last};
}

}  // namespace

TEST_CASE("a slow admission does not hold up the caller nor another lane, and the job's first iteration comes after it") {
  // a (lenet_32) admitted and running in lane 0; b (mlp_64, batch 64) admitted while a runs, its
  // initialisation held at the gate. admit(b) returns at once, a's run completes while b's
  // admission still waits, b's run (dispatched right after its admission was asked for) starts
  // only once the admission is through, and trains exactly as when nothing held it.
  const std::vector<JobSpec> jobs = test::trace({real_job("a", "lenet_32", 0, 6), real_job("b", "mlp_64", 0, 3)});
  Gate gate;
  gate.gated_batch = 64;
  GatedDevice device(gate);
  gpu::MemoryPool pool(device, kPool);
  gpu::RealExecutor exec(device, pool, jobs, gpu::RealOptions{});
  const Bytes b_offset = jobs[0].persistent;
  const Bytes lane_a = kPool - jobs[0].ephemeral, lane_b = lane_a - jobs[1].ephemeral;
  exec.admit(0, jobs[0], 0);
  exec.start(dispatch(0, 0, 6, lane_a, jobs[0].ephemeral));
  const auto before_admit = std::chrono::steady_clock::now();
  exec.admit(1, jobs[1], b_offset);
  const auto admit_took = std::chrono::steady_clock::now() - before_admit;
  exec.start(dispatch(1, 1, 3, lane_b, jobs[1].ephemeral));
  REQUIRE(gate.wait_for_waiter());
  CHECK(admit_took < std::chrono::seconds(5));  // it did not wait for the gate (shut for up to 20 s)

  const Completion first = next_completion(exec);
  CHECK(first.job == 0);
  CHECK(first.iterations_done == 6);
  CHECK_FALSE(first.failed);
  CHECK(gate.has_waiter());  // a's run ended while b's admission was still held

  // Nothing of b ran yet: its worker waits for the admission.
  std::vector<Completion> none;
  exec.wait(exec.now() + ms(50), none);
  CHECK(none.empty());
  const core::TimeNs opened = exec.now();
  gate.let_through();
  const Completion second = next_completion(exec);
  CHECK(second.job == 1);
  CHECK(second.iterations_done == 3);
  CHECK_FALSE(second.failed);
  CHECK(second.start_ns >= opened);
  CHECK_FALSE(gate.timed_out);
  const auto [loss_first, loss_last] = reference_losses(jobs, 1, b_offset, 3);
  CHECK(exec.stats(1).loss_first == loss_first);
  CHECK(exec.stats(1).loss_last == loss_last);
  CHECK(exec.stats(1).persistent_used <= jobs[1].persistent);
}

namespace {

/// Lets the gate through when the loop receives the first completion of job `watch`, and
/// records whether the gated admission was still waiting then.
class OpenOnCompletion final : public core::Executor {
 public:
  OpenOnCompletion(core::Executor& inner, Gate& gate, core::JobIndex watch) : inner_(inner), gate_(gate), watch_(watch) {}
  core::TimeNs now() const override { return inner_.now(); }
  void admit(core::JobIndex j, const JobSpec& s, Bytes off) override { inner_.admit(j, s, off); }
  void release(core::JobIndex j) override { inner_.release(j); }
  void start(const core::Dispatch& d) override { inner_.start(d); }
  void stop_at_boundary(core::LaneId lane) override { inner_.stop_at_boundary(lane); }
  void wait(core::TimeNs deadline, std::vector<Completion>& out) override {
    const std::size_t before = out.size();
    inner_.wait(deadline, out);
    for (std::size_t k = before; k < out.size(); ++k) {
      if (out[k].job == watch_ && opened_at < 0) {
        held_when_seen = gate_.has_waiter();
        opened_at = inner_.now();
        gate_.let_through();
      }
    }
  }
  bool held_when_seen = false;
  core::TimeNs opened_at = -1;

 private:
  core::Executor& inner_;
  Gate& gate_;
  core::JobIndex watch_;
};

}  // namespace

TEST_CASE("through the loop: a held admission leaves the loop free to take another lane's completion") {
  // pack, two lanes: a (lenet_32) and b (mlp_64) arrive together; b's admission is held until the
  // loop has received a completion of a. With admission on the loop's thread the loop could not
  // receive it (the gate would give up after 20 s).
  const std::vector<JobSpec> jobs = test::trace({real_job("a", "lenet_32", 0, 8), real_job("b", "mlp_64", 0, 4)});
  Gate gate;
  gate.gated_batch = 64;
  GatedDevice device(gate);
  const auto policy = policies::make_policy("pack");
  core::SchedulerOptions opts;
  opts.capacity = kPool;
  opts.lane_mode = core::LaneMode::kAuto;
  opts.record_timeline = true;
  gpu::MemoryPool pool(device, kPool);
  gpu::RealExecutor real(device, pool, jobs, gpu::RealOptions{});
  OpenOnCompletion watch(real, gate, 0);
  const core::ScheduleOutcome out = core::run_schedule(jobs, *policy, watch, opts);
  CHECK_FALSE(gate.timed_out);
  CHECK(watch.held_when_seen);
  REQUIRE(watch.opened_at >= 0);
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    INFO("job ", jobs[i].id, ": ", out.jobs[i].reason());
    CHECK(out.jobs[i].status == JobStatus::kDone);
  }
  CHECK(out.jobs[0].lane != out.jobs[1].lane);
  // b was dispatched at once, but its iterations came after its admission.
  for (const core::Segment& s : out.segments) {
    if (s.job == 1) CHECK(s.start_ns >= watch.opened_at);
  }
  CHECK(real.stats(1).loss_last < real.stats(1).loss_first);
}

// --- No round trip between a run's iterations (a device that queues work) --------------------

namespace {

struct QueuedRun {
  Completion completion;
  gpu::RealJobStats stats;
  std::string marks;  // the device's mark log: the run's begin mark, then one per iteration
};

/// One fresh job of `iterations` lenet_32 iterations, one run, on the queued device.
QueuedRun one_run(int lookahead, std::int64_t iterations) {
  const std::vector<JobSpec> jobs = test::trace({real_job("a", "lenet_32", 0, iterations)});
  test::QueuedDevice device(std::chrono::milliseconds(2));
  gpu::MemoryPool pool(device, kPool);
  gpu::RealOptions options;
  options.lookahead = lookahead;
  options.record_iterations = true;
  gpu::RealExecutor exec(device, pool, jobs, options);
  CHECK(exec.lookahead() == lookahead);
  exec.admit(0, jobs[0], 0);
  exec.start(dispatch(0, 0, iterations, kPool - jobs[0].ephemeral, jobs[0].ephemeral));
  QueuedRun r;
  r.completion = next_completion(exec);
  r.stats = exec.stats(0);
  r.marks = device.mark_log();
  return r;
}

}  // namespace

TEST_CASE("on a device that queues work, iteration i + 1 is queued before the worker waits for i") {
  // The device's log at each iteration's end mark: '.' when the next work was queued behind it,
  // 'g' when the device ran dry there and waited for the host (a round trip). After the first
  // iteration and the last, the loss is read back (its copy is queued behind the mark).
  constexpr std::int64_t kIterations = 8;
  const QueuedRun ahead = one_run(1, kIterations);
  const QueuedRun lockstep = one_run(0, kIterations);
  for (const QueuedRun* r : {&ahead, &lockstep}) {
    CHECK(r->completion.iterations_done == kIterations);
    CHECK_FALSE(r->completion.failed);
    REQUIRE(r->marks.size() == 1 + kIterations);  // the run's begin mark, then one per iteration
    CHECK(r->stats.iterations == kIterations);
    // Timed on the device's clock, boundary to boundary: each holds one 2 ms end mark.
    REQUIRE(r->stats.iteration_times_ns.size() == kIterations - 1);
    for (core::TimeNs t : r->stats.iteration_times_ns) CHECK(t >= ms(2));
    CHECK(r->stats.first_iteration_ns > 0);
  }
  CHECK(ahead.marks.substr(1) == std::string(kIterations, '.'));
  CHECK(lockstep.marks.substr(1) == "." + std::string(kIterations - 2, 'g') + ".");
  // The same training either way (the CPU device's own numbers: see the policy case below).
  CHECK(ahead.stats.loss_first == lockstep.stats.loss_first);
  CHECK(ahead.stats.loss_last == lockstep.stats.loss_last);
}

TEST_CASE("a stop ends the run after the iterations enqueued when it was asked for") {
  // The device is held just before iteration 1's end mark (marks: begin, end 0, end 1, ...), so
  // iteration 1 is in flight on the device. With lookahead 1 the worker has already enqueued
  // iteration 2 and waits for 1; with 0 it waits for 1 and has enqueued nothing more. A stop
  // asked for then ends the run at the next boundary at which the worker decides what to
  // enqueue: after iteration 2 with lookahead 1, after iteration 1 with 0.
  for (int lookahead : {0, 1}) {
    CAPTURE(lookahead);
    const std::vector<JobSpec> jobs = test::trace({real_job("a", "lenet_32", 0, 10)});
    test::QueuedDevice device;
    gpu::MemoryPool pool(device, kPool);
    gpu::RealOptions options;
    options.lookahead = lookahead;
    gpu::RealExecutor exec(device, pool, jobs, options);
    exec.admit(0, jobs[0], 0);
    device.hold_before_mark(3);
    exec.start(dispatch(0, 0, 10, kPool - jobs[0].ephemeral, jobs[0].ephemeral));
    REQUIRE(device.wait_held(std::chrono::seconds(10)));
    const int want_enqueued = 3 + lookahead;  // begin, end 0, end 1, and end 2 with lookahead 1
    for (int i = 0; i < 1000 && device.marks_enqueued() < want_enqueued; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    CHECK(device.marks_enqueued() == want_enqueued);
    exec.stop_at_boundary(0);
    device.resume();
    const Completion c = next_completion(exec);
    CHECK(c.iterations_done == 2 + lookahead);
    CHECK_FALSE(c.failed);
    CHECK(device.marks_enqueued() == want_enqueued);  // nothing was enqueued after the stop
    const std::vector<core::TimeNs> stops = exec.stop_latencies();
    REQUIRE(stops.size() == 1);
    CHECK(stops[0] >= 0);
    CHECK(exec.stats(0).iterations == 2 + lookahead);
  }
}

TEST_CASE("every policy trains every job to the end on a device that queues work, as on the CPU device") {
  // Lookahead 1 through the loop: runs cut at boundaries (joins, srtf's preemption, fair's turns),
  // switches in a lane, a job's last iteration in the middle of a run of another. Each job trains
  // exactly the numbers it trains on the CPU device, whatever the policy.
  const std::vector<JobSpec> jobs = test::trace({real_job("lenet_a", "lenet_32", 0, 10),
                                                 real_job("mlp_b", "mlp_64", 0, 8),
                                                 real_job("lenet_c", "lenet_32", ms(10), 6)});
  std::vector<gpu::RealJobStats> cpu_stats;
  {
    auto cpu = gpu::make_cpu_device();
    const auto policy = policies::make_policy("fifo");
    core::SchedulerOptions opts;
    opts.capacity = kPool;
    opts.lane_mode = core::LaneMode::kExclusive;
    gpu::MemoryPool pool(*cpu, kPool);
    gpu::RealExecutor exec(*cpu, pool, jobs, gpu::RealOptions{});
    (void)core::run_schedule(jobs, *policy, exec, opts);
    for (std::size_t i = 0; i < jobs.size(); ++i) cpu_stats.push_back(exec.stats(static_cast<core::JobIndex>(i)));
  }
  for (const std::string& name : policies::policy_names()) {
    CAPTURE(name);
    test::QueuedDevice device;
    const auto policy = policies::make_policy(name);
    core::SchedulerOptions opts;
    opts.capacity = kPool;
    opts.lane_mode = policy->default_lane_mode();
    opts.record_timeline = true;
    gpu::MemoryPool pool(device, kPool);
    gpu::RealExecutor exec(device, pool, jobs, gpu::RealOptions{});
    REQUIRE(exec.lookahead() == 1);
    const core::ScheduleOutcome out = core::run_schedule(jobs, *policy, exec, opts);
    std::vector<std::int64_t> seg_iterations(jobs.size(), 0);
    for (const core::Segment& s : out.segments) seg_iterations[static_cast<std::size_t>(s.job)] += s.iterations;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      INFO("job ", jobs[i].id, ": ", out.jobs[i].reason());
      CHECK(out.jobs[i].status == JobStatus::kDone);
      CHECK(out.jobs[i].iterations_done == jobs[i].iterations);
      CHECK(seg_iterations[i] == jobs[i].iterations);
      const gpu::RealJobStats& s = exec.stats(static_cast<core::JobIndex>(i));
      CHECK(s.iterations == jobs[i].iterations);
      CHECK(s.loss_first == cpu_stats[i].loss_first);
      CHECK(s.loss_last == cpu_stats[i].loss_last);
      // Device-clock intervals between a run's marks, all inside the job's runs.
      CHECK(s.iteration_ns_total <= out.jobs[i].gpu_time_ns);
    }
    // One switch latency per run that changed a lane's job, from the device's marks.
    CHECK(static_cast<std::int64_t>(exec.switch_latencies().size()) == out.switches);
  }
}
