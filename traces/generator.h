#pragma once
/// Synthetic job traces for the long-running training experiment (paper §5.1): Poisson arrivals,
/// log-normal solo durations (many short jobs, a heavy tail), workloads drawn uniformly from the
/// catalog's training entries. Modelled on what Gu et al. (NSDI'19, Tiresias) report for
/// Microsoft's production cluster, scaled so that ~100 jobs queue heavily on one GPU for a few
/// hours. Same options and catalog -> byte-identical output on every machine (own PRNG and
/// sampling, no std::*_distribution, no libm transcendental functions).
#include <cstdint>
#include <string>
#include <vector>

#include "core/units.h"
#include "traces/catalog.h"

namespace salus::traces {

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
};

inline constexpr int kMaxGeneratedJobs = 10'000'000;
/// Upper bound for every time parameter, in seconds (~3 years): keeps every sum in int64 ns.
inline constexpr double kMaxGeneratorSeconds = 1e8;

struct GeneratedJob {
  std::string job_id;          ///< "job000", "job001", ... (zero-padded to the width of the last id)
  core::TimeNs arrival_ns = 0; ///< whole milliseconds, so the CSV's 3 decimals round-trip exactly
  std::string workload;        ///< catalog name
  std::int64_t iterations = 1; ///< max(1, round(duration_ns / iter_ns))
  core::TimeNs duration_ns = 0;///< the drawn solo duration after clipping (what iterations approximate)
  core::TimeNs iter_ns = 1;    ///< the workload's solo iteration time from the catalog

  /// Solo time the trace actually asks for: iterations x iteration time (within iter_ns / 2 of
  /// duration_ns unless one iteration is longer than twice the duration).
  core::TimeNs solo_ns() const { return iterations * iter_ns; }
};

struct GeneratedTrace {
  /// The options used, with `workloads` resolved to the list actually drawn from (sorted).
  GeneratorOptions options;
  std::string catalog_gpu;     ///< the catalog's "gpu" string, for the CSV header
  std::vector<GeneratedJob> jobs;  ///< in arrival order (arrivals non-decreasing)
};

/// The catalog names the generator draws from by default, sorted: every name that does not end
/// in "_infer", except the non-paper test workloads lenet_32 and mlp_64.
std::vector<std::string> training_workloads(const Catalog& catalog);

/// Draws a trace. Throws core::InputError naming the option ("--jobs: ...") when an option is out
/// of range, a workload is unknown (with the catalog's names) or listed twice, or there is no
/// workload to draw from.
///
/// The three parts use independent PRNG streams derived from the seed, so changing one parameter
/// leaves the others' draws alone: e.g. --workloads changes only the workload column, and
/// --mean-interarrival-s only scales the arrival times.
GeneratedTrace generate_trace(const Catalog& catalog, const GeneratorOptions& opt);

/// The native CSV (traces/README.md): "# " + each line of `header_comment`, comment lines with
/// the parameters and workloads, then job_id,arrival_s,workload,iterations with arrival_s in
/// seconds with exactly 3 decimals. Ends with a newline.
std::string to_native_csv(const GeneratedTrace& trace, const std::string& header_comment);

/// Shortest decimal text that reads back as `v` (std::to_chars), e.g. 90 -> "90", 1.1 -> "1.1".
std::string format_number(double v);

}  // namespace salus::traces
