#pragma once
/// salus-sim's body: its command line read against the option table (parse_sim_command_line), the
/// trace loaded and the policies simulated in turn with a progress line (run_sim_program), the
/// header line over the table, the summary's header, and the cluster's note on --out. salus-sim
/// and the Python module (python/) both go through these, so the two take the same options with
/// the same defaults and compute the same runs.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/job.h"
#include "run/load.h"
#include "run/options.h"
#include "run/output.h"
#include "run/sim_runner.h"
#include "traces/trace.h"

namespace salus::run {

/// salus-sim's options, as typed (`v`) and converted.
struct SimProgramOptions {
  OptionValues v;  ///< as typed: the paths, --time-scale, --quiet, ...
  std::vector<std::string> policies;
  SimConfig cfg;
  TimelineMode timeline = TimelineMode::kRuns;
  ModelOptions model;   ///< --lanes, --interference, --switch-cost-ms, --placement, ...
  traces::LoadOptions load;  ///< --format, --window, --sample, ...
  /// Options given that change nothing in this run, each a note saying why (never silent).
  std::vector<std::string> unused;
};

/// Reads salus-sim's command line (argv[0] the program) against the option table into `o`, every
/// value checked and every output path checked before anything runs. Returns false when it
/// printed --help or --version instead (the program is done). Throws core::InputError or a
/// boost::program_options::error for bad input, as salus-sim reports them.
bool parse_sim_command_line(int argc, char** argv, SimProgramOptions& o);

/// One option salus-sim takes, as its --help lists it (the table's entries tagged kSim).
struct SimOptionInfo {
  std::string name;        ///< without "--"
  std::string value_name;  ///< "SIZE"; empty: a switch (--quiet) or a flag (--help, --version)
  std::string help;
  std::string default_text;  ///< the value stored when it is not given; empty: none
  bool is_switch = false;    ///< present or not (--quiet)
};
/// salus-sim's options in --help order, defaults as the table stores them.
std::vector<SimOptionInfo> sim_options();

/// What salus-sim computes before it prints: the trace and its jobs, the notes, one run per policy.
struct SimProgramResult {
  TraceJobs loaded;
  SimConfig cfg;  ///< the options' configuration with the model applied (apply_model)
  std::vector<std::string> notes;
  std::vector<PolicyRun> runs;
};
/// Loads the trace of `o` with its model and simulates each policy in turn (progress line on
/// stderr unless --quiet). Throws core::InputError for bad input.
SimProgramResult run_sim_program(const SimProgramOptions& o);

/// The summary JSON's header (everything but "results") of a run_sim_program result, with
/// `trace_name` as its "trace" (salus-sim: the --trace path).
nlohmann::json sim_program_summary_header(const SimProgramOptions& o, const SimProgramResult& r,
                                          const std::string& trace_name);
/// The summary JSON's text, the bytes salus-sim writes to --summary-json: `header` with "results"
/// in its sorted place, two-space indented, ending in a newline.
std::string summary_json_text(const nlohmann::json& header, const std::vector<core::JobSpec>& jobs,
                              const std::vector<PolicyRun>& runs);

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
