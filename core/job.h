#pragma once
/// A job as the scheduler sees it: what the trace says (JobSpec) and how far it got (JobState).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/small_string.h"
#include "core/units.h"

namespace salus::core {

/// Index of a job in the run's job vector (the trace order).
using JobIndex = std::int32_t;
/// Identifier of a GPU lane; lanes get increasing ids in the order they are opened.
using LaneId = std::int32_t;
inline constexpr JobIndex kNoJob = -1;
/// A lane's last job once that job has finished: unlike every job, so the lane's next run is a
/// switch as it would be after the finished job, and a driver that gives a finished job's index
/// to a new job (cluster/: replica slots are reused) cannot have the newcomer taken for it.
inline constexpr JobIndex kEndedJob = -2;
inline constexpr LaneId kNoLane = -1;

/// A job's relative speed on one GPU kind, where the trace knows it for that job (Gavel's
/// throughputs per worker type): an iteration of iter_ns takes iter_ns * 1e6 / speed_ppm there.
struct KindSpeed {
  std::string kind;             ///< a GPU kind's name as a cluster names it (cluster/README.md)
  /// Relative speed, parts per million (1'000'000: iter_ns); 0: the job cannot run on that kind
  /// (Gavel's throughput 0), which run::load_jobs turns into gpu_kinds without it. A cluster
  /// takes only positive speeds.
  std::int64_t speed_ppm = 0;
  bool operator==(const KindSpeed&) const = default;
};

/// A value of T kept out of line: one pointer where most jobs hold nothing, allocated when first
/// written. Reads of an unwritten one see T{}. Copies are deep, so it behaves as a T member.
/// (3.36 M jobs of a Helios-scale trace pay 8 bytes each for what only a few traces fill in.)
template <class T>
class OutOfLine {
 public:
  OutOfLine() = default;
  OutOfLine(const OutOfLine& o) : p_(o.p_ ? std::make_unique<T>(*o.p_) : nullptr) {}
  OutOfLine(OutOfLine&&) noexcept = default;
  OutOfLine& operator=(const OutOfLine& o) {
    if (this != &o) p_ = o.p_ ? std::make_unique<T>(*o.p_) : nullptr;
    return *this;
  }
  OutOfLine& operator=(OutOfLine&&) noexcept = default;
  ~OutOfLine() = default;
  const T& get() const { return p_ ? *p_ : empty(); }
  /// The value, allocated (as T{}) if it has none yet.
  T& edit() {
    if (!p_) p_ = std::make_unique<T>();
    return *p_;
  }

 private:
  static const T& empty() {
    static const T kEmpty{};
    return kEmpty;
  }
  std::unique_ptr<T> p_;
};

/// One training job of a trace, in core units.
struct JobSpec {
  SmallString id;                 ///< the trace's job_id
  SmallString workload;           ///< catalog name, or "" for explicit figures
  TimeNs arrival_ns = 0;          ///< submission time
  std::int64_t iterations = 1;    ///< iterations to run, > 0
  Bytes persistent = 0;           ///< P: model + framework-internal memory, resident while admitted
  Bytes ephemeral = 0;            ///< E: per-iteration memory, released at every iteration boundary
  TimeNs iter_ns = 1;             ///< profiled solo iteration time, > 0
  /// What the job's first iteration takes beyond iter_ns (a catalog's first_iter_ms - iter_ms,
  /// measured by salus-profile; 0 where the catalog has none). Added to the first dispatch.
  TimeNs first_iter_extra_ns = 0;
  /// What the job's first iteration after another job's in its lane takes beyond iter_ns (a
  /// catalog entry's switch_ms, measured by salus-profile); -1: the run's switching cost.
  TimeNs switch_ns = -1;
  std::int32_t gpu_util_ppm = 1'000'000;  ///< profiled GPU utilisation u in (0, 1], parts per million
  std::int32_t trace_order = 0;   ///< position in the trace file (tie-breaker)
  /// The trace's optional `priority` column (higher first; 0 when absent). Read by the
  /// `priority` policy only.
  std::int32_t priority = 0;
  /// GPUs the job runs on at once (a trace's num_gpu; 1 when absent): a multi-GPU job runs a
  /// replica on each, gang-scheduled by a cluster.
  std::int32_t gpus = 1;

  /// GPU kinds the job may run on, '|'-separated kind names as a cluster names them (Alibaba
  /// v2023's gpu_spec, e.g. "V100M16|V100M32"); empty: any GPU. Read by a cluster whose GPUs
  /// have named kinds (cluster/README.md, "Cluster file"); ignored by a cluster with none.
  const std::string& gpu_kinds() const { return rare_.get().gpu_kinds; }
  void set_gpu_kinds(std::string kinds) { rare_.edit().gpu_kinds = std::move(kinds); }
  /// The job's own speed on GPU kinds, where the trace measured it (Gavel: its steps per second
  /// on each worker type relative to the one iter_ns came from); on a GPU of a kind listed here
  /// it runs at this speed instead of the kind's. Empty: the kind's speed everywhere. Read by a
  /// cluster whose GPUs have named kinds; ignored elsewhere.
  const std::vector<KindSpeed>& kind_speeds() const { return rare_.get().kind_speeds; }
  void set_kind_speeds(std::vector<KindSpeed> speeds) { rare_.edit().kind_speeds = std::move(speeds); }
  /// An inference job: requests_ns[i] is when request i arrives; iteration i serves it and may
  /// not start earlier. Non-decreasing, one per iteration, none before arrival_ns. Empty: a
  /// training job, whose iterations are all ready once it is admitted.
  const std::vector<TimeNs>& requests_ns() const { return rare_.get().requests_ns; }
  void set_requests_ns(std::vector<TimeNs> requests) { rare_.edit().requests_ns = std::move(requests); }

  /// Solo time of the whole job.
  TimeNs solo_ns() const { return iterations * iter_ns; }

 private:
  /// What few traces give, out of line (OutOfLine).
  struct Rare {
    std::string gpu_kinds;
    std::vector<KindSpeed> kind_speeds;
    std::vector<TimeNs> requests_ns;
  };
  OutOfLine<Rare> rare_;
};

enum class JobStatus : std::uint8_t {
  kNotArrived,
  kPending,   ///< arrived, waiting for admission (Algorithm 1's queue Q)
  kAdmitted,  ///< persistent memory resident, assigned to a lane
  kDone,
  kRejected,  ///< P + E exceeds the capacity: can never run
  kFailed,    ///< stopped by the executor (e.g. a kernel failed); see JobState::reason
  kInterrupted,  ///< the run was stopped (SchedulerOptions::stop) before the job finished
};
const char* to_string(JobStatus s);

/// Progress of one job during a run. Owned by the scheduling loop; policies read it.
struct JobState {
  JobStatus status = JobStatus::kNotArrived;
  bool running = false;               ///< an iteration of it is in flight
  bool paged_out = false;             ///< admitted, its persistent memory in host memory (paging)
  LaneId lane = kNoLane;
  std::int64_t iterations_done = 0;
  std::int32_t submit_rank = -1;      ///< position in arrival order (ties: trace order), set at arrival
  std::int32_t admit_seq = -1;        ///< order of admission (0, 1, ...)
  TimeNs admitted_ns = -1;
  Bytes persistent_offset = -1;       ///< where its persistent block starts in the memory layout
  TimeNs first_start_ns = -1;         ///< start of its first iteration
  TimeNs finish_ns = -1;
  TimeNs gpu_time_ns = 0;             ///< wall time its iterations occupied a lane

  /// Why it was rejected or failed ("" otherwise).
  const std::string& reason() const { return rare_.get().reason; }
  void set_reason(std::string why) { rare_.edit().reason = std::move(why); }
  /// Inference jobs (JobSpec::requests_ns): end of each served request minus its arrival, in
  /// request order. Empty for training jobs.
  const std::vector<TimeNs>& request_latency_ns() const { return rare_.get().request_latency_ns; }
  void add_request_latency(TimeNs latency) { rare_.edit().request_latency_ns.push_back(latency); }

  std::int64_t remaining_iterations(const JobSpec& spec) const { return spec.iterations - iterations_done; }
  /// Iterations that may start at `now`: all remaining ones for a training job; for an inference
  /// job, the requests that have arrived and are not yet served.
  std::int64_t ready_iterations(const JobSpec& spec, TimeNs now) const;
  /// Remaining solo time as the trace gives it: the remaining iterations x iter_ns, and, until the
  /// first iteration has ended, its extra (JobSpec::first_iter_extra_ns: a catalog's first-
  /// iteration cost, or the remainder of a trace's duration that is no whole number of
  /// iterations). Before the job runs it is its whole solo time, JobSpec::solo_ns() + the extra:
  /// SRTF's key everywhere (one GPU and clusters), so that two jobs of equal solo time tie.
  TimeNs remaining_solo_ns(const JobSpec& spec) const {
    return remaining_iterations(spec) * spec.iter_ns + (iterations_done == 0 ? spec.first_iter_extra_ns : 0);
  }

 private:
  /// What only rejected, failed and inference jobs have, out of line (OutOfLine).
  struct Rare {
    std::string reason;
    std::vector<TimeNs> request_latency_ns;
  };
  OutOfLine<Rare> rare_;
};

/// True when a was submitted before b: earlier arrival, then earlier in the trace.
inline bool arrives_before(const JobSpec& a, const JobSpec& b) {
  if (a.arrival_ns != b.arrival_ns) return a.arrival_ns < b.arrival_ns;
  return a.trace_order < b.trace_order;
}

}  // namespace salus::core
