// The doctest main of the GPU suite: where no CUDA GPU is visible it reports the whole run skipped
// (exit 77, ctest's SKIP_RETURN_CODE) instead of passing because nothing ran. Listing the tests
// (what doctest_discover_tests does at build time, often on a machine without a GPU) and the
// other informational options still work there.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <string_view>

#include "gpu_backend/device.h"

namespace {

/// True for doctest's options that only print information and run no test: --list-test-cases,
/// --list-test-suites, --list-reporters, --count, --help, --version, their short forms and their
/// --dt- prefixed forms.
bool informational(std::string_view arg) {
  if (arg.size() < 2 || arg[0] != '-') return false;
  arg.remove_prefix(arg[1] == '-' ? 2 : 1);
  if (arg.substr(0, 3) == "dt-") arg.remove_prefix(3);
  arg = arg.substr(0, arg.find('='));
  for (std::string_view name : {"list-test-cases", "ltc", "list-test-suites", "lts", "list-reporters", "lr",
                                "count", "c", "help", "h", "?", "version", "v"}) {
    if (arg == name) return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  bool info_only = false;
  for (int i = 1; i < argc; ++i) info_only = info_only || informational(argv[i]);
  if (!info_only && !salus::gpu::cuda_available()) {
    std::printf("%s: skipped\n", salus::gpu::cuda_unavailable_reason().c_str());
    return 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
