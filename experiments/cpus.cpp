#include "experiments/cpus.h"

#include <sched.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

#include "core/errors.h"

namespace salus::experiments {

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

void add_cpus_option(boost::program_options::options_description& desc, std::string& value,
                     const std::string& default_text) {
  const std::string help = "run this program's threads (and the programs it starts) on these CPUs only, e.g. 0 or 0-1 "
                           "or 0,2 (default: " + default_text +
                           "; the README says why the CPU device's measurements want them pinned)";
  desc.add_options()("cpus", boost::program_options::value(&value), help.c_str());
}

void apply_cpus_option(const std::string& value) {
  if (!value.empty()) pin_to_cpus(parse_cpu_list(value));
}

}  // namespace salus::experiments
