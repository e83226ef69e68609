#include "cluster/lease_policy.h"

#include <algorithm>
#include <cstdio>
#include <limits>

#include "cluster/dlas.h"
#include "cluster/max_min.h"

namespace salus::cluster {
namespace {

std::unique_ptr<LeasePolicy> make_dlas_gpu(const LeaseOptions& o) { return make_dlas(o, true); }
std::unique_ptr<LeasePolicy> make_dlas_time(const LeaseOptions& o) { return make_dlas(o, false); }

constexpr LeaseRegistry::Entry kLeasePolicies[] = {
    {"dlas-gpu",
     "preemptive cluster policy: Tiresias' discretised 2D-LAS, queues by attained GPU-time (run time x GPUs), "
     "thresholds --dlas-thresholds, starvation knob --dlas-starvation; each GPU runs one job at a time",
     &make_dlas_gpu},
    {"dlas",
     "preemptive cluster policy: Tiresias' discretised LAS, queues by attained run time (GPUs not counted); "
     "otherwise as dlas-gpu",
     &make_dlas_time},
    {"max-min",
     "preemptive cluster policy: Gavel's round-based max-min fairness (max_min_fairness_perf): an allocation "
     "of time per job and GPU kind from the jobs' throughputs (an LP with GPU kinds), jobs leased per round "
     "(--round-s) and placed again at its end; --reset-s between allocations",
     &make_max_min},
    {"fifo-rounds",
     "preemptive cluster policy: Gavel's FIFO in its rounds (fifo_perf): jobs in arrival order each given all of "
     "its time on its fastest kind with GPUs left, the queue stopping at the first that finds none; rounds and "
     "resets as max-min",
     &make_fifo_rounds},
};

std::string number_text(double x) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%g", x);
  return buf;
}
std::string seconds_text(core::TimeNs ns) { return number_text(static_cast<double>(ns) / 1e9); }

}  // namespace

const LeaseRegistry& lease_registry() {
  static constexpr LeaseRegistry kRegistry("cluster policy", kLeasePolicies);
  return kRegistry;
}

bool is_lease_policy(std::string_view name) { return lease_registry().find(name) != nullptr; }

std::unique_ptr<LeasePolicy> make_lease_policy(std::string_view name, const LeaseOptions& opts) {
  return lease_registry().at(name).factory(opts);
}

std::vector<std::string> lease_notes(std::string_view name, const LeaseOptions& opts) {
  if (name == "fifo-rounds") {
    return {"fifo-rounds: Gavel's FIFO allocation in rounds of " + seconds_text(opts.round_ns) +
            " s, computed again when jobs came or went, at most every " + seconds_text(opts.reset_ns) +
            " s (a job that arrives in between waits for it, even beside free GPUs); a job runs on its fastest kind "
            "with GPUs left, the queue stopping at the first job that finds none"};
  }
  if (name == "max-min") {
    return {"max-min: rounds of " + seconds_text(opts.round_ns) + " s (a GPU freed in a round idles to its end; a job that "
            "arrives waits for the next); the allocation is computed again when jobs came or went, at most every " +
            seconds_text(opts.reset_ns) + " s (a job that arrives in between has no share until then); every job "
            "weighs 1; one kind: water-filling, several: GLPK's LP, then the largest sum among its optima"};
  }
  if (name != "dlas-gpu" && name != "dlas") return {};
  std::string queues;
  for (const core::TimeNs t : opts.dlas_thresholds_ns) queues += (queues.empty() ? "" : ", ") + seconds_text(t) + " s";
  const char* service = name == "dlas-gpu" ? "GPU-time (run time x GPUs)" : "run time";
  std::string note = std::string(name) + ": " + std::to_string(opts.dlas_thresholds_ns.size() + 1) +
                     " queues by attained " + service + ", thresholds " + queues + "; starvation knob " +
                     (opts.dlas_starvation > 0 ? number_text(opts.dlas_starvation) : std::string("off")) +
                     "; demotions checked " +
                     (opts.dlas_checks == DlasChecks::kExact
                          ? "at the instant a threshold is reached"
                          : "where Tiresias' simulator checks them ((threshold - run time) / GPUs, floored to the second)");
  return {note};
}

LeaseKinds::LeaseKinds(const ClusterSpec& cluster)
    : cluster_(&cluster), by_memory_(std::max<std::size_t>(1, cluster.kinds.size())) {
  for (const GpuSpec& g : cluster.gpus) {
    if (cluster.kinds.empty()) {
      ++by_memory_[0][g.capacity];
    } else if (g.kind >= 0) {
      ++by_memory_[static_cast<std::size_t>(g.kind)][g.capacity];
    }
  }
}

std::size_t LeaseKinds::able(const core::JobSpec& spec, std::int32_t k) const {
  if (speed(spec, k) <= 0) return 0;
  const std::map<core::Bytes, std::size_t>& gpus = by_memory_[static_cast<std::size_t>(k)];
  std::size_t n = 0;
  for (auto it = gpus.lower_bound(spec.persistent + spec.ephemeral); it != gpus.end(); ++it) n += it->second;
  return n;
}

std::int64_t LeaseKinds::speed(const core::JobSpec& spec, std::int32_t k) const {
  if (cluster_->kinds.empty()) return kSpeedOne;
  const GpuKind& kind = cluster_->kinds[static_cast<std::size_t>(k)];
  const std::string& allowed = spec.gpu_kinds();
  if (!allowed.empty()) {
    bool named = false;
    for (const std::string& item : core::split_list(allowed, '|')) named = named || item == kind.name;
    if (!named) return 0;
  }
  const std::map<core::Bytes, std::size_t>& gpus = by_memory_[static_cast<std::size_t>(k)];
  if (gpus.empty() || gpus.rbegin()->first < spec.persistent + spec.ephemeral) return 0;
  for (const core::KindSpeed& ks : spec.kind_speeds()) {
    if (ks.kind == kind.name) return ks.speed_ppm;
  }
  return kind.speed_ppm;
}

core::TimeNs lease_time(core::TimeNs work, std::int64_t speed_ppm) {
  if (speed_ppm == kSpeedOne) return work;
  __extension__ using Wide = __int128;  // work * 1e6 may pass 2^63
  const Wide t = (static_cast<Wide>(work) * kSpeedOne + speed_ppm - 1) / speed_ppm;
  return static_cast<core::TimeNs>(std::min<Wide>(t, std::numeric_limits<core::TimeNs>::max() / 2));
}

core::TimeNs lease_work(core::TimeNs elapsed, std::int64_t speed_ppm) {
  if (speed_ppm == kSpeedOne) return elapsed;
  __extension__ using Wide = __int128;  // work * 1e6 may pass 2^63
  return static_cast<core::TimeNs>(static_cast<Wide>(elapsed) * speed_ppm / kSpeedOne);
}

}  // namespace salus::cluster
