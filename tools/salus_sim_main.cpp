// salus-sim: replays a job trace in the discrete-event simulator under one or more policies and
// prints the paper's Table 1 (makespan, average queuing, average JCT, 95th-percentile JCT).
#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "cluster/cluster_file.h"
#include "cluster/placement.h"
#include "core/errors.h"
#include "policies/registry.h"
#include "run/cli.h"
#include "run/options.h"
#include "run/output.h"
#include "run/sim_program.h"
#include "run/sim_runner.h"
#include "sim/interference.h"
#include "traces/catalog.h"
#include "traces/trace.h"

namespace po = boost::program_options;
using namespace salus;

namespace {

/// The 100-job production-style trace of the long-running experiment (salus-experiment long_trace).
std::string default_trace() { return traces::data_dir() + "/long_trace_100.csv"; }

struct Options {
  run::OptionValues v;  ///< as typed: the paths, --time-scale, --quiet, ...
  std::vector<std::string> policies;
  run::SimConfig cfg;
  run::TimelineMode timeline = run::TimelineMode::kRuns;
  run::ModelOptions model;   ///< --lanes, --interference, --switch-cost-ms, --placement, ...
  traces::LoadOptions load;  ///< --format, --window, --sample, ...
  /// Options given that change nothing in this run, each a note saying why (never silent).
  std::vector<std::string> unused;
};

void parse(int argc, char** argv, Options& o, bool* help) {
  run::OptionValues& v = o.v;
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
    return;
  }
  po::notify(vm);
  const std::uint64_t seed = run::parse_seed(v.seed);
  o.policies = run::parse_policy_list(v.policy);
  o.cfg.capacity = run::parse_capacity(v.gpu_mem);
  o.model = run::make_model_options(v.model_values, vm);
  o.cfg.lane_shrink = o.model.lane_shrink;  // --paging needs it
  o.cfg.paging = run::parse_on_off("--paging", v.paging);
  if (!(v.paging_gbps > 0 && v.paging_gbps <= 1e6)) throw core::InputError("--paging-gbps: must be a number in (0, 1e6]");
  o.cfg.paging_bytes_per_s = static_cast<std::int64_t>(std::llround(v.paging_gbps * 1e9));
  if (o.cfg.paging && !o.cfg.lane_shrink) throw core::InputError("--paging on needs --lane-shrink on");
  if (!(v.profile_noise >= 0 && v.profile_noise < 100)) throw core::InputError("--profile-noise: must be in [0, 100)");
  o.cfg.profile_noise = v.profile_noise / 100.0;
  o.cfg.seed = seed;
  if (v.gpus < 1 || v.gpus > 1'000'000) throw core::InputError("--gpus: must be an integer in [1, 1000000]");
  if (vm.count("cluster") && !vm["gpus"].defaulted()) throw core::InputError("--gpus and --cluster: give one of them");
  if (vm.count("kind-speed") && !vm.count("cluster")) throw core::InputError("--kind-speed needs --cluster");
  if (vm.count("cluster")) {
    o.cfg.cluster = cluster::load_cluster_file(v.cluster);
    if (vm.count("kind-speed")) cluster::set_kind_speeds(*o.cfg.cluster, v.kind_speed, "--kind-speed");
  } else if (v.gpus > 1) {
    o.cfg.cluster = cluster::ClusterSpec::uniform(static_cast<std::int32_t>(v.gpus), o.cfg.capacity);
  }
  o.load = run::make_load_options(v.trace_values, seed);
  o.timeline = run::parse_timeline_mode(v.timeline);
  o.cfg.record_timeline = !v.out.empty();
  o.cfg.record_segments = o.timeline != run::TimelineMode::kOff;  // no file, so nothing to keep
  o.cfg.timeline_plans = o.timeline != run::TimelineMode::kFull;
  table.check_paths(run::kSim, vm);
  const auto given = [&](const char* name) { return vm.count(name) && !vm[name].defaulted(); };
  if (given("placement") && !o.cfg.cluster) {
    o.unused.push_back("--placement has no effect on one GPU (it places jobs across --gpus N > 1 or --cluster)");
  }
  if (given("timeline") && v.out.empty()) {
    o.unused.push_back("--timeline has no effect without --out (it chooses what --out's timeline files hold)");
  }
}

int body(int argc, char** argv) {
  bool help = false;
  Options o;
  parse(argc, argv, o, &help);
  if (help) return 0;
  const run::OptionValues& v = o.v;
  run::TraceJobs loaded =
      o.cfg.cluster ? run::load_jobs(v.trace, v.profiles, *o.cfg.cluster, v.time_scale, o.load)
                    : run::load_jobs(v.trace, v.profiles, o.cfg.capacity, v.time_scale, o.load);
  run::apply_model(o.model, loaded, o.cfg);
  const traces::Trace& trace = loaded.trace;
  const std::vector<core::JobSpec>& jobs = loaded.jobs;

  if (!v.trace_values.throughputs.empty() && trace.format != traces::TraceFormat::kGavel) {
    o.unused.push_back(std::string("--throughputs has no effect: the trace is ") + traces::to_string(trace.format) +
                       ", and only a Gavel trace's jobs take their iteration times from it");
  }
  std::vector<std::string> notes = o.unused;
  for (std::string& n : run::sim_notes(loaded, o.policies, o.cfg)) notes.push_back(std::move(n));
  if (const std::string note = run::cluster_out_note(o.cfg, !v.out.empty()); !note.empty()) notes.push_back(note);
  const std::vector<run::PolicyRun> runs = run::simulate_policies(jobs, o.policies, o.cfg, v.quiet);
  std::fputs(run::sim_header_line(v.trace, trace, jobs.size(), o.cfg, runs).c_str(), stdout);
  run::print_report(notes, jobs, runs);
  if (o.cfg.cluster) run::print_cluster_report(std::cout, jobs, runs);

  if (v.summary_json.empty() && v.out.empty()) return 0;
  // The header is small; the per-job results are streamed (write_streamed_outputs).
  const nlohmann::json summary = run::sim_summary_header(v.trace, trace, v.profiles, o.cfg, v.time_scale, notes);
  run::write_streamed_outputs(summary, v.summary_json, v.out, jobs, runs, o.timeline);
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return salus::run::guarded_main("salus-sim", body, argc, argv); }
