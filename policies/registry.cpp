#include "policies/registry.h"

#include "policies/builtin.h"

namespace salus::policies {
namespace {

// Adding a policy: write its factory and description in builtin.h and list it here.
constexpr PolicyRegistry::Entry kPolicies[] = {
    {"fifo", kFifoDescription, &make_fifo},
    {"srtf", kSrtfDescription, &make_srtf},
    {"pack", kPackDescription, &make_pack},
    {"fair", kFairDescription, &make_fair},
    {"las", kLasDescription, &make_las},
    {"priority", kPriorityDescription, &make_priority},
};

}  // namespace

const PolicyRegistry& policy_registry() {
  static constexpr PolicyRegistry kRegistry("policy", kPolicies);
  return kRegistry;
}

std::unique_ptr<core::Policy> make_policy(std::string_view name) { return policy_registry().at(name).factory(); }

std::vector<std::string> policy_names() { return policy_registry().names(); }

std::string policy_names_joined() { return policy_registry().names_joined(); }

}  // namespace salus::policies
