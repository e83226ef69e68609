#pragma once
/// Running the other salus programs from salus-experiment: salus-profile and salus-run (they own the
/// device) are built (and bundled) beside it.
#include <string>
#include <vector>

namespace salus::experiments {

/// `s` quoted for /bin/sh.
std::string shell_quote(const std::string& s);

/// Runs the sibling `program` with `args` (already quoted), its output to `log`; throws
/// std::runtime_error with the log's tail if it fails.
void run_sibling(const std::string& program, const std::string& args, const std::string& log);

/// The distinct workloads of the traces, in order of first appearance (read with the shipped
/// catalog, which names every real workload).
std::vector<std::string> trace_workloads(const std::vector<std::string>& traces);

/// Measures `workloads` on `device` with salus-profile (a pool of `gpu_mem`, two seconds each
/// unless `options` say otherwise: salus-profile's options, e.g. "--min-seconds 1 --pairs off") and
/// writes the catalog to `catalog`; salus-profile's output goes to `log`.
void profile_on_device(const std::string& device, const std::vector<std::string>& workloads,
                       const std::string& gpu_mem, const std::string& catalog, const std::string& log,
                       const std::string& options = "--min-seconds 2");

}  // namespace salus::experiments
