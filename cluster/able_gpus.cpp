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
                               bool incremental, const std::function<Able(std::int32_t)>& able) {
  auto ask = [&](std::int32_t g) {
    const Able a = able(g);
    if (a != Able::kNo) set.gpus.push_back(g);
    if (a == Able::kYesForNow) set.for_now.push_back(g);
  };
  if (!set.known || !incremental) {
    set.gpus.clear();
    set.for_now.clear();
    for (std::int32_t g = 0; g < static_cast<std::int32_t>(gpus); ++g) ask(g);
  } else {
    // Asked again: the GPUs touched since the last count, and those whose yes was for now.
    if (seen_.size() < gpus) seen_.resize(gpus, 0);
    const std::uint64_t stamp = ++stamp_;
    again_.clear();
    auto mark = [&](std::int32_t g) {
      if (seen_[static_cast<std::size_t>(g)] == stamp) return;
      seen_[static_cast<std::size_t>(g)] = stamp;
      again_.push_back(g);
    };
    log.each_since(set.seq, mark);
    for (const std::int32_t g : set.for_now) mark(g);
    set.for_now.clear();
    std::erase_if(set.gpus, [&](std::int32_t g) { return seen_[static_cast<std::size_t>(g)] == stamp; });
    for (const std::int32_t g : again_) ask(g);
  }
  set.known = true;
  set.seq = instant_seq;
  return set.gpus.size();
}

}  // namespace salus::cluster
