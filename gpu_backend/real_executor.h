#pragma once
/// The real executor: one process owns the device and runs the jobs' iterations for real, one
/// worker thread per concurrently running lane, each with its own execution context (on CUDA its
/// own stream and cuDNN/cuBLAS handles). The clock is the monotonic clock; completions reach the
/// scheduling loop through a queue the workers fill at the ends of runs.
///
/// Every device byte a job uses comes from the pool: its persistent block at the offset the lane
/// layout gave it, its activations and workspaces from its lane's region, reset at every
/// iteration boundary. A job whose iteration needs more than its lane holds, or whose persistent
/// state is larger than its declared P, or whose kernels fail, is stopped with the reason; the
/// others go on. A sticky device error (the CUDA context is lost) is reported as fatal
/// (core::Completion::fatal): the loop then ends the run, and every run still in flight stops at
/// its next iteration boundary. A device that injects faults (cpu-faults, Device::faults) is asked
/// at the same points: each allocation from the pool (a job's persistent block at its admission,
/// every buffer an iteration takes from its lane) and the end of each iteration; a refused
/// allocation or a failed iteration fails that job (no retry: its state after a failed iteration
/// is unknown), a lost device is the sticky error above.
///
/// Admission off the loop. admit() only queues the job: an admission thread with its own
/// execution context (on CUDA its own stream) builds the network, checks its persistent state
/// against P and initialises the block, ending with a synchronisation of that context. The loop
/// goes on at once; the worker that runs the job's first dispatch waits for the admission first,
/// so the job's first kernel is enqueued only after every kernel of its admission has finished
/// (the host-side wait orders the two streams). Admissions are done one at a time, in the order
/// they were asked for. A job that cannot be initialised fails at its first dispatch, as before.
///
/// No host round trip between a run's iterations (RealOptions::lookahead). On a device that
/// queues work (CUDA), the worker enqueues iteration i + 1 before it waits for iteration i, so
/// the device always has the next iteration queued while a run goes on; it waits only for the
/// job's first iteration (its loss is read back) and for the end of the run. A run ends, after
/// stop_at_boundary, at the first iteration boundary at which the worker decides what to
/// enqueue next after the request: every iteration already enqueued then runs (the device cannot
/// take back queued kernels), so with lookahead 1 on a busy device up to one more iteration
/// than with lookahead 0 (stop_latencies() measures it). On the CPU device operations run at
/// once on the worker's thread: there is nothing to overlap and the lookahead is 0.
///
/// Switch latency: in a lane, from the end of one job's last kernel to the start of the next
/// job's first kernel. On CUDA it is measured with events on the device's clock: one recorded on
/// the lane's stream right after each iteration's kernels (before any loss is copied back), one
/// recorded just before the next job's first kernel; their cudaEventElapsedTime. It includes, on
/// the host: the end of the previous run (waiting for its last iteration, the completion
/// reaching the loop), the loop's decision, the dispatch to a worker thread and its wake-up; on
/// the device: nothing else (the lane's stream is idle). On the CPU device, which has no clock of
/// its own, the host clock: end of the previous run to the start of the next job's first
/// iteration.
///
/// Iteration times (RealJobStats): on CUDA the device's clock between the ends of consecutive
/// iterations of a run (for a run's first iteration, from a mark just before its first kernel):
/// what each iteration costs the lane when the next one is already queued. On the CPU the host
/// clock from the start of the iteration to its end. A job's first iteration is timed apart, on
/// the host, to the return of its loss.
#include <atomic>
#include <chrono>
#include <limits>
#include <condition_variable>
#include <cstdint>
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
  /// before the trace starts; more are made only if more lanes than this run at once
  /// (RealExecutor::workers_made_in_run counts them). real::contexts_before_trace sizes it.
  int workers = 1;
  /// Keep every iteration's time (RealJobStats::iteration_times_ns), for the profiler.
  bool record_iterations = false;
  /// Iterations of a run enqueued beyond the one its worker waits for, on a device that queues
  /// work (CUDA). 1: iteration i + 1 is enqueued before the worker waits for iteration i (no host
  /// round trip between iterations); 0: each iteration is waited for before the next is enqueued
  /// (the executor before issue 28, for comparison). The CPU device always runs with 0. >= 0.
  int lookahead = 1;
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
  /// Drops the lane's history (the previous run's end, for the switch latency).
  void lane_closed(core::LaneId lane) override;
  void start(const core::Dispatch& d) override;
  void stop_at_boundary(core::LaneId lane) override;
  void wait(core::TimeNs deadline, std::vector<core::Completion>& out) override;

  /// What the job did so far; waits for its admission when one is under way (the admission
  /// thread writes persistent_used and inference).
  const RealJobStats& stats(core::JobIndex job) const;
  /// Switch latencies: in a lane, end of one job's iteration to the start of the next job's
  /// first iteration (host clock at its first kernel launch), in ns, in the order they happened.
  std::vector<core::TimeNs> switch_latencies() const;
  /// Stop latencies: for every run asked to stop (stop_at_boundary while it ran), the time from
  /// the first request to the end of the run, in ns, in the order the runs ended.
  std::vector<core::TimeNs> stop_latencies() const;
  /// Worker threads (execution contexts) created, before the trace and during it.
  int workers() const;
  /// Of workers(), those made during the run (more lanes ran at once than RealOptions::workers):
  /// each was made on the loop thread, between a dispatch and its first iteration.
  int workers_made_in_run() const;
  /// Iterations enqueued ahead of the one a worker waits for: RealOptions::lookahead on a device
  /// that queues work, 0 on the CPU device.
  int lookahead() const { return lookahead_; }
  /// What switch_latencies() were measured with: "cuda_events" or "host_clock".
  const char* switch_latency_clock() const { return device_marks_ ? "cuda_events" : "host_clock"; }
  /// True once a run failed with a sticky device error.
  bool device_lost() const { return lost_.load(); }
  MemoryPool& pool() { return *pool_; }

 private:
  RealExecutor(Device& device, MemoryPool* pool, std::span<const core::JobSpec> jobs, RealOptions options);
  struct Worker;
  enum class Admission : std::uint8_t { kNone, kQueued, kDone };
  struct JobSlot {
    std::unique_ptr<Network> net;
    bool inference = false;
    std::string error;  // set when it cannot run (given back as a failed completion)
    bool lost = false;  // its initialisation met a sticky device error
    Admission admission = Admission::kNone;  // guarded by admit_mu_
  };
  /// What admit() was given, for the admission thread.
  struct PendingAdmission {
    core::JobIndex job = core::kNoJob;
    std::string id, workload;
    Bytes persistent = 0;
    Bytes offset = 0;
  };
  /// Runs a dispatch on worker w (its thread): waits for the job's admission, then a Run.
  void run_on(Worker& w, core::Dispatch d);
  /// One run's iterations, marks and outcome (real_executor.cpp).
  struct Run;
  /// Ends a dispatch that cannot run (the device lost, the job not initialised) as failed; false
  /// when it can run.
  bool refuse_run(Worker& w, const core::Dispatch& d);
  void worker_loop(Worker* w);
  /// A new idle worker with its execution context and thread; mu_ held by the caller.
  Worker* add_worker();
  void complete(const core::Completion& c);
  /// The admission thread: initialises queued jobs one at a time with admin_.
  void admission_loop();
  /// Builds the job's network, checks its persistent state and binds it at its block (admin_).
  void initialise(const PendingAdmission& a);
  /// Returns once the job's admission (if one was asked for) has finished.
  void wait_admitted(core::JobIndex job) const;
  /// Ends a run: the lane's history, the worker free again, the completion queued.
  void finish_run(Worker& w, const core::Dispatch& d, const core::Completion& c, std::shared_ptr<DeviceMark> end_mark,
                  bool ran);

  Device& device_;
  MemoryPool* pool_;
  std::unique_ptr<MemoryPool> owned_pool_;
  std::span<const core::JobSpec> jobs_;
  RealOptions options_;
  const std::chrono::steady_clock::time_point t0_;
  std::unique_ptr<Ops> admin_;                 // the admission thread's context: initialises persistent state
  FaultInjector* faults_ = nullptr;            // the device's injected faults (cpu-faults), else null
  bool device_marks_ = false;                  // the device has its own clock (CUDA events) and queues work
  int lookahead_ = 0;                          // RealOptions::lookahead where the device queues work, else 0
  std::atomic<bool> lost_{false};              // a sticky device error happened
  std::vector<JobSlot> slots_;                 // by job
  std::vector<RealJobStats> stats_;            // by job (written by the admission thread, then the worker running the job)

  mutable std::mutex admit_mu_;
  mutable std::condition_variable admit_cv_;
  std::deque<PendingAdmission> admissions_;
  bool admit_quit_ = false;
  std::thread admitter_;

  mutable std::mutex mu_;
  std::condition_variable done_cv_;
  std::deque<core::Completion> done_;
  std::vector<std::unique_ptr<Worker>> workers_;
  int workers_before_trace_ = 0;
  std::map<core::LaneId, Worker*> running_;    // lane -> worker running it now
  struct LaneHistory {
    core::JobIndex last_job = core::kNoJob;
    core::TimeNs last_end = 0;                   // host clock
    std::shared_ptr<DeviceMark> end_mark;        // after its last kernel (null on the CPU or after a failure)
  };
  std::map<core::LaneId, LaneHistory> history_;
  std::vector<core::TimeNs> switch_latencies_;
  std::vector<core::TimeNs> stop_latencies_;
};

}  // namespace salus::gpu
