#pragma once
/// The policy registry: every scheduling policy by name (one table, core/registry.h).
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

/// Creates the policy called `name`. Throws core::InputError
/// "unknown policy 'x' (valid: fifo, srtf, pack, fair, las, priority)" for any other name.
std::unique_ptr<core::Policy> make_policy(std::string_view name);

/// Valid names in registry order.
std::vector<std::string> policy_names();
/// "fifo, srtf, pack, fair, las, priority".
std::string policy_names_joined();

}  // namespace salus::policies
