#include "experiments/fidelity.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>

#include "core/errors.h"
#include "run/cli.h"
#include "run/cpus.h"
#include "run/output.h"
#include "experiments/siblings.h"
#include "traces/csv.h"

namespace salus::experiments {

// The experiments are configurations over the runner seam (run/).
using namespace salus::run;
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

// The files a fidelity run reads back (its runs' summaries, calibrations, --predict-from's folder)
// go through the one JSON reader of inputs: bounded depth, no duplicate keys, errors at file:line.
json read_json(const std::string& path) { return traces::parse_json(read_text_tail(path, 1 << 30), path); }

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

void check_calibration_mode(const std::string& mode) {
  std::string valid;
  for (const char* m : kCalibrationModes) {
    if (mode == m) return;
    valid += (valid.empty() ? "" : ", ") + std::string(m);
  }
  throw core::InputError("--calibrate: unknown mode '" + mode + "' (valid: " + valid + ")");
}

namespace {

double combine(std::vector<double> values, CalibrationCombine how) {
  if (how == CalibrationCombine::kMean) {
    double sum = 0;
    for (double v : values) sum += v;
    return sum / static_cast<double>(values.size());
  }
  return median_of(std::move(values));
}

/// The entry of workload `name` in a catalog; null when the catalog (or its list) has none.
json workload_entry(const json* catalog, const std::string& name) {
  if (catalog == nullptr || !catalog->contains("workloads")) return nullptr;
  for (const json& w : catalog->at("workloads")) {
    if (w.value("name", std::string()) == name) return w;
  }
  return nullptr;
}

}  // namespace

json base_against_calibrations(const json& base, const json& calibrations) {
  json out = json::object();
  for (const json& w : base.at("workloads")) {
    if (!w.contains("iter_ms")) continue;
    const std::string name = w.at("name").get<std::string>();
    std::vector<double> seen;
    for (const json& c : calibrations) {
      const json m = workload_entry(&c, name);
      if (m.is_object() && m.contains("iter_ms")) seen.push_back(m.at("iter_ms").get<double>());
    }
    if (seen.empty()) continue;
    const double b = w.at("iter_ms").get<double>(), med = median_of(std::move(seen));
    out[name] = {{"base_iter_ms", b}, {"calibrations_median_iter_ms", med}, {"ratio", med > 0 ? b / med : 0.0}};
  }
  return out;
}

std::vector<std::size_t> calibration_readings(const std::string& mode, std::size_t run, std::size_t calibrations) {
  check_calibration_mode(mode);
  std::size_t first = run, last = run;  // inclusive
  if (mode == "off") return {};
  if (mode == "bracket") last = run + 1;
  if (mode == "median") {
    first = run == 0 ? 0 : run - 1;
    last = run + 2;
  }
  std::vector<std::size_t> out;
  for (std::size_t c = first; c <= last && c < calibrations; ++c) out.push_back(c);
  return out;
}

std::size_t calibrations_taken(const std::string& mode, std::size_t runs) {
  check_calibration_mode(mode);
  if (mode == "off") return 0;
  return mode == "before" ? runs : runs + 1;
}

json calibrated_catalog(const json& base, const std::vector<const json*>& readings, CalibrationCombine how,
                        const std::string& where) {
  static constexpr const char* kPerWorkload[] = {"iter_ms", "iter_exec_mean_ms", "iter_exec_median_ms", "iter_median_ms",
                                                 "gpu_util", "switch_ms"};
  // The readings' figures of `key` in the objects `pick` finds in them, combined; null when none has it.
  auto figure = [&](const auto& pick, const char* key) -> json {
    std::vector<double> values;
    for (const json* reading : readings) {
      const json entry = pick(reading);
      if (entry.is_object() && entry.contains(key)) values.push_back(entry.at(key).get<double>());
    }
    if (values.empty()) return nullptr;
    return combine(std::move(values), how);
  };
  const std::string rule = how == CalibrationCombine::kMean ? "the mean" : "the median";
  const std::string what = readings.size() == 1 ? where : rule + " of " + where;
  json out = base;
  for (json& w : out.at("workloads")) {
    const std::string name = w.at("name").get<std::string>();
    auto entry = [&](const json* c) { return workload_entry(c, name); };
    const json base_iter = w.value("iter_ms", json());
    bool calibrated = false;
    for (const char* key : kPerWorkload) {
      json v = figure(entry, key);
      if (!v.is_null()) {
        w[key] = v;
        calibrated = true;
      }
    }
    if (!calibrated) continue;
    // The first iteration keeps the profile's extra cost over the solo iteration (one sample a
    // calibration, too noisy to replace it): it moves with iter_ms.
    if (w.contains("first_iter_ms") && base_iter.is_number()) {
      const double iter = w.at("iter_ms").get<double>();
      w["first_iter_ms"] = std::max(iter, w.at("first_iter_ms").get<double>() + iter - base_iter.get<double>());
    }
    w["source"] = w.value("source", std::string()) + "; solo iteration times, gpu_util and switch_ms calibrated by fidelity: " + what;
  }
  if (json s = figure([](const json* c) { return *c; }, "switch_ms"); !s.is_null()) out["switch_ms"] = s;
  // A pair the base lists and a reading measured again (either order of its two names).
  auto find_pair = [](const json* catalog, const std::string& a, const std::string& b) -> json {
    if (catalog == nullptr || !catalog->contains("pairs")) return nullptr;
    for (const json& p : catalog->at("pairs")) {
      if (p.at("a") == a && p.at("b") == b) return p;
      if (p.at("a") == b && p.at("b") == a) {
        return {{"a", a}, {"b", b}, {"slowdown_a", p.at("slowdown_b")}, {"slowdown_b", p.at("slowdown_a")}};
      }
    }
    return nullptr;
  };
  bool pairs_calibrated = false;
  if (out.contains("pairs")) {
    for (json& p : out.at("pairs")) {
      const std::string a = p.at("a").get<std::string>(), b = p.at("b").get<std::string>();
      for (const char* key : {"slowdown_a", "slowdown_b"}) {
        json v = figure([&](const json* c) { return find_pair(c, a, b); }, key);
        if (!v.is_null()) {
          p[key] = v;
          pairs_calibrated = true;
        }
      }
    }
  }
  // A crowd the base lists (the same workloads lane by lane) that a reading measured again.
  bool crowds_calibrated = false;
  if (out.contains("crowds")) {
    for (json& c : out.at("crowds")) {
      for (std::size_t l = 0; l < c.at("slowdowns").size(); ++l) {
        auto lane = [&](const json* catalog) -> json {
          if (catalog == nullptr || !catalog->contains("crowds")) return nullptr;
          for (const json& m : catalog->at("crowds")) {
            if (m.at("workloads") == c.at("workloads") && l < m.at("slowdowns").size()) {
              return {{"slowdown", m.at("slowdowns").at(l)}};
            }
          }
          return nullptr;
        };
        json v = figure(lane, "slowdown");
        if (!v.is_null()) {
          c["slowdowns"][l] = v;
          crowds_calibrated = true;
        }
      }
    }
  }
  const std::string remeasured = pairs_calibrated && crowds_calibrated ? " and the pairs' and crowds' slowdowns"
                                 : pairs_calibrated                    ? " and the pairs' slowdowns"
                                 : crowds_calibrated                   ? " and the crowds' slowdowns"
                                                                       : "";
  out["notes"] = out.value("notes", std::string()) +
                 " Calibrated by salus-experiment fidelity: iter_ms, iter_exec_mean_ms, iter_exec_median_ms, "
                 "iter_median_ms, gpu_util, switch_ms" + remeasured +
                 " are " + what + "; first_iter_ms keeps the profile's extra over iter_ms; the rest is the base profile.";
  return out;
}

json with_burst_allowance(const json& catalog, const std::vector<const json*>& readings) {
  json out = catalog;
  bool applied = false;
  for (json& w : out.at("workloads")) {
    const std::string name = w.at("name").get<std::string>();
    if (!w.contains("iter_ms")) continue;
    std::vector<double> ratios;
    for (const json* reading : readings) {
      const json m = workload_entry(reading, name);
      if (!m.is_object() || !m.contains("iter_exec_mean_ms") || !m.contains("iter_ms")) continue;
      const double typical = m.at("iter_ms").get<double>();
      if (typical > 0) ratios.push_back(m.at("iter_exec_mean_ms").get<double>() / typical);
    }
    if (ratios.empty()) continue;
    const double f = combine(ratios, CalibrationCombine::kMean);
    w["iter_ms"] = w.at("iter_ms").get<double>() * f;
    if (w.contains("first_iter_ms")) w["first_iter_ms"] = w.at("first_iter_ms").get<double>() * f;
    w["burst_allowance"] = f;
    applied = true;
    char text[200];
    std::snprintf(text, sizeof text,
                  "; iter_ms and first_iter_ms times %.4f, the burst allowance (the mean of %zu calibrations' plain "
                  "mean over typical mean)",
                  f, ratios.size());
    w["source"] = w.value("source", std::string()) + text;
  }
  if (!applied) return out;  // no reading has a plain mean (a sitting from before salus-profile wrote one)
  out["notes"] = out.value("notes", std::string()) +
                 " Burst allowance (salus-experiment fidelity --burst-allowance on): each workload's iter_ms and "
                 "first_iter_ms are multiplied by the mean, over the same calibrations, of their plain mean "
                 "iteration over their typical mean (burst_allowance): a run of a minute meets the host's bursts "
                 "that a typical mean leaves out.";
  return out;
}

json calibrated_catalog(const json& base, const json& before, const json* after) {
  if (after == nullptr) return calibrated_catalog(base, {&before}, CalibrationCombine::kMean, "a salus-profile run just before the run");
  return calibrated_catalog(base, {&before, after}, CalibrationCombine::kMean,
                            "salus-profile runs just before and just after the run");
}

namespace {

/// One real run of a sitting, in the order the runs ran.
struct RealRun {
  int repeat;
  std::string policy;
  json summary;  // salus-run's, its one result at results[0]
};

/// The paper's four policies (the registry holds more; each would add a minute a repeat), each
/// in its own salus-run, so that a calibration can sit between any two runs.
const std::vector<std::string>& fidelity_policies() {
  static const std::vector<std::string> four = {"fifo", "srtf", "pack", "fair"};
  return four;
}

/// A sitting's files, as the sitting writes them and --predict-from reads them: the stem of real
/// run `repeat` under `policy` and of calibration `n` (salus-run's or salus-profile's .json, and
/// its .log).
std::string real_run_stem(const std::string& dir, int repeat, const std::string& policy) {
  return dir + "/fidelity_real_" + std::to_string(repeat) + "_" + policy;
}
std::string calibration_stem(const std::string& dir, std::size_t n) {
  return dir + "/fidelity_calibration_" + std::to_string(n);
}

/// An earlier sitting's files (--predict-from): its real runs, whole repeats in order, and its
/// calibrations; InputError naming what is missing.
void read_sitting(const std::string& dir, std::vector<RealRun>& runs, json& calibrations) {
  namespace fs = std::filesystem;
  for (int r = 1; fs::exists(real_run_stem(dir, r, fidelity_policies().front()) + ".json"); ++r) {
    for (const std::string& policy : fidelity_policies()) {
      const std::string path = real_run_stem(dir, r, policy) + ".json";
      if (!fs::exists(path)) throw core::InputError("--predict-from: " + path + " is missing (repeat " + std::to_string(r) + " is incomplete)");
      runs.push_back({r, policy, read_json(path)});
    }
  }
  if (runs.empty()) {
    const std::string first = fs::path(real_run_stem(dir, 1, fidelity_policies().front())).filename().string();
    throw core::InputError("--predict-from: " + dir + " holds no " + first +
                           ".json (give the --out directory of a salus-experiment fidelity sitting)");
  }
  for (std::size_t n = 0; fs::exists(calibration_stem(dir, n) + ".json"); ++n) {
    calibrations.push_back(read_json(calibration_stem(dir, n) + ".json"));
  }
}

/// --predict-from with --trace: the jobs salus-run would make of the trace (the sitting's catalog,
/// pool and time scale, load_jobs as salus-run and salus-sim call it) must be exactly the jobs of
/// the sitting's runs (ids, workloads, iteration counts and arrivals), or the predictions would be
/// of another experiment than the one measured. InputError naming the first difference.
void check_sitting_trace(const std::string& trace, const std::string& recorded, const std::string& catalog,
                         core::Bytes capacity, double time_scale, const json& run_jobs) {
  const std::vector<core::JobSpec> jobs = load_jobs(trace, catalog, capacity, time_scale).jobs;
  std::map<std::string, const core::JobSpec*> by_id;
  for (const core::JobSpec& j : jobs) by_id[j.id] = &j;
  auto fail = [&](const std::string& what) {
    throw core::InputError("--trace " + trace + ": " + what + ", so it is not the trace the sitting ran (" + recorded +
                           ")");
  };
  auto seconds = [](double s) {
    char text[32];
    std::snprintf(text, sizeof text, "%g s", s);
    return std::string(text);
  };
  if (by_id.size() != run_jobs.size()) {
    fail(std::to_string(by_id.size()) + " jobs against the runs' " + std::to_string(run_jobs.size()));
  }
  for (const json& rj : run_jobs) {
    const std::string id = rj.at("id").get<std::string>();
    const auto it = by_id.find(id);
    if (it == by_id.end()) fail("no job " + id);
    const core::JobSpec& j = *it->second;
    const std::string run_workload = rj.at("workload").get<std::string>();
    const std::int64_t run_iterations = rj.at("iterations").get<std::int64_t>();
    const double arrival_s = static_cast<double>(j.arrival_ns) / 1e9, run_arrival_s = rj.at("arrival_s").get<double>();
    if (j.workload != run_workload || j.iterations != run_iterations || std::abs(arrival_s - run_arrival_s) > 1e-6) {
      fail("job " + id + " is " + j.workload + ", " + std::to_string(j.iterations) + " iterations at " +
           seconds(arrival_s) + ", the runs' " + run_workload + ", " + std::to_string(run_iterations) + " at " +
           seconds(run_arrival_s));
    }
  }
}

/// The simulator's prediction of `policies` (comma-separated) on `trace` with the catalog at
/// `profiles`, in this process: the jobs loaded, the model set (`interference`, else every
/// default) and the summary written to `summary_path` exactly as `salus-sim --trace T --policy P
/// --profiles C --gpu-mem M --time-scale S --interference I --summary-json F` does it (the same
/// load_jobs, apply_model, simulate and writer); returns that summary.
json predict(const std::string& trace, const std::string& policies, const std::string& profiles, core::Bytes capacity,
             double time_scale, const std::string& interference, const std::string& summary_path) {
  SimConfig cfg;
  cfg.capacity = capacity;
  TraceJobs loaded = load_jobs(trace, profiles, capacity, time_scale, make_load_options(TraceOptionValues{}, cfg.seed));
  ModelOptions model;
  model.interference = interference;
  apply_model(model, loaded, cfg);
  const std::vector<std::string> names = parse_policy_list(policies);
  std::vector<PolicyRun> runs;
  for (const std::string& name : names) runs.push_back(run::simulate(loaded.jobs, name, cfg));
  const std::vector<std::string> notes = sim_notes(loaded, names, cfg);
  write_summary_json(summary_path, sim_summary_header(trace, loaded.trace, profiles, cfg, time_scale, notes),
                     loaded.jobs, runs);
  return read_json(summary_path);
}

/// What a sitting runs on and what it has measured: the trace, pool, time scale, device and base
/// catalog (the context's, or with --predict-from an earlier sitting's), its real runs in order and
/// the calibrations between them (calibrated_catalog: solo times, utilisation, switching cost).
struct Sitting {
  std::string device, trace, gpu_mem, catalog;  ///< catalog: "" until profiled on the device
  int repeat = 3;
  double time_scale = 1;
  std::vector<RealRun> runs;
  json calibrations = json::array();
};

/// The sitting --predict-from names: its runs and calibrations, and the trace, time scale, pool and
/// base catalog as its runs recorded them. A sitting copied from another machine names a trace
/// path that may not exist here: --trace says where the trace is, and it must then hold the jobs
/// the runs ran. InputError for whatever is missing.
Sitting replayed_sitting(const ExperimentContext& ctx) {
  namespace fs = std::filesystem;
  if (fs::exists(ctx.out_dir) && fs::exists(ctx.predict_from) && fs::equivalent(ctx.out_dir, ctx.predict_from)) {
    throw core::InputError("--predict-from: --out must be another directory than the sitting's (its catalogs and "
                           "predictions would be overwritten)");
  }
  Sitting s;
  read_sitting(ctx.predict_from, s.runs, s.calibrations);
  const json& first = s.runs.front().summary;
  s.time_scale = first.value("time_scale", 1.0);
  s.device = first.value("device", ctx.device);
  const core::Bytes capacity = first.at("gpu_mem_bytes").get<core::Bytes>();
  s.gpu_mem = std::to_string(capacity) + "B";
  const std::string own = ctx.predict_from + "/fidelity_catalog.json";
  s.catalog = fs::exists(own) ? own : first.at("profiles").get<std::string>();
  if (!fs::exists(s.catalog)) {
    throw core::InputError("--predict-from: the sitting's catalog " + s.catalog + " is not on this machine");
  }
  const std::string recorded = first.at("trace").get<std::string>();
  if (!ctx.trace.empty()) {
    s.trace = ctx.trace;
    check_sitting_trace(s.trace, recorded, s.catalog, capacity, s.time_scale, first.at("results").at(0).at("jobs"));
  } else if (fs::exists(recorded)) {
    s.trace = recorded;
  } else {
    throw core::InputError("--predict-from: the sitting's trace " + recorded +
                           " is not on this machine; give its copy with --trace");
  }
  s.repeat = s.runs.back().repeat;
  const std::size_t needed = calibrations_taken(ctx.calibrate, s.runs.size());
  if (s.calibrations.size() < needed) {
    throw core::InputError("--predict-from: " + ctx.predict_from + " holds " + std::to_string(s.calibrations.size()) +
                           " calibrations (fidelity_calibration_<n>.json) for " + std::to_string(s.runs.size()) +
                           " runs; --calibrate " + ctx.calibrate + " needs " + std::to_string(needed));
  }
  return s;
}

/// A new sitting as the context says (nothing run yet).
Sitting new_sitting(const ExperimentContext& ctx) {
  Sitting s;
  s.device = ctx.device;
  s.trace = ctx.trace.empty() ? ctx.data_dir + "/experiments/fidelity_cpu.csv" : ctx.trace;
  s.gpu_mem = ctx.gpu_mem;
  s.catalog = ctx.profiles_given ? ctx.profiles : std::string();
  s.repeat = ctx.repeat;
  s.time_scale = ctx.time_scale;
  return s;
}

/// "%.17g" of the time scale: what salus-run is given (--time-scale), and the report prints.
std::string scale_text(double time_scale) {
  char text[64];
  std::snprintf(text, sizeof text, "%.17g", time_scale);
  return text;
}

/// The real runs, in order: the trace under each of the four policies, `repeat` times (one
/// salus-run each), a calibration before the first and after each as long as the sitting takes one
/// (calibrations_taken); run k then sits between calibrations k and k + 1. The pairs and crowds
/// (which only PACK's lanes run) are measured again only beside a PACK run.
void run_sitting(const ExperimentContext& ctx, Sitting& s, const std::vector<std::string>& workloads) {
  const std::vector<std::string>& four = fidelity_policies();
  auto calibrate = [&](bool pairs) {
    const std::string stem = calibration_stem(ctx.out_dir, s.calibrations.size());
    profile_on_device(s.device, workloads, s.gpu_mem, stem + ".json", stem + ".log",
                      std::string("--min-seconds 1 --switch on --pairs ") + (pairs ? "on" : "off"));
    s.calibrations.push_back(read_json(stem + ".json"));
  };
  // --time-scale: salus-run and the predictions shorten the trace the same way (arrivals and
  // iteration counts divided by it); the calibrations measure iterations, which it leaves alone.
  const std::string scale_option = s.time_scale == 1 ? std::string() : " --time-scale " + scale_text(s.time_scale);
  const std::size_t total_runs = static_cast<std::size_t>(s.repeat) * four.size();
  if (calibrations_taken(ctx.calibrate, total_runs) > 0) calibrate(four.front() == "pack");
  for (int r = 1; r <= s.repeat; ++r) {
    for (std::size_t i = 0; i < four.size(); ++i) {
      const std::string& policy = four[i];
      const bool next_is_pack = four[(i + 1) % four.size()] == "pack";
      const std::string stem = real_run_stem(ctx.out_dir, r, policy);
      run_sibling("salus-run", "--device " + shell_quote(s.device) + " --trace " + shell_quote(s.trace) +
                                   " --policy " + policy + " --profiles " + shell_quote(s.catalog) + " --gpu-mem " +
                                   shell_quote(s.gpu_mem) + scale_option + " --summary-json " + shell_quote(stem + ".json"),
                  stem + ".log");
      s.runs.push_back({r, policy, read_json(stem + ".json")});
      if (s.calibrations.size() < calibrations_taken(ctx.calibrate, total_runs)) calibrate(policy == "pack" || next_is_pack);
    }
  }
}

/// The catalog run k is predicted with: the base calibrated by the readings the mode takes for it,
/// with the burst allowance when asked.
json run_catalog(const ExperimentContext& ctx, const Sitting& s, const json& base_catalog, std::size_t k) {
  std::vector<const json*> readings;
  for (std::size_t c : calibration_readings(ctx.calibrate, k, s.calibrations.size())) readings.push_back(&s.calibrations[c]);
  json c;
  if (ctx.calibrate == "before") {
    c = calibrated_catalog(base_catalog, *readings.at(0), nullptr);
  } else if (ctx.calibrate == "bracket") {
    c = calibrated_catalog(base_catalog, *readings.at(0), readings.at(1));
  } else {
    c = calibrated_catalog(base_catalog, readings, CalibrationCombine::kMedian,
                           "the salus-profile runs nearest the run (two before it and two after it, fewer at the "
                           "ends: " + std::to_string(readings.size()) + ")");
  }
  return ctx.burst_allowance ? with_burst_allowance(c, readings) : c;
}

/// Every real run against its predictions: per policy the rows calibrated (or base, with
/// --calibrate off) and base, every repeat's rows, per job of the first repeat simulated against
/// measured, and every repeat's real summary (its policies' results).
struct Comparison {
  std::map<std::string, std::vector<FidelityRow>> by_policy, base_by_policy;
  json repeats = json::array(), per_job = json::object();
  /// Per policy, each repeat's per-job JCTs in repeat order (the figure draws every repeat, its
  /// title each repeat's errors: the dots and the title from the same runs).
  json per_job_repeats = json::object();
  std::vector<json> reals;
};

/// Per job of one run: simulated against measured JCT, the jobs done in both.
json per_job_jcts(const json& sim_result, const json& real_result) {
  std::map<std::string, double> sim_jct;
  for (const json& j : sim_result.at("jobs")) {
    if (j.at("status") == "done") sim_jct[j.at("id").get<std::string>()] = j.at("jct_s").get<double>();
  }
  json jobs = json::array();
  for (const json& j : real_result.at("jobs")) {
    const auto it = sim_jct.find(j.at("id").get<std::string>());
    if (j.at("status") != "done" || it == sim_jct.end()) continue;
    jobs.push_back({{"id", j.at("id")}, {"jct_real_s", j.at("jct_s")}, {"jct_sim_s", it->second}});
  }
  return jobs;
}

/// Predicts every real run of the sitting (with the base catalog's prediction `base_sim`, and with
/// a catalog calibrated for the run unless --calibrate off) and compares.
Comparison compare_sitting(const ExperimentContext& ctx, const Sitting& s, const json& base_sim,
                           const json& base_catalog, core::Bytes capacity) {
  Comparison c;
  for (std::size_t k = 0; k < s.runs.size(); ++k) {
    const auto& [r, policy, real] = s.runs[k];
    const std::string rep = std::to_string(r);
    const json& real_result = real.at("results").at(0);
    json sim_result;
    for (const json& res : base_sim.at("results")) {
      if (res.at("policy") == policy) sim_result = res;
    }
    c.base_by_policy[policy].push_back(compare_results(sim_result, real_result));
    if (ctx.calibrate != "off") {
      const std::string catalog_path = ctx.out_dir + "/fidelity_catalog_" + rep + "_" + policy + ".json";
      write_text_file(catalog_path, traces::catalog_text(run_catalog(ctx, s, base_catalog, k)));
      sim_result = predict(s.trace, policy, catalog_path, capacity, s.time_scale, ctx.interference,
                           ctx.out_dir + "/fidelity_sim_" + rep + "_" + policy + ".json")
                       .at("results")
                       .at(0);
    }
    const FidelityRow row = compare_results(sim_result, real_result);
    c.by_policy[policy].push_back(row);
    if (static_cast<int>(c.repeats.size()) < r) {
      c.repeats.push_back(json::array());
      c.reals.push_back(real);
    } else {
      c.reals.back()["results"].push_back(real_result);
    }
    c.repeats.back().push_back(to_json(row));
    json jobs = per_job_jcts(sim_result, real_result);
    if (r == 1) c.per_job[policy] = jobs;  // repeat 1, as files before per_job_repeats have it
    if (!c.per_job_repeats.contains(policy)) c.per_job_repeats[policy] = json::array();
    c.per_job_repeats[policy].push_back(std::move(jobs));  // the figure's
  }
  return c;
}

/// The medians over the repeats per policy (calibrated and base), each with the real executor's
/// own spread over the same repeats.
void policy_medians(const Comparison& c, std::vector<FidelityRow>& medians, std::vector<FidelityRow>& base_medians) {
  for (const std::string& p : fidelity_policies()) {
    medians.push_back(median_row(c.by_policy.at(p)));
    base_medians.push_back(median_row(c.base_by_policy.at(p)));
    std::vector<const json*> results;
    for (const json& real : c.reals) {
      for (const json& res : real.at("results")) {
        if (res.at("policy") == p) results.push_back(&res);
      }
    }
    repeat_spread(medians.back(), results);
    repeat_spread(base_medians.back(), results);
  }
}

/// The machine's speed as the calibrations saw it, for the report: each workload's iter_ms and the
/// switching cost, in the order they were measured.
json calibration_drift(const json& calibrations) {
  json drift = json::array();
  for (const json& c : calibrations) {
    json entry = {{"switch_ms", c.value("switch_ms", 0.0)}};
    for (const json& w : c.at("workloads")) {
      entry[w.at("name").get<std::string>() + "_iter_ms"] = w.at("iter_ms");
      if (w.contains("switch_ms")) entry[w.at("name").get<std::string>() + "_switch_ms"] = w.at("switch_ms");
    }
    drift.push_back(entry);
  }
  return drift;
}

/// The base catalog's solo times against the calibrations' median, one line, "" when none.
std::string base_speed_text(const json& base_speed) {
  std::string speeds;
  for (const auto& [name, v] : base_speed.items()) {
    char part[160];
    std::snprintf(part, sizeof part, "%s%s %.3f against %.3f ms (%+.1f %%)", speeds.empty() ? "" : ", ", name.c_str(),
                  v.at("base_iter_ms").get<double>(), v.at("calibrations_median_iter_ms").get<double>(),
                  100 * (v.at("ratio").get<double>() - 1));
    speeds += part;
  }
  return speeds;
}

}  // namespace

/// salus-experiment fidelity: the trace's workloads profiled on the device (unless a catalog is
/// given), the trace run under the four policies on the real executor `repeat` times, each run
/// predicted by the simulator with the catalog calibrated for it and with the base catalog alone,
/// and the predictions compared with the runs per policy (medians over the repeats).
nlohmann::json run_fidelity(const ExperimentContext& ctx) {
  check_calibration_mode(ctx.calibrate);
  const bool replay = !ctx.predict_from.empty();
  Sitting s = replay ? replayed_sitting(ctx) : new_sitting(ctx);
  if (s.repeat < 1 || s.repeat > 20) throw core::InputError("--repeat: must be from 1 to 20");
  std::filesystem::create_directories(ctx.out_dir);
  const std::vector<std::string> workloads = trace_workloads({s.trace});
  if (s.catalog.empty()) {
    s.catalog = ctx.out_dir + "/fidelity_catalog.json";
    profile_on_device(s.device, workloads, s.gpu_mem, s.catalog, ctx.out_dir + "/fidelity_profile.log");
  }
  const json base_catalog = read_json(s.catalog);
  const core::Bytes capacity = parse_capacity(s.gpu_mem);
  const json base_sim = predict(s.trace, "fifo,srtf,pack,fair", s.catalog, capacity, s.time_scale, ctx.interference,
                                ctx.out_dir + "/fidelity_sim.json");
  if (!replay) run_sitting(ctx, s, workloads);
  const Comparison c = compare_sitting(ctx, s, base_sim, base_catalog, capacity);
  for (std::size_t r = 0; r < c.reals.size(); ++r) {
    write_text_file(ctx.out_dir + "/fidelity_real_" + std::to_string(r + 1) + ".json", c.reals[r].dump(2) + "\n");
  }
  std::vector<FidelityRow> medians, base_medians;
  policy_medians(c, medians, base_medians);
  json policies = json::object(), base_policies = json::object();
  for (std::size_t p = 0; p < medians.size(); ++p) {
    policies[fidelity_policies()[p]] = to_json(medians[p]);
    base_policies[fidelity_policies()[p]] = to_json(base_medians[p]);
  }
  const bool calibrating = ctx.calibrate != "off";
  const std::string cpus = replay ? s.runs.front().summary.value("cpus", std::string("?")) : cpu_list_text(allowed_cpus());
  const std::string scaled = s.time_scale == 1 ? std::string() : " (--time-scale " + scale_text(s.time_scale) + ")";
  const bool bursts = calibrating && ctx.burst_allowance;
  std::printf("\nfidelity on %s (CPUs %s): %s%s, catalog %s, calibration %s%s, interference %s, median of %d repeat(s) "
              "(errors relative to the measured run; real vs real: the executor's repeats against each other)\n%s",
              s.device.c_str(), cpus.c_str(), s.trace.c_str(), scaled.c_str(), s.catalog.c_str(), ctx.calibrate.c_str(),
              bursts ? " with the burst allowance" : "", base_sim.value("interference", std::string("?")).c_str(),
              s.repeat, fidelity_table(medians).c_str());
  const json base_speed = calibrating ? base_against_calibrations(base_catalog, s.calibrations) : json::object();
  if (calibrating) {
    std::printf("\nthe same runs predicted with the base catalog alone (--calibrate off)\n%s",
                fidelity_table(base_medians).c_str());
    if (const std::string speeds = base_speed_text(base_speed); !speeds.empty()) {
      std::printf("the base catalog's iter_ms against the median of the calibrations': %s\n", speeds.c_str());
    }
  }
  return {{"experiment", "fidelity"},
          {"version", 2},
          {"executor", "real"},
          {"device", s.device},
          {"cpus", cpus},
          {"trace", s.trace},
          {"time_scale", s.time_scale},
          {"catalog", s.catalog},
          {"calibrate", ctx.calibrate},
          {"burst_allowance", bursts},
          {"predict_from", replay ? json(ctx.predict_from) : json()},
          {"calibrations", calibration_drift(s.calibrations)},
          {"interference", base_sim.value("interference", "")},
          {"switch_cost_ms", base_sim.value("switch_cost_ms", 0.0)},
          {"repeat", s.repeat},
          {"policies", policies},
          {"uncalibrated", base_policies},
          {"base_against_calibrations", base_speed},
          {"repeats", c.repeats},
          {"per_job", c.per_job},
          {"per_job_repeats", c.per_job_repeats}};
}

}  // namespace salus::experiments
