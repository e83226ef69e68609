#pragma once
/// Outputs shared by the programs: the Table 1 text table, the summary JSON and the per-run CSVs.
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/job.h"
#include "experiments/sim_runner.h"

namespace salus::experiments {

/// Exact decimal seconds of a nanosecond count, e.g. 1500000 -> "0.0015".
std::string seconds_text(core::TimeNs ns);

/// The paper's Table 1 form: one row per run.
void print_table(std::ostream& os, const std::vector<SimRun>& runs);

/// One "results" entry per run (core::result_json).
nlohmann::json results_json(const std::vector<core::JobSpec>& jobs, const std::vector<SimRun>& runs);

/// Writes DIR/<policy>_jobs.csv, _timeline.csv, _memory.csv, _lane_moves.csv and DIR/jct_cdf.csv.
/// Throws core::InputError when a file cannot be written.
void write_run_files(const std::string& dir, const std::vector<core::JobSpec>& jobs, const std::vector<SimRun>& runs);

/// Writes text to a file, creating parent directories; throws core::InputError on failure.
/// The last `max_bytes` of a file ("" when it cannot be read): logs in error messages, whole
/// small files otherwise.
std::string read_text_tail(const std::string& path, std::size_t max_bytes);
void write_text_file(const std::string& path, const std::string& text);

}  // namespace salus::experiments
