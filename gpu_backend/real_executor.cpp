#include "gpu_backend/real_executor.h"

#include <algorithm>
#include <chrono>

#include "core/errors.h"

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
  bool busy = false;  // guarded by RealExecutor::mu_
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
      slots_(jobs.size()),
      stats_(jobs.size()) {
  // Contexts first: making a cuDNN handle loads its libraries and can take a while, which would
  // otherwise land in the first iteration of whichever job starts a lane first.
  device_marks_ = admin_->create_mark() != nullptr;
  std::lock_guard<std::mutex> lk(mu_);
  for (int i = 0; i < options_.workers; ++i) add_worker();
}

RealExecutor::Worker* RealExecutor::add_worker() {
  workers_.push_back(std::make_unique<Worker>());
  Worker* w = workers_.back().get();
  w->ops = device_.create_ops();
  w->thread = std::thread(&RealExecutor::worker_loop, this, w);
  return w;
}

RealExecutor::~RealExecutor() {
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
  JobSlot& slot = slots_[static_cast<std::size_t>(job)];
  RealJobStats& st = stats_[static_cast<std::size_t>(job)];
  const std::optional<RealWorkload> w = parse_real_workload(spec.workload);
  if (!w) {
    slot.error = "no real model for workload '" + spec.workload + "'";
    return;
  }
  slot.inference = w->inference;
  st.inference = w->inference;
  SALUS_INVARIANT(persistent_offset % kAlignment == 0, "a persistent block starts on a 256-byte boundary",
                  "job " + spec.id + " at offset " + std::to_string(persistent_offset));
  try {
    slot.net = build_model(w->model);
    const Bytes need = slot.net->persistent_bytes();
    st.persistent_used = need;
    // The loop gave it a block of P rounded up to whole 256-byte units (SchedulerOptions::alignment).
    if (need > align_up(spec.persistent)) {
      slot.error = "its persistent state needs " + exact_size(need) + " but the trace declares P = " +
                   exact_size(spec.persistent);
      slot.net.reset();
      return;
    }
    slot.net->bind(*admin_, pool_->base() + persistent_offset, options_.seed * 1'000'003 + static_cast<std::uint64_t>(job));
  } catch (const std::exception& e) {
    slot.error = std::string("initialisation failed: ") + e.what();
    slot.net.reset();
  }
}

void RealExecutor::release(core::JobIndex job) { slots_[static_cast<std::size_t>(job)].net.reset(); }

void RealExecutor::start(const core::Dispatch& d) {
  const JobSlot& slot = slots_[static_cast<std::size_t>(d.job)];
  if (lost_.load()) {
    const TimeNs t = now();
    complete(core::Completion{d.job, d.lane, 0, t, t, true, "the device was lost earlier in the run", true});
    return;
  }
  if (!slot.net) {
    const TimeNs t = now();
    complete(core::Completion{d.job, d.lane, 0, t, t, true, slot.error.empty() ? "not initialised" : slot.error});
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
  if (it != running_.end()) it->second->stop = true;
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

int RealExecutor::workers() const {
  std::lock_guard<std::mutex> lk(mu_);
  return static_cast<int>(workers_.size());
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

void RealExecutor::run_on(Worker& w, core::Dispatch d) {
  JobSlot& slot = slots_[static_cast<std::size_t>(d.job)];
  RealJobStats& st = stats_[static_cast<std::size_t>(d.job)];
  const std::int64_t total = jobs_[static_cast<std::size_t>(d.job)].iterations;
  LaneHistory prev;
  {
    std::lock_guard<std::mutex> lk(mu_);
    prev = history_[d.lane];
  }
  const bool switching = prev.last_job != core::kNoJob && prev.last_job != d.job;
  const TimeNs start = now();
  std::int64_t done = 0;
  bool failed = false;
  bool lost = false;
  std::string error;
  std::shared_ptr<DeviceMark> end_mark;
  try {
    // Device clock (CUDA events): this run's end is re-recorded after every iteration's kernels;
    // a switch is timed from the previous job's end mark to a mark just before our first kernel.
    end_mark = w.ops->create_mark();
    std::unique_ptr<DeviceMark> start_mark;
    if (switching && end_mark && prev.end_mark) start_mark = w.ops->create_mark();
    for (std::int64_t i = 0; i < d.iterations; ++i) {
      if (i > 0 && (w.stop.load() || lost_.load())) break;
      Arena lane = pool_->region(d.lane_offset, d.lane_size);
      const TimeNs t_iter = now();
      if (i == 0 && switching && !end_mark) {
        std::lock_guard<std::mutex> lk(mu_);
        switch_latencies_.push_back(t_iter - prev.last_end);
      }
      if (i == 0 && start_mark) w.ops->record_mark(*start_mark);
      const bool first = st.iterations == 0;
      const bool last = st.iterations + 1 == total;
      if (slot.inference) {
        slot.net->infer_step(*w.ops, lane);
      } else {
        slot.net->train_step(*w.ops, lane, options_.train, false);
      }
      if (end_mark) w.ops->record_mark(*end_mark);
      if (!slot.inference && (first || last)) {
        const float loss = slot.net->read_loss(*w.ops);
        if (first) st.loss_first = loss;
        if (last) st.loss_last = loss;
      }
      w.ops->synchronize();
      ++st.iterations;
      if (first) {
        st.first_iteration_ns = now() - t_iter;
      } else {
        const TimeNs took = now() - t_iter;
        st.iteration_ns_total += took;
        if (options_.record_iterations) st.iteration_times_ns.push_back(took);
      }
      st.ephemeral_peak = std::max(st.ephemeral_peak, lane.peak());
      ++done;
      if (i == 0 && start_mark) {
        const TimeNs gap = w.ops->mark_elapsed_ns(*prev.end_mark, *start_mark);
        std::lock_guard<std::mutex> lk(mu_);
        switch_latencies_.push_back(gap);
      }
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
  if (failed) {
    // Kernels of the failed iteration may still be queued on this lane's stream: wait for them
    // before the scheduler hands the lane or the job's persistent block to anyone else. A sticky
    // error (the context is lost) shows here too, whatever failed first.
    try {
      w.ops->synchronize();
    } catch (const DeviceError& e) {
      lost = lost || e.device_lost();
      error += std::string("; then, waiting for its lane: ") + e.what();
    } catch (const std::exception& e) {
      error += std::string("; then, waiting for its lane: ") + e.what();
    }
  }
  if (lost) lost_.store(true);
  const TimeNs end = now();
  {
    std::lock_guard<std::mutex> lk(mu_);
    history_[d.lane] = LaneHistory{d.job, end, failed ? nullptr : end_mark};
    w.busy = false;
    running_.erase(d.lane);
    done_.push_back(core::Completion{d.job, d.lane, done, start, end, failed, error, lost});
  }
  done_cv_.notify_all();
}

}  // namespace salus::gpu
