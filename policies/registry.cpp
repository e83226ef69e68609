#include "policies/registry.h"

#include "core/errors.h"
#include "policies/builtin.h"

namespace salus::policies {
namespace {

struct Entry {
  const char* name;
  std::unique_ptr<core::Policy> (*make)();
};

// Adding a policy: write its factory in builtin.h and list it here.
constexpr Entry kPolicies[] = {
    {"fifo", &make_fifo},
    {"srtf", &make_srtf},
    {"pack", &make_pack},
    {"fair", &make_fair},
    {"las", &make_las},
    {"priority", &make_priority},
};

}  // namespace

std::unique_ptr<core::Policy> make_policy(std::string_view name) {
  for (const Entry& e : kPolicies) {
    if (name == e.name) return e.make();
  }
  throw core::InputError("unknown policy '" + std::string(name) + "' (valid: " + policy_names_joined() + ")");
}

std::vector<std::string> policy_names() {
  std::vector<std::string> names;
  for (const Entry& e : kPolicies) names.emplace_back(e.name);
  return names;
}

std::string policy_names_joined() {
  std::string out;
  for (const Entry& e : kPolicies) {
    if (!out.empty()) out += ", ";
    out += e.name;
  }
  return out;
}

}  // namespace salus::policies
