#include "real/profiler.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <map>
#include <thread>

#include "core/errors.h"
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
      throw core::InputError(workload + " in the executor failed: " + out.jobs[i].reason);
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

}  // namespace salus::gpu
