// salus-profile: measures workloads on a device through the memory pool and writes a catalog that
// salus-sim --profiles reads, with provenance "measured on <device>".
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "run/cli.h"
#include "run/cpus.h"
#include "run/output.h"
#include "gpu_backend/device.h"
#include "gpu_backend/model.h"
#include "real/options.h"
#include "real/profiler.h"
#include "run/options.h"
#include "sim/interference.h"
#include "traces/catalog.h"

namespace po = boost::program_options;
using namespace salus;

namespace {

double round_to(double v, double unit) { return std::round(v / unit) * unit; }

/// Switches measured for `m`: 200, fewer for a slow workload, so that its switching run takes
/// about twice --min-seconds (and the two solo runs around it as long), never fewer than 20.
int switch_count(const gpu::WorkloadMeasurement& m, const gpu::ProfileOptions& o) {
  const double per_s = 1e9 / static_cast<double>(std::max<core::TimeNs>(1, m.iter_ns));
  return static_cast<int>(std::clamp(2.0 * o.min_seconds * per_s, 20.0, 200.0));
}

/// A list of lane counts from `lowest` to 64, each once, in increasing order ("3,5,7"), or "off"
/// (none); anything else is `option`'s error, with `example` as a list that would do.
std::vector<int> parse_lane_counts(const std::string& text, const std::string& option, int lowest,
                                   const std::string& example) {
  if (text == "off") return {};
  const std::string give = option + ": give a list such as " + example;
  std::vector<int> sizes;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) {
    int k = 0;
    std::size_t used = 0;
    try {
      k = std::stoi(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size() || k < lowest || k > 64) {
      throw core::InputError(option + ": '" + item + "' is not a number of lanes from " + std::to_string(lowest) +
                             " to 64 (give a list such as " + example + ")");
    }
    if (!sizes.empty() && k <= sizes.back()) throw core::InputError(option + ": give the lane counts once each, increasing");
    sizes.push_back(k);
  }
  if (sizes.empty() || text.back() == ',') throw core::InputError(give);
  return sizes;
}

/// --crowds: "off", or comma-separated lane counts from 3 to 64, each once, in increasing order.
std::vector<int> parse_crowd_sizes(const std::string& text) {
  return parse_lane_counts(text, "--crowds", 3, "3,5,7, or off");
}

/// --sweeps: "off", "auto" (kAutoSweeps on a GPU, off on the CPU device, whose model is `crowds`),
/// or comma-separated lane counts from 2 to 64, each once, in increasing order. 3, 5, 8 and 12:
/// the fidelity trace runs up to 9-13 lanes at once, and in a 16 GiB pool 5 copies of resnet50_25
/// or vgg11_25 fit, 8 of overfeat_25 (README: what the sweeps cost on an H100).
constexpr const char* kAutoSweeps = "3,5,8,12";
std::vector<int> parse_sweep_sizes(std::string text, const std::string& device) {
  if (text == "auto") text = device == "cpu" ? "off" : kAutoSweeps;
  return parse_lane_counts(text, "--sweeps", 2, "3,6,12, auto or off");
}

/// --crowd-rounds: a number from 1 to 100, or auto: 1 on a GPU, whose iteration times hold still
/// (eight alexnet_25 jobs one after another on the H100 averaged 5.916-5.942 ms, run2), 3 on the
/// CPU device, whose speed drifts within a crowd's few seconds (profiler.h profile_crowds).
int parse_crowd_rounds(const std::string& text, const std::string& device) {
  if (text == "auto") return device == "cpu" ? gpu::kCrowdRounds : 1;
  int n = 0;
  std::size_t used = 0;
  try {
    n = std::stoi(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || n < 1 || n > 100) {
    throw core::InputError("--crowd-rounds: must be a number from 1 to 100, or auto, got '" + text + "'");
  }
  return n;
}

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
  const std::string& out = v.out;
  const std::string& list = v.workloads;
  const std::string& pairs_text = r.pairs;
  const std::string& switch_text = r.switch_cost;
  const std::string& crowds_text = r.crowds;
  const std::string& sweeps_text = r.sweeps;
  const std::string& rounds_text = r.crowd_rounds;
  const std::string& math = r.math;
  gpu::ProfileOptions opts = r.profile;
  run::check_output_paths({{"--out", out, run::OutputKind::kFile}});
  // Before any thread: on the cpu device one CPU unless --cpus says otherwise (README, --cpus).
  if (const std::string note = run::pin_for_device("salus-profile", v.cpus, device_name, nullptr); !note.empty()) {
    std::printf("note: %s\n", note.c_str());
  }
  const bool pairs = run::parse_on_off("--pairs", pairs_text);
  const bool measure_switch = run::parse_on_off("--switch", switch_text);
  std::vector<int> crowd_sizes = parse_crowd_sizes(crowds_text);
  if (!pairs && !crowd_sizes.empty()) {
    // The crowd factors are relative to the pair table: without it they would say nothing.
    if (!vm["crowds"].defaulted()) throw core::InputError("--crowds: needs --pairs on (a crowd is read against the pairs)");
    crowd_sizes.clear();
  }
  std::vector<int> sweep_sizes = parse_sweep_sizes(sweeps_text, device_name);
  if (!pairs && !sweep_sizes.empty()) {
    // The `capacity` model weighs the lanes by their pairs: sweeps alone would not make it.
    if (!vm["sweeps"].defaulted()) throw core::InputError("--sweeps: needs --pairs on (the capacity model weighs lanes by the pairs)");
    sweep_sizes.clear();
  }
  opts.crowd_rounds = parse_crowd_rounds(rounds_text, device_name);
  opts.capacity = run::parse_capacity(v.gpu_mem);
  opts.warmup = real::parse_profile_warmup(r.warmup);
  if (opts.iterations < 1) throw core::InputError("--iterations: must be at least 1");
  if (!(opts.min_seconds >= 0 && opts.min_seconds <= 600)) throw core::InputError("--min-seconds: must be in [0, 600]");
  std::vector<std::string> workloads;
  std::stringstream ss(list);
  for (std::string w; std::getline(ss, w, ',');) {
    if (!gpu::parse_real_workload(w)) {
      throw core::InputError("--workloads: no real model for workload '" + w + "' (valid: " + gpu::real_workload_help() + ")");
    }
    workloads.push_back(w);
  }
  if (workloads.empty()) throw core::InputError("--workloads: empty list");
  const auto device = gpu::make_device(device_name, gpu::parse_math_mode(math));
  const auto solo = gpu::profile_workloads(*device, workloads, opts);
  const auto pair_results = pairs ? gpu::profile_pairs(*device, solo, opts) : std::vector<gpu::PairMeasurement>{};
  const auto crowd_results = gpu::profile_crowds(*device, solo, opts, crowd_sizes);
  const auto sweep_results = gpu::profile_sweeps(*device, solo, opts, sweep_sizes);

  // The executor's switching cost, each workload's own: two copies of it taking turns in one lane
  // (what its iteration after another job's pays depends on how much of the caches it wants back:
  // on the CPU device mlp_64 about 0.24 ms, lenet_32 about 0.03 ms). The catalog's own switch_ms
  // is the workload's that switches most often per second, for jobs without an entry of theirs.
  const gpu::WorkloadMeasurement* fastest = nullptr;
  std::map<std::string, core::TimeNs> switch_by_workload;
  for (const auto& m : solo) {
    if (!m.error.empty()) continue;
    if (fastest == nullptr || m.iter_ns < fastest->iter_ns) fastest = &m;
    if (measure_switch) switch_by_workload[m.name] = gpu::profile_switch(*device, m, opts, switch_count(m, opts));
  }
  std::optional<core::TimeNs> switch_ns;
  if (measure_switch && fastest != nullptr) switch_ns = switch_by_workload.at(fastest->name);

  const std::string provenance = "measured on " + device->name() + " (math " + gpu::to_string(device->math()) +
                                 ", CPUs " + run::cpu_list_text(run::allowed_cpus()) +
                                 ") by salus-profile (pool " +
                                 core::format_size(opts.capacity) + ", executor mean over as many iterations as the "
                                 "profiler's loop took, at least " +
                                 run::count_text(static_cast<std::size_t>(opts.iterations), "iteration") + " and " +
                                 run::seconds_text(static_cast<core::TimeNs>(opts.min_seconds * 1e9)) +
                                 " s after " + std::to_string(opts.warmup) + " warm-up)";
  nlohmann::json cat;
  cat["format"] = "salus-catalog/1";
  cat["gpu"] = device->name();  // the math mode is in every entry's source (the catalog has no key for it)
  cat["notes"] = "P = the model's persistent state in the pool; E = the peak lane memory of one iteration; "
                 "iter_ms = the typical mean of the solo iterations after the first (the median of the means of up to 9 "
                 "consecutive blocks; iter_exec_mean_ms their plain mean, iter_exec_median_ms their median) and first_iter_ms the first, both measured through the real "
                 "executor (one job alone, as salus-run runs it); iter_median_ms = the median of the profiler's own "
                 "loop; gpu_util from the slowdown s of two copies in two lanes, u = clamp(s / 2, 0.05, 1); pairs: "
                 "the typical mean iteration time together (over a window of at least the profile's minimum seconds) "
                 "over the solo typical mean in the same loop and pool (the mean of one just before and one just "
                 "after the pair; a copy beside itself is u's measurement, relative to its solo time just before and "
                 "after too); switch_ms (each workload's, and the catalog's: that of the workload with the shortest "
                 "iter_ms): the real executor's switching cost in one lane under FAIR, two copies taking turns (the "
                 "mean gap between two jobs' iterations plus the median of their iterations over the median of its "
                 "iterations alone through the executor just before and after); crowds: k lanes at once, the workloads in "
                 "turn, in three rounds of at least k / 6 times the minimum seconds, each bracketed by every workload "
                 "alone (half the minimum seconds); a lane's slowdown is the median over the rounds of its typical mean "
                 "over its workload's solo typical means just before and after the round; sweeps: k copies of one "
                 "workload at once, in rounds of at least the minimum seconds over the rounds, each bracketed by the "
                 "workload alone; a point is the median over the rounds of the copies' mean slowdown";
  if (switch_ns) cat["switch_ms"] = round_to(static_cast<double>(*switch_ns) / 1e6, 0.0001);
  nlohmann::json ws = nlohmann::json::array();
  std::string not_measured;
  std::printf("%-16s %12s %12s %12s %12s %10s %12s\n", "workload", "P (MiB)", "E (MiB)", "iter (ms)", "first (ms)",
              "gpu_util", "switch (ms)");
  for (const auto& m : solo) {
    if (!m.error.empty()) {
      std::printf("%-16s not measured: %s\n", m.name.c_str(), m.error.c_str());
      not_measured += (not_measured.empty() ? "" : "; ") + m.name + " " + m.error;
      continue;
    }
    nlohmann::json w;
    w["name"] = m.name;
    w["persistent_mib"] = round_to(core::to_mib(m.persistent), 0.01);
    w["ephemeral_mib"] = round_to(core::to_mib(m.ephemeral_peak), 0.01);
    // Exact figures: the MiB ones are rounded for reading, and a P rounded down would refuse the
    // job that needs it (salus-run checks the model's real persistent state against P).
    w["persistent_bytes"] = m.persistent;
    w["ephemeral_bytes"] = m.ephemeral_peak;
    w["iter_ms"] = round_to(static_cast<double>(m.iter_ns) / 1e6, 0.0001);
    w["iter_exec_mean_ms"] = round_to(static_cast<double>(m.iter_exec_mean_ns) / 1e6, 0.0001);
    w["iter_exec_median_ms"] = round_to(static_cast<double>(m.iter_exec_median_ns) / 1e6, 0.0001);
    w["iter_median_ms"] = round_to(static_cast<double>(m.iter_median_ns) / 1e6, 0.0001);
    w["first_iter_ms"] = round_to(static_cast<double>(m.first_iter_ns) / 1e6, 0.0001);
    w["gpu_util"] = round_to(m.gpu_util, 0.001);
    char sw_text[32] = "-";
    if (const auto sw = switch_by_workload.find(m.name); sw != switch_by_workload.end()) {
      w["switch_ms"] = round_to(static_cast<double>(sw->second) / 1e6, 0.0001);
      std::snprintf(sw_text, sizeof sw_text, "%.4f", static_cast<double>(sw->second) / 1e6);
    }
    w["source"] = provenance;
    ws.push_back(w);
    std::printf("%-16s %12.2f %12.2f %12.3f %12.3f %10.3f %12s\n", m.name.c_str(), core::to_mib(m.persistent),
                core::to_mib(m.ephemeral_peak), static_cast<double>(m.iter_ns) / 1e6,
                static_cast<double>(m.first_iter_ns) / 1e6, m.gpu_util, sw_text);
  }
  if (ws.empty()) throw core::InputError("--workloads: none of them fits a pool of " + core::format_size(opts.capacity));
  if (!not_measured.empty()) {
    cat["notes"] = cat["notes"].get<std::string>() + ". Not measured (they do not fit the pool): " + not_measured;
  }
  cat["workloads"] = ws;
  nlohmann::json ps = nlohmann::json::array();
  for (const auto& p : pair_results) {
    ps.push_back({{"a", p.a}, {"b", p.b}, {"slowdown_a", round_to(p.slowdown_a, 0.001)},
                  {"slowdown_b", round_to(p.slowdown_b, 0.001)}});
    std::printf("pair %s + %s: slowdown %.3f, %.3f\n", p.a.c_str(), p.b.c_str(), p.slowdown_a, p.slowdown_b);
  }
  // A workload beside a copy of itself is not written as a pair, though the catalog may carry one:
  // pinned to one CPU two copies read 1.9-2.3x (u holds 2), and the `pairs` model's sum over a
  // crowd of lanes with those figures put PACK's makespan 5-15 % over three measured runs, where
  // u's 2 put it -0.3 to 12.5 % (the 12.5 in a run whose calibrations read a slow phase).
  for (const auto& m : solo) {
    if (m.error.empty() && m.self_slowdown > 0) std::printf("%s beside itself: slowdown %.3f\n", m.name.c_str(), m.self_slowdown);
  }
  cat["pairs"] = ps;
  nlohmann::json cs = nlohmann::json::array();
  for (const auto& c : crowd_results) {
    nlohmann::json slowdowns = nlohmann::json::array();
    std::string text;
    double sum = 0;
    for (double s : c.slowdowns) {
      slowdowns.push_back(round_to(s, 0.001));
      sum += s;
      char one[32];
      std::snprintf(one, sizeof one, "%s%.3f", text.empty() ? "" : ", ", s);
      text += one;
    }
    cs.push_back({{"workloads", c.workloads}, {"slowdowns", slowdowns}});
    std::printf("crowd of %zu lanes: slowdowns %s (mean %.3f)\n", c.workloads.size(), text.c_str(),
                sum / static_cast<double>(c.slowdowns.size()));
  }
  if (!cs.empty()) cat["crowds"] = cs;
  nlohmann::json sws = nlohmann::json::array();
  for (const auto& sw : sweep_results) {
    const auto m = std::find_if(solo.begin(), solo.end(), [&](const gpu::WorkloadMeasurement& x) { return x.name == sw.workload; });
    std::string text;
    nlohmann::json slowdowns = nlohmann::json::array();
    for (std::size_t p = 0; p < sw.lanes.size(); ++p) {
      slowdowns.push_back(round_to(sw.slowdowns[p], 0.001));
      // C(k) = k u / s(k), what the `capacity` model will read (u rounded as the catalog has it).
      const double c = sw.lanes[p] * round_to(m->gpu_util, 0.001) / round_to(sw.slowdowns[p], 0.001);
      char one[64];
      std::snprintf(one, sizeof one, "%s%d lanes %.3f (C %.3f)", text.empty() ? "" : ", ", sw.lanes[p], sw.slowdowns[p], c);
      text += one;
    }
    if (sw.did_not_fit > 0) {
      text += (text.empty() ? "" : ", ") + run::count_text(static_cast<std::size_t>(sw.did_not_fit), "lane") +
              (sw.did_not_fit == 1 ? " does" : " do") + " not fit the pool";
    }
    std::printf("sweep %s: %s\n", sw.workload.c_str(), text.c_str());
    if (!sw.lanes.empty()) sws.push_back({{"workload", sw.workload}, {"lanes", sw.lanes}, {"slowdowns", slowdowns}});
  }
  if (!sws.empty()) cat["sweeps"] = sws;
  // The interference model that fits this device (salus-sim's `auto`). On the CPU device lanes
  // time-slice the cores, so each lane beside adds the excess it causes in a pair (`pairs`): six
  // PACK runs of the fidelity trace pinned to one CPU (two sittings), re-simulated with their
  // calibrated catalogs, put the makespan -2.3, -3.1, -6.1, 12.5, -0.3 and 1.7 % off with `pairs`
  // against -8.2, -8.1, -8.6, 8.5, -5.3 and -3.6 % with `shares`. On a GPU a crowd of lanes
  // overlaps its kernels, which `shares` follows more closely (README, the GPU section).
  // With crowds measured, the CPU's model is `crowds`: pairs, times what a crowd of 3 or more
  // lanes measured over what the pairs predict for it (README, sitting 9 and the crowd finding).
  // One workload has no pair: no model is named (`pairs` would refuse the empty table).
  // On a GPU with sweeps, `capacity`: shares' weights, the total scaled by the sweeps' C (README).
  if (!ps.empty()) {
    cat["interference"] = device_name == "cpu" ? (cs.empty() ? "pairs" : "crowds") : (sws.empty() ? "shares" : "capacity");
  }
  if (switch_ns) {
    std::printf("switching cost (%s, FAIR, one lane; the catalog's default): %.4f ms\n", fastest->name.c_str(),
                static_cast<double>(*switch_ns) / 1e6);
  }
  run::write_text_file(out, traces::catalog_text(cat));
  if (!cs.empty()) {
    // The factors the `crowds` model reads from this catalog, as salus-sim will.
    const traces::Catalog written = traces::Catalog::load(out);
    const run::CatalogInterference models = run::catalog_interference(written);
    for (const auto& [k, ppm] : models.crowd_factors) {
      std::printf("crowd factor, %zu lanes: %.3f (measured over what the pairs predict)\n", k, static_cast<double>(ppm) / 1e6);
    }
    // With sweeps too: how the `capacity` model, made from the pairs and sweeps alone, predicts
    // the mixed crowds it never saw (a check of its law, not an input).
    if (!sws.empty() && !models.share_weights.empty()) {
      const sim::CapacityInterference capacity(models.share_weights, models.capacities);
      for (const traces::CrowdSlowdown& c : written.crowds()) {
        std::vector<core::JobSpec> jobs(c.workloads.size());
        std::vector<sim::RunningIteration> running;
        for (std::size_t l = 0; l < jobs.size(); ++l) {
          jobs[l].workload = c.workloads[l];
          jobs[l].gpu_util_ppm = written.find(c.workloads[l])->gpu_util_ppm;
        }
        for (const core::JobSpec& j : jobs) running.push_back({&j});
        std::vector<std::int64_t> predicted(jobs.size());
        capacity.slowdowns(running, predicted);
        std::string text;
        double measured_sum = 0, predicted_sum = 0;
        for (std::size_t l = 0; l < jobs.size(); ++l) {
          const double p = static_cast<double>(predicted[l]) / 1e6;
          measured_sum += c.slowdowns[l];
          predicted_sum += p;
          char one[48];
          std::snprintf(one, sizeof one, "%s%.2f/%.2f", text.empty() ? "" : ", ", c.slowdowns[l], p);
          text += one;
        }
        std::printf("crowd of %zu lanes, measured/capacity model: %s (sums %.3f)\n", jobs.size(), text.c_str(),
                    measured_sum / predicted_sum);
      }
    }
  }
  std::printf("wrote %s\n", out.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return salus::run::guarded_main("salus-profile", body, argc, argv); }
