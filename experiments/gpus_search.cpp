#include "experiments/gpus_search.h"

#include <algorithm>
#include <iterator>
#include <stdexcept>

namespace salus::experiments {

FewestGpus fewest_gpus(std::int64_t lo, std::int64_t hi, const MeetsBound& meets) {
  // A linear scan, not a bisection: the curve need not be monotone in N (more GPUs change where
  // jobs are placed and in what order they are admitted, which can raise the average), and a
  // bisection can then step over a small N that meets the bound or settle where a larger N
  // misses it. Each N is one run of milliseconds to seconds.
  GpuScan scan(lo, hi, 1);
  while (const std::optional<std::int64_t> n = scan.next()) scan.record(*n, meets(*n));
  return scan.result();
}

GpuScan::GpuScan(std::int64_t lo, std::int64_t hi, std::int64_t window)
    : lo_(lo), hi_(hi), window_(std::max<std::int64_t>(1, window)), next_(lo), frontier_(lo) {}

std::optional<std::int64_t> GpuScan::next() {
  // The answer is at least the frontier, so an N at most window - 1 above it is at most the
  // answer + window - 1, whatever the outcomes still to come.
  if (done() || next_ > hi_ || next_ > frontier_ + (window_ - 1)) return std::nullopt;
  return next_++;
}

void GpuScan::record(std::int64_t n, bool meets) {
  if (n < frontier_ || n >= next_ || done()) return;
  outcomes_.emplace(n, meets);
  // The frontier moves past each N known to miss.
  for (auto it = outcomes_.find(frontier_); it != outcomes_.end() && !it->second; it = outcomes_.find(frontier_)) {
    outcomes_.erase(it);
    ++frontier_;
  }
}

bool GpuScan::done() const {
  if (frontier_ > hi_) return true;
  const auto it = outcomes_.find(frontier_);
  return it != outcomes_.end() && it->second;
}

FewestGpus GpuScan::result() const {
  if (!done()) throw std::logic_error("GpuScan::result: the scan is not over");
  FewestGpus out;
  const bool found = frontier_ <= hi_;  // done(): the frontier meets
  for (std::int64_t n = lo_; n <= (found ? frontier_ : hi_); ++n) out.evaluated.push_back(n);
  if (found) out.gpus = frontier_;
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
