#include "real/profiler.h"

#include <algorithm>
#include <cmath>
#include <atomic>
#include <chrono>
#include <exception>
#include <map>
#include <thread>

#include "core/errors.h"
#include "core/registry.h"
#include "gpu_backend/model.h"
#include "run/cpus.h"
#include "run/load.h"
#include "run/output.h"
#include "sim/interference.h"
#include "traces/catalog.h"
#include "gpu_backend/memory_pool.h"
#include "gpu_backend/model.h"
#include "gpu_backend/real_executor.h"
#include "policies/registry.h"
#include "core/scheduler.h"

namespace salus::gpu {
namespace {

using Clock = std::chrono::steady_clock;

struct Instance {
  std::unique_ptr<Network> net;
  bool inference = false;
  std::unique_ptr<Ops> ops;
  Arena lane;
  std::vector<core::TimeNs> times;
};

Instance make_instance(Device& device, const std::string& workload) {
  Instance in;
  const std::optional<RealWorkload> w = parse_real_workload(workload);
  if (!w) throw core::InputError("no real model for workload '" + workload + "' (valid: " + real_workload_help() + ")");
  in.inference = w->inference;
  in.net = build_model(w->model);
  in.ops = device.create_ops();
  return in;
}

/// Lays out instances as the lane algorithm would: persistent blocks from 0, lanes from the top.
void place(MemoryPool& pool, std::vector<Instance*> ins, std::uint64_t seed) {
  Bytes bottom = 0, top = pool.capacity();
  for (Instance* in : ins) {
    const Bytes p = align_up(in->net->persistent_bytes());
    const Bytes e = align_up(in->net->ephemeral_bytes(*in->ops, !in->inference));
    if (bottom + p > top - e) throw core::InputError("workloads do not fit a pool of " + core::format_size(pool.capacity()));
    in->net->bind(*in->ops, pool.base() + bottom, seed++);
    bottom += p;
    top -= e;
    in->lane = pool.region(top, e);
  }
}

/// One iteration, waited for; its time.
core::TimeNs step(Instance& in) {
  const TrainConfig cfg;
  const auto t = Clock::now();
  if (in.inference) {
    in.net->infer_step(*in.ops, in.lane);
  } else {
    in.net->train_step(*in.ops, in.lane, cfg, false);
  }
  in.ops->synchronize();
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t).count();
}

/// Alone: the warm-up, then at least o.iterations iterations and o.min_seconds (at most
/// o.max_iterations).
void run_solo(Instance& in, const ProfileOptions& o) {
  in.times.clear();
  for (int i = 0; i < o.warmup; ++i) step(in);
  const auto min_ns = static_cast<core::TimeNs>(o.min_seconds * 1e9);
  core::TimeNs total = 0;
  while (static_cast<int>(in.times.size()) < o.max_iterations &&
         (static_cast<int>(in.times.size()) < o.iterations || total < min_ns)) {
    in.times.push_back(step(in));
    total += in.times.back();
  }
}

/// The upper median (0 for none): times, and the crowds' per-round ratios.
template <class T>
T median(std::vector<T> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? T{0} : v[v.size() / 2];
}

/// run_solo, then the typical mean of the times it measured (typical_mean).
core::TimeNs solo_mean(Instance& in, const ProfileOptions& o) {
  run_solo(in, o);
  return typical_mean(in.times);
}

core::TimeNs plain_mean(const std::vector<core::TimeNs>& v) {
  core::TimeNs sum = 0;
  for (core::TimeNs t : v) sum += t;
  return v.empty() ? 0 : sum / static_cast<core::TimeNs>(v.size());
}

/// Runs the instances at once, one thread each, and returns their typical mean iteration times
/// (typical_mean) over the window in which all of them ran: each warms up, all start measuring
/// together, each keeps going until every one has o.iterations measured iterations and the window
/// has lasted o.min_seconds, and an iteration that ends after the first one stopped is not counted.
/// Means, not medians: lanes that time-slice one CPU core make an iteration's time bimodal (whole
/// within a slice, or split across the other lane's), and the simulator wants the rate. By medians
/// salus-profile read mlp_64 beside lenet_32 at 1.65-2.00x on the CPU device, where two such jobs
/// in salus-run took 2.23x and 2.29x their solo means.
std::vector<core::TimeNs> together(std::vector<Instance*> ins, const ProfileOptions& o) {
  const int n = static_cast<int>(ins.size());
  std::atomic<int> ready{0}, satisfied{0};
  std::atomic<bool> stop{false};
  std::atomic<Clock::rep> start{0};  // when the last one finished its warm-up
  const auto min_ns = static_cast<core::TimeNs>(o.min_seconds * 1e9);
  std::vector<std::thread> threads;
  std::vector<std::exception_ptr> errors(ins.size());
  for (std::size_t k = 0; k < ins.size(); ++k) {
    threads.emplace_back([&, k] {
      Instance& in = *ins[k];
      in.times.clear();
      try {
        for (int i = 0; i < o.warmup; ++i) step(in);
      } catch (...) {
        errors[k] = std::current_exception();
        stop = true;
      }
      // The last to finish its warm-up opens the window; all start measuring once it is open.
      if (++ready == n) start = Clock::now().time_since_epoch().count();
      while (start.load() == 0) std::this_thread::yield();
      bool counted = false;
      while (!stop.load() && !errors[k]) {
        try {
          const core::TimeNs t = step(in);
          if (stop.load()) break;  // the window closed during this iteration
          in.times.push_back(t);
        } catch (...) {
          errors[k] = std::current_exception();
          stop = true;
          break;
        }
        if (!counted && static_cast<int>(in.times.size()) >= o.iterations) {
          counted = true;
          ++satisfied;
        }
        const Clock::duration elapsed(Clock::now().time_since_epoch().count() - start.load());
        if (satisfied.load() == n && std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed).count() >= min_ns) {
          stop = true;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  for (auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  std::vector<core::TimeNs> out;
  for (Instance* in : ins) out.push_back(typical_mean(in->times));
  return out;
}

/// `copies` jobs of `workload`, `iterations` each, all arriving at 0, run through run_schedule and
/// the real executor under `policy` in `mode`: what salus-run does. Throws if one did not finish.
struct ExecutorRun {
  std::vector<RealJobStats> stats;
  std::vector<core::TimeNs> switch_latencies;
};
ExecutorRun run_in_executor(Device& device, const std::string& workload, int copies, std::int64_t iterations,
                            const char* policy_name, core::LaneMode mode, const ProfileOptions& o) {
  const std::optional<RealWorkload> w = parse_real_workload(workload);
  if (!w) throw core::InputError("no real model for workload '" + workload + "' (valid: " + real_workload_help() + ")");
  const auto ops = device.create_ops();
  const auto net = build_model(w->model);
  core::JobSpec spec;
  spec.workload = workload;
  spec.iterations = iterations;
  spec.iter_ns = core::kNsPerMs;
  spec.persistent = align_up(net->persistent_bytes());
  spec.ephemeral = align_up(net->ephemeral_bytes(*ops, !w->inference));
  std::vector<core::JobSpec> jobs(static_cast<std::size_t>(copies), spec);
  for (int i = 0; i < copies; ++i) jobs[static_cast<std::size_t>(i)].id = workload + "_" + std::to_string(i);
  const auto policy = policies::make_policy(policy_name);
  const Bytes capacity = o.capacity / kAlignment * kAlignment;
  MemoryPool pool(device, capacity);
  RealOptions options;
  options.record_iterations = true;
  RealExecutor exec(device, pool, jobs, options);
  core::SchedulerOptions opts;
  opts.capacity = capacity;
  opts.lane_mode = mode;
  const core::ScheduleOutcome out = core::run_schedule(jobs, *policy, exec, opts);
  ExecutorRun run;
  for (std::size_t i = 0; i < out.jobs.size(); ++i) {
    if (out.jobs[i].status != core::JobStatus::kDone) {
      throw core::InputError(workload + " in the executor failed: " + out.jobs[i].reason());
    }
    run.stats.push_back(exec.stats(static_cast<core::JobIndex>(i)));
  }
  run.switch_latencies = exec.switch_latencies();
  return run;
}

/// Re-times a measured workload through the real executor, as salus-run runs it (one job alone,
/// run_schedule, a worker thread, its synchronisation and completion path): iter_ns becomes the
/// executor's mean iteration after the first and first_iter_ns its first iteration. The
/// profiler's own loop can differ from it: on the CPU device lenet_32 measured 7.3 ms there
/// against 6.0 ms in the executor (cause not found); the simulator wants what the executor does.
void measure_in_executor(Device& device, WorkloadMeasurement& m, const ProfileOptions& o) {
  // As many iterations as the solo measurement took, at least 2 (the first is reported apart).
  const std::int64_t iterations = std::max<std::int64_t>(2, m.measured + 1);
  const ExecutorRun run = run_in_executor(device, m.name, 1, iterations, "fifo", core::LaneMode::kExclusive, o);
  const RealJobStats& st = run.stats.front();
  // What a job of the trace takes is the sum of its iterations, so the simulator wants their
  // mean, not their median: on this kind of machine the distribution is skewed to the right (a
  // neighbour's burst only adds), and the median sat 3-10 % below what jobs then took on the CPU
  // device. But a mean over a profile of a few seconds is at the mercy of one burst (lenet_32:
  // a 6.61 ms mean against 6.12-6.40 ms in 17 of 18 jobs run alone after it), so iter_ns is a
  // robust mean: the median of the means of consecutive blocks (typical_mean).
  m.iter_exec_median_ns = median(st.iteration_times_ns);
  m.iter_exec_mean_ns = st.iteration_times_ns.empty() ? m.iter_exec_median_ns : plain_mean(st.iteration_times_ns);
  m.iter_ns = st.iteration_times_ns.empty() ? m.iter_exec_median_ns : typical_mean(st.iteration_times_ns);
  m.first_iter_ns = st.first_iteration_ns;
}

}  // namespace

core::TimeNs typical_mean(const std::vector<core::TimeNs>& times) {
  const std::size_t n = times.size();
  std::size_t k = std::min<std::size_t>(kMaxTypicalBlocks, n / kMinTypicalBlock);
  if (k % 2 == 0 && k > 0) --k;  // odd: the median is one block's mean
  if (k < 3) return plain_mean(times);
  std::vector<core::TimeNs> means;
  for (std::size_t b = 0; b < k; ++b) {
    // Block b holds times [n b / k, n (b + 1) / k): every iteration in exactly one block.
    const std::size_t lo = n * b / k, hi = n * (b + 1) / k;
    core::TimeNs sum = 0;
    for (std::size_t i = lo; i < hi; ++i) sum += times[i];
    means.push_back(sum / static_cast<core::TimeNs>(hi - lo));
  }
  return median(std::move(means));
}

std::vector<WorkloadMeasurement> profile_workloads(Device& device, const std::vector<std::string>& workloads,
                                                   const ProfileOptions& o) {
  if (o.iterations < 1 || o.warmup < 0) throw core::InputError("--iterations must be at least 1");
  std::vector<WorkloadMeasurement> out;
  for (const std::string& w : workloads) {
    Instance a = make_instance(device, w);
    WorkloadMeasurement m;
    m.name = w;
    m.inference = a.inference;
    {
      MemoryPool pool(device, o.capacity);
      try {
        place(pool, {&a}, 1);
      } catch (const core::InputError& e) {
        // Measured as far as it goes: its P and E, and that it cannot run in this pool.
        m.persistent = a.net->persistent_bytes();
        m.ephemeral_peak = align_up(a.net->ephemeral_bytes(*a.ops, !a.inference));
        m.error = "needs P " + core::format_size(m.persistent) + " + E " + core::format_size(m.ephemeral_peak) +
                  ", more than a pool of " + core::format_size(o.capacity);
        out.push_back(m);
        continue;
      }
      run_solo(a, o);
      m.persistent = a.net->persistent_bytes();
      m.ephemeral_peak = a.lane.peak();
      m.iter_median_ns = median(a.times);
      m.measured = static_cast<std::int64_t>(a.times.size());
    }
    {
      // A copy of itself in a second lane: under the model both run at 1 / max(1, 2u). Where two
      // copies do not fit the pool, no lane can ever run beside this workload's: u = 1.
      Instance b = make_instance(device, w);
      MemoryPool pair_pool(device, o.capacity);
      bool pair_fits = true;
      try {
        place(pair_pool, {&a, &b}, 1);
      } catch (const core::InputError&) {
        pair_fits = false;
      }
      if (pair_fits) {
        // Relative to the copy's solo mean just before and after, not iter_median_ns from the
        // loop above: pinned to one CPU, lenet_32 beside itself read 1.68x of that older median,
        // which two copies time-slicing one core cannot be.
        const core::TimeNs before = solo_mean(a, o);
        const auto t = together({&a, &b}, o);
        const core::TimeNs alone = (before + solo_mean(a, o)) / 2;
        m.pair_self_ns = (t[0] + t[1]) / 2;
        m.self_slowdown = static_cast<double>(m.pair_self_ns) / static_cast<double>(std::max<core::TimeNs>(1, alone));
        m.gpu_util = std::clamp(m.self_slowdown / 2.0, 0.05, 1.0);
      } else {
        m.gpu_util = 1.0;
      }
    }
    // iter_ns and first_iter_ns through the executor, in a pool of its own (the others are gone).
    measure_in_executor(device, m, o);
    out.push_back(m);
  }
  return out;
}

std::vector<PairMeasurement> profile_pairs(Device& device, const std::vector<WorkloadMeasurement>& solo,
                                           const ProfileOptions& o) {
  std::vector<PairMeasurement> out;
  for (std::size_t i = 0; i < solo.size(); ++i) {
    if (!solo[i].error.empty()) continue;
    for (std::size_t j = i + 1; j < solo.size(); ++j) {
      if (!solo[j].error.empty()) continue;
      Instance a = make_instance(device, solo[i].name);
      Instance b = make_instance(device, solo[j].name);
      MemoryPool pool(device, o.capacity);
      try {
        place(pool, {&a, &b}, 1);
      } catch (const core::InputError&) {
        continue;  // they cannot share this pool
      }
      // Each alone again in this pool just before and after the pair, in the same loop: a
      // slowdown is a ratio of two times taken the same way at nearly the same time. The solo
      // medians measured at the start of the profile (solo[i].iter_median_ns) can sit 10 % away
      // from these on a shared machine whose speed drifts over minutes (mlp_64: 4.98 ms in the
      // profile's first loop against 4.39 ms through the executor right after, which made
      // mlp_64 beside lenet_32 "0.90x" its solo time).
      const core::TimeNs a_before = solo_mean(a, o), b_before = solo_mean(b, o);
      const auto t = together({&a, &b}, o);
      const core::TimeNs a_alone = (a_before + solo_mean(a, o)) / 2, b_alone = (b_before + solo_mean(b, o)) / 2;
      PairMeasurement p;
      p.a = solo[i].name;
      p.b = solo[j].name;
      // Medians over medians: one slow iteration on either side does not move the figure.
      p.slowdown_a = static_cast<double>(t[0]) / static_cast<double>(std::max<core::TimeNs>(1, a_alone));
      p.slowdown_b = static_cast<double>(t[1]) / static_cast<double>(std::max<core::TimeNs>(1, b_alone));
      out.push_back(p);
    }
  }
  return out;
}

namespace {

/// `rounds` rounds of together(crowd_window) over the instances `lanes` (already placed in one
/// pool; names[l] is lane l's workload), each round bracketed by every workload alone
/// (solo_window), measured on its first lane. `previous_after` holds the solo means measured just
/// before, reused when it has every workload of the crowd, and gets those after the last round.
/// Returns ratio[round][lane]: the lane's typical mean in the round over its workload's solo
/// typical means just before and after the round, averaged.
std::vector<std::vector<double>> crowd_rounds(std::vector<Instance>& lanes, const std::vector<std::string>& names,
                                              const ProfileOptions& crowd_window, const ProfileOptions& solo_window,
                                              int rounds, std::map<std::string, core::TimeNs>& previous_after) {
  std::vector<Instance*> ins;
  for (Instance& in : lanes) ins.push_back(&in);
  std::map<std::string, Instance*> first_of;
  for (std::size_t l = 0; l < lanes.size(); ++l) first_of.emplace(names[l], &lanes[l]);
  auto solo_means = [&] {
    std::map<std::string, core::TimeNs> means;
    for (const auto& [name, in] : first_of) means[name] = solo_mean(*in, solo_window);
    return means;
  };
  const bool measured_just_now = std::all_of(first_of.begin(), first_of.end(),
                                             [&](const auto& f) { return previous_after.count(f.first) > 0; });
  std::map<std::string, core::TimeNs> before = measured_just_now ? previous_after : solo_means();
  std::vector<std::vector<double>> ratios;
  for (int round = 0; round < rounds; ++round) {
    const auto t = together(ins, crowd_window);
    const std::map<std::string, core::TimeNs> after = solo_means();
    std::vector<double>& r = ratios.emplace_back();
    for (std::size_t l = 0; l < lanes.size(); ++l) {
      const core::TimeNs alone = (before.at(names[l]) + after.at(names[l])) / 2;
      r.push_back(static_cast<double>(t[l]) / static_cast<double>(std::max<core::TimeNs>(1, alone)));
    }
    before = after;
  }
  previous_after = before;
  return ratios;
}

/// Instances of `names` placed in `pool`; false (and nothing placed) when they do not fit.
bool make_lanes(Device& device, MemoryPool& pool, const std::vector<std::string>& names, std::vector<Instance>& lanes) {
  lanes.clear();
  lanes.reserve(names.size());
  for (const std::string& n : names) lanes.push_back(make_instance(device, n));
  std::vector<Instance*> ins;
  for (Instance& in : lanes) ins.push_back(&in);
  try {
    place(pool, ins, 1);
  } catch (const core::InputError&) {
    return false;
  }
  return true;
}

void check_rounds(const ProfileOptions& o) {
  if (o.crowd_rounds < 1) throw core::InputError("--crowd-rounds: must be at least 1");
}

}  // namespace

std::vector<CrowdMeasurement> profile_crowds(Device& device, const std::vector<WorkloadMeasurement>& solo,
                                             const ProfileOptions& o, const std::vector<int>& sizes) {
  check_rounds(o);
  std::vector<std::string> measured;
  for (const WorkloadMeasurement& m : solo) {
    if (m.error.empty()) measured.push_back(m.name);
  }
  std::vector<CrowdMeasurement> out;
  if (measured.empty()) return out;
  std::map<std::string, core::TimeNs> previous_after;  // the solo means measured after the last crowd
  for (const int k : sizes) {
    if (k < 3) throw core::InputError("a crowd has at least 3 lanes, got " + std::to_string(k));
    std::vector<std::string> names;
    for (int l = 0; l < k; ++l) names.push_back(measured[static_cast<std::size_t>(l) % measured.size()]);
    std::vector<Instance> lanes;
    MemoryPool pool(device, o.capacity);
    if (!make_lanes(device, pool, names, lanes)) continue;  // k lanes of these workloads do not fit the pool
    ProfileOptions solo_window = o, crowd_window = o;
    solo_window.min_seconds = o.min_seconds / 2;
    crowd_window.min_seconds = o.min_seconds * k / 2.0 / o.crowd_rounds;
    const auto ratios = crowd_rounds(lanes, names, crowd_window, solo_window, o.crowd_rounds, previous_after);
    CrowdMeasurement c;
    c.workloads = names;
    for (std::size_t l = 0; l < lanes.size(); ++l) {
      std::vector<double> per_round;
      for (const auto& r : ratios) per_round.push_back(r[l]);
      c.slowdowns.push_back(median(std::move(per_round)));
    }
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<SweepMeasurement> profile_sweeps(Device& device, const std::vector<WorkloadMeasurement>& solo,
                                             const ProfileOptions& o, const std::vector<int>& sizes) {
  check_rounds(o);
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] < 2 || (i > 0 && sizes[i] <= sizes[i - 1])) {
      throw core::InputError("sweep sizes must be numbers of lanes >= 2, increasing");
    }
  }
  std::vector<SweepMeasurement> out;
  for (const WorkloadMeasurement& m : solo) {
    if (!m.error.empty() || sizes.empty()) continue;
    SweepMeasurement sw;
    sw.workload = m.name;
    std::map<std::string, core::TimeNs> previous_after;  // this workload alone after the last k
    for (const int k : sizes) {
      std::vector<Instance> lanes;
      const std::vector<std::string> names(static_cast<std::size_t>(k), m.name);
      MemoryPool pool(device, o.capacity);
      if (!make_lanes(device, pool, names, lanes)) {
        sw.did_not_fit = k;
        break;
      }
      ProfileOptions solo_window = o, crowd_window = o;
      solo_window.min_seconds = o.min_seconds / 2;
      crowd_window.min_seconds = o.min_seconds / o.crowd_rounds;
      crowd_window.iterations = std::max(1, (o.iterations + k - 1) / k);
      const auto ratios = crowd_rounds(lanes, names, crowd_window, solo_window, o.crowd_rounds, previous_after);
      std::vector<double> per_round;
      for (const auto& r : ratios) {
        double sum = 0;
        for (double v : r) sum += v;
        per_round.push_back(sum / static_cast<double>(r.size()));
      }
      sw.lanes.push_back(k);
      sw.slowdowns.push_back(median(std::move(per_round)));
    }
    out.push_back(std::move(sw));
  }
  return out;
}

core::TimeNs profile_switch(Device& device, const WorkloadMeasurement& m, const ProfileOptions& o, int switches) {
  const std::int64_t per_job = switches / 2 + 1;
  // The workload alone through the executor just before and just after the switching run, as
  // many iterations as the two jobs' together: the excess is relative to them, not to m.iter_ns
  // measured a minute earlier. On a shared machine whose speed drifts by a few per cent, that
  // difference (0.1-0.2 ms an iteration) is as large as the switching cost itself: the same
  // command gave 0.04 to 0.77 ms over one afternoon.
  // The excess is a difference of medians: one burst of a neighbour in either run moves a mean
  // by as much as the cost measured (mlp_64's excess by means read 0.02 to 0.65 ms in the 13
  // calibrations of one fidelity run pinned to one CPU; by medians 0.10-0.55 and 0.10-0.39 ms in
  // two later runs).
  std::vector<core::TimeNs> solo_times;
  auto solo = [&] {
    const ExecutorRun run = run_in_executor(device, m.name, 1, 2 * per_job, "fifo", core::LaneMode::kExclusive, o);
    const auto& times = run.stats.front().iteration_times_ns;
    solo_times.insert(solo_times.end(), times.begin(), times.end());
  };
  solo();
  const ExecutorRun run = run_in_executor(device, m.name, 2, per_job, "fair", core::LaneMode::kSingle, o);
  solo();
  if (run.switch_latencies.empty()) {
    throw core::InputError("switch measurement with " + m.name + ": the two jobs never took turns");
  }
  // The gap between one job's iteration and the other's, plus what the iterations after a switch
  // take beyond the solo iteration (the other job's data has taken the caches): the cost the
  // simulator adds to the first iteration after a switch.
  core::TimeNs gaps = 0;
  for (core::TimeNs g : run.switch_latencies) gaps += g;
  std::vector<core::TimeNs> switched;
  for (const RealJobStats& st : run.stats) switched.insert(switched.end(), st.iteration_times_ns.begin(), st.iteration_times_ns.end());
  const core::TimeNs excess = median(std::move(switched)) - median(std::move(solo_times));
  const auto n = static_cast<core::TimeNs>(run.switch_latencies.size());
  return gaps / n + std::max<core::TimeNs>(0, excess);
}

// ---- salus-profile: from its options to a catalog --------------------------------------------

namespace {

double round_to(double v, double unit) { return std::round(v / unit) * unit; }

}  // namespace


// Switches measured for `m`: 200, fewer for a slow workload, so that its switching run takes
// about twice --min-seconds (and the two solo runs around it as long), never fewer than 20.
int switch_count(const WorkloadMeasurement& m, const ProfileOptions& o) {
  const double per_s = 1e9 / static_cast<double>(std::max<core::TimeNs>(1, m.iter_ns));
  return static_cast<int>(std::clamp(2.0 * o.min_seconds * per_s, 20.0, 200.0));
}

std::optional<int> whole_int(const std::string& text) {
  int n = 0;
  std::size_t used = 0;
  try {
    n = std::stoi(text, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (used == 0 || used != text.size()) return std::nullopt;
  return n;
}

// A list of lane counts from `lowest` to 64, each once, in increasing order ("3,5,7"), or "off"
// (none); anything else is `option`'s error, with `example` as a list that would do.
std::vector<int> parse_lane_counts(const std::string& text, const std::string& option, int lowest,
                                   const std::string& example) {
  if (text == "off") return {};
  const std::string give = option + ": give a list such as " + example;
  std::vector<int> sizes;
  for (const std::string& item : core::split_list(text)) {
    if (item.empty()) throw core::InputError(option + ": an empty item in '" + text + "' (give a list such as " + example + ")");
    const int k = whole_int(item).value_or(-1);
    if (k < lowest || k > 64) {
      throw core::InputError(option + ": '" + item + "' is not a number of lanes from " + std::to_string(lowest) +
                             " to 64 (give a list such as " + example + ")");
    }
    if (!sizes.empty() && k <= sizes.back()) throw core::InputError(option + ": give the lane counts once each, increasing");
    sizes.push_back(k);
  }
  if (sizes.empty()) throw core::InputError(give);
  return sizes;
}

// --crowds: "off", or comma-separated lane counts from 3 to 64, each once, in increasing order.
std::vector<int> parse_crowd_sizes(const std::string& text) {
  return parse_lane_counts(text, "--crowds", 3, "3,5,7, or off");
}

// --sweeps: "off", "auto" (kAutoSweeps on a GPU, off on the CPU device, whose model is `crowds`),
// or comma-separated lane counts from 2 to 64, each once, in increasing order. 3, 5, 8 and 12:
// the fidelity trace runs up to 9-13 lanes at once, and in a 16 GiB pool 5 copies of resnet50_25
// or vgg11_25 fit, 8 of overfeat_25 (docs/results/2026-11-23-h100-runs.md: what the sweeps cost on an H100).
constexpr const char* kAutoSweeps = "3,5,8,12";
std::vector<int> parse_sweep_sizes(std::string text, const std::string& device) {
  if (text == "auto") text = device == "cpu" ? "off" : kAutoSweeps;
  return parse_lane_counts(text, "--sweeps", 2, "3,6,12, auto or off");
}

// --crowd-rounds: a number from 1 to 100, or auto: 1 on a GPU, whose iteration times hold still
// (eight alexnet_25 jobs one after another on the H100 averaged 5.916-5.942 ms, run2), 3 on the
// CPU device, whose speed drifts within a crowd's few seconds (profiler.h profile_crowds).
int parse_crowd_rounds(const std::string& text, const std::string& device) {
  if (text == "auto") return device == "cpu" ? kCrowdRounds : 1;
  int n = 0;
  std::size_t used = 0;
  try {
    n = std::stoi(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || n < 1 || n > 100) {
    throw core::InputError("--crowd-rounds: must be a number from 1 to 100, or auto, got '" + text + "'");
  }
  return n;
}

std::vector<std::string> parse_profile_workloads(const std::string& list) {
  std::vector<std::string> workloads;
  for (const std::string& w : core::split_list(list)) {
    if (w.empty()) throw core::InputError("--workloads: an empty item in '" + list + "' (valid: " + real_workload_help() + ")");
    if (!parse_real_workload(w)) {
      throw core::InputError("--workloads: no real model for workload '" + w + "' (valid: " + real_workload_help() + ")");
    }
    workloads.push_back(w);
  }
  if (workloads.empty()) throw core::InputError("--workloads: empty list");
  return workloads;
}

std::optional<std::string> fitting_interference(const std::string& device, bool pairs, bool crowds, bool sweeps) {
  // On the CPU device lanes time-slice the cores, so each lane beside adds the excess it causes in
  // a pair (`pairs`): six PACK runs of the fidelity trace pinned to one CPU (two sittings),
  // re-simulated with their calibrated catalogs, put the makespan -2.3, -3.1, -6.1, 12.5, -0.3 and
  // 1.7 % off with `pairs` against -8.2, -8.1, -8.6, 8.5, -5.3 and -3.6 % with `shares`. On a GPU
  // a crowd of lanes overlaps its kernels, which `shares` follows more closely (docs, the GPU
  // section). With crowds measured, the CPU's model is `crowds`: pairs, times what a crowd of 3 or
  // more lanes measured over what the pairs predict for it. One workload has no pair: no model is
  // named (`pairs` would refuse the empty table). On a GPU with sweeps, `capacity`: shares'
  // weights, the total scaled by the sweeps' C.
  if (!pairs) return std::nullopt;
  if (device == "cpu") return crowds ? "crowds" : "pairs";
  return sweeps ? "capacity" : "shares";
}

nlohmann::json workload_entry(const WorkloadMeasurement& m, std::optional<core::TimeNs> switch_ns,
                              const std::string& provenance) {
  nlohmann::json w;
  w["name"] = m.name;
  w["persistent_mib"] = round_to(core::to_mib(m.persistent), 0.01);
  w["ephemeral_mib"] = round_to(core::to_mib(m.ephemeral_peak), 0.01);
  // Exact figures: the MiB ones are rounded for reading, and a P rounded down would refuse the
  // job that needs it (salus-run checks the model's real persistent state against P).
  w["persistent_bytes"] = m.persistent;
  w["ephemeral_bytes"] = m.ephemeral_peak;
  w["iter_ms"] = round_to(static_cast<double>(m.iter_ns) / 1e6, 0.0001);
  w["iter_exec_mean_ms"] = round_to(static_cast<double>(m.iter_exec_mean_ns) / 1e6, 0.0001);
  w["iter_exec_median_ms"] = round_to(static_cast<double>(m.iter_exec_median_ns) / 1e6, 0.0001);
  w["iter_median_ms"] = round_to(static_cast<double>(m.iter_median_ns) / 1e6, 0.0001);
  w["first_iter_ms"] = round_to(static_cast<double>(m.first_iter_ns) / 1e6, 0.0001);
  w["gpu_util"] = round_to(m.gpu_util, 0.001);
  if (switch_ns) w["switch_ms"] = round_to(static_cast<double>(*switch_ns) / 1e6, 0.0001);
  w["source"] = provenance;
  return w;
}

namespace {

// What the catalog's "notes" say each figure is.
const char* const kMeasuredCatalogNotes =
    "P = the model's persistent state in the pool; E = the peak lane memory of one iteration; "
    "iter_ms = the typical mean of the solo iterations after the first (the median of the means of up to 9 "
    "consecutive blocks; iter_exec_mean_ms their plain mean, iter_exec_median_ms their median) and first_iter_ms the first, both measured through the real "
    "executor (one job alone, as salus-run runs it); iter_median_ms = the median of the profiler's own "
    "loop; gpu_util from the slowdown s of two copies in two lanes, u = clamp(s / 2, 0.05, 1); pairs: "
    "the typical mean iteration time together (over a window of at least the profile's minimum seconds) "
    "over the solo typical mean in the same loop and pool (the mean of one just before and one just "
    "after the pair; a copy beside itself is u's measurement, relative to its solo time just before and "
    "after too); switch_ms (each workload's, and the catalog's: that of the workload with the shortest "
    "iter_ms): the real executor's switching cost in one lane under FAIR, two copies taking turns (the "
    "mean gap between two jobs' iterations plus the median of their iterations over the median of its "
    "iterations alone through the executor just before and after); crowds: k lanes at once, the workloads in "
    "turn, in three rounds of at least k / 6 times the minimum seconds, each bracketed by every workload "
    "alone (half the minimum seconds); a lane's slowdown is the median over the rounds of its typical mean "
    "over its workload's solo typical means just before and after the round; sweeps: k copies of one "
    "workload at once, in rounds of at least the minimum seconds over the rounds, each bracketed by the "
    "workload alone; a point is the median over the rounds of the copies' mean slowdown";

// Every entry's "source": the device, its math, the CPUs, and how the figures were taken.
std::string measured_provenance(const Device& device, const ProfileOptions& opts) {
  return "measured on " + device.name() + " (math " + to_string(device.math()) +
         ", CPUs " + run::cpu_list_text(run::allowed_cpus()) +
         ") by salus-profile (pool " +
         core::format_size(opts.capacity) + ", executor mean over as many iterations as the "
         "profiler's loop took, at least " +
         run::count_text(static_cast<std::size_t>(opts.iterations), "iteration") + " and " +
         run::seconds_text(static_cast<core::TimeNs>(opts.min_seconds * 1e9)) +
         " s after " + std::to_string(opts.warmup) + " warm-up)";
}

// The pairs' entries (each also printed), and each workload beside itself printed.
nlohmann::json pairs_json(const std::vector<PairMeasurement>& pair_results, const std::vector<WorkloadMeasurement>& solo,
                          std::FILE* out) {
  nlohmann::json ps = nlohmann::json::array();
  for (const auto& p : pair_results) {
    ps.push_back({{"a", p.a}, {"b", p.b}, {"slowdown_a", round_to(p.slowdown_a, 0.001)},
                  {"slowdown_b", round_to(p.slowdown_b, 0.001)}});
    std::fprintf(out, "pair %s + %s: slowdown %.3f, %.3f\n", p.a.c_str(), p.b.c_str(), p.slowdown_a, p.slowdown_b);
  }
  // A workload beside a copy of itself is not written as a pair, though the catalog may carry one:
  // pinned to one CPU two copies read 1.9-2.3x (u holds 2), and the `pairs` model's sum over a
  // crowd of lanes with those figures put PACK's makespan 5-15 % over three measured runs, where
  // u's 2 put it -0.3 to 12.5 % (the 12.5 in a run whose calibrations read a slow phase).
  for (const auto& m : solo) {
    if (m.error.empty() && m.self_slowdown > 0) std::fprintf(out, "%s beside itself: slowdown %.3f\n", m.name.c_str(), m.self_slowdown);
  }
  return ps;
}

// The crowds' entries, each also printed with its mean slowdown.
nlohmann::json crowds_json(const std::vector<CrowdMeasurement>& crowd_results, std::FILE* out) {
  nlohmann::json cs = nlohmann::json::array();
  for (const auto& c : crowd_results) {
    nlohmann::json slowdowns = nlohmann::json::array();
    std::string text;
    double sum = 0;
    for (double s : c.slowdowns) {
      slowdowns.push_back(round_to(s, 0.001));
      sum += s;
      char one[32];
      std::snprintf(one, sizeof one, "%s%.3f", text.empty() ? "" : ", ", s);
      text += one;
    }
    cs.push_back({{"workloads", c.workloads}, {"slowdowns", slowdowns}});
    std::fprintf(out, "crowd of %zu lanes: slowdowns %s (mean %.3f)\n", c.workloads.size(), text.c_str(),
                sum / static_cast<double>(c.slowdowns.size()));
  }
  return cs;
}

// The sweeps' entries, each also printed with the C(k) the `capacity` model will read.
nlohmann::json sweeps_json(const std::vector<SweepMeasurement>& sweep_results, const std::vector<WorkloadMeasurement>& solo,
                           std::FILE* out) {
  nlohmann::json sws = nlohmann::json::array();
  for (const auto& sw : sweep_results) {
    const auto m = std::find_if(solo.begin(), solo.end(), [&](const WorkloadMeasurement& x) { return x.name == sw.workload; });
    std::string text;
    nlohmann::json slowdowns = nlohmann::json::array();
    for (std::size_t p = 0; p < sw.lanes.size(); ++p) {
      slowdowns.push_back(round_to(sw.slowdowns[p], 0.001));
      // C(k) = k u / s(k), what the `capacity` model will read (u rounded as the catalog has it).
      const double c = sw.lanes[p] * round_to(m->gpu_util, 0.001) / round_to(sw.slowdowns[p], 0.001);
      char one[64];
      std::snprintf(one, sizeof one, "%s%d lanes %.3f (C %.3f)", text.empty() ? "" : ", ", sw.lanes[p], sw.slowdowns[p], c);
      text += one;
    }
    if (sw.did_not_fit > 0) {
      text += (text.empty() ? "" : ", ") + run::count_text(static_cast<std::size_t>(sw.did_not_fit), "lane") +
              (sw.did_not_fit == 1 ? " does" : " do") + " not fit the pool";
    }
    std::fprintf(out, "sweep %s: %s\n", sw.workload.c_str(), text.c_str());
    if (!sw.lanes.empty()) sws.push_back({{"workload", sw.workload}, {"lanes", sw.lanes}, {"slowdowns", slowdowns}});
  }
  return sws;
}

}  // namespace

nlohmann::json measure_catalog(Device& device_ref, const std::string& device_name, const ProfileRequest& request,
                               std::FILE* out) {
  Device* const device = &device_ref;
  const ProfileOptions& opts = request.options;
  const bool measure_switch = request.measure_switch;
  const auto solo = profile_workloads(*device, request.workloads, opts);
  const auto pair_results = request.pairs ? profile_pairs(*device, solo, opts) : std::vector<PairMeasurement>{};
  const auto crowd_results = profile_crowds(*device, solo, opts, request.crowd_sizes);
  const auto sweep_results = profile_sweeps(*device, solo, opts, request.sweep_sizes);

  // The executor's switching cost, each workload's own: two copies of it taking turns in one lane
  // (what its iteration after another job's pays depends on how much of the caches it wants back:
  // on the CPU device mlp_64 about 0.24 ms, lenet_32 about 0.03 ms). The catalog's own switch_ms
  // is the workload's that switches most often per second, for jobs without an entry of theirs.
  const WorkloadMeasurement* fastest = nullptr;
  std::map<std::string, core::TimeNs> switch_by_workload;
  for (const auto& m : solo) {
    if (!m.error.empty()) continue;
    if (fastest == nullptr || m.iter_ns < fastest->iter_ns) fastest = &m;
    if (measure_switch) switch_by_workload[m.name] = profile_switch(*device, m, opts, switch_count(m, opts));
  }
  std::optional<core::TimeNs> switch_ns;
  if (measure_switch && fastest != nullptr) switch_ns = switch_by_workload.at(fastest->name);

  const std::string provenance = measured_provenance(*device, opts);
  nlohmann::json cat;
  cat["format"] = "salus-catalog/1";
  cat["gpu"] = device->name();  // the math mode is in every entry's source (the catalog has no key for it)
  cat["notes"] = kMeasuredCatalogNotes;
  if (switch_ns) cat["switch_ms"] = round_to(static_cast<double>(*switch_ns) / 1e6, 0.0001);
  nlohmann::json ws = nlohmann::json::array();
  std::string not_measured;
  std::fprintf(out, "%-16s %12s %12s %12s %12s %10s %12s\n", "workload", "P (MiB)", "E (MiB)", "iter (ms)", "first (ms)",
              "gpu_util", "switch (ms)");
  for (const auto& m : solo) {
    if (!m.error.empty()) {
      std::fprintf(out, "%-16s not measured: %s\n", m.name.c_str(), m.error.c_str());
      not_measured += (not_measured.empty() ? "" : "; ") + m.name + " " + m.error;
      continue;
    }
    char sw_text[32] = "-";
    std::optional<core::TimeNs> own_switch;
    if (const auto sw = switch_by_workload.find(m.name); sw != switch_by_workload.end()) {
      own_switch = sw->second;
      std::snprintf(sw_text, sizeof sw_text, "%.4f", static_cast<double>(sw->second) / 1e6);
    }
    ws.push_back(workload_entry(m, own_switch, provenance));
    std::fprintf(out, "%-16s %12.2f %12.2f %12.3f %12.3f %10.3f %12s\n", m.name.c_str(), core::to_mib(m.persistent),
                core::to_mib(m.ephemeral_peak), static_cast<double>(m.iter_ns) / 1e6,
                static_cast<double>(m.first_iter_ns) / 1e6, m.gpu_util, sw_text);
  }
  if (ws.empty()) throw core::InputError("--workloads: none of them fits a pool of " + core::format_size(opts.capacity));
  if (!not_measured.empty()) {
    cat["notes"] = cat["notes"].get<std::string>() + ". Not measured (they do not fit the pool): " + not_measured;
  }
  cat["workloads"] = ws;
  const nlohmann::json ps = pairs_json(pair_results, solo, out);
  cat["pairs"] = ps;
  const nlohmann::json cs = crowds_json(crowd_results, out);
  if (!cs.empty()) cat["crowds"] = cs;
  const nlohmann::json sws = sweeps_json(sweep_results, solo, out);
  if (!sws.empty()) cat["sweeps"] = sws;
  if (const auto model = fitting_interference(device_name, !ps.empty(), !cs.empty(), !sws.empty())) {
    cat["interference"] = *model;
  }
  if (switch_ns) {
    std::fprintf(out, "switching cost (%s, FAIR, one lane; the catalog's default): %.4f ms\n", fastest->name.c_str(),
                static_cast<double>(*switch_ns) / 1e6);
  }
  return cat;
}

void print_crowd_checks(const traces::Catalog& written, std::FILE* out) {
  if (!written.crowds().empty()) {
    // The factors the `crowds` model reads from this catalog, as salus-sim will.
    const run::CatalogInterference models = run::catalog_interference(written);
    for (const auto& [k, ppm] : models.crowd_factors) {
      std::fprintf(out, "crowd factor, %zu lanes: %.3f (measured over what the pairs predict)\n", k, static_cast<double>(ppm) / 1e6);
    }
    // With sweeps too: how the `capacity` model, made from the pairs and sweeps alone, predicts
    // the mixed crowds it never saw (a check of its law, not an input).
    if (!written.sweeps().empty() && !models.share_weights.empty()) {
      const sim::CapacityInterference capacity(models.share_weights, models.capacities);
      for (const traces::CrowdSlowdown& c : written.crowds()) {
        std::vector<core::JobSpec> jobs(c.workloads.size());
        std::vector<sim::RunningIteration> running;
        for (std::size_t l = 0; l < jobs.size(); ++l) {
          jobs[l].workload = c.workloads[l];
          jobs[l].gpu_util_ppm = written.find(c.workloads[l])->gpu_util_ppm;
        }
        for (const core::JobSpec& j : jobs) running.push_back({&j});
        std::vector<std::int64_t> predicted(jobs.size());
        capacity.slowdowns(running, predicted);
        std::string text;
        double measured_sum = 0, predicted_sum = 0;
        for (std::size_t l = 0; l < jobs.size(); ++l) {
          const double p = static_cast<double>(predicted[l]) / 1e6;
          measured_sum += c.slowdowns[l];
          predicted_sum += p;
          char one[48];
          std::snprintf(one, sizeof one, "%s%.2f/%.2f", text.empty() ? "" : ", ", c.slowdowns[l], p);
          text += one;
        }
        std::fprintf(out, "crowd of %zu lanes, measured/capacity model: %s (sums %.3f)\n", jobs.size(), text.c_str(),
                    measured_sum / predicted_sum);
      }
    }
  }
}

}  // namespace salus::gpu
