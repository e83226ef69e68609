// salus-sim: replays a job trace in the discrete-event simulator under one or more policies and
// prints the paper's Table 1 (makespan, average queuing, average JCT, 95th-percentile JCT).
#include <cstdio>
#include <exception>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "core/errors.h"
#include "core/units.h"
#include "experiments/output.h"
#include "experiments/sim_runner.h"
#include "policies/registry.h"
#include "sim/interference.h"
#include "traces/catalog.h"
#include "traces/trace.h"

namespace po = boost::program_options;
using namespace salus;

namespace {

constexpr int kBadInput = 2;

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    const auto b = item.find_first_not_of(" \t");
    const auto e = item.find_last_not_of(" \t");
    out.push_back(b == std::string::npos ? std::string() : item.substr(b, e - b + 1));
  }
  return out;
}

std::string default_trace() { return std::string(SALUS_DATA_DIR) + "/examples/small.csv"; }

struct Options {
  std::string trace;
  std::vector<std::string> policies;
  experiments::SimConfig cfg;
  std::string profiles;
  std::string summary_json;
  std::string out_dir;
  bool lanes_given = false;
};

Options parse(int argc, char** argv, bool* help) {
  std::string policy_list, gpu_mem, lanes, interference;
  double switch_ms = 0, noise_pct = 0;
  std::uint64_t seed = 0;
  Options o;
  po::options_description desc(
      "salus-sim: replay a job trace on one simulated GPU under Salus scheduling policies\n\nOptions");
  desc.add_options()
      ("help,h", "print this help")
      ("trace", po::value(&o.trace)->default_value(default_trace()),
       "trace file: native CSV, its JSON form, or a Tiresias CSV (recognised by its header)")
      ("policy", po::value(&policy_list)->default_value(policies::policy_names_joined()),
       ("comma-separated policies (valid: " + policies::policy_names_joined() + ")").c_str())
      ("gpu-mem", po::value(&gpu_mem)->default_value("16GiB"), "GPU memory capacity, with a unit (16GiB, 512MiB, 16GB)")
      ("lanes", po::value(&lanes), "single|auto: one shared lane, or lanes per Algorithm 1 "
       "(default: single for srtf and fair, auto for pack; fifo is always exclusive)")
      ("interference", po::value(&interference)->default_value("profiled"),
       "none: every iteration takes its solo time; profiled: concurrent lanes run at 1/max(1, sum u) speed")
      ("switch-cost-ms", po::value(&switch_ms)->default_value(1.0),
       "milliseconds added to the first iteration after a lane changes job")
      ("profiles", po::value(&o.profiles)->default_value(traces::Catalog::default_path()), "workload catalog (JSON)")
      ("summary-json", po::value(&o.summary_json), "write the summary JSON here")
      ("out", po::value(&o.out_dir), "write per-job CSVs, timelines, memory, lane moves and JCT CDFs into this directory")
      ("seed", po::value(&seed)->default_value(1), "seed for --profile-noise")
      ("profile-noise", po::value(&noise_pct)->default_value(0.0),
       "percent: each job's actual iteration time is its profile times U[1-x%, 1+x%] (policies see the profile)");
  po::variables_map vm;
  po::store(po::command_line_parser(argc, argv).options(desc).run(), vm);
  if (vm.count("help")) {
    std::cout << desc << "\nPolicies:\n";
    for (const std::string& name : policies::policy_names()) {
      std::cout << "  " << name << ": " << policies::make_policy(name)->description() << "\n";
    }
    *help = true;
    return o;
  }
  po::notify(vm);
  for (const std::string& p : split_list(policy_list)) {
    policies::make_policy(p);  // throws with the valid names
    for (const std::string& q : o.policies) {
      if (q == p) throw core::InputError("--policy: '" + p + "' is listed twice");
    }
    o.policies.push_back(p);
  }
  std::string why;
  const auto cap = core::parse_size(gpu_mem, &why);
  if (!cap) throw core::InputError("--gpu-mem: " + why);
  if (*cap <= 0) throw core::InputError("--gpu-mem: must be positive");
  o.cfg.capacity = *cap;
  if (vm.count("lanes")) {
    if (lanes == "single") o.cfg.lanes = core::LaneMode::kSingle;
    else if (lanes == "auto") o.cfg.lanes = core::LaneMode::kAuto;
    else throw core::InputError("--lanes: unknown lane mode '" + lanes + "' (valid: single, auto)");
    o.lanes_given = true;
  }
  sim::make_interference(interference);  // throws with the valid names
  o.cfg.interference = interference;
  const auto sw = core::ns_from_ms(switch_ms);
  if (!sw) throw core::InputError("--switch-cost-ms: must be a non-negative number");
  o.cfg.switch_cost_ns = *sw;
  if (!(noise_pct >= 0 && noise_pct < 100)) throw core::InputError("--profile-noise: must be in [0, 100)");
  o.cfg.profile_noise = noise_pct / 100.0;
  o.cfg.seed = seed;
  o.cfg.record_timeline = !o.out_dir.empty();
  return o;
}

int run(int argc, char** argv) {
  bool help = false;
  const Options o = parse(argc, argv, &help);
  if (help) return 0;
  const traces::Catalog catalog = traces::Catalog::load(o.profiles);
  const traces::Trace trace = traces::load_trace(o.trace, catalog);
  const std::vector<core::JobSpec> jobs = traces::jobs_for_capacity(trace, o.cfg.capacity);

  std::vector<std::string> notes = trace.notes;
  std::vector<experiments::SimRun> runs;
  for (const std::string& name : o.policies) {
    const auto policy = policies::make_policy(name);
    if (o.lanes_given && !policy->supports(*o.cfg.lanes)) {
      notes.push_back(name + " runs in " + core::to_string(policy->default_lane_mode()) + " mode; --lanes " +
                      core::to_string(*o.cfg.lanes) + " does not apply to it");
    }
    runs.push_back(experiments::simulate(jobs, name, o.cfg));
  }

  std::printf("salus-sim: %s (%s, %zu jobs), GPU %s, interference %s, switch cost %s ms\n", o.trace.c_str(),
              traces::to_string(trace.format), jobs.size(), core::format_size(o.cfg.capacity).c_str(),
              o.cfg.interference.c_str(), experiments::seconds_text(o.cfg.switch_cost_ns * 1000).c_str());
  for (const std::string& n : notes) std::printf("note: %s\n", n.c_str());
  for (const experiments::SimRun& r : runs) {
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      if (r.outcome.jobs[i].status == core::JobStatus::kRejected) {
        std::printf("note: %s: job %s rejected: %s\n", r.policy.c_str(), jobs[i].id.c_str(),
                    r.outcome.jobs[i].reason.c_str());
      }
    }
  }
  std::ostringstream table;
  experiments::print_table(table, runs);
  std::fputs(table.str().c_str(), stdout);

  nlohmann::json summary;
  summary["tool"] = "salus-sim";
  summary["trace"] = o.trace;
  summary["trace_format"] = traces::to_string(trace.format);
  summary["profiles"] = o.profiles;
  summary["gpu_mem_bytes"] = o.cfg.capacity;
  summary["interference"] = o.cfg.interference;
  summary["switch_cost_ms"] = static_cast<double>(o.cfg.switch_cost_ns) / 1e6;
  summary["seed"] = o.cfg.seed;
  summary["profile_noise"] = o.cfg.profile_noise;
  summary["notes"] = notes;
  summary["results"] = experiments::results_json(jobs, runs);
  const std::string text = summary.dump(2) + "\n";
  if (!o.summary_json.empty()) experiments::write_text_file(o.summary_json, text);
  if (!o.out_dir.empty()) {
    experiments::write_run_files(o.out_dir, jobs, runs);
    experiments::write_text_file(o.out_dir + "/summary.json", text);
    std::printf("wrote %s/{summary.json,jct_cdf.csv,<policy>_{jobs,timeline,memory,lane_moves}.csv}\n",
                o.out_dir.c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const core::InputError& e) {
    std::fprintf(stderr, "salus-sim: %s\n", e.what());
    return kBadInput;
  } catch (const po::error& e) {
    std::fprintf(stderr, "salus-sim: %s (see --help)\n", e.what());
    return kBadInput;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "salus-sim: internal error: %s\n", e.what());
    return 1;
  }
}
