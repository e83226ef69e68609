#include "experiments/cli.h"

#include <cmath>
#include <filesystem>
#include <map>

#include <cstdio>
#include <stdexcept>

#include <boost/program_options/errors.hpp>
#include <sstream>

#include "core/errors.h"
#include "core/units.h"
#include "experiments/output.h"
#include "policies/registry.h"

namespace salus::experiments {

std::vector<std::string> parse_policy_list(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream ss(list);
  std::string item;
  while (std::getline(ss, item, ',')) {
    const auto b = item.find_first_not_of(" \t");
    const auto e = item.find_last_not_of(" \t");
    const std::string p = b == std::string::npos ? std::string() : item.substr(b, e - b + 1);
    policies::make_policy(p);  // throws with the valid names
    for (const std::string& q : out) {
      if (q == p) throw core::InputError("--policy: '" + p + "' is listed twice");
    }
    out.push_back(p);
  }
  if (out.empty()) throw core::InputError("--policy: no policy given (valid: " + policies::policy_names_joined() + ")");
  return out;
}

core::Bytes parse_capacity(const std::string& text) {
  std::string why;
  const auto cap = core::parse_size(text, &why);
  if (!cap) throw core::InputError("--gpu-mem: " + why);
  if (*cap <= 0) throw core::InputError("--gpu-mem: must be positive");
  return *cap;
}

core::LaneMode parse_lane_mode(const std::string& text) {
  if (text == "single") return core::LaneMode::kSingle;
  if (text == "auto") return core::LaneMode::kAuto;
  throw core::InputError("--lanes: unknown lane mode '" + text + "' (valid: single, auto)");
}

std::vector<std::string> lane_mode_notes(const std::vector<std::string>& names, std::optional<core::LaneMode> lanes) {
  std::vector<std::string> notes;
  if (!lanes) return notes;
  for (const std::string& name : names) {
    const auto policy = policies::make_policy(name);
    if (!policy->supports(*lanes)) {
      notes.push_back(name + " runs in " + core::to_string(policy->default_lane_mode()) + " mode; --lanes " +
                      core::to_string(*lanes) + " does not apply to it");
    }
  }
  return notes;
}

TraceJobs load_jobs(const std::string& trace_path, const std::string& profiles, core::Bytes capacity, double time_scale) {
  const traces::Catalog catalog = traces::Catalog::load(profiles);
  TraceJobs t{traces::load_trace(trace_path, catalog), {}, {}, {}, catalog.switch_ns()};
  std::map<std::string, std::int32_t> util_ppm;
  for (const traces::PairSlowdown& p : catalog.pairs()) {
    t.pairs[{p.a, p.b}] = std::llround(p.slowdown_a * 1e6);
    t.pairs[{p.b, p.a}] = std::llround(p.slowdown_b * 1e6);
    util_ppm[p.a] = catalog.find(p.a)->gpu_util_ppm;
    util_ppm[p.b] = catalog.find(p.b)->gpu_util_ppm;
  }
  t.share_weights = sim::fit_share_weights(t.pairs, util_ppm);
  // The jobs move out of the trace (a copy of a 200k-job trace is 30 MB); its path, format and
  // notes stay.
  t.jobs = traces::jobs_for_capacity(std::move(t.trace), capacity);
  if (time_scale != 1) t.jobs = traces::scale_time(std::move(t.jobs), time_scale);
  return t;
}

void print_report(const std::vector<std::string>& notes, const std::vector<core::JobSpec>& jobs,
                  const std::vector<SimRun>& runs) {
  for (const std::string& n : notes) std::printf("note: %s\n", n.c_str());
  for (const SimRun& r : runs) {
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      const core::JobState& st = r.outcome.jobs[i];
      if (st.status == core::JobStatus::kRejected || st.status == core::JobStatus::kFailed) {
        std::printf("note: %s: job %s %s: %s\n", r.policy.c_str(), jobs[i].id.c_str(), core::to_string(st.status),
                    st.reason.c_str());
      }
    }
  }
  std::ostringstream table;
  print_table(table, runs);
  std::fputs(table.str().c_str(), stdout);
  std::fflush(stdout);
}

void write_outputs(const nlohmann::json& summary, const std::string& summary_path, const std::string& out_dir,
                   const std::vector<core::JobSpec>& jobs, const std::vector<SimRun>& runs) {
  const std::string text = summary.dump(2) + "\n";
  if (!summary_path.empty()) write_text_file(summary_path, text);
  if (!out_dir.empty()) {
    write_run_files(out_dir, jobs, runs);
    write_text_file(out_dir + "/summary.json", text);
    std::printf("wrote %s/{summary.json,jct_cdf.csv,<policy>_{jobs,timeline,memory,lane_moves}.csv}\n", out_dir.c_str());
  }
}

void write_streamed_outputs(const nlohmann::json& header, const std::string& summary_path, const std::string& out_dir,
                            const std::vector<core::JobSpec>& jobs, const std::vector<SimRun>& runs,
                            TimelineMode timeline) {
  std::string first;  // the summary is streamed once, then copied
  auto write_summary = [&](const std::string& path) {
    if (first.empty()) {
      write_summary_json(path, header, jobs, runs);
      first = path;
      return;
    }
    std::error_code ec;
    if (std::filesystem::equivalent(first, path, ec)) return;  // the same file named twice
    std::filesystem::copy_file(first, path, std::filesystem::copy_options::overwrite_existing, ec);
    if (ec) throw core::InputError(path + ": cannot write (" + ec.message() + ")");
  };
  if (!summary_path.empty()) write_summary(summary_path);
  if (!out_dir.empty()) {
    write_run_files(out_dir, jobs, runs, timeline);
    write_summary(out_dir + "/summary.json");
    std::printf("wrote %s/{summary.json,jct_cdf.csv,<policy>_{jobs,%smemory,lane_moves}.csv}\n", out_dir.c_str(),
                timeline == TimelineMode::kOff ? "" : "timeline,");
  }
}

int guarded_main(const char* tool, int (*body)(int, char**), int argc, char** argv) {
  try {
    return body(argc, argv);
  } catch (const core::InputError& e) {
    std::fprintf(stderr, "%s: %s\n", tool, e.what());
    return 2;
  } catch (const boost::program_options::error& e) {
    std::fprintf(stderr, "%s: %s (see --help)\n", tool, e.what());
    return 2;
  } catch (const std::logic_error& e) {
    std::fprintf(stderr, "%s: internal error: %s\n", tool, e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: %s\n", tool, e.what());
    return 1;
  }
}

}  // namespace salus::experiments
