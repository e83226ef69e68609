#pragma once
/// The policy registry: every scheduling policy by name.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/policy.h"

namespace salus::policies {

/// Creates the policy called `name`. Throws core::InputError
/// "unknown policy 'x' (valid: fifo, srtf, pack, fair, las, priority)" for any other name.
std::unique_ptr<core::Policy> make_policy(std::string_view name);

/// Valid names in registry order.
std::vector<std::string> policy_names();
/// "fifo, srtf, pack, fair, las, priority".
std::string policy_names_joined();

}  // namespace salus::policies
