// The extension module salus._salus: salus-sim's option table, program and summary writer
// (run/sim_program.h) under Python, and policies written in Python (policy_adapter.h). The Python
// half of the package (salus/__init__.py) turns keyword arguments into the command line this
// takes and the summary into pandas frames.
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <boost/program_options/errors.hpp>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "core/errors.h"
#include "policies/registry.h"
#include "python/policy_adapter.h"
#include "run/cli.h"
#include "run/output.h"
#include "run/sim_program.h"

namespace py = pybind11;
using namespace salus;

namespace {

/// A Python policy given to one salus.simulate call: the object itself for the first policy the
/// run makes of it, copies (copy.deepcopy) for the others (a cluster makes one per GPU).
struct PolicySource {
  py::object policy;
  int made = 0;
};

/// Runs salus-sim's program on `args` (the command line without the program's name), with the
/// Python policies `python_policies` ([(name, policy object)]) known by their names. `trace_name`
/// stands for the --trace path in the header line and the summary (a DataFrame's temporary file).
py::dict run_program(const std::vector<std::string>& args, const py::list& python_policies,
                     const std::optional<std::string>& trace_name) {
  std::vector<std::unique_ptr<PolicySource>> sources;
  std::vector<std::unique_ptr<policies::ScopedPolicy>> scoped;
  for (const py::handle item : python_policies) {
    const py::tuple t = py::reinterpret_borrow<py::object>(item);
    auto src = std::make_unique<PolicySource>();
    src->policy = t[1];
    PolicySource* p = src.get();
    scoped.push_back(std::make_unique<policies::ScopedPolicy>(t[0].cast<std::string>(), [p]() -> std::unique_ptr<core::Policy> {
      py::object obj = p->made++ == 0 ? p->policy : py::module_::import("copy").attr("deepcopy")(p->policy);
      return std::make_unique<python::PyPolicy>(std::move(obj));
    }));
    sources.push_back(std::move(src));
  }
  std::vector<std::string> words{"salus-sim"};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);

  run::SimProgramOptions o;
  if (!run::parse_sim_command_line(static_cast<int>(words.size()), argv.data(), o)) {
    throw py::value_error("--help and --version are salus-sim's; see salus.options()");
  }
  for (auto& s : sources) s->made = 0;  // the check of --policy made one of each
  std::optional<run::SimProgramResult> result;
  if (sources.empty()) {
    py::gil_scoped_release release;  // built-in policies only: other Python threads run meanwhile
    result = run::run_sim_program(o);
  } else {
    result = run::run_sim_program(o);
  }
  const run::SimProgramResult& r = *result;
  const std::string name = trace_name ? *trace_name : o.v.trace;
  const nlohmann::json header = run::sim_program_summary_header(o, r, name);
  const std::vector<core::JobSpec>& jobs = r.loaded.jobs;
  std::ostringstream table;
  run::print_table(table, r.runs);
  std::ostringstream cluster;
  if (r.cfg.cluster) run::print_cluster_report(cluster, jobs, r.runs);
  if (!o.v.summary_json.empty() || !o.v.out.empty()) {
    run::write_streamed_outputs(header, o.v.summary_json, o.v.out, jobs, r.runs, o.timeline);
  }
  py::dict d;
  d["summary_json"] = run::summary_json_text(header, jobs, r.runs);
  d["header"] = run::sim_header_line(name, r.loaded.trace, jobs.size(), r.cfg, r.runs);
  d["table"] = table.str();
  d["cluster_report"] = cluster.str();
  d["notes"] = r.notes;
  return d;
}

py::list option_list() {
  py::list out;
  for (const run::SimOptionInfo& o : run::sim_options()) {
    py::dict d;
    d["name"] = o.name;
    d["value_name"] = o.value_name;
    d["help"] = o.help;
    d["default"] = o.default_text.empty() ? py::object(py::none()) : py::object(py::str(o.default_text));
    d["switch"] = o.is_switch;
    out.append(d);
  }
  return out;
}

}  // namespace

PYBIND11_MODULE(_salus, m) {
  m.doc() = "salus-sim's program under Python (the package salus wraps it)";
  static py::exception<core::InputError> input_error(m, "InputError", PyExc_ValueError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const core::InputError& e) {
      PyErr_SetString(input_error.ptr(), e.what());
    } catch (const boost::program_options::error& e) {
      // As salus-sim reports it (run::guarded_main).
      PyErr_SetString(input_error.ptr(), (std::string(e.what()) + " (see --help)").c_str());
    } catch (const std::invalid_argument& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const std::logic_error& e) {
      PyErr_SetString(PyExc_RuntimeError, (std::string("internal error: ") + e.what()).c_str());
    }
  });
  python::bind_policy_types(m);
  m.def("run", &run_program, py::arg("args"), py::arg("python_policies"), py::arg("trace_name") = py::none(),
        "salus-sim's program on a command line (without the program's name)");
  m.def("options", &option_list, "salus-sim's options from its option table: name, value_name, help, default, switch");
  m.def("policy_names", &policies::policy_names, "the built-in policies");
  m.def("version", [] { return run::version_text("salus"); });
}
