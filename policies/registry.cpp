#include "policies/registry.h"

#include <algorithm>
#include <stdexcept>

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

// The ScopedPolicy objects alive on this thread, latest last.
thread_local std::vector<const ScopedPolicy*> scoped_policies;

}  // namespace

ScopedPolicy::ScopedPolicy(std::string name, Factory factory) : name_(std::move(name)), factory_(std::move(factory)) {
  if (policy_registry().find(name_) != nullptr) {
    throw std::invalid_argument("policy name '" + name_ + "' is a built-in policy's");
  }
  for (const ScopedPolicy* p : scoped_policies) {
    if (p->name_ == name_) throw std::invalid_argument("policy name '" + name_ + "' is given twice");
  }
  scoped_policies.push_back(this);
}

ScopedPolicy::~ScopedPolicy() {
  scoped_policies.erase(std::find(scoped_policies.begin(), scoped_policies.end(), this));
}

const PolicyRegistry& policy_registry() {
  static constexpr PolicyRegistry kRegistry("policy", kPolicies);
  return kRegistry;
}

std::unique_ptr<core::Policy> make_policy(std::string_view name) {
  for (const ScopedPolicy* p : scoped_policies) {
    if (p->name_ == name) return p->factory_();
  }
  return policy_registry().at(name).factory();
}

std::vector<std::string> policy_names() { return policy_registry().names(); }

std::string policy_names_joined() { return policy_registry().names_joined(); }

}  // namespace salus::policies
