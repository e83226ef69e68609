#pragma once
/// Injected faults: the `cpu-faults` device (the CPU device wrapped so that, seeded and at random
/// points, it refuses allocations, fails iterations and loses the device) and the injector that
/// decides where. Reached from the command line with `--device cpu-faults --inject-faults
/// alloc=0.01,iter=0.02,lost=0.001,seed=7`; docs/real-backend.md gives the semantics.
///
/// Where faults happen (each an "operation" the rates are per):
///   alloc: each allocation a job makes from the pool: its persistent block when it is admitted
///          (the admission fails: the job fails at its first dispatch) and each buffer one of its
///          iterations takes from its lane's arena (the iteration fails: the job fails);
///   iter:  each iteration of a job, after its kernels ran: it reports an error (the job fails);
///   lost:  each iteration of a job, after its kernels ran: the device is lost, sticky: that
///          iteration and everything after it fails (every iteration, allocation, synchronisation
///          and pool reservation), and the run ends (core::Completion::fatal).
///
/// Determinism: every decision is a pure function of (seed, kind, job index, the job's own
/// iteration number, the allocation's number within that iteration), never of a shared counter or
/// of time. So the same seed marks the same points of each job as faulty whatever the thread
/// scheduling; which of them a run reaches can still depend on it: once the device is lost, how
/// far the other lanes had got is a matter of timing, and the loop's decisions follow real
/// iteration times.
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

#include "core/job.h"
#include "core/units.h"
#include "gpu_backend/device.h"
#include "gpu_backend/memory_pool.h"

namespace salus::gpu {

/// "alloc=0.01,iter=0.02,lost=0.001,seed=7": any of the keys, each at most once, in any order;
/// rates are numbers in [0, 1], the seed an unsigned 64-bit integer (default `default_seed`, the
/// run's --seed). Throws core::InputError "--inject-faults: ..." naming the item and, for an
/// unknown key, the valid keys.
FaultRates parse_fault_rates(const std::string& text, std::uint64_t default_seed);
/// "alloc=0.01,iter=0.02,lost=0.001,seed=7" (every key; parse_fault_rates reads it back).
std::string to_string(const FaultRates& r);

/// Faults injected so far, by kind (lost is 0 or 1).
struct FaultCounts {
  std::int64_t alloc = 0, iter = 0, lost = 0;
};

/// An injected allocation failure: the pool (a lane's arena, or the persistent block) refused.
class AllocationRefused : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Decides where faults happen (see the file comment). Thread-safe: the worker threads and the
/// admission thread ask it at once.
class FaultInjector {
 public:
  explicit FaultInjector(FaultRates rates) : rates_(rates) {}
  /// After iteration `iteration` (the job's own count, from 0) of job `job` (`id` names it in
  /// messages) has run: throws DeviceError with device_lost() when the device is lost now or was
  /// before, DeviceError when the iteration reports an error.
  void after_iteration(core::JobIndex job, const std::string& id, std::int64_t iteration);
  /// Allocation `n` (from 0) of `bytes` by the job's iteration `iteration`, or with iteration -1
  /// its persistent block at admission: throws AllocationRefused when refused, DeviceError with
  /// device_lost() when the device was lost.
  void before_allocation(core::JobIndex job, const std::string& id, std::int64_t iteration, std::int64_t n,
                         Bytes bytes);
  /// Throws DeviceError with device_lost() when the device was lost (every later operation).
  void check_lost(const char* operation) const;
  bool lost() const { return lost_.load(); }
  FaultCounts counts() const { return {alloc_.load(), iter_.load(), lost_.load() ? 1 : 0}; }
  const FaultRates& rates() const { return rates_; }

 private:
  [[noreturn]] void throw_lost(const std::string& operation) const;

  const FaultRates rates_;
  std::atomic<std::int64_t> alloc_{0}, iter_{0};
  std::atomic<bool> lost_{false};
  mutable std::mutex mu_;
  std::string lost_at_;  // where the device was lost, for later errors; guarded by mu_
};

/// The gate a lane's arena asks before each allocation of one iteration: numbers the allocations
/// and asks the injector.
class IterationAllocations final : public AllocationGate {
 public:
  /// Keeps a reference to `id` (the job's, which outlives the iteration): a temporary would dangle
  /// (ASan's stack-use-after-scope in the test that passed "a"), so none binds.
  IterationAllocations(FaultInjector& faults, core::JobIndex job, const std::string& id, std::int64_t iteration)
      : faults_(faults), job_(job), id_(id), iteration_(iteration) {}
  IterationAllocations(FaultInjector&, core::JobIndex, std::string&&, std::int64_t) = delete;
  void before_allocation(Bytes bytes) override { faults_.before_allocation(job_, id_, iteration_, next_++, bytes); }

 private:
  FaultInjector& faults_;
  core::JobIndex job_;
  const std::string& id_;
  std::int64_t iteration_;
  std::int64_t next_ = 0;
};

/// The CPU device with faults injected at `rates` (the registry's `cpu-faults`). Its name says so:
/// "cpu-faults (alloc=...,iter=...,lost=...,seed=...)".
std::unique_ptr<Device> make_cpu_faults_device(FaultRates rates);

}  // namespace salus::gpu
