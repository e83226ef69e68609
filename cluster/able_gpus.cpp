#include "cluster/able_gpus.h"

#include <algorithm>

namespace salus::cluster {

void TouchLog::reset(std::size_t gpus) {
  prev_.assign(gpus, -1);
  next_.assign(gpus, -1);
  seq_of_.assign(gpus, 0);
  for (std::size_t h = 0; h < gpus; ++h) {  // every GPU, never touched yet
    next_[h] = h + 1 < gpus ? static_cast<std::int32_t>(h + 1) : -1;
    prev_[h] = static_cast<std::int32_t>(h) - 1;
  }
  head_ = gpus == 0 ? -1 : 0;
  seq_ = 0;
}

void TouchLog::touch(std::int32_t g) {
  const auto u = static_cast<std::size_t>(g);
  seq_of_[u] = ++seq_;
  if (head_ == g) return;
  const std::int32_t p = prev_[u], n = next_[u];
  if (p >= 0) next_[static_cast<std::size_t>(p)] = n;
  if (n >= 0) prev_[static_cast<std::size_t>(n)] = p;
  prev_[u] = -1;
  next_[u] = head_;
  if (head_ >= 0) prev_[static_cast<std::size_t>(head_)] = g;
  head_ = g;
}

std::size_t AbleCounter::count(AbleSet& set, const TouchLog& log, std::uint64_t instant_seq, std::size_t gpus,
                               bool incremental, const std::function<bool(std::int32_t)>& able) {
  if (!set.known || !incremental) {
    set.gpus.clear();
    for (std::int32_t g = 0; g < static_cast<std::int32_t>(gpus); ++g) {
      if (able(g)) set.gpus.push_back(g);
    }
  } else {
    if (seen_.size() < gpus) seen_.resize(gpus, 0);
    const std::uint64_t stamp = ++stamp_;
    log.each_since(set.seq, [&](std::int32_t g) { seen_[static_cast<std::size_t>(g)] = stamp; });
    std::erase_if(set.gpus, [&](std::int32_t g) { return seen_[static_cast<std::size_t>(g)] == stamp; });
    log.each_since(set.seq, [&](std::int32_t g) {
      if (able(g)) set.gpus.push_back(g);
    });
  }
  set.known = true;
  set.seq = instant_seq;
  return set.gpus.size();
}

}  // namespace salus::cluster
