// The inference experiment (the paper's Fig. 10 / Fig. 13 in the arXiv text): how many GPUs it
// takes to keep 42 models online, and what sharing costs each request.
//
// An inference job is a stream of requests (core::JobSpec::requests_ns), each one forward
// iteration, arriving as a Poisson process at a low rate. Three deployments:
//   exclusive: every job on its own GPU (the default without sharing);
//   mps:       static partitioning, MPS-style: each job is a process that must hold its peak
//              memory (P + E) plus a per-process overhead for the whole run, first-fit
//              decreasing onto GPUs;
//   salus:     one Salus process per GPU, jobs first-fit by persistent memory with the safety
//              condition sum(P) + max(E) <= C, then simulated under PACK with lanes per
//              Algorithm 1, so their requests share lanes and interfere.
// Latency is simulated for exclusive (each job alone) and Salus; the MPS deployment is only
// counted.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>

#include "core/errors.h"
#include "core/lanes.h"
#include "experiments/paper_experiments.h"
#include "run/sim_runner.h"
#include "traces/catalog.h"
#include "traces/csv.h"

namespace salus::experiments {

// The experiments are configurations over the runner seam (run/).
using namespace salus::run;
namespace {

using nlohmann::json;

struct InferenceConfig {
  std::vector<std::string> models;
  std::int64_t instances = 3;
  double request_rate_per_s = 0.5;
  double duration_s = 600;
  std::uint64_t seed = 1;
  core::Bytes process_overhead = 0;
  std::string overhead_note;
  int lanes_per_gpu = 0;  ///< Salus: at most this many lanes per GPU (0: as many as Algorithm 1 opens)
};

/// "path:line: what", the line being where `key` appears in the file (1 if it does not).
[[noreturn]] void config_error(const std::string& path, const std::string& text, const std::string& key,
                               const std::string& what) {
  long line = 1;
  const auto pos = text.find("\"" + key + "\"");
  if (pos != std::string::npos) line += static_cast<long>(std::count(text.begin(), text.begin() + static_cast<long>(pos), '\n'));
  throw core::InputError(core::at(path, line, key + ": " + what));
}

InferenceConfig load_config(const std::string& path, const traces::Catalog& catalog) {
  const std::string text = traces::read_text_file(path, "experiment configuration", traces::TextBound::kJson);
  const json j = traces::parse_json(text, path);
  if (!j.is_object()) throw core::InputError(core::at(path, 1, "expected a JSON object"));
  static const char* kKeys[] = {"format", "notes", "models", "instances", "request_rate_per_s", "duration_s", "seed",
                                "process_overhead_mib", "process_overhead_note", "lanes_per_gpu"};
  for (const auto& item : j.items()) {
    const std::string& k = item.key();  // (clang 14 captures no structured binding in a lambda)
    if (std::find_if(std::begin(kKeys), std::end(kKeys), [&](const char* x) { return k == x; }) == std::end(kKeys)) {
      std::string valid;
      for (const char* x : kKeys) valid += (valid.empty() ? "" : ", ") + std::string(x);
      config_error(path, text, k, "unknown key (valid: " + valid + ")");
    }
  }
  if (j.value("format", "") != "salus-inference-experiment/1") {
    config_error(path, text, "format", "must be \"salus-inference-experiment/1\"");
  }
  InferenceConfig c;
  if (!j.contains("models") || !j["models"].is_array() || j["models"].empty()) {
    config_error(path, text, "models", "must be a non-empty array of catalog names");
  }
  for (const json& m : j["models"]) {
    if (!m.is_string()) config_error(path, text, "models", "every entry must be a string");
    const std::string name = m.get<std::string>();
    if (catalog.find(name) == nullptr) {
      config_error(path, text, name, "not in the catalog " + catalog.path() + " (valid: " + catalog.names_joined() + ")");
    }
    c.models.push_back(name);
  }
  auto number = [&](const char* key, double lo, double hi) {
    if (!j.contains(key) || !j[key].is_number()) config_error(path, text, key, "missing or not a number");
    const double v = j[key].get<double>();
    if (!(v >= lo && v <= hi)) {
      config_error(path, text, key, "must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    }
    return v;
  };
  const double instances = number("instances", 1, 1000);
  if (instances != std::floor(instances)) config_error(path, text, "instances", "must be an integer");
  c.instances = static_cast<std::int64_t>(instances);
  c.request_rate_per_s = number("request_rate_per_s", 1e-6, 1e6);
  c.duration_s = number("duration_s", 1e-3, 1e7);
  if (c.request_rate_per_s * c.duration_s * static_cast<double>(c.models.size() * static_cast<std::size_t>(c.instances)) > 5e7) {
    config_error(path, text, "duration_s", "too many requests to simulate (rate x duration x jobs > 5e7)");
  }
  if (!j.contains("seed") || !j["seed"].is_number_unsigned()) config_error(path, text, "seed", "must be a non-negative integer");
  c.seed = j["seed"].get<std::uint64_t>();
  c.process_overhead = static_cast<core::Bytes>(std::llround(number("process_overhead_mib", 0, 1e6) * core::kMiB));
  c.overhead_note = j.value("process_overhead_note", "");
  const double lanes = number("lanes_per_gpu", 0, 1000);
  if (lanes != std::floor(lanes)) config_error(path, text, "lanes_per_gpu", "must be an integer");
  c.lanes_per_gpu = static_cast<int>(lanes);
  return c;
}

/// splitmix64: a fixed, tiny generator, so request times are identical on every platform.
struct SplitMix {
  std::uint64_t s;
  std::uint64_t next() {
    std::uint64_t z = (s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  /// Uniform in (0, 1].
  double uniform() { return (static_cast<double>(next() >> 11) + 1.0) * 0x1.0p-53; }
};

std::vector<core::JobSpec> make_jobs(const InferenceConfig& c, const traces::Catalog& catalog) {
  std::vector<core::JobSpec> jobs;
  SplitMix rng{c.seed};
  const auto horizon = static_cast<core::TimeNs>(std::llround(c.duration_s * 1e9));
  for (const std::string& model : c.models) {
    const traces::WorkloadProfile& p = *catalog.find(model);
    for (std::int64_t k = 0; k < c.instances; ++k) {
      core::JobSpec s;
      s.id = model + "#" + std::to_string(k + 1);
      s.workload = model;
      s.persistent = p.persistent;
      s.ephemeral = p.ephemeral;
      s.iter_ns = p.iter_ns;
      s.gpu_util_ppm = p.gpu_util_ppm;
      s.trace_order = static_cast<std::int32_t>(jobs.size());
      double t = 0;
      std::vector<core::TimeNs> requests;
      while (true) {
        t += -std::log(rng.uniform()) / c.request_rate_per_s;
        const auto ns = static_cast<core::TimeNs>(std::llround(t * 1e9));
        if (ns > horizon && !requests.empty()) break;
        requests.push_back(ns);
      }
      s.iterations = static_cast<std::int64_t>(requests.size());
      s.set_requests_ns(std::move(requests));
      jobs.push_back(std::move(s));
    }
  }
  return jobs;
}

/// First-fit decreasing by the given size; returns the bin of each job.
std::vector<int> first_fit_decreasing(const std::vector<core::Bytes>& size, core::Bytes capacity) {
  std::vector<std::size_t> order(size.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return size[a] > size[b]; });
  std::vector<core::Bytes> used;
  std::vector<int> bin(size.size(), -1);
  for (std::size_t i : order) {
    std::size_t g = 0;
    while (g < used.size() && used[g] + size[i] > capacity) ++g;
    if (g == used.size()) used.push_back(0);
    used[g] += size[i];
    bin[i] = static_cast<int>(g);
  }
  return bin;
}

/// Salus GPUs: every job stays admitted for the whole run, so a GPU can take a job exactly when
/// Algorithm 1 (core::LaneManager, the same code the loop runs) admits it next to the jobs
/// already there. Jobs are offered largest persistent memory first, each to the first GPU that
/// admits it, in the order the simulation later submits them.
std::vector<std::vector<std::size_t>> salus_groups(const std::vector<core::JobSpec>& jobs, core::Bytes capacity,
                                                   int max_lanes) {
  std::vector<std::size_t> order(jobs.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return jobs[a].persistent > jobs[b].persistent; });
  std::vector<std::vector<std::size_t>> groups;
  std::vector<core::LaneManager> gpus;
  for (std::size_t i : order) {
    std::size_t g = 0;
    while (g < gpus.size() && gpus[g].admit(jobs[i].persistent, jobs[i].ephemeral).choice == core::LaneChoice::kNotFound) ++g;
    if (g == gpus.size()) {
      gpus.emplace_back(capacity, max_lanes);
      groups.emplace_back();
      const auto r = gpus.back().admit(jobs[i].persistent, jobs[i].ephemeral);
      SALUS_INVARIANT(r.choice != core::LaneChoice::kNotFound, "a job that fits the GPU is admitted on an empty one",
                      jobs[i].id);
    }
    groups[g].push_back(i);
  }
  return groups;
}

struct LatencyStats {
  double sum_ms = 0;
  std::int64_t count = 0;
  void add(core::TimeNs latency) {
    sum_ms += static_cast<double>(latency) / 1e6;
    ++count;
  }
  double mean() const { return count > 0 ? sum_ms / static_cast<double>(count) : 0; }
};

}  // namespace

nlohmann::json run_inference_experiment(const ExperimentContext& ctx, const std::string& config_path) {
  const traces::Catalog catalog = traces::Catalog::load(ctx.profiles);
  const InferenceConfig c = load_config(config_path, catalog);
  std::vector<core::JobSpec> jobs = make_jobs(c, catalog);
  const core::Bytes cap = ctx.capacity;
  for (const core::JobSpec& s : jobs) {
    if (s.persistent + s.ephemeral > cap) {
      throw core::InputError(config_path + ": " + s.workload + " needs " + core::format_size(s.persistent + s.ephemeral) +
                             ", more than the GPU's " + core::format_size(cap));
    }
  }
  SimConfig cfg;
  cfg.capacity = cap;
  cfg.switch_cost_ns = core::kNsPerMs;
  cfg.interference = "profiled";

  // Exclusive: each job alone on its GPU.
  std::map<std::string, LatencyStats> excl_by_model, salus_by_model;
  LatencyStats excl_all, salus_all;
  for (const core::JobSpec& s : jobs) {
    const PolicyRun r = simulate({s}, "fifo", cfg);
    for (core::TimeNs l : r.outcome.jobs[0].request_latency_ns()) {
      excl_by_model[s.workload].add(l);
      excl_all.add(l);
    }
  }

  // MPS-style static partitioning.
  std::vector<core::Bytes> reserved;
  for (const core::JobSpec& s : jobs) reserved.push_back(s.persistent + s.ephemeral + c.process_overhead);
  auto bins_needed = [&](const std::vector<core::Bytes>& sizes) {
    const std::vector<int> bin = first_fit_decreasing(sizes, cap);
    return bin.empty() ? 0 : *std::max_element(bin.begin(), bin.end()) + 1;
  };
  const int gpus_mps = bins_needed(reserved);
  for (std::size_t i = 0; i < jobs.size(); ++i) reserved[i] = jobs[i].persistent + jobs[i].ephemeral;
  const int gpus_mps_no_overhead = bins_needed(reserved);

  // Salus: simulate each GPU's group under PACK with lanes per Algorithm 1.
  const auto groups = salus_groups(jobs, cap, c.lanes_per_gpu);
  json per_gpu = json::array();
  std::int64_t late_admissions = 0;
  core::TimeNs max_latency = 0;
  for (const auto& g : groups) {
    std::vector<core::JobSpec> group;
    for (std::size_t i : g) {
      group.push_back(jobs[i]);
      group.back().trace_order = static_cast<std::int32_t>(group.size() - 1);
    }
    SimConfig gc = cfg;
    gc.lanes = core::LaneMode::kAuto;
    gc.max_lanes = c.lanes_per_gpu;
    const PolicyRun r = simulate(group, "pack", gc);
    core::Bytes sum_p = 0;
    for (std::size_t k = 0; k < group.size(); ++k) {
      const core::JobState& st = r.outcome.jobs[k];
      sum_p += group[k].persistent;
      if (st.admitted_ns > group[k].requests_ns().front()) ++late_admissions;
      for (core::TimeNs l : st.request_latency_ns()) {
        salus_by_model[group[k].workload].add(l);
        salus_all.add(l);
        max_latency = std::max(max_latency, l);
      }
    }
    per_gpu.push_back({{"jobs", group.size()},
                       {"persistent_mib", static_cast<double>(sum_p) / core::kMiB},
                       {"lanes_opened", r.outcome.lanes_opened},
                       {"max_concurrent_lanes", r.outcome.max_concurrent_lanes},
                       {"switches", r.outcome.switches}});
  }

  json j{{"experiment", "inference"}, {"version", 1}};
  j["config"] = {{"input", config_path},
                 {"profiles", ctx.profiles},
                 {"gpu_mem_bytes", cap},
                 {"models", c.models},
                 {"instances", c.instances},
                 {"request_rate_per_s", c.request_rate_per_s},
                 {"duration_s", c.duration_s},
                 {"seed", c.seed},
                 {"process_overhead_mib", static_cast<double>(c.process_overhead) / core::kMiB},
                 {"lanes_per_gpu", c.lanes_per_gpu},
                 {"switch_cost_ms", 1.0},
                 {"interference", cfg.interference}};
  j["jobs"] = jobs.size();
  j["requests"] = salus_all.count;
  j["gpus_exclusive"] = jobs.size();
  j["gpus_mps"] = gpus_mps;
  j["gpus_salus"] = groups.size();
  j["gpus_mps_without_process_overhead"] = gpus_mps_no_overhead;
  j["paper"] = {{"gpus_exclusive", 42}, {"gpus_mps", 6}, {"gpus_salus", 1}, {"latency_overhead_ms_below", 5}};
  j["avg_latency_ms"] = {{"exclusive", excl_all.mean()},
                         {"salus", salus_all.mean()},
                         {"overhead", salus_all.mean() - excl_all.mean()}};
  j["max_latency_ms_salus"] = static_cast<double>(max_latency) / 1e6;
  j["late_admissions"] = late_admissions;
  j["salus_gpus"] = per_gpu;
  for (const std::string& m : c.models) {
    const traces::WorkloadProfile& p = *catalog.find(m);
    j["models"].push_back({{"workload", m},
                           {"instances", c.instances},
                           {"persistent_mib", static_cast<double>(p.persistent) / core::kMiB},
                           {"peak_mib", static_cast<double>(p.persistent + p.ephemeral) / core::kMiB},
                           {"iter_ms", static_cast<double>(p.iter_ns) / 1e6},
                           {"avg_latency_ms_exclusive", excl_by_model[m].mean()},
                           {"avg_latency_ms_salus", salus_by_model[m].mean()}});
  }
  if (ctx.log != nullptr) {
    char line[512];
    std::snprintf(line, sizeof line,
                  "inference: %zu jobs (%zu models x %lld), Poisson requests at %.3g/s each for %.0f s (%lld requests)\n",
                  jobs.size(), c.models.size(), static_cast<long long>(c.instances), c.request_rate_per_s, c.duration_s,
                  static_cast<long long>(salus_all.count));
    *ctx.log << line;
    std::snprintf(line, sizeof line,
                  "  GPUs needed: exclusive %zu (paper 42), MPS-style %d (paper 6; %d without the %.0f MiB per process), "
                  "Salus %zu (paper 1)\n",
                  jobs.size(), gpus_mps, gpus_mps_no_overhead, static_cast<double>(c.process_overhead) / core::kMiB,
                  groups.size());
    *ctx.log << line;
    std::snprintf(line, sizeof line,
                  "  avg request latency: exclusive %.2f ms, Salus %.2f ms, overhead %.2f ms (paper: < 5 ms); max %.1f ms\n",
                  excl_all.mean(), salus_all.mean(), salus_all.mean() - excl_all.mean(),
                  static_cast<double>(max_latency) / 1e6);
    *ctx.log << line;
    if (late_admissions > 0) {
      std::snprintf(line, sizeof line, "  note: %lld jobs were admitted after their first request\n",
                    static_cast<long long>(late_admissions));
      *ctx.log << line;
    }
  }
  return j;
}

}  // namespace salus::experiments
