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

/// The items of a separated list ("fifo, srtf,pack"), each trimmed of spaces, tabs and CRs, empty
/// ones kept ("a,,b," -> a, "", b, ""), so that callers say what is wrong with them; an empty text
/// has no items. The one splitter of comma lists (policies, kinds, workloads, CSV cells).
inline std::vector<std::string> split_list(std::string_view text, char sep = ',') {
  std::vector<std::string> out;
  if (text.empty()) return out;
  auto trim = [](std::string_view v) {
    const std::size_t a = v.find_first_not_of(" \t\r");
    if (a == std::string_view::npos) return std::string();
    return std::string(v.substr(a, v.find_last_not_of(" \t\r") - a + 1));
  };
  std::size_t start = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == sep) {
      out.push_back(trim(text.substr(start, i - start)));
      start = i + 1;
    }
  }
  return out;
}

/// Levenshtein distance between two names (insertions, deletions, substitutions of one byte).
inline std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

/// The candidate nearest to `name` by edit distance when it is close enough to be a misspelling
/// (at most 2 edits, and fewer than half of the name's length), else "". Ties: the first.
template <typename Names>
std::string nearest_name(std::string_view name, const Names& candidates) {
  std::string best;
  std::size_t best_distance = 3;
  for (const auto& c : candidates) {
    const std::string_view candidate(c);
    const std::size_t d = edit_distance(name, candidate);
    if (d < best_distance && 2 * d < std::max(name.size(), candidate.size())) {
      best = std::string(candidate);
      best_distance = d;
    }
  }
  return best;
}

/// "; did you mean 'x'?" for the nearest candidate, or "" when none is close.
template <typename Names>
std::string did_you_mean(std::string_view name, const Names& candidates) {
  const std::string best = nearest_name(name, candidates);
  return best.empty() ? std::string() : "; did you mean '" + best + "'?";
}

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
  /// tool that takes a name beyond the table's). A name within two edits of a valid one adds
  /// "; did you mean 'a'?".
  std::string unknown(std::string_view name, std::string_view also = {}) const {
    std::vector<std::string_view> valid;
    for (const Entry& e : entries_) valid.push_back(e.name);
    return "unknown " + std::string(kind_) + " '" + text_excerpt(name) + "' (valid: " + names_joined() +
           std::string(also) + ")" + did_you_mean(name, valid);
  }

  /// The name of the entry whose factory is `value` ("?" if none): for tables of plain values
  /// (enums), their to_string.
  std::string_view name_of(const Factory& value) const {
    for (const Entry& e : entries_) {
      if (e.factory == value) return e.name;
    }
    return "?";
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
