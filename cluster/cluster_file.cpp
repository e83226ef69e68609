#include "cluster/cluster_file.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <functional>
#include <limits>
#include <string_view>
#include <utility>

#include <sstream>

#include "core/errors.h"
#include "core/registry.h"
#include "core/text_input.h"

namespace salus::cluster {

namespace {

std::string trim(const std::string& s) {
  std::size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return s.substr(a, b - a);
}

std::vector<std::string> split(const std::string& line) { return core::split_list(line); }

// The cells of the next row that is not blank or a comment ('#'), counting lines in `lineno`;
// false at the end of the file. A row is held to the bounds of core/text_input.h: a line of at
// most kMaxLineBytes (load_cluster_file reads no further than one past it), kMaxFieldsPerLine
// fields of at most kMaxFieldBytes each (counted between commas, blanks included; columns from 1).
bool next_row(std::istream& f, const std::string& path, int& lineno, std::vector<std::string>& cells) {
  std::string line;
  while (std::getline(f, line)) {
    ++lineno;
    if (line.size() > core::kMaxLineBytes + 1) core::line_too_long(path, lineno);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    std::size_t fields = 0;
    for (std::size_t start = 0;;) {
      const std::size_t comma = line.find(',', start);
      const std::size_t end = comma == std::string::npos ? line.size() : comma;
      if (end - start > core::kMaxFieldBytes) core::field_too_long(path, lineno, start + 1, end - start);
      if (++fields > core::kMaxFieldsPerLine) core::too_many_fields(path, lineno);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    cells = split(t);
    return true;
  }
  return false;
}

}  // namespace

std::string format_speed(std::int64_t speed_ppm) {
  std::string s = std::to_string(speed_ppm / kSpeedOne);
  std::int64_t frac = speed_ppm % kSpeedOne;
  if (frac == 0) return s;
  std::string digits = std::to_string(frac + kSpeedOne).substr(1);  // six digits
  while (digits.back() == '0') digits.pop_back();
  return s + "." + digits;
}

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
  bool one_speed = true;
  for (const GpuSpec& g : gpus) one_speed &= g.speed_ppm == kSpeedOne;
  if (!kinds.empty()) {
    std::vector<std::int64_t> per_kind(kinds.size(), 0);
    std::int64_t unnamed = 0;
    for (const GpuSpec& g : gpus) ++(g.kind >= 0 ? per_kind[static_cast<std::size_t>(g.kind)] : unnamed);
    d += " (";
    for (std::size_t k = 0; k < kinds.size(); ++k) {
      d += (k == 0 ? "" : ", ") + std::to_string(per_kind[k]) + " " + kinds[k].name;
      if (kinds[k].speed_ppm != kSpeedOne) d += " at speed " + format_speed(kinds[k].speed_ppm);
    }
    if (unnamed > 0) d += ", " + std::to_string(unnamed) + " unnamed";
    d += ")";
  } else if (!one_speed) {
    d += " at mixed speeds";
  }
  return d;
}

core::Bytes ClusterSpec::largest_capacity() const {
  core::Bytes c = 0;
  for (const GpuSpec& g : gpus) c = std::max(c, g.capacity);
  return c;
}

core::Bytes ClusterSpec::capacity_for_kinds(std::string_view names) const {
  if (names.empty() || kinds.empty()) return largest_capacity();
  core::Bytes c = 0;
  for (const std::string& name : core::split_list(names, '|')) {
    for (std::size_t k = 0; k < kinds.size(); ++k) {
      if (kinds[k].name != name) continue;
      for (const GpuSpec& g : gpus) {
        if (g.kind == static_cast<std::int32_t>(k)) c = std::max(c, g.capacity);
      }
    }
  }
  return c > 0 ? c : largest_capacity();
}

core::TimeNs gpu_iter_ns(core::TimeNs iter_ns, std::int64_t speed_ppm) {
  if (speed_ppm == kSpeedOne) return iter_ns;
  __extension__ using Wide = __int128;  // iter_ns * 1e6 may pass 2^63
  const Wide t = (2 * static_cast<Wide>(iter_ns) * kSpeedOne + speed_ppm) / (2 * static_cast<Wide>(speed_ppm));
  return static_cast<core::TimeNs>(std::clamp<Wide>(t, 1, std::numeric_limits<core::TimeNs>::max()));
}

core::Bytes alibaba_model_memory(const std::string& model) {
  static constexpr std::pair<std::string_view, core::Bytes> kModels[] = {
      {"P100", 16 * core::kGiB}, {"V100M16", 16 * core::kGiB}, {"V100M32", 32 * core::kGiB},
      {"T4", 16 * core::kGiB},   {"A10", 24 * core::kGiB}};
  for (const auto& [name, mem] : kModels) {
    if (name == model) return mem;
  }
  return 0;
}

namespace {

using Fail = std::function<void(const std::string&)>;

// A speed "1", "0.5", "2.25": up to 6 decimals, in (0, 1000], as parts per million.
std::int64_t parse_speed(const std::string& s, const Fail& fail) {
  std::int64_t whole = 0, frac = 0, scale = kSpeedOne;
  std::size_t i = 0;
  bool digits = false;
  for (; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) && whole <= 1000; ++i, digits = true) {
    whole = whole * 10 + (s[i] - '0');
  }
  if (i < s.size() && s[i] == '.') {
    for (++i; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) && scale > 1; ++i, digits = true) {
      scale /= 10;
      frac += (s[i] - '0') * scale;
    }
  }
  const std::int64_t ppm = whole * kSpeedOne + frac;
  if (!digits || i != s.size() || ppm <= 0 || ppm > 1000 * kSpeedOne) {
    fail("speed: must be a decimal in (0, 1000] with at most 6 decimals, got '" + s + "'");
  }
  return ppm;
}

// The kind named `name` of memory `mem` and speed `speed`, added when new; a name seen before
// with other figures is an error.
std::int32_t kind_index(ClusterSpec& c, const std::string& name, core::Bytes mem, std::int64_t speed, const Fail& fail) {
  for (std::size_t k = 0; k < c.kinds.size(); ++k) {
    const GpuKind& g = c.kinds[k];
    if (g.name != name) continue;
    if (g.memory != mem || g.speed_ppm != speed) {
      fail("kind '" + name + "' was given " + core::format_size(g.memory) + " at speed " +
           std::to_string(g.speed_ppm) + " ppm before, here " + core::format_size(mem) + " at " +
           std::to_string(speed) + " ppm (a kind has one memory and one speed)");
    }
    return static_cast<std::int32_t>(k);
  }
  if (c.kinds.size() >= kMaxKinds) fail("more than " + std::to_string(kMaxKinds) + " GPU kinds");
  c.kinds.push_back({name, mem, speed});
  return static_cast<std::int32_t>(c.kinds.size() - 1);
}

// Alibaba cluster-trace-gpu-v2023's node list: sn,cpu_milli,memory_mib,gpu,model, one row per node.
ClusterSpec load_alibaba_nodes(std::istream& f, const std::string& path, const std::vector<std::string>& header,
                               int header_line) {
  int col_gpu = -1, col_model = -1;
  for (std::size_t i = 0; i < header.size(); ++i) {
    if (header[i] == "gpu") col_gpu = static_cast<int>(i);
    if (header[i] == "model") col_model = static_cast<int>(i);
  }
  int lineno = header_line;
  const Fail fail = [&](const std::string& what) {
    throw core::InputError(path + ":" + std::to_string(lineno) + ": " + what);
  };
  if (col_gpu < 0 || col_model < 0) {
    fail("an Alibaba v2023 node list (header sn, ...) needs columns 'gpu' and 'model'");
  }
  ClusterSpec c;
  std::int64_t no_gpu = 0;
  std::vector<std::string> unknown;
  std::int32_t node = 0;
  std::vector<std::string> cells;
  while (next_row(f, path, lineno, cells)) {
    if (cells.size() != header.size()) {
      fail("expected " + std::to_string(header.size()) + " fields, got " + std::to_string(cells.size()));
    }
    const std::string& g = cells[static_cast<std::size_t>(col_gpu)];
    std::int64_t gpus = 0;
    const auto r = std::from_chars(g.data(), g.data() + g.size(), gpus);
    if (r.ec != std::errc() || r.ptr != g.data() + g.size() || gpus < 0 || gpus > 1024) {
      fail("gpu: must be an integer in [0, 1024], got '" + g + "'");
    }
    if (gpus == 0) {
      ++no_gpu;
      continue;
    }
    const std::string& model = cells[static_cast<std::size_t>(col_model)];
    if (model.empty()) fail("model is missing on a node with GPUs");
    core::Bytes mem = alibaba_model_memory(model);
    if (mem == 0) {
      mem = kAlibabaUnknownMemory;
      if (std::find(unknown.begin(), unknown.end(), model) == unknown.end()) unknown.push_back(model);
    }
    if (c.gpus.size() + static_cast<std::size_t>(gpus) > 1'000'000) fail("more than 1000000 GPUs in all");
    const std::int32_t kind = kind_index(c, model, mem, kSpeedOne, fail);
    for (std::int64_t i = 0; i < gpus; ++i) c.gpus.push_back({mem, node, kind, kSpeedOne});
    ++node;
  }
  if (c.gpus.empty()) throw core::InputError(path + ":" + std::to_string(lineno) + ": no node with GPUs");
  std::string kinds;
  for (std::size_t k = 0; k < c.kinds.size(); ++k) {
    std::int64_t n = 0;
    for (const GpuSpec& s : c.gpus) n += s.kind == static_cast<std::int32_t>(k);
    kinds += (k == 0 ? "" : ", ") + c.kinds[k].name + " " + std::to_string(n);
  }
  c.notes.push_back("cluster: Alibaba v2023 node list: " + std::to_string(node) + " nodes, " + std::to_string(c.gpus.size()) +
                    " GPUs, one kind per model (" + kinds + "), speed 1 for every kind (--kind-speed sets others)");
  if (!unknown.empty()) {
    std::string names;
    for (const std::string& m : unknown) names += (names.empty() ? "" : ", ") + m;
    c.notes.push_back("cluster: GPU models of no published memory (" + names + "): assumed " +
                      core::format_size(kAlibabaUnknownMemory) + " each");
  }
  if (no_gpu > 0) {
    c.notes.push_back("cluster: skipped " + std::to_string(no_gpu) + (no_gpu == 1 ? " node" : " nodes") +
                      " with no GPU (gpu 0)");
  }
  return c;
}

}  // namespace

void set_kind_speeds(ClusterSpec& c, const std::string& spec, const std::string& what) {
  const Fail fail = [&](const std::string& m) { throw core::InputError(what + ": " + m); };
  std::string names;
  for (const GpuKind& k : c.kinds) names += (names.empty() ? "" : ", ") + k.name;
  if (c.kinds.empty()) fail("the cluster's GPUs have no kinds (a cluster file with a kind column, or a node list)");
  std::string note;
  for (const std::string& item : core::split_list(spec)) {
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos) fail("expected KIND=SPEED, got '" + item + "'");
    const std::string name = trim(item.substr(0, eq));
    const std::int64_t speed = parse_speed(trim(item.substr(eq + 1)), fail);
    std::int32_t kind = -1;
    for (std::size_t k = 0; k < c.kinds.size(); ++k) {
      if (c.kinds[k].name == name) kind = static_cast<std::int32_t>(k);
    }
    if (kind < 0) fail("unknown kind '" + name + "' (kinds: " + names + ")");
    c.kinds[static_cast<std::size_t>(kind)].speed_ppm = speed;
    for (GpuSpec& g : c.gpus) {
      if (g.kind == kind) g.speed_ppm = speed;
    }
    note += (note.empty() ? "" : ", ") + name + " " + format_speed(speed);
  }
  if (note.empty()) fail("expected KIND=SPEED[,KIND=SPEED...], got '" + spec + "'");
  c.notes.push_back("cluster: kind speeds from " + what + ": " + note + " (iterations take iter_ns / speed there)");
}

ClusterSpec load_cluster_file(const std::string& path) {
  return load_cluster_text(core::read_text_file(path, "cluster file", core::TextBound::kLines), path);
}

ClusterSpec load_cluster_text(std::string_view text, const std::string& path) {
  std::istringstream f{std::string(text)};
  return read_cluster(f, path);
}

ClusterSpec read_cluster(std::istream& f, const std::string& path) {
  enum { kNodes, kPerNode, kMem, kKind, kSpeed, kColumns };
  const std::vector<std::string> columns = {"nodes", "gpus_per_node", "gpu_mem", "kind", "speed"};
  constexpr int kRequired = 3;
  int col[kColumns] = {-1, -1, -1, -1, -1};
  std::size_t width = 0;
  bool header = false;
  ClusterSpec c;
  std::int32_t node = 0;
  int lineno = 0;
  const Fail fail = [&](const std::string& what) {
    throw core::InputError(path + ":" + std::to_string(lineno) + ": " + what);
  };
  std::vector<std::string> cells;
  while (next_row(f, path, lineno, cells)) {
    if (!header) {
      if (!cells.empty() && cells[0] == "sn") return load_alibaba_nodes(f, path, cells, lineno);
      for (std::size_t i = 0; i < cells.size(); ++i) {
        bool known = false;
        for (std::size_t k = 0; k < columns.size(); ++k) {
          if (cells[i] != columns[k]) continue;
          if (col[k] >= 0) fail("column '" + cells[i] + "' appears twice");
          col[k] = static_cast<int>(i);
          known = true;
        }
        if (!known) {
          fail("unknown column '" + cells[i] +
               "' (valid: nodes, gpus_per_node, gpu_mem, kind, speed; or an Alibaba v2023 node list: sn, ..., gpu, model)");
        }
      }
      for (std::size_t k = 0; k < kRequired; ++k) {
        if (col[k] < 0) fail("missing column '" + columns[k] + "' (the header is nodes,gpus_per_node,gpu_mem)");
      }
      width = cells.size();
      header = true;
      continue;
    }
    if (cells.size() != width) fail("expected " + std::to_string(width) + " fields, got " + std::to_string(cells.size()));
    auto count = [&](int k) {
      const std::string& s = cells[static_cast<std::size_t>(col[k])];
      std::int64_t v = 0;
      const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
      if (r.ec != std::errc() || r.ptr != s.data() + s.size() || v < 1 || v > 1'000'000) {
        fail(columns[static_cast<std::size_t>(k)] + ": must be an integer in [1, 1000000], got '" + s + "'");
      }
      return static_cast<std::int32_t>(v);
    };
    const std::int32_t nodes = count(kNodes);
    const std::int32_t per_node = count(kPerNode);
    const std::string& mem = cells[static_cast<std::size_t>(col[kMem])];
    std::string error;
    const auto cap = core::parse_size(mem, &error);
    if (mem.empty() || !std::isalpha(static_cast<unsigned char>(mem.back()))) {
      fail("gpu_mem: needs a unit (e.g. 16GiB, 80GB), got '" + mem + "'");
    }
    if (!cap || *cap <= 0) fail("gpu_mem: " + (error.empty() ? "must be a positive size" : error) + ", got '" + mem + "'");
    const std::int64_t speed = col[kSpeed] >= 0 ? parse_speed(cells[static_cast<std::size_t>(col[kSpeed])], fail) : kSpeedOne;
    std::int32_t kind = -1;
    if (col[kKind] >= 0) {
      const std::string& name = cells[static_cast<std::size_t>(col[kKind])];
      if (name.empty()) fail("kind: a name is needed (e.g. V100), got ''");
      if (name.find('|') != std::string::npos) fail("kind: '|' separates kinds in a job's gpu_spec, got '" + name + "'");
      kind = kind_index(c, name, *cap, speed, fail);
    }
    if (static_cast<std::int64_t>(c.gpus.size()) + static_cast<std::int64_t>(nodes) * per_node > 1'000'000) {
      fail("more than 1000000 GPUs in all");
    }
    for (std::int32_t n = 0; n < nodes; ++n, ++node) {
      for (std::int32_t g = 0; g < per_node; ++g) c.gpus.push_back({*cap, node, kind, speed});
    }
  }
  if (!header) throw core::InputError(path + ":" + std::to_string(lineno) + ": no header (nodes,gpus_per_node,gpu_mem)");
  if (c.gpus.empty()) throw core::InputError(path + ":" + std::to_string(lineno) + ": no GPUs (no rows after the header)");
  return c;
}

}  // namespace salus::cluster
