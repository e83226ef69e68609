#include "real/real_runner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <span>

#include "core/errors.h"
#include "core/scheduler.h"
#include "core/summary.h"
#include "gpu_backend/fault_injection.h"
#include "gpu_backend/memory_pool.h"
#include "gpu_backend/model.h"
#include "policies/registry.h"
#include "traces/csv.h"

namespace salus::real {
namespace {

/// Prints on stderr, at most once a second while the run goes on, where every job is, each
/// counted exactly once: not arrived, waiting (arrived, not admitted), admitted and idle (between
/// its runs), running (a run in flight), done, failed. Printed when the loop has dispatched what
/// it wanted and waits, so runs in flight are counted as running.
class ProgressExecutor final : public core::Executor {
 public:
  ProgressExecutor(core::Executor& inner, std::span<const core::JobSpec> jobs, std::string label, core::Bytes capacity)
      : inner_(inner), jobs_(jobs), label_(std::move(label)), state_(jobs.size(), kNotAdmitted) {
    // P + E > C in whole 256-byte units: rejected at arrival by the loop, never seen here.
    const core::Bytes c = capacity / core::kAlignment * core::kAlignment;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      if (gpu::align_up(jobs[i].persistent) + gpu::align_up(jobs[i].ephemeral) > c) state_[i] = kRejected;
    }
  }
  core::TimeNs now() const override { return inner_.now(); }
  void admit(core::JobIndex j, const core::JobSpec& s, core::Bytes off) override {
    state_[static_cast<std::size_t>(j)] = kIdle;
    inner_.admit(j, s, off);
  }
  void release(core::JobIndex j) override {
    auto& st = state_[static_cast<std::size_t>(j)];
    if (st != kFailed) st = kDone;
    inner_.release(j);
  }
  void lane_closed(core::LaneId lane) override { inner_.lane_closed(lane); }
  void start(const core::Dispatch& d) override {
    state_[static_cast<std::size_t>(d.job)] = kRunning;
    inner_.start(d);
  }
  void stop_at_boundary(core::LaneId lane) override { inner_.stop_at_boundary(lane); }
  void wait(core::TimeNs deadline, std::vector<core::Completion>& out) override {
    const core::TimeNs t = now();
    if (t - last_print_ >= core::kNsPerS) {
      last_print_ = t;
      print(t);
    }
    const std::size_t before = out.size();
    inner_.wait(deadline, out);
    for (std::size_t k = before; k < out.size(); ++k) {
      auto& st = state_[static_cast<std::size_t>(out[k].job)];
      st = out[k].failed ? kFailed : (st == kRunning ? kIdle : st);
    }
  }

 private:
  enum State : std::uint8_t { kNotAdmitted, kIdle, kRunning, kDone, kFailed, kRejected };
  void print(core::TimeNs t) const {
    long long not_arrived = 0, waiting = 0, idle = 0, running = 0, done = 0, failed = 0, rejected = 0;
    for (std::size_t i = 0; i < jobs_.size(); ++i) {
      switch (state_[i]) {
        case kNotAdmitted: (jobs_[i].arrival_ns <= t ? waiting : not_arrived) += 1; break;
        case kIdle: ++idle; break;
        case kRunning: ++running; break;
        case kDone: ++done; break;
        case kFailed: ++failed; break;
        case kRejected: (jobs_[i].arrival_ns <= t ? rejected : not_arrived) += 1; break;
      }
    }
    std::fprintf(stderr,
                 "[%s %7.1f s] jobs: not arrived %lld, waiting %lld, admitted and idle %lld, running %lld, done %lld, "
                 "failed %lld, rejected %lld\n",
                 label_.c_str(), core::to_seconds(t), not_arrived, waiting, idle, running, done, failed, rejected);
  }

  core::Executor& inner_;
  std::span<const core::JobSpec> jobs_;
  std::string label_;
  std::vector<State> state_;
  core::TimeNs last_print_ = -core::kNsPerS;  // the first wait prints
};

/// One iteration of every distinct workload in a pool of `capacity` before the trace starts (its
/// persistent block at 0, its lane at the top): the device loads each kernel the first time it
/// runs (lazy module loading), and cuBLAS picks its kernels, which would otherwise land in the
/// first job of each workload and nowhere in salus-profile's figures. Returns the note to print.
std::string warm_up(gpu::Device& device, core::Bytes capacity,
                    const std::map<std::string, std::pair<core::Bytes, core::Bytes>>& needs) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto ops = device.create_ops();  // before the pool, as in the trace run
  gpu::MemoryPool pool(device, capacity);
  int warmed = 0;
  for (const auto& [workload, pe] : needs) {
    const auto [p, e] = pe;
    if (gpu::align_up(p) + e > capacity) continue;  // rejected by the trace run anyway
    const gpu::RealWorkload w = *gpu::parse_real_workload(workload);
    const auto net = gpu::build_model(w.model);
    net->bind(*ops, pool.base(), 1);
    gpu::Arena lane = pool.region(capacity - e, e);
    if (w.inference) {
      net->infer_step(*ops, lane);
    } else {
      net->train_step(*ops, lane, gpu::TrainConfig{}, false);
    }
    ops->synchronize();
    ++warmed;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  char text[160];
  std::snprintf(text, sizeof text, "warm-up: one iteration of each of %d workloads before the trace (%.2f s; --warmup off "
                "to skip)", warmed, seconds);
  return text;
}

nlohmann::json ms_or_null(core::TimeNs ns, bool present) {
  return present ? nlohmann::json(static_cast<double>(ns) / 1e6) : nlohmann::json(nullptr);
}

nlohmann::json loss_or_null(float v) { return std::isnan(v) ? nlohmann::json(nullptr) : nlohmann::json(v); }

}  // namespace

int contexts_before_trace(std::span<const core::JobSpec> jobs, const core::SchedulerOptions& opts) {
  if (opts.lane_mode != core::LaneMode::kAuto) return jobs.empty() ? 0 : 1;
  const core::Bytes a = std::max<core::Bytes>(1, opts.alignment);
  const auto aligned = [a](core::Bytes b) { return (b + a - 1) / a * a; };
  const core::Bytes capacity = opts.capacity / a * a;
  std::vector<core::Bytes> need;  // P + E of each job that fits alone
  need.reserve(jobs.size());
  for (const core::JobSpec& s : jobs) {
    const core::Bytes pe = aligned(s.persistent) + aligned(s.ephemeral);
    if (pe <= capacity) need.push_back(pe);
  }
  std::sort(need.begin(), need.end());
  int lanes = 0;
  core::Bytes sum = 0;
  for (core::Bytes pe : need) {
    if (sum + pe > capacity) break;
    sum += pe;
    ++lanes;
  }
  if (opts.max_lanes > 0) lanes = std::min(lanes, opts.max_lanes);
  return std::min(lanes, kMaxContexts);
}

nlohmann::json latency_json(std::vector<core::TimeNs> v) {
  std::sort(v.begin(), v.end());
  nlohmann::json j;
  j["count"] = v.size();
  j["p50_ms"] = static_cast<double>(core::nearest_rank(v, 0.5)) / 1e6;
  j["p99_ms"] = static_cast<double>(core::nearest_rank(v, 0.99)) / 1e6;
  j["max_ms"] = v.empty() ? 0.0 : static_cast<double>(v.back()) / 1e6;
  return j;
}

RealRunner::RealRunner(RealRunConfig cfg)
    : cfg_(std::move(cfg)),
      device_(gpu::make_device(cfg_.device, gpu::DeviceOptions{cfg_.math, cfg_.faults})),
      used_at_start_(device_->used_memory()) {}

core::Bytes RealRunner::capacity() const { return cfg_.capacity / core::kAlignment * core::kAlignment; }

void RealRunner::check_workloads(const std::vector<core::JobSpec>& jobs, const std::string& trace_path) {
  for (const core::JobSpec& s : jobs) {
    if (!gpu::parse_real_workload(s.workload)) {
      std::string where;
      if (!trace_path.empty()) {
        std::vector<std::string_view> values = {s.id};
        if (!s.workload.empty()) values.push_back(s.workload);
        const long line = traces::find_row_line(trace_path, values);
        where = line > 0 ? core::at(trace_path, line, "") : trace_path + ": ";
      }
      throw core::InputError(where + "job " + traces::text_excerpt(s.id) + ": workload '" + traces::text_excerpt(s.workload) +
                             "' has no real model (valid: " + gpu::real_workload_help() + ")");
    }
  }
}

std::vector<std::string> RealRunner::prepare(std::vector<core::JobSpec>& jobs) {
  check_workloads(jobs);
  std::vector<std::string> notes;
  // Every distinct workload's network is built once before the trace starts: sizing its
  // ephemeral memory makes the device's convolution plans (shared by all execution contexts), so
  // no job's first iteration pays for cuDNN's heuristics, as none does in salus-profile's
  // measurements either. The figures also serve memory_from_model and the warm-up.
  std::map<std::string, std::pair<core::Bytes, core::Bytes>> needs;  // workload -> model's P, E
  {
    const auto ops = device_->create_ops();
    for (core::JobSpec& s : jobs) {
      auto it = needs.find(s.workload);
      if (it == needs.end()) {
        const gpu::RealWorkload w = *gpu::parse_real_workload(s.workload);
        const auto net = gpu::build_model(w.model);
        it = needs.emplace(s.workload, std::make_pair(net->persistent_bytes(),
                                                      gpu::align_up(net->ephemeral_bytes(*ops, !w.inference))))
                 .first;
      }
      if (cfg_.memory_from_model) {
        s.persistent = it->second.first;
        s.ephemeral = it->second.second;
      }
    }
    if (cfg_.memory_from_model) notes.push_back("P and E of every job from its model on " + device_->name() + " (--memory model)");
  }
  // Every region the pool hands out starts on a core::kAlignment boundary, the unit the loop rounds
  // P and E up and the capacity down to (SchedulerOptions::alignment, the same in salus-sim).
  if (cfg_.warmup) notes.push_back(warm_up(*device_, capacity(), needs));
  return notes;
}

run::PolicyRun RealRunner::run(const std::vector<core::JobSpec>& jobs, const std::string& name,
                                       bool record_timeline) {
  const auto policy = policies::make_policy(name);
  core::SchedulerOptions opts;
  opts.capacity = capacity();
  opts.lane_mode = run::lane_mode_for(*policy, cfg_.lanes);
  opts.record_timeline = record_timeline;
  opts.stop = cfg_.stop;
  // As many execution contexts as lanes can run at once, made before the trace starts (making
  // one mid-run would take the loop thread, under the executor's lock, for as long as cuDNN and
  // cuBLAS take to make their handles), and the pool reserved after them.
  gpu::RealOptions real_options = cfg_.options;
  real_options.workers = contexts_before_trace(jobs, opts);
  const gpu::FaultInjector* faults = device_->faults();
  const gpu::FaultCounts faults_before = faults != nullptr ? faults->counts() : gpu::FaultCounts{};
  gpu::RealExecutor real(*device_, opts.capacity, jobs, real_options);
  run::PolicyRun r;
  r.policy = name;
  r.lane_mode = opts.lane_mode;
  if (cfg_.progress) {
    ProgressExecutor progress(real, jobs, name, opts.capacity);
    r.outcome = core::run_schedule(jobs, *policy, progress, opts);
  } else {
    r.outcome = core::run_schedule(jobs, *policy, real, opts);
  }
  r.metrics = core::compute_metrics(jobs, r.outcome.jobs);
  nlohmann::json& m = r.measured;
  m["workers"] = real.workers();
  m["workers_made_in_run"] = real.workers_made_in_run();
  m["switch_latency"] = latency_json(real.switch_latencies());
  m["switch_latency"]["clock"] = real.switch_latency_clock();
  m["stop_latency"] = latency_json(real.stop_latencies());
  m["lookahead"] = real.lookahead();
  // What the process holds on the device outside the pool, with every handle made and every
  // module the run used loaded (cudaMemGetInfo): null on the CPU device.
  const std::optional<core::Bytes> used_now = device_->used_memory();
  m["outside_pool_bytes"] = used_now ? nlohmann::json(*used_now - opts.capacity) : nlohmann::json(nullptr);
  m["outside_pool_growth_bytes"] =
      used_now && used_at_start_ ? nlohmann::json(*used_now - *used_at_start_ - opts.capacity) : nlohmann::json(nullptr);
  m["fatal_error"] = r.outcome.fatal_error.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.outcome.fatal_error);
  nlohmann::json per_job = nlohmann::json::array();
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const gpu::RealJobStats& st = real.stats(static_cast<core::JobIndex>(i));
    nlohmann::json j;
    j["id"] = jobs[i].id;
    j["loss_first"] = loss_or_null(st.loss_first);
    j["loss_last"] = loss_or_null(st.loss_last);
    j["iterations_measured"] = st.iterations;
    // The first iteration on its own (it builds cuDNN plans the process has not seen and warms
    // the caches), the mean over the later ones.
    j["first_iteration_ms"] = ms_or_null(st.first_iteration_ns, st.first_iteration_ns >= 0);
    j["mean_iteration_ms"] = st.iterations > 1 ? nlohmann::json(static_cast<double>(st.iteration_ns_total) / 1e6 /
                                                                static_cast<double>(st.iterations - 1))
                                               : nlohmann::json(nullptr);
    j["persistent_used_bytes"] = st.persistent_used;
    j["ephemeral_peak_bytes"] = st.ephemeral_peak;
    j["inference"] = st.inference;
    per_job.push_back(std::move(j));
  }
  m["jobs"] = std::move(per_job);
  // The faults injected by this run (the device counts since it was made), read once stats()
  // has waited for every admission: a refused persistent block is counted on the admission thread.
  if (faults != nullptr) {
    const gpu::FaultCounts now = faults->counts();
    m["injected_faults"] = {{"alloc", now.alloc - faults_before.alloc},
                            {"iter", now.iter - faults_before.iter},
                            {"lost", now.lost - faults_before.lost}};
  } else {
    m["injected_faults"] = nullptr;
  }
  return r;
}

nlohmann::json RealRunner::config() const {
  // The simulator's settings have no meaning here: the executor takes the time switching and
  // sharing the device take.
  return {{"executor", "real"},
          {"device", device_->name()},
          {"math", gpu::to_string(cfg_.math)},
          {"gpu_mem_bytes", capacity()},
          {"switch_cost_ms", nullptr},
          {"interference", nullptr}};
}

}  // namespace salus::real
