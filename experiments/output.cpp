#include "experiments/output.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "core/errors.h"

namespace salus::experiments {

std::string seconds_text(core::TimeNs ns) {
  const bool neg = ns < 0;
  const unsigned long long a = neg ? 0ULL - static_cast<unsigned long long>(ns) : static_cast<unsigned long long>(ns);
  char buf[48];
  std::snprintf(buf, sizeof buf, "%s%llu.%09llu", neg ? "-" : "", a / 1'000'000'000ULL, a % 1'000'000'000ULL);
  std::string s = buf;
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

namespace {

std::string mib_text(core::Bytes b) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.6f", core::to_mib(b));
  std::string s = buf;
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + "\"";
}

std::string opt_seconds(core::TimeNs ns) { return ns < 0 ? "" : seconds_text(ns); }

}  // namespace

void print_table(std::ostream& os, const std::vector<SimRun>& runs) {
  char line[320];
  std::snprintf(line, sizeof line, "%-8s %-10s %12s %14s %12s %12s %6s %9s %7s %12s\n", "Policy", "Lanes", "Makespan",
                "Avg. Queuing", "Avg. JCT", "95% JCT", "Done", "Rejected", "Failed", "Interrupted");
  os << line;
  // A run in which no job finished has no makespan, queuing or JCT: a dash, not 0.00 s. The dash
  // is three bytes of UTF-8 but one column: padded by hand.
  auto cell = [](double seconds, bool any, int width) {
    char text[32];
    if (any) {
      std::snprintf(text, sizeof text, "%*.2f s", width - 2, seconds);
      return std::string(text);
    }
    return std::string(static_cast<std::size_t>(width - 1), ' ') + "\u2014";
  };
  for (const SimRun& r : runs) {
    const core::RunMetrics& m = r.metrics;
    const bool any = m.done > 0;
    std::snprintf(line, sizeof line, "%-8s %-10s %s %s %s %s %6lld %9lld %7lld %12lld\n", r.policy.c_str(),
                  core::to_string(r.lane_mode), cell(core::to_seconds(m.makespan_ns), any, 12).c_str(),
                  cell(m.avg_queuing_s, any, 14).c_str(), cell(m.avg_jct_s, any, 12).c_str(),
                  cell(core::to_seconds(m.p95_jct_ns), any, 12).c_str(), static_cast<long long>(m.done),
                  static_cast<long long>(m.rejected), static_cast<long long>(m.failed),
                  static_cast<long long>(m.interrupted));
    os << line;
  }
}

nlohmann::json results_json(const std::vector<core::JobSpec>& jobs, const std::vector<SimRun>& runs) {
  nlohmann::json results = nlohmann::json::array();
  for (const SimRun& r : runs) results.push_back(core::result_json(r.policy, r.lane_mode, jobs, r.outcome, r.metrics));
  return results;
}

std::string read_text_tail(const std::string& path, std::size_t max_bytes) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return "";
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  return text.size() > max_bytes ? text.substr(text.size() - max_bytes) : text;
}

void write_text_file(const std::string& path, const std::string& text) {
  std::error_code ec;
  const std::filesystem::path p(path);
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path(), ec);
  std::ofstream f(path, std::ios::binary);
  if (!f) throw core::InputError(path + ": cannot open for writing");
  f << text;
  f.close();
  if (!f) throw core::InputError(path + ": write failed");
}

void write_run_files(const std::string& dir, const std::vector<core::JobSpec>& jobs, const std::vector<SimRun>& runs) {
  std::ostringstream cdf;
  cdf << "policy,jct_s,fraction\n";
  for (const SimRun& r : runs) {
    const core::ScheduleOutcome& o = r.outcome;
    std::ostringstream jf;
    jf << "id,workload,arrival_s,start_s,finish_s,jct_s,queuing_s,status,lane,iterations,reason\n";
    std::vector<core::TimeNs> jcts;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      const core::JobSpec& s = jobs[i];
      const core::JobState& st = o.jobs[i];
      const core::TimeNs jct = st.finish_ns < 0 ? -1 : st.finish_ns - s.arrival_ns;
      const core::TimeNs q = st.first_start_ns < 0 ? -1 : st.first_start_ns - s.arrival_ns;
      jf << csv_field(s.id) << ',' << csv_field(s.workload) << ',' << seconds_text(s.arrival_ns) << ','
         << opt_seconds(st.first_start_ns) << ',' << opt_seconds(st.finish_ns) << ',' << opt_seconds(jct) << ','
         << opt_seconds(q) << ',' << core::to_string(st.status) << ',' << st.lane << ',' << st.iterations_done << ','
         << csv_field(st.reason) << '\n';
      if (st.status == core::JobStatus::kDone) jcts.push_back(jct);
    }
    std::sort(jcts.begin(), jcts.end());
    for (std::size_t k = 0; k < jcts.size(); ++k) {
      char frac[32];
      std::snprintf(frac, sizeof frac, "%.6f", static_cast<double>(k + 1) / static_cast<double>(jcts.size()));
      cdf << r.policy << ',' << seconds_text(jcts[k]) << ',' << frac << '\n';
    }
    std::ostringstream tf;
    tf << "lane,job_id,start_s,end_s,iterations,switch_s\n";
    std::vector<core::Segment> segments = o.segments;  // in completion order; plots want start order
    std::stable_sort(segments.begin(), segments.end(), [](const core::Segment& x, const core::Segment& y) {
      return x.start_ns != y.start_ns ? x.start_ns < y.start_ns : x.lane < y.lane;
    });
    for (const core::Segment& g : segments) {
      tf << g.lane << ',' << csv_field(jobs[static_cast<std::size_t>(g.job)].id) << ',' << seconds_text(g.start_ns)
         << ',' << seconds_text(g.end_ns) << ',' << g.iterations << ',' << seconds_text(g.switch_ns) << '\n';
    }
    std::ostringstream mf;
    mf << "time_s,persistent_mib,lanes_reserved_mib,ephemeral_active_mib,lanes\n";
    for (const core::MemorySample& m : o.memory) {
      mf << seconds_text(m.time_ns) << ',' << mib_text(m.persistent) << ',' << mib_text(m.lanes_reserved) << ','
         << mib_text(m.ephemeral_active) << ',' << m.lanes << '\n';
    }
    std::ostringstream lf;
    lf << "time_s,lane,from_offset_mib,from_size_mib,to_offset_mib,to_size_mib\n";
    for (const core::LaneMove& mv : o.lane_moves) {
      lf << seconds_text(mv.time_ns) << ',' << mv.lane << ','
         << (mv.from_offset == core::kUnplaced ? std::string() : mib_text(mv.from_offset)) << ','
         << mib_text(mv.from_size) << ',' << mib_text(mv.to_offset) << ',' << mib_text(mv.to_size) << '\n';
    }
    const std::string base = dir + "/" + r.policy;
    write_text_file(base + "_jobs.csv", jf.str());
    write_text_file(base + "_timeline.csv", tf.str());
    write_text_file(base + "_memory.csv", mf.str());
    write_text_file(base + "_lane_moves.csv", lf.str());
  }
  write_text_file(dir + "/jct_cdf.csv", cdf.str());
}

}  // namespace salus::experiments
