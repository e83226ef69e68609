#pragma once
/// The synthetic trace of sim_bench and python_bench, generated deterministically: Poisson
/// arrivals at about 85% offered load of one GPU, six workload shapes for memory and speed, and
/// iteration counts log-uniform in [100, 10000] / `divisor` (clipped per job above 2000 / divisor
/// so that the mean stays near 1000 / divisor with the heavy tail kept).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "core/job.h"
#include "core/units.h"

namespace salus::bench {

struct Shape {
  double iter_ms, p_mib, e_mib, util;
};
inline constexpr Shape kShapes[] = {
    {120, 300, 3000, 0.9}, {60, 110, 1500, 0.7}, {250, 820, 9000, 1.0},
    {35, 60, 800, 0.35},   {400, 550, 6000, 1.0}, {15, 25, 200, 0.25},
};

inline std::vector<core::JobSpec> make_trace(int n, std::uint64_t seed, double divisor = 1.0) {
  std::mt19937_64 rng(seed);
  auto uniform = [&] { return static_cast<double>(rng() >> 11) * 0x1.0p-53; };
  std::vector<core::JobSpec> jobs;
  jobs.reserve(static_cast<std::size_t>(n));
  const double lo = 100.0 / divisor, hi = 10000.0 / divisor, knee = 2000.0 / divisor;
  double mean_solo_s = 0;
  for (const Shape& s : kShapes) mean_solo_s += s.iter_ms / 1000.0 * (1000.0 / divisor);
  mean_solo_s /= std::size(kShapes);
  const double mean_gap_s = mean_solo_s / 0.85;
  double t = 0;
  for (int i = 0; i < n; ++i) {
    const Shape& s = kShapes[rng() % std::size(kShapes)];
    core::JobSpec j;
    j.id = "j" + std::to_string(i);
    j.trace_order = i;
    j.arrival_ns = static_cast<core::TimeNs>(t * 1e9);
    const double iters = std::exp(std::log(lo) + uniform() * (std::log(hi) - std::log(lo)));
    j.iterations = std::max<std::int64_t>(1, std::llround(iters < knee ? iters : knee + (iters - knee) * 0.1));
    j.iter_ns = static_cast<core::TimeNs>(s.iter_ms * 1e6);
    j.persistent = static_cast<core::Bytes>(s.p_mib * core::kMiB);
    j.ephemeral = static_cast<core::Bytes>(s.e_mib * core::kMiB);
    j.gpu_util_ppm = static_cast<std::int32_t>(s.util * 1e6);
    jobs.push_back(j);
    t += -std::log(1.0 - uniform()) * mean_gap_s;
  }
  return jobs;
}

}  // namespace salus::bench
