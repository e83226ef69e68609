#include "cluster/speculation.h"

#include <string>

#include "core/errors.h"

namespace salus::cluster {

void Speculation::begin(std::span<const core::JobSpec> jobs, std::span<const core::JobIndex> order,
                        const std::function<bool(core::JobIndex)>& given_to_largest) {
  jobs_ = jobs;
  order_ = order;
  const std::size_t n = order.size();
  stop_gang_.assign(n + 1, static_cast<std::int32_t>(n));
  stop_largest_.assign(n + 1, static_cast<std::int32_t>(n));
  for (std::size_t k = n; k-- > 0;) {
    const core::JobIndex j = order[k];
    const bool gang = jobs[static_cast<std::size_t>(j)].gpus > 1;
    const auto here = static_cast<std::int32_t>(k);
    stop_gang_[k] = gang ? here : stop_gang_[k + 1];
    stop_largest_[k] = gang || given_to_largest(j) ? here : stop_largest_[k + 1];
  }
}

void Speculation::rewind(std::int32_t g, core::TimeNs now, Host& host) {
  GpuState& s = host.speculation(g);
  const core::TimeNs from = host.clock(g);
  SALUS_INVARIANT(from < now, "a GPU is rewound at a bind, from before the instant", std::to_string(now));
  ++rewinds_;
  s.replay_until_ = now;
  host.replan(g, from);
  while (true) {
    const core::TimeNs t = host.next_completion(g);
    if (t >= now) break;
    host.step_alone(g, t);
  }
  s.replay_until_ = core::kNever;
}

}  // namespace salus::cluster
