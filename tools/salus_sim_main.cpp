// salus-sim: replays a job trace in the discrete-event simulator under one or more policies and
// prints the paper's Table 1 (makespan, average queuing, average JCT, 95th-percentile JCT).
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "cluster/cluster_file.h"
#include "cluster/placement.h"
#include "core/errors.h"
#include "core/units.h"
#include "run/cli.h"
#include "run/cpus.h"
#include "run/options.h"
#include "run/output.h"
#include "run/progress.h"
#include "run/sim_runner.h"
#include "policies/registry.h"
#include "sim/interference.h"
#include "traces/catalog.h"
#include "traces/trace.h"

namespace po = boost::program_options;
using namespace salus;

namespace {


/// The 100-job production-style trace of the long-running experiment (salus-experiment long_trace).
std::string default_trace() { return traces::data_dir() + "/long_trace_100.csv"; }

struct Options {
  std::string trace;
  std::vector<std::string> policies;
  run::SimConfig cfg;
  std::string profiles;
  std::string summary_json;
  std::string out_dir;
  run::TimelineMode timeline = run::TimelineMode::kRuns;
  double time_scale = 1;
  run::ModelOptions model;  ///< --lanes, --interference, --switch-cost-ms, --placement, ...
  std::string cluster_file;          ///< --cluster
  std::string kind_speeds;           ///< --kind-speed
  bool quiet = false;                ///< --quiet: no progress on stderr
  traces::LoadOptions load;  ///< --format, --window, --sample, ...
};

Options parse(int argc, char** argv, bool* help) {
  Options o;
  run::OptionValues v;
  v.trace = default_trace();
  run::OptionTable table;
  run::add_run_options(table, v);
  po::variables_map vm = table.parse(run::kSim, argc, argv);
  const std::string after =
      "\nPolicies:\n" + policies::policy_registry().help() + "\nInterference models (auto: the catalog's "
      "\"interference\", else shares with a catalog pair table, else profiled):\n" + sim::interference_registry().help() +
      "\nPlacements (--gpus N > 1, --cluster):\n" + cluster::placement_registry().help() +
      "\nTrace formats (--format; how each maps to jobs: salus-trace formats):\n" + run::trace_formats_help(false);
  if (run::print_help_or_version(table, run::kSim, "salus-sim",
                                 "salus-sim: replay a job trace on one simulated GPU under Salus scheduling policies\n\nOptions",
                                 vm, after)) {
    *help = true;
    return o;
  }
  po::notify(vm);
  o.trace = v.trace;
  o.profiles = v.profiles;
  o.summary_json = v.summary_json;
  o.out_dir = v.out;
  o.time_scale = v.time_scale;
  o.quiet = v.quiet;
  o.cluster_file = v.cluster;
  o.kind_speeds = v.kind_speed;
  const std::string& policy_list = v.policy;
  const std::string& gpu_mem = v.gpu_mem;
  const std::string& paging = v.paging;
  const std::string& timeline = v.timeline;
  const double paging_gbps = v.paging_gbps;
  const double noise_pct = v.profile_noise;
  const std::int64_t gpus = v.gpus;
  const std::uint64_t seed = run::parse_seed(v.seed);
  const run::ModelOptionValues& model_options = v.model_values;
  const run::TraceOptionValues& trace_options = v.trace_values;
  o.policies = run::parse_policy_list(policy_list);
  o.cfg.capacity = run::parse_capacity(gpu_mem);
  o.model = run::make_model_options(model_options, vm);
  o.cfg.lane_shrink = o.model.lane_shrink;  // --paging needs it
  o.cfg.paging = run::parse_on_off("--paging", paging);
  if (!(paging_gbps > 0 && paging_gbps <= 1e6)) throw core::InputError("--paging-gbps: must be a number in (0, 1e6]");
  o.cfg.paging_bytes_per_s = static_cast<std::int64_t>(std::llround(paging_gbps * 1e9));
  if (o.cfg.paging && !o.cfg.lane_shrink) throw core::InputError("--paging on needs --lane-shrink on");
  if (!(noise_pct >= 0 && noise_pct < 100)) throw core::InputError("--profile-noise: must be in [0, 100)");
  o.cfg.profile_noise = noise_pct / 100.0;
  o.cfg.seed = seed;
  if (gpus < 1 || gpus > 1'000'000) throw core::InputError("--gpus: must be an integer in [1, 1000000]");
  if (vm.count("cluster") && !vm["gpus"].defaulted()) throw core::InputError("--gpus and --cluster: give one of them");
  if (vm.count("kind-speed") && !vm.count("cluster")) throw core::InputError("--kind-speed needs --cluster");
  if (vm.count("cluster")) {
    o.cfg.cluster = cluster::load_cluster_file(o.cluster_file);
    if (vm.count("kind-speed")) cluster::set_kind_speeds(*o.cfg.cluster, o.kind_speeds, "--kind-speed");
  } else if (gpus > 1) {
    o.cfg.cluster = cluster::ClusterSpec::uniform(static_cast<std::int32_t>(gpus), o.cfg.capacity);
  }
  o.load = run::make_load_options(trace_options, seed);
  o.timeline = run::parse_timeline_mode(timeline);
  o.cfg.record_timeline = !o.out_dir.empty();
  o.cfg.record_segments = o.timeline != run::TimelineMode::kOff;  // no file, so nothing to keep
  o.cfg.timeline_plans = o.timeline != run::TimelineMode::kFull;
  run::check_output_paths({{"--summary-json", o.summary_json, run::OutputKind::kFile},
                           {"--out", o.out_dir, run::OutputKind::kFolder}});
  return o;
}

int body(int argc, char** argv) {
  bool help = false;
  Options o = parse(argc, argv, &help);
  if (help) return 0;
  run::TraceJobs loaded =
      o.cfg.cluster ? run::load_jobs(o.trace, o.profiles, *o.cfg.cluster, o.time_scale, o.load)
                    : run::load_jobs(o.trace, o.profiles, o.cfg.capacity, o.time_scale, o.load);
  run::apply_model(o.model, loaded, o.cfg);
  const traces::Trace& trace = loaded.trace;
  const std::vector<core::JobSpec>& jobs = loaded.jobs;

  std::vector<std::string> notes = run::sim_notes(trace, o.profiles, o.policies, o.cfg);
  if (o.cfg.cluster && o.cfg.cluster->gpus.size() > 1 && !o.out_dir.empty()) {
    notes.push_back("a cluster of several GPUs: --out writes no timeline, memory or lane moves (lane ids are per GPU); "
                    "<policy>_job_gpus.csv, _gpus_busy.csv and _jct_by_size.csv instead");
  }
  std::vector<run::SimRun> runs;
  run::ProgressMeter meter(std::cerr, isatty(STDERR_FILENO) != 0);
  for (const std::string& name : o.policies) {
    if (!o.quiet) o.cfg.progress = meter.hook("salus-sim: " + name, jobs);
    runs.push_back(run::simulate(jobs, name, o.cfg));
    meter.end_run();
  }

  // The placement each policy ran with: the one named, or each policy's default.
  std::string placement = o.cfg.placement;
  if (placement.empty()) {
    for (const run::SimRun& r : runs) {
      placement += (placement.empty() ? "per policy (" : ", ") + r.policy + " " + r.placement;
    }
    placement += ")";
  }
  if (o.cfg.cluster) {
    std::printf("salus-sim: %s (%s, %s), cluster of %s, placement %s, interference %s, switch cost %s ms\n",
                o.trace.c_str(), traces::to_string(trace.format), run::count_text(jobs.size(), "job").c_str(), o.cfg.cluster->describe().c_str(),
                placement.c_str(), o.cfg.interference.c_str(),
                run::seconds_text(o.cfg.switch_cost_ns * 1000).c_str());
  } else {
    std::printf("salus-sim: %s (%s, %s), GPU %s, interference %s, switch cost %s ms\n", o.trace.c_str(),
                traces::to_string(trace.format), run::count_text(jobs.size(), "job").c_str(), core::format_size(o.cfg.capacity).c_str(),
                o.cfg.interference.c_str(), run::seconds_text(o.cfg.switch_cost_ns * 1000).c_str());
  }
  run::print_report(notes, jobs, runs);
  if (o.cfg.cluster) run::print_cluster_report(std::cout, jobs, runs);

  if (o.summary_json.empty() && o.out_dir.empty()) return 0;
  // The header is small; the per-job results are streamed (write_streamed_outputs).
  const nlohmann::json summary = run::sim_summary_header(o.trace, trace, o.profiles, o.cfg, o.time_scale, notes);
  run::write_streamed_outputs(summary, o.summary_json, o.out_dir, jobs, runs, o.timeline);
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return salus::run::guarded_main("salus-sim", body, argc, argv); }
