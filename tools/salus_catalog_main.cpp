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
#include "run/output.h"
#include "traces/derivation.h"

namespace po = boost::program_options;
using namespace salus;

namespace {

int body(int argc, char** argv) {
  std::string out;
  po::options_description desc(
      "salus-catalog: write the workload catalog (P, E, iteration time, GPU utilisation on a P100) derived from\n"
      "the architectures of the paper's 15 models and the two test models\n\nOptions");
  desc.add_options()
      ("help,h", "print this help")
      ("version", "print the version")
      ("out", po::value(&out), "write the catalog to this file (default: standard output)");
  po::positional_options_description none;
  po::variables_map vm;
  po::store(run::parse_command_line(argc, argv, desc, &none), vm);
  if (vm.count("help")) {
    std::cout << desc << "\nRegenerate the shipped catalog with: salus-catalog --out traces/profiles/catalog.json\n";
    return 0;
  }
  if (vm.count("version")) {
    std::cout << run::version_text("salus-catalog") << "\n";
    return 0;
  }
  po::notify(vm);
  run::check_output_paths({{"--out", out, run::OutputKind::kFile}});

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
