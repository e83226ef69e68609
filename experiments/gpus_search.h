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

/// Whether a cluster of `gpus` GPUs meets the bound. gpus_needed runs the trace on it (from
/// milliseconds to seconds); fewest_gpus calls it at most once per N, from the calling thread.
using MeetsBound = std::function<bool(std::int64_t gpus)>;

/// What fewest_gpus found on [lo, hi].
struct FewestGpus {
  std::optional<std::int64_t> gpus;  ///< the fewest N in [lo, hi] meeting the bound; nullopt: none does
  std::vector<std::int64_t> evaluated;  ///< every N it evaluated, in order: lo, lo + 1, ..., the answer (or hi)
};

/// The fewest N in [lo, hi] that meets the bound, exact whatever the shape of the curve: evaluates
/// N = lo, lo + 1, ... in turn and stops at the first that meets it, so every N below the answer
/// in [lo, hi] was evaluated and misses. Assumes nothing of N outside [lo, hi] (the caller's range).
/// GpuScan with a window of 1, driven from the calling thread.
FewestGpus fewest_gpus(std::int64_t lo, std::int64_t hi, const MeetsBound& meets);

/// fewest_gpus' scan with several N evaluated at once, as a state machine the caller drives (from
/// one thread, or under its lock): next() names an N to start, record() takes its outcome, in any
/// order. It starts N in increasing order, each at most `window` - 1 above the smallest N not yet
/// known to miss (the frontier) and at most hi, so with the answer A every N it ever starts is at
/// most min(hi, A + window - 1); result() is fewest_gpus' exactly, whatever the window and the
/// order in which outcomes come. gpus_needed's window is kRunAbove + 1: an N started above the
/// answer is one its curve runs anyway.
class GpuScan {
 public:
  /// `window` >= 1 (1: fewest_gpus' one N at a time).
  GpuScan(std::int64_t lo, std::int64_t hi, std::int64_t window);

  /// The next N to evaluate if one may start now (the scan then counts it as started); nullopt
  /// when the scan is over (done()) or when it must wait for an outcome of an N started.
  std::optional<std::int64_t> next();
  /// The outcome of an N that next() named; one per N. Outcomes after done() (an N above the
  /// answer) are taken and change nothing.
  void record(std::int64_t n, bool meets);
  /// The answer is known: the frontier meets, or every N in [lo, hi] misses.
  bool done() const;
  /// Once done(): the answer and the N a one-at-a-time scan evaluates (lo, ..., the answer or hi),
  /// not the N started above the answer.
  FewestGpus result() const;
  /// The N started so far are lo, lo + 1, ..., started_below() - 1.
  std::int64_t started_below() const { return next_; }

 private:
  std::int64_t lo_, hi_, window_;
  std::int64_t next_;      // the smallest N not yet started
  std::int64_t frontier_;  // the smallest N not known to miss
  std::map<std::int64_t, bool> outcomes_;  // N >= frontier_ with an outcome
};

/// A step up of the curve: the next N evaluated above `from` is worse.
struct Rise {
  std::int64_t from = 0, to = 0;        ///< consecutive N on the curve, from < to
  double from_value = 0, to_value = 0;  ///< the bounded average at each (seconds), to_value > from_value
};

/// Every rise of `curve` (N -> the bounded average in seconds, as evaluated): the N whose next
/// larger N on the curve has a strictly larger average. Empty when the curve never rises.
std::vector<Rise> rises(const std::map<std::int64_t, double>& curve);

}  // namespace salus::experiments
