// gpus_needed: how many GPUs does sharing save? For a trace and a bound on average JCT (or on
// average queuing), the fewest GPUs that meet it with exclusive FIFO and with Salus under PACK
// and SRTF, found by bisection over the cluster size N; the paper's inference result (42 GPUs
// -> 1) asked of a training trace.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "core/errors.h"
#include "experiments/cli.h"
#include "experiments/paper_experiments.h"
#include "experiments/sim_runner.h"

namespace salus::experiments {

using nlohmann::json;

namespace {

struct Config {
  const char* label;
  const char* policy;
  const char* placement;
};
// Exclusive FIFO: one job per GPU, so any placement is first-fit. Salus: least-loaded spreads
// the jobs (first-fit would crowd a time-shared GPU while others idle: see cluster/README.md).
constexpr Config kConfigs[] = {{"fifo", "fifo", "first-fit"}, {"pack", "pack", "least-loaded"},
                               {"srtf", "srtf", "least-loaded"}};

template <typename... Args>
void report(const ExperimentContext& ctx, const char* fmt, Args... args) {
  if (ctx.log == nullptr) return;
  char buf[512];
  std::snprintf(buf, sizeof buf, fmt, args...);
  *ctx.log << buf;
}

struct Point {
  std::int64_t gpus;
  double avg_jct_s, avg_queuing_s;
  std::int64_t done;
};

}  // namespace

json run_gpus_needed(const ExperimentContext& ctx) {
  const std::string trace = ctx.trace.empty() ? ctx.data_dir + "/long_trace_100.csv" : ctx.trace;
  SimConfig cfg;
  cfg.capacity = ctx.capacity;
  cfg.switch_cost_ns = core::kNsPerMs;
  cfg.interference = "profiled";
  TraceJobs tj = load_jobs(trace, ctx.profiles, cfg.capacity, ctx.time_scale);
  const std::vector<core::JobSpec>& jobs = tj.jobs;
  if (jobs.empty()) throw core::InputError(trace + ": no jobs");
  double solo_sum = 0;
  for (const core::JobSpec& s : jobs) solo_sum += static_cast<double>(s.solo_ns()) / 1e9;
  const double avg_solo_s = solo_sum / static_cast<double>(jobs.size());
  const bool on_queue = ctx.bound_queue_min > 0;
  const double bound_s = on_queue ? ctx.bound_queue_min * 60 : ctx.bound_jct_min > 0 ? ctx.bound_jct_min * 60 : 2 * avg_solo_s;
  const char* kind = on_queue ? "avg_queuing" : "avg_jct";
  // Every job on its own GPU is the most a bound can ask for.
  std::int64_t total_gpus = 0;
  for (const core::JobSpec& s : jobs) total_gpus += s.gpus;

  auto run_at = [&](const Config& c, std::int64_t n) {
    SimConfig k = cfg;
    k.cluster = cluster::ClusterSpec::uniform(static_cast<std::int32_t>(n), cfg.capacity);
    k.placement = c.placement;
    const SimRun r = simulate(jobs, c.policy, k);
    return Point{n, r.metrics.avg_jct_s, r.metrics.avg_queuing_s, r.metrics.done};
  };
  auto meets = [&](const Point& p) {
    return p.done == static_cast<std::int64_t>(jobs.size()) && (on_queue ? p.avg_queuing_s : p.avg_jct_s) <= bound_s;
  };

  report(ctx, "gpus_needed: %s (%zu jobs, average solo time %.1f min), bound: %s <= %.1f min%s\n", trace.c_str(),
         jobs.size(), avg_solo_s / 60, on_queue ? "average queuing" : "average JCT", bound_s / 60,
         ctx.bound_jct_min > 0 || on_queue ? "" : " (2x the average solo time)");
  json out;
  out["experiment"] = "gpus_needed";
  out["version"] = 1;
  out["input"] = trace;
  out["profiles"] = ctx.profiles;
  out["time_scale"] = ctx.time_scale;  // as the other experiments record it: the trace was scaled by it
  out["gpu_mem_bytes"] = cfg.capacity;
  out["avg_solo_s"] = avg_solo_s;
  out["bound"] = {{"kind", kind}, {"seconds", bound_s}};
  json policies = json::object();
  for (const Config& c : kConfigs) {
    // Bisection for the fewest N that meets the bound, assuming more GPUs never hurt: lo fails
    // (or is 0), hi meets it.
    std::int64_t lo = 0, hi = total_gpus;
    std::vector<Point> tried;
    Point top = run_at(c, hi);
    tried.push_back(top);
    if (!meets(top)) {
      report(ctx, "  %-5s does not meet the bound even with %lld GPUs (%.1f min)\n", c.label,
             static_cast<long long>(hi), (on_queue ? top.avg_queuing_s : top.avg_jct_s) / 60);
      hi = -1;
    }
    while (hi > 0 && hi - lo > 1) {
      const std::int64_t mid = lo + (hi - lo) / 2;
      const Point p = run_at(c, mid);
      tried.push_back(p);
      (meets(p) ? hi : lo) = mid;
    }
    // The curve for the figure: every N from 1 to twice the answer (at least 8), and the
    // check that the bisection's answer is the first N on it that meets the bound.
    const std::int64_t upto = std::min(total_gpus, std::max<std::int64_t>(8, hi > 0 ? 2 * hi : total_gpus));
    json curve = json::array();
    std::int64_t first_meeting = -1;
    for (std::int64_t n = 1; n <= upto; ++n) {
      const Point p = run_at(c, n);
      curve.push_back({{"gpus", n}, {"avg_jct_s", p.avg_jct_s}, {"avg_queuing_s", p.avg_queuing_s}, {"done", p.done}});
      if (first_meeting < 0 && meets(p)) first_meeting = n;
    }
    policies[c.label] = {{"policy", c.policy},
                         {"placement", c.placement},
                         {"gpus_needed", hi > 0 ? json(hi) : json(nullptr)},
                         {"bisection_steps", tried.size()},
                         {"first_meeting_on_curve", first_meeting > 0 ? json(first_meeting) : json(nullptr)},
                         {"curve", std::move(curve)}};
    if (hi > 0) {
      report(ctx, "  %-5s %4lld GPUs (%s, placement %s)%s\n", c.label, static_cast<long long>(hi),
             c.policy, c.placement,
             first_meeting == hi ? "" : "  [the curve is not monotone here: the first N meeting the bound differs]");
    }
  }
  out["policies"] = std::move(policies);
  return out;
}

}  // namespace salus::experiments
