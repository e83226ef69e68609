#include "run/cpus.h"

#include <sched.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

#include "core/errors.h"
#include "traces/catalog.h"

namespace salus::run {

namespace {

/// A CPU number in `text` (digits only, below CPU_SETSIZE).
int parse_cpu(const std::string& text, const std::string& whole) {
  const bool digits = !text.empty() && text.size() <= 6 &&
                      std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
  if (!digits) {
    throw core::InputError("--cpus: '" + whole + "' is not a CPU list (CPU numbers and ranges: 0, 2-3, 0,2-3)");
  }
  const int cpu = std::stoi(text);
  if (cpu >= CPU_SETSIZE) throw core::InputError("--cpus: CPU " + text + " is beyond the last this system can name");
  return cpu;
}

}  // namespace

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> out;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return out;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) out.push_back(c);
  }
  return out;
}

std::vector<int> parse_cpu_list(const std::string& text) {
  if (text == "all") return allowed_cpus();
  std::vector<int> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, comma - start);
    const std::size_t dash = item.find('-');
    if (dash == std::string::npos) {
      out.push_back(parse_cpu(item, text));
    } else {
      const int lo = parse_cpu(item.substr(0, dash), text);
      const int hi = parse_cpu(item.substr(dash + 1), text);
      if (hi < lo) throw core::InputError("--cpus: the range " + item + " runs backwards");
      for (int c = lo; c <= hi; ++c) out.push_back(c);
    }
    start = comma + 1;
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string cpu_list_text(const std::vector<int>& cpus) {
  std::string out;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += std::to_string(cpus[i]);
    if (j > i) out += "-" + std::to_string(cpus[j]);
    i = j + 1;
  }
  return out;
}

void pin_to_cpus(const std::vector<int>& cpus) {
  if (cpus.empty()) throw core::InputError("--cpus: empty list");
  const std::vector<int> allowed = allowed_cpus();
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus) {
    if (!std::binary_search(allowed.begin(), allowed.end(), c)) {
      throw core::InputError("--cpus: CPU " + std::to_string(c) + " is not available (this process may use " +
                             cpu_list_text(allowed) + ")");
    }
    CPU_SET(c, &set);
  }
  if (sched_setaffinity(0, sizeof set, &set) != 0) {
    throw core::InputError("--cpus: could not pin to " + cpu_list_text(cpus) + ": " + std::strerror(errno));
  }
}

void apply_cpus_option(const std::string& value) {
  if (!value.empty()) pin_to_cpus(parse_cpu_list(value));
}

std::vector<int> provenance_cpus(const std::string& source) {
  // salus-profile writes "measured on <device> (math fp32, CPUs 0-1,3) by salus-profile ...".
  const std::string key = "CPUs ";
  const std::size_t at = source.find(key);
  if (at == std::string::npos) return {};
  const std::size_t end = source.find(')', at);
  if (end == std::string::npos) return {};
  try {
    return parse_cpu_list(source.substr(at + key.size(), end - at - key.size()));
  } catch (const core::InputError&) {
    return {};
  }
}

CatalogCpus catalog_cpus(const traces::Catalog& catalog) {
  CatalogCpus out;
  for (const std::string& name : catalog.names()) {
    const std::string& source = catalog.find(name)->source;
    if (source.rfind("measured on cpu ", 0) != 0) continue;  // estimated, hand-written or another device
    const std::vector<int> cpus = provenance_cpus(source);
    if (cpus.empty()) {
      out.unrecorded.push_back(name);
    } else if (std::find(out.lists.begin(), out.lists.end(), cpus) == out.lists.end()) {
      out.lists.push_back(cpus);
    }
  }
  return out;
}

namespace {

std::string cpus_phrase(const std::vector<int>& cpus) {
  return (cpus.size() == 1 ? "CPU " : "CPUs ") + cpu_list_text(cpus);
}

std::string count_phrase(std::size_t n) { return std::to_string(n) + (n == 1 ? " CPU" : " CPUs"); }

/// "lenet_32, mlp_64" (at most three names, then "and N more").
std::string some_names(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < 3; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > 3) out += " and " + std::to_string(names.size() - 3) + " more";
  return out;
}

/// "CPU 0 and CPUs 0-1": the lists of a catalog whose entries disagree.
std::string lists_phrase(const CatalogCpus& c) {
  std::string out;
  for (std::size_t i = 0; i < c.lists.size(); ++i) {
    out += (i == 0 ? "" : i + 1 == c.lists.size() ? " and " : ", ") + cpus_phrase(c.lists[i]);
  }
  return out;
}

/// What is off with a catalog's record when it names no single list ("" when it does, or has no
/// cpu-device figures).
std::string record_caveat(const CatalogCpus& c, const std::string& cat) {
  if (c.lists.size() > 1) return cat + " mixes cpu-device figures measured on " + lists_phrase(c);
  if (!c.unrecorded.empty()) return cat + " does not say which CPUs " + some_names(c.unrecorded) + " were measured on";
  return "";
}

}  // namespace

std::string pin_for_device(const std::string& program, const std::string& value, const std::string& device,
                           const traces::Catalog* catalog) {
  const std::vector<int> allowed = allowed_cpus();
  if (device != "cpu" || allowed.empty()) {
    if (value != "all") apply_cpus_option(value);
    return "";
  }
  const CatalogCpus measured = catalog ? catalog_cpus(*catalog) : CatalogCpus{};
  const std::string cat = catalog ? "catalog " + catalog->path() : "";
  if (!value.empty()) {
    const std::vector<int> cpus = parse_cpu_list(value);
    const std::vector<int>* recorded = measured.single();
    if (recorded && recorded->size() != cpus.size()) {
      throw core::InputError(
          "--cpus " + value + " runs the cpu device's lanes on " + count_phrase(cpus.size()) + ", but " + cat +
          " was measured on " + count_phrase(recorded->size()) + " (" + cpus_phrase(*recorded) +
          "): its times describe another device (docs/real-backend.md, \"Pinning: --cpus\"). Drop --cpus, or "
          "measure a catalog on these CPUs with salus-profile --cpus " +
          cpu_list_text(cpus));
    }
    pin_to_cpus(cpus);
    if (recorded && *recorded != cpus) {
      return "--cpus " + value + ": " + cat + " was measured on " + cpus_phrase(*recorded) +
             ", as many CPUs but others (virtual CPUs need not run at one speed)";
    }
    if (!catalog && cpus.size() > 1) {
      return program + " runs the cpu device on " + cpus_phrase(cpus) +
             ", not pinned to one: lanes run side by side there, and the catalog records it (salus-sim says so)";
    }
    return record_caveat(measured, cat);
  }
  // No --cpus: one CPU, or the CPUs the catalog's figures were measured on.
  const std::string choose = "; --cpus LIST or --cpus all to choose";
  if (const std::vector<int>* recorded = measured.single()) {
    const bool usable = std::all_of(recorded->begin(), recorded->end(),
                                    [&](int c) { return std::binary_search(allowed.begin(), allowed.end(), c); });
    if (usable) {
      pin_to_cpus(*recorded);
      return program + " runs the cpu device on " + cpus_phrase(*recorded) + ", where " + cat +
             " was measured (the default" + choose + ")";
    }
    std::vector<int> cpus(allowed.begin(), allowed.begin() + static_cast<std::ptrdiff_t>(
                                                               std::min(recorded->size(), allowed.size())));
    pin_to_cpus(cpus);
    return program + " runs the cpu device on " + cpus_phrase(cpus) + ": " + cat + " was measured on " +
           cpus_phrase(*recorded) + ", which this process may not use (it may use " + cpu_list_text(allowed) + ")" +
           choose;
  }
  // The first CPU, as salus-experiment fidelity chooses: the same CPU from run to run (the CPU a
  // process happened to start on moves, and with it the neighbours it shares a core with).
  const int cpu = allowed.front();
  pin_to_cpus({cpu});
  std::string note = program + " runs the cpu device on CPU " + std::to_string(cpu) +
                     " (the default: one CPU, the first this process may use" +
                     (catalog ? std::string(", as salus-profile measures") : std::string(", recorded in the catalog")) +
                     choose + ")";
  if (const std::string caveat = record_caveat(measured, cat); !caveat.empty()) note += "; " + caveat;
  return note;
}

std::string catalog_cpus_note(const traces::Catalog& catalog) {
  const CatalogCpus measured = catalog_cpus(catalog);
  const std::string cat = "catalog " + catalog.path();
  const std::string predicts =
      "salus-profile measures on one CPU unless --cpus says otherwise, and salus-run runs on the catalog's CPUs";
  if (measured.lists.size() > 1) {
    return record_caveat(measured, cat) +
           ": lanes on one CPU take turns, on several they run side by side, and where two of these differ in "
           "number no one run is predicted; measure them again in one salus-profile run";
  }
  if (const std::vector<int>* recorded = measured.single(); recorded && recorded->size() > 1) {
    return cat + " was measured on the cpu device on " + count_phrase(recorded->size()) + " (" +
           cpus_phrase(*recorded) + "), not pinned to one: its lanes could run side by side on separate cores, so this "
           "predicts salus-run on those CPUs only (" + predicts + ")";
  }
  if (!measured.unrecorded.empty()) {
    return cat + " does not say which CPUs its cpu-device figures (" + some_names(measured.unrecorded) +
           ") were measured on: if not on one, its pairs describe lanes side by side on several cores; measure it "
           "again with salus-profile, which records them";
  }
  return "";
}

}  // namespace salus::run
