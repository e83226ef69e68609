#include "real/run_report.h"

#include "run/cpus.h"
#include "run/output.h"

namespace salus::real {

std::vector<run::PolicyRun> run_policies(RealRunner& runner, const std::vector<core::JobSpec>& jobs,
                                         const std::vector<std::string>& policies, bool record_timeline,
                                         const std::atomic<bool>& stop, std::vector<std::string>& notes) {
  std::vector<run::PolicyRun> runs;
  for (std::size_t p = 0; p < policies.size(); ++p) {
    if (stop.load()) break;
    const std::string& name = policies[p];
    runs.push_back(runner.run(jobs, name, record_timeline));
    if (const std::string& fatal = runs.back().outcome.fatal_error; !fatal.empty()) {
      // The device's context is gone: no later policy can run on it. Name those that did not
      // run, so that a summary with fewer results than policies says why.
      std::string skipped;
      for (std::size_t q = p + 1; q < policies.size(); ++q) skipped += (skipped.empty() ? "" : ", ") + policies[q];
      notes.push_back("the device was lost during the " + name + " run (" + fatal +
                      "): every unfinished job failed and no later policy ran" +
                      (skipped.empty() ? std::string() : " (not run: " + skipped + ")"));
      break;
    }
  }
  if (stop.load()) notes.push_back("interrupted (Ctrl-C): the summary covers what ran");
  return runs;
}

void print_switch_latencies(std::FILE* out, const std::vector<run::PolicyRun>& runs) {
  for (const run::PolicyRun& r : runs) {
    const nlohmann::json& sw = r.measured["switch_latency"];
    if (sw["count"].get<std::size_t>() == 0) {
      std::fprintf(out, "switch latency, %s: no switch\n", r.policy.c_str());
    } else {
      std::fprintf(out, "switch latency, %s: %zu switches, p50 %.3f ms, p99 %.3f ms, max %.3f ms (%s)\n", r.policy.c_str(),
                   sw["count"].get<std::size_t>(), sw["p50_ms"].get<double>(), sw["p99_ms"].get<double>(),
                   sw["max_ms"].get<double>(), sw["clock"].get<std::string>().c_str());
    }
  }
}

void merge_measurements(nlohmann::json& results, const std::vector<run::PolicyRun>& runs, std::size_t job_count) {
  for (std::size_t r = 0; r < runs.size(); ++r) {
    nlohmann::json& res = results[r];
    const nlohmann::json& measured = runs[r].measured;
    for (const char* key : {"workers", "workers_made_in_run", "lookahead", "switch_latency", "stop_latency",
                            "outside_pool_bytes", "outside_pool_growth_bytes", "fatal_error", "injected_faults"}) {
      // A key the executor did not measure (no faults injected) is left out: operator[] of a
      // const document on a missing key is undefined behaviour (it read past a block and threw
      // bad_alloc now and then in CI).
      if (measured.contains(key)) res[key] = measured[key];
    }
    for (std::size_t i = 0; i < job_count; ++i) {
      for (auto& [k, v] : measured.at("jobs").at(i).items()) {
        if (k != "id") res["jobs"][i][k] = v;
      }
    }
  }
}

nlohmann::json run_summary(const RunSummaryHeader& h, const std::vector<core::JobSpec>& jobs,
                           const std::vector<run::PolicyRun>& runs) {
  nlohmann::json summary;
  summary["tool"] = "salus-run";
  summary["trace"] = h.trace;
  summary["trace_format"] = h.trace_format;
  summary["profiles"] = h.profiles;
  summary["device"] = h.device;
  summary["math"] = h.math;
  summary["cpus"] = run::cpu_list_text(run::allowed_cpus());
  summary["gpu_mem_bytes"] = h.capacity;
  summary["time_scale"] = h.time_scale;
  summary["seed"] = h.seed;
  summary["notes"] = h.notes;
  summary["results"] = run::results_json(jobs, runs);
  merge_measurements(summary["results"], runs, jobs.size());
  return summary;
}

int run_exit_status(const std::vector<run::PolicyRun>& runs, bool interrupted) {
  if (interrupted) return 130;
  for (const run::PolicyRun& r : runs) {
    if (r.metrics.failed > 0) return 1;
  }
  return 0;
}

}  // namespace salus::real
