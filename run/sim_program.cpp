#include "run/sim_program.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <string>

#include <boost/program_options.hpp>

#include "cluster/cluster_file.h"
#include "cluster/lease_policy.h"
#include "cluster/placement.h"
#include "core/errors.h"
#include "core/units.h"
#include "policies/registry.h"
#include "run/cli.h"
#include "run/json_writer.h"
#include "run/output.h"
#include "run/progress.h"
#include "sim/interference.h"
#include "traces/catalog.h"

namespace salus::run {

namespace po = boost::program_options;

namespace {

/// The 100-job production-style trace of the long-running experiment (salus-experiment long_trace).
std::string default_trace() { return traces::data_dir() + "/long_trace_100.csv"; }

}  // namespace

bool parse_sim_command_line(int argc, char** argv, SimProgramOptions& o) {
  OptionValues& v = o.v;
  v.trace = default_trace();
  OptionTable table;
  add_run_options(table, v);
  po::variables_map vm = table.parse(kSim, argc, argv);
  const std::string after =
      "\nPolicies:\n" + policies::policy_registry().help() +
      "\nCluster policies (preemptive, whole GPUs; --dlas-thresholds, --dlas-starvation, --dlas-checks, "
      "--round-s, --reset-s, --restart-cost-ms):\n" + cluster::lease_registry().help() + "\nInterference models (auto: the catalog's "
      "\"interference\", else shares with a catalog pair table, else profiled):\n" + sim::interference_registry().help() +
      "\nPlacements (--gpus N > 1, --cluster):\n" + cluster::placement_registry().help() +
      "\nTrace formats (--format; how each maps to jobs: salus-trace formats):\n" + trace_formats_help(false);
  if (print_help_or_version(table, kSim, "salus-sim",
                            "salus-sim: replay a job trace on one simulated GPU or a cluster (--gpus, --cluster) under Salus "
                            "scheduling policies\n\nOptions",
                            vm, after)) {
    return false;
  }
  po::notify(vm);
  const std::uint64_t seed = parse_seed(v.seed);
  o.policies = parse_policy_list(v.policy, true);
  o.cfg.capacity = parse_capacity(v.gpu_mem);
  o.model = make_model_options(v.model_values, vm);
  o.cfg.lane_shrink = o.model.lane_shrink;  // --paging needs it
  o.cfg.paging = parse_on_off("--paging", v.paging);
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
  o.load = make_load_options(v.trace_values, seed);
  o.timeline = parse_timeline_mode(v.timeline);
  o.cfg.record_timeline = !v.out.empty();
  o.cfg.record_segments = o.timeline != TimelineMode::kOff;  // no file, so nothing to keep
  o.cfg.timeline_plans = o.timeline != TimelineMode::kFull;
  if (v.timeline_rows < 1 || v.timeline_rows > 1'000'000'000'000) {
    throw core::InputError("--timeline-rows: must be an integer in [1, 1000000000000]");
  }
  if (o.cfg.record_timeline) {
    o.cfg.timeline_rows = std::make_shared<core::RowBudget>();
    o.cfg.timeline_rows->limit = v.timeline_rows;
    o.cfg.timeline_rows->what = "--timeline-rows " + std::to_string(v.timeline_rows);
    o.cfg.timeline_rows->advice =
        o.timeline == TimelineMode::kFull  ? "--timeline runs keeps a rotation as one row per job, off no runs; or raise it"
        : o.timeline == TimelineMode::kRuns ? "--timeline off keeps no runs; or raise --timeline-rows"
                                            : "raise --timeline-rows (the memory samples and lane moves are kept)";
  }
  table.check_paths(kSim, vm);
  const auto given = [&](const char* name) { return vm.count(name) && !vm[name].defaulted(); };
  if (given("placement") && !o.cfg.cluster) {
    o.unused.push_back("--placement has no effect on one GPU (it places jobs across --gpus N > 1 or --cluster)");
  }
  const bool all_lease = std::all_of(o.policies.begin(), o.policies.end(), [](const std::string& p) { return cluster::is_lease_policy(p); });
  // --lanes and --placement serve the lanes beneath (--gpu-sharing)
  const bool exclusive = o.model.gpu_sharing.empty();
  if (all_lease && (given("queue") || given("gangs") || (exclusive && (given("placement") || given("lanes"))))) {
    o.unused.push_back("--queue, --gangs (and --placement, --lanes without --gpu-sharing) have no effect on the cluster policies (" +
                       cluster::lease_registry().names_joined() +
                       "): they order their own queues and place on whole GPUs (docs/cluster.md, \"Preemptive cluster policies\")");
  }
  const bool any_lease = std::any_of(o.policies.begin(), o.policies.end(), [](const std::string& p) { return cluster::is_lease_policy(p); });
  const auto runs = [&](const char* name) { return std::find(o.policies.begin(), o.policies.end(), name) != o.policies.end(); };
  if (!runs("dlas-gpu") && !runs("dlas") && (given("dlas-thresholds") || given("dlas-starvation") || given("dlas-checks"))) {
    o.unused.push_back("--dlas-thresholds, --dlas-starvation and --dlas-checks have no effect without dlas-gpu or dlas in --policy");
  }
  if (!any_lease && given("gpu-sharing")) {
    o.unused.push_back("--gpu-sharing has no effect without a cluster policy that preempts (" +
                       cluster::lease_registry().names_joined() + ") in --policy: the per-GPU policies share GPUs in lanes already");
  }
  if (!any_lease && given("restart-cost-ms")) {
    o.unused.push_back("--restart-cost-ms has no effect without a cluster policy that preempts (" +
                       cluster::lease_registry().names_joined() + ") in --policy");
  }
  if (!runs("max-min") && !runs("fifo-rounds") && (given("round-s") || given("reset-s"))) {
    o.unused.push_back("--round-s and --reset-s have no effect without max-min or fifo-rounds in --policy");
  }
  if (given("gangs") && !o.cfg.cluster) {
    o.unused.push_back("--gangs has no effect on one GPU (a job of several GPUs is folded onto it)");
  }
  if (given("queue") && !o.cfg.cluster) {
    o.unused.push_back("--queue has no effect on one GPU (it serves the cluster queue of --gpus N > 1 or --cluster; one "
                       "GPU's own queue is Algorithm 1's)");
  }
  if (given("timeline") && v.out.empty()) {
    o.unused.push_back("--timeline has no effect without --out (it chooses what --out's timeline files hold)");
  }
  return true;
}

namespace {

// The stored value of a defaulted option as text (the types the table stores into).
std::string value_text(const boost::any& value) {
  if (const auto* s = boost::any_cast<std::string>(&value)) return *s;
  if (const auto* d = boost::any_cast<double>(&value)) {
    std::string t = nlohmann::json(*d).dump();
    if (t.size() > 2 && t.compare(t.size() - 2, 2, ".0") == 0) t.resize(t.size() - 2);
    return t;
  }
  if (const auto* i = boost::any_cast<std::int64_t>(&value)) return std::to_string(*i);
  if (const auto* b = boost::any_cast<bool>(&value)) return *b ? "true" : "false";
  return "";
}

}  // namespace

std::vector<SimOptionInfo> sim_options() {
  OptionValues v;
  v.trace = default_trace();
  OptionTable table;
  add_run_options(table, v);
  char name[] = "salus-sim";
  char* argv[] = {name, nullptr};
  const po::variables_map vm = table.parse(kSim, 1, argv);
  const po::options_description desc = table.description(kSim, "", true);
  std::vector<SimOptionInfo> out;
  for (const Option& opt : table.options()) {
    if (!(opt.programs & kSim) || (opt.hidden & kSim)) continue;
    SimOptionInfo info;
    info.name = opt.name;
    info.help = opt.help_of(kSim);
    info.value_name = opt.value_name;
    if (opt.make) {
      const po::option_description& d = desc.find(opt.name, false);
      info.is_switch = d.semantic()->max_tokens() == 0;
    }
    if (vm.count(opt.name) && !info.is_switch) info.default_text = value_text(vm[opt.name].value());
    out.push_back(std::move(info));
  }
  return out;
}

SimProgramResult run_sim_program(const SimProgramOptions& o) {
  const OptionValues& v = o.v;
  SimProgramResult r;
  r.loaded = o.cfg.cluster ? load_jobs(v.trace, v.profiles, *o.cfg.cluster, v.time_scale, o.load)
                           : load_jobs(v.trace, v.profiles, o.cfg.capacity, v.time_scale, o.load);
  SimConfig cfg = o.cfg;
  // A budget of its own for each run of the program (the options may be run again).
  if (cfg.timeline_rows) {
    cfg.timeline_rows = std::make_shared<core::RowBudget>(*cfg.timeline_rows);
    cfg.timeline_rows->kept = 0;
  }
  apply_model(o.model, r.loaded, cfg);
  r.notes = o.unused;
  if (!v.trace_values.throughputs.empty() && r.loaded.trace.format != traces::TraceFormat::kGavel) {
    r.notes.push_back(std::string("--throughputs has no effect: the trace is ") + traces::to_string(r.loaded.trace.format) +
                      ", and only a Gavel trace's jobs take their iteration times from it");
  }
  for (std::string& n : sim_notes(r.loaded, o.policies, cfg)) r.notes.push_back(std::move(n));
  if (const std::string note = cluster_out_note(cfg, !v.out.empty()); !note.empty()) r.notes.push_back(note);
  r.runs = simulate_policies(r.loaded.jobs, o.policies, cfg, v.quiet);
  r.cfg = std::move(cfg);
  return r;
}

nlohmann::json sim_program_summary_header(const SimProgramOptions& o, const SimProgramResult& r,
                                          const std::string& trace_name) {
  return sim_summary_header(trace_name, r.loaded.trace, o.v.profiles, r.cfg, o.v.time_scale, r.notes);
}

std::string summary_json_text(const nlohmann::json& header, const std::vector<core::JobSpec>& jobs,
                              const std::vector<PolicyRun>& runs) {
  JsonWriter w;
  write_summary(w, header, jobs, runs);
  w.finish();
  return w.text();
}

std::vector<PolicyRun> simulate_policies(const std::vector<core::JobSpec>& jobs, const std::vector<std::string>& policies,
                                      SimConfig cfg, bool quiet) {
  std::vector<PolicyRun> runs;
  ProgressMeter meter(std::cerr, isatty(STDERR_FILENO) != 0);
  for (const std::string& name : policies) {
    if (!quiet) cfg.progress = meter.hook("salus-sim: " + name, jobs);
    runs.push_back(simulate(jobs, name, cfg));
    meter.end_run();
  }
  return runs;
}

std::string placement_text(const SimConfig& cfg, const std::vector<PolicyRun>& runs) {
  std::string placement = cfg.placement;
  if (placement.empty()) {
    for (const PolicyRun& r : runs) placement += (placement.empty() ? "per policy (" : ", ") + r.policy + " " + r.placement;
    placement += ")";
  }
  return placement;
}

std::string sim_header_line(const std::string& trace_path, const traces::Trace& trace, std::size_t jobs,
                            const SimConfig& cfg, const std::vector<PolicyRun>& runs) {
  const std::string head = "salus-sim: " + trace_path + " (" + traces::to_string(trace.format) + ", " +
                           count_text(jobs, "job") + "), ";
  const std::string tail = "interference " + cfg.interference + ", switch cost " +
                           seconds_text(cfg.switch_cost_ns * 1000) + " ms\n";
  if (cfg.cluster) {
    return head + "cluster of " + cfg.cluster->describe() + ", placement " + placement_text(cfg, runs) + ", queue " +
           std::string(cluster::to_string(cfg.queue)) + ", " + tail;
  }
  return head + "GPU " + core::format_size(cfg.capacity) + ", " + tail;
}

std::string cluster_out_note(const SimConfig& cfg, bool out_given) {
  if (!cfg.cluster || cfg.cluster->gpus.size() <= 1 || !out_given) return "";
  return "a cluster of several GPUs: --out writes every GPU's timeline, memory and lane moves, each row led by "
         "its gpu (lane ids are per GPU), and <policy>_job_gpus.csv, _gpus_busy.csv and _jct_by_size.csv";
}

}  // namespace salus::run
