#include "python/policy_adapter.h"

#include <string>

#include <pybind11/stl.h>

namespace salus::python {

const core::SchedulerView& View::get() const {
  if (v == nullptr) throw py::value_error("a salus view is valid only during the policy call it was given to");
  return *v;
}

std::size_t View::check(std::int64_t job) const {
  const core::SchedulerView& s = get();
  if (job < 0 || static_cast<std::size_t>(job) >= s.specs.size()) {
    throw py::index_error("job " + std::to_string(job) + " is not a job of the run (0 to " +
                          std::to_string(s.specs.size()) + " - 1)");
  }
  return static_cast<std::size_t>(job);
}

const core::LaneSnapshot& Lane::get() const {
  if (l == nullptr) throw py::value_error("a salus lane is valid only during the policy call it was given to");
  return *l;
}

void bind_policy_types(py::module_& m) {
  using core::JobSpec;
  using core::JobState;
  // The accessors take a job index; each reads one field of the loop's arrays.
  auto spec_of = [](const View& v, std::int64_t j) -> const JobSpec& { return v.get().specs[v.check(j)]; };
  auto state_of = [](const View& v, std::int64_t j) -> const JobState& { return v.get().states[v.check(j)]; };
  py::class_<View>(m, "View", "The state a policy hook sees (valid during the call only); jobs are indices 0 .. len - 1")
      .def_property_readonly("now", [](const View& v) { return v.get().now; }, "the simulated time, ns")
      .def("__len__", [](const View& v) { return v.get().specs.size(); })
      .def("job_id", [=](const View& v, std::int64_t j) { return spec_of(v, j).id.str(); }, "the trace's job_id")
      .def("workload", [=](const View& v, std::int64_t j) { return spec_of(v, j).workload.str(); })
      .def("arrival_ns", [=](const View& v, std::int64_t j) { return spec_of(v, j).arrival_ns; })
      .def("iterations", [=](const View& v, std::int64_t j) { return spec_of(v, j).iterations; }, "iterations to run")
      .def("iter_ns", [=](const View& v, std::int64_t j) { return spec_of(v, j).iter_ns; }, "profiled solo iteration time")
      .def("persistent", [=](const View& v, std::int64_t j) { return spec_of(v, j).persistent; }, "P, bytes")
      .def("ephemeral", [=](const View& v, std::int64_t j) { return spec_of(v, j).ephemeral; }, "E, bytes")
      .def("gpu_util", [=](const View& v, std::int64_t j) { return spec_of(v, j).gpu_util_ppm / 1e6; }, "u in (0, 1]")
      .def("priority", [=](const View& v, std::int64_t j) { return spec_of(v, j).priority; })
      .def("gpus", [=](const View& v, std::int64_t j) { return spec_of(v, j).gpus; })
      .def("first_iter_extra_ns", [=](const View& v, std::int64_t j) { return spec_of(v, j).first_iter_extra_ns; })
      .def("status", [=](const View& v, std::int64_t j) { return std::string(core::to_string(state_of(v, j).status)); })
      .def("lane", [=](const View& v, std::int64_t j) { return state_of(v, j).lane; })
      .def("running", [=](const View& v, std::int64_t j) { return state_of(v, j).running; })
      .def("iterations_done", [=](const View& v, std::int64_t j) { return state_of(v, j).iterations_done; })
      .def("submit_rank", [=](const View& v, std::int64_t j) { return state_of(v, j).submit_rank; },
           "position in arrival order (ties: trace order)")
      .def("admit_seq", [=](const View& v, std::int64_t j) { return state_of(v, j).admit_seq; })
      .def("remaining_iterations",
           [=](const View& v, std::int64_t j) { return state_of(v, j).remaining_iterations(spec_of(v, j)); })
      .def("remaining_solo_ns", [=](const View& v, std::int64_t j) { return state_of(v, j).remaining_solo_ns(spec_of(v, j)); },
           "remaining iterations x iter_ns, plus the first iteration's extra until it has run (SRTF's key)")
      .def("earlier_submitted",
           [](const View& v, std::int64_t a, std::int64_t b) {
             return v.get().states[v.check(a)].submit_rank < v.get().states[v.check(b)].submit_rank;
           },
           "the tie-break of every built-in policy: a arrived before b (then: earlier in the trace)");
  py::class_<Lane>(m, "Lane", "A lane as a policy hook sees it (valid during the call only)")
      .def_property_readonly("id", [](const Lane& l) { return l.get().id; })
      .def_property_readonly("jobs", [](const Lane& l) {
        const auto& s = l.get();
        return std::vector<core::JobIndex>(s.jobs.begin(), s.jobs.end());
      }, "its admitted, unfinished jobs in admission order (at choose: those with work ready)")
      .def_property_readonly("last_job", [](const Lane& l) { return l.get().last_job; }, "the job that ran its last iteration, -1: none")
      .def_property_readonly("running", [](const Lane& l) { return l.get().running; }, "the job with a run in flight (hooks only), -1: none")
      .def("__len__", [](const Lane& l) { return l.get().jobs.size(); });
  py::class_<core::RunReport>(m, "RunReport", "A run that ended (Policy.on_iterations_done)")
      .def_readonly("job", &core::RunReport::job)
      .def_readonly("lane", &core::RunReport::lane)
      .def_readonly("iterations", &core::RunReport::iterations)
      .def_readonly("start_ns", &core::RunReport::start_ns)
      .def_readonly("end_ns", &core::RunReport::end_ns);
}

class PyPolicy::Scope {
 public:
  Scope(const PyPolicy& p, const core::SchedulerView& view, const core::LaneSnapshot* lane = nullptr) : p_(p) {
    p_.view_->v = &view;
    p_.lane_->l = lane;
  }
  ~Scope() {
    p_.view_->v = nullptr;
    p_.lane_->l = nullptr;
  }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  const PyPolicy& p_;
};

namespace {

core::LaneMode lane_mode_named(const std::string& policy, const std::string& text) {
  if (text == "single") return core::LaneMode::kSingle;
  if (text == "auto") return core::LaneMode::kAuto;
  if (text == "exclusive") return core::LaneMode::kExclusive;
  throw py::value_error("policy '" + policy + "': unknown lane mode '" + text + "' (valid: single, auto, exclusive)");
}

}  // namespace

PyPolicy::PyPolicy(py::object policy) : policy_(std::move(policy)) {
  name_ = py::str(policy_.attr("name"));
  description_ = py::str(policy_.attr("description"));
  default_lanes_ = lane_mode_named(name_, py::str(policy_.attr("default_lanes")));
  for (const py::handle mode : policy_.attr("lanes")) lanes_.push_back(lane_mode_named(name_, py::str(mode)));
  const std::string newcomer = py::str(policy_.attr("newcomer"));
  if (newcomer == "waits") newcomer_ = Newcomer::kWaits;
  else if (newcomer == "takes_turn") newcomer_ = Newcomer::kTakesTurn;
  else if (newcomer == "by_order") newcomer_ = Newcomer::kByOrder;
  else throw py::value_error("policy '" + name_ + "': unknown newcomer '" + newcomer + "' (valid: waits, takes_turn, by_order)");
  const py::dict hooks = policy_.attr("_hooks")();
  auto hook = [&](const char* name) { return hooks.contains(name) ? py::object(hooks[name]) : py::object(); };
  begin_ = hook("begin");
  admission_key_ = hook("admission_key");
  starts_at_once_ = hook("starts_at_once");
  on_admit_ = hook("on_admit");
  on_join_ = hook("on_join");
  on_iterations_done_ = hook("on_iterations_done");
  on_finish_ = hook("on_finish");
  choose_ = hook("choose");
  plan_ = hook("plan");
  on_plan_done_ = hook("on_plan_done");
  if (!choose_) throw py::type_error("policy '" + name_ + "': a salus.Policy must define choose(view, lane)");
  if (newcomer_ == Newcomer::kByOrder && !starts_at_once_) {
    throw py::type_error("policy '" + name_ + "': newcomer = 'by_order' needs starts_at_once(view, lane, job)");
  }
  // Owned by Python: a view a hook keeps outlives this object, and raises when read.
  view_obj_ = py::cast(View{});
  lane_obj_ = py::cast(Lane{});
  view_ = view_obj_.cast<View*>();
  lane_ = lane_obj_.cast<Lane*>();
}

PyPolicy::~PyPolicy() = default;

bool PyPolicy::supports(core::LaneMode mode) const {
  for (core::LaneMode m : lanes_) {
    if (m == mode) return true;
  }
  return mode == default_lanes_;
}

void PyPolicy::begin(std::span<const core::JobSpec> specs) {
  if (begin_) begin_(specs.size());
}

std::int64_t PyPolicy::admission_key(const core::SchedulerView& view, core::JobIndex job) const {
  if (!admission_key_) return 0;
  Scope s(*this, view);
  return admission_key_(view_obj_, job).cast<std::int64_t>();
}

bool PyPolicy::starts_at_once(const core::SchedulerView& view, const core::LaneSnapshot& lane, core::JobIndex job) const {
  if (!starts_at_once_) return false;
  Scope s(*this, view, &lane);
  return starts_at_once_(view_obj_, lane_obj_, job).cast<bool>();
}

void PyPolicy::on_admit(const core::SchedulerView& view, core::JobIndex job) {
  if (!on_admit_) return;
  Scope s(*this, view);
  on_admit_(view_obj_, job);
}

void PyPolicy::on_join(const core::SchedulerView& view, const core::LaneSnapshot& lane, core::JobIndex job) {
  if (!on_join_) return;
  Scope s(*this, view, &lane);
  on_join_(view_obj_, lane_obj_, job);
}

void PyPolicy::on_iterations_done(const core::SchedulerView& view, const core::RunReport& run) {
  if (!on_iterations_done_) return;
  Scope s(*this, view);
  on_iterations_done_(view_obj_, run);
}

void PyPolicy::on_finish(const core::SchedulerView& view, core::JobIndex job, core::LaneId lane) {
  if (!on_finish_) return;
  Scope s(*this, view);
  on_finish_(view_obj_, job, lane);
}

core::Decision PyPolicy::choose(const core::SchedulerView& view, const core::LaneSnapshot& lane) {
  Scope s(*this, view, &lane);
  const py::object r = choose_(view_obj_, lane_obj_);
  core::Decision d;
  if (py::isinstance<py::int_>(r)) {
    d.job = r.cast<core::JobIndex>();
  } else if (py::isinstance<py::tuple>(r) && py::len(r) == 2) {
    const py::tuple t = r;
    d.job = t[0].cast<core::JobIndex>();
    d.max_iterations = t[1].cast<std::int64_t>();
  } else {
    throw py::type_error("policy '" + name_ + "': choose must return a job (int) or (job, max_iterations), got " +
                         std::string(py::str(py::repr(r))));
  }
  const bool in_lane = d.job >= 0 && static_cast<std::size_t>(d.job) < view.states.size() &&
                       view.states[static_cast<std::size_t>(d.job)].lane == lane.id &&
                       view.states[static_cast<std::size_t>(d.job)].status == core::JobStatus::kAdmitted;
  if (!in_lane) {
    throw py::value_error("policy '" + name_ + "': choose returned job " + std::to_string(d.job) +
                          ", which is not an admitted job of lane " + std::to_string(lane.id));
  }
  if (d.max_iterations < 1) {
    throw py::value_error("policy '" + name_ + "': choose returned max_iterations " + std::to_string(d.max_iterations) +
                          " (at least 1)");
  }
  return d;
}

bool PyPolicy::plan(const core::SchedulerView& view, const core::LaneSnapshot& lane, std::vector<core::RotationEntry>& out) {
  if (!plan_) return false;
  Scope s(*this, view, &lane);
  const py::object r = plan_(view_obj_, lane_obj_);
  if (r.is_none()) return false;
  for (const py::handle e : r) {
    const py::tuple t = py::reinterpret_borrow<py::object>(e);
    if (t.size() != 4) throw py::value_error("policy '" + name_ + "': plan entries are (job, level, step, order)");
    core::RotationEntry entry{t[0].cast<core::JobIndex>(), t[1].cast<core::TimeNs>(), t[2].cast<core::TimeNs>(),
                              t[3].cast<std::int64_t>()};
    if (entry.step <= 0) throw py::value_error("policy '" + name_ + "': a plan entry's step must be > 0");
    out.push_back(entry);
  }
  if (out.size() != lane.jobs.size()) {
    throw py::value_error("policy '" + name_ + "': a plan has one entry per job of the lane (" +
                          std::to_string(lane.jobs.size()) + "), got " + std::to_string(out.size()));
  }
  return true;
}

void PyPolicy::on_plan_done(const core::SchedulerView& view, core::LaneId lane, std::span<const core::RotationEntry> entries,
                            std::span<const std::int64_t> iterations) {
  if (!on_plan_done_) return;
  Scope s(*this, view);
  py::list e, n;
  for (const core::RotationEntry& r : entries) e.append(py::make_tuple(r.job, r.level, r.step, r.order));
  for (std::int64_t i : iterations) n.append(i);
  on_plan_done_(view_obj_, lane, e, n);
}

}  // namespace salus::python
