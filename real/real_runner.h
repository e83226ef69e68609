#pragma once
/// The real executor as a PolicyRunner: one device, one memory pool per run, the jobs' iterations
/// trained for real under the same loop and policies as the simulator. Used by salus-run and by
/// salus-experiment --executor real.
#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/job.h"
#include "core/policy.h"
#include "core/scheduler.h"
#include "run/run.h"
#include "gpu_backend/device.h"
#include "gpu_backend/real_executor.h"

namespace salus::real {

struct RealRunConfig {
  std::string device = "cpu";          ///< a name from gpu::device_registry()
  gpu::MathMode math = gpu::MathMode::kFp32;  ///< arithmetic of convolutions and GEMMs (--math)
  gpu::FaultRates faults;              ///< what the cpu-faults device injects (--inject-faults)
  core::Bytes capacity = 16 * core::kGiB;  ///< the pool (rounded down to whole 256-byte units)
  std::optional<core::LaneMode> lanes; ///< nullopt: each policy's default
  /// P and E of every job from its model on this device (as salus-profile measures them) instead
  /// of what the trace or catalog declares.
  bool memory_from_model = false;
  /// One iteration of every workload before the trace (kernels loaded, plans made).
  bool warmup = true;
  gpu::RealOptions options;
  /// When set (a SIGINT handler), a run stops at the next boundaries (core::SchedulerOptions::stop).
  const std::atomic<bool>* stop = nullptr;
  /// A progress line on stderr at most once a second.
  bool progress = true;
};

class RealRunner final : public run::PolicyRunner {
 public:
  /// Makes the device; throws core::InputError for an unknown or unavailable one.
  explicit RealRunner(RealRunConfig cfg);

  std::string_view executor() const override { return "real"; }
  /// Throws core::InputError "job ID: workload 'x' has no real model (valid: ...)" for the first
  /// job whose workload the real backend does not implement; given the trace's path, the message
  /// starts "TRACE:LINE: " (TRACE: where the row is not found again, a JSON trace).
  static void check_workloads(const std::vector<core::JobSpec>& jobs, const std::string& trace_path = "");
  /// Checks that every job's workload has a model (core::InputError naming the job otherwise),
  /// sizes each workload's network once, takes P and E from the models with memory_from_model,
  /// rounds P and E up to 256 bytes, and warms the device up.
  std::vector<std::string> prepare(std::vector<core::JobSpec>& jobs) override;
  /// One run in a fresh pool, reserved after the execution contexts (contexts_before_trace of
  /// them); `measured` holds the workers (workers_made_in_run: those made during the trace because
  /// more lanes ran at once), the switch latencies (and their clock), the stop latencies (a stop
  /// asked of a running lane to the end of its run), the device memory held outside the pool
  /// (outside_pool_bytes, outside_pool_growth_bytes: null on the CPU), a fatal error that ended the
  /// run (the device was lost; null otherwise), the faults injected during the run
  /// (injected_faults: alloc, iter, lost; null on a device that injects none) and per job the losses, iteration times and memory.
  run::PolicyRun run(const std::vector<core::JobSpec>& jobs, const std::string& policy,
                             bool record_timeline) override;
  nlohmann::json config() const override;

  const gpu::Device& device() const { return *device_; }
  /// The pool's size: the configured capacity in whole 256-byte units.
  core::Bytes capacity() const;

 private:
  RealRunConfig cfg_;
  std::unique_ptr<gpu::Device> device_;
  /// Device memory in use once the context existed, before any handle, module or pool (nullopt on
  /// the CPU): the baseline of outside_pool_growth_bytes.
  std::optional<core::Bytes> used_at_start_;
};

/// The hard cap on execution contexts made for one run: 32, the most hardware work queues a CUDA
/// device feeds streams from (CUDA_DEVICE_MAX_CONNECTIONS, 8 by default, at most 32). Past it,
/// streams share queues and more lanes cannot run more kernels at once, while each context still
/// holds device memory outside the pool (its cuDNN and cuBLAS handles) and a host thread.
inline constexpr int kMaxContexts = 32;

/// How many execution contexts (worker threads with a stream and cuDNN/cuBLAS handles) a run of
/// `jobs` under `opts` makes before the trace starts: the most lanes that can run at once. One in
/// the exclusive and single-lane modes. With auto lanes, the most lanes Algorithm 1 can hold open
/// at once: each open lane holds at least one admitted job, whose P is resident and whose E the
/// lane's size L_j covers, and the safety condition sum P + sum L <= C holds at every instant, so
/// k lanes need k distinct jobs whose P + E (each rounded up to opts.alignment) sum to at most C
/// (rounded down): k is at most the count of the smallest such sums that fit. Capped by
/// opts.max_lanes (when set) and kMaxContexts. Jobs that do not fit alone are left out (rejected).
int contexts_before_trace(std::span<const core::JobSpec> jobs, const core::SchedulerOptions& opts);

/// p50, p99 and max (ms) and the count of a list of latencies.
nlohmann::json latency_json(std::vector<core::TimeNs> v);

}  // namespace salus::real
