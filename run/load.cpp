#include "run/load.h"

#include <algorithm>
#include <functional>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "cluster/lease_policy.h"
#include "cluster/placement.h"
#include "core/errors.h"
#include "core/registry.h"
#include "core/units.h"
#include "policies/registry.h"
#include "run/cpus.h"
#include "run/output.h"
#include "traces/csv.h"

namespace salus::run {

std::vector<std::string> lane_mode_notes(const std::vector<std::string>& names, std::optional<core::LaneMode> lanes) {
  std::vector<std::string> notes;
  if (!lanes) return notes;
  for (const std::string& name : names) {
    if (cluster::is_lease_policy(name)) continue;  // whole GPUs, one job each: no lanes
    const auto policy = policies::make_policy(name);
    if (!policy->supports(*lanes)) {
      notes.push_back(name + " runs in " + core::to_string(policy->default_lane_mode()) + " mode; --lanes " +
                      core::to_string(*lanes) + " does not apply to it");
    }
  }
  return notes;
}

std::string auto_interference(const std::optional<std::string>& catalog_model, const sim::ShareWeights& share_weights) {
  if (catalog_model) return *catalog_model;
  return share_weights.empty() ? "profiled" : "shares";
}

CatalogInterference catalog_interference(const traces::Catalog& catalog) {
  CatalogInterference m;
  std::map<std::string, std::int32_t> util_ppm;
  for (const traces::PairSlowdown& p : catalog.pairs()) {
    m.pairs[{p.a, p.b}] = std::llround(p.slowdown_a * 1e6);
    m.pairs[{p.b, p.a}] = std::llround(p.slowdown_b * 1e6);
    util_ppm[p.a] = catalog.find(p.a)->gpu_util_ppm;
    util_ppm[p.b] = catalog.find(p.b)->gpu_util_ppm;
  }
  m.share_weights = sim::fit_share_weights(m.pairs, util_ppm);
  std::vector<sim::Crowd> crowds;
  for (const traces::CrowdSlowdown& c : catalog.crowds()) {
    crowds.push_back({c.workloads, c.slowdowns});
    for (const std::string& w : c.workloads) util_ppm[w] = catalog.find(w)->gpu_util_ppm;
  }
  m.crowd_factors = sim::fit_crowd_factors(m.pairs, crowds, util_ppm);
  std::vector<sim::Sweep> sweeps;
  for (const traces::SweepSlowdown& s : catalog.sweeps()) {
    sweeps.push_back({s.workload, s.lanes, s.slowdowns});
    util_ppm[s.workload] = catalog.find(s.workload)->gpu_util_ppm;
  }
  m.capacities = sim::fit_capacities(sweeps, util_ppm);
  return m;
}

namespace {

/// load_jobs with each whole-GPU job's memory a share of capacity_of(job); `gpus` as load_jobs's.
TraceJobs load_jobs_for(const std::string& trace_path, const std::string& profiles,
                        const std::function<core::Bytes(const core::JobSpec&)>& capacity_of, double time_scale,
                        const traces::LoadOptions& load, int gpus) {
  // Paths go into the summary JSON, which must be UTF-8: refused here, before any run.
  for (const auto& [option, path] : {std::pair<const char*, const std::string&>{"--trace", trace_path}, {"--profiles", profiles}}) {
    if (traces::first_invalid_utf8(path) != std::string::npos) throw core::InputError(std::string(option) + ": the path is not UTF-8");
  }
  const traces::Catalog catalog = traces::Catalog::load(profiles);
  TraceJobs t{traces::load_trace(trace_path, catalog, load), {}, {}, {}, catalog.switch_ns(), catalog.interference(), {}, {},
              catalog_cpus_note(catalog)};
  if (t.interference && !sim::interference_registry().find(*t.interference)) {
    throw core::InputError(core::at(profiles, 1, "\"interference\": " + sim::interference_registry().unknown(*t.interference)));
  }
  CatalogInterference models = catalog_interference(catalog);
  t.pairs = std::move(models.pairs);
  t.share_weights = std::move(models.share_weights);
  t.crowd_factors = std::move(models.crowd_factors);
  t.capacities = std::move(models.capacities);
  // The jobs move out of the trace (a copy of a 200k-job trace is 30 MB); its path, format and
  // notes stay.
  t.jobs = traces::jobs_for_capacity(std::move(t.trace), capacity_of);
  if (gpus == 1) {
    if (const std::int64_t n = traces::fold_onto_one_gpu(t.jobs); n > 0) {
      t.trace.notes.push_back(std::to_string(n) + (n == 1 ? " job" : " jobs") +
                              " with more than one GPU replayed on one GPU, iteration time x GPUs (the same GPU-time)");
    }
  }
  if (time_scale != 1) t.jobs = traces::scale_time(std::move(t.jobs), time_scale);
  return t;
}

std::string joined(const std::set<std::string>& s, const std::string& sep = ", ") {
  std::string t;
  for (const std::string& x : s) t += (t.empty() ? "" : sep) + x;
  return t;
}

// A job's own speed of 0 on some kinds (Gavel's throughput 0: it cannot run there) as gpu_kinds
// without them: the kinds it named (all the cluster's where it named none) less `barred`; where
// none is left, a text naming no kind, so the cluster rejects it at arrival with that reason.
void bar_kinds(core::JobSpec& job, const std::set<std::string>& barred, const cluster::ClusterSpec& cluster) {
  std::set<std::string> named;
  if (job.gpu_kinds().empty()) {
    for (const cluster::GpuKind& k : cluster.kinds) named.insert(k.name);
  } else {
    for (const std::string& k : core::split_list(job.gpu_kinds(), '|')) named.insert(k);
  }
  std::set<std::string> allowed;
  for (const std::string& k : named) {
    if (!barred.count(k)) allowed.insert(k);
  }
  job.set_gpu_kinds(allowed.empty() ? "none (throughput 0 on " + joined(barred, "/") + ")" : joined(allowed, "|"));
}

// The jobs' own speeds (JobSpec::kind_speeds: Gavel's worker types) onto the cluster's GPU kinds:
// a worker type matches the kind of its name, case aside ("v100" and "V100"), and takes that
// kind's name; the others are dropped. A speed of 0 keeps the job off that kind (bar_kinds).
// Says which kinds the jobs' speeds reach, and how many jobs each kind bars.
void match_kind_speeds(std::vector<core::JobSpec>& jobs, const cluster::ClusterSpec& cluster,
                       std::vector<std::string>& notes) {
  std::map<std::string, std::string> kind_of;  // lower-case name -> the cluster's name
  for (const cluster::GpuKind& k : cluster.kinds) kind_of.emplace(core::lower(k.name), k.name);
  std::set<std::string> matched, unmatched;
  std::map<std::string, std::int64_t> barred_jobs;  // kind -> jobs of speed 0 there
  std::int64_t with = 0;
  for (core::JobSpec& job : jobs) {
    if (job.kind_speeds().empty()) continue;
    ++with;
    std::vector<core::KindSpeed> kept;
    std::set<std::string> barred;
    for (const core::KindSpeed& ks : job.kind_speeds()) {
      const auto it = kind_of.find(core::lower(ks.kind));
      if (it == kind_of.end()) {
        unmatched.insert(ks.kind);
        continue;
      }
      matched.insert(it->second);
      if (ks.speed_ppm > 0) {
        kept.push_back({it->second, ks.speed_ppm});
      } else {
        barred.insert(it->second);
        ++barred_jobs[it->second];
      }
    }
    job.set_kind_speeds(std::move(kept));
    if (!barred.empty()) bar_kinds(job, barred, cluster);
  }
  // A cluster of unnamed GPUs reads no kind speeds: nothing to say (its output stays as it was).
  if (with == 0 || cluster.kinds.empty()) return;
  if (matched.empty()) {
    std::string kinds;
    for (const cluster::GpuKind& k : cluster.kinds) kinds += (kinds.empty() ? "" : ", ") + k.name;
    notes.push_back("the trace gives jobs' own speeds on " + joined(unmatched) +
                    "; the cluster has no GPU kind of those names (kinds: " + kinds + "): every job runs at its kind's speed");
    return;
  }
  std::string rest;
  for (const cluster::GpuKind& k : cluster.kinds) {
    if (!matched.count(k.name)) rest += (rest.empty() ? "" : ", ") + k.name;
  }
  notes.push_back("per-workload speeds: on GPUs of kind " + joined(matched) + " a job runs at its own speed from the trace (" +
                  count_text(static_cast<std::size_t>(with), "job") +
                  "; Gavel: its steps per second on that worker type over those its iteration time came from), not the kind's" +
                  (rest.empty() ? std::string() : "; on " + rest + " at the kind's speed"));
  if (barred_jobs.empty()) return;
  std::string bars;
  for (const auto& [kind, n] : barred_jobs) bars += (bars.empty() ? "" : ", ") + count_text(static_cast<std::size_t>(n), "job") + " on " + kind;
  notes.push_back("throughput 0 (Gavel: the job cannot run on that worker type): " + bars + "; kept off those GPUs");
}

}  // namespace

TraceJobs load_jobs(const std::string& trace_path, const std::string& profiles, core::Bytes capacity, double time_scale,
                    const traces::LoadOptions& load, int gpus) {
  return load_jobs_for(trace_path, profiles, [capacity](const core::JobSpec&) { return capacity; }, time_scale, load, gpus);
}

TraceJobs load_jobs(const std::string& trace_path, const std::string& profiles, const cluster::ClusterSpec& cluster,
                    double time_scale, const traces::LoadOptions& load) {
  bool mixed = false;
  for (const cluster::GpuSpec& g : cluster.gpus) mixed = mixed || g.capacity != cluster.gpus.front().capacity;
  bool shares = false;
  // capacity_for_kinds scans the GPUs: once per distinct gpu_kinds text, not once per job.
  std::map<std::string, core::Bytes, std::less<>> by_kinds;
  TraceJobs t = load_jobs_for(
      trace_path, profiles,
      [&](const core::JobSpec& job) {
        shares = true;
        auto it = by_kinds.find(job.gpu_kinds());
        if (it == by_kinds.end()) it = by_kinds.emplace(job.gpu_kinds(), cluster.capacity_for_kinds(job.gpu_kinds())).first;
        return it->second;
      },
      time_scale, load, static_cast<int>(cluster.gpus.size()));
  match_kind_speeds(t.jobs, cluster, t.trace.notes);
  if (mixed && shares) {
    t.trace.notes.push_back("GPUs of mixed memory: a job's share of a GPU (or whole GPU) is sized on the largest GPU of "
                            "the kinds it names (gpu_spec), else on the largest GPU; it runs only where that fits");
  }
  return t;
}

void apply_model(const ModelOptions& m, TraceJobs& t, SimConfig& cfg) {
  cfg.lanes = m.lanes;
  cfg.lane_shrink = m.lane_shrink;
  cfg.share_exponent = m.share_exponent;
  cfg.placement = m.placement;
  cfg.queue = m.queue;
  cfg.gangs = m.gangs;
  cfg.lease = m.lease;
  cfg.restart_cost_ns = m.restart_cost_ns;
  cfg.gpu_sharing = m.gpu_sharing;
  cfg.pairs = std::move(t.pairs);
  cfg.share_weights = std::move(t.share_weights);
  cfg.crowd_factors = std::move(t.crowd_factors);
  cfg.capacities = std::move(t.capacities);
  cfg.switch_cost_ns = m.switch_cost_ns.value_or(t.switch_ns.value_or(core::kNsPerMs));
  if (m.switch_cost_ns) {
    for (core::JobSpec& j : t.jobs) j.switch_ns = -1;  // the cost given is every job's
  }
  cfg.interference = m.interference == "auto" ? auto_interference(t.interference, cfg.share_weights) : m.interference;
  // "pairs" or "shares" without a pair table, "crowds" without crowds: exit 2
  interference_model(cfg);
}

std::vector<std::string> model_notes(const std::vector<std::string>& policies, const SimConfig& cfg) {
  std::vector<std::string> per_gpu = policies;  // the lanes beneath a cluster policy run in a mode too
  const bool lease = std::any_of(policies.begin(), policies.end(), [](const std::string& p) { return cluster::is_lease_policy(p); });
  if (lease && !cfg.gpu_sharing.empty() && std::find(per_gpu.begin(), per_gpu.end(), cfg.gpu_sharing) == per_gpu.end()) {
    per_gpu.push_back(cfg.gpu_sharing);
  }
  std::vector<std::string> notes = lane_mode_notes(per_gpu, cfg.lanes);
  if (cfg.paging) {
    char text[256];
    std::snprintf(text, sizeof text,
                  "paging: a host link of %g GB/s assumed (--paging-gbps): each page-out or page-in of P bytes "
                  "delays its lane's next run by P / bandwidth; page-outs are counted after the table",
                  static_cast<double>(cfg.paging_bytes_per_s) / 1e9);
    notes.push_back(text);
  }
  if (cfg.interference == "shares" && cfg.share_exponent != 1.0) {
    char text[96];
    std::snprintf(text, sizeof text, "shares: slowdowns raised to the power %g (--share-exponent)", cfg.share_exponent);
    notes.push_back(text);
  }
  // What the model assumes where the catalog says nothing (`capacity` without sweeps, ...).
  for (std::string& n : interference_model(cfg)->notes()) {
    notes.push_back(std::move(n));
  }
  return notes;
}

std::vector<std::string> sim_notes(const TraceJobs& loaded, const std::vector<std::string>& policies,
                                   const SimConfig& cfg) {
  std::vector<std::string> notes = loaded.trace.notes;
  if (cfg.cluster) notes.insert(notes.end(), cfg.cluster->notes.begin(), cfg.cluster->notes.end());
  if (!loaded.cpus_note.empty()) notes.push_back(loaded.cpus_note);
  const bool per_gpu = std::any_of(policies.begin(), policies.end(), [](const std::string& p) { return !cluster::is_lease_policy(p); });
  if (cfg.cluster && per_gpu) {
    // The gang model's one assumption no trace states: holding (docs/cluster.md).
    const auto gangs = std::count_if(loaded.jobs.begin(), loaded.jobs.end(), [](const core::JobSpec& j) { return j.gpus > 1; });
    if (gangs > 0 && cfg.gangs == cluster::GangMode::kHold) {
      notes.push_back(std::to_string(gangs) + (gangs == 1 ? " job runs" : " jobs run") +
                      " on several GPUs in lock-step: a replica chosen on its GPU holds its lane, idle, until every "
                      "replica's GPU has chosen it (--gangs hold; holding: docs/cluster.md, \"Words the code and "
                      "cluster/README.md use\"); the busy GPU-time after the table counts it");
    } else if (gangs > 0) {
      notes.push_back(std::to_string(gangs) + (gangs == 1 ? " job runs" : " jobs run") +
                      " on several GPUs, each on GPUs with no other job and kept to itself while it runs (--gangs "
                      "exclusive): its replicas start together and nothing is held");
    }
  }
  for (const std::string& n : model_notes(policies, cfg)) notes.push_back(n);
  for (std::string& n : lease_run_notes(policies, cfg)) notes.push_back(std::move(n));
  return notes;
}

std::vector<std::string> lease_run_notes(const std::vector<std::string>& policies, const SimConfig& cfg) {
  std::vector<std::string> notes;
  bool lease = false;
  for (const std::string& p : policies) {
    if (!cluster::is_lease_policy(p)) continue;
    for (std::string& n : cluster::lease_notes(p, cfg.lease)) notes.push_back(std::move(n));
    lease = true;
  }
  if (lease && !cfg.gpu_sharing.empty()) {
    std::string names;
    for (const std::string& p : policies) {
      if (cluster::is_lease_policy(p)) names += (names.empty() ? "" : ", ") + p;
    }
    char text[768];
    std::snprintf(text, sizeof text,
                  "cluster policies (%s) with lanes beneath (--gpu-sharing %s): each GPU runs, in Salus lanes under "
                  "%s, every leased job its memory admits beside the jobs ahead of it in the policy's order; a "
                  "preempted job leaves at its next iteration boundary keeping its iterations and restarts anywhere "
                  "after %g ms (--restart-cost-ms); gang jobs run on GPUs of their own; attained service and leases "
                  "are wall time held; rotations run iteration by iteration (docs/cluster.md, \"Lanes beneath the "
                  "cluster policies\")",
                  names.c_str(), cfg.gpu_sharing.c_str(), cfg.gpu_sharing.c_str(),
                  static_cast<double>(cfg.restart_cost_ns) / 1e6);
    notes.push_back(text);
  } else if (lease) {
    char text[512];
    std::snprintf(text, sizeof text,
                  "cluster policies (%s): whole GPUs, one job each, a gang's GPUs started and stopped together; a "
                  "preempted job keeps its progress to the nanosecond and restarts anywhere after %g ms "
                  "(--restart-cost-ms), not counted as its service; every run is in <policy>_job_runs.csv "
                  "(docs/cluster.md, \"Preemptive cluster policies\")",
                  cluster::lease_registry().names_joined().c_str(), static_cast<double>(cfg.restart_cost_ns) / 1e6);
    notes.push_back(text);
  }
  return notes;
}

}  // namespace salus::run
