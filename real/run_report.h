#pragma once
/// salus-run's body past its options: the policies run one after another on the real runner, the
/// switch latencies printed, and the summary (salus-sim's schema, with the real executor's
/// measurements merged into each result and job entry).
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/job.h"
#include "real/real_runner.h"
#include "run/run.h"

namespace salus::real {

/// Runs `jobs` under each of `policies` in turn on `runner`, keeping timelines when asked; stops
/// before the next policy once `stop` is set, and after a run whose device was lost (no later
/// policy can run on it), with a note in `notes` (and one when interrupted).
std::vector<run::PolicyRun> run_policies(RealRunner& runner, const std::vector<core::JobSpec>& jobs,
                                         const std::vector<std::string>& policies, bool record_timeline,
                                         const std::atomic<bool>& stop, std::vector<std::string>& notes);

/// One line per run, its measured switch latency: end of one job's last kernel to the start of
/// the next job's first kernel in the same lane (CUDA events; on the CPU device the host clock).
void print_switch_latencies(std::FILE* out, const std::vector<run::PolicyRun>& runs);

/// Copies each run's measurements (workers, lookahead, switch and stop latencies, memory outside
/// the pool, a fatal error, the injected faults, and each job's own) into `results` (run::results_json of the same
/// jobs and runs), so that readers of the common schema can ignore them.
void merge_measurements(nlohmann::json& results, const std::vector<run::PolicyRun>& runs, std::size_t job_count);

/// What salus-run's summary says of the run besides its results.
struct RunSummaryHeader {
  std::string trace, trace_format, profiles, device, math;
  core::Bytes capacity = 0;  ///< the pool
  double time_scale = 1;
  std::uint64_t seed = 1;
  std::vector<std::string> notes;
};
/// salus-run's summary JSON (tool "salus-run"; the CPUs this process may use).
nlohmann::json run_summary(const RunSummaryHeader& header, const std::vector<core::JobSpec>& jobs,
                           const std::vector<run::PolicyRun>& runs);

/// salus-run's exit status: 130 when interrupted, 1 when a job failed (the summary is written all
/// the same), else 0.
int run_exit_status(const std::vector<run::PolicyRun>& runs, bool interrupted);

}  // namespace salus::real
