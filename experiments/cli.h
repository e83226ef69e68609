#pragma once
/// Command-line pieces shared by salus-sim and salus-run: option values, notes, and the outputs.
#include <optional>
#include <string>
#include <vector>

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include "core/job.h"
#include "core/policy.h"
#include "experiments/output.h"
#include "experiments/sim_runner.h"
#include "traces/catalog.h"
#include "traces/trace.h"

namespace salus::experiments {

/// "fifo,srtf" -> names, each checked against the registry, none twice. Throws core::InputError.
std::vector<std::string> parse_policy_list(const std::string& list);
/// "--gpu-mem" value with a unit, positive. Throws core::InputError.
core::Bytes parse_capacity(const std::string& text);
/// "--lanes" value: single, auto or exclusive. Throws core::InputError.
core::LaneMode parse_lane_mode(const std::string& text);
/// Notes for policies that ignore the requested lane mode.
std::vector<std::string> lane_mode_notes(const std::vector<std::string>& policies, std::optional<core::LaneMode> lanes);

/// A trace and the jobs to run from it: loaded with the catalog at `profiles`, memory assumptions
/// resolved for `capacity`, scaled down by `time_scale` (>= 1). Throws core::InputError.
struct TraceJobs {
  traces::Trace trace;
  std::vector<core::JobSpec> jobs;
  sim::PairSlowdowns pairs;  ///< the catalog's measured pairs, in parts per million (may be empty)
  sim::ShareWeights share_weights;  ///< the `shares` model's weights fitted to them (empty without pairs)
  std::optional<core::TimeNs> switch_ns;  ///< the catalog's measured switch latency, if any
  std::optional<std::string> interference;  ///< the model the catalog names (checked against the table), if any
  sim::CrowdFactors crowd_factors;  ///< the `crowds` model's factors, the catalog's crowds against its pairs (may be empty)
  sim::Capacities capacities;       ///< the `capacity` model's C, the catalog's sweeps (may be empty)
};
/// What the interference models take from a catalog: its pairs in parts per million (both orders),
/// the `shares` weights fitted to them, the crowd factors of its crowds against them, and the
/// capacities of its sweeps.
struct CatalogInterference {
  sim::PairSlowdowns pairs;
  sim::ShareWeights share_weights;
  sim::CrowdFactors crowd_factors;
  sim::Capacities capacities;
};
CatalogInterference catalog_interference(const traces::Catalog& catalog);
/// The model `--interference auto` stands for: the one the catalog names (salus-profile writes
/// the one that fits its device), else `shares` when the catalog has pairs, else `profiled`.
/// `share_weights` are TraceJobs::share_weights (empty without pairs), `catalog_model` its interference.
std::string auto_interference(const std::optional<std::string>& catalog_model, const sim::ShareWeights& share_weights);
/// `load` says how to read the trace (--format, --window, ...). `gpus` is the number of GPUs the
/// run has: with 1, multi-GPU jobs are folded onto it (traces::fold_onto_one_gpu, with a note);
/// any other number (gpus_needed passes 0: it tries many) keeps them gang jobs.
TraceJobs load_jobs(const std::string& trace_path, const std::string& profiles, core::Bytes capacity, double time_scale,
                    const traces::LoadOptions& load = {}, int gpus = 1);

/// The trace-reading options of salus-sim, salus-run and salus-trace stats, as typed.
struct TraceOptionValues {
  std::string format, durations = "trace", throughputs, worker_type, window, assumed_memory = "1", gavel_scaling = "linear";
  double sample = 1, assumed_iter_ms = 1000;
};
/// Adds --format, --durations, --throughputs, --worker-type, --assumed-iter-ms, --assumed-memory,
/// --window and --sample to `desc`.
void add_trace_options(boost::program_options::options_description& desc, TraceOptionValues& values);
/// Checks the values; `seed` is the program's --seed. Throws core::InputError "--option: what".
traces::LoadOptions make_load_options(const TraceOptionValues& values, std::uint64_t seed);
/// The model options of salus-sim and salus-experiment (gpus_needed), as typed.
struct ModelOptionValues {
  std::string lanes, interference = "auto", lane_shrink = "on", placement;
  double share_exponent = 1, switch_ms = 0;
};
/// Adds --lanes, --interference, --share-exponent, --lane-shrink, --switch-cost-ms and
/// --placement to `desc`; `interference_extra` and `placement_extra` end those two options' help
/// (what the program does with them beyond salus-sim's meaning).
void add_model_options(boost::program_options::options_description& desc, ModelOptionValues& values,
                       const std::string& interference_extra = "", const std::string& placement_extra = "");
/// The model options, checked.
struct ModelOptions {
  std::optional<core::LaneMode> lanes;         ///< nullopt: each policy's default
  std::string interference = "auto";           ///< a model's name, or auto (apply_model resolves it)
  double share_exponent = 1;
  bool lane_shrink = true;
  std::optional<core::TimeNs> switch_cost_ns;  ///< --switch-cost-ms, when given
  std::string placement;                       ///< a placement's name; "": each policy's own (cluster::default_placement)
};
/// Checks the values (`vm` tells which were given). Throws core::InputError "--option: what".
ModelOptions make_model_options(const ModelOptionValues& values, const boost::program_options::variables_map& vm);
/// Sets `cfg`'s model from `m` and the catalog that `t` was loaded with: lanes, lane shrink,
/// share exponent, placement; the switch cost (--switch-cost-ms, which is then every job's
/// (JobSpec::switch_ns = -1 in t.jobs), else the catalog's, else 1 ms); the interference model
/// (auto: auto_interference) and the catalog's tables it reads (moved out of `t`). Throws
/// core::InputError when the model lacks its tables ("pairs" without a pair table, ...).
void apply_model(const ModelOptions& m, TraceJobs& t, SimConfig& cfg);
/// The notes of a run with this model under `policies`: those that ignore --lanes, the share
/// exponent when not 1.
std::vector<std::string> model_notes(const std::vector<std::string>& policies, const SimConfig& cfg);

/// The trace formats and how each maps to jobs, for --help and `salus-trace formats`.
std::string trace_formats_help(bool mappings);

/// Parses a command line against `desc` (and `positional`); an unknown option is a
/// core::InputError naming it and, when one is close, "did you mean --x?".
boost::program_options::parsed_options parse_command_line(
    int argc, char** argv, const boost::program_options::options_description& desc,
    const boost::program_options::positional_options_description* positional = nullptr);

/// "NAME VERSION" (the CMake project version, and `git describe` when the source was a git
/// checkout at configure time).
std::string version_text(const char* tool);

/// "on" or "off" for an --option taking a boolean; anything else is a core::InputError.
bool parse_on_off(const std::string& option, const std::string& value);

/// Prints the notes, the rejected jobs and the Table 1 form to stdout.
void print_report(const std::vector<std::string>& notes, const std::vector<core::JobSpec>& jobs,
                  const std::vector<SimRun>& runs);

/// Writes the summary (to --summary-json and, with --out, DIR/summary.json) and the per-run CSVs.
void write_outputs(const nlohmann::json& summary, const std::string& summary_path, const std::string& out_dir,
                   const std::vector<core::JobSpec>& jobs, const std::vector<SimRun>& runs);

/// write_outputs for runs whose summary is `header` plus the streamed "results" of `runs`
/// (write_summary_json): the same files and bytes, built only when asked for and never held
/// whole in memory. `timeline` says whether DIR/<policy>_timeline.csv is written.
void write_streamed_outputs(const nlohmann::json& header, const std::string& summary_path, const std::string& out_dir,
                            const std::vector<core::JobSpec>& jobs, const std::vector<SimRun>& runs,
                            TimelineMode timeline);

/// Runs a program's body and turns errors into exit statuses: bad input (core::InputError, a
/// command-line error) prints "<tool>: what" and returns 2; a broken invariant (std::logic_error)
/// "<tool>: internal error: what" and 1; any other failure "<tool>: error: what" and 1.
int guarded_main(const char* tool, int (*body)(int, char**), int argc, char** argv);

}  // namespace salus::experiments
