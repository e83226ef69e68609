#pragma once
/// The policy registry: every scheduling policy by name (one table, core/registry.h).
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/policy.h"
#include "core/registry.h"

namespace salus::policies {

using PolicyFactory = std::unique_ptr<core::Policy> (*)();
using PolicyRegistry = core::Registry<PolicyFactory>;

/// The table: name, description, factory, in the order tools list and run them.
const PolicyRegistry& policy_registry();

/// Creates the policy called `name` (a ScopedPolicy's of that name on this thread first, else the
/// table's). Throws core::InputError
/// "unknown policy 'x' (valid: fifo, srtf, pack, fair, las, priority)" for any other name.
std::unique_ptr<core::Policy> make_policy(std::string_view name);

/// A policy from outside the table, by name, for as long as the object lives and on the thread
/// that made it: make_policy(name) calls `factory` instead of looking in the table. The Python
/// module (python/) gives its users' policies to the runs this way: a cluster makes its policy
/// objects by name, one per GPU (cluster::run_cluster). The table and policy_names() are
/// unchanged; a name of the table is refused (std::invalid_argument), as is one already in scope.
class ScopedPolicy {
 public:
  using Factory = std::function<std::unique_ptr<core::Policy>()>;
  ScopedPolicy(std::string name, Factory factory);
  ~ScopedPolicy();
  ScopedPolicy(const ScopedPolicy&) = delete;
  ScopedPolicy& operator=(const ScopedPolicy&) = delete;

 private:
  std::string name_;
  Factory factory_;
  friend std::unique_ptr<core::Policy> make_policy(std::string_view name);
};

/// Valid names in registry order.
std::vector<std::string> policy_names();
/// "fifo, srtf, pack, fair, las, priority".
std::string policy_names_joined();

}  // namespace salus::policies
