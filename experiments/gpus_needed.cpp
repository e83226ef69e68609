// gpus_needed: how many GPUs does sharing save? For a trace and a bound on average JCT (or on
// average queuing), the fewest GPUs that meet it with exclusive FIFO and SRTF and with Salus
// under PACK, SRTF and FAIR, every cluster size N from the widest job's up to the first that meets it;
// the paper's inference result (42 GPUs -> 1) asked of a training trace. Every N is run as
// `salus-sim --gpus N` runs it: the cluster with gang jobs (N = 1: the one-GPU path), the trace
// read and the model set by salus-sim's own options.
#include <algorithm>
#include <array>
#include <span>
#include <condition_variable>
#include <cstdio>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cluster/lease_policy.h"
#include "cluster/placement.h"
#include "core/errors.h"
#include "core/units.h"
#include "experiments/bound_watch.h"
#include "run/cli.h"
#include "run/cpus.h"
#include "run/output.h"
#include "experiments/gpus_search.h"
#include "experiments/paper_experiments.h"
#include "run/sim_runner.h"
#include "traces/csv.h"
#include "policies/registry.h"

namespace salus::experiments {

// The experiments are configurations over the runner seam (run/).
using namespace salus::run;

using nlohmann::json;

namespace {

/// One line of the table, the JSON and the figure.
struct Config {
  const char* name;       ///< key under "policies"
  const char* label;      ///< what the table, the JSON and the figure call it
  const char* policy;
  bool exclusive;         ///< one job at a time on each GPU, whatever --lanes says
};
// Each policy on its own default placement (cluster::default_placement), as salus-sim runs it,
// unless --placement names one for all. Exclusive SRTF tells SRTF's reordering from its
// sharing: the core's exclusive mode admits one job and keeps it until it ends, so it is the
// shortest waiting job first, not preemptive (experiments/README.md).
constexpr Config kConfigs[] = {{"fifo", "exclusive FIFO", "fifo", true},
                               {"srtf_exclusive", "exclusive SRTF", "srtf", true},
                               {"pack", "Salus PACK", "pack", false},
                               {"srtf", "Salus SRTF", "srtf", false},
                               {"fair", "Salus FAIR", "fair", false}};

/// The largest cluster the search simulates: each GPU is a scheduler of its own, so a trace whose
/// widest job needs more (a gpus column of 100000000) is refused before anything is sized by it.
constexpr std::int64_t kMaxSearchGpus = 100'000;

/// Points of the curve spread evenly up to twice the answer, besides every N the search ran.
constexpr std::int64_t kCurvePoints = 8;
/// The N just above the answer run as well, each of them: where a larger cluster misses the bound
/// again it shows first.
constexpr std::int64_t kRunAbove = 4;

/// One N run: in full, or stopped early where it certainly missed the bound (BoundWatch), when
/// it has no averages.
struct Point {
  std::int64_t gpus = 0;
  double avg_jct_s = 0, avg_queuing_s = 0, makespan_s = 0;
  std::int64_t done = 0, rejected = 0;
  bool missed_early = false;  ///< stopped at stopped_at_s: the averages above are not set
  double stopped_at_s = 0;    ///< simulated time of the stop
  double lower_bound_s = 0;   ///< the bounded average would have been at least this
};

/// The curve's entry for a point. A point stopped early has no averages (null): it is known to
/// miss the bound, by at least lower_bound_s - bound.
json point_json(const Point& p) {
  if (p.missed_early) {
    return {{"gpus", p.gpus},         {"avg_jct_s", nullptr},       {"avg_queuing_s", nullptr},
            {"makespan_s", nullptr},  {"done", nullptr},            {"missed_early", true},
            {"stopped_at_s", p.stopped_at_s}, {"lower_bound_s", p.lower_bound_s}};
  }
  return {{"gpus", p.gpus},           {"avg_jct_s", p.avg_jct_s}, {"avg_queuing_s", p.avg_queuing_s},
          {"makespan_s", p.makespan_s}, {"done", p.done},         {"missed_early", false}};
}

/// Where to look for the answer, from the trace alone: [widest, peak].
struct SearchBounds {
  std::int64_t widest = 1;   ///< GPUs of the widest gang job: fewer cannot run it
  std::string widest_id;     ///< its id
  double work_gpu_s = 0;     ///< sum over jobs of GPUs x solo time (switching cost included)
  double span_s = 0;         ///< first arrival to the last end, every job started at its arrival
  std::int64_t peak = 1;     ///< the most GPUs the jobs occupy at once, so started (at least `widest`)
};

SearchBounds search_bounds(const std::vector<core::JobSpec>& jobs, core::TimeNs switch_ns) {
  SearchBounds b;
  std::vector<std::pair<core::TimeNs, std::int64_t>> events;  // (time, +gpus at a start, -gpus at an end)
  events.reserve(2 * jobs.size());
  core::TimeNs first = jobs.front().arrival_ns, last = first;
  for (const core::JobSpec& s : jobs) {
    // Solo, as the simulator runs it alone: every iteration, the first one's extra time and at
    // most one switch (a GPU whose lane last ran another job charges it on the first iteration).
    const core::TimeNs solo = s.solo_ns() + s.first_iter_extra_ns + std::max(switch_ns, s.switch_ns);
    if (s.gpus > b.widest) {
      b.widest = s.gpus;
      b.widest_id = s.id;
    }
    b.work_gpu_s += static_cast<double>(s.gpus) * static_cast<double>(solo) / 1e9;
    first = std::min(first, s.arrival_ns);
    last = std::max(last, s.arrival_ns + solo);
    events.emplace_back(s.arrival_ns, s.gpus);
    events.emplace_back(s.arrival_ns + solo, -static_cast<std::int64_t>(s.gpus));
  }
  // Ends before starts at one instant: the cluster takes completions before arrivals.
  std::sort(events.begin(), events.end());
  std::int64_t busy = 0;
  for (const auto& [t, d] : events) b.peak = std::max(b.peak, busy += d);
  b.span_s = static_cast<double>(last - first) / 1e9;
  return b;
}

/// What the search assumes and guarantees, as the output's note and the JSON's search.guarantee.
std::string search_guarantee(const SearchBounds& b) {
  return "the search runs every N from " + std::to_string(b.widest) + " (the widest job: fewer GPUs cannot run it) "
         "upward until one meets the bound, up to " + std::to_string(b.peak) +
         " (the peak demand, every job started at its arrival; larger N are not run): the answer is exact, every N "
         "below it was run and misses, whatever the curve's shape (more GPUs can raise the average); a run is "
         "stopped early once a lower bound on its average (what has happened by then; without profile noise, also "
         "each job's solo time from its start) exceeds the bound, so it "
         "certainly misses (the curve marks it missed_early, without averages); the curve adds "
         "the " + std::to_string(kRunAbove) + " N above the answer and " + std::to_string(kCurvePoints) +
         " spread to twice it, and each rise seen among its complete runs is noted after the table";
}

std::string minutes_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f min", s / 60);
  return buf;
}

/// What one configuration's search and curve found.
struct ConfigResult {
  json entry;        ///< under "policies"
  std::string row;   ///< of the printed table
  std::string note;  ///< where the curve rises (empty: it never does among the N run)
};

/// "Salus SRTF: the curve rises (more GPUs, a larger average) at 12 -> 13 GPUs (318.3 -> 417.7 s); ..."
std::string rise_note(const char* label, const std::vector<Rise>& up, const std::vector<std::int64_t>& missed_above,
                      std::int64_t answer) {
  std::string text = std::string(label) + ": the curve rises (more GPUs, a larger average) at ";
  for (std::size_t i = 0; i < up.size(); ++i) {
    char step[112];
    std::snprintf(step, sizeof step, "%s%lld -> %lld GPUs (%.1f -> %.1f s)", i == 0 ? "" : ", ",
                  static_cast<long long>(up[i].from), static_cast<long long>(up[i].to), up[i].from_value,
                  up[i].to_value);
    text += step;
  }
  if (!missed_above.empty()) {
    text += "; above its answer " + std::to_string(answer) + " it misses the bound again at";
    for (const std::int64_t n : missed_above) text += " " + std::to_string(n);
    text += " GPUs";
  }
  return text;
}

/// Everything the runs share (read-only while they run, several at once: run_configs).
struct Search {
  const ExperimentContext& ctx;
  std::span<const Config> configs;  ///< kConfigs, then the cluster policies asked for
  std::size_t policy_width;         ///< the table's policy column: 7, or the longest name
  const std::vector<core::JobSpec>& jobs;
  const SimConfig& cfg;
  const ModelOptions& model;
  const SearchBounds& bounds;
  bool on_queue;
  double bound_s;
};

/// The configuration's SimConfig, as salus-sim runs it.
SimConfig config_for(const Search& s, const Config& c) {
  SimConfig k = s.cfg;
  if (cluster::is_lease_policy(c.policy)) {
    // Whole GPUs, or the lanes beneath (--gpu-sharing) placed and run as their per-GPU policy's.
    if (!k.gpu_sharing.empty()) k.placement = cluster::placement_for(k.gpu_sharing, s.model.placement);
    return k;
  }
  k.placement = cluster::placement_for(c.policy, s.model.placement);
  if (c.exclusive) k.lanes = core::LaneMode::kExclusive;
  return k;
}

/// Runs the trace on N GPUs under the configuration; with `stop_early`, stops it once it
/// certainly misses the bound (BoundWatch). Called from several threads at once, for one
/// configuration too: its state is its own, the progress meter locks its own.
Point run_point(const Search& s, const Config& c, std::int64_t n, bool stop_early) {
  SimConfig k = config_for(s, c);
  // N = 1 is salus-sim's one-GPU path (run_schedule), as `--gpus 1` runs it.
  if (n > 1) k.cluster = cluster::ClusterSpec::uniform(static_cast<std::int32_t>(n), s.cfg.capacity);
  core::ProgressHook meter;
  if (s.ctx.progress != nullptr) {
    meter = s.ctx.progress->hook("gpus_needed: " + std::string(c.label) + " on " + std::to_string(n) + " GPUs", s.jobs);
  }
  // Solo is a floor on each job's run from its first start where no iteration is faster than the
  // profile: no profile noise, and GPUs of no named kind (ClusterSpec::uniform).
  BoundWatch watch(s.jobs, s.on_queue ? BoundKind::kAvgQueuing : BoundKind::kAvgJct, s.bound_s,
                   s.cfg.profile_noise == 0 ? solo_floors(s.jobs) : std::vector<core::TimeNs>{});
  k.progress = stop_early ? watch_hook(watch, std::move(meter)) : std::move(meter);
  Point p{.gpus = n};
  try {
    const PolicyRun r = simulate(s.jobs, c.policy, k);
    p.avg_jct_s = r.metrics.avg_jct_s;
    p.avg_queuing_s = r.metrics.avg_queuing_s;
    p.makespan_s = static_cast<double>(r.metrics.makespan_ns) / 1e9;
    p.done = r.metrics.done;
    p.rejected = r.metrics.rejected;
  } catch (const BoundMissed& m) {
    p.missed_early = true;
    p.stopped_at_s = static_cast<double>(m.at_ns) / 1e9;
    p.lower_bound_s = m.lower_bound_s;
  }
  if (s.ctx.progress != nullptr) s.ctx.progress->end_run();
  return p;
}

/// Whether a run meets the bound: every job that fits a GPU done (one too large is rejected at
/// every N >= the widest job), the bounded average at most the bound.
bool meets(const Search& s, const Point& p) {
  return !p.missed_early && p.done + p.rejected == static_cast<std::int64_t>(s.jobs.size()) &&
         (s.on_queue ? p.avg_queuing_s : p.avg_jct_s) <= s.bound_s;
}

/// The N of a configuration's curve, ascending: every N the search ran, the kRunAbove N above the
/// answer, and kCurvePoints spread evenly from the widest job to twice the answer.
std::vector<std::int64_t> curve_ns(const SearchBounds& b, const FewestGpus& search) {
  const bool found = search.gpus.has_value();
  const std::int64_t hi = found ? *search.gpus : -1;
  const std::int64_t from = std::max<std::int64_t>(1, b.widest);
  const std::int64_t to = found ? std::min(b.peak, std::max(2 * hi, from + 3)) : b.peak;
  std::vector<std::int64_t> ns = search.evaluated;
  for (std::int64_t n = hi + 1; found && n <= std::min(b.peak, hi + kRunAbove); ++n) ns.push_back(n);
  for (std::int64_t i = 0; i < kCurvePoints; ++i) ns.push_back(from + (to - from) * i / (kCurvePoints - 1));
  std::sort(ns.begin(), ns.end());
  ns.erase(std::unique(ns.begin(), ns.end()), ns.end());
  return ns;
}

/// One configuration's line, from its search and every N of its curve run (`tried`).
ConfigResult config_result(const Search& s, const Config& c, const FewestGpus& search,
                           const std::map<std::int64_t, Point>& tried) {
  const SimConfig k = config_for(s, c);
  // A cluster policy leases whole GPUs and places on them itself (cluster/preemptive.h), unless
  // lanes beneath it share them (--gpu-sharing): then as the per-GPU policy's.
  const bool whole = cluster::is_lease_policy(c.policy) && k.gpu_sharing.empty();
  const std::string& per_gpu = cluster::is_lease_policy(c.policy) ? k.gpu_sharing : c.policy;
  const core::LaneMode lanes = whole ? core::LaneMode::kExclusive : lane_mode_for(*policies::make_policy(per_gpu), k);
  const std::string placement = whole ? "consolidated" : k.placement;
  auto value = [&](const Point& p) { return s.on_queue ? p.avg_queuing_s : p.avg_jct_s; };
  const SearchBounds& b = s.bounds;
  const bool found = search.gpus.has_value();
  const std::int64_t hi = found ? *search.gpus : -1;
  // The N the scan needed, the widest job's to the answer (or the peak), whatever ran beside it.
  const std::size_t search_runs = search.evaluated.size();
  json curve = json::array();
  std::int64_t first_meeting = -1;
  std::map<std::int64_t, double> values;  // the complete runs': a run stopped early has no average
  std::vector<std::int64_t> missed_above;  // N above the answer, on the curve, that miss the bound
  std::int64_t stopped_early = 0;
  for (std::int64_t n : curve_ns(b, search)) {
    const Point& p = tried.at(n);
    curve.push_back(point_json(p));
    if (p.missed_early) ++stopped_early;
    else values[n] = value(p);
    if (first_meeting < 0 && meets(s, p)) first_meeting = n;
    if (found && n > hi && !meets(s, p)) missed_above.push_back(n);
  }
  const std::vector<Rise> up = rises(values);
  json rises_json = json::array();
  for (const Rise& r : up) {
    rises_json.push_back({{"from", r.from}, {"to", r.to}, {"from_s", r.from_value}, {"to_s", r.to_value}});
  }
  const Point& shown = tried.at(found ? hi : b.peak);
  // The jobs rejected are those too large for a GPU, the same at every N: any complete run's.
  json rejected = nullptr;
  for (const auto& [n, p] : tried) {
    if (!p.missed_early) {
      rejected = p.rejected;
      break;
    }
  }
  ConfigResult out;
  out.entry = {{"label", c.label},
               {"policy", c.policy},
               {"lane_mode", core::to_string(lanes)},
               {"placement", placement},
               {"queue", cluster::to_string(k.queue)},
               {"gpus_needed", found ? json(hi) : json(nullptr)},
               {"rejected", rejected},
               {"search_runs", search_runs},
               {"simulations", tried.size()},
               {"stopped_early", stopped_early},
               {"first_meeting_on_curve", first_meeting > 0 ? json(first_meeting) : json(nullptr)},
               {"rises", std::move(rises_json)},
               {"missed_above", missed_above},
               {"curve", std::move(curve)}};
  // A run stopped early has no averages: the bounded one is shown as more than the bound.
  const std::string over = "> " + minutes_text(s.bound_s);
  const std::string jct_text = !shown.missed_early ? minutes_text(shown.avg_jct_s) : s.on_queue ? "-" : over;
  const std::string queuing_text = !shown.missed_early ? minutes_text(shown.avg_queuing_s) : s.on_queue ? over : "-";
  char row[360];
  std::snprintf(row, sizeof row, "  %-16s %-*s %-10s %-13s %11s   %14s  %11s  %11zu  %13lld%s\n", c.label,
                static_cast<int>(s.policy_width), c.policy,
                core::to_string(lanes), placement.c_str(), found ? std::to_string(hi).c_str() : "-",
                jct_text.c_str(), queuing_text.c_str(), tried.size(), static_cast<long long>(stopped_early),
                !found ? ("  [not met by any N from " + std::to_string(b.widest) + " to " + std::to_string(b.peak) +
                          " GPUs, the peak demand]").c_str()
                : !up.empty() ? "  [curve rises: see note]"
                              : "");
  if (!up.empty()) out.note = rise_note(c.label, up, missed_above, found ? hi : -1);
  out.row = row;
  if (rejected.is_number() && rejected.get<std::int64_t>() > 0) {
    out.row += "    (" + std::to_string(rejected.get<std::int64_t>()) + " jobs fit no GPU of " + core::format_size(s.cfg.capacity) +
               ": rejected at every N, left out of the averages)\n";
  }
  return out;
}

/// One configuration's runs as the pool makes them (read and written under the pool's lock).
struct ConfigRuns {
  explicit ConfigRuns(GpuScan search) : scan(std::move(search)) {}
  GpuScan scan;                          ///< the search: which N may start, and the answer
  std::map<std::int64_t, Point> tried;   ///< every N run, once
  bool curve_planned = false;            ///< the search is over and curve_left set
  std::vector<std::int64_t> curve_left;  ///< the curve's N not started by the search, largest first
  std::size_t running = 0;               ///< its runs under way
};

/// Every configuration's search and curve, each N one run, `slots` runs at a time whatever
/// configuration they belong to, so that when the quick configurations are done the slow one has
/// every slot. A configuration's search starts its N in turn up to kRunAbove above the smallest N
/// not known to miss (GpuScan, window kRunAbove + 1), so an N started above the answer is one of
/// the kRunAbove its curve runs anyway; once the answer is known the rest of its curve is run. The
/// N run, and every outcome, are those of one run at a time: the output does not depend on `slots`.
std::vector<ConfigResult> run_configs(const Search& s, std::size_t slots) {
  const std::size_t n_configs = s.configs.size();
  std::vector<ConfigRuns> runs;
  runs.reserve(n_configs);
  for (std::size_t i = 0; i < n_configs; ++i) {
    runs.emplace_back(GpuScan(s.bounds.widest, s.bounds.peak, kRunAbove + 1));
  }
  struct Task {
    std::size_t config = 0;
    std::int64_t n = 0;
    bool search = false;  ///< its outcome goes to the scan
  };
  std::mutex mutex;
  std::condition_variable changed;  // a run ended (or failed): more may start, or all is done
  std::size_t in_flight = 0;
  std::exception_ptr failure;
  // The next run to start, from the configuration with the fewest runs under way (then in
  // kConfigs' order); nullopt when none may start now. Under the lock.
  auto pick = [&]() -> std::optional<Task> {
    std::vector<std::size_t> order(n_configs);
    for (std::size_t i = 0; i < n_configs; ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return runs[a].running < runs[b].running; });
    for (const std::size_t i : order) {
      ConfigRuns& r = runs[i];
      if (!r.scan.done()) {
        if (const std::optional<std::int64_t> n = r.scan.next()) return Task{.config = i, .n = *n, .search = true};
        continue;
      }
      if (!r.curve_planned) {
        // The search started lo, lo + 1, ..., started_below() - 1: the curve's N from there on
        // are left to run.
        for (const std::int64_t n : curve_ns(s.bounds, r.scan.result())) {
          if (n >= r.scan.started_below()) r.curve_left.push_back(n);
        }
        std::reverse(r.curve_left.begin(), r.curve_left.end());
        r.curve_planned = true;
      }
      if (!r.curve_left.empty()) {
        const std::int64_t n = r.curve_left.back();
        r.curve_left.pop_back();
        return Task{.config = i, .n = n, .search = false};
      }
    }
    return std::nullopt;
  };
  auto work = [&] {
    std::unique_lock<std::mutex> lock(mutex);
    while (!failure) {
      const std::optional<Task> t = pick();
      if (!t) {
        if (in_flight == 0) return;  // every configuration's search is over and its curve run
        changed.wait(lock);
        continue;
      }
      ++in_flight;
      ++runs[t->config].running;
      lock.unlock();
      Point p;
      std::exception_ptr error;
      try {
        p = run_point(s, s.configs[t->config], t->n, true);
      } catch (...) {
        error = std::current_exception();
      }
      lock.lock();
      --in_flight;
      --runs[t->config].running;
      if (error) {
        if (!failure) failure = error;  // the others start nothing more; it is thrown once they are back
        changed.notify_all();
        return;
      }
      ConfigRuns& r = runs[t->config];
      if (t->search) r.scan.record(t->n, meets(s, p));
      r.tried.emplace(t->n, p);
      changed.notify_all();
    }
  };
  auto guarded = [&] {
    try {
      work();
    } catch (...) {
      const std::lock_guard<std::mutex> lock(mutex);
      if (!failure) failure = std::current_exception();
      changed.notify_all();
    }
  };
  std::vector<std::thread> threads;
  for (std::size_t w = 1; w < slots; ++w) threads.emplace_back(guarded);
  guarded();
  for (std::thread& t : threads) t.join();
  if (failure) std::rethrow_exception(failure);
  std::vector<ConfigResult> results;
  for (std::size_t i = 0; i < n_configs; ++i) {
    results.push_back(config_result(s, s.configs[i], runs[i].scan.result(), runs[i].tried));
  }
  return results;
}

/// Where Salus PACK needs more GPUs than exclusive FIFO, why, from PACK's curve at the largest N
/// that fails the bound (on the curve: the N before the answer): the time its jobs spend running
/// against their solo time (exclusive FIFO runs every job at solo speed), and the queuing. Empty
/// when PACK needs no more GPUs than FIFO (or either has no answer). Where the search stopped
/// that run early, `pack_in_full(N)` runs it in full (the curve's entry for it).
std::string sharing_costs_gpus(const json& policies, double avg_solo_s, const std::string& interference,
                               const std::function<json(std::int64_t)>& pack_in_full) {
  const json& fifo = policies.at("fifo");
  const json& pack = policies.at("pack");
  if (!fifo.at("gpus_needed").is_number() || !pack.at("gpus_needed").is_number()) return "";
  const auto nf = fifo.at("gpus_needed").get<std::int64_t>();
  const auto np = pack.at("gpus_needed").get<std::int64_t>();
  if (np <= nf) return "";
  auto at = [&](const json& config) -> const json* {
    for (const json& p : config.at("curve")) {
      if (p.at("gpus").get<std::int64_t>() == np - 1) return &p;
    }
    return nullptr;
  };
  const json* p = at(pack);
  if (p == nullptr) return "";
  json full;
  if (p->at("missed_early").get<bool>()) {
    full = pack_in_full(np - 1);
    p = &full;
  }
  const double jct = p->at("avg_jct_s").get<double>(), queuing = p->at("avg_queuing_s").get<double>();
  const double running = jct - queuing;
  char text[768];
  std::snprintf(text, sizeof text,
                "why PACK needs more GPUs than exclusive FIFO (%lld against %lld): at %lld GPUs its average JCT "
                "%.1f min is %.1f min of queuing and %.1f min of running, %+.0f %% over the average solo time "
                "%.1f min, which exclusive FIFO runs at: lanes sharing a GPU slow each other (interference %s)",
                static_cast<long long>(np), static_cast<long long>(nf), static_cast<long long>(np - 1), jct / 60,
                queuing / 60, running / 60, avg_solo_s > 0 ? 100 * (running / avg_solo_s - 1) : 0.0, avg_solo_s / 60,
                interference.c_str());
  std::string why = text;
  if (const json* f = at(fifo); f != nullptr && !f->at("missed_early").get<bool>()) {
    std::snprintf(text, sizeof text, "; exclusive FIFO there: %.1f min of queuing, average JCT %.1f min",
                  f->at("avg_queuing_s").get<double>() / 60, f->at("avg_jct_s").get<double>() / 60);
    why += text;
  }
  return why + "\n";
}

}  // namespace

json run_gpus_needed(const ExperimentContext& ctx) {
  const std::string trace_path = ctx.trace.empty() ? ctx.data_dir + "/long_trace_100.csv" : ctx.trace;
  // Gang jobs stay gang jobs (0: no fold onto one GPU); the model as salus-sim sets it.
  TraceJobs loaded = load_jobs(trace_path, ctx.profiles, ctx.capacity, ctx.time_scale, ctx.load, 0);
  SimConfig cfg;
  cfg.capacity = ctx.capacity;
  ModelOptions model = ctx.model;
  model.interference = ctx.interference;
  apply_model(model, loaded, cfg);
  const std::vector<core::JobSpec>& jobs = loaded.jobs;
  if (jobs.empty()) throw core::InputError(trace_path + ": no jobs");
  const auto n_jobs = static_cast<std::int64_t>(jobs.size());

  double solo_sum = 0;
  std::int64_t gang_jobs = 0;
  for (const core::JobSpec& s : jobs) {
    solo_sum += static_cast<double>(s.solo_ns()) / 1e9;
    gang_jobs += s.gpus > 1 ? 1 : 0;
  }
  const double avg_solo_s = solo_sum / static_cast<double>(n_jobs);
  const bool on_queue = ctx.bound_queue_min > 0;
  const double bound_s = on_queue ? ctx.bound_queue_min * 60 : ctx.bound_jct_min > 0 ? ctx.bound_jct_min * 60 : 2 * avg_solo_s;
  const char* kind = on_queue ? "avg_queuing" : "avg_jct";
  const SearchBounds sb = search_bounds(jobs, cfg.switch_cost_ns);
  if (sb.widest > kMaxSearchGpus) {
    throw core::InputError("gpus_needed: job '" + traces::text_excerpt(sb.widest_id) + "' needs " +
                           std::to_string(sb.widest) + " GPUs; the search simulates clusters of at most " +
                           std::to_string(kMaxSearchGpus) + " GPUs");
  }

  // The five configurations, then each cluster policy asked for (named by the registry's
  // entry, which lives as long as the program), each GPU holding whole jobs.
  std::vector<Config> configs(std::begin(kConfigs), std::end(kConfigs));
  std::vector<std::string> labels;  // with lanes beneath: "dlas-gpu on pack lanes" (kept while configs live)
  labels.reserve(ctx.cluster_policies.size());
  for (const std::string& name : ctx.cluster_policies) {
    const char* entry = cluster::lease_registry().at(name).name.data();  // a literal's view: NUL-terminated
    labels.push_back(name + (cfg.gpu_sharing.empty() ? "" : " on " + cfg.gpu_sharing + " lanes"));
    configs.push_back(Config{entry, cfg.gpu_sharing.empty() ? entry : labels.back().c_str(), entry, true});
  }
  std::vector<std::string> policy_names;
  for (const Config& c : kConfigs) {
    if (!c.exclusive || std::string(c.policy) == "fifo") policy_names.emplace_back(c.policy);
  }
  std::vector<std::string> notes = loaded.trace.notes;
  for (const std::string& n : model_notes(policy_names, cfg)) notes.push_back(n);
  for (std::string& n : lease_run_notes(ctx.cluster_policies, cfg)) notes.push_back(std::move(n));
  notes.push_back("exclusive SRTF: one job at a time on each GPU, the waiting job with the least solo time first; "
                  "not preemptive (a job keeps its GPU until it ends: the core's exclusive mode)" +
                  (cfg.lanes ? std::string("; --lanes ") + core::to_string(*cfg.lanes) + " does not apply to it" : ""));
  if (gang_jobs > 0) {
    notes.push_back(std::to_string(gang_jobs) + (gang_jobs == 1 ? " job needs" : " jobs need") +
                    " more than one GPU: k replicas in lock-step on k GPUs (gang), as salus-sim --gpus N runs them (--gangs " +
                    std::string(cluster::to_string(cfg.gangs)) +
                    (cfg.gangs == cluster::GangMode::kHold ? ": a replica chosen on its GPU holds its lane until every replica's GPU has chosen it"
                                                           : ": on GPUs with no other job, kept to itself while it runs") +
                    "); no cluster smaller than " + std::to_string(sb.widest) + " GPUs is tried");
  }
  const std::string guarantee = search_guarantee(sb);
  notes.push_back(guarantee);

  auto log = [&](const std::string& text) {
    if (ctx.log != nullptr) *ctx.log << text << std::flush;
  };
  {
    char head[256];
    std::snprintf(head, sizeof head, "%zu jobs, widest %lld GPU%s, average solo time %.1f min", jobs.size(),
                  static_cast<long long>(sb.widest), sb.widest == 1 ? "" : "s", avg_solo_s / 60);
    log("gpus_needed: " + trace_path + " (" + traces::to_string(loaded.trace.format) + ", " + head + "), GPUs of " +
        core::format_size(cfg.capacity) + ", queue " + std::string(cluster::to_string(cfg.queue)) + ", interference " +
        cfg.interference + ", switch cost " + seconds_text(cfg.switch_cost_ns * 1000) + " ms\n");
  }
  for (const std::string& n : notes) log("note: " + n + "\n");
  {
    char line[512];
    std::snprintf(line, sizeof line,
                  "bound: %s <= %.1f min%s; every N from %lld (the widest job) up to %lld (the peak demand, every "
                  "job started at its arrival) until one meets it; work %.1f GPU-h over a span of %.2f h: %.2f GPUs "
                  "busy on average\n",
                  on_queue ? "average queuing" : "average JCT", bound_s / 60,
                  ctx.bound_jct_min > 0 || on_queue ? "" : " (2x the average solo time)",
                  static_cast<long long>(sb.widest), static_cast<long long>(sb.peak), sb.work_gpu_s / 3600,
                  sb.span_s / 3600, sb.span_s > 0 ? sb.work_gpu_s / sb.span_s : 0.0);
    log(line);
  }

  json out;
  out["experiment"] = "gpus_needed";
  out["version"] = 3;
  out["input"] = trace_path;
  out["trace_format"] = traces::to_string(loaded.trace.format);
  out["profiles"] = ctx.profiles;
  out["time_scale"] = ctx.time_scale;  // as the other experiments record it: the trace was scaled by it
  out["gpu_mem_bytes"] = cfg.capacity;
  out["interference"] = cfg.interference;
  if (cfg.interference == "shares") out["share_exponent"] = cfg.share_exponent;
  out["switch_cost_ms"] = static_cast<double>(cfg.switch_cost_ns) / 1e6;
  out["lane_shrink"] = cfg.lane_shrink;
  out["lanes"] = cfg.lanes ? json(core::to_string(*cfg.lanes)) : json(nullptr);
  out["jobs"] = n_jobs;
  out["gang_jobs"] = gang_jobs;
  out["avg_solo_s"] = avg_solo_s;
  out["bound"] = {{"kind", kind}, {"seconds", bound_s}};
  out["search"] = {{"method", "scan"},
                   {"lower", sb.widest},
                   {"upper", sb.peak},
                   {"guarantee", guarantee},

                   {"widest_job_gpus", sb.widest},
                   {"work_gpu_s", sb.work_gpu_s},
                   {"span_s", sb.span_s}};
  out["notes"] = notes;

  std::size_t policy_width = 7;
  for (const Config& c : configs) policy_width = std::max(policy_width, std::string_view(c.policy).size());
  std::string table = "  configuration    policy" + std::string(policy_width - 5, ' ') +
                      "lanes      placement     GPUs needed   at it: avg JCT  avg queuing  "
                      "simulations  stopped early\n";
  // The runs are independent: as many at once as this process has CPUs, up to what the searches
  // can start at once (run_configs: the output does not depend on it).
  const Search search{ctx, configs, policy_width, jobs, cfg, model, sb, on_queue, bound_s};
  const std::size_t n_configs = configs.size();
  std::vector<ConfigResult> results =
      run_configs(search, std::clamp<std::size_t>(allowed_cpus().size(), 1, n_configs * (kRunAbove + 1)));
  json policies = json::object();
  for (std::size_t i = 0; i < n_configs; ++i) {
    policies[configs[i].name] = std::move(results[i].entry);
    table += results[i].row;
  }
  log(table);
  json notes_out = out["notes"];
  for (const ConfigResult& r : results) {
    if (r.note.empty()) continue;
    log("note: " + r.note + "\n");
    notes_out.push_back(r.note);
  }
  out["notes"] = std::move(notes_out);
  // The explanation reads PACK's averages at the N below its answer, a run of the search: where
  // it was stopped early, that N is run again in full for it (one run; the curve keeps the stop).
  auto run_in_full = [&](std::int64_t n) {
    const Config& pack = *std::find_if(std::begin(kConfigs), std::end(kConfigs),
                                       [](const Config& c) { return std::string(c.name) == "pack"; });
    return point_json(run_point(search, pack, n, false));
  };
  if (const std::string why = sharing_costs_gpus(policies, avg_solo_s, cfg.interference, run_in_full); !why.empty()) {
    log(why);
    out["pack_over_fifo"] = why;
  }
  out["policies"] = std::move(policies);
  return out;
}

}  // namespace salus::experiments
