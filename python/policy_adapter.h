#pragma once
/// The trampoline between the scheduling loop and a policy written in Python: a core::Policy whose
/// virtuals call the methods a subclass of salus.Policy overrides (salus/__init__.py). The loop
/// sees an ordinary policy; the Python object sees a view of the state valid during the call.
#include <cstdint>
#include <string>
#include <vector>

#include <pybind11/pybind11.h>

#include "core/policy.h"

namespace salus::python {

namespace py = pybind11;

/// What a hook sees of the state (core::SchedulerView), valid only during the call: after it, every
/// accessor raises (a view kept past its call would read freed memory).
struct View {
  const core::SchedulerView* v = nullptr;
  const core::SchedulerView& get() const;
  std::size_t check(std::int64_t job) const;  ///< the job's index, or IndexError
};

/// A lane as choose and the hooks see it (core::LaneSnapshot), valid during the call only.
struct Lane {
  const core::LaneSnapshot* l = nullptr;
  const core::LaneSnapshot& get() const;
};

/// Registers View, Lane, RunReport and RotationEntry with the module.
void bind_policy_types(py::module_& m);

/// A Python policy object (an instance of a salus.Policy subclass) as a core::Policy. The hooks
/// it overrides are looked up once, here, from policy._hooks(); the others keep core::Policy's
/// defaults and cost nothing. A Python exception raised by a hook propagates through the loop as
/// py::error_already_set and reaches the caller of salus.simulate with its traceback.
class PyPolicy final : public core::Policy {
 public:
  explicit PyPolicy(py::object policy);
  ~PyPolicy() override;

  std::string_view name() const override { return name_; }
  std::string_view description() const override { return description_; }
  core::LaneMode default_lane_mode() const override { return default_lanes_; }
  bool supports(core::LaneMode mode) const override;
  void begin(std::span<const core::JobSpec> specs) override;
  std::int64_t admission_key(const core::SchedulerView& view, core::JobIndex job) const override;
  Newcomer newcomer() const override { return newcomer_; }
  bool starts_at_once(const core::SchedulerView& view, const core::LaneSnapshot& lane, core::JobIndex job) const override;
  void on_admit(const core::SchedulerView& view, core::JobIndex job) override;
  void on_join(const core::SchedulerView& view, const core::LaneSnapshot& lane, core::JobIndex job) override;
  void on_iterations_done(const core::SchedulerView& view, const core::RunReport& run) override;
  void on_finish(const core::SchedulerView& view, core::JobIndex job, core::LaneId lane) override;
  core::Decision choose(const core::SchedulerView& view, const core::LaneSnapshot& lane) override;
  bool plan(const core::SchedulerView& view, const core::LaneSnapshot& lane, std::vector<core::RotationEntry>& out) override;
  void on_plan_done(const core::SchedulerView& view, core::LaneId lane, std::span<const core::RotationEntry> entries,
                    std::span<const std::int64_t> iterations) override;

 private:
  /// Points the shared view (and lane) at the loop's for one call and back at nothing after it.
  class Scope;

  py::object policy_;
  std::string name_, description_;
  core::LaneMode default_lanes_ = core::LaneMode::kSingle;
  std::vector<core::LaneMode> lanes_;
  Newcomer newcomer_ = Newcomer::kWaits;
  // The overridden hooks, bound to the object (None: not overridden).
  py::object begin_, admission_key_, starts_at_once_, on_admit_, on_join_, on_iterations_done_, on_finish_, choose_,
      plan_, on_plan_done_;
  // One view and one lane for every call: Python objects, pointed at the loop's for each call.
  py::object view_obj_, lane_obj_;
  View* view_ = nullptr;
  Lane* lane_ = nullptr;
};

}  // namespace salus::python
