#pragma once
/// gpus_needed's search over the cluster size N, apart from what runs a cluster: pure functions of
/// an evaluation passed in, so that a test can hand them any curve (experiments/README.md,
/// gpus_needed).
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <vector>

namespace salus::experiments {

/// Whether a cluster of `gpus` GPUs meets the bound. gpus_needed's runs the trace on it (from
/// milliseconds to seconds); the search calls it at most once per N, from the calling thread.
using MeetsBound = std::function<bool(std::int64_t gpus)>;

/// What fewest_gpus found on [lo, hi].
struct FewestGpus {
  std::optional<std::int64_t> gpus;  ///< the fewest N in [lo, hi] meeting the bound; nullopt: none does
  std::vector<std::int64_t> evaluated;  ///< every N it evaluated, in order: lo, lo + 1, ..., the answer (or hi)
};

/// The fewest N in [lo, hi] that meets the bound, exact whatever the shape of the curve: evaluates
/// N = lo, lo + 1, ... in turn and stops at the first that meets it, so every N below the answer
/// in [lo, hi] was evaluated and misses. Assumes nothing of N outside [lo, hi] (the caller's range).
FewestGpus fewest_gpus(std::int64_t lo, std::int64_t hi, const MeetsBound& meets);

/// A step up of the curve: the next N evaluated above `from` is worse.
struct Rise {
  std::int64_t from = 0, to = 0;        ///< consecutive N on the curve, from < to
  double from_value = 0, to_value = 0;  ///< the bounded average at each (seconds), to_value > from_value
};

/// Every rise of `curve` (N -> the bounded average in seconds, as evaluated): the N whose next
/// larger N on the curve has a strictly larger average. Empty when the curve never rises.
std::vector<Rise> rises(const std::map<std::int64_t, double>& curve);

}  // namespace salus::experiments
