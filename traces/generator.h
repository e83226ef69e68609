#pragma once
/// Synthetic job traces for the long-running training experiment (paper §5.1): Poisson arrivals,
/// log-normal solo durations (many short jobs, a heavy tail), workloads drawn uniformly from the
/// catalog's training entries, and optionally gang sizes (GPUs per job). Modelled on what Gu et
/// al. (NSDI'19, Tiresias) report for Microsoft's production cluster, scaled so that ~100 jobs
/// queue heavily on one GPU for a few hours; named shapes (`helios`) preset the options for other
/// clusters. Same options and catalog -> byte-identical output on every machine (own PRNG and
/// sampling, no std::*_distribution, no libm transcendental functions).
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/registry.h"
#include "core/units.h"
#include "traces/catalog.h"

namespace salus::traces {

/// One entry of a gang-size distribution: jobs of `gpus` GPUs, drawn with probability
/// weight / (sum of the weights).
struct GangSize {
  std::int32_t gpus = 1;  ///< GPUs the job runs on at once, >= 1
  double weight = 1;      ///< relative weight, finite and > 0
};

/// Parameters of the generator. Times in seconds (double) because they are command-line values;
/// generate_trace converts them to nanoseconds. Each field is a salus-trace option of the same
/// name (jobs -> --jobs, mean_interarrival_s -> --mean-interarrival-s, ...).
struct GeneratorOptions {
  int jobs = 100;                     ///< number of jobs, in [1, kMaxGeneratedJobs]
  std::uint64_t seed = 1;             ///< PRNG seed; any value
  double mean_interarrival_s = 60;    ///< Poisson arrivals: exponential gaps with this mean (s), first job at 0
  double median_duration_s = 60;      ///< log-normal solo duration: median e^mu (s)
  double duration_sigma = 1.8;        ///< log-normal solo duration: sigma of ln(duration)
  double min_duration_s = 20;         ///< durations below are raised to this (clipped, not redrawn)
  double max_duration_s = 7200;       ///< durations above are lowered to this
  /// Catalog names to draw from uniformly (order and duplicates rejected, see generate_trace).
  /// Empty: every training entry of the catalog (training_workloads).
  std::vector<std::string> workloads;
  /// GPUs per job (--gang-sizes, parse_gang_sizes): sorted by size, each size once. Empty: every
  /// job runs on 1 GPU and nothing is drawn for it.
  std::vector<GangSize> gang_sizes;
  /// The shape (--shape) these options were preset from, named in the CSV's header; empty: none.
  std::string shape;
  /// The cluster the offered load is quoted against in the header, GPUs (the shape's, scaled
  /// with --jobs); 0: none.
  double reference_gpus = 0;
};

inline constexpr int kMaxGeneratedJobs = 10'000'000;
/// Upper bound for every time parameter, in seconds (~3 years): keeps every sum in int64 ns.
inline constexpr double kMaxGeneratorSeconds = 1e8;

/// One generated job, kept small (40 bytes) so that millions fit: its id and workload name are
/// the trace's (GeneratedTrace::job_id, GeneratedTrace::workload_of).
struct GeneratedJob {
  core::TimeNs arrival_ns = 0;  ///< whole milliseconds, so the CSV's 3 decimals round-trip exactly
  core::TimeNs duration_ns = 0; ///< the drawn solo duration after clipping (what iterations approximate)
  core::TimeNs iter_ns = 1;     ///< the workload's solo iteration time from the catalog
  std::int64_t iterations = 1;  ///< max(1, round(duration_ns / iter_ns))
  std::int32_t gpus = 1;        ///< GPUs at once (GeneratorOptions::gang_sizes), 1 without
  std::int32_t workload_index = 0;  ///< into GeneratedTrace::options.workloads

  /// Solo time the trace actually asks for: iterations x iteration time (within iter_ns / 2 of
  /// duration_ns unless one iteration is longer than twice the duration).
  core::TimeNs solo_ns() const { return iterations * iter_ns; }
};

struct GeneratedTrace {
  /// The options used, with `workloads` resolved to the list actually drawn from (sorted).
  GeneratorOptions options;
  std::string catalog_gpu;     ///< the catalog's "gpu" string, for the CSV header
  std::vector<GeneratedJob> jobs;  ///< in arrival order (arrivals non-decreasing)

  /// "job000", "job001", ...: "job" and the job's index zero-padded to the width of the last
  /// index (at least 3 digits).
  std::string job_id(std::size_t index) const;
  /// The catalog name of `job`'s workload.
  const std::string& workload_of(const GeneratedJob& job) const {
    return options.workloads[static_cast<std::size_t>(job.workload_index)];
  }
};

/// What a generated trace offers a cluster, computed from its jobs (solo times, not drawn durations).
struct OfferedLoad {
  std::int64_t one_gpu_jobs = 0;  ///< jobs with gpus == 1
  double mean_gpus = 0;           ///< GPUs per job on average
  /// sum over jobs of gpus x solo time / (last arrival - first arrival): the GPUs busy on average
  /// if every job ran alone from its arrival; 0 when the span is 0.
  double busy_gpus = 0;
  /// busy_gpus / GeneratorOptions::reference_gpus; 0 without a reference cluster.
  double load = 0;
};
OfferedLoad offered_load(const GeneratedTrace& trace);
/// `load` in words, as the CSV's "# drawn:" line has it: "72.03% of the jobs on 1 GPU, 2.840 GPUs
/// per job; offered load: sum(gpus x solo time) / arrival span = 3851.2 GPUs, 0.600 of 6416.00 GPUs"
/// (the last part only with a reference cluster).
std::string offered_load_text(const GeneratedTrace& trace, const OfferedLoad& load);

/// The catalog names the generator draws from by default, sorted: every name that does not end
/// in "_infer", except the non-paper test workloads lenet_32 and mlp_64.
std::vector<std::string> training_workloads(const Catalog& catalog);

/// Parses --gang-sizes: "SIZE:WEIGHT,SIZE:WEIGHT,..." (e.g. "1:0.72,2:0.1,4:0.18"), SIZE an
/// integer in [1, 2^31 - 1] in plain digits, WEIGHT a finite decimal > 0; spaces around items are
/// ignored. Weights need not add up to 1 (they are normalised). Returns the entries sorted by
/// size. Throws core::InputError "--gang-sizes: ..." saying what is wrong: an empty list or item,
/// an item without ':', a bad size or weight, a size listed twice.
std::vector<GangSize> parse_gang_sizes(std::string_view text);

/// Draws a trace. Throws core::InputError naming the option ("--jobs: ...") when an option is out
/// of range, a workload is unknown (with the catalog's names) or listed twice, or there is no
/// workload to draw from.
///
/// The four parts use independent PRNG streams derived from the seed, so changing one parameter
/// leaves the others' draws alone: e.g. --workloads changes only the workload column,
/// --gang-sizes only the GPU counts, and --mean-interarrival-s only scales the arrival times.
GeneratedTrace generate_trace(const Catalog& catalog, const GeneratorOptions& opt);

// ---- shapes ----------------------------------------------------------------------------------

/// A named preset of the generator's options (salus-trace generate --shape NAME), for its own
/// number of jobs.
struct TraceShape {
  int jobs;                     ///< the shape's number of jobs
  double mean_interarrival_s;   ///< at `jobs` jobs
  double median_duration_s;
  double duration_sigma;
  double min_duration_s;
  double max_duration_s;
  std::string_view gang_sizes;  ///< as --gang-sizes takes it
  double reference_gpus;        ///< the cluster the shape's offered load is quoted for, at `jobs` jobs
};
using TraceShapeRegistry = core::Registry<TraceShape>;
/// The shapes by name: helios.
const TraceShapeRegistry& trace_shape_registry();

/// The options of shape `name` (salus-trace generate --shape), with each option the user gave
/// beside it taken from `typed` instead: `given("mean-interarrival-s")` says whether that option
/// was given (names without "--": jobs, mean-interarrival-s, median-duration-s, duration-sigma,
/// min-duration-s, max-duration-s, workloads, gang-sizes). The seed is always `typed`'s.
/// --jobs N without --mean-interarrival-s keeps the shape's span: the mean inter-arrival time is
/// the shape's times shape.jobs / N, and the reference cluster shape.reference_gpus x N /
/// shape.jobs, so the load per GPU stays the same on a proportionally smaller cluster. Throws
/// core::InputError "--shape: unknown trace shape ..." for an unknown name.
GeneratorOptions shaped_options(std::string_view name, const GeneratorOptions& typed,
                                const std::function<bool(std::string_view option)>& given);

// ---- writing -------------------------------------------------------------------------------

/// How a generated trace is written: the native CSV, or the columns of Helios' cluster_log.csv.
enum class TraceLayout { kNative, kHelios };
using TraceLayoutRegistry = core::Registry<TraceLayout>;
/// The layouts by name: native, helios.
const TraceLayoutRegistry& trace_layout_registry();

/// Writes the trace as CSV to `sink`, in pieces of about 1 MiB, never holding the whole text:
/// "# " + each line of `header_comment`, comment lines with the parameters and workloads (and,
/// with gang sizes or a shape, the drawn GPU mix and offered load), then the rows.
/// kNative: job_id,arrival_s,workload,iterations (and gpus when some job has more than one GPU),
/// arrival_s in seconds with exactly 3 decimals. kHelios: job_id,gpu_num,submit_time,duration,
/// submit_time in seconds with 3 decimals, duration the solo time (iterations x iteration time)
/// in seconds rounded to whole milliseconds, at least 0.001. Ends with a newline.
void write_trace_csv(const GeneratedTrace& trace, const std::string& header_comment, TraceLayout layout,
                     const std::function<void(std::string_view piece)>& sink);

/// write_trace_csv into one string.
std::string trace_csv(const GeneratedTrace& trace, const std::string& header_comment, TraceLayout layout);

/// The native CSV (traces/README.md) in one string: trace_csv(trace, header_comment, kNative).
std::string to_native_csv(const GeneratedTrace& trace, const std::string& header_comment);

/// Shortest decimal text that reads back as `v` (std::to_chars), e.g. 90 -> "90", 1.1 -> "1.1".
std::string format_number(double v);

}  // namespace salus::traces
