#pragma once
/// How concurrently running lanes slow each other down in the simulator.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/job.h"

namespace salus::sim {

/// Slowdowns are integers in parts per million: 1'000'000 means solo speed, 2'000'000 half speed.
inline constexpr std::int64_t kSolo = 1'000'000;

/// An iteration in flight, as the model sees it.
struct RunningIteration {
  const core::JobSpec* spec = nullptr;
};

class InterferenceModel {
 public:
  virtual ~InterferenceModel() = default;
  virtual std::string_view name() const = 0;
  /// True when every iteration always runs at solo speed (lets the executor skip the model).
  virtual bool ideal() const { return false; }
  /// Fills slowdown_ppm[i] (>= kSolo) for each of the concurrently running iterations.
  virtual void slowdowns(std::span<const RunningIteration> running, std::span<std::int64_t> slowdown_ppm) const = 0;
};

/// `none`: the ideal GPU, every iteration takes its solo time.
class NoInterference final : public InterferenceModel {
 public:
  std::string_view name() const override { return "none"; }
  bool ideal() const override { return true; }
  void slowdowns(std::span<const RunningIteration> running, std::span<std::int64_t> out) const override;
};

/// `profiled`: each workload has a GPU utilisation u in (0, 1]; while a set S runs concurrently,
/// each runs at 1 / max(1, sum_{j in S} u_j) of its solo speed.
class UtilisationInterference final : public InterferenceModel {
 public:
  std::string_view name() const override { return "profiled"; }
  void slowdowns(std::span<const RunningIteration> running, std::span<std::int64_t> out) const override;
};

/// Creates a model by name ("none", "profiled"). Throws core::InputError listing valid names.
std::unique_ptr<InterferenceModel> make_interference(std::string_view name);
std::vector<std::string> interference_names();

}  // namespace salus::sim
