// docs/programs.md against the option tables themselves (issue 43): every option a program takes
// from run/, real/ and experiments/ has a row in that program's table, whatever its --help looks
// like (scripts/check-docs.py programs checks the tables against --help; this checks --help's
// source, so an option dropped by a parser of --help fails here too).
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <utility>

#include "experiments/options.h"
#include "real/options.h"
#include "run/options.h"

using namespace salus;

namespace {

/// The rows of `program`'s table in docs/programs.md (between its markers); empty when none.
std::string table_of(const std::string& doc, const std::string& program) {
  const std::string open = "<!-- options: " + program + " -->";
  const std::size_t begin = doc.find(open);
  if (begin == std::string::npos) return "";
  const std::size_t end = doc.find("<!-- end options -->", begin);
  return doc.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

}  // namespace

TEST_CASE("docs/programs.md: a row for every option each program takes from the option tables") {
  std::ifstream in(std::string(SALUS_SOURCE_DIR) + "/docs/programs.md");
  REQUIRE(in);
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();

  run::OptionValues v;
  run::OptionTable table;
  run::add_run_options(table, v);
  real::RealOptionValues r;
  real::add_real_options(table, r);
  experiments::ExperimentContext ctx;
  experiments::ExperimentOptionValues own;
  experiments::add_experiment_options(table, ctx, own);

  const std::pair<run::Program, const char*> programs[] = {
      {run::kSim, "salus-sim"},           {run::kRun, "salus-run"},
      {run::kProfile, "salus-profile"},   {run::kTraceGenerate, "salus-trace generate"},
      {run::kTraceStats, "salus-trace stats"}, {run::kExperiment, "salus-experiment"},
      {run::kCatalog, "salus-catalog"}};
  int rows = 0;
  for (const auto& [program, name] : programs) {
    const std::string program_name = name;
    CAPTURE(program_name);
    const std::string rows_of = table_of(doc, name);
    REQUIRE_FALSE(rows_of.empty());
    for (const run::Option& o : table.options()) {
      if (!(o.programs & program) || (o.hidden & program)) continue;
      CAPTURE(o.name);
      // A row opens "| `--NAME" followed by its value name or the closing backquote.
      const std::string row = "| `--" + o.name;
      const std::size_t at = rows_of.find(row);
      CHECK((at != std::string::npos &&
             (rows_of[at + row.size()] == ' ' || rows_of[at + row.size()] == '`')));
      ++rows;
    }
  }
  CHECK(rows > 100);  // the tables were read: every program's rows, not none
}
