// salus-profile: measures workloads on a device through the memory pool and writes a catalog that
// salus-sim --profiles reads, with provenance "measured on <device>" (real/profiler.h measures and
// builds it; traces::catalog_text writes it).
#include <cstdio>
#include <string>

#include <boost/program_options.hpp>

#include "core/errors.h"
#include "gpu_backend/device.h"
#include "real/options.h"
#include "real/profiler.h"
#include "run/cli.h"
#include "run/cpus.h"
#include "run/options.h"
#include "run/output.h"
#include "traces/catalog.h"

namespace po = boost::program_options;
using namespace salus;

namespace {

int body(int argc, char** argv) {
  run::OptionValues v;
  real::RealOptionValues r;
  run::OptionTable table;
  run::add_run_options(table, v);
  real::add_real_options(table, r);
  po::variables_map vm = table.parse(run::kProfile, argc, argv);
  if (run::print_help_or_version(table, run::kProfile, "salus-profile",
                                 "salus-profile: measure workloads on a device and write a catalog\n\nOptions", vm)) {
    return 0;
  }
  po::notify(vm);
  const std::string& device_name = r.run.device;
  table.check_paths(run::kProfile, vm);
  // Before any thread: on the cpu device one CPU unless --cpus says otherwise (docs/real-backend.md, "Pinning: --cpus").
  if (const std::string note = run::pin_for_device("salus-profile", v.cpus, device_name, nullptr); !note.empty()) {
    std::printf("note: %s\n", note.c_str());
  }
  gpu::ProfileRequest request;
  request.pairs = run::parse_on_off("--pairs", r.pairs);
  request.measure_switch = run::parse_on_off("--switch", r.switch_cost);
  request.crowd_sizes = gpu::parse_crowd_sizes(r.crowds);
  if (!request.pairs && !request.crowd_sizes.empty()) {
    // The crowd factors are relative to the pair table: without it they would say nothing.
    if (!vm["crowds"].defaulted()) throw core::InputError("--crowds: needs --pairs on (a crowd is read against the pairs)");
    request.crowd_sizes.clear();
  }
  request.sweep_sizes = gpu::parse_sweep_sizes(r.sweeps, device_name);
  if (!request.pairs && !request.sweep_sizes.empty()) {
    // The `capacity` model weighs the lanes by their pairs: sweeps alone would not make it.
    if (!vm["sweeps"].defaulted()) throw core::InputError("--sweeps: needs --pairs on (the capacity model weighs lanes by the pairs)");
    request.sweep_sizes.clear();
  }
  gpu::ProfileOptions& opts = request.options;
  opts = r.profile;
  opts.crowd_rounds = gpu::parse_crowd_rounds(r.crowd_rounds, device_name);
  opts.capacity = run::parse_capacity(v.gpu_mem);
  opts.warmup = real::parse_profile_warmup(r.warmup);
  if (opts.iterations < 1) throw core::InputError("--iterations: must be at least 1");
  if (!(opts.min_seconds >= 0 && opts.min_seconds <= 600)) throw core::InputError("--min-seconds: must be in [0, 600]");
  request.workloads = gpu::parse_profile_workloads(v.workloads);

  const auto device = gpu::make_device(device_name, gpu::parse_math_mode(r.math));
  const nlohmann::json catalog = gpu::measure_catalog(*device, device_name, request, stdout);
  run::write_text_file(v.out, traces::catalog_text(catalog));
  gpu::print_crowd_checks(traces::Catalog::load(v.out), stdout);
  std::printf("wrote %s\n", v.out.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return salus::run::guarded_main("salus-profile", body, argc, argv); }
