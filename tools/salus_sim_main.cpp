// salus-sim: replays a job trace in the discrete-event simulator under one or more policies and
// prints the paper's Table 1 (makespan, average queuing, average JCT, 95th-percentile JCT).
// The options, the runs and the summary are run/sim_program.h's, which the Python module shares.
#include <cstdio>
#include <iostream>
#include <string>

#include "run/cli.h"
#include "run/output.h"
#include "run/sim_program.h"

using namespace salus;

namespace {

int body(int argc, char** argv) {
  run::SimProgramOptions o;
  if (!run::parse_sim_command_line(argc, argv, o)) return 0;  // --help, --version
  const run::OptionValues& v = o.v;
  const run::SimProgramResult r = run::run_sim_program(o);
  const std::vector<core::JobSpec>& jobs = r.loaded.jobs;
  std::fputs(run::sim_header_line(v.trace, r.loaded.trace, jobs.size(), r.cfg, r.runs).c_str(), stdout);
  run::print_report(r.notes, jobs, r.runs);
  if (r.cfg.cluster) run::print_cluster_report(std::cout, jobs, r.runs);
  if (r.cfg.paging) run::print_paging_report(std::cout, r.runs);

  if (v.summary_json.empty() && v.out.empty()) return 0;
  // The header is small; the per-job results are streamed (write_streamed_outputs).
  const nlohmann::json summary = run::sim_program_summary_header(o, r, v.trace);
  run::write_streamed_outputs(summary, v.summary_json, v.out, jobs, r.runs, o.timeline);
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return salus::run::guarded_main("salus-sim", body, argc, argv); }
