#pragma once
/// Command-line pieces shared by salus-sim and salus-run: option values, notes, and the outputs.
#include <optional>
#include <string>
#include <vector>

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include "core/job.h"
#include "core/policy.h"
#include "run/load.h"
#include "run/output.h"
#include "run/sim_runner.h"
#include "traces/catalog.h"
#include "traces/trace.h"

namespace salus::run {

/// "fifo,srtf" -> names, each checked against the registry, none twice. Throws core::InputError.
/// `cluster_policies`: the preemptive cluster policies (cluster/lease_policy.h) are valid too
/// (salus-sim); otherwise such a name is an error that says which program runs it.
std::vector<std::string> parse_policy_list(const std::string& list, bool cluster_policies = false);
/// "--gpu-mem" value with a unit, positive. Throws core::InputError.
core::Bytes parse_capacity(const std::string& text);
/// "--lanes" value: single, auto or exclusive. Throws core::InputError.
core::LaneMode parse_lane_mode(const std::string& text);


/// The trace-reading options of salus-sim, salus-run and salus-trace stats, as typed.
struct TraceOptionValues {
  std::string format, durations = "trace", throughputs, worker_type, window, assumed_memory = "1", gavel_scaling = "linear";
  double sample = 1, assumed_iter_ms = 1000;
};
/// Checks the values; `seed` is the program's --seed. Throws core::InputError "--option: what".
traces::LoadOptions make_load_options(const TraceOptionValues& values, std::uint64_t seed);
/// The model options of salus-sim and salus-experiment (gpus_needed), as typed.
struct ModelOptionValues {
  std::string lanes, interference = "auto", lane_shrink = "on", placement, queue = "backfill", gangs = "hold";
  double share_exponent = 1, switch_ms = 0;
  // the preemptive cluster policies (cluster/lease_policy.h)
  std::string dlas_thresholds = "3250,7200", dlas_checks = "exact";
  double dlas_starvation = 0, restart_cost_ms = 0, round_s = 360, reset_s = 1920;
  std::string gpu_sharing = "exclusive";
};
/// Checks the values (`vm` tells which were given). Throws core::InputError "--option: what".
ModelOptions make_model_options(const ModelOptionValues& values, const boost::program_options::variables_map& vm);

/// The trace formats and how each maps to jobs, for --help and `salus-trace formats`.
std::string trace_formats_help(bool mappings);

/// Parses a command line against `desc` (and `positional`): exact option names only (no prefixes),
/// and no arguments beyond those `positional` names. An unknown option or an unexpected argument is
/// a core::InputError naming it and, when one is close, "did you mean --x?".
boost::program_options::parsed_options parse_command_line(
    int argc, char** argv, const boost::program_options::options_description& desc,
    const boost::program_options::positional_options_description* positional = nullptr);

/// What an output option writes: one file (written through a temporary beside it), or a folder
/// that the program creates and fills.
enum class OutputKind { kFile, kFolder };
struct OutputPath {
  std::string option;  ///< "--summary-json"
  std::string path;    ///< as given; empty: not asked for, not checked
  OutputKind kind = OutputKind::kFile;
};
/// An input file or folder a program reads (--trace, --profiles, ...), for check_output_paths.
struct InputPath {
  std::string option;  ///< "--trace"
  std::string path;    ///< as given; empty: none
};
/// Checks, before a program runs anything, that each output can be written: a file's path is not a
/// folder and its folder exists or can be made; a folder's path is not a file; no part of either
/// is a regular file; the folder that will hold it takes a new file. An output that exists must be
/// a regular file (a folder's: a folder): a device, FIFO or socket is never replaced. An output is
/// never one of `inputs` (the same file by st_dev and st_ino, so through links too); what a folder
/// output already holds under the names the programs write there (run_file_name) is checked the
/// same way. Throws core::InputError "--option: 'path': what is wrong".
void check_output_paths(const std::vector<OutputPath>& outputs, const std::vector<InputPath>& inputs = {});


/// "NAME VERSION" (the CMake project version, and `git describe` when the source was a git
/// checkout at configure time).
std::string version_text(const char* tool);

/// "on" or "off" for an --option taking a boolean; anything else is a core::InputError.
bool parse_on_off(const std::string& option, const std::string& value);


/// An error message as a program prints it: control bytes escaped (ESC as \x1b, a line break as
/// \x0a: one line that cannot drive the terminal), and past `max_bytes` its beginning and end with
/// "..." between (traces::text_excerpt).
std::string error_line(std::string_view what, std::size_t max_bytes);

/// Runs a program's body and turns errors into exit statuses (each message one line of at most
/// 300 characters with its prefix, error_line): bad input (core::InputError, a
/// command-line error) prints "<tool>: what" and returns 2; a broken invariant (std::logic_error)
/// "<tool>: internal error: what" and 1; any other failure "<tool>: error: what" and 1. Standard
/// output is flushed at the end: a failed write to it ("> /dev/full") is "<tool>: error: cannot
/// write to standard output" and 1 (the body's own status when that is not 0).
int guarded_main(const char* tool, int (*body)(int, char**), int argc, char** argv);

}  // namespace salus::run
