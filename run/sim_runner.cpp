#include "run/sim_runner.h"

#include <cmath>
#include <random>

#include "cluster/cluster.h"
#include "cluster/placement.h"
#include "cluster/preemptive.h"
#include "policies/registry.h"
#include "sim/interference.h"
#include "sim/sim_executor.h"

namespace salus::run {

core::LaneMode lane_mode_for(const core::Policy& policy, std::optional<core::LaneMode> lanes) {
  if (!lanes || !policy.supports(*lanes)) return policy.default_lane_mode();
  return *lanes;
}

core::LaneMode lane_mode_for(const core::Policy& policy, const SimConfig& cfg) { return lane_mode_for(policy, cfg.lanes); }

std::unique_ptr<sim::InterferenceModel> interference_model(const SimConfig& cfg) {
  return sim::make_interference(cfg.interference, &cfg.pairs, &cfg.share_weights, cfg.share_exponent,
                                &cfg.crowd_factors, &cfg.capacities);
}

std::vector<core::TimeNs> actual_iteration_times(const std::vector<core::JobSpec>& jobs, double noise,
                                                 std::uint64_t seed) {
  std::vector<core::TimeNs> out;
  out.reserve(jobs.size());
  // mt19937_64 is specified bit for bit by the standard; the distributions are not, so the
  // uniform variate is made by hand to keep runs identical across standard libraries.
  std::mt19937_64 rng(seed);
  for (const core::JobSpec& s : jobs) {
    const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53;
    const double factor = 1.0 + noise * (2.0 * u - 1.0);
    out.push_back(std::max<core::TimeNs>(1, std::llround(static_cast<double>(s.iter_ns) * factor)));
  }
  return out;
}

namespace {

/// A preemptive cluster policy's run (cluster/preemptive.h): one GPU when no cluster is given.
PolicyRun simulate_preemptive(const std::vector<core::JobSpec>& jobs, const std::string& policy_name, const SimConfig& cfg) {
  cluster::PreemptiveOptions po;
  po.cluster = cfg.cluster ? *cfg.cluster : cluster::ClusterSpec::uniform(1, cfg.capacity);
  po.lease = cfg.lease;
  po.restart_cost_ns = cfg.restart_cost_ns;
  po.record_timeline = cfg.record_timeline;
  po.record_runs = cfg.record_timeline;  // for --out's <policy>_job_runs.csv
  po.progress = cfg.progress;
  po.progress_every = cfg.progress_every;
  PolicyRun run;
  run.lane_mode = core::LaneMode::kExclusive;
  run.placement = "consolidated";
  std::unique_ptr<sim::InterferenceModel> model;
  if (!cfg.gpu_sharing.empty()) {
    // Lanes beneath: each GPU's loop as salus-sim runs one GPU under the per-GPU policy.
    po.gpu_policy = cfg.gpu_sharing;
    po.sched = cfg;
    po.sched.progress = nullptr;
    po.sched.lane_mode = lane_mode_for(*policies::make_policy(cfg.gpu_sharing), cfg);
    if (cfg.paging) throw core::InputError("--paging on and --gpu-sharing: a preempted job leaves its GPU, it is not paged");
    model = interference_model(cfg);
    po.model = model.get();
    po.switch_cost_ns = cfg.switch_cost_ns;
    if (cfg.profile_noise > 0) po.actual_iter_ns = actual_iteration_times(jobs, cfg.profile_noise, cfg.seed);
    run.lane_mode = po.sched.lane_mode;
    po.placement = cluster::placement_for(cfg.gpu_sharing, cfg.placement);
    run.placement = po.placement;
    run.gpu_sharing = cfg.gpu_sharing;
  }
  cluster::ClusterOutcome c = cluster::run_preemptive(jobs, policy_name, po);
  run.policy = policy_name;
  run.cluster = true;
  run.preemptive = true;
  run.outcome = std::move(c.outcome);
  run.job_gpus = std::move(c.job_gpus);
  run.gpu_timelines = std::move(c.gpu_timelines);
  run.gpus_busy = std::move(c.busy);
  run.job_runs = std::move(c.job_runs);
  run.runs = c.runs;
  run.preemptions = c.preemptions;
  run.migrations = c.migrations;
  run.promotions = c.promotions;
  run.metrics = core::compute_metrics(jobs, run.outcome.jobs);
  return run;
}

}  // namespace

PolicyRun simulate(const std::vector<core::JobSpec>& jobs, const std::string& policy_name, const SimConfig& cfg) {
  if (cluster::is_lease_policy(policy_name)) return simulate_preemptive(jobs, policy_name, cfg);
  const auto policy = policies::make_policy(policy_name);
  const auto model = interference_model(cfg);
  core::SchedulerOptions opts = cfg;  // the loop's options, whole
  opts.lane_mode = lane_mode_for(*policy, cfg);
  std::vector<core::TimeNs> actual;
  if (cfg.profile_noise > 0) actual = actual_iteration_times(jobs, cfg.profile_noise, cfg.seed);
  PolicyRun run;
  run.policy = policy_name;
  run.lane_mode = opts.lane_mode;
  if (cfg.cluster) {
    cluster::ClusterOptions co;
    co.cluster = *cfg.cluster;
    co.placement = cluster::placement_for(policy_name, cfg.placement);
    co.queue = cfg.queue;
    co.gangs = cfg.gangs;
    run.placement = co.placement;
    co.sched = opts;
    co.model = model.get();
    co.switch_cost_ns = cfg.switch_cost_ns;
    co.paging_bytes_per_s = cfg.paging ? cfg.paging_bytes_per_s : 0;
    co.actual_iter_ns = std::move(actual);
    co.progress = cfg.progress;
    co.progress_every = cfg.progress_every;
    co.sched.progress = nullptr;  // the cluster's loop reports, not each GPU's steps
    cluster::ClusterOutcome c = cluster::run_cluster(jobs, policy_name, co);
    run.outcome = std::move(c.outcome);
    run.cluster = true;
    run.job_gpus = std::move(c.job_gpus);
    run.gpu_timelines = std::move(c.gpu_timelines);
    run.gpus_busy = std::move(c.busy);
    run.metrics = core::compute_metrics(jobs, run.outcome.jobs);
    return run;
  }
  sim::SimExecutor exec(jobs, *model, std::move(actual), cfg.switch_cost_ns, cfg.paging ? cfg.paging_bytes_per_s : 0);
  run.outcome = core::run_schedule(jobs, *policy, exec, opts);
  run.metrics = core::compute_metrics(jobs, run.outcome.jobs);
  return run;
}

std::vector<std::string> SimRunner::prepare(std::vector<core::JobSpec>& jobs) {
  (void)jobs;  // the simulator runs any job the trace and catalog describe
  return {};
}

PolicyRun SimRunner::run(const std::vector<core::JobSpec>& jobs, const std::string& policy, bool record_timeline) {
  SimConfig cfg = cfg_;
  cfg.record_timeline = record_timeline;
  return simulate(jobs, policy, cfg);
}

nlohmann::json SimRunner::config() const {
  return {{"executor", "sim"},
          {"device", nullptr},
          {"math", nullptr},
          {"gpu_mem_bytes", cfg_.capacity},
          {"switch_cost_ms", static_cast<double>(cfg_.switch_cost_ns) / 1e6},
          {"interference", cfg_.interference}};
}

}  // namespace salus::run
