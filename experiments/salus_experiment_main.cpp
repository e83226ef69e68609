// salus-experiment: runs the paper's experiments (§5) in the simulator by name, writes
// DIR/NAME.json with their figures, prints the paper's numbers beside ours, and draws the
// figures with plots/make_figures.py.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "core/errors.h"
#include "experiments/cli.h"
#include "experiments/output.h"
#include "experiments/paper_experiments.h"
#include "traces/catalog.h"

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

int run(int argc, char** argv) {
  std::string name, out_dir, profiles, gpu_mem, plots, data_dir;
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
  if (name.empty()) throw core::InputError("name an experiment (valid: " + experiments::experiment_names_joined() + ", all)");
  if (plots != "auto" && plots != "on" && plots != "off") {
    throw core::InputError("--plots: unknown value '" + plots + "' (valid: auto, on, off)");
  }
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
