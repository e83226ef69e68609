#include "sim/interference.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <tuple>

#include "core/errors.h"

namespace salus::sim {

void NoInterference::slowdowns(std::span<const RunningIteration> running, std::span<std::int64_t> out) const {
  std::fill(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(running.size()), kSolo);
}

void UtilisationInterference::slowdowns(std::span<const RunningIteration> running, std::span<std::int64_t> out) const {
  std::int64_t total = 0;
  for (const RunningIteration& r : running) total += r.spec->gpu_util_ppm;
  const std::int64_t s = std::max<std::int64_t>(kSolo, total);
  std::fill(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(running.size()), s);
}

std::int64_t PairInterference::pair_slowdown(const core::JobSpec& a, const core::JobSpec& b) const {
  if (!a.workload.empty() && !b.workload.empty()) {
    if (auto it = pairs_.find({a.workload, b.workload}); it != pairs_.end()) return std::max(kSolo, it->second);
  }
  return std::max<std::int64_t>(kSolo, std::int64_t{a.gpu_util_ppm} + b.gpu_util_ppm);
}

void PairInterference::slowdowns(std::span<const RunningIteration> running, std::span<std::int64_t> out) const {
  std::int64_t capacity = 0;  // the profiled model's figure: sum of u over the running set
  for (const RunningIteration& r : running) capacity += r.spec->gpu_util_ppm;
  const std::int64_t c = crowd_factor(running.size());  // kSolo for `pairs` and for two lanes
  for (std::size_t i = 0; i < running.size(); ++i) {
    std::int64_t s = kSolo;
    for (std::size_t j = 0; j < running.size(); ++j) {
      if (j != i) s += pair_slowdown(*running[i].spec, *running[j].spec) - kSolo;
    }
    out[i] = std::max(s, capacity);
    if (c != kSolo) {
      // In 128-bit: a slowdown of 1000 lanes (1e9 ppm) times c (1e6 ppm) does not fit 64 bits.
      const auto scaled = static_cast<core::Int128>(out[i]) * c / kSolo;
      out[i] = static_cast<std::int64_t>(std::clamp<core::Int128>(scaled, kSolo, INT64_MAX));
    }
  }
}

std::int64_t PairInterference::crowd_factor(std::size_t lanes) const {
  if (lanes <= 2 || crowds_.empty()) return kSolo;
  const auto above = crowds_.lower_bound(lanes);
  if (above == crowds_.end()) return std::prev(above)->second;  // beyond the largest measured crowd
  if (above->first == lanes) return above->second;
  // Between the crowd below (or a pair, c(2) = 1) and the one above, linear in k.
  std::size_t k0 = 2;
  std::int64_t c0 = kSolo;
  if (above != crowds_.begin()) std::tie(k0, c0) = *std::prev(above);
  const auto span = static_cast<std::int64_t>(above->first - k0), at = static_cast<std::int64_t>(lanes - k0);
  return c0 + (above->second - c0) * at / span;
}

CrowdFactors fit_crowd_factors(const PairSlowdowns& pairs, const std::vector<Crowd>& crowds,
                               const std::map<std::string, std::int32_t>& util_ppm) {
  const PairInterference model(pairs);
  std::map<std::size_t, std::vector<double>> ratios;
  for (const Crowd& crowd : crowds) {
    const std::size_t k = crowd.workloads.size();
    if (k < 3 || crowd.slowdowns.size() != k) continue;
    std::vector<core::JobSpec> jobs(k);
    std::vector<RunningIteration> running(k);
    for (std::size_t l = 0; l < k; ++l) {
      jobs[l].workload = crowd.workloads[l];
      const auto u = util_ppm.find(crowd.workloads[l]);
      jobs[l].gpu_util_ppm = u == util_ppm.end() ? static_cast<std::int32_t>(kSolo) : u->second;
      running[l].spec = &jobs[l];
    }
    std::vector<std::int64_t> predicted(k);
    model.slowdowns(running, predicted);
    double measured_sum = 0, predicted_sum = 0;
    for (std::size_t l = 0; l < k; ++l) {
      measured_sum += crowd.slowdowns[l];
      predicted_sum += static_cast<double>(predicted[l]) / static_cast<double>(kSolo);
    }
    ratios[k].push_back(measured_sum / predicted_sum);
  }
  CrowdFactors out;
  for (const auto& [k, r] : ratios) {
    double sum = 0;
    for (double v : r) sum += v;
    out[k] = std::llround(sum / static_cast<double>(r.size()) * static_cast<double>(kSolo));
  }
  return out;
}

double ShareInterference::weight(const core::JobSpec& job) const {
  const auto it = job.workload.empty() ? weights_.end() : weights_.find(job.workload);
  return it == weights_.end() ? 1.0 : it->second;
}

void ShareInterference::slowdowns(std::span<const RunningIteration> running, std::span<std::int64_t> out) const {
  double demand = 0;  // sum of w_k u_k, u in ppm
  for (const RunningIteration& r : running) demand += weight(*r.spec) * static_cast<double>(r.spec->gpu_util_ppm);
  for (std::size_t i = 0; i < running.size(); ++i) {
    const double slowdown = demand / weight(*running[i].spec) / static_cast<double>(kSolo);
    const double scaled = exponent_ == 1.0 ? slowdown : std::pow(slowdown, exponent_);
    out[i] = std::max<std::int64_t>(kSolo, std::llround(scaled * static_cast<double>(kSolo)));
  }
}

std::vector<std::string> ShareInterference::notes() const {
  if (!weights_.empty()) return {};
  return {"shares: " + std::string(kUnweighted)};
}

ShareWeights fit_share_weights(const PairSlowdowns& pairs, const std::map<std::string, std::int32_t>& util_ppm) {
  struct Row {
    std::string i, j;
    double y;
  };
  std::vector<Row> rows;
  std::map<std::string, std::vector<std::size_t>> touching;  // workload -> rows it is in
  for (const auto& [key, ppm] : pairs) {
    const auto ui = util_ppm.find(key.first), uj = util_ppm.find(key.second);
    if (ui == util_ppm.end() || uj == util_ppm.end() || key.first == key.second) continue;
    // A pair measured at solo speed (s <= 1) only bounds the weights (the model's max(1, ...) hides
    // the rest): it is left out, as is one that u alone explains (v <= 0).
    const double s = static_cast<double>(ppm) / 1e6;
    if (!(s > 1)) continue;
    const double v = (s - static_cast<double>(ui->second) / 1e6) / (static_cast<double>(uj->second) / 1e6);
    if (!(v > 0)) continue;
    rows.push_back({key.first, key.second, std::log(v)});
    touching[key.first].push_back(rows.size() - 1);
    touching[key.second].push_back(rows.size() - 1);
  }
  std::map<std::string, double> x;  // log weights
  for (const auto& [name, idx] : touching) x[name] = 0;
  // Gauss-Seidel on the normal equations (a graph Laplacian): each log weight becomes the mean
  // of what its rows ask of it given the others.
  for (int sweep = 0; sweep < 2000; ++sweep) {
    for (auto& [name, value] : x) {
      double sum = 0;
      for (std::size_t r : touching[name]) {
        const Row& row = rows[r];
        sum += row.j == name ? x[row.i] + row.y : x[row.j] - row.y;
      }
      value = sum / static_cast<double>(touching[name].size());
    }
  }
  // Normalise each connected group to a geometric mean of 1 (log weights summing to 0).
  std::map<std::string, int> group;
  int groups = 0;
  for (const auto& [name, value] : x) {
    if (group.count(name)) continue;
    std::vector<std::string> stack{name};
    group[name] = groups;
    while (!stack.empty()) {
      const std::string n = stack.back();
      stack.pop_back();
      for (std::size_t r : touching[n]) {
        for (const std::string* m : {&rows[r].i, &rows[r].j}) {
          if (!group.count(*m)) {
            group[*m] = groups;
            stack.push_back(*m);
          }
        }
      }
    }
    ++groups;
  }
  std::vector<double> sum(static_cast<std::size_t>(groups), 0.0);
  std::vector<int> count(static_cast<std::size_t>(groups), 0);
  for (const auto& [name, value] : x) {
    sum[static_cast<std::size_t>(group[name])] += value;
    ++count[static_cast<std::size_t>(group[name])];
  }
  ShareWeights w;
  for (const auto& [name, value] : x) {
    const auto g = static_cast<std::size_t>(group[name]);
    w[name] = std::exp(value - sum[g] / count[g]);
  }
  return w;
}

Capacities fit_capacities(const std::vector<Sweep>& sweeps, const std::map<std::string, std::int32_t>& util_ppm) {
  Capacities out;
  for (const Sweep& sweep : sweeps) {
    const auto u = util_ppm.find(sweep.workload);
    if (u == util_ppm.end() || sweep.lanes.size() != sweep.slowdowns.size()) continue;
    for (std::size_t p = 0; p < sweep.lanes.size(); ++p) {
      const std::size_t k = sweep.lanes[p];
      const double s = sweep.slowdowns[p];
      if (k < 2 || !(s > 0)) continue;
      out[sweep.workload][k] = static_cast<double>(k) * static_cast<double>(u->second) / static_cast<double>(kSolo) / s;
    }
  }
  return out;
}

CapacityInterference::CapacityInterference(const ShareWeights& weights, const Capacities& capacities) {
  for (const auto& [name, w] : weights) entries_[name].weight = w;
  std::size_t widest = 0;
  for (const auto& [name, points] : capacities) {
    if (!points.empty()) widest = std::max(widest, points.rbegin()->first);
  }
  std::string unswept, cut;
  for (const auto& [name, points] : capacities) {
    if (points.empty()) continue;
    // Dense from k = 0 to the largest measured k: 1 below 2 (a lane alone, and two copies being
    // u's definition unless measured), linear in k between the points.
    std::vector<double>& c = entries_[name].c;
    const std::size_t last = points.rbegin()->first;
    c.assign(last + 1, 1.0);
    std::size_t k0 = 2;
    double c0 = 1.0;
    for (const auto& [k1, c1] : points) {
      for (std::size_t k = k0; k <= k1; ++k) {
        c[k] = k1 == k0 ? c1 : c0 + (c1 - c0) * static_cast<double>(k - k0) / static_cast<double>(k1 - k0);
      }
      k0 = k1;
      c0 = c1;
    }
    if (last < widest) cut += (cut.empty() ? "" : ", ") + name + " " + std::to_string(last);
  }
  for (const auto& [name, e] : entries_) {
    if (e.c.empty()) unswept += (unswept.empty() ? "" : ", ") + name;
  }
  if (weights.empty()) notes_.push_back("capacity: " + std::string(kUnweighted));
  if (capacities.empty()) {
    notes_.push_back("capacity: the catalog has no sweeps (salus-profile --sweeps measures them): C = 1 for every "
                     "workload, which is the `shares` model");
  } else {
    if (!unswept.empty()) notes_.push_back("capacity: no sweep of " + unswept + ": C = 1 for them (as their pairs say)");
    if (!cut.empty()) {
      notes_.push_back("capacity: beyond its largest sweep a workload keeps that sweep's C (salus-profile stops a "
                       "sweep where the copies no longer fit its pool; the widest reached " + std::to_string(widest) +
                       " lanes): " + cut + " lanes");
    }
  }
}

const CapacityInterference::Entry& CapacityInterference::entry(const core::JobSpec& job) const {
  if (job.workload.empty()) return unknown_;
  const auto it = entries_.find(job.workload);
  return it == entries_.end() ? unknown_ : it->second;
}

double CapacityInterference::capacity(std::string_view workload, std::size_t lanes) const {
  const auto it = entries_.find(workload);
  if (it == entries_.end() || it->second.c.empty()) return 1.0;
  const std::vector<double>& c = it->second.c;
  return c[std::min(lanes, c.size() - 1)];
}

void CapacityInterference::slowdowns(std::span<const RunningIteration> running, std::span<std::int64_t> out) const {
  const std::size_t k = running.size();
  double demand = 0, capacity = 0;  // sum of w u (u in ppm), and of w u C
  for (const RunningIteration& r : running) {
    const Entry& e = entry(*r.spec);
    const double wu = e.weight * static_cast<double>(r.spec->gpu_util_ppm);
    demand += wu;
    capacity += wu * (e.c.empty() ? 1.0 : e.c[std::min(k, e.c.size() - 1)]);
  }
  // C(S) = capacity / demand, so demand / C(S) = demand^2 / capacity.
  const double scale = capacity > 0 ? demand * demand / capacity : demand;
  for (std::size_t i = 0; i < k; ++i) {
    // Capped below 2^62 ppm: llround of a double past int64's range is undefined (weights a
    // million times apart and thousands of lanes could get there; a lane that slow never finishes).
    const double slowdown = std::min(scale / entry(*running[i].spec).weight, 0x1p62);
    out[i] = std::max<std::int64_t>(kSolo, std::llround(slowdown));
  }
}

namespace {

std::unique_ptr<InterferenceModel> make_none(const InterferenceInputs&) { return std::make_unique<NoInterference>(); }
std::unique_ptr<InterferenceModel> make_profiled(const InterferenceInputs&) {
  return std::make_unique<UtilisationInterference>();
}
std::unique_ptr<InterferenceModel> make_pairs(const InterferenceInputs& in) {
  if (in.pairs == nullptr || in.pairs->empty()) {
    throw core::InputError("interference model 'pairs' needs a catalog with a \"pairs\" table (salus-profile "
                           "measures one)");
  }
  return std::make_unique<PairInterference>(*in.pairs);
}
std::unique_ptr<InterferenceModel> make_crowds(const InterferenceInputs& in) {
  if (in.pairs == nullptr || in.pairs->empty() || in.crowds == nullptr || in.crowds->empty()) {
    throw core::InputError("interference model 'crowds' needs a catalog with a \"pairs\" table and \"crowds\" "
                           "(salus-profile --crowds measures them)");
  }
  return std::make_unique<PairInterference>(*in.pairs, *in.crowds);
}
std::unique_ptr<InterferenceModel> make_shares(const InterferenceInputs& in) {
  static const ShareWeights kNoWeights;
  if ((in.pairs == nullptr || in.pairs->empty()) && (in.weights == nullptr || in.weights->empty())) {
    throw core::InputError("interference model 'shares' needs a catalog with a \"pairs\" table (salus-profile "
                           "measures one)");
  }
  return std::make_unique<ShareInterference>(in.weights != nullptr ? *in.weights : kNoWeights, in.share_exponent);
}
std::unique_ptr<InterferenceModel> make_capacity(const InterferenceInputs& in) {
  static const ShareWeights kNoWeights;
  if ((in.pairs == nullptr || in.pairs->empty()) && (in.weights == nullptr || in.weights->empty())) {
    throw core::InputError("interference model 'capacity' needs a catalog with a \"pairs\" table (salus-profile "
                           "measures one) and, for C, \"sweeps\" (salus-profile --sweeps)");
  }
  static const Capacities kNone;
  return std::make_unique<CapacityInterference>(in.weights != nullptr ? *in.weights : kNoWeights,
                                                in.capacities != nullptr ? *in.capacities : kNone);
}

constexpr InterferenceRegistry::Entry kModels[] = {
    {"none", "the ideal GPU: every iteration takes its solo time", &make_none},
    {"profiled", "each workload's utilisation u: a set S runs at 1 / max(1, sum of u) of solo speed", &make_profiled},
    {"pairs", "the catalog's measured pair slowdowns, each other lane adding its pair's excess (u where a pair is "
              "missing)", &make_pairs},
    {"crowds", "pairs, times the catalog's measured crowd factor for 3 or more lanes (linear in the number of "
               "lanes between measured crowds)", &make_crowds},
    {"shares", "GPU time shared by weight x u, weights fitted to the catalog's pairs (--share-exponent)", &make_shares},
    {"capacity", "shares' weights, the total divided by the concurrency capacity C(k) of the catalog's homogeneous "
                 "sweeps (k copies of one workload)", &make_capacity},
};

}  // namespace

const InterferenceRegistry& interference_registry() {
  static constexpr InterferenceRegistry kRegistry("interference model", kModels);
  return kRegistry;
}

std::unique_ptr<InterferenceModel> make_interference(std::string_view name, const PairSlowdowns* pairs,
                                                     const ShareWeights* weights, double share_exponent,
                                                     const CrowdFactors* crowds, const Capacities* capacities) {
  if (!(share_exponent > 0 && share_exponent <= 2)) {
    throw core::InputError("share exponent must be in (0, 2], got " + std::to_string(share_exponent));
  }
  return interference_registry().at(name).factory(InterferenceInputs{pairs, weights, share_exponent, crowds, capacities});
}

std::vector<std::string> interference_names() { return interference_registry().names(); }

}  // namespace salus::sim
