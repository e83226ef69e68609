#include "cluster/job_kinds.h"

#include <map>
#include <stdexcept>
#include <string_view>
#include <utility>

namespace salus::cluster {

JobKinds::JobKinds(std::span<const core::JobSpec> jobs, const ClusterSpec& cluster) : kinds_(cluster.kinds.size()) {
  const std::vector<GpuKind>& kinds = cluster.kinds;
  for (const GpuKind& k : kinds) names_ += (names_.empty() ? "" : ", ") + k.name;
  if (kinds.empty()) return;  // gpu_kinds and kind_speeds are ignored
  // gpu_kinds to kind bits, once per distinct text.
  allowed_.assign(jobs.size(), kAnyKind);
  set_.assign(jobs.size(), 0);
  std::map<std::string_view, std::pair<std::uint64_t, std::int32_t>> seen;
  std::map<std::uint64_t, std::int32_t> set_of;  // mask -> set index (from 1)
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    const std::string& text = jobs[j].gpu_kinds();
    if (text.empty()) continue;
    auto it = seen.find(text);
    if (it == seen.end()) {
      std::uint64_t mask = 0;
      std::size_t a = 0;
      while (a <= text.size()) {
        std::size_t b = text.find('|', a);
        if (b == std::string::npos) b = text.size();
        const std::string_view name = std::string_view(text).substr(a, b - a);
        for (std::size_t k = 0; k < kinds.size(); ++k) {
          if (kinds[k].name == name) mask |= std::uint64_t{1} << k;
        }
        a = b + 1;
      }
      const std::int32_t set = set_of.try_emplace(mask, static_cast<std::int32_t>(set_of.size()) + 1).first->second;
      it = seen.emplace(text, std::make_pair(mask, set)).first;
    }
    allowed_[j] = it->second.first;
    set_[j] = it->second.second;
  }
  // kind_speeds to the job x kind table, left empty when no job has any.
  bool any = false;
  for (const core::JobSpec& s : jobs) any = any || !s.kind_speeds().empty();
  if (!any) return;
  speed_.assign(jobs.size() * kinds.size(), 0);
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    for (const core::KindSpeed& ks : jobs[j].kind_speeds()) {
      if (ks.speed_ppm <= 0) throw std::invalid_argument("job '" + jobs[j].id + "': a kind speed must be positive");
      for (std::size_t k = 0; k < kinds.size(); ++k) {
        if (kinds[k].name == ks.kind) speed_[j * kinds.size() + k] = ks.speed_ppm;
      }
    }
  }
}

}  // namespace salus::cluster
