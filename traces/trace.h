#pragma once
/// Trace input: the native CSV, its JSON form, and the Tiresias simulator's CSV.
#include <string>
#include <vector>

#include "core/job.h"
#include "core/units.h"
#include "traces/catalog.h"

namespace salus::traces {

enum class TraceFormat { kNative, kJson, kTiresias };
const char* to_string(TraceFormat f);

struct Trace {
  std::string path;
  TraceFormat format = TraceFormat::kNative;
  /// Jobs in file order; jobs[i].trace_order == i.
  std::vector<core::JobSpec> jobs;
  /// whole_gpu[i]: job i's memory is unknown and assumed to be the whole GPU (P = 0,
  /// E = the run's capacity); see jobs_for_capacity.
  std::vector<bool> whole_gpu;
  /// How the input was interpreted, one sentence each (printed by the programs).
  std::vector<std::string> notes;
};

/// Loads a trace. The format is recognised by content: a Tiresias CSV by its header
/// (num_gpu, submit_time, model_name, ...), JSON by a leading '{' or '['; otherwise the native
/// CSV. Throws core::InputError naming "path:line: what is wrong".
Trace load_trace(const std::string& path, const Catalog& catalog);

/// The trace's jobs for a GPU of `capacity` bytes: jobs with assumed memory get E = capacity.
std::vector<core::JobSpec> jobs_for_capacity(const Trace& trace, core::Bytes capacity);
/// The same, taking the trace's jobs instead of copying them (trace.jobs is left empty).
std::vector<core::JobSpec> jobs_for_capacity(Trace&& trace, core::Bytes capacity);

/// Scales a trace down by `factor` >= 1, as Salus's own experiments did to fit a run: arrival
/// times divided by it, iteration counts divided by it and rounded up (at least 1).
std::vector<core::JobSpec> scale_time(std::vector<core::JobSpec> jobs, double factor);

}  // namespace salus::traces
