#pragma once
/// Outputs shared by the programs: the Table 1 text table, the summary JSON and the per-run CSVs.
#include <functional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "cluster/cluster_file.h"
#include "core/job.h"
#include "run/json_writer.h"
#include "run/sim_runner.h"
#include "traces/trace.h"

namespace salus::run {

/// "1 job", "3 jobs": `n` and the noun, plural when n != 1 (`plural` when it is not noun + "s").
std::string count_text(std::size_t n, const std::string& noun, const std::string& plural = "");

/// Exact decimal seconds of a nanosecond count, e.g. 1500000 -> "0.0015".
std::string seconds_text(core::TimeNs ns);

/// The paper's Table 1 form: one row per run.
void print_table(std::ostream& os, const std::vector<PolicyRun>& runs);

/// One entry of the summary's "results" array: the policy, lane mode, metrics, the loop's counters,
/// per job its times, status and lane, and for a cluster run its "cluster" member. The schema's
/// one writer; everything below goes through it.
void write_result(JsonWriter& w, const std::vector<core::JobSpec>& jobs, const PolicyRun& run);
/// The "results" array, streamed without building it (salus-sim's summary, write_summary_json).
void write_results_json(JsonWriter& w, const std::vector<core::JobSpec>& jobs, const std::vector<PolicyRun>& runs);
/// The same as documents (salus-run adds its own per-job fields to them; tests compare them).
nlohmann::json results_json(const std::vector<core::JobSpec>& jobs, const std::vector<PolicyRun>& runs);
nlohmann::json result_json(const std::vector<core::JobSpec>& jobs, const PolicyRun& run);

/// Writes a summary to `path` (parent directories created): the members of the object `header`
/// in key order, with "results" streamed from the runs in its sorted place. The bytes equal
/// `(header + {"results": results_json(jobs, runs)}).dump(2) + "\n"`. Throws core::InputError
/// when the file cannot be written.
void write_summary_json(const std::string& path, const nlohmann::json& header, const std::vector<core::JobSpec>& jobs,
                        const std::vector<PolicyRun>& runs);
/// The summary write_summary_json writes, to any writer (the Python module: a string writer),
/// without the final newline (JsonWriter::finish writes it).
void write_summary(JsonWriter& w, const nlohmann::json& header, const std::vector<core::JobSpec>& jobs,
                   const std::vector<PolicyRun>& runs);

/// What <policy>_timeline.csv holds: nothing (no file, kOff); one row per run, a run being
/// consecutive iterations of one job in one lane without a switch between them, and where the
/// simulator ran a policy's rotation in one go (a plan: FAIR, LAS) one row per job of the
/// rotation (kRuns, SchedulerOptions::timeline_plans); or one row per run everywhere, plans off
/// (kFull: FAIR then writes a row per iteration).
enum class TimelineMode { kOff, kRuns, kFull };
const char* to_string(TimelineMode m);
/// "off", "runs" or "full"; throws core::InputError naming `option` and the valid values.
TimelineMode parse_timeline_mode(const std::string& text, const std::string& option = "--timeline");

/// The timeline's rows, in start order (ties: lane), from a run's segments (one per dispatched
/// run, in completion order): consecutive runs of one job in one lane, each starting when the
/// previous ended and paying no switching cost, are one row with their iterations summed. A
/// rotation's segments (Segment::rotation > 0) are rows of their own, never merged.
void write_timeline_rows(const std::vector<core::Segment>& segments, const std::function<void(const core::Segment&)>& row);

/// Whether a program writing into a folder (--out DIR: write_outputs, write_streamed_outputs) may
/// write a file of this name there: summary.json, jct_cdf.csv, <policy>_jobs.csv and the other
/// per-policy CSVs. check_output_paths refuses a folder holding an input of such a name.
bool run_file_name(std::string_view name);

/// Writes DIR/<policy>_jobs.csv, _timeline.csv (unless `timeline` is kOff; columns lane, job_id,
/// start_s, end_s, iterations, switch_s, rotation: empty for a run, else the plan's number), _memory.csv,
/// _lane_moves.csv and DIR/jct_cdf.csv, streaming each file. A run with PolicyRun::gpu_timelines
/// (a cluster of several GPUs) writes the last three GPU by GPU, each row led by a `gpu` column.
/// Throws core::InputError when a file cannot be written.
void write_run_files(const std::string& dir, const std::vector<core::JobSpec>& jobs, const std::vector<PolicyRun>& runs,
                     TimelineMode timeline = TimelineMode::kRuns);

// ---- Cluster runs (PolicyRun::cluster) ---------------------------------------------------------

/// The summary's "cluster" header: {"gpus", "nodes", "gpu_mem_bytes": [per GPU], "placement", "queue",
/// "gangs"}, and
/// for a cluster with named GPU kinds "kinds": [{"name", "gpu_mem_bytes", "speed", "gpus"}] and
/// "gpu_kinds": [the kind of each GPU, an index into "kinds", -1 for none].
nlohmann::json cluster_config_json(const cluster::ClusterSpec& cluster, const std::string& placement,
                                   cluster::QueueDiscipline queue, cluster::GangMode gangs);

/// Average JCT of the finished jobs of each size (GPUs needed), by increasing size.
struct SizeJct {
  std::int32_t gpus = 1;
  std::int64_t jobs = 0;  ///< finished jobs of this size
  double avg_jct_s = 0;
};
std::vector<SizeJct> jct_by_size(const std::vector<core::JobSpec>& jobs, const PolicyRun& run);

/// GPU-time, seconds: `busy`, the time each GPU had a job admitted (gpus_busy integrated over the
/// run: a gang replica holding its GPU counts, as do jobs slowed by their neighbours); `work`, what
/// the finished jobs asked (each job's GPUs x its solo time as the trace gives it, iterations x
/// iteration time + the first iteration's extra, at speed 1). Busy above work: holding,
/// interference, slower GPUs; below: several jobs sharing a GPU.
struct GpuTime {
  double busy_s = 0, work_s = 0;
};
GpuTime gpu_time(const std::vector<core::JobSpec>& jobs, const PolicyRun& run);

/// A cluster run's "cluster" member of its "results" entry: {"busy_gpu_s", "gpus_busy": [[time_s,
/// gpus], ...], "jct_by_size": [{"gpus", "jobs", "avg_jct_s"}], "job_gpus": [[gpu, ...] per job],
/// "placement", "work_gpu_s"}.
void write_cluster_result(JsonWriter& w, const std::vector<core::JobSpec>& jobs, const PolicyRun& run);

/// After the table: per policy, the peak of GPUs busy, the busy GPU-time beside the work, and the
/// JCT by job size.
void print_cluster_report(std::ostream& os, const std::vector<core::JobSpec>& jobs, const std::vector<PolicyRun>& runs);
/// With --paging on: a line per policy after the table, its page-outs and page-ins (persistent
/// blocks moved to the host and back).
void print_paging_report(std::ostream& os, const std::vector<PolicyRun>& runs);

/// DIR/<policy>_job_gpus.csv (id,gpus: the GPU of each replica, '+'-joined), _gpus_busy.csv
/// (time_s,gpus_busy) and _jct_by_size.csv (gpus,jobs,avg_jct_s).
void write_cluster_files(const std::string& dir, const std::vector<core::JobSpec>& jobs, const PolicyRun& run);

/// What a file's type is, for messages: "a character device", "a FIFO", "a socket", "a folder",
/// "a regular file", ... (`mode` is stat's st_mode).
std::string file_type_text(unsigned mode);
/// "is a FIFO, not a regular file (an output replaces only a regular file)": why an output that
/// exists as something else is refused (checked before the run and again at the rename).
std::string not_a_regular_file(unsigned mode);
/// "path: cannot write: No space left on device (the old file, if any, is as it was)": a write,
/// flush, fsync or close of an output failed with `error` (errno; 0: unknown, "write failed").
std::string write_failed(const std::string& path, int error);

/// The last `max_bytes` of a file ("" when it cannot be read): logs in error messages, whole
/// small files otherwise.
std::string read_text_tail(const std::string& path, std::size_t max_bytes);
/// Writes text to a file, creating parent directories; throws core::InputError on failure. Like
/// every output file of the programs, it is written to a temporary file in the same folder, synced
/// and renamed into place, and the folder synced: a run killed while it writes leaves the previous
/// complete file or the new one, never a torn one; SIGHUP, SIGINT, SIGTERM and SIGQUIT (where the
/// program left their default action) remove the temporary. A file replaced keeps its permissions;
/// a target that exists and is not a regular file (a device, FIFO, socket) is refused, never
/// replaced.
void write_text_file(const std::string& path, const std::string& text);
/// write_text_file for a text made in pieces: `produce` hands each piece, in order, to the sink it
/// is given; each goes to the file as it comes, so the whole text is never held.
void write_text_file(const std::string& path,
                     const std::function<void(const std::function<void(std::string_view)>& sink)>& produce);

/// Prints the notes, the rejected jobs and the Table 1 form to stdout.
void print_report(const std::vector<std::string>& notes, const std::vector<core::JobSpec>& jobs,
                  const std::vector<PolicyRun>& runs);

/// Writes the summary (to --summary-json and, with --out, DIR/summary.json) and the per-run CSVs.
void write_outputs(const nlohmann::json& summary, const std::string& summary_path, const std::string& out_dir,
                   const std::vector<core::JobSpec>& jobs, const std::vector<PolicyRun>& runs);

/// write_outputs for runs whose summary is `header` plus the streamed "results" of `runs`
/// (write_summary_json): the same files and bytes, built only when asked for and never held
/// whole in memory. `timeline` says whether DIR/<policy>_timeline.csv is written.
void write_streamed_outputs(const nlohmann::json& header, const std::string& summary_path, const std::string& out_dir,
                            const std::vector<core::JobSpec>& jobs, const std::vector<PolicyRun>& runs,
                            TimelineMode timeline);

/// The header of a simulator run's summary JSON (everything but "results"), as salus-sim writes it
/// and fidelity's predictions do: the trace, its format, the catalog, the model in `cfg`, the time
/// scale, the cluster when there is one, and the notes.
nlohmann::json sim_summary_header(const std::string& trace_path, const traces::Trace& trace,
                                  const std::string& profiles, const SimConfig& cfg, double time_scale,
                                  const std::vector<std::string>& notes);

}  // namespace salus::run
