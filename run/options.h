#pragma once
/// One table of the programs' command-line options (llama.cpp's common/arg.cpp): each option is
/// declared once, with its value name, help, default and the programs that take it; a program's
/// parser and --help are built from the entries tagged with it. Options that only some of
/// salus-experiment's experiments take name those experiments, and the table refuses them with the
/// others. Boost.Program_options parses underneath, exact names only (parse_command_line).
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/lexical_cast.hpp>
#include <boost/program_options.hpp>

#include "run/cli.h"
#include "traces/generator.h"

namespace salus::run {

/// The programs, as tags of the options they take.
enum Program : unsigned {
  kSim = 1u << 0,
  kRun = 1u << 1,
  kProfile = 1u << 2,
  kTraceGenerate = 1u << 3,
  kTraceStats = 1u << 4,
  kExperiment = 1u << 5,
  kCatalog = 1u << 6,
};
using Programs = unsigned;

struct Option {
  std::string name;        ///< the long name, without "--"
  char short_name = 0;     ///< 'h' for -h; 0: none
  std::string value_name;  ///< the value's name in --help ("SIZE"); empty: the option takes none
  std::string help;
  /// The default as --help shows it; empty: the stored field's value when it has one (a string
  /// that is not empty, any number), unless `no_default`.
  std::string default_text;
  bool no_default = false;  ///< given or not, never defaulted (the program reads vm.count)
  /// A program's own default, where it differs (--warmup: "on" in salus-run, "2" in salus-profile):
  /// the value stored when the option is not given, as text parsed by the field's type.
  std::vector<std::pair<Programs, std::string>> default_for;
  Programs required = 0;  ///< programs that refuse to run without it (no default there)
  std::vector<std::pair<Programs, std::string>> value_name_for;  ///< a program's own value name
  Programs programs = 0;
  Programs hidden = 0;  ///< programs that take it without listing it in --help (a positional's name)
  /// salus-experiment: the only experiments that take it (empty: every one), and how its refusal
  /// names it (empty: "--name").
  std::vector<std::string> experiments;
  std::string scope_text;
  std::vector<std::pair<Programs, std::string>> help_for;  ///< a program's own help, where it says more
  /// How the value is stored (a Boost value semantic writing into the field); null: a flag that is
  /// only looked up in the variables map (--help, --version).
  std::function<boost::program_options::value_semantic*(const Option&, Program)> make;

  /// The help `program` shows.
  const std::string& help_of(Program program) const;
  /// Sets `program`'s own help.
  Option& help_in(Programs programs, std::string text) {
    help_for.emplace_back(programs, std::move(text));
    return *this;
  }
  /// Sets `programs`' own default (see default_for).
  Option& default_in(Programs programs, std::string value) {
    default_for.emplace_back(programs, std::move(value));
    return *this;
  }
  /// `program`'s own default; nullptr when it has none.
  const std::string* default_of(Program program) const;
  /// Sets `programs`' own value name (--warmup: N in salus-profile).
  Option& value_name_in(Programs programs, std::string name) {
    value_name_for.emplace_back(programs, std::move(name));
    return *this;
  }
  /// Marks the option required in `programs`.
  Option& required_in(Programs programs) {
    required |= programs;
    return *this;
  }
  /// The value names a file or folder `programs` read (--trace, --profiles): no output may be it.
  Programs input = 0;
  /// The value names what `programs` write, a file or a folder (--out: a folder in salus-sim, a
  /// file in salus-catalog): checked before the run (OptionTable::check_paths).
  std::vector<std::pair<Programs, OutputKind>> output_for;
  Option& input_in(Programs programs) {
    input |= programs;
    return *this;
  }
  Option& output_in(Programs programs, OutputKind kind) {
    output_for.emplace_back(programs, kind);
    return *this;
  }
};

/// How an option's value is stored into `field` (a string, a number): Option::make for it.
template <typename T>
std::function<boost::program_options::value_semantic*(const Option&, Program)> store_into(T* field) {
  return [field](const Option& self, Program program) -> boost::program_options::value_semantic* {
    auto* v = boost::program_options::value(field);
    v->value_name(self.value_name);
    for (const auto& [programs, name] : self.value_name_for) {
      if (programs & program) v->value_name(name);
    }
    if (self.required & program) {
      v->required();  // and no default, which would stand for it
    } else if (const std::string* own = self.default_of(program)) {
      // Parsed as the command line's text would be (a number's default is given as text).
      v->default_value(boost::lexical_cast<T>(*own), *own);
    } else if (!self.no_default) {
      if (!self.default_text.empty()) {
        v->default_value(*field, self.default_text);
      } else if constexpr (std::is_same_v<T, std::string>) {
        if (!field->empty()) v->default_value(*field);
      } else {
        v->default_value(*field);
      }
    }
    return v;
  };
}

/// An option stored into `field` (a string, a number); its default is the field's value when the
/// table is built (see Option::default_text).
template <typename T>
Option value_option(std::string name, T* field, std::string value_name, Programs programs, std::string help) {
  Option o;
  o.name = std::move(name);
  o.value_name = std::move(value_name);
  o.programs = programs;
  o.help = std::move(help);
  o.make = store_into(field);
  return o;
}

/// A switch: present or not (--quiet).
Option switch_option(std::string name, bool* field, Programs programs, std::string help);
/// A flag only looked up (--help, --version).
Option flag_option(std::string name, char short_name, Programs programs, std::string help);

class OptionTable {
 public:
  /// Adds an option; one name once (a second declaration is a std::logic_error).
  Option& add(Option option);
  /// The option named `name` (no "--"); nullptr when none is.
  Option* find(const std::string& name);
  const std::vector<Option>& options() const { return options_; }

  /// Stores the option `name` (declared by a lower layer) straight into `field` of the struct a
  /// program's run takes, instead of the declaring layer's value (ExperimentContext::profiles for
  /// --profiles). The field's value when the table is built is the default shown.
  template <typename T>
  Option& store_in(const std::string& name, T* field) {
    Option* o = find(name);
    if (o == nullptr) throw std::logic_error("option --" + name + " is not declared");
    o->make = store_into(field);
    return *o;
  }

  /// `program`'s options: those it lists in --help, or all it takes (`with_hidden`).
  boost::program_options::options_description description(Program program, const std::string& caption,
                                                          bool with_hidden = false) const;
  /// Parses `argv` against `program`'s options (exact names, `positional` the only arguments).
  boost::program_options::variables_map parse(Program program, int argc, char** argv,
                                              const boost::program_options::positional_options_description* positional =
                                                  nullptr) const;
  /// Checks `program`'s outputs against its inputs before it runs (check_output_paths): the
  /// options tagged output_in and input_in, with the values in `vm` (given or defaulted).
  void check_paths(Program program, const boost::program_options::variables_map& vm) const;
  /// salus-experiment: refuses an option given on the command line (not defaulted) that one of
  /// `experiments` does not take ("--calibrate is for fidelity only"). Throws core::InputError.
  void check_experiments(const boost::program_options::variables_map& vm, const std::vector<std::string>& experiments) const;

 private:
  std::vector<Option> options_;
};

/// The values of the options declared in run/ as typed; converted by the programs (make_load_options,
/// make_model_options, parse_capacity, parse_seed, ...).
struct OptionValues {
  std::string trace;  ///< the program sets its default before the table is built (salus-sim: the shipped trace)
  std::string profiles;
  std::string policy;
  std::string gpu_mem = "16GiB";
  std::string summary_json, out;
  double time_scale = 1;
  std::string seed = "1";
  bool quiet = false;
  std::string cpus;
  TraceOptionValues trace_values;
  ModelOptionValues model_values;
  // salus-sim
  std::string paging = "off", timeline = "runs", cluster, kind_speed;
  double paging_gbps = 12, profile_noise = 0;
  std::int64_t gpus = 1;
  std::int64_t timeline_rows = 50'000'000;
  // salus-trace generate (its --seed is `seed`); --workloads is salus-profile's too
  traces::GeneratorOptions generator;
  std::string workloads;
  std::string gang_sizes, shape, layout = "native";
};

/// Declares the options of run/ (the trace, the catalog, the policies, the GPU, the model, the
/// outputs, salus-sim's own) into `table`, stored into `values`.
void add_run_options(OptionTable& table, OptionValues& values);

/// --seed: an unsigned 64-bit integer in decimal, nothing else (Boost would wrap "-1"). Throws
/// core::InputError "--seed: ...".
std::uint64_t parse_seed(const std::string& text);

/// Prints `program`'s --help (`caption`, its options, then `after`) or --version ("tool VERSION")
/// when asked; returns true when it did, and the program is done.
bool print_help_or_version(const OptionTable& table, Program program, const char* tool, const std::string& caption,
                           const boost::program_options::variables_map& vm, const std::string& after = "");

}  // namespace salus::run
