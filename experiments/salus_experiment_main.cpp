// salus-experiment: runs the paper's experiments (§5) in the simulator by name, writes
// DIR/NAME.json with their figures, prints the paper's numbers beside ours, and draws the
// figures with plots/make_figures.py.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <stdexcept>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "core/errors.h"
#include "experiments/cli.h"
#include "experiments/fidelity.h"
#include "experiments/output.h"
#include "experiments/paper_experiments.h"
#include "traces/catalog.h"
#include "traces/trace.h"

namespace po = boost::program_options;
using namespace salus;

namespace {

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

/// Debian's interpreter first: it is the one that sees python3-matplotlib.
std::string python() { return access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3"; }

/// Draws the figures of `names`; returns false (and says why) when they could not be drawn.
bool draw(const std::string& dir, const std::vector<std::string>& names) {
  std::string only;
  for (const std::string& n : names) only += (only.empty() ? "" : ",") + n;
  const std::string script = std::string(SALUS_SOURCE_DIR) + "/plots/make_figures.py";
  const std::string cmd =
      python() + " " + shell_quote(script) + " --in " + shell_quote(dir) + " --out " + shell_quote(dir) + " --only " + only;
  std::fflush(stdout);
  const int rc = std::system(cmd.c_str());
  if (rc == -1 || !WIFEXITED(rc)) {
    std::fprintf(stderr, "salus-experiment: could not run %s\n", cmd.c_str());
    return false;
  }
  if (WEXITSTATUS(rc) != 0) {
    std::fprintf(stderr, "salus-experiment: figures not drawn (%s exited with %d)\n", cmd.c_str(), WEXITSTATUS(rc));
    return false;
  }
  return true;
}

/// The directory this program lives in: salus-profile, salus-run and salus-sim are built (and
/// bundled) beside it.
std::string own_dir() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : self.parent_path().string();
}

/// Runs a sibling program with `args`, its output to `log`; throws with the log's tail if it fails.
void run_sibling(const std::string& program, const std::string& args, const std::string& log) {
  const std::string cmd = shell_quote(own_dir() + "/" + program) + " " + args + " > " + shell_quote(log) + " 2>&1";
  std::printf("fidelity: %s %s\n", program.c_str(), args.c_str());
  std::fflush(stdout);
  const int rc = std::system(cmd.c_str());
  if (rc == -1 || !WIFEXITED(rc) || WEXITSTATUS(rc) != 0) {
    std::string tail = experiments::read_text_tail(log, 1200);
    throw std::runtime_error(program + " failed (exit " + std::to_string(WIFEXITED(rc) ? WEXITSTATUS(rc) : -1) +
                             "), log " + log + ":\n" + tail);
  }
}

/// salus-experiment fidelity: the trace's workloads profiled on the device (unless a catalog is
/// given), the trace run under the four policies on the real executor `repeat` times and once in
/// the simulator with that catalog, and the two compared per policy (medians over the repeats).
nlohmann::json run_fidelity(const std::string& device, const std::string& trace, const std::string& given_profiles,
                            const std::string& gpu_mem, int repeat, const std::string& out_dir) {
  std::filesystem::create_directories(out_dir);
  const std::string q_trace = shell_quote(trace), q_mem = shell_quote(gpu_mem);
  std::string catalog = given_profiles;
  if (catalog.empty()) {
    // The trace's workloads, as named in it (the shipped catalog knows every real workload).
    const traces::Trace t = traces::load_trace(trace, traces::Catalog::load_default());
    std::vector<std::string> names;
    for (const core::JobSpec& j : t.jobs) {
      if (std::find(names.begin(), names.end(), j.workload) == names.end()) names.push_back(j.workload);
    }
    std::string list;
    for (const std::string& n : names) list += (list.empty() ? "" : ",") + n;
    catalog = out_dir + "/fidelity_catalog.json";
    // Two seconds per workload: on a shared machine a half-second measurement can catch a
    // neighbour's burst, and every simulated job inherits the error.
    run_sibling("salus-profile", "--device " + shell_quote(device) + " --gpu-mem " + q_mem + " --min-seconds 2" +
                                     " --workloads " + shell_quote(list) + " --out " + shell_quote(catalog),
                out_dir + "/fidelity_profile.log");
  }
  const std::string q_cat = shell_quote(catalog);
  const std::string sim_summary = out_dir + "/fidelity_sim.json";
  run_sibling("salus-sim", "--trace " + q_trace + " --profiles " + q_cat + " --gpu-mem " + q_mem + " --summary-json " +
                               shell_quote(sim_summary),
              out_dir + "/fidelity_sim.log");
  const nlohmann::json sim = nlohmann::json::parse(experiments::read_text_tail(sim_summary, 1 << 30));
  std::map<std::string, std::vector<experiments::FidelityRow>> by_policy;
  std::vector<std::string> order;
  nlohmann::json repeats = nlohmann::json::array(), per_job = nlohmann::json::object();
  for (int r = 1; r <= repeat; ++r) {
    const std::string real_summary = out_dir + "/fidelity_real_" + std::to_string(r) + ".json";
    run_sibling("salus-run", "--device " + shell_quote(device) + " --trace " + q_trace + " --profiles " + q_cat +
                                 " --gpu-mem " + q_mem + " --summary-json " + shell_quote(real_summary),
                out_dir + "/fidelity_real_" + std::to_string(r) + ".log");
    const nlohmann::json real = nlohmann::json::parse(experiments::read_text_tail(real_summary, 1 << 30));
    nlohmann::json rows = nlohmann::json::array();
    for (const experiments::FidelityRow& row : experiments::compare_summaries(sim, real)) {
      if (by_policy.count(row.policy) == 0) order.push_back(row.policy);
      by_policy[row.policy].push_back(row);
      rows.push_back(experiments::to_json(row));
    }
    repeats.push_back(rows);
    if (r == 1) {
      // Per job, simulated against measured (the first repeat), for the figure.
      for (const nlohmann::json& res : real.at("results")) {
        const std::string policy = res.at("policy").get<std::string>();
        std::map<std::string, double> sim_jct;
        for (const nlohmann::json& sr : sim.at("results")) {
          if (sr.at("policy") != policy) continue;
          for (const nlohmann::json& j : sr.at("jobs")) {
            if (j.at("status") == "done") sim_jct[j.at("id").get<std::string>()] = j.at("jct_s").get<double>();
          }
        }
        nlohmann::json jobs = nlohmann::json::array();
        for (const nlohmann::json& j : res.at("jobs")) {
          const auto it = sim_jct.find(j.at("id").get<std::string>());
          if (j.at("status") != "done" || it == sim_jct.end()) continue;
          jobs.push_back({{"id", j.at("id")}, {"jct_real_s", j.at("jct_s")}, {"jct_sim_s", it->second}});
        }
        per_job[policy] = jobs;
      }
    }
  }
  std::vector<experiments::FidelityRow> medians;
  nlohmann::json policies = nlohmann::json::object();
  for (const std::string& p : order) {
    medians.push_back(experiments::median_row(by_policy[p]));
    policies[p] = experiments::to_json(medians.back());
  }
  std::printf("\nfidelity on %s: %s, catalog %s, median of %d repeat(s) (errors relative to the measured run)\n%s",
              device.c_str(), trace.c_str(), catalog.c_str(), repeat, experiments::fidelity_table(medians).c_str());
  return {{"experiment", "fidelity"},
          {"version", 1},
          {"executor", "real"},
          {"device", device},
          {"trace", trace},
          {"catalog", catalog},
          {"interference", sim.value("interference", "")},
          {"switch_cost_ms", sim.value("switch_cost_ms", 0.0)},
          {"repeat", repeat},
          {"policies", policies},
          {"repeats", repeats},
          {"per_job", per_job}};
}

int run(int argc, char** argv) {
  std::string name, out_dir, profiles, gpu_mem, plots, data_dir, executor, device, trace;
  int repeat = 3;
  po::options_description desc(
      "salus-experiment NAME|all --out DIR: run the paper's experiments in the simulator\n\nOptions");
  desc.add_options()
      ("help,h", "print this help and the experiments")
      ("name", po::value(&name), ("experiment: " + experiments::experiment_names_joined() + ", or all").c_str())
      ("out", po::value(&out_dir)->default_value("out/experiments"), "write NAME.json, its CSVs and its figures here")
      ("inputs", po::value(&data_dir)->default_value(SALUS_DATA_DIR),
       "directory with the experiments' inputs (long_trace_100.csv, experiments/...)")
      ("profiles", po::value(&profiles)->default_value(traces::Catalog::default_path()), "workload catalog (JSON)")
      ("gpu-mem", po::value(&gpu_mem)->default_value("16GiB"), "GPU memory capacity (the paper's P100: 16GiB)")
      ("executor", po::value(&executor)->default_value("sim"),
       "sim: the discrete-event simulator; real: the real backend (fidelity only, so far: the paper's "
       "experiments use workloads the real backend does not implement)")
      ("device", po::value(&device)->default_value("cpu"), "with --executor real: cpu or cuda")
      ("trace", po::value(&trace), "fidelity: the trace (default: the shipped traces/experiments/fidelity_cpu.csv)")
      ("repeat", po::value(&repeat)->default_value(3), "fidelity: real runs of the trace (the medians are reported)")
      ("plots", po::value(&plots)->default_value("auto"),
       "auto: draw the figures when matplotlib is there, else say how to get it; on: failing to draw is an error; off");
  po::positional_options_description pos;
  pos.add("name", 1);
  po::variables_map vm;
  po::store(po::command_line_parser(argc, argv).options(desc).positional(pos).run(), vm);
  if (vm.count("help")) {
    std::cout << desc << "\nExperiments (inputs under " << SALUS_DATA_DIR << "):\n";
    for (const auto& e : experiments::experiment_list()) {
      std::cout << "  " << e.name << " (v" << e.version << "): " << e.description << "\n      input: " << e.inputs << "\n";
    }
    return 0;
  }
  po::notify(vm);
  if (name.empty()) {
    throw core::InputError("name an experiment (valid: " + experiments::experiment_names_joined() + ", fidelity, all)");
  }
  if (plots != "auto" && plots != "on" && plots != "off") {
    throw core::InputError("--plots: unknown value '" + plots + "' (valid: auto, on, off)");
  }
  if (executor != "sim" && executor != "real") {
    throw core::InputError("--executor: unknown executor '" + executor + "' (valid: sim, real)");
  }
  if (device != "cpu" && device != "cuda") throw core::InputError("--device: unknown device '" + device + "' (valid: cpu, cuda)");
  if (name == "fidelity") {
    if (executor != "real") {
      throw core::InputError("fidelity compares the simulator with the real executor: give --executor real");
    }
    if (repeat < 1 || repeat > 20) throw core::InputError("--repeat: must be from 1 to 20");
    if (trace.empty()) trace = data_dir + "/experiments/fidelity_cpu.csv";
    const std::string given = vm["profiles"].defaulted() ? std::string() : profiles;
    const nlohmann::json j = run_fidelity(device, trace, given, gpu_mem, repeat, out_dir);
    const std::string path = out_dir + "/fidelity.json";
    experiments::write_text_file(path, j.dump(2) + "\n");
    std::cout << "wrote " << path << "\n";
    std::cout.flush();
    if (plots == "off") return 0;
    if (!draw(out_dir, {"fidelity"}) && plots == "on") return 1;
    return 0;
  }
  if (executor == "real") {
    throw core::InputError(name + ": --executor real is not available: the paper's experiments use workloads the real "
                           "backend does not implement (only fidelity runs on it so far); use --executor sim");
  }
  if (vm.count("trace") || !vm["repeat"].defaulted()) throw core::InputError("--trace and --repeat are for fidelity only");
  std::vector<std::string> names;
  if (name == "all") {
    for (const auto& e : experiments::experiment_list()) names.push_back(e.name);
  } else {
    names.push_back(name);  // run_experiment rejects an unknown name with the valid ones
  }
  experiments::ExperimentContext ctx;
  ctx.data_dir = data_dir;
  ctx.profiles = profiles;
  ctx.out_dir = out_dir;
  ctx.capacity = experiments::parse_capacity(gpu_mem);
  ctx.log = &std::cout;
  for (const std::string& n : names) {
    const nlohmann::json j = experiments::run_experiment(n, ctx);
    const std::string path = out_dir + "/" + n + ".json";
    experiments::write_text_file(path, j.dump(2) + "\n");
    std::cout << "wrote " << path << "\n\n";
  }
  std::cout.flush();
  if (plots == "off") return 0;
  if (!draw(out_dir, names)) {
    if (plots == "on") return 1;
    std::fprintf(stderr, "salus-experiment: the JSON is written; draw later with: %s %s/plots/make_figures.py --in %s --out %s\n",
                 python().c_str(), SALUS_SOURCE_DIR, out_dir.c_str(), out_dir.c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return experiments::guarded_main("salus-experiment", run, argc, argv); }
