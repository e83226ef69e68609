// salus-catalog: writes the workload catalog derived from the models' architectures
// (traces/derivation.h). The shipped traces/profiles/catalog.json is this program's output:
//   salus-catalog --out traces/profiles/catalog.json
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>

#include <boost/program_options.hpp>

#include "core/errors.h"
#include "run/cli.h"
#include "run/options.h"
#include "run/output.h"
#include "traces/derivation.h"

namespace po = boost::program_options;
using namespace salus;

namespace {

int body(int argc, char** argv) {
  run::OptionValues v;
  run::OptionTable table;
  run::add_run_options(table, v);
  po::variables_map vm = table.parse(run::kCatalog, argc, argv);
  if (run::print_help_or_version(
          table, run::kCatalog, "salus-catalog",
          "salus-catalog: write the workload catalog (P, E, iteration time, GPU utilisation on a P100) derived from\n"
          "the architectures of the paper's 15 models and the two test models\n\nOptions",
          vm, "\nRegenerate the shipped catalog with: salus-catalog --out traces/profiles/catalog.json\n")) {
    return 0;
  }
  po::notify(vm);
  const std::string& out = v.out;
  table.check_paths(run::kCatalog, vm);

  const std::string text = traces::catalog_json();
  if (out.empty()) {
    std::cout << text;
    return 0;
  }
  run::write_text_file(out, text);  // a temporary renamed into place
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return run::guarded_main("salus-catalog", body, argc, argv); }
