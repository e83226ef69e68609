// The option table's per-program entries: a program's own default, value name and requirement,
// and an option stored straight into the struct a program's run takes (store_in).
#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

#include "run/options.h"

using namespace salus;

namespace {

boost::program_options::variables_map parse(const run::OptionTable& table, run::Program program,
                                            std::vector<std::string> args) {
  args.insert(args.begin(), "prog");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  boost::program_options::variables_map vm = table.parse(program, static_cast<int>(argv.size()), argv.data());
  boost::program_options::notify(vm);
  return vm;
}

std::string help_of(const run::OptionTable& table, run::Program program) {
  std::ostringstream os;
  os << table.description(program, "");
  return os.str();
}

}  // namespace

TEST_CASE("option table: one entry with a default, value name and requirement per program") {
  std::string value;
  run::OptionTable table;
  table.add(run::value_option("level", &value, "on|off", run::kRun | run::kProfile, "on or off"))
      .default_in(run::kRun, "on")
      .default_in(run::kProfile, "2")
      .value_name_in(run::kProfile, "N")
      .help_in(run::kProfile, "a count")
      .required_in(run::kSim)
      .programs |= run::kSim;
  parse(table, run::kRun, {});
  CHECK(value == "on");
  parse(table, run::kProfile, {});
  CHECK(value == "2");
  parse(table, run::kProfile, {"--level", "7"});
  CHECK(value == "7");
  CHECK_THROWS_AS(parse(table, run::kSim, {}), boost::program_options::required_option);
  CHECK(help_of(table, run::kRun).find("--level on|off (=on)") != std::string::npos);
  CHECK(help_of(table, run::kProfile).find("--level N (=2)") != std::string::npos);
  CHECK(help_of(table, run::kProfile).find("a count") != std::string::npos);
  CHECK(help_of(table, run::kCatalog).find("--level") == std::string::npos);
}

TEST_CASE("option table: store_in puts a shared option into the run's own struct") {
  run::OptionValues v;
  run::OptionTable table;
  run::add_run_options(table, v);
  struct Context {
    double time_scale = 1;
    std::string out = "out/somewhere";
  } ctx;
  table.store_in("time-scale", &ctx.time_scale);
  table.store_in("out", &ctx.out);
  CHECK_THROWS_AS(table.store_in("no-such-option", &ctx.out), std::logic_error);
  CHECK(help_of(table, run::kExperiment).find("--out PATH (=out/somewhere)") != std::string::npos);
  parse(table, run::kExperiment, {"--time-scale", "4"});
  CHECK(ctx.time_scale == 4);
  CHECK(ctx.out == "out/somewhere");
  CHECK(v.time_scale == 1);  // the declaring layer's value is left alone
  parse(table, run::kExperiment, {"--out", "x"});
  CHECK(ctx.out == "x");
  CHECK(v.out.empty());
}
