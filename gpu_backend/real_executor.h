#pragma once
/// The real executor: one process owns the device and runs the jobs' iterations for real, one
/// worker thread per concurrently running lane, each with its own execution context (on CUDA its
/// own stream and cuDNN/cuBLAS handles). The clock is the monotonic clock; completions reach the
/// scheduling loop through a queue the workers fill at iteration boundaries.
///
/// Every device byte a job uses comes from the pool: its persistent block at the offset the lane
/// layout gave it, its activations and workspaces from its lane's region, reset at every
/// iteration boundary. A job whose iteration needs more than its lane holds, or whose persistent
/// state is larger than its declared P, or whose kernels fail, is stopped with the reason; the
/// others go on. A sticky device error (the CUDA context is lost) is reported as fatal
/// (core::Completion::fatal): the loop then ends the run, and every run still in flight stops at
/// its next iteration boundary.
///
/// Switch latency: in a lane, from the end of one job's last kernel to the start of the next
/// job's first kernel. On CUDA it is measured with events on the device's clock: one recorded on
/// the lane's stream right after each iteration's kernels (before the loss is copied back and the
/// stream synchronised), one recorded just before the next job's first kernel; their
/// cudaEventElapsedTime. It includes, on the host: the end of the previous run (loss copy, stream
/// synchronisation, the completion reaching the loop), the loop's decision, the dispatch to a
/// worker thread and its wake-up; on the device: nothing else (the lane's stream is idle). On the
/// CPU device, which has no clock of its own, the host clock: end of the previous run to the
/// start of the next job's first iteration.
#include <atomic>
#include <chrono>
#include <limits>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "core/executor.h"
#include "core/job.h"
#include "gpu_backend/device.h"
#include "gpu_backend/memory_pool.h"
#include "gpu_backend/model.h"

namespace salus::gpu {

struct RealOptions {
  TrainConfig train;
  std::uint64_t seed = 1;
  /// Worker threads, each with its execution context (stream, cuDNN and cuBLAS handles), made
  /// before the trace starts; more are made only if more lanes than this run at once.
  int workers = 1;
  /// Keep every iteration's time (RealJobStats::iteration_times_ns), for the profiler.
  bool record_iterations = false;
};

/// What a job did, for the summary.
struct RealJobStats {
  float loss_first = std::numeric_limits<float>::quiet_NaN();
  float loss_last = std::numeric_limits<float>::quiet_NaN();
  std::int64_t iterations = 0;
  core::TimeNs first_iteration_ns = -1;  ///< the job's first iteration (-1 before it ran)
  core::TimeNs iteration_ns_total = 0;   ///< sum of the measured times of the later iterations
  std::vector<core::TimeNs> iteration_times_ns;  ///< each later iteration, with RealOptions::record_iterations
  Bytes persistent_used = 0;            ///< the model's real persistent state
  Bytes ephemeral_peak = 0;             ///< the most lane memory one of its iterations took
  bool inference = false;
};

class RealExecutor final : public core::Executor {
 public:
  /// `jobs` must outlive the executor. Workload names must be models build_model() knows, with
  /// an optional "_infer" suffix for forward-only jobs (e.g. "lenet_32_infer"). The pool is the
  /// caller's.
  RealExecutor(Device& device, MemoryPool& pool, std::span<const core::JobSpec> jobs, RealOptions options);
  /// Makes the execution contexts (options.workers of them, with their handles) first and then
  /// reserves its own pool of `pool_capacity` bytes: a pool close to the device's free memory then
  /// cannot starve the handles. Throws core::InputError when the device has less free.
  RealExecutor(Device& device, Bytes pool_capacity, std::span<const core::JobSpec> jobs, RealOptions options);
  ~RealExecutor() override;

  core::TimeNs now() const override;
  void admit(core::JobIndex job, const core::JobSpec& spec, Bytes persistent_offset) override;
  void release(core::JobIndex job) override;
  void start(const core::Dispatch& d) override;
  void stop_at_boundary(core::LaneId lane) override;
  void wait(core::TimeNs deadline, std::vector<core::Completion>& out) override;

  const RealJobStats& stats(core::JobIndex job) const { return stats_[static_cast<std::size_t>(job)]; }
  /// Switch latencies: in a lane, end of one job's iteration to the start of the next job's
  /// first iteration (host clock at its first kernel launch), in ns, in the order they happened.
  std::vector<core::TimeNs> switch_latencies() const;
  /// Worker threads (execution contexts) created: the most lanes that ran at once.
  int workers() const;
  /// What switch_latencies() were measured with: "cuda_events" or "host_clock".
  const char* switch_latency_clock() const { return device_marks_ ? "cuda_events" : "host_clock"; }
  /// True once a run failed with a sticky device error.
  bool device_lost() const { return lost_.load(); }
  MemoryPool& pool() { return *pool_; }

 private:
  RealExecutor(Device& device, MemoryPool* pool, std::span<const core::JobSpec> jobs, RealOptions options);
  struct Worker;
  struct JobSlot {
    std::unique_ptr<Network> net;
    bool inference = false;
    std::string error;  // set when it cannot run (given back as a failed completion)
  };
  void run_on(Worker& w, core::Dispatch d);
  void worker_loop(Worker* w);
  /// A new idle worker with its execution context and thread; mu_ held by the caller.
  Worker* add_worker();
  void complete(const core::Completion& c);

  Device& device_;
  MemoryPool* pool_;
  std::unique_ptr<MemoryPool> owned_pool_;
  std::span<const core::JobSpec> jobs_;
  RealOptions options_;
  const std::chrono::steady_clock::time_point t0_;
  std::unique_ptr<Ops> admin_;                 // initialises admitted jobs' persistent state
  bool device_marks_ = false;                  // the device has its own clock (CUDA events)
  std::atomic<bool> lost_{false};              // a sticky device error happened
  std::vector<JobSlot> slots_;                 // by job
  std::vector<RealJobStats> stats_;            // by job (written by the worker running the job)

  mutable std::mutex mu_;
  std::condition_variable done_cv_;
  std::deque<core::Completion> done_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::map<core::LaneId, Worker*> running_;    // lane -> worker running it now
  struct LaneHistory {
    core::JobIndex last_job = core::kNoJob;
    core::TimeNs last_end = 0;                   // host clock
    std::shared_ptr<DeviceMark> end_mark;        // after its last kernel (null on the CPU or after a failure)
  };
  std::map<core::LaneId, LaneHistory> history_;
  std::vector<core::TimeNs> switch_latencies_;
};

}  // namespace salus::gpu
