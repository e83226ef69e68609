#pragma once
/// Gavel-style round-based max-min fairness (Narayanan et al., OSDI 2020, and its simulator's
/// max_min_fairness_perf): a lease policy (lease_policy.h). Semantics: docs/cluster.md,
/// "Round-based policies: max-min and fifo-rounds".
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "cluster/lease_policy.h"

namespace salus::cluster {

std::unique_ptr<LeasePolicy> make_max_min(const LeaseOptions& opts);
/// The same rounds under Gavel's FIFO allocation (its fifo_perf): fifo_allocation, and a job
/// with no allocation does not run.
std::unique_ptr<LeasePolicy> make_fifo_rounds(const LeaseOptions& opts);

/// The allocation problem of one reset: jobs j with scale[j] GPUs each, kinds k with gpus[k] GPUs,
/// and each job's throughput on each kind (speed[j * kinds + k], 0: it cannot run there).
struct MaxMinProblem {
  std::vector<std::int64_t> gpus;   ///< per kind
  std::vector<std::int64_t> scale;  ///< per job
  std::vector<double> speed;        ///< per job x kind
};

/// Gavel's max-min fairness with performance (policies/max_min_fairness.py,
/// MaxMinFairnessPolicyWithPerf): x[j * kinds + k], the fraction of time job j holds scale[j]
/// GPUs of kind k, maximises the least normalised throughput
///   min_j  sum_k speed[j][k] x[j][k] * scale[j] / prop[j],   prop[j] = sum_k speed[j][k] gpus[k] / sum gpus,
/// subject to sum_k x[j][k] <= 1 and sum_j scale[j] x[j][k] <= gpus[k]. That maximum often has
/// many solutions; this picks one that does not depend on a solver:
/// - one kind: water-filling (the lexicographic max-min: each job min(scale, L) GPUs' worth of
///   time, L filling the GPUs), which equals Gavel's whenever Gavel's is unique;
/// - several kinds: the LP (GLPK's simplex), then among its optima the one with the largest sum of
///   the normalised throughputs (a second LP).
std::vector<double> max_min_allocation(const MaxMinProblem& p);
/// Gavel's FIFO allocation (policies/fifo.py, FIFOPolicy in 'perf' mode), the jobs in arrival
/// order: each in turn gets all of its time on the kind where it is fastest among those with its
/// GPUs left (ties: the first of `kind_order`, Gavel's by name), until one finds none (the queue
/// stops there); a job that cannot run on that kind gets nothing and the next is looked at.
std::vector<double> fifo_allocation(const MaxMinProblem& p, std::span<const std::size_t> kind_order);
/// The first LP alone (the least normalised throughput at the optimum): for the tests, which hold
/// the closed form to it.
double max_min_level_lp(const MaxMinProblem& p);

}  // namespace salus::cluster
