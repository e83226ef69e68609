// A libFuzzer target for one trace reader (SALUS_FUZZ_FORMAT, a name of the trace format table):
// any bytes go through load_trace_text with that format forced, and then the steps every program
// takes after loading (memory for a 16 GiB GPU, multi-GPU jobs folded onto one). Bad input must
// end in core::InputError; any other exception, a crash, a sanitizer report or a hang is a bug.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/errors.h"
#include "traces/catalog.h"
#include "traces/trace.h"

#ifndef SALUS_FUZZ_FORMAT
#error "SALUS_FUZZ_FORMAT must name a trace format (set by fuzz/CMakeLists.txt)"
#endif

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const salus::traces::Catalog catalog = salus::traces::Catalog::load_default();
  salus::traces::LoadOptions options;
  options.format = SALUS_FUZZ_FORMAT;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    salus::traces::Trace trace = salus::traces::load_trace_text(text, "fuzz", catalog, options);
    std::vector<salus::core::JobSpec> jobs = salus::traces::jobs_for_capacity(std::move(trace), 16 * salus::core::kGiB);
    salus::traces::fold_onto_one_gpu(jobs);
  } catch (const salus::core::InputError&) {
    // Rejected with a message: what bad input should get.
  }
  return 0;
}
