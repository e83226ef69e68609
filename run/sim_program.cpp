#include "run/sim_program.h"

#include <unistd.h>

#include <iostream>

#include "core/units.h"
#include "run/output.h"
#include "run/progress.h"

namespace salus::run {

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
    return head + "cluster of " + cfg.cluster->describe() + ", placement " + placement_text(cfg, runs) + ", " + tail;
  }
  return head + "GPU " + core::format_size(cfg.capacity) + ", " + tail;
}

std::string cluster_out_note(const SimConfig& cfg, bool out_given) {
  if (!cfg.cluster || cfg.cluster->gpus.size() <= 1 || !out_given) return "";
  return "a cluster of several GPUs: --out writes every GPU's timeline, memory and lane moves, each row led by "
         "its gpu (lane ids are per GPU), and <policy>_job_gpus.csv, _gpus_busy.csv and _jct_by_size.csv";
}

}  // namespace salus::run
