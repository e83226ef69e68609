#include "experiments/fidelity.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>

#include "core/errors.h"
#include "experiments/output.h"
#include "experiments/siblings.h"

namespace salus::experiments {
namespace {

using nlohmann::json;

double nearest_rank(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto k = static_cast<std::size_t>(std::max(1.0, std::ceil(q * static_cast<double>(v.size())))) - 1;
  return v[std::min(k, v.size() - 1)];
}

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double relative(double sim, double real) { return real > 0 ? std::abs(sim - real) / real : 0.0; }

}  // namespace

double kendall_tau(const std::vector<double>& a, const std::vector<double>& b) {
  const std::size_t n = std::min(a.size(), b.size());
  if (n < 2) return 1.0;
  long long concordant = 0, discordant = 0;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = i + 1; j < n; ++j) {
      const double x = (a[i] - a[j]) * (b[i] - b[j]);
      if (x > 0) ++concordant;
      if (x < 0) ++discordant;
    }
  }
  return static_cast<double>(concordant - discordant) / (static_cast<double>(n) * static_cast<double>(n - 1) / 2);
}

FidelityRow compare_results(const json& sim, const json& real) {
  FidelityRow row;
  row.policy = real.at("policy").get<std::string>();
  if (sim.at("policy") != real.at("policy")) {
    throw core::InputError("fidelity: comparing policy " + sim.at("policy").get<std::string>() + " with " + row.policy);
  }
  std::map<std::string, const json*> sim_jobs;
  for (const json& j : sim.at("jobs")) sim_jobs[j.at("id").get<std::string>()] = &j;
  const json& real_jobs = real.at("jobs");
  if (real_jobs.size() != sim_jobs.size()) {
    throw core::InputError("fidelity: " + row.policy + ": the simulator ran " + std::to_string(sim_jobs.size()) +
                           " jobs, the real executor " + std::to_string(real_jobs.size()) + ": not the same trace");
  }
  row.jobs = static_cast<int>(real_jobs.size());
  std::vector<double> errors, finish_real, finish_sim;
  for (const json& r : real_jobs) {
    const std::string id = r.at("id").get<std::string>();
    const auto it = sim_jobs.find(id);
    if (it == sim_jobs.end()) throw core::InputError("fidelity: job " + id + " is not in the simulated run");
    const json& s = *it->second;
    if (r.at("status") != "done" || s.at("status") != "done") continue;
    ++row.done_both;
    errors.push_back(relative(s.at("jct_s").get<double>(), r.at("jct_s").get<double>()));
    finish_real.push_back(r.at("finish_s").get<double>());
    finish_sim.push_back(s.at("finish_s").get<double>());
  }
  row.makespan_real_s = real.at("makespan_s").get<double>();
  row.makespan_sim_s = sim.at("makespan_s").get<double>();
  row.makespan_error = relative(row.makespan_sim_s, row.makespan_real_s);
  row.jct_error_median = nearest_rank(errors, 0.5);
  row.jct_error_p95 = nearest_rank(errors, 0.95);
  row.jct_error_max = errors.empty() ? 0 : *std::max_element(errors.begin(), errors.end());
  row.kendall_tau = kendall_tau(finish_real, finish_sim);
  row.switches_real = real.value("switches", 0LL);
  row.switches_sim = sim.value("switches", 0LL);
  return row;
}

std::vector<FidelityRow> compare_summaries(const json& sim_summary, const json& real_summary) {
  std::map<std::string, const json*> sim;
  for (const json& r : sim_summary.at("results")) sim[r.at("policy").get<std::string>()] = &r;
  std::vector<FidelityRow> rows;
  for (const json& r : real_summary.at("results")) {
    const auto it = sim.find(r.at("policy").get<std::string>());
    if (it != sim.end()) rows.push_back(compare_results(*it->second, r));
  }
  return rows;
}

FidelityRow median_row(const std::vector<FidelityRow>& repeats) {
  SALUS_INVARIANT(!repeats.empty(), "median of at least one repeat", "");
  FidelityRow m = repeats.front();
  auto med = [&](double FidelityRow::*field) {
    std::vector<double> v;
    for (const FidelityRow& r : repeats) v.push_back(r.*field);
    m.*field = median_of(v);
  };
  for (double FidelityRow::*f : {&FidelityRow::makespan_real_s, &FidelityRow::makespan_sim_s, &FidelityRow::makespan_error,
                                  &FidelityRow::jct_error_median, &FidelityRow::jct_error_p95, &FidelityRow::jct_error_max,
                                  &FidelityRow::kendall_tau}) {
    med(f);
  }
  return m;
}

void repeat_spread(FidelityRow& row, const std::vector<const json*>& real_results) {
  std::vector<double> jct, makespan;
  for (std::size_t a = 0; a < real_results.size(); ++a) {
    for (std::size_t b = 0; b < real_results.size(); ++b) {
      if (a == b) continue;
      const FidelityRow pair = compare_results(*real_results[a], *real_results[b]);
      jct.push_back(pair.jct_error_median);
      makespan.push_back(pair.makespan_error);
    }
  }
  if (jct.empty()) return;
  row.spread_jct_median = median_of(jct);
  row.spread_makespan = median_of(makespan);
}

json to_json(const FidelityRow& r) {
  json spread = nullptr;  // null with one repeat: nothing to compare
  if (r.spread_jct_median >= 0) {
    spread = {{"jct_error_median", r.spread_jct_median}, {"makespan_error", r.spread_makespan}};
  }
  return {{"policy", r.policy},
          {"jobs", r.jobs},
          {"done_both", r.done_both},
          {"makespan_real_s", r.makespan_real_s},
          {"makespan_sim_s", r.makespan_sim_s},
          {"makespan_error", r.makespan_error},
          {"jct_error_median", r.jct_error_median},
          {"jct_error_p95", r.jct_error_p95},
          {"jct_error_max", r.jct_error_max},
          {"kendall_tau", r.kendall_tau},
          {"switches_real", r.switches_real},
          {"switches_sim", r.switches_sim},
          {"repeat_spread", spread}};
}

std::string fidelity_table(const std::vector<FidelityRow>& rows) {
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line, "%-8s %5s %18s %8s %12s %8s %8s %7s %17s  %s\n", "policy", "done", "makespan real/sim",
                "error", "JCT err p50", "p95", "max", "tau", "switches real/sim", "real vs real: JCT p50, makespan");
  out += line;
  for (const FidelityRow& r : rows) {
    char spread[64] = "-";
    if (r.spread_jct_median >= 0) {
      std::snprintf(spread, sizeof spread, "%.2f%%, %.2f%%", 100 * r.spread_jct_median, 100 * r.spread_makespan);
    }
    std::snprintf(line, sizeof line, "%-8s %2d/%-2d %8.2f/%-8.2f s %7.2f%% %11.2f%% %7.2f%% %7.2f%% %7.3f %8lld/%-8lld  %s\n",
                  r.policy.c_str(), r.done_both, r.jobs, r.makespan_real_s, r.makespan_sim_s, 100 * r.makespan_error,
                  100 * r.jct_error_median, 100 * r.jct_error_p95, 100 * r.jct_error_max, r.kendall_tau, r.switches_real,
                  r.switches_sim, spread);
    out += line;
  }
  return out;
}

/// salus-experiment fidelity: the trace's workloads profiled on the device (unless a catalog is
/// given), the trace run under the four policies on the real executor `repeat` times and once in
/// the simulator with that catalog, and the two compared per policy (medians over the repeats).
nlohmann::json run_fidelity(const ExperimentContext& ctx) {
  const std::string& device = ctx.device;
  const std::string trace = ctx.trace.empty() ? ctx.data_dir + "/experiments/fidelity_cpu.csv" : ctx.trace;
  const std::string given_profiles = ctx.profiles_given ? ctx.profiles : std::string();
  const std::string& gpu_mem = ctx.gpu_mem;
  const int repeat = ctx.repeat;
  const std::string& out_dir = ctx.out_dir;
  if (repeat < 1 || repeat > 20) throw core::InputError("--repeat: must be from 1 to 20");
  std::filesystem::create_directories(out_dir);
  const std::string q_trace = shell_quote(trace), q_mem = shell_quote(gpu_mem);
  std::string catalog = given_profiles;
  if (catalog.empty()) {
    catalog = out_dir + "/fidelity_catalog.json";
    profile_on_device(device, trace_workloads({trace}), gpu_mem, catalog, out_dir + "/fidelity_profile.log");
  }
  const std::string q_cat = shell_quote(catalog);
  const std::string sim_summary = out_dir + "/fidelity_sim.json";
  // The paper's four policies (the registry holds more; each would add a minute a repeat).
  const std::string four_policies = " --policy fifo,srtf,pack,fair";
  run_sibling("salus-sim", "--trace " + q_trace + four_policies + " --profiles " + q_cat + " --gpu-mem " + q_mem + " --summary-json " +
                               shell_quote(sim_summary),
              out_dir + "/fidelity_sim.log");
  const nlohmann::json sim = nlohmann::json::parse(read_text_tail(sim_summary, 1 << 30));
  std::map<std::string, std::vector<FidelityRow>> by_policy;
  std::vector<std::string> order;
  nlohmann::json repeats = nlohmann::json::array(), per_job = nlohmann::json::object();
  std::vector<nlohmann::json> reals;  // every repeat's summary, for the executor's own spread
  for (int r = 1; r <= repeat; ++r) {
    const std::string real_summary = out_dir + "/fidelity_real_" + std::to_string(r) + ".json";
    run_sibling("salus-run", "--device " + shell_quote(device) + " --trace " + q_trace + four_policies + " --profiles " + q_cat +
                                 " --gpu-mem " + q_mem + " --summary-json " + shell_quote(real_summary),
                out_dir + "/fidelity_real_" + std::to_string(r) + ".log");
    reals.push_back(nlohmann::json::parse(read_text_tail(real_summary, 1 << 30)));
    const nlohmann::json& real = reals.back();
    nlohmann::json rows = nlohmann::json::array();
    for (const FidelityRow& row : compare_summaries(sim, real)) {
      if (by_policy.count(row.policy) == 0) order.push_back(row.policy);
      by_policy[row.policy].push_back(row);
      rows.push_back(to_json(row));
    }
    repeats.push_back(rows);
    if (r == 1) {
      // Per job, simulated against measured (the first repeat), for the figure.
      for (const nlohmann::json& res : real.at("results")) {
        const std::string policy = res.at("policy").get<std::string>();
        std::map<std::string, double> sim_jct;
        for (const nlohmann::json& sr : sim.at("results")) {
          if (sr.at("policy") != policy) continue;
          for (const nlohmann::json& j : sr.at("jobs")) {
            if (j.at("status") == "done") sim_jct[j.at("id").get<std::string>()] = j.at("jct_s").get<double>();
          }
        }
        nlohmann::json jobs = nlohmann::json::array();
        for (const nlohmann::json& j : res.at("jobs")) {
          const auto it = sim_jct.find(j.at("id").get<std::string>());
          if (j.at("status") != "done" || it == sim_jct.end()) continue;
          jobs.push_back({{"id", j.at("id")}, {"jct_real_s", j.at("jct_s")}, {"jct_sim_s", it->second}});
        }
        per_job[policy] = jobs;
      }
    }
  }
  std::vector<FidelityRow> medians;
  nlohmann::json policies = nlohmann::json::object();
  for (const std::string& p : order) {
    medians.push_back(median_row(by_policy[p]));
    std::vector<const nlohmann::json*> results;
    for (const nlohmann::json& real : reals) {
      for (const nlohmann::json& res : real.at("results")) {
        if (res.at("policy") == p) results.push_back(&res);
      }
    }
    repeat_spread(medians.back(), results);
    policies[p] = to_json(medians.back());
  }
  std::printf("\nfidelity on %s: %s, catalog %s, median of %d repeat(s) (errors relative to the measured run; real vs real: the executor's repeats against each other)\n%s",
              device.c_str(), trace.c_str(), catalog.c_str(), repeat, fidelity_table(medians).c_str());
  return {{"experiment", "fidelity"},
          {"version", 1},
          {"executor", "real"},
          {"device", device},
          {"trace", trace},
          {"catalog", catalog},
          {"interference", sim.value("interference", "")},
          {"switch_cost_ms", sim.value("switch_cost_ms", 0.0)},
          {"repeat", repeat},
          {"policies", policies},
          {"repeats", repeats},
          {"per_job", per_job}};
}

}  // namespace salus::experiments
