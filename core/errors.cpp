#include "core/errors.h"

namespace salus::core {

void invariant_failed(const char* invariant, const char* file, int line, const std::string& detail) {
  throw std::logic_error(std::string("internal invariant '") + invariant + "' broken at " + file + ":" +
                         std::to_string(line) + (detail.empty() ? "" : ": " + detail));
}

}  // namespace salus::core
