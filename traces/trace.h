#pragma once
/// Trace input: the native CSV, its JSON form, and importers for the public traces (Tiresias,
/// Gavel, Philly, Helios/Venus, Alibaba PAI GPU-sharing, Pollux), chosen by name from one table.
#include <cstdint>
#include <optional>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/job.h"
#include "core/registry.h"
#include "core/text_input.h"
#include "core/units.h"
#include "traces/catalog.h"

namespace salus::traces {

class TraceInput;  // traces/csv.h

/// kUnknown: what detect_format says of a file it does not recognise (no reader; load_trace refuses it).
enum class TraceFormat { kNative, kJson, kTiresias, kGavel, kPhilly, kHelios, kAlibaba, kPollux, kAcme, kLucid, kPai2020, kUnknown };
const char* to_string(TraceFormat f);

/// Where an imported job's duration comes from when the trace has one (Tiresias): kTrace takes
/// the trace's figure (the default), kCatalog the catalog's iteration time (the behaviour before
/// importers honoured durations; `--durations catalog`).
enum class DurationSource { kTrace, kCatalog };

/// The memory assumed for a job whose trace gives no memory figure (Philly, Helios, Alibaba's
/// whole-GPU and multi-GPU pods, models missing from the catalog): P = 0, E = this much of the
/// GPU, u = 1 (`--assumed-memory`). The default is the whole GPU, as Salus assumes for a job that
/// sends no estimates; with it such a job opens a lane of the whole GPU, and Algorithm 1 queues
/// every later job that finds no room for a new lane in it.
struct AssumedMemory {
  /// A share of the run's GPU memory in parts per million, in (0, 1e6]; used when `bytes` is 0.
  std::int32_t share_ppm = 1'000'000;
  /// A size in bytes (> 0), capped at the run's capacity; 0: `share_ppm` applies.
  core::Bytes bytes = 0;
  /// E for a GPU of `capacity` bytes.
  core::Bytes for_capacity(core::Bytes capacity) const;
  /// For the notes: "the whole GPU (P = 0, E = capacity, u = 1; --assumed-memory)",
  /// "0.5 of the GPU's memory (P = 0, E = 0.5 x capacity, u = 1; --assumed-memory 0.5)", ...
  std::string describe() const;
  bool operator==(const AssumedMemory&) const = default;
};

/// `--assumed-memory` as typed: a fraction in (0, 1] of the GPU's memory ("0.5") or a positive
/// size with a unit ("8GiB"). Throws core::InputError "--assumed-memory: what is wrong".
AssumedMemory parse_assumed_memory(const std::string& text);

/// How to read a trace. The defaults read any format as it is, whole.
struct LoadOptions {
  /// A name from trace_format_registry() (`--format`), or "" to recognise the format by content.
  std::string format;
  DurationSource durations = DurationSource::kTrace;
  /// Gavel: a throughputs file in Gavel's JSON layout (`--throughputs`); "": the catalog.
  std::string throughputs;
  /// Gavel: the throughputs file's worker type ("": v100 when present, else the first by name).
  std::string worker_type;
  /// Gavel: the steps per second of a k-GPU job the throughputs file has only at one GPU
  /// (`--gavel-scaling`; Gavel's simulation traces ask for Recommendation, A3C and CycleGAN at 4 and 8
  /// GPUs, which simulation_throughputs.json measures at 1): kLinear k times the one-GPU rate (each
  /// replica steps at its one-GPU rate), kNone the one-GPU rate, kRefuse an error.
  enum class GavelScaling { kLinear, kNone, kRefuse } gavel_scaling = GavelScaling::kLinear;
  /// Iteration time assumed for traces that give a duration but no iteration count (Philly,
  /// Helios, Alibaba): a job of duration d runs max(1, d / this) iterations, the remainder added to
  /// the first, so its solo time is d exactly.
  core::TimeNs assumed_iter_ns = core::kNsPerS;
  /// Memory of jobs the trace gives no memory figure for (`--assumed-memory`); applied by
  /// jobs_for_capacity, named in the reader's note.
  AssumedMemory assumed_memory;
  /// `--window START:END`: keep jobs arriving in [start, end) seconds of the trace's time axis and
  /// shift them so that `start` is 0.
  std::optional<core::TimeNs> window_start, window_end;
  /// `--sample FRACTION`: keep each job with this probability, drawn from `seed` and the job's
  /// position in the file (the same jobs on every machine).
  double sample = 1.0;
  std::uint64_t seed = 1;
};

/// Receives each job as the reader accepts it (load_trace_streamed), in file order.
using JobSink = std::function<void(const core::JobSpec&)>;

struct Trace {
  std::string path;
  TraceFormat format = TraceFormat::kNative;
  /// Jobs in file order; jobs[i].trace_order == i. Empty when they were streamed to a sink.
  std::vector<core::JobSpec> jobs;
  /// Streaming (load_trace_streamed): where jobs go instead of `jobs`, and how many went.
  const JobSink* sink = nullptr;
  std::int64_t streamed = 0;
  /// whole_gpu[i]: job i's memory is a share of the GPU, resolved for the run's capacity by
  /// jobs_for_capacity (P = 0): the share the trace gives (memory_share_ppm[i] < 1e6, an Alibaba
  /// pod's gpu_milli), or, where the trace gives no memory figure (memory_share_ppm[i] = 1e6),
  /// `assumed_memory`.
  std::vector<bool> whole_gpu;
  /// Parts per million of the GPU's memory a whole_gpu job takes; 1e6: no figure in the trace.
  std::vector<std::int32_t> memory_share_ppm;
  /// LoadOptions::assumed_memory of the load: E of the whole_gpu jobs with no memory figure.
  AssumedMemory assumed_memory;
  /// How the input was interpreted, one sentence each (printed by the programs as `note:` lines).
  std::vector<std::string> notes;
};

/// Reads one format from the file's text into `trace` (path set, everything else empty). Throws
/// core::InputError naming "path:line: what is wrong".
using TraceReader = void (*)(Trace& trace, TraceInput& input, const Catalog& catalog, const LoadOptions& options);

/// One entry of the format table: the reader, its TraceFormat and the mapping of the format's
/// columns to a job, for `salus-trace formats` and the README.
struct TraceFormatInfo {
  TraceReader read;
  TraceFormat format;
  std::string_view mapping;
};
const core::Registry<TraceFormatInfo>& trace_format_registry();

/// The format `text` is recognised as: JSON by a leading '{' or '[' (Philly's job log by its
/// "submitted_time" key), a Gavel trace by a first line of 10 or 7 tab-separated fields, Alibaba
/// PAI 2020's headerless tables by their fields, a CSV by the columns of its header; the native
/// CSV when the header names a native column; otherwise kUnknown.
TraceFormat detect_format(std::string_view text);

/// Loads a trace. The format is `options.format` or recognised by content (detect_format).
/// Throws core::InputError naming "path:line: what is wrong"; text that is not UTF-8 is refused
/// with the line of the first bad byte.
Trace load_trace(const std::string& path, const Catalog& catalog, const LoadOptions& options = {});
/// Loads a trace handing each job to `sink` instead of keeping it: a native CSV trace (the format
/// named or recognised) without --window or --sample is streamed, its jobs never held together
/// (memory: the duplicate-id table, ~30 bytes and the id a job); any other is loaded whole and
/// its jobs handed over in order. Either way the returned trace has no jobs (`streamed` counts
/// them), its notes and format as load_trace gives them. The same errors as load_trace.
Trace load_trace_streamed(const std::string& path, const Catalog& catalog, const LoadOptions& options,
                          const JobSink& sink);
/// The same for text already in memory (`path` names it in errors): what the fuzz targets call.
Trace load_trace_text(std::string_view text, const std::string& path, const Catalog& catalog,
                      const LoadOptions& options = {});

/// E of a share of `share_ppm` parts per million (< 1e6) of a GPU of `capacity` bytes, rounded down
/// to the scheduler's 256-byte alignment so that shares adding up to the whole GPU fit on it.
core::Bytes share_of(core::Bytes capacity, std::int32_t share_ppm);

/// The trace's jobs for a GPU of `capacity` bytes: a job with a share of the GPU (whole_gpu) gets
/// P = 0 and E = its share of `capacity`, or trace.assumed_memory of it when the trace gives no figure.
std::vector<core::JobSpec> jobs_for_capacity(const Trace& trace, core::Bytes capacity);
/// The same, taking the trace's jobs instead of copying them (trace.jobs is left empty).
std::vector<core::JobSpec> jobs_for_capacity(Trace&& trace, core::Bytes capacity);
/// The same with each job's GPU memory from `capacity_of(job)` (a cluster of mixed memory: the GPUs
/// the job may run on).
std::vector<core::JobSpec> jobs_for_capacity(Trace&& trace,
                                             const std::function<core::Bytes(const core::JobSpec&)>& capacity_of);

/// Replays multi-GPU jobs (gpus > 1) on one GPU: iteration time × gpus (the same GPU-time), gpus
/// set to 1. Returns how many jobs were folded. For single-GPU runs; a cluster gang-schedules them.
std::int64_t fold_onto_one_gpu(std::vector<core::JobSpec>& jobs);

/// Scales a trace down by `factor` >= 1, as Salus's own experiments did to fit a run: arrival
/// times divided by it, iteration counts divided by it and rounded up (at least 1).
std::vector<core::JobSpec> scale_time(std::vector<core::JobSpec> jobs, double factor);

/// "START:END" in seconds (a unit s, min, h or d may follow each number) for LoadOptions'
/// window. Throws core::InputError "--window: what".
std::pair<core::TimeNs, core::TimeNs> parse_window(const std::string& text);

}  // namespace salus::traces
