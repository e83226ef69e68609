#include "cluster/cluster_file.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <fstream>

#include <unistd.h>
#include <sstream>

#include "core/errors.h"

namespace salus::cluster {

namespace {

std::string trim(const std::string& s) {
  std::size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return s.substr(a, b - a);
}

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  std::string cell;
  while (std::getline(ss, cell, ',')) out.push_back(trim(cell));
  if (!line.empty() && line.back() == ',') out.emplace_back();
  return out;
}

}  // namespace

ClusterSpec ClusterSpec::uniform(std::int32_t n, core::Bytes capacity) {
  ClusterSpec c;
  for (std::int32_t i = 0; i < n; ++i) c.gpus.push_back({capacity, i});
  return c;
}

std::string ClusterSpec::describe() const {
  if (gpus.empty()) return "no GPUs";
  const std::int32_t nodes = gpus.back().node + 1;
  bool same = true;
  for (const GpuSpec& g : gpus) same &= g.capacity == gpus.front().capacity;
  std::string d = std::to_string(gpus.size()) + (gpus.size() == 1 ? " GPU" : " GPUs");
  if (nodes != static_cast<std::int32_t>(gpus.size())) d += " in " + std::to_string(nodes) + " nodes";
  d += same ? " of " + core::format_size(gpus.front().capacity) : " of mixed memory";
  return d;
}

core::Bytes ClusterSpec::largest_capacity() const {
  core::Bytes c = 0;
  for (const GpuSpec& g : gpus) c = std::max(c, g.capacity);
  return c;
}

ClusterSpec load_cluster_file(const std::string& path) {
  ::close(core::open_input_file(path, "cluster file"));  // names a directory, FIFO or unreadable file
  std::ifstream f(path);
  if (!f) throw core::InputError(path + ": cannot open the cluster file");
  const std::vector<std::string> columns = {"nodes", "gpus_per_node", "gpu_mem"};
  int col[3] = {-1, -1, -1};
  bool header = false;
  ClusterSpec c;
  std::int32_t node = 0;
  std::string line;
  int lineno = 0;
  auto fail = [&](const std::string& what) { throw core::InputError(path + ":" + std::to_string(lineno) + ": " + what); };
  while (std::getline(f, line)) {
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    const std::vector<std::string> cells = split(t);
    if (!header) {
      for (std::size_t i = 0; i < cells.size(); ++i) {
        bool known = false;
        for (std::size_t k = 0; k < columns.size(); ++k) {
          if (cells[i] != columns[k]) continue;
          if (col[k] >= 0) fail("column '" + cells[i] + "' appears twice");
          col[k] = static_cast<int>(i);
          known = true;
        }
        if (!known) fail("unknown column '" + cells[i] + "' (valid: nodes, gpus_per_node, gpu_mem)");
      }
      for (std::size_t k = 0; k < columns.size(); ++k) {
        if (col[k] < 0) fail("missing column '" + columns[k] + "' (the header is nodes,gpus_per_node,gpu_mem)");
      }
      header = true;
      continue;
    }
    if (cells.size() != 3) fail("expected 3 fields, got " + std::to_string(cells.size()));
    auto count = [&](int k) {
      const std::string& s = cells[static_cast<std::size_t>(col[k])];
      std::int64_t v = 0;
      const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
      if (r.ec != std::errc() || r.ptr != s.data() + s.size() || v < 1 || v > 1'000'000) {
        fail(columns[static_cast<std::size_t>(k)] + ": must be an integer in [1, 1000000], got '" + s + "'");
      }
      return static_cast<std::int32_t>(v);
    };
    const std::int32_t nodes = count(0);
    const std::int32_t per_node = count(1);
    const std::string& mem = cells[static_cast<std::size_t>(col[2])];
    std::string error;
    const auto cap = core::parse_size(mem, &error);
    if (mem.empty() || !std::isalpha(static_cast<unsigned char>(mem.back()))) {
      fail("gpu_mem: needs a unit (e.g. 16GiB, 80GB), got '" + mem + "'");
    }
    if (!cap || *cap <= 0) fail("gpu_mem: " + (error.empty() ? "must be a positive size" : error) + ", got '" + mem + "'");
    if (static_cast<std::int64_t>(c.gpus.size()) + static_cast<std::int64_t>(nodes) * per_node > 1'000'000) {
      fail("more than 1000000 GPUs in all");
    }
    for (std::int32_t n = 0; n < nodes; ++n, ++node) {
      for (std::int32_t g = 0; g < per_node; ++g) c.gpus.push_back({*cap, node});
    }
  }
  if (!header) throw core::InputError(path + ":" + std::to_string(lineno) + ": no header (nodes,gpus_per_node,gpu_mem)");
  if (c.gpus.empty()) throw core::InputError(path + ":" + std::to_string(lineno) + ": no GPUs (no rows after the header)");
  return c;
}

}  // namespace salus::cluster
