#include "run/options.h"

#include <iostream>
#include <sstream>
#include <stdexcept>

#include "cluster/placement.h"
#include "cluster/queue_discipline.h"
#include "core/errors.h"
#include "policies/registry.h"
#include "sim/interference.h"
#include "traces/catalog.h"
#include "traces/trace.h"

namespace salus::run {

namespace po = boost::program_options;

const std::string& Option::help_of(Program program) const {
  for (const auto& [programs, text] : help_for) {
    if (programs & program) return text;
  }
  return help;
}

const std::string* Option::default_of(Program program) const {
  for (const auto& [programs, text] : default_for) {
    if (programs & program) return &text;
  }
  return nullptr;
}

Option switch_option(std::string name, bool* field, Programs programs, std::string help) {
  Option o;
  o.name = std::move(name);
  o.programs = programs;
  o.help = std::move(help);
  o.make = [field](const Option&, Program) -> po::value_semantic* { return po::bool_switch(field); };
  return o;
}

Option flag_option(std::string name, char short_name, Programs programs, std::string help) {
  Option o;
  o.name = std::move(name);
  o.short_name = short_name;
  o.programs = programs;
  o.help = std::move(help);
  return o;
}

Option& OptionTable::add(Option option) {
  if (find(option.name) != nullptr) throw std::logic_error("option --" + option.name + " declared twice");
  options_.push_back(std::move(option));
  return options_.back();
}

Option* OptionTable::find(const std::string& name) {
  for (Option& o : options_) {
    if (o.name == name) return &o;
  }
  return nullptr;
}

po::options_description OptionTable::description(Program program, const std::string& caption, bool with_hidden) const {
  // 100 columns: the descriptions start after the longest "--name VALUE (=default)".
  po::options_description desc(caption, 100, 50);
  for (const Option& o : options_) {
    if (!(o.programs & program)) continue;
    if ((o.hidden & program) && !with_hidden) continue;
    const std::string names = o.short_name ? o.name + "," + std::string(1, o.short_name) : o.name;
    const std::string& help = o.help_of(program);
    if (o.make) {
      desc.add_options()(names.c_str(), o.make(o, program), help.c_str());
    } else {
      desc.add_options()(names.c_str(), help.c_str());
    }
  }
  return desc;
}

po::variables_map OptionTable::parse(Program program, int argc, char** argv,
                                     const po::positional_options_description* positional) const {
  const po::options_description all = description(program, "", true);
  po::variables_map vm;
  po::store(parse_command_line(argc, argv, all, positional), vm);
  return vm;
}

void OptionTable::check_paths(Program program, const po::variables_map& vm) const {
  std::vector<OutputPath> outputs;
  std::vector<InputPath> inputs;
  for (const Option& o : options_) {
    if (!(o.programs & program) || !vm.count(o.name)) continue;
    const std::string* value = boost::any_cast<std::string>(&vm[o.name].value());
    if (value == nullptr) continue;
    if (value->empty()) {
      // Given as '' (a shell variable that was empty): it would write nothing, silently.
      bool output = false;
      for (const auto& [programs, kind] : o.output_for) output = output || (programs & program);
      if (output && !vm[o.name].defaulted()) {
        throw core::InputError("--" + o.name + ": an empty path (name a file, or leave the option out)");
      }
      continue;
    }
    if (o.input & program) inputs.push_back({"--" + o.name, *value});
    for (const auto& [programs, kind] : o.output_for) {
      if (programs & program) outputs.push_back({"--" + o.name, *value, kind});
    }
  }
  check_output_paths(outputs, inputs);
}

void OptionTable::check_experiments(const po::variables_map& vm, const std::vector<std::string>& experiments) const {
  for (const Option& o : options_) {
    if (!(o.programs & kExperiment) || o.experiments.empty()) continue;
    if (!vm.count(o.name) || vm[o.name].defaulted()) continue;
    bool takes_all = true;
    for (const std::string& e : experiments) {
      bool found = false;
      for (const std::string& mine : o.experiments) found = found || mine == e;
      takes_all = takes_all && found;
    }
    if (takes_all) continue;
    std::string list;
    for (std::size_t i = 0; i < o.experiments.size(); ++i) {
      list += (i == 0 ? "" : i + 1 == o.experiments.size() ? " and " : ", ") + o.experiments[i];
    }
    const std::string subject = o.scope_text.empty() ? "--" + o.name + " is" : o.scope_text + " are";
    throw core::InputError(subject + " for " + list + " only");
  }
}

std::uint64_t parse_seed(const std::string& text) {
  std::uint64_t v = 0;
  bool ok = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
  for (char c : text) {
    if (!ok) break;
    const std::uint64_t d = static_cast<std::uint64_t>(c - '0');
    if (v > (UINT64_MAX - d) / 10) ok = false;
    v = v * 10 + d;
  }
  if (!ok) throw core::InputError("--seed: must be an integer in [0, 18446744073709551615], got '" + text + "'");
  return v;
}

bool print_help_or_version(const OptionTable& table, Program program, const char* tool, const std::string& caption,
                           const po::variables_map& vm, const std::string& after) {
  if (vm.count("help")) {
    std::cout << table.description(program, caption) << after;
    return true;
  }
  if (vm.count("version")) {
    std::cout << version_text(tool) << "\n";
    return true;
  }
  return false;
}

void add_run_options(OptionTable& t, OptionValues& v) {
  const Programs all = kSim | kRun | kProfile | kTraceGenerate | kTraceStats | kExperiment | kCatalog;
  const Programs traces_read = kSim | kRun | kTraceStats | kExperiment;
  const Programs models = kSim | kExperiment;
  if (v.profiles.empty()) v.profiles = traces::Catalog::default_path();
  if (v.policy.empty()) v.policy = policies::policy_names_joined();

  t.add(flag_option("help", 'h', all, "print this help")).help_in(kExperiment, "print this help and the experiments");
  t.add(flag_option("version", 0, all & ~(kTraceGenerate | kTraceStats), "print the version"));
  t.add(value_option("trace", &v.trace, "FILE", kSim | kRun | kTraceStats | kExperiment,
                     "trace file: native CSV, its JSON form, or a public trace (formats below, recognised by content)"))
      .help_in(kRun, "trace file (same formats as salus-sim)")
      .help_in(kExperiment, "fidelity: the trace (default: the shipped traces/experiments/fidelity_cpu.csv); "
                            "gpus_needed: the trace (default: the shipped long_trace_100.csv)")
      .required_in(kRun)
      .input_in(kSim | kRun | kTraceStats | kExperiment)
      .hidden = kTraceStats;
  t.add(value_option("policy", &v.policy, "LIST", kSim | kRun,
                     "comma-separated policies (valid: " + policies::policy_names_joined() + ")"));
  t.add(value_option("gpu-mem", &v.gpu_mem, "SIZE", kSim | kRun | kProfile | kExperiment,
                     "GPU memory capacity, with a unit (16GiB, 512MiB, 16GB)"))
      .help_in(kRun, "memory pool reserved on the device, with a unit (16GiB emulates a P100); never more than it has free")
      .help_in(kProfile, "memory pool used for the measurements")
      .help_in(kExperiment, "GPU memory capacity (the paper's P100: 16GiB)");
  // salus-sim's own
  t.add(value_option("paging", &v.paging, "on|off", kSim,
                     "on|off: the paper's failsafe: when a job cannot be admitted, paused jobs of lower priority (srtf: "
                     "longer remaining time; priority: lower level) have their persistent memory paged out to the host "
                     "until it fits, and back in before they run again (needs --lane-shrink on); each policy's "
                     "page-outs and page-ins are printed after the table"));
  t.add(value_option("paging-gbps", &v.paging_gbps, "GBPS", kSim,
                     "host link bandwidth for --paging, GB/s (1e9 bytes/s); each transfer of P bytes delays its lane's "
                     "next run by P / bandwidth (an assumption, printed as a note)"));
  t.add(value_option("gpus", &v.gpus, "N", kSim,
                     "a cluster of this many GPUs of --gpu-mem each, every one running the policy (1: one GPU, no cluster)"));
  t.add(value_option("cluster", &v.cluster, "FILE", kSim,
                     "a cluster file instead of --gpus: CSV nodes,gpus_per_node,gpu_mem[,kind,speed], one row per group "
                     "of nodes, or Alibaba v2023's openb_node_list_gpu_node.csv (cluster/README.md)"))
      .input_in(kSim);
  t.add(value_option("kind-speed", &v.kind_speed, "KIND=SPEED,...", kSim,
                     "with --cluster: KIND=SPEED[,KIND=SPEED...] sets the relative speed of GPU kinds (e.g. "
                     "T4=0.5,V100M32=2; iterations take iter_ns / SPEED)"));
  t.add(value_option("profiles", &v.profiles, "FILE", kSim | kRun | kTraceGenerate | kTraceStats | kExperiment,
                     "workload catalog (JSON)"))
      .help_in(kExperiment, "workload catalog (JSON); with --executor real the default is one measured on the device "
                            "first by salus-profile (written to OUT/real_catalog.json)")
      .input_in(kSim | kRun | kTraceGenerate | kTraceStats | kExperiment);
  t.add(value_option("summary-json", &v.summary_json, "FILE", kSim | kRun, "write the summary JSON here"))
      .help_in(kRun, "write the summary JSON here (salus-sim's schema plus measurements)")
      .output_in(kSim | kRun, OutputKind::kFile);
  t.add(value_option("out", &v.out, "PATH", kSim | kRun | kProfile | kTraceGenerate | kExperiment | kCatalog,
                     "write per-job CSVs, timelines, memory, lane moves and JCT CDFs into this directory"))
      .required_in(kProfile)
      .output_in(kSim | kRun | kExperiment, OutputKind::kFolder)
      .output_in(kProfile | kTraceGenerate | kCatalog, OutputKind::kFile)
      .help_in(kRun, "write per-job CSVs, timelines, memory and lane moves into this directory")
      .help_in(kProfile, "catalog file to write")
      .help_in(kTraceGenerate, "write the CSV here (default: standard output)")
      .help_in(kExperiment, "write NAME.json, its CSVs and its figures here")
      .help_in(kCatalog, "write the catalog to this file (default: standard output)");
  t.add(value_option("timeline", &v.timeline, "runs|full|off", kSim,
                     "with --out: runs: <policy>_timeline.csv has a row per run of consecutive iterations of one job in "
                     "one lane, and where the simulator ran a rotation in one go (FAIR, LAS) a row per job of the "
                     "rotation; full: a row per run everywhere (no rotations: FAIR writes a row per iteration, slowly); "
                     "off: no timeline file"));
  t.add(value_option("timeline-rows", &v.timeline_rows, "N", kSim,
                     "with --out: the most rows (runs, memory samples, lane moves) the recording keeps for the files, "
                     "over every policy and GPU: they wait in memory until the files are written (about 60 bytes "
                     "each, docs/performance.md), and a run that would keep more stops with exit status 2, writing "
                     "nothing"));
  t.add(value_option("time-scale", &v.time_scale, "X", kSim | kRun | kExperiment,
                     "divide arrival times and iteration counts by this (>= 1), as salus-run does"))
      .help_in(kRun, "divide arrival times and iteration counts by this (>= 1) to shorten a run")
      .help_in(kExperiment, "divide arrival times and iteration counts by this (>= 1) to shorten a run, as salus-run does");
  t.add(value_option("seed", &v.seed, "N", kSim | kRun | kTraceGenerate | kTraceStats | kExperiment,
                     "seed for --profile-noise and --sample, an unsigned 64-bit integer"))
      .help_in(kRun, "seed of the synthetic data and initial weights, and of --sample, an unsigned 64-bit integer")
      .help_in(kTraceGenerate, "PRNG seed, an unsigned 64-bit integer")
      .help_in(kTraceStats, "seed of --sample, an unsigned 64-bit integer")
      .help_in(kExperiment, "gpus_needed: seed for --sample, an unsigned 64-bit integer");
  t.add(value_option("profile-noise", &v.profile_noise, "PERCENT", kSim,
                     "percent: each job's actual iteration time is its profile times U[1-x%, 1+x%] (policies see the "
                     "profile)"));
  t.add(switch_option("quiet", &v.quiet, kSim | kExperiment,
                      "no progress line on stderr (shown for runs longer than about a second)"))
      .help_in(kExperiment, "no progress line on stderr (shown for simulations longer than about a second)");

  const auto cpus_help = [](const std::string& default_text) {
    return "run this program's threads (and the programs it starts) on these CPUs only, e.g. 0 or 0-1 or 0,2, or all: "
           "every CPU this process may use, where the OS places them (default: " +
           default_text + "; docs/real-backend.md, \"Pinning: --cpus\", says why the CPU device's measurements want them pinned)";
  };
  t.add(value_option("cpus", &v.cpus, "LIST", kRun | kProfile | kExperiment, cpus_help("where the OS places them")))
      .help_in(kRun, cpus_help("on the cpu device the CPUs the catalog's figures were measured on, else one CPU, the "
                               "first it may use; on cuda where the OS places them"))
      .help_in(kProfile, cpus_help("on the cpu device one CPU, the first it may use, recorded in the catalog; on cuda "
                                   "where the OS places them"))
      .help_in(kExperiment, cpus_help("where the OS places them; fidelity on the cpu device: the first CPU this process "
                                      "may use"));

  // The model options (salus-sim; salus-experiment's gpus_needed and fidelity).
  ModelOptionValues& m = v.model_values;
  t.add(value_option("lanes", &m.lanes, "single|auto|exclusive", models | kRun,
                     "single|auto|exclusive: one shared lane, or lanes per Algorithm 1, or one job at a time on the "
                     "whole GPU, kept until it ends (fifo, and srtf: then the shortest waiting job first, not "
                     "preemptive) (default: single for srtf, fair, las and priority, auto for pack; fifo is always exclusive)"))
      .help_in(kRun, "single|auto|exclusive (as in salus-sim)");
  const std::string interference =
      "none: every iteration takes its solo time; profiled: concurrent lanes run at 1/max(1, sum u) speed; "
      "pairs: the catalog's measured pair slowdowns, excess added over the other lanes (u where a pair is "
      "missing); crowds: pairs, times the catalog's measured crowd factor with 3 or more lanes running; "
      "shares: GPU time shared by weight x u, weights fitted to the catalog's pairs; capacity: shares' weights, "
      "the total divided by the concurrency capacity C(k) the catalog's sweeps measure (k copies of one workload, "
      "salus-profile --sweeps); auto: the model the "
      "catalog names (\"interference\", which salus-profile writes for its device), else shares when the "
      "catalog has a pair table, else profiled";
  t.add(value_option("interference", &m.interference, "MODEL", models, interference))
      .help_in(kExperiment, interference + " (fidelity and gpus_needed; fidelity with --predict-from: an earlier "
                                           "sitting predicted again under another model)");
  t.add(value_option("share-exponent", &m.share_exponent, "X", models,
                     "shares: raise each lane's slowdown to this power, in (0, 2] (below 1: a crowd of lanes overlaps "
                     "better than its shares add up to; 0.8 fits the measured H100 traces: docs/model.md, \"Assumptions and named options\")"));
  t.add(value_option("lane-shrink", &m.lane_shrink, "on|off", models,
                     "on|off: a lane's size follows the largest E of its jobs down when that job finishes (the paper's "
                     "L_j = max E); off: a lane keeps the largest size it ever had until its last job finishes"));
  t.add(value_option("switch-cost-ms", &m.switch_ms, "MS", models,
                     "milliseconds added to the first iteration after a lane changes job, for every job (default: the "
                     "catalog entry's own switch_ms where it has one, else the catalog's switch_ms, else 1)"))
      .no_default = true;
  const std::string placement = "on a cluster: which GPU takes a job, among those where it starts at once (valid: " +
                                cluster::placement_registry().names_joined() +
                                "; default: each policy's own, fifo first-fit, pack util-pack, the others least-loaded)";
  t.add(value_option("placement", &m.placement, "NAME", models, placement + " (a cluster: --gpus N > 1 or --cluster)"))
      .help_in(kExperiment, placement + " (gpus_needed)");
  const std::string queue = "on a cluster: how the queue is served past a job that cannot start (valid: " +
                            cluster::queue_registry().names_joined() +
                            "; strict: head-of-line blocking, as Tiresias' and Gavel's FIFO; backfill: every job that can "
                            "start does, as Algorithm 1's own queue; easy: backfill that keeps a reservation for the first "
                            "job waiting; docs/cluster.md, \"Queue disciplines\")";
  t.add(value_option("queue", &m.queue, "NAME", models, queue + " (a cluster: --gpus N > 1 or --cluster)"))
      .help_in(kExperiment, queue + " (gpus_needed)");
  const std::string gangs = "on a cluster, the per-GPU policies: how a job of several GPUs shares them (valid: " +
                            cluster::gang_registry().names_joined() +
                            "; hold: in lanes beside other jobs, a replica chosen on its GPU holding its lane until every "
                            "replica's GPU has chosen it; exclusive: on GPUs with no other job, kept to itself while it "
                            "runs, as the peers; docs/cluster.md, \"Gangs held or exclusive\")";
  t.add(value_option("gangs", &m.gangs, "NAME", models, gangs + " (a cluster: --gpus N > 1 or --cluster)"))
      .help_in(kExperiment, gangs + " (gpus_needed)");
  t.add(value_option("dlas-thresholds", &m.dlas_thresholds, "LIST", models,
                     "dlas-gpu, dlas: the attained service, in seconds (GPU-seconds for dlas-gpu), at which a job moves "
                     "to the next queue, comma-separated and increasing: k thresholds make k + 1 queues (Tiresias' "
                     "defaults)"));
  t.add(value_option("dlas-starvation", &m.dlas_starvation, "X", models,
                     "dlas-gpu, dlas: Tiresias' starvation knob: a waiting job below the first queue goes back to it "
                     "once it has waited X times its run time since it first ran or was last promoted; 0: off "
                     "(Tiresias' dlas-gpu)"));
  t.add(value_option("dlas-checks", &m.dlas_checks, "exact|tiresias", models,
                     "dlas-gpu, dlas: exact: a job is demoted at the instant its service reaches a threshold; "
                     "tiresias: where Tiresias' simulator checks, (threshold - run time) / GPUs floored to the second "
                     "after each decision, so a k-GPU job later (to compare with its outputs job by job)"));
  t.add(value_option("restart-cost-ms", &m.restart_cost_ms, "MS", models,
                     "the cluster policies that preempt (dlas-gpu, dlas, max-min, fifo-rounds): milliseconds a job spends on its GPUs "
                     "restoring its checkpoint each time it starts again after a preemption, wherever it starts (0: "
                     "none, as Tiresias' and Gavel's simulators)"));
  t.add(value_option("gpu-sharing", &m.gpu_sharing, "NAME", models,
                     "the cluster policies that preempt (dlas-gpu, dlas, max-min, fifo-rounds): how each GPU runs the "
                     "jobs leased to it: "
                     "exclusive, one at a time (the peers' model), or a per-GPU policy's name (" +
                         policies::policy_registry().names_joined() +
                         "): Salus lanes under that policy, a GPU holding every leased job its memory admits beside "
                         "the jobs ahead of it, a preempted job leaving at its next iteration boundary; gang jobs on GPUs "
                         "of their own (docs/cluster.md, \"Lanes beneath the cluster policies\")"));
  t.add(value_option("round-s", &m.round_s, "S", models,
                     "max-min, fifo-rounds: the round, in seconds (at least 1): jobs are leased for a round and placed "
                     "again at its end (Gavel's time_per_iteration, 360); a run that would certainly take more than "
                     "1e8 rounds is refused"));
  t.add(value_option("reset-s", &m.reset_s, "S", models,
                     "max-min, fifo-rounds: the least time, in seconds, between two computations of the allocation; a job that "
                     "arrives in between waits for the next (Gavel's minimum_time_between_allocation_resets, 1920; 0: "
                     "at every round whose jobs changed)"));

  // salus-trace generate's own; --workloads is salus-profile's too.
  traces::GeneratorOptions& g = v.generator;
  const auto num = [](double x) { return traces::format_number(x); };
  t.add(value_option("jobs", &g.jobs, "N", kTraceGenerate,
                     "number of jobs (with --shape: the shape's unless given; see --shape)"));
  t.add(value_option("mean-interarrival-s", &g.mean_interarrival_s, "S", kTraceGenerate,
                     "mean of the exponential gaps between arrivals, seconds (first job at 0)"))
      .default_text = num(g.mean_interarrival_s);
  t.add(value_option("median-duration-s", &g.median_duration_s, "S", kTraceGenerate,
                     "median solo duration, seconds (log-normal)"))
      .default_text = num(g.median_duration_s);
  t.add(value_option("duration-sigma", &g.duration_sigma, "X", kTraceGenerate, "sigma of ln(duration)"))
      .default_text = num(g.duration_sigma);
  t.add(value_option("min-duration-s", &g.min_duration_s, "S", kTraceGenerate,
                     "shorter drawn durations are raised to this, seconds"))
      .default_text = num(g.min_duration_s);
  t.add(value_option("max-duration-s", &g.max_duration_s, "S", kTraceGenerate,
                     "longer drawn durations are lowered to this, seconds"))
      .default_text = num(g.max_duration_s);
  t.add(value_option("workloads", &v.workloads, "LIST", kTraceGenerate | kProfile,
                     "comma-separated catalog names to draw from (default: every entry not ending in _infer, except "
                     "lenet_32 and mlp_64)"))
      .help_in(kProfile, "comma-separated workloads, e.g. lenet_32,mlp_64,resnet50_25")
      .required_in(kProfile);
  t.add(value_option("gang-sizes", &v.gang_sizes, "SPEC", kTraceGenerate,
                     "GPUs per job, SIZE:WEIGHT,... e.g. 1:0.72,2:0.1,4:0.08,8:0.06,16:0.02,32:0.015,64:0.005: a job "
                     "runs on SIZE GPUs at once (a gang) with probability WEIGHT / the sum of the weights, drawn from a "
                     "stream of its own (the other columns do not change); the CSV gets a gpus column when some job has "
                     "more than one (default: every job 1 GPU, no gpus column)"));
  std::string shapes;
  for (const auto& e : traces::trace_shape_registry().entries()) {
    shapes += std::string(shapes.empty() ? "" : "; ") + std::string(e.name) + ": " + std::string(e.description);
  }
  t.add(value_option("shape", &v.shape, "NAME", kTraceGenerate,
                     "a preset of the options above for a cluster (valid: " +
                         traces::trace_shape_registry().names_joined() + "). " + shapes +
                         ". Options given beside --shape override its values; --jobs N keeps its span and its load per "
                         "GPU on a cluster N / its jobs as large: the mean inter-arrival time is the shape's x its jobs "
                         "/ N (helios: --jobs 336000 is 336000 jobs over the same six months at 47 s, 0.6 of 641.6 "
                         "GPUs)"));
  t.add(value_option("layout", &v.layout, "native|helios", kTraceGenerate,
                     "native: job_id,arrival_s,workload,iterations, and gpus when a job has more than one GPU; helios: Helios' cluster_log.csv columns "
                     "job_id,gpu_num,submit_time,duration (duration = the solo time in seconds, whole ms), which salus-sim "
                     "reads as format helios (no workload: --assumed-memory, --assumed-iter-ms)"));

  // The trace-reading options (salus-sim, salus-run, salus-trace stats; salus-experiment's gpus_needed).
  TraceOptionValues& tr = v.trace_values;
  t.add(value_option("format", &tr.format, "FORMAT", traces_read,
                     "trace format, instead of recognising it by content: " +
                         traces::trace_format_registry().names_joined() + " (mappings: salus-trace formats)"));
  t.add(value_option("durations", &tr.durations, "trace|catalog", traces_read,
                     "trace|catalog: a Tiresias job's solo time is the trace's duration (iteration time = duration / "
                     "iterations), or the catalog's iteration time x iterations"));
  t.add(value_option("throughputs", &tr.throughputs, "FILE", traces_read,
                     "Gavel traces: iteration times from this throughputs file (Gavel's JSON); default: the catalog"))
      .input_in(traces_read);
  t.add(value_option("worker-type", &tr.worker_type, "TYPE", traces_read,
                     "Gavel traces: the --throughputs worker type (default: v100)"));
  t.add(value_option("gavel-scaling", &tr.gavel_scaling, "linear|none|refuse", traces_read,
                     "Gavel traces: linear|none|refuse: a k-GPU job the --throughputs file measures only at 1 GPU runs "
                     "at k times the one-GPU steps per second (linear), at the one-GPU rate (none), or is an error "
                     "(refuse)"));
  t.add(value_option("assumed-iter-ms", &tr.assumed_iter_ms, "MS", traces_read,
                     "iteration time assumed for traces with durations but no iteration counts (Philly, Helios, Alibaba, "
                     "Acme, Lucid, PAI 2020, Pollux)"));
  t.add(value_option("assumed-memory", &tr.assumed_memory, "FRACTION|SIZE", traces_read,
                     "FRACTION|SIZE: memory of a job the trace gives no memory figure for (Philly, Helios, Alibaba's "
                     "whole-GPU and multi-GPU pods, models missing from the catalog): P = 0, E = this fraction in "
                     "(0, 1] of the GPU's memory, or this size (8GiB, at most the GPU's), u = 1; default 1, the whole GPU"));
  t.add(value_option("window", &tr.window, "START:END", traces_read,
                     "START:END: replay only jobs arriving in [START, END) of the trace's time axis, shifted to start at "
                     "0; seconds, or with a unit: 2h:3h, 90min:120min"));
  t.add(value_option("sample", &tr.sample, "P", traces_read,
                     "keep each job with this probability in (0, 1], drawn from --seed and its place in the file"));
}

}  // namespace salus::run
