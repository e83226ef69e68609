#include "gpu_backend/real_executor.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <optional>

#include "core/errors.h"
#include "gpu_backend/fault_injection.h"
#include "gpu_backend/run_pipeline.h"

namespace salus::gpu {

using core::TimeNs;

namespace {

/// format_size, with the exact bytes beside a rounded figure: two rounded figures can read equal.
std::string exact_size(Bytes b) {
  const std::string s = core::format_size(b);
  return s.ends_with(" B") ? s : s + " (" + std::to_string(b) + " B)";
}

}  // namespace

struct RealExecutor::Worker {
  std::unique_ptr<Ops> ops;
  std::thread thread;
  std::mutex m;
  std::condition_variable cv;
  bool has_work = false;
  bool quit = false;
  core::Dispatch work;
  std::atomic<bool> stop{false};
  bool busy = false;             // guarded by RealExecutor::mu_
  TimeNs stop_asked_ns = -1;     // first stop_at_boundary of the current run; guarded by mu_
};


RealExecutor::RealExecutor(Device& device, MemoryPool& pool, std::span<const core::JobSpec> jobs, RealOptions options)
    : RealExecutor(device, &pool, jobs, options) {}

RealExecutor::RealExecutor(Device& device, Bytes pool_capacity, std::span<const core::JobSpec> jobs,
                           RealOptions options)
    : RealExecutor(device, static_cast<MemoryPool*>(nullptr), jobs, options) {
  // The contexts exist now (the delegated constructor made them): reserve the pool last.
  owned_pool_ = std::make_unique<MemoryPool>(device, pool_capacity);
  pool_ = owned_pool_.get();
}

RealExecutor::RealExecutor(Device& device, MemoryPool* pool, std::span<const core::JobSpec> jobs, RealOptions options)
    : device_(device),
      pool_(pool),
      jobs_(jobs),
      options_(options),
      t0_(std::chrono::steady_clock::now()),
      admin_(device.create_ops()),
      faults_(device.faults()),
      slots_(jobs.size()),
      stats_(jobs.size()) {
  SALUS_INVARIANT(options_.lookahead >= 0 && options_.workers >= 0, "RealOptions: lookahead and workers >= 0",
                  "lookahead " + std::to_string(options_.lookahead) + ", workers " + std::to_string(options_.workers));
  // Contexts first: making a cuDNN handle loads its libraries and can take a while, which would
  // otherwise land in the first iteration of whichever job starts a lane first.
  device_marks_ = admin_->create_mark() != nullptr;
  // Only a device with its own clock queues work (CUDA); the CPU device runs each operation at
  // once on the calling thread, so enqueuing ahead would only run ahead.
  lookahead_ = device_marks_ ? options_.lookahead : 0;
  {
    std::lock_guard<std::mutex> lk(mu_);
    for (int i = 0; i < options_.workers; ++i) add_worker();
    workers_before_trace_ = static_cast<int>(workers_.size());
  }
  admitter_ = std::thread(&RealExecutor::admission_loop, this);
}

RealExecutor::Worker* RealExecutor::add_worker() {
  workers_.push_back(std::make_unique<Worker>());
  Worker* w = workers_.back().get();
  w->ops = device_.create_ops();
  w->thread = std::thread(&RealExecutor::worker_loop, this, w);
  return w;
}

RealExecutor::~RealExecutor() {
  {
    // Admissions not begun are given up; one under way finishes. A worker waiting for a given-up
    // admission then fails its run with the reason.
    std::lock_guard<std::mutex> lk(admit_mu_);
    admit_quit_ = true;
    for (const PendingAdmission& a : admissions_) {
      JobSlot& slot = slots_[static_cast<std::size_t>(a.job)];
      slot.error = "not initialised: the executor closed before its admission";
      slot.admission = Admission::kDone;
    }
    admissions_.clear();
  }
  admit_cv_.notify_all();
  admitter_.join();
  for (auto& w : workers_) {
    {
      std::lock_guard<std::mutex> lk(w->m);
      w->quit = true;
    }
    w->cv.notify_all();
  }
  for (auto& w : workers_) w->thread.join();
}

TimeNs RealExecutor::now() const {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0_).count();
}

void RealExecutor::admit(core::JobIndex job, const core::JobSpec& spec, Bytes persistent_offset) {
  SALUS_INVARIANT(persistent_offset % kAlignment == 0, "a persistent block starts on a 256-byte boundary",
                  "job " + spec.id + " at offset " + std::to_string(persistent_offset));
  {
    std::lock_guard<std::mutex> lk(admit_mu_);
    JobSlot& slot = slots_[static_cast<std::size_t>(job)];
    SALUS_INVARIANT(slot.admission != Admission::kQueued, "a job is admitted once at a time", "job " + spec.id);
    slot.admission = Admission::kQueued;
    admissions_.push_back(PendingAdmission{job, spec.id, spec.workload, spec.persistent, persistent_offset});
  }
  admit_cv_.notify_all();
}

void RealExecutor::admission_loop() {
  for (;;) {
    PendingAdmission a;
    {
      std::unique_lock<std::mutex> lk(admit_mu_);
      admit_cv_.wait(lk, [&] { return admit_quit_ || !admissions_.empty(); });
      if (admit_quit_) return;
      a = std::move(admissions_.front());
      admissions_.pop_front();
    }
    initialise(a);
    {
      std::lock_guard<std::mutex> lk(admit_mu_);
      slots_[static_cast<std::size_t>(a.job)].admission = Admission::kDone;
    }
    admit_cv_.notify_all();
  }
}

void RealExecutor::initialise(const PendingAdmission& a) {
  JobSlot& slot = slots_[static_cast<std::size_t>(a.job)];
  RealJobStats& st = stats_[static_cast<std::size_t>(a.job)];
  slot.error.clear();
  slot.lost = false;
  const std::optional<RealWorkload> w = parse_real_workload(a.workload);
  if (!w) {
    slot.error = "no real model for workload '" + a.workload + "'";
    return;
  }
  slot.inference = w->inference;
  st.inference = w->inference;
  try {
    slot.net = build_model(w->model);
    const Bytes need = slot.net->persistent_bytes();
    st.persistent_used = need;
    // The loop gave it a block of P rounded up to whole 256-byte units (SchedulerOptions::alignment).
    if (need > align_up(a.persistent)) {
      slot.error = "its persistent state needs " + exact_size(need) + " but the trace declares P = " +
                   exact_size(a.persistent);
      slot.net.reset();
      return;
    }
    // Injected faults (cpu-faults): the block the layout gave the job counts as its allocation.
    if (faults_ != nullptr) faults_->before_allocation(a.job, a.id, -1, 0, align_up(a.persistent));
    // bind() ends with a synchronisation of admin_: when it returns, the block is initialised.
    slot.net->bind(*admin_, pool_->base() + a.offset, options_.seed * 1'000'003 + static_cast<std::uint64_t>(a.job));
  } catch (const DeviceError& e) {
    slot.error = std::string("initialisation failed: ") + e.what();
    slot.lost = e.device_lost();
    slot.net.reset();
  } catch (const std::exception& e) {
    slot.error = std::string("initialisation failed: ") + e.what();
    slot.net.reset();
  }
}

void RealExecutor::wait_admitted(core::JobIndex job) const {
  std::unique_lock<std::mutex> lk(admit_mu_);
  admit_cv_.wait(lk, [&] { return slots_[static_cast<std::size_t>(job)].admission != Admission::kQueued; });
}

const RealJobStats& RealExecutor::stats(core::JobIndex job) const {
  wait_admitted(job);
  return stats_[static_cast<std::size_t>(job)];
}

void RealExecutor::release(core::JobIndex job) {
  // A job is released after its last run, which waited for its admission: this waits only for a
  // job that was admitted and never ran.
  wait_admitted(job);
  slots_[static_cast<std::size_t>(job)].net.reset();
}

void RealExecutor::lane_closed(core::LaneId lane) {
  std::lock_guard<std::mutex> lk(mu_);
  history_.erase(lane);
}

void RealExecutor::start(const core::Dispatch& d) {
  if (lost_.load()) {
    const TimeNs t = now();
    complete(core::Completion{d.job, d.lane, 0, t, t, true, "the device was lost earlier in the run", true});
    return;
  }
  SALUS_INVARIANT(d.lane_offset % kAlignment == 0 && d.lane_size % kAlignment == 0,
                  "a lane starts on a 256-byte boundary and holds whole 256-byte units",
                  "lane " + std::to_string(d.lane) + " at offset " + std::to_string(d.lane_offset) + ", size " +
                      std::to_string(d.lane_size));
  Worker* w = nullptr;
  {
    std::lock_guard<std::mutex> lk(mu_);
    SALUS_INVARIANT(running_.count(d.lane) == 0, "one run per lane", "lane " + std::to_string(d.lane));
    for (auto& cand : workers_) {
      if (!cand->busy) {
        w = cand.get();
        break;
      }
    }
    if (w == nullptr) w = add_worker();
    w->busy = true;
    w->stop_asked_ns = -1;
    running_[d.lane] = w;
  }
  {
    std::lock_guard<std::mutex> lk(w->m);
    w->work = d;
    w->stop = false;
    w->has_work = true;
  }
  w->cv.notify_all();
}

void RealExecutor::stop_at_boundary(core::LaneId lane) {
  std::lock_guard<std::mutex> lk(mu_);
  auto it = running_.find(lane);
  if (it == running_.end()) return;
  if (it->second->stop_asked_ns < 0) it->second->stop_asked_ns = now();
  it->second->stop = true;
}

void RealExecutor::wait(TimeNs deadline, std::vector<core::Completion>& out) {
  // Wake at least every 100 ms so the loop can see its stop flag (Ctrl-C).
  const TimeNs until = std::min(deadline, now() + 100 * core::kNsPerMs);
  std::unique_lock<std::mutex> lk(mu_);
  // The contract (core/executor.h): kNever only while a run is in flight, or a completion is due.
  SALUS_INVARIANT(deadline != core::kNever || !running_.empty() || !done_.empty(),
                  "wait(kNever) with a run in flight", "nothing runs and nothing is due");
  done_cv_.wait_until(lk, t0_ + std::chrono::nanoseconds(until), [&] { return !done_.empty(); });
  while (!done_.empty()) {
    out.push_back(std::move(done_.front()));
    done_.pop_front();
  }
}

void RealExecutor::complete(const core::Completion& c) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    done_.push_back(c);
  }
  done_cv_.notify_all();
}

std::vector<TimeNs> RealExecutor::switch_latencies() const {
  std::lock_guard<std::mutex> lk(mu_);
  return switch_latencies_;
}

std::vector<TimeNs> RealExecutor::stop_latencies() const {
  std::lock_guard<std::mutex> lk(mu_);
  return stop_latencies_;
}

int RealExecutor::workers() const {
  std::lock_guard<std::mutex> lk(mu_);
  return static_cast<int>(workers_.size());
}

int RealExecutor::workers_made_in_run() const {
  std::lock_guard<std::mutex> lk(mu_);
  return static_cast<int>(workers_.size()) - workers_before_trace_;
}

void RealExecutor::worker_loop(Worker* w) {
  for (;;) {
    core::Dispatch d;
    {
      std::unique_lock<std::mutex> lk(w->m);
      w->cv.wait(lk, [&] { return w->has_work || w->quit; });
      if (w->quit) return;
      d = w->work;
      w->has_work = false;
    }
    run_on(*w, d);
  }
}

void RealExecutor::finish_run(Worker& w, const core::Dispatch& d, const core::Completion& c,
                              std::shared_ptr<DeviceMark> end_mark, bool ran) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (ran) history_[d.lane] = LaneHistory{d.job, c.end_ns, c.failed ? nullptr : std::move(end_mark)};
    if (w.stop_asked_ns >= 0 && !c.failed) stop_latencies_.push_back(c.end_ns - w.stop_asked_ns);
    w.busy = false;
    running_.erase(d.lane);
    done_.push_back(c);
  }
  done_cv_.notify_all();
}

// One run of a job on a worker, from its first enqueued iteration to its completion. Iterations
// [done, committed) are enqueued and not yet waited for; at most 1 + lookahead_.
struct RealExecutor::Run {
  Run(RealExecutor& ex, Worker& w, const core::Dispatch& d);
  /// Enqueues the run's iteration k, and waits for it when it is the job's first or last.
  void commit(std::int64_t k);
  /// Waits for iteration k's loss (or, inferring, its end) when the job's first or last.
  void read_back(std::int64_t k, TimeNs enqueued);
  /// Waits for iteration k and records its time.
  void retire(std::int64_t k);
  /// Enqueues and waits for the dispatched iterations, or fewer (a stop, a lost device); a failure
  /// sets failed, error and lost.
  void iterate();
  /// After a failure: waits for the lane's queued kernels and counts the iterations that ran.
  void drain_after_failure();
  /// The mark after the run's last iteration (null without one).
  std::shared_ptr<DeviceMark> end_mark() const;

  RealExecutor& ex;
  Worker& w;
  const core::Dispatch d;
  JobSlot& slot;
  RealJobStats& st;
  const std::int64_t total;   // the job's iterations
  const std::int64_t before;  // the job's iterations before this run
  LaneHistory prev;           // the lane's previous run
  bool switching = false;     // the lane last ran another job
  TimeNs start = 0;
  std::int64_t committed = 0, done = 0;
  bool failed = false, lost = false, in_commit = false;
  std::string error;
  // Device clock (CUDA events): a mark after each iteration's kernels, in a ring large enough
  // that the mark before the iteration waited for is not re-recorded by those enqueued since, and
  // one before the run's first kernel (a switch is timed from the previous job's end mark to it).
  std::size_t ring;
  std::vector<std::shared_ptr<DeviceMark>> ends;
  std::shared_ptr<DeviceMark> begin;
  std::vector<TimeNs> enqueued_ns;  // host clock at each iteration's start (CPU timing)
};

RealExecutor::Run::Run(RealExecutor& ex, Worker& w, const core::Dispatch& d)
    : ex(ex),
      w(w),
      d(d),
      slot(ex.slots_[static_cast<std::size_t>(d.job)]),
      st(ex.stats_[static_cast<std::size_t>(d.job)]),
      total(ex.jobs_[static_cast<std::size_t>(d.job)].iterations),
      before(st.iterations),
      ring(static_cast<std::size_t>(ex.lookahead_) + 2),
      enqueued_ns(ring, 0) {
  {
    std::lock_guard<std::mutex> lk(ex.mu_);
    prev = ex.history_[d.lane];
  }
  switching = prev.last_job != core::kNoJob && prev.last_job != d.job;
  start = ex.now();
}

void RealExecutor::Run::commit(std::int64_t k) {
  Arena lane = ex.pool_->region(d.lane_offset, d.lane_size);
  const std::string& id = ex.jobs_[static_cast<std::size_t>(d.job)].id;
  std::optional<IterationAllocations> gate;
  if (ex.faults_ != nullptr) lane.set_gate(&gate.emplace(*ex.faults_, d.job, id, before + k));
  const TimeNs t = ex.now();
  enqueued_ns[pipeline::ring_slot(k, ring)] = t;
  if (k == 0 && switching && !ex.device_marks_) {
    std::lock_guard<std::mutex> lk(ex.mu_);
    ex.switch_latencies_.push_back(t - prev.last_end);
  }
  if (k == 0 && begin) w.ops->record_mark(*begin);
  if (slot.inference) {
    slot.net->infer_step(*w.ops, lane);
  } else {
    slot.net->train_step(*w.ops, lane, ex.options_.train, false);
  }
  // The iteration ran; an injected fault reports it failed, or the device lost, as a kernel's
  // error would surface at the end of its iteration.
  if (ex.faults_ != nullptr) ex.faults_->after_iteration(d.job, id, before + k);
  if (ex.device_marks_) w.ops->record_mark(*ends[pipeline::ring_slot(k, ring)]);
  st.ephemeral_peak = std::max(st.ephemeral_peak, lane.peak());
  read_back(k, t);
}

void RealExecutor::Run::read_back(std::int64_t k, TimeNs enqueued) {
  const pipeline::Readback rb = pipeline::readback(before, k, total, slot.inference);
  if (!rb.wait) return;
  float loss = std::numeric_limits<float>::quiet_NaN();
  if (slot.inference) {
    w.ops->synchronize();
  } else {
    loss = slot.net->read_loss(*w.ops);
  }
  if (rb.first) {
    st.first_iteration_ns = ex.now() - enqueued;
    st.loss_first = loss;
  }
  if (rb.last) st.loss_last = loss;
}

void RealExecutor::Run::retire(std::int64_t k) {
  TimeNs took = 0;
  if (ex.device_marks_) {
    const DeviceMark& from = k == 0 ? *begin : *ends[pipeline::ring_slot(k - 1, ring)];
    took = w.ops->mark_elapsed_ns(from, *ends[pipeline::ring_slot(k, ring)]);  // waits for iteration k
  } else {
    w.ops->synchronize();
    took = ex.now() - enqueued_ns[pipeline::ring_slot(k, ring)];
  }
  if (before + k > 0) {
    st.iteration_ns_total += took;
    if (ex.options_.record_iterations) st.iteration_times_ns.push_back(took);
  }
  ++st.iterations;
  ++done;
  if (k == 0 && switching && begin && prev.end_mark) {
    const TimeNs gap = w.ops->mark_elapsed_ns(*prev.end_mark, *begin);
    std::lock_guard<std::mutex> lk(ex.mu_);
    ex.switch_latencies_.push_back(gap);
  }
}

void RealExecutor::Run::iterate() {
  try {
    if (ex.device_marks_) {
      for (std::size_t k = 0; k < ring; ++k) ends.push_back(w.ops->create_mark());
      begin = w.ops->create_mark();
    }
    for (std::int64_t i = 0; i < d.iterations; ++i) {
      while (pipeline::may_enqueue(committed, i, d.iterations, ex.lookahead_, w.stop.load() || ex.lost_.load())) {
        in_commit = true;
        commit(committed);
        in_commit = false;
        ++committed;
      }
      if (i >= committed) break;
      retire(i);
    }
  } catch (const ArenaOverflow& e) {
    failed = true;
    error = std::string(e.what()) + " (its lane)";
  } catch (const DeviceError& e) {
    failed = true;
    lost = e.device_lost();
    error = e.what();
  } catch (const std::exception& e) {
    failed = true;
    error = e.what();
  }
}

void RealExecutor::Run::drain_after_failure() {
  // Kernels of the failed iteration may still be queued on this lane's stream: wait for them
  // before the scheduler hands the lane or the job's persistent block to anyone else. A sticky
  // error (the context is lost) shows here too, whatever failed first.
  try {
    w.ops->synchronize();
    // The failure came while enqueuing an iteration and the device finished everything: the
    // whole iterations enqueued before it and not yet waited for did run.
    if (in_commit) {
      while (done < committed) retire(done);
    }
  } catch (const DeviceError& e) {
    lost = lost || e.device_lost();
    error += std::string("; then, waiting for its lane: ") + e.what();
  } catch (const std::exception& e) {
    error += std::string("; then, waiting for its lane: ") + e.what();
  }
}

std::shared_ptr<DeviceMark> RealExecutor::Run::end_mark() const {
  return done > 0 && !ends.empty() ? ends[pipeline::ring_slot(done - 1, ring)] : nullptr;
}

bool RealExecutor::refuse_run(Worker& w, const core::Dispatch& d) {
  const JobSlot& slot = slots_[static_cast<std::size_t>(d.job)];
  if (slot.lost) lost_.store(true);
  if (!lost_.load() && slot.net) return false;
  const TimeNs t = now();
  const bool fatal = lost_.load();
  const std::string why = slot.net ? "the device was lost earlier in the run"
                                   : (slot.error.empty() ? "not initialised" : slot.error);
  finish_run(w, d, core::Completion{d.job, d.lane, 0, t, t, true, why, fatal}, nullptr, false);
  return true;
}

void RealExecutor::run_on(Worker& w, core::Dispatch d) {
  // The admission's kernels have all finished (it synchronised its context) before this run
  // enqueues anything: the job's first dispatch is ordered after its admission.
  wait_admitted(d.job);
  if (refuse_run(w, d)) return;
  Run run(*this, w, d);
  run.iterate();
  if (run.failed) run.drain_after_failure();
  if (run.lost) lost_.store(true);
  const TimeNs end = now();
  finish_run(w, d, core::Completion{d.job, d.lane, run.done, run.start, end, run.failed, run.error, run.lost},
             run.end_mark(), true);
}

}  // namespace salus::gpu
