#include "experiments/program.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <ostream>

#include "core/errors.h"
#include "experiments/siblings.h"
#include "run/output.h"
#include "traces/catalog.h"

namespace salus::experiments {

std::vector<std::string> select_experiments(const std::string& name, bool real_executor) {
  const auto& registry = experiment_registry();
  if (name.empty()) throw core::InputError("name an experiment (valid: " + registry.names_joined() + ", or all)");
  std::vector<std::string> names;
  if (name == "all") {
    for (const auto& e : registry.entries()) {
      const bool runs_here = real_executor ? !e.factory.real_variant.empty() : !e.factory.inputs.empty();
      if (e.factory.in_all && runs_here) names.emplace_back(e.name);
    }
  } else {
    if (!registry.find(name)) throw core::InputError(registry.unknown(name, ", or all"));
    names.push_back(name);
  }
  return names;
}

void profile_real_inputs(const std::vector<std::string>& names, ExperimentContext& ctx) {
  std::vector<std::string> traces;
  for (const std::string& n : names) {
    for (const std::string& t : real_inputs(n, ctx.data_dir)) traces.push_back(t);
  }
  if (ctx.profiles_given || traces.empty()) return;
  std::filesystem::create_directories(ctx.out_dir);
  ctx.profiles = ctx.out_dir + "/real_catalog.json";
  profile_on_device(ctx.device, trace_workloads(traces), ctx.gpu_mem, ctx.profiles, ctx.out_dir + "/real_profile.log");
}

void run_and_write(const std::vector<std::string>& names, ExperimentContext& ctx) {
  for (const std::string& n : names) {
    const nlohmann::json j = run_experiment(n, ctx);
    const std::string path = ctx.out_dir + "/" + n + ".json";
    run::write_text_file(path, j.dump(2) + "\n");
    if (ctx.log != nullptr) *ctx.log << "wrote " << path << "\n\n";
  }
}

std::string python() { return access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3"; }

bool draw_figures(const std::string& dir, const std::vector<std::string>& names) {
  std::string only;
  for (const std::string& n : names) only += (only.empty() ? "" : ",") + n;
  const std::string script = traces::plots_dir() + "/make_figures.py";
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

std::string draw_later_command(const std::string& dir) {
  return python() + " " + traces::plots_dir() + "/make_figures.py --in " + dir + " --out " + dir;
}

}  // namespace salus::experiments
