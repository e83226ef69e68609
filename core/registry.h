#pragma once
/// One registry template for every kind of named thing a user picks on a command line: policies,
/// interference models, devices, executors, experiments. Each kind keeps one constant table of
/// entries (name, one-line description, factory); `--help` prints the table and every "unknown
/// name" error lists the same names, so the two never disagree.
#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/errors.h"

namespace salus::core {

template <typename Factory>
struct RegistryEntry {
  std::string_view name;
  std::string_view description;  ///< one line, for --help
  Factory factory;
};

/// A view of one constant table. `kind` names what is registered ("policy", "device", ...), for
/// the error messages. (A pointer and a size rather than std::span: CUDA translation units that
/// include a registry's header are compiled as C++17.)
template <typename Factory>
class Registry {
 public:
  using Entry = RegistryEntry<Factory>;
  /// The table, for range-for.
  struct Entries {
    const Entry* first;
    std::size_t count;
    const Entry* begin() const { return first; }
    const Entry* end() const { return first + count; }
    std::size_t size() const { return count; }
  };

  template <std::size_t N>
  constexpr Registry(std::string_view kind, const Entry (&entries)[N]) : kind_(kind), entries_{entries, N} {}

  std::string_view kind() const { return kind_; }
  Entries entries() const { return entries_; }

  /// The entry called `name`, or nullptr.
  const Entry* find(std::string_view name) const {
    for (const Entry& e : entries_) {
      if (e.name == name) return &e;
    }
    return nullptr;
  }

  /// The entry called `name`; throws InputError "unknown KIND 'x' (valid: a, b, c)" otherwise.
  const Entry& at(std::string_view name) const {
    if (const Entry* e = find(name)) return *e;
    throw InputError(unknown(name));
  }

  /// "unknown KIND 'x' (valid: a, b, c)"; `also` is appended to the list (e.g. ", or all" for a
  /// tool that takes a name beyond the table's).
  std::string unknown(std::string_view name, std::string_view also = {}) const {
    return "unknown " + std::string(kind_) + " '" + std::string(name) + "' (valid: " + names_joined() +
           std::string(also) + ")";
  }

  std::vector<std::string> names() const {
    std::vector<std::string> out;
    out.reserve(entries_.size());
    for (const Entry& e : entries_) out.emplace_back(e.name);
    return out;
  }

  /// "a, b, c" in table order.
  std::string names_joined(std::string_view separator = ", ") const {
    std::string out;
    for (const Entry& e : entries_) {
      if (!out.empty()) out += separator;
      out += e.name;
    }
    return out;
  }

  /// The table for --help: one "  name  description" line per entry, names padded to one width.
  std::string help(std::string_view indent = "  ") const {
    std::size_t width = 0;
    for (const Entry& e : entries_) width = std::max(width, e.name.size());
    std::string out;
    for (const Entry& e : entries_) {
      out += std::string(indent) + std::string(e.name) + std::string(width - e.name.size() + 2, ' ') +
             std::string(e.description) + "\n";
    }
    return out;
  }

 private:
  std::string_view kind_;
  Entries entries_;
};

}  // namespace salus::core
