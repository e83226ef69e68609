#pragma once
/// Tiresias' discretised two-dimensional least-attained-service (2D-LAS; Gu et al., NSDI 2019,
/// and its simulator's dlas_sim_jobs): a lease policy (lease_policy.h).
#include <memory>

#include "cluster/lease_policy.h"

namespace salus::cluster {

/// `gpu_time`: attained service is run time x GPUs (Tiresias' dlas-gpu, the 2D of 2D-LAS);
/// otherwise run time alone (its dlas).
std::unique_ptr<LeasePolicy> make_dlas(const LeaseOptions& opts, bool gpu_time);

}  // namespace salus::cluster
