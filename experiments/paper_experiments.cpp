#include "experiments/paper_experiments.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <span>
#include <sstream>

#include "core/errors.h"
#include "core/summary.h"
#include "run/cli.h"
#include "experiments/fidelity.h"
#include "run/output.h"
#include "run/sim_runner.h"

namespace salus::experiments {

// The experiments are configurations over the runner seam (run/).
using namespace salus::run;
namespace {

using nlohmann::json;

// The real variants' traces (relative to the data directory).
constexpr const char* kLongTraceReal = "experiments/long_trace_real.csv";
constexpr const char* kFairThreeReal = "experiments/fair_three_real.csv";
// Version 2 of every experiment: "config" says which executor ran it (executor, device,
// time_scale), and the runs may come from the real backend.
constexpr int kVersion = 2;

double seconds(core::TimeNs ns) { return static_cast<double>(ns) / 1e9; }
double mib(core::Bytes b) { return static_cast<double>(b) / static_cast<double>(core::kMiB); }

/// printf into the experiment's report stream.
template <typename... Args>
void report(const ExperimentContext& ctx, const char* fmt, Args... args) {
  if (ctx.log == nullptr) return;
  char buf[512];
  std::snprintf(buf, sizeof buf, fmt, args...);
  *ctx.log << buf;
}

/// The simulator settings every experiment uses: the GPU of the context, 1 ms switching cost
/// (the paper's switches take well under a second; salus-run measures ours), and the profiled
/// interference model, which is what makes packing pay off or not.
SimConfig paper_config(const ExperimentContext& ctx) {
  SimConfig cfg;
  cfg.capacity = ctx.capacity;
  cfg.switch_cost_ns = core::kNsPerMs;
  cfg.interference = "profiled";
  cfg.record_timeline = true;
  return cfg;
}

/// The runner of the context's executor with the experiment's simulator settings.
std::unique_ptr<PolicyRunner> runner_for(const ExperimentContext& ctx, const SimConfig& cfg) {
  if (ctx.make_runner) return ctx.make_runner(cfg);
  return std::make_unique<SimRunner>(cfg);
}

/// "config": the executor's settings (same keys on either), the input and the catalog.
json config_json(const ExperimentContext& ctx, const PolicyRunner& runner, const std::string& input) {
  json j = runner.config();
  j["input"] = input;
  j["profiles"] = ctx.profiles;
  j["time_scale"] = ctx.time_scale;
  return j;
}

/// The simulator's input or, on the real backend, the real variant's.
std::string input_path(const ExperimentContext& ctx, const std::string& sim_relative, const std::string& real_relative) {
  return ctx.data_dir + "/" + (ctx.real ? real_relative : sim_relative);
}

/// Loads a trace with the context's catalog and time scale and makes its jobs ready for `runner`
/// (reporting what the runner did to them).
TraceJobs load_for(const ExperimentContext& ctx, PolicyRunner& runner, const std::string& trace, core::Bytes capacity) {
  TraceJobs tj = load_jobs(trace, ctx.profiles, capacity, ctx.time_scale);
  for (const std::string& note : runner.prepare(tj.jobs)) report(ctx, "note: %s\n", note.c_str());
  return tj;
}

/// One shipped trace under one policy, with the experiments' settings and the timeline recorded.
struct OneRun {
  std::string trace;
  SimConfig cfg;
  TraceJobs tj;
  PolicyRun run;
  json config;
};
OneRun run_shipped(const ExperimentContext& ctx, const std::string& sim_relative, const std::string& real_relative,
                   const char* policy) {
  OneRun r{input_path(ctx, sim_relative, real_relative), paper_config(ctx), {}, {}, {}};
  const auto runner = runner_for(ctx, r.cfg);
  r.tj = load_for(ctx, *runner, r.trace, r.cfg.capacity);
  r.run = runner->run(r.tj.jobs, policy, true);
  r.config = config_json(ctx, *runner, r.trace);
  return r;
}

/// Batch size from a workload name such as "inception3_50"; 0 when the name has none.
std::int64_t batch_of(const std::string& workload) {
  const auto us = workload.find_last_of('_');
  if (us == std::string::npos || us + 1 == workload.size()) return 0;
  std::int64_t b = 0;
  for (std::size_t i = us + 1; i < workload.size(); ++i) {
    if (workload[i] < '0' || workload[i] > '9') return 0;
    b = b * 10 + (workload[i] - '0');
  }
  return b;
}

// ---------------------------------------------------------------------------------------------
// long_trace: Table 1 and Fig. 7.

struct PaperRow {
  const char* policy;
  double makespan_min, queuing_min, jct_min, p95_min;
};
// The paper's Table 2 (arXiv numbering; Table 1 in the issue), in minutes as printed.
constexpr PaperRow kPaperTable[] = {{"fifo", 303.4, 167.6, 170.6, 251.1},
                                    {"srtf", 306.0, 28.6, 53.4, 217.0},
                                    {"pack", 287.4, 129.9, 145.5, 266.1},
                                    {"fair", 301.6, 58.5, 96.6, 281.2}};

json jct_cdf(const std::vector<core::JobSpec>& jobs, const core::ScheduleOutcome& out) {
  std::vector<core::TimeNs> jct;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    if (out.jobs[i].status == core::JobStatus::kDone) jct.push_back(out.jobs[i].finish_ns - jobs[i].arrival_ns);
  }
  std::sort(jct.begin(), jct.end());
  json points = json::array();
  for (std::size_t i = 0; i < jct.size(); ++i) {
    points.push_back({seconds(jct[i]), static_cast<double>(i + 1) / static_cast<double>(jct.size())});
  }
  return points;
}

json long_trace(const ExperimentContext& ctx) {
  const std::string trace = input_path(ctx, "long_trace_100.csv", kLongTraceReal);
  const SimConfig cfg = paper_config(ctx);
  const auto runner = runner_for(ctx, cfg);
  const TraceJobs tj = load_for(ctx, *runner, trace, cfg.capacity);
  std::vector<PolicyRun> runs;
  for (const char* p : {"fifo", "srtf", "pack", "fair"}) runs.push_back(runner->run(tj.jobs, p, true));
  if (!ctx.out_dir.empty()) write_run_files(ctx.out_dir + "/long_trace", tj.jobs, runs);

  json j{{"experiment", "long_trace"}, {"version", kVersion}, {"config", config_json(ctx, *runner, trace)}};
  j["config"]["jobs"] = tj.jobs.size();
  report(ctx, "long_trace: %zu jobs of %s on one %s GPU (%s executor)\n", tj.jobs.size(), trace.c_str(),
         core::format_size(cfg.capacity).c_str(), std::string(runner->executor()).c_str());
  if (ctx.real) report(ctx, "(the paper's figures in brackets are for its own 100-job trace, not this variant)\n");
  report(ctx, "%-6s %-10s | %21s | %21s | %21s | %21s\n", "policy", "lanes", "makespan min (paper)",
         "avg queuing min (pap)", "avg JCT min (paper)", "p95 JCT min (paper)");
  for (std::size_t r = 0; r < runs.size(); ++r) {
    const PolicyRun& run = runs[r];
    const core::RunMetrics& m = run.metrics;
    const PaperRow& p = kPaperTable[r];
    j["policies"][run.policy] = {{"makespan_s", seconds(m.makespan_ns)},
                                 {"avg_queuing_s", m.avg_queuing_s},
                                 {"avg_jct_s", m.avg_jct_s},
                                 {"p95_jct_s", seconds(m.p95_jct_ns)},
                                 {"lane_mode", core::to_string(run.lane_mode)},
                                 {"done", m.done},
                                 {"rejected", m.rejected},
                                 {"switches", run.outcome.switches},
                                 {"max_concurrent_lanes", run.outcome.max_concurrent_lanes}};
    // The paper's figures are for its own trace: a real variant's JSON has "paper": null.
    if (ctx.real) {
      j["paper"] = nullptr;
    } else {
      j["paper"][p.policy] = {{"makespan_s", p.makespan_min * 60},
                              {"avg_queuing_s", p.queuing_min * 60},
                              {"avg_jct_s", p.jct_min * 60},
                              {"p95_jct_s", p.p95_min * 60}};
    }
    j["jct_cdf"][run.policy] = jct_cdf(tj.jobs, run.outcome);
    report(ctx, "%-6s %-10s | %10.1f (%7.1f) | %10.1f (%7.1f) | %10.1f (%7.1f) | %10.1f (%7.1f)\n",
           run.policy.c_str(), core::to_string(run.lane_mode), seconds(m.makespan_ns) / 60, p.makespan_min,
           m.avg_queuing_s / 60, p.queuing_min, m.avg_jct_s / 60, p.jct_min, seconds(m.p95_jct_ns) / 60, p.p95_min);
  }
  const auto& pol = j["policies"];
  const double fifo_over_srtf = pol["fifo"]["avg_jct_s"].get<double>() / pol["srtf"]["avg_jct_s"].get<double>();
  const double fifo_over_fair = pol["fifo"]["avg_jct_s"].get<double>() / pol["fair"]["avg_jct_s"].get<double>();
  j["avg_jct_fifo_over_srtf"] = fifo_over_srtf;
  j["avg_jct_fifo_over_fair"] = fifo_over_fair;
  report(ctx, "avg JCT FIFO/SRTF: %.2fx (paper 3.19x); FIFO/FAIR: %.2fx (paper %.2fx)\n", fifo_over_srtf,
         fifo_over_fair, 170.6 / 96.6);
  for (const PolicyRun& run : runs) {
    if (run.metrics.done != static_cast<std::int64_t>(tj.jobs.size())) {
      report(ctx, "note: %s finished %lld of %zu jobs\n", run.policy.c_str(), static_cast<long long>(run.metrics.done),
             tj.jobs.size());
    }
  }
  return j;
}

// ---------------------------------------------------------------------------------------------
// srtf_snapshot: Fig. 8a (a slice of jobs preempting each other) and Fig. 8b (memory across a
// switch), from the long trace under SRTF in one lane, where only one iteration runs at a time
// and every iteration takes exactly its profiled time.

struct Interval {
  core::TimeNs start, end;
};

/// Parts of [start, end) not covered by the sorted, disjoint `busy` intervals.
std::vector<Interval> gaps(core::TimeNs start, core::TimeNs end, const std::vector<Interval>& busy) {
  std::vector<Interval> out;
  core::TimeNs t = start;
  for (const Interval& b : busy) {
    if (b.start > t) out.push_back({t, std::min(b.start, end)});
    t = std::max(t, b.end);
    if (t >= end) break;
  }
  if (t < end) out.push_back({t, end});
  return out;
}

constexpr std::size_t kSnapshotOtherJobs = 5;  // the paper's Fig. 8a shows jobs #0..#5
constexpr std::int64_t kIterationsAroundSwitch = 3;

json srtf_snapshot(const ExperimentContext& ctx) {
  const OneRun one = run_shipped(ctx, "long_trace_100.csv", "long_trace_100.csv", "srtf");
  const std::string& trace = one.trace;
  const SimConfig& cfg = one.cfg;
  const PolicyRun& run = one.run;
  const auto& jobs = one.tj.jobs;
  const core::ScheduleOutcome& out = run.outcome;
  std::vector<core::Segment> segs = out.segments;
  std::sort(segs.begin(), segs.end(), [](const core::Segment& a, const core::Segment& b) { return a.start_ns < b.start_ns; });

  // The background job: the one preempted most often (most separate runs), as job #0 of Fig. 8a.
  std::vector<int> runs_of(jobs.size(), 0);
  for (const core::Segment& s : segs) ++runs_of[static_cast<std::size_t>(s.job)];
  const auto bg = static_cast<core::JobIndex>(std::max_element(runs_of.begin(), runs_of.end()) - runs_of.begin());
  const core::TimeNs bg_finish = out.jobs[static_cast<std::size_t>(bg)].finish_ns;
  std::size_t first = 0;
  while (first < segs.size() && !(segs[first].job == bg && segs[first].end_ns < bg_finish)) ++first;
  if (runs_of[static_cast<std::size_t>(bg)] < 2 || first + 1 >= segs.size()) {
    throw core::InputError(trace + ": no job is preempted under SRTF, so there is no snapshot to show");
  }
  // The window: from that run of the background job until it finishes or a sixth other job runs.
  const core::TimeNs t0 = segs[first].start_ns;
  core::TimeNs t1 = bg_finish;
  std::vector<core::JobIndex> others;
  for (std::size_t k = first + 1; k < segs.size() && segs[k].start_ns < bg_finish; ++k) {
    const core::JobIndex jb = segs[k].job;
    if (jb == bg || std::find(others.begin(), others.end(), jb) != others.end()) continue;
    if (others.size() == kSnapshotOtherJobs) {
      t1 = segs[k].start_ns;
      break;
    }
    others.push_back(jb);
  }
  std::stable_sort(others.begin(), others.end(), [&](core::JobIndex a, core::JobIndex b) {
    return core::arrives_before(jobs[static_cast<std::size_t>(a)], jobs[static_cast<std::size_t>(b)]);
  });
  std::vector<core::JobIndex> rows{bg};
  rows.insert(rows.end(), others.begin(), others.end());
  std::map<core::JobIndex, std::string> label;
  json gantt_jobs = json::array(), bars = json::array();
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const core::JobIndex jb = rows[r];
    const core::JobSpec& s = jobs[static_cast<std::size_t>(jb)];
    const core::JobState& st = out.jobs[static_cast<std::size_t>(jb)];
    label[jb] = "#" + std::to_string(r);
    gantt_jobs.push_back({{"label", label[jb]},
                          {"id", s.id},
                          {"workload", s.workload},
                          {"arrival_s", seconds(s.arrival_ns)},
                          {"finish_s", seconds(st.finish_ns)}});
    std::vector<Interval> running;
    for (const core::Segment& sg : segs) {
      if (sg.job != jb || sg.end_ns <= t0 || sg.start_ns >= t1) continue;
      running.push_back({std::max(sg.start_ns, t0), std::min(sg.end_ns, t1)});
    }
    for (const Interval& iv : running) {
      bars.push_back({{"job", r}, {"state", "running"}, {"start_s", seconds(iv.start)}, {"end_s", seconds(iv.end)}});
    }
    const core::TimeNs w0 = std::max(s.arrival_ns, t0), w1 = std::min(st.finish_ns, t1);
    if (w0 < w1) {
      for (const Interval& iv : gaps(w0, w1, running)) {
        bars.push_back({{"job", r}, {"state", "waiting"}, {"start_s", seconds(iv.start)}, {"end_s", seconds(iv.end)}});
      }
    }
  }

  // Fig. 8b: the switch from the background job to the job that preempted it.
  const core::Segment& a = segs[first];
  const core::Segment& b = segs[first + 1];
  const core::JobSpec& sa = jobs[static_cast<std::size_t>(a.job)];
  const core::JobSpec& sb = jobs[static_cast<std::size_t>(b.job)];
  struct Iter {
    core::JobIndex job;
    core::TimeNs start, end;
    core::Bytes ephemeral;
  };
  std::vector<Iter> iters;
  for (std::int64_t m = std::max<std::int64_t>(0, a.iterations - kIterationsAroundSwitch); m < a.iterations; ++m) {
    const core::TimeNs s0 = a.start_ns + a.switch_ns + m * sa.iter_ns;
    iters.push_back({a.job, s0, s0 + sa.iter_ns, sa.ephemeral});
  }
  for (std::int64_t m = 0; m < std::min(b.iterations, kIterationsAroundSwitch); ++m) {
    const core::TimeNs s0 = b.start_ns + b.switch_ns + m * sb.iter_ns;
    iters.push_back({b.job, s0, s0 + sb.iter_ns, sb.ephemeral});
  }
  SALUS_INVARIANT(iters.back().end <= b.end_ns && iters.front().start >= a.start_ns,
                  "single-lane SRTF iterations take their profiled time", sa.id + " -> " + sb.id);
  const core::TimeNs m0 = iters.front().start, m1 = iters.back().end;
  std::vector<core::TimeNs> cuts{m0, m1};
  for (const Iter& it : iters) cuts.insert(cuts.end(), {it.start, it.end});
  for (const core::MemorySample& ms : out.memory) {
    if (ms.time_ns > m0 && ms.time_ns < m1) cuts.push_back(ms.time_ns);
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  auto persistent_at = [&](core::TimeNs t) {
    core::Bytes p = 0;
    for (const core::MemorySample& ms : out.memory) {
      if (ms.time_ns > t) break;
      p = ms.persistent;
    }
    return p;
  };
  json steps{{"t_s", json::array()}, {"persistent_mib", json::array()}, {"ephemeral_mib", json::array()}};
  for (const core::TimeNs t : cuts) {
    core::Bytes e = 0;
    for (const Iter& it : iters) {
      if (it.start <= t && t < it.end) e = it.ephemeral;
    }
    steps["t_s"].push_back(seconds(t));
    steps["persistent_mib"].push_back(mib(persistent_at(t)));
    steps["ephemeral_mib"].push_back(mib(e));
  }
  json iter_json = json::array();
  for (const Iter& it : iters) {
    iter_json.push_back({{"job", label[it.job]},
                         {"start_s", seconds(it.start)},
                         {"end_s", seconds(it.end)},
                         {"ephemeral_mib", mib(it.ephemeral)}});
  }

  json j{{"experiment", "srtf_snapshot"}, {"version", kVersion}, {"config", one.config}};
  j["gantt"] = {{"window_s", {seconds(t0), seconds(t1)}}, {"jobs", gantt_jobs}, {"bars", bars}};
  j["memory"] = {{"window_s", {seconds(m0), seconds(m1)}},
                 {"switch_s", seconds(a.end_ns)},
                 {"switch_cost_s", seconds(b.switch_ns)},
                 {"from_job", label[a.job]},
                 {"to_job", label[b.job]},
                 {"capacity_mib", mib(cfg.capacity)},
                 {"steps", steps},
                 {"iterations", iter_json}};
  report(ctx, "srtf_snapshot: window %.1f-%.1f s of the long trace under SRTF (one lane), %zu jobs:\n", seconds(t0),
         seconds(t1), rows.size());
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const core::JobSpec& s = jobs[static_cast<std::size_t>(rows[r])];
    const core::JobState& st = out.jobs[static_cast<std::size_t>(rows[r])];
    report(ctx, "  #%zu %-8s %-16s arrives %8.1f s, remaining solo at arrival %7.1f s, finishes %8.1f s, %d runs\n", r,
           s.id.c_str(), s.workload.c_str(), seconds(s.arrival_ns), seconds(s.solo_ns()), seconds(st.finish_ns),
           runs_of[static_cast<std::size_t>(rows[r])]);
  }
  report(ctx, "  switch %s -> %s at %.3f s: %s's next iteration starts %.1f ms later (paper: \"immediately\")\n",
         label[a.job].c_str(), label[b.job].c_str(), seconds(a.end_ns), label[b.job].c_str(),
         static_cast<double>(b.start_ns + b.switch_ns - a.end_ns) / 1e6);
  return j;
}

// ---------------------------------------------------------------------------------------------
// fair_three: Fig. 9, three inception3_50 jobs arriving at 0, 15 and 30 s under FAIR.

json fair_three(const ExperimentContext& ctx) {
  const OneRun one = run_shipped(ctx, "experiments/fair_three.csv", kFairThreeReal, "fair");
  const PolicyRun& run = one.run;
  const auto& jobs = one.tj.jobs;
  const core::ScheduleOutcome& out = run.outcome;
  // 5 s bins: with three jobs taking turns an iteration at a time, a bin much shorter than a few
  // rounds shows the turns rather than the shares (Fig. 9 plots shares).
  constexpr core::TimeNs kBin = 5 * core::kNsPerS;
  const auto bins = static_cast<std::size_t>((out.end_ns + kBin - 1) / kBin);
  // Images per bin, each run's images spread evenly over the time it ran after the switching
  // cost (in the simulator's one lane every iteration takes exactly its profiled time; on the
  // real backend a run's iterations are taken to be equally long).
  std::vector<std::vector<double>> images(jobs.size(), std::vector<double>(bins, 0.0));
  for (const core::Segment& sg : out.segments) {
    const core::JobSpec& s = jobs[static_cast<std::size_t>(sg.job)];
    const double per_iter = static_cast<double>(std::max<std::int64_t>(1, batch_of(s.workload)));
    const core::TimeNs begin = sg.start_ns + sg.switch_ns;
    const core::TimeNs end = sg.end_ns;
    if (end <= begin || sg.iterations == 0) continue;
    const double rate = per_iter * static_cast<double>(sg.iterations) / static_cast<double>(end - begin);  // images per ns
    for (auto bin = static_cast<std::size_t>(begin / kBin); bin < bins && static_cast<core::TimeNs>(bin) * kBin < end; ++bin) {
      const core::TimeNs lo = std::max(begin, static_cast<core::TimeNs>(bin) * kBin);
      const core::TimeNs hi = std::min(end, static_cast<core::TimeNs>(bin + 1) * kBin);
      if (hi > lo) images[static_cast<std::size_t>(sg.job)][bin] += rate * static_cast<double>(hi - lo);
    }
  }
  json j{{"experiment", "fair_three"}, {"version", kVersion}, {"config", one.config}};
  const bool batched = batch_of(jobs.front().workload) > 0;
  j["bin_s"] = seconds(kBin);
  j["unit"] = batched ? "images/s" : "iterations/s";
  json t_s = json::array(), total = json::array();
  for (std::size_t b = 0; b < bins; ++b) t_s.push_back(seconds(static_cast<core::TimeNs>(b) * kBin) + seconds(kBin) / 2);
  std::vector<double> sum(bins, 0.0);
  report(ctx, "fair_three: %zu jobs of %s under FAIR in one lane (%s executor)\n", jobs.size(),
         jobs.front().workload.c_str(), one.config["executor"].get<std::string>().c_str());
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const std::string name = "job " + std::to_string(i + 1);
    j["jobs"].push_back({{"label", name},
                         {"id", jobs[i].id},
                         {"workload", jobs[i].workload},
                         {"arrival_s", seconds(jobs[i].arrival_ns)},
                         {"finish_s", seconds(out.jobs[i].finish_ns)}});
    json series = json::array();
    for (std::size_t b = 0; b < bins; ++b) {
      // The last bin ends with the run, so its rate is over the part of it that was simulated.
      const double width = seconds(std::min(kBin, out.end_ns - static_cast<core::TimeNs>(b) * kBin));
      series.push_back(images[i][b] / width);
      sum[b] += images[i][b] / width;
    }
    j["throughput"][name] = series;
    report(ctx, "  %s arrives %5.1f s, finishes %6.1f s\n", name.c_str(), seconds(jobs[i].arrival_ns),
           seconds(out.jobs[i].finish_ns));
  }
  for (double v : sum) total.push_back(v);
  j["t_s"] = t_s;
  j["total"] = total;
  // The share each job gets while all three run, and the total throughput then versus alone.
  const core::TimeNs all_from = jobs.back().arrival_ns;
  core::TimeNs all_to = out.end_ns;
  for (const core::JobState& st : out.jobs) all_to = std::min(all_to, st.finish_ns);
  if (all_to - all_from >= 2 * kBin) {
    const auto b0 = static_cast<std::size_t>(all_from / kBin) + 1, b1 = static_cast<std::size_t>(all_to / kBin);
    double tot = 0, alone = 0;
    std::vector<double> share(jobs.size(), 0.0);
    for (std::size_t b = b0; b < b1; ++b) {
      tot += sum[b];
      for (std::size_t i = 0; i < jobs.size(); ++i) share[i] += images[i][b];
    }
    const double window_images = std::accumulate(share.begin(), share.end(), 0.0);
    for (std::size_t b = 1; b + 1 < static_cast<std::size_t>(jobs[1].arrival_ns / kBin); ++b) alone += sum[b];
    const double alone_rate = alone / std::max<double>(1, static_cast<double>(jobs[1].arrival_ns / kBin) - 2);
    const double all_rate = tot / static_cast<double>(b1 - b0);
    j["while_all_three"] = {{"from_s", seconds(all_from)}, {"to_s", seconds(all_to)}, {"total", all_rate},
                            {"alone_total", alone_rate}, {"shares", json::array()}};
    report(ctx, "  while all three run (%.0f-%.0f s): total %.1f %s (alone: %.1f); shares", seconds(all_from),
           seconds(all_to), all_rate, j["unit"].get<std::string>().c_str(), alone_rate);
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      j["while_all_three"]["shares"].push_back(share[i] / window_images);
      report(ctx, " %.3f", share[i] / window_images);
    }
    report(ctx, " (paper: each about a third, total unchanged)\n");
  }
  return j;
}

// ---------------------------------------------------------------------------------------------
// hyperparam: Fig. 11, 300 jobs of one workload submitted together, FIFO versus PACK.

json hyperparam(const ExperimentContext& ctx) {
  struct Set {
    const char* workload;
    double paper_speedup;
  };
  constexpr Set kSets[] = {{"resnet50_50", 1.07}, {"superres_128", 2.38}};
  // The real variant: two real-backend workloads, a heavy one and a light one (no paper figure).
  constexpr Set kRealSets[] = {{"lenet_32", 0}, {"mlp_64", 0}};
  const SimConfig cfg = paper_config(ctx);
  const auto runner = runner_for(ctx, cfg);
  json j{{"experiment", "hyperparam"}, {"version", kVersion}, {"config", config_json(ctx, *runner, "traces/experiments/")}};
  j["config"].erase("input");
  report(ctx, "hyperparam: makespan of %s jobs of one workload submitted together, FIFO vs PACK\n",
         ctx.real ? "the real variant's" : "300");
  report(ctx, "%-14s %10s %10s %8s %8s %6s %6s\n", "workload", "fifo min", "pack min", "speedup", "(paper)", "lanes",
         "u");
  for (const Set& set : ctx.real ? std::span<const Set>(kRealSets) : std::span<const Set>(kSets)) {
    const std::string file = std::string("experiments/hyperparam_") + set.workload;
    const std::string trace = input_path(ctx, file + ".csv", file + "_real.csv");
    const TraceJobs tj = load_for(ctx, *runner, trace, cfg.capacity);
    const PolicyRun fifo = runner->run(tj.jobs, "fifo", false);
    const PolicyRun pack = runner->run(tj.jobs, "pack", false);
    const double speedup = static_cast<double>(fifo.metrics.makespan_ns) / static_cast<double>(pack.metrics.makespan_ns);
    const double u = static_cast<double>(tj.jobs.front().gpu_util_ppm) / 1e6;
    j[set.workload] = {{"jobs", tj.jobs.size()},
                       {"input", trace},
                       {"fifo_makespan_s", seconds(fifo.metrics.makespan_ns)},
                       {"pack_makespan_s", seconds(pack.metrics.makespan_ns)},
                       {"speedup", speedup},
                       {"paper_speedup", set.paper_speedup > 0 ? json(set.paper_speedup) : json(nullptr)},
                       {"gpu_util", u},
                       {"max_concurrent_lanes", pack.outcome.max_concurrent_lanes},
                       {"done", {{"fifo", fifo.metrics.done}, {"pack", pack.metrics.done}}}};
    char paper[16] = "       -";
    if (set.paper_speedup > 0) std::snprintf(paper, sizeof paper, "%7.2fx", set.paper_speedup);
    report(ctx, "%-14s %10.2f %10.2f %7.2fx %s %6lld %6.2f\n", set.workload, seconds(fifo.metrics.makespan_ns) / 60,
           seconds(pack.metrics.makespan_ns) / 60, speedup, paper, static_cast<long long>(pack.outcome.max_concurrent_lanes),
           u);
  }
  return j;
}

json inference(const ExperimentContext& ctx) {
  return run_inference_experiment(ctx, ctx.data_dir + "/experiments/inference.json");
}

constexpr ExperimentRegistry::Entry kExperiments[] = {
    {"long_trace", "the 100-job trace under FIFO, SRTF, PACK, FAIR: Table 1 and the JCT CDFs (Fig. 7)",
     {kVersion, "long_trace_100.csv",
      "experiments/long_trace_real.csv: 16 jobs of the real backend's lenet_32 and mlp_64 arriving over 18.3 s "
      "(the paper's workloads are too large for the real backend's CPU device)",
      &long_trace}},
    {"srtf_snapshot",
     "a slice of the long trace under SRTF: jobs preempting each other (Fig. 8a), memory across a switch (Fig. 8b)",
     {kVersion, "long_trace_100.csv", "", &srtf_snapshot}},
    {"fair_three", "three jobs of one workload arriving in turn under FAIR: throughput over time (Fig. 9)",
     {kVersion, "experiments/fair_three.csv (inception3_50 at 0, 15, 30 s)",
      "experiments/fair_three_real.csv: three lenet_32 jobs arriving at 0, 15 and 30 s", &fair_three}},
    {"hyperparam", "300 resnet50_50 jobs and 300 superres_128 jobs submitted together: FIFO vs PACK makespan (Fig. 11)",
     {kVersion, "experiments/hyperparam_resnet50_50.csv, experiments/hyperparam_superres_128.csv",
      "experiments/hyperparam_lenet_32_real.csv, experiments/hyperparam_mlp_64_real.csv: 8 jobs of each submitted "
      "together",
      &hyperparam}},
    {"inference",
     "42 inference jobs (14 models x 3): GPUs needed without sharing, with MPS-style static partitioning and with "
     "Salus; request latency (Fig. 10)",
     {1, "experiments/inference.json", "", &inference}},
    {"gpus_needed",
     "how many GPUs does sharing save: the fewest that meet a bound on average JCT (or queuing), exclusive FIFO "
     "and SRTF vs Salus PACK, SRTF and FAIR, by bisection over the cluster size (gang jobs as salus-sim --gpus N runs them)",
     {2, "long_trace_100.csv (or --trace FILE, read with salus-sim's trace options); bound --bound-jct-min "
         "(default 2x the average solo time) or --bound-queue-min; salus-sim's model options",
      "", &run_gpus_needed}},
    {"fidelity",
     "the simulator against the real executor on one trace: per-policy makespan and JCT errors, completion order "
     "(needs --executor real)",
     {2, "",
      "experiments/fidelity_cpu.csv (or --trace FILE), its workloads profiled on the device (or --profiles), each run "
      "predicted with the catalog calibrated for it (--calibrate)",
      &run_fidelity, false}},
};

}  // namespace

const ExperimentRegistry& experiment_registry() {
  static constexpr ExperimentRegistry kRegistry("experiment", kExperiments);
  return kRegistry;
}

std::string experiment_names_joined() { return experiment_registry().names_joined(); }

std::string real_experiment_names_joined() {
  std::string s;
  for (const auto& e : experiment_registry().entries()) {
    if (!e.factory.real_variant.empty()) s += (s.empty() ? "" : ", ") + std::string(e.name);
  }
  return s;
}

std::vector<std::string> real_inputs(const std::string& name, const std::string& data_dir) {
  const auto& e = experiment_registry().at(name);
  if (e.factory.real_variant.empty()) return {};
  if (name == "long_trace") return {data_dir + "/" + kLongTraceReal};
  if (name == "fair_three") return {data_dir + "/" + kFairThreeReal};
  if (name != "hyperparam") return {};  // fidelity profiles its own trace
  return {data_dir + "/experiments/hyperparam_lenet_32_real.csv", data_dir + "/experiments/hyperparam_mlp_64_real.csv"};
}

nlohmann::json run_experiment(const std::string& name, const ExperimentContext& ctx) {
  const auto& e = experiment_registry().at(name);
  if (!ctx.real && e.factory.inputs.empty()) {
    throw core::InputError(name + " compares the simulator with the real executor: give --executor real");
  }
  if (ctx.real && e.factory.real_variant.empty()) {
    throw core::InputError(name + " has no real variant: its figures read every iteration's exact profiled time or "
                           "use workloads the real backend does not implement (with --executor real: " +
                           real_experiment_names_joined() + ")");
  }
  return e.factory.run(ctx);
}

}  // namespace salus::experiments
