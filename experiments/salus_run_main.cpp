// salus-run: runs a trace for real, in one process that owns the device, under Salus scheduling
// policies: the same core loop and policies as salus-sim, the real executor, real training.
#include <chrono>
#include <csignal>
#include <cstdio>
#include <exception>
#include <iostream>
#include <map>
#include <utility>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "core/errors.h"
#include "core/summary.h"
#include "experiments/cli.h"
#include "experiments/output.h"
#include "experiments/sim_runner.h"
#include "gpu_backend/device.h"
#include "gpu_backend/memory_pool.h"
#include "gpu_backend/real_executor.h"
#include "policies/registry.h"
#include "traces/catalog.h"
#include "traces/trace.h"

namespace po = boost::program_options;
using namespace salus;

namespace {

std::atomic<bool> g_stop{false};

extern "C" void on_sigint(int) { g_stop.store(true); }

/// Prints on stderr, at most once a second while the run goes on, where every job is, each
/// counted exactly once: not arrived, waiting (arrived, not admitted), admitted and idle (between
/// its runs), running (a run in flight), done, failed. Printed when the loop has dispatched what
/// it wanted and waits, so runs in flight are counted as running.
class ProgressExecutor final : public core::Executor {
 public:
  ProgressExecutor(core::Executor& inner, std::span<const core::JobSpec> jobs, std::string label, core::Bytes capacity)
      : inner_(inner), jobs_(jobs), label_(std::move(label)), state_(jobs.size(), kNotAdmitted) {
    // P + E > C: rejected at arrival by the loop, never seen here.
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      if (jobs[i].persistent + jobs[i].ephemeral > capacity) state_[i] = kRejected;
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

struct Options {
  std::string trace, profiles, summary_json, out_dir, device = "cpu";
  std::vector<std::string> policies;
  core::Bytes capacity = 16 * core::kGiB;
  std::optional<core::LaneMode> lanes;
  double time_scale = 1;
  bool memory_from_model = false;
  bool warmup = true;
  gpu::RealOptions real;
};

Options parse(int argc, char** argv, bool* help) {
  Options o;
  std::string policy_list, gpu_mem, lanes, memory, warmup;
  std::uint64_t seed = 1;
  po::options_description desc(
      "salus-run: run a job trace for real on one device under Salus scheduling policies\n\nOptions");
  desc.add_options()
      ("help,h", "print this help")
      ("trace", po::value(&o.trace)->required(), "trace file (same formats as salus-sim)")
      ("policy", po::value(&policy_list)->default_value(policies::policy_names_joined()),
       ("comma-separated policies (valid: " + policies::policy_names_joined() + ")").c_str())
      ("device", po::value(&o.device)->default_value("cpu"), "cpu (Eigen) or cuda (cuDNN, cuBLAS)")
      ("gpu-mem", po::value(&gpu_mem)->default_value("16GiB"),
       "memory pool reserved on the device, with a unit (16GiB emulates a P100); never more than it has free")
      ("lanes", po::value(&lanes), "single|auto (defaults as in salus-sim)")
      ("time-scale", po::value(&o.time_scale)->default_value(1.0),
       "divide arrival times and iteration counts by this (>= 1) to shorten a run")
      ("profiles", po::value(&o.profiles)->default_value(traces::Catalog::default_path()), "workload catalog (JSON)")
      ("memory", po::value(&memory)->default_value("trace"),
       "trace: admit jobs with the P and E the trace or catalog declares; model: with what each model needs "
       "on this device (as salus-profile measures it)")
      ("warmup", po::value(&warmup)->default_value("on"),
       "on: run one iteration of every workload before the trace (kernels loaded, plans made), as salus-profile "
       "measures a warm process; off: the first job of each workload pays for it")
      ("learning-rate", po::value(&o.real.train.learning_rate)->default_value(0.01f), "SGD learning rate")
      ("seed", po::value(&seed)->default_value(1), "seed of the synthetic data and initial weights")
      ("summary-json", po::value(&o.summary_json), "write the summary JSON here (salus-sim's schema plus measurements)")
      ("out", po::value(&o.out_dir), "write per-job CSVs, timelines, memory and lane moves into this directory");
  po::variables_map vm;
  po::store(po::command_line_parser(argc, argv).options(desc).run(), vm);
  if (vm.count("help")) {
    std::cout << desc << "\nWorkloads run for real: " << gpu::real_workload_help() << "\n";
    *help = true;
    return o;
  }
  po::notify(vm);
  o.policies = experiments::parse_policy_list(policy_list);
  o.capacity = experiments::parse_capacity(gpu_mem);
  if (vm.count("lanes")) o.lanes = experiments::parse_lane_mode(lanes);
  if (!(o.time_scale >= 1)) throw core::InputError("--time-scale: must be a number >= 1");
  if (!(o.real.train.learning_rate > 0)) throw core::InputError("--learning-rate: must be positive");
  if (o.device != "cpu" && o.device != "cuda") {
    throw core::InputError("--device: unknown device '" + o.device + "' (valid: cpu, cuda)");
  }
  if (memory != "trace" && memory != "model") {
    throw core::InputError("--memory: unknown source '" + memory + "' (valid: trace, model)");
  }
  o.memory_from_model = memory == "model";
  if (warmup != "on" && warmup != "off") throw core::InputError("--warmup: must be on or off, got '" + warmup + "'");
  o.warmup = warmup == "on";
  o.real.seed = seed;
  return o;
}

/// One iteration of every distinct workload in a pool of `capacity` before the trace starts (its
/// persistent block at 0, its lane at the top): the device loads each kernel the first time it
/// runs (lazy module loading), and cuBLAS picks its kernels, which would otherwise land in the
/// first job of each workload and nowhere in salus-profile's figures. Returns the note to print.
std::string warm_up(gpu::Device& device, core::Bytes capacity,
                    const std::map<std::string, std::pair<core::Bytes, core::Bytes>>& needs) {
  const auto t0 = std::chrono::steady_clock::now();
  gpu::MemoryPool pool(device, capacity);
  const auto ops = device.create_ops();
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

nlohmann::json latency_json(std::vector<core::TimeNs> v) {
  std::sort(v.begin(), v.end());
  nlohmann::json j;
  j["count"] = v.size();
  j["p50_ms"] = static_cast<double>(core::nearest_rank(v, 0.5)) / 1e6;
  j["p99_ms"] = static_cast<double>(core::nearest_rank(v, 0.99)) / 1e6;
  j["max_ms"] = v.empty() ? 0.0 : static_cast<double>(v.back()) / 1e6;
  return j;
}

int run(int argc, char** argv) {
  bool help = false;
  const Options o = parse(argc, argv, &help);
  if (help) return 0;
  auto [trace, jobs, pairs, share_weights, switch_ns] = experiments::load_jobs(o.trace, o.profiles, o.capacity, o.time_scale);
  for (const core::JobSpec& s : jobs) {
    if (!gpu::parse_real_workload(s.workload)) {
      throw core::InputError(o.trace + ": job " + s.id + ": workload '" + s.workload + "' has no real model (valid: " +
                             gpu::real_workload_help() + ")");
    }
  }
  const auto device = gpu::make_device(o.device);
  std::vector<std::string> notes = trace.notes;
  // Every distinct workload's network is built once before the trace starts: sizing its
  // ephemeral memory makes the device's convolution plans (shared by all execution contexts), so
  // no job's first iteration pays for cuDNN's heuristics, as none does in salus-profile's
  // measurements either. The figures also serve --memory model and the warm-up below.
  std::map<std::string, std::pair<core::Bytes, core::Bytes>> needs;  // workload -> model's P, E
  {
    const auto ops = device->create_ops();
    for (core::JobSpec& s : jobs) {
      auto it = needs.find(s.workload);
      if (it == needs.end()) {
        const gpu::RealWorkload w = *gpu::parse_real_workload(s.workload);
        const auto net = gpu::build_model(w.model);
        it = needs.emplace(s.workload, std::make_pair(net->persistent_bytes(),
                                                      gpu::align_up(net->ephemeral_bytes(*ops, !w.inference))))
                 .first;
      }
      if (o.memory_from_model) {
        s.persistent = it->second.first;
        s.ephemeral = it->second.second;
      }
    }
    if (o.memory_from_model) notes.push_back("P and E of every job from its model on " + device->name() + " (--memory model)");
  }
  // Every region the pool hands out must start on a 256-byte boundary (CUDA's kernels and cuDNN
  // fault on misaligned float data, and that error is sticky for the whole context). The pool's
  // base is aligned, persistent blocks are placed end to end from 0 and lanes from the top, so
  // P, E and the capacity in whole 256-byte units keep every offset aligned.
  core::Bytes capacity = o.capacity / gpu::kAlignment * gpu::kAlignment;
  for (core::JobSpec& s : jobs) {
    s.persistent = gpu::align_up(s.persistent);
    s.ephemeral = gpu::align_up(s.ephemeral);
  }
  if (o.warmup) notes.push_back(warm_up(*device, capacity, needs));
  for (const std::string& n : experiments::lane_mode_notes(o.policies, o.lanes)) notes.push_back(n);
  std::printf("salus-run: %s (%s, %zu jobs), device %s, pool %s, time scale %g\n", o.trace.c_str(),
              traces::to_string(trace.format), jobs.size(), device->name().c_str(), core::format_size(capacity).c_str(),
              o.time_scale);
  std::fflush(stdout);

  std::signal(SIGINT, on_sigint);
  std::vector<experiments::SimRun> runs;
  nlohmann::json measured = nlohmann::json::array();
  for (const std::string& name : o.policies) {
    if (g_stop.load()) break;
    const auto policy = policies::make_policy(name);
    experiments::SimConfig cfg;
    cfg.lanes = o.lanes;
    core::SchedulerOptions opts;
    opts.capacity = capacity;
    opts.lane_mode = experiments::lane_mode_for(*policy, cfg);
    opts.record_timeline = !o.out_dir.empty();
    opts.stop = &g_stop;
    gpu::MemoryPool pool(*device, capacity);
    // As many execution contexts as lanes can run at once, made before the trace starts (one for
    // the single-lane and exclusive modes; for auto lanes the lane cap, at most one per job).
    gpu::RealOptions real_options = o.real;
    real_options.workers =
        opts.lane_mode == core::LaneMode::kAuto
            ? static_cast<int>(std::min<std::size_t>(jobs.size(), opts.max_lanes > 0 ? opts.max_lanes : 4))
            : 1;
    gpu::RealExecutor real(*device, pool, jobs, real_options);
    ProgressExecutor progress(real, jobs, name, capacity);
    experiments::SimRun r;
    r.policy = name;
    r.lane_mode = opts.lane_mode;
    r.outcome = core::run_schedule(jobs, *policy, progress, opts);
    r.metrics = core::compute_metrics(jobs, r.outcome.jobs);
    nlohmann::json m;
    m["policy"] = name;
    m["workers"] = real.workers();
    m["switch_latency"] = latency_json(real.switch_latencies());
    nlohmann::json per_job = nlohmann::json::array();
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      const gpu::RealJobStats& st = real.stats(static_cast<core::JobIndex>(i));
      nlohmann::json j;
      j["id"] = jobs[i].id;
      j["loss_first"] = std::isnan(st.loss_first) ? nlohmann::json(nullptr) : nlohmann::json(st.loss_first);
      j["loss_last"] = std::isnan(st.loss_last) ? nlohmann::json(nullptr) : nlohmann::json(st.loss_last);
      j["iterations_measured"] = st.iterations;
      // The first iteration on its own (it builds cuDNN plans the process has not seen and warms
      // the caches), the mean over the later ones.
      j["first_iteration_ms"] =
          st.first_iteration_ns >= 0 ? nlohmann::json(static_cast<double>(st.first_iteration_ns) / 1e6) : nlohmann::json(nullptr);
      j["mean_iteration_ms"] = st.iterations > 1 ? nlohmann::json(static_cast<double>(st.iteration_ns_total) / 1e6 /
                                                                  static_cast<double>(st.iterations - 1))
                                                 : nlohmann::json(nullptr);
      j["persistent_used_bytes"] = st.persistent_used;
      j["ephemeral_peak_bytes"] = st.ephemeral_peak;
      j["inference"] = st.inference;
      per_job.push_back(std::move(j));
    }
    m["jobs"] = std::move(per_job);
    measured.push_back(std::move(m));
    runs.push_back(std::move(r));
  }
  if (g_stop.load()) notes.push_back("interrupted (Ctrl-C): the summary covers what ran");
  experiments::print_report(notes, jobs, runs);
  // The measured switch latency of each run: end of one job's iteration to the start of the next
  // job's first iteration in the same lane (host clock).
  for (std::size_t r = 0; r < runs.size(); ++r) {
    const nlohmann::json& sw = measured[r]["switch_latency"];
    if (sw["count"].get<std::size_t>() == 0) {
      std::printf("switch latency, %s: no switch\n", runs[r].policy.c_str());
    } else {
      std::printf("switch latency, %s: %zu switches, p50 %.3f ms, p99 %.3f ms, max %.3f ms\n", runs[r].policy.c_str(),
                  sw["count"].get<std::size_t>(), sw["p50_ms"].get<double>(), sw["p99_ms"].get<double>(),
                  sw["max_ms"].get<double>());
    }
  }

  nlohmann::json summary;
  summary["tool"] = "salus-run";
  summary["trace"] = o.trace;
  summary["trace_format"] = traces::to_string(trace.format);
  summary["profiles"] = o.profiles;
  summary["device"] = device->name();
  summary["gpu_mem_bytes"] = capacity;
  summary["time_scale"] = o.time_scale;
  summary["seed"] = o.real.seed;
  summary["notes"] = notes;
  summary["results"] = experiments::results_json(jobs, runs);
  // Measurements go into each result and each job entry, so readers of the common schema can
  // ignore them.
  for (std::size_t r = 0; r < runs.size(); ++r) {
    nlohmann::json& res = summary["results"][r];
    res["workers"] = measured[r]["workers"];
    res["switch_latency"] = measured[r]["switch_latency"];
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      for (auto& [k, v] : measured[r]["jobs"][i].items()) {
        if (k != "id") res["jobs"][i][k] = v;
      }
    }
  }
  experiments::write_outputs(summary, o.summary_json, o.out_dir, jobs, runs);
  if (g_stop.load()) return 130;
  // A failed job (its kernels failed, its lane overflowed, ...) fails the run; the summary is
  // written all the same.
  for (const experiments::SimRun& r : runs) {
    if (r.metrics.failed > 0) return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return salus::experiments::guarded_main("salus-run", run, argc, argv); }
