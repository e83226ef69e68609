#include "experiments/siblings.h"

#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include "run/cpus.h"
#include "run/output.h"
#include "traces/catalog.h"
#include "traces/trace.h"

namespace salus::experiments {

// The experiments are configurations over the runner seam (run/).
using namespace salus::run;
namespace {

/// The directory this program lives in.
std::string own_dir() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : self.parent_path().string();
}

}  // namespace

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

void run_sibling(const std::string& program, const std::string& args, const std::string& log) {
  // salus-run and salus-profile pin the cpu device to one CPU unless told: they run where this
  // process may run, pinned or not, as the user chose for it (run/cpus.h).
  const std::vector<int> mine = allowed_cpus();
  const std::string cpus = (program == "salus-run" || program == "salus-profile") && !mine.empty()
                               ? " --cpus " + cpu_list_text(mine)
                               : std::string();
  const std::string cmd =
      shell_quote(own_dir() + "/" + program) + " " + args + cpus + " > " + shell_quote(log) + " 2>&1";
  std::printf("run: %s %s\n", program.c_str(), args.c_str());
  std::fflush(stdout);
  const int rc = std::system(cmd.c_str());
  if (rc == -1 || !WIFEXITED(rc) || WEXITSTATUS(rc) != 0) {
    const std::string tail = read_text_tail(log, 1200);
    throw std::runtime_error(program + " failed (exit " + std::to_string(WIFEXITED(rc) ? WEXITSTATUS(rc) : -1) +
                             "), log " + log + ":\n" + tail);
  }
}

std::vector<std::string> trace_workloads(const std::vector<std::string>& traces) {
  std::vector<std::string> names;
  const traces::Catalog catalog = traces::Catalog::load_default();
  for (const std::string& path : traces) {
    for (const core::JobSpec& j : traces::load_trace(path, catalog).jobs) {
      if (std::find(names.begin(), names.end(), j.workload) == names.end()) names.push_back(j.workload);
    }
  }
  return names;
}

void profile_on_device(const std::string& device, const std::vector<std::string>& workloads,
                       const std::string& gpu_mem, const std::string& catalog, const std::string& log,
                       const std::string& options) {
  std::string list;
  for (const std::string& n : workloads) list += (list.empty() ? "" : ",") + n;
  // Two seconds per workload by default: on a shared machine a half-second measurement can catch
  // a neighbour's burst, and every simulated job inherits the error.
  run_sibling("salus-profile", "--device " + shell_quote(device) + " --gpu-mem " + shell_quote(gpu_mem) + " " + options +
                                   " --workloads " + shell_quote(list) + " --out " + shell_quote(catalog),
              log);
}

}  // namespace salus::experiments
