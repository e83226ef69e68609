#include "experiments/gpus_search.h"

#include <iterator>

namespace salus::experiments {

FewestGpus fewest_gpus(std::int64_t lo, std::int64_t hi, const MeetsBound& meets) {
  // A linear scan, not a bisection: the curve need not be monotone in N (more GPUs change where
  // jobs are placed and in what order they are admitted, which can raise the average), and a
  // bisection can then step over a small N that meets the bound or settle where a larger N
  // misses it. Each N is one run of milliseconds to seconds.
  FewestGpus out;
  for (std::int64_t n = lo; n <= hi; ++n) {
    out.evaluated.push_back(n);
    if (meets(n)) {
      out.gpus = n;
      break;
    }
  }
  return out;
}

std::vector<Rise> rises(const std::map<std::int64_t, double>& curve) {
  std::vector<Rise> out;
  for (auto it = curve.begin(); it != curve.end() && std::next(it) != curve.end(); ++it) {
    const auto next = std::next(it);
    if (next->second > it->second) {
      out.push_back(Rise{.from = it->first, .to = next->first, .from_value = it->second, .to_value = next->second});
    }
  }
  return out;
}

}  // namespace salus::experiments
