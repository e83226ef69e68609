#pragma once
/// The named steps of the Gavel reader (import_public.cpp, `read_gavel`) and of the Tiresias
/// reader (trace.cpp, `load_tiresias`), each with its own contract so that tests can call it.
/// Internal to salus_traces: the readers are reached through trace_format_registry().
#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/job.h"
#include "traces/catalog.h"
#include "traces/csv.h"
#include "traces/fields.h"
#include "traces/trace.h"

namespace salus::traces::steps {

// ---- Gavel ---------------------------------------------------------------------------------

/// One worker type's table of a Gavel throughputs file ({worker_type: {"('<job_type>',
/// <scale_factor>)": {"null": steps_per_s, ...}}}).
struct GavelThroughputs {
  nlohmann::json table;  ///< null when LoadOptions::throughputs is "" (times from the catalog)
  std::string worker;    ///< the worker type read: LoadOptions::worker_type, else v100, else the first
  /// Every worker type's table (`table` is one of them), in the file's order: the jobs' speeds
  /// on each relative to `worker` (gavel_kind_speeds).
  std::vector<std::pair<std::string, nlohmann::json>> workers;
};
/// Reads LoadOptions::throughputs (nothing when it is ""). Throws core::InputError for a file that
/// is not an object of objects or lacks the worker type (naming the valid ones).
GavelThroughputs load_gavel_throughputs(const LoadOptions& options);

/// A Gavel trace's rows: lines of tab-separated fields. Skips a UTF-8 byte order mark on line 1,
/// a CR before each newline, blank lines and lines starting with '#'; throws field_too_long's
/// error for a field past kMaxFieldBytes. Fields are views into the text.
class GavelRows {
 public:
  GavelRows(std::string_view text, const std::string& path) : text_(text), path_(path) {}
  /// The next row; false at the end of the text.
  bool next();
  /// 1-based line of the current row.
  long line() const { return line_; }
  const std::vector<std::string_view>& fields() const { return fields_; }

 private:
  std::string_view text_;
  const std::string& path_;
  std::size_t pos_ = 0;
  long line_ = 0;
  std::vector<std::string_view> fields_;
};

/// Checks a row's field count: the first row (layout 0) sets `layout` to its 10 fields (the
/// physical-cluster traces) or 7 (the simulation traces); every later row must have as many.
void check_gavel_layout(const fields::Place& place, std::size_t count, std::size_t& layout);

/// The row's own columns as a job: id (the row's position `index`), iterations (total_steps),
/// GPUs (scale_factor), priority (priority_weight rounded, 10-field layout only), arrival. Workload,
/// memory and iteration time are left to the next steps.
core::JobSpec gavel_job(const fields::Place& place, const std::vector<std::string_view>& f, std::size_t layout,
                        std::size_t index);

/// "ResNet-50 (batch size 64)" -> model "ResNet-50", batch 64; a job_type without the
/// " (batch size N)" suffix is the model itself, batch 0. Throws for a batch size that is not a
/// positive integer.
struct GavelJobType {
  std::string model;
  std::int64_t batch = 0;
};
GavelJobType parse_gavel_job_type(const fields::Place& place, const std::string& job_type);

/// What the reader counted, for its notes.
struct GavelCounts {
  std::int64_t from_throughputs = 0, from_catalog = 0, whole = 0, scaled = 0;
  std::map<std::string, std::string> mapped;  ///< job_type -> catalog entry
};

/// The job's memory and utilisation from the catalog entry of its model nearest its batch
/// (counted in `counts.mapped`), or, with none, its job_type as the workload and the whole GPU
/// (counted in `counts.whole`). Returns the entry, or nullptr.
const WorkloadProfile* gavel_memory(core::JobSpec& job, const std::string& job_type, const GavelJobType& type,
                                    const Catalog& catalog, const std::vector<std::string>& names, GavelCounts& counts);

/// 1 / steps per second of "('<job_type>', <gpus>)" in the throughputs, or, for gpus > 1 without
/// that entry, of "('<job_type>', 1)" as --gavel-scaling says (`*scaled` set); nullopt when the
/// table is null or has neither. Throws for an entry whose "null" is not a positive number and for
/// a rate whose iteration time does not fit in nanoseconds.
std::optional<core::TimeNs> gavel_throughput_time(const GavelThroughputs& tp, const LoadOptions& options,
                                                  const fields::Place& place, const std::string& job_type,
                                                  std::int32_t gpus, bool* scaled);

/// The job's speed on each worker type of the throughputs (its rate there over its rate on
/// tp.worker, both as gavel_throughput_time reads them, in parts per million; 0 where its rate
/// there is 0, Gavel's mark of a job that cannot run on that worker type; the worker types
/// without its rate left out), when the file has more than one worker type; else empty. Throws
/// for a speed outside [1e-6, 1000] other than 0.
std::vector<core::KindSpeed> gavel_kind_speeds(const GavelThroughputs& tp, const LoadOptions& options,
                                               const fields::Place& place, const std::string& job_type,
                                               std::int32_t gpus);

/// The job's iteration time: from the throughputs when they have it (with its speeds on the other
/// worker types: gavel_kind_speeds), else from the catalog entry `profile`; throws when neither
/// has it. Counts where it came from.
void gavel_timing(core::JobSpec& job, const fields::Place& place, const std::string& job_type, const GavelJobType& type,
                  const WorkloadProfile* profile, const GavelThroughputs& tp, const Catalog& catalog,
                  const LoadOptions& options, GavelCounts& counts);

/// The reader's notes: the layout's mapping, then where iteration times, memory and utilisation
/// came from.
void note_gavel(Trace& trace, std::size_t layout, const GavelCounts& counts, const GavelThroughputs& tp,
                const LoadOptions& options);

// ---- Tiresias ------------------------------------------------------------------------------

enum TiresiasColumn { kTJobId, kTNumGpu, kTSubmit, kTIterations, kTModel, kTDuration, kTInterval, kTColumnCount };
inline constexpr std::array<const char*, kTColumnCount> kTiresiasNames = {
    "job_id", "num_gpu", "submit_time", "iterations", "model_name", "duration", "interval"};

/// A Tiresias header mapped to its columns: index[c] is the position of kTiresiasNames[c] or -1;
/// the other columns' names, quoted, in `extra`.
struct TiresiasHeader {
  std::array<int, kTColumnCount> index{};
  std::vector<std::string> extra;
  /// An iterations column: else the trace gives durations alone.
  bool counted() const { return index[kTIterations] >= 0; }
};
/// Throws for a repeated column and for a missing one (all but iterations and interval).
TiresiasHeader map_tiresias_header(const std::string& path, const CsvRow& header);

/// One row's cells, checked: the job's id, GPUs, arrival and (when counted) iterations, and the
/// row's model name and duration.
struct TiresiasRow {
  core::JobSpec job;
  std::string model;
  core::TimeNs duration = 0;
};
TiresiasRow read_tiresias_row(const fields::Place& place, const TiresiasHeader& h, const CsvReader& rows);

/// What the reader counted, for its notes.
struct TiresiasCounts {
  std::int64_t from_catalog = 0;
  std::map<std::string, std::pair<std::string, std::int64_t>> mapped;  ///< model -> (variant, jobs)
  std::int64_t missing_jobs = 0;
  std::set<std::string> missing_models;
  std::int64_t multi_gpu = 0;
  std::int64_t renamed_count = 0;
  std::vector<std::string> renamed;  ///< the first three, for the note
};

/// The catalog entry named `model`, else its model's smallest variant (counted in
/// `counts.mapped`); nullptr when the catalog has neither.
const WorkloadProfile* tiresias_profile(const Catalog& catalog, const std::string& model, TiresiasCounts& counts);

/// Gives the row's job its workload, memory and times: from `profile` (duration / the entry's
/// iteration time iterations when not counted; --durations says whether the trace's duration or
/// the catalog's iteration time wins), else the whole GPU and the trace's duration (over
/// --assumed-iter-ms iterations when not counted). Returns whether the job takes the whole GPU.
bool tiresias_times(TiresiasRow& row, const WorkloadProfile* profile, bool counted, const LoadOptions& options,
                    TiresiasCounts& counts);

/// Tiresias keeps jobs by their order, not by job_id: an id seen before becomes "<id>#2",
/// "<id>#3", ... (the first free), counted in `counts`.
void unique_tiresias_id(core::JobSpec& job, const std::vector<core::JobSpec>& jobs, const fields::FirstSeen& first,
                        TiresiasCounts& counts);

/// The reader's notes: the mapping (counted or duration-only), renamed ids, catalog use, models
/// missing, multi-GPU jobs, columns ignored.
void note_tiresias(Trace& trace, const TiresiasHeader& h, const TiresiasCounts& counts, const LoadOptions& options);

}  // namespace salus::traces::steps
