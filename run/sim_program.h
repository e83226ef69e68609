#pragma once
/// salus-sim's body past its options: the policies simulated in turn with a progress line, the
/// header line over the table, and the cluster's note on --out.
#include <string>
#include <vector>

#include "core/job.h"
#include "run/sim_runner.h"
#include "traces/trace.h"

namespace salus::run {

/// Simulates `jobs` under each of `policies` in turn with `cfg`, with a progress line on stderr
/// (when it is a terminal and a run lasts long enough) unless `quiet`.
std::vector<PolicyRun> simulate_policies(const std::vector<core::JobSpec>& jobs, const std::vector<std::string>& policies,
                                      SimConfig cfg, bool quiet);

/// The placement the runs used: the one `cfg` names, else "per policy (fifo first-fit, ...)".
std::string placement_text(const SimConfig& cfg, const std::vector<PolicyRun>& runs);

/// salus-sim's line over the table: the trace, its format and jobs, the GPU or cluster (with its
/// placement), the interference model and the switching cost.
std::string sim_header_line(const std::string& trace_path, const traces::Trace& trace, std::size_t jobs,
                            const SimConfig& cfg, const std::vector<PolicyRun>& runs);

/// The note a cluster of several GPUs adds when --out is given ("" otherwise).
std::string cluster_out_note(const SimConfig& cfg, bool out_given);

}  // namespace salus::run
