#include "cluster/lease_policy.h"

#include <cstdio>

#include "cluster/dlas.h"

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

}  // namespace salus::cluster
