#include "traces/catalog.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <map>
#include <optional>

#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "core/registry.h"
#include "traces/csv.h"


namespace salus::traces {
namespace {

using nlohmann::json;

constexpr const char* kFormat = "salus-catalog/1";
constexpr const char* kTopKeys = "crowds, format, gpu, interference, notes, pairs, sweeps, switch_ms, workloads";
/// A workload entry's keys, in the order the "unknown key" message lists them.
constexpr const char* kEntryKeys[] = {"name",           "persistent_mib",    "ephemeral_mib",       "persistent_bytes",
                                      "ephemeral_bytes", "iter_ms",          "iter_exec_mean_ms",   "iter_exec_median_ms",
                                      "iter_median_ms",  "first_iter_ms",    "gpu_util",            "switch_ms",
                                      "burst_allowance", "source"};

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

// Orders decimal digit strings by value without converting (no overflow on long suffixes).
bool numeric_less(std::string_view a, std::string_view b) {
  auto strip = [](std::string_view s) {
    while (s.size() > 1 && s.front() == '0') s.remove_prefix(1);
    return s;
  };
  a = strip(a);
  b = strip(b);
  if (a.size() != b.size()) return a.size() < b.size();
  return a < b;
}

// Reads one workload entry; errors name the line where the entry starts and, once known, its name.
class EntryReader {
 public:
  EntryReader(const json& entry, std::string path, long line) : entry_(entry), path_(std::move(path)), line_(line) {}

  WorkloadProfile read() {
    if (!entry_.is_object()) fail("a workload must be a JSON object, got " + json_excerpt(entry_));
    WorkloadProfile p;
    const json* name = entry_.contains("name") ? &entry_.at("name") : nullptr;
    if (!name) fail("workload has no 'name'");
    if (!name->is_string() || name->get<std::string>().empty()) fail("name must be a non-empty string, got " + json_excerpt(*name));
    p.name = name->get<std::string>();
    prefix_ = "workload '" + text_excerpt(p.name) + "': ";
    for (const auto& item : entry_.items()) {
      const std::string& key = item.key();
      if (std::find_if(std::begin(kEntryKeys), std::end(kEntryKeys), [&](const char* k) { return key == k; }) ==
          std::end(kEntryKeys)) {
        std::string valid;
        for (const char* k : kEntryKeys) valid += (valid.empty() ? "" : ", ") + std::string(k);
        fail("unknown key '" + text_excerpt(key) + "' (valid: " + valid + ")");
      }
    }
    const double persistent = number("persistent_mib", ">= 0", [](double v) { return v >= 0; });
    const double ephemeral = number("ephemeral_mib", ">= 0", [](double v) { return v >= 0; });
    const double iter_ms = number("iter_ms", "> 0", [](double v) { return v > 0; });
    const double util = number("gpu_util", "in (0, 1]", [](double v) { return v > 0 && v <= 1; });
    const json& source = required("source");
    if (!source.is_string() || source.get<std::string>().empty()) fail("source must be a non-empty string");
    p.source = source.get<std::string>();

    // Exact byte figures (what salus-profile writes) win over the MiB ones, which are for reading
    // and must agree with them to the 0.01 MiB they are rounded to.
    auto persistent_b = exact_bytes("persistent_bytes", "persistent_mib", persistent);
    auto ephemeral_b = exact_bytes("ephemeral_bytes", "ephemeral_mib", ephemeral);
    auto iter = core::ns_from_ms(iter_ms);
    if (!persistent_b) fail("persistent_mib is out of range");
    if (!ephemeral_b) fail("ephemeral_mib is out of range");
    if (!iter || *iter <= 0) fail("iter_ms must be a number > 0 that is at least 1 ns");
    const auto ppm = static_cast<std::int32_t>(std::llround(util * 1e6));
    if (ppm <= 0) fail("gpu_util must be in (0, 1] and at least 1e-6");
    p.persistent = *persistent_b;
    p.ephemeral = *ephemeral_b;
    p.iter_ns = *iter;
    p.gpu_util_ppm = ppm;
    // Optional measurements of salus-profile: the median (for reading; the simulator uses the
    // mean, iter_ms) and the first iteration, whose excess over iter_ms the simulator adds to a
    // job's first dispatch.
    if (entry_.contains("iter_median_ms")) number("iter_median_ms", "> 0", [](double v) { return v > 0; });
    // And, for reading, the factor salus-experiment fidelity multiplied iter_ms by (--burst-allowance).
    for (const char* key : {"iter_exec_mean_ms", "iter_exec_median_ms", "burst_allowance"}) {
      if (entry_.contains(key)) number(key, "> 0", [](double v) { return v > 0; });
    }
    if (entry_.contains("first_iter_ms")) {
      const double first = number("first_iter_ms", "> 0", [](double v) { return v > 0; });
      const auto first_ns = core::ns_from_ms(first);
      if (!first_ns) fail("first_iter_ms is out of range");
      p.first_iter_extra_ns = std::max<core::TimeNs>(0, *first_ns - p.iter_ns);
    }
    // The workload's own switching cost: what its iteration after another job's takes beyond
    // iter_ms (salus-profile measures it with two copies taking turns in one lane).
    if (entry_.contains("switch_ms")) {
      const auto sw = core::ns_from_ms(number("switch_ms", ">= 0", [](double v) { return v >= 0; }));
      if (!sw) fail("switch_ms is out of range");
      p.switch_ns = *sw;
    }
    return p;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const { throw core::InputError(core::at(path_, line_, prefix_ + what)); }

  const json& required(const char* key) const {
    if (!entry_.contains(key)) fail(std::string("missing '") + key + "'");
    return entry_.at(key);
  }

  std::optional<core::Bytes> exact_bytes(const char* key, const char* mib_key, double mib) const {
    if (!entry_.contains(key)) return core::bytes_from_mib(mib);
    const json& v = entry_.at(key);
    if (!v.is_number_integer() || v.get<std::int64_t>() < 0) {
      fail(std::string(key) + " must be a whole number of bytes >= 0, got " + json_excerpt(v));
    }
    const core::Bytes b = v.get<std::int64_t>();
    if (std::abs(core::to_mib(b) - mib) > 0.0051) {
      fail(std::string(key) + " = " + std::to_string(b) + " B is " + std::to_string(core::to_mib(b)) + " MiB, but " +
           mib_key + " says " + json_excerpt(entry_.at(mib_key)) + " MiB");
    }
    return b;
  }

  template <class Ok>
  double number(const char* key, const char* range, Ok ok) const {
    const json& v = required(key);
    if (!v.is_number() || !std::isfinite(v.get<double>()) || !ok(v.get<double>())) {
      fail(std::string(key) + " must be a number " + range + ", got " + json_excerpt(v));
    }
    return v.get<double>();
  }

  const json& entry_;
  std::string path_;
  long line_;
  std::string prefix_;
};

/// The "pairs" array: {"a", "b", "slowdown_a", "slowdown_b"} per entry, names of the catalog's
/// workloads, slowdowns positive numbers. Errors name the entry's line.
std::vector<PairSlowdown> read_pairs(const json& pairs, const std::string& text, const std::string& path,
                                     const Catalog& catalog) {
  if (!pairs.is_array()) throw core::InputError(core::at(path, 1, "\"pairs\" must be an array"));
  const std::vector<long> lines = json_array_element_lines(text, "pairs");
  std::vector<PairSlowdown> out;
  std::map<std::pair<std::string, std::string>, long> seen;  // unordered pair -> line
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const long line = i < lines.size() ? lines[i] : 1;
    const json& e = pairs[i];
    auto fail = [&](const std::string& what) { throw core::InputError(core::at(path, line, "pair: " + what)); };
    if (!e.is_object()) fail("must be a JSON object, got " + json_excerpt(e));
    for (const auto& item : e.items()) {
      if (item.key() != "a" && item.key() != "b" && item.key() != "slowdown_a" && item.key() != "slowdown_b") {
        fail("unknown key '" + text_excerpt(item.key()) + "' (valid: a, b, slowdown_a, slowdown_b)");
      }
    }
    PairSlowdown p;
    for (const char* key : {"a", "b"}) {
      if (!e.contains(key) || !e.at(key).is_string()) fail(std::string("'") + key + "' must name a workload");
      const std::string name = e.at(key).get<std::string>();
      if (catalog.find(name) == nullptr) fail("unknown workload '" + name + "' (not an entry of this catalog)");
      (std::string_view(key) == "a" ? p.a : p.b) = name;
    }
    for (const char* key : {"slowdown_a", "slowdown_b"}) {
      if (!e.contains(key) || !e.at(key).is_number() || !std::isfinite(e.at(key).get<double>()) ||
          !(e.at(key).get<double>() > 0)) {
        fail(std::string(key) + " must be a number > 0" + (e.contains(key) ? ", got " + json_excerpt(e.at(key)) : ""));
      }
      (std::string_view(key) == "slowdown_a" ? p.slowdown_a : p.slowdown_b) = e.at(key).get<double>();
    }
    // A workload beside a copy of itself: both copies run alike, so one slowdown. The `pairs` model
    // takes it in place of 2u, which cannot say more than 2 (u <= 1). salus-profile does not
    // write it (docs/model.md, the --interference option: on one CPU it overshot PACK); a catalog made by hand may.
    if (p.a == p.b && p.slowdown_a != p.slowdown_b) {
      fail("'" + p.a + "' beside itself has one slowdown (slowdown_a " + json_excerpt(e.at("slowdown_a")) + ", slowdown_b " +
           json_excerpt(e.at("slowdown_b")) + ")");
    }
    const auto key = std::minmax(p.a, p.b);
    if (const auto it = seen.find(key); it != seen.end()) {
      fail(p.a + " and " + p.b + " measured twice (first at line " + std::to_string(it->second) + ")");
    }
    seen.emplace(key, line);
    out.push_back(std::move(p));
  }
  return out;
}

/// The "crowds" array: {"workloads": [names], "slowdowns": [numbers]} per entry, at least three
/// lanes, one slowdown a lane, names of the catalog's workloads, slowdowns positive numbers.
/// Errors name the entry's line.
std::vector<CrowdSlowdown> read_crowds(const json& crowds, const std::string& text, const std::string& path,
                                       const Catalog& catalog) {
  if (!crowds.is_array()) throw core::InputError(core::at(path, 1, "\"crowds\" must be an array"));
  const std::vector<long> lines = json_array_element_lines(text, "crowds");
  std::vector<CrowdSlowdown> out;
  for (std::size_t i = 0; i < crowds.size(); ++i) {
    const long line = i < lines.size() ? lines[i] : 1;
    const json& e = crowds[i];
    auto fail = [&](const std::string& what) { throw core::InputError(core::at(path, line, "crowd: " + what)); };
    if (!e.is_object()) fail("must be a JSON object, got " + json_excerpt(e));
    for (const auto& item : e.items()) {
      if (item.key() != "workloads" && item.key() != "slowdowns") {
        fail("unknown key '" + text_excerpt(item.key()) + "' (valid: slowdowns, workloads)");
      }
    }
    if (!e.contains("workloads") || !e.at("workloads").is_array() || e.at("workloads").size() < 3) {
      fail("'workloads' must be an array naming the workload of each of at least 3 lanes");
    }
    if (!e.contains("slowdowns") || !e.at("slowdowns").is_array() || e.at("slowdowns").size() != e.at("workloads").size()) {
      fail("'slowdowns' must be an array with one slowdown per lane (" + std::to_string(e.at("workloads").size()) + ")");
    }
    CrowdSlowdown c;
    for (const json& w : e.at("workloads")) {
      if (!w.is_string() || catalog.find(w.get<std::string>()) == nullptr) {
        fail("unknown workload " + json_excerpt(w) + " (not an entry of this catalog)");
      }
      c.workloads.push_back(w.get<std::string>());
    }
    for (const json& s : e.at("slowdowns")) {
      if (!s.is_number() || !std::isfinite(s.get<double>()) || !(s.get<double>() > 0)) {
        fail("a slowdown must be a number > 0, got " + json_excerpt(s));
      }
      c.slowdowns.push_back(s.get<double>());
    }
    out.push_back(std::move(c));
  }
  return out;
}

/// The "sweeps" array: {"workload": name, "lanes": [k, ...], "slowdowns": [s, ...]} per entry, the
/// workload an entry of the catalog and swept once, each k a whole number from 2 to 1024, increasing,
/// one slowdown (a positive number) per k. Errors name the entry's line.
std::vector<SweepSlowdown> read_sweeps(const json& sweeps, const std::string& text, const std::string& path,
                                       const Catalog& catalog) {
  if (!sweeps.is_array()) throw core::InputError(core::at(path, 1, "\"sweeps\" must be an array"));
  const std::vector<long> lines = json_array_element_lines(text, "sweeps");
  std::vector<SweepSlowdown> out;
  std::map<std::string, long> seen;  // workload -> line
  for (std::size_t i = 0; i < sweeps.size(); ++i) {
    const long line = i < lines.size() ? lines[i] : 1;
    const json& e = sweeps[i];
    auto fail = [&](const std::string& what) { throw core::InputError(core::at(path, line, "sweep: " + what)); };
    if (!e.is_object()) fail("must be a JSON object, got " + json_excerpt(e));
    for (const auto& item : e.items()) {
      if (item.key() != "workload" && item.key() != "lanes" && item.key() != "slowdowns") {
        fail("unknown key '" + text_excerpt(item.key()) + "' (valid: lanes, slowdowns, workload)");
      }
    }
    SweepSlowdown sw;
    if (!e.contains("workload") || !e.at("workload").is_string()) fail("'workload' must name a workload");
    sw.workload = e.at("workload").get<std::string>();
    if (catalog.find(sw.workload) == nullptr) fail("unknown workload '" + sw.workload + "' (not an entry of this catalog)");
    if (const auto it = seen.find(sw.workload); it != seen.end()) {
      fail(sw.workload + " swept twice (first at line " + std::to_string(it->second) + ")");
    }
    seen.emplace(sw.workload, line);
    if (!e.contains("lanes") || !e.at("lanes").is_array() || e.at("lanes").empty()) {
      fail("'lanes' must be an array of the numbers of lanes measured (k copies at once)");
    }
    for (const json& k : e.at("lanes")) {
      if (!k.is_number_integer() || k.get<std::int64_t>() < 2 || k.get<std::int64_t>() > 1024) {
        fail("a number of lanes must be a whole number from 2 to 1024, got " + json_excerpt(k));
      }
      const auto lanes = static_cast<std::size_t>(k.get<std::int64_t>());
      if (!sw.lanes.empty() && lanes <= sw.lanes.back()) fail("'lanes' must be increasing, got " + json_excerpt(e.at("lanes")));
      sw.lanes.push_back(lanes);
    }
    if (!e.contains("slowdowns") || !e.at("slowdowns").is_array() || e.at("slowdowns").size() != sw.lanes.size()) {
      fail("'slowdowns' must be an array with one slowdown per number of lanes (" + std::to_string(sw.lanes.size()) + ")");
    }
    for (const json& s : e.at("slowdowns")) {
      if (!s.is_number() || !std::isfinite(s.get<double>()) || !(s.get<double>() > 0)) {
        fail("a slowdown must be a number > 0, got " + json_excerpt(s));
      }
      sw.slowdowns.push_back(s.get<double>());
    }
    out.push_back(std::move(sw));
  }
  return out;
}

}  // namespace

Catalog Catalog::load(const std::string& path) {
  try {
    ::close(core::open_input_file(path, "catalog file"));
  } catch (const core::InputError& e) {
    // The shipped catalog not found: say where it was looked for and how to point at it.
    if (path != default_path()) throw;
    std::string where;
    for (const std::string& c : data_dir_candidates()) where += (where.empty() ? "" : ", ") + c;
    throw core::InputError(std::string(e.what()) + " (the shipped data was not found; looked in " + where +
                           "; set SALUS_DATA_DIR to the folder holding profiles/catalog.json, or pass --profiles)");
  }
  // Opened again to read: a field past the bound is the file's mistake, not a missing catalog.
  return parse(read_text_file(path, "catalog file", TextBound::kJson), path);
}

std::string catalog_text(const json& doc) {
  std::string text = doc.dump(2) + "\n";
  try {
    (void)Catalog::parse(text, "<catalog being written>");
  } catch (const core::InputError& e) {
    throw std::logic_error(std::string("a catalog that would not read back: ") + e.what());
  }
  return text;
}

Catalog Catalog::parse(const std::string& text, const std::string& path) {
  const json doc = parse_json(text, path);

  auto top_error = [&](const std::string& what) { return core::InputError(core::at(path, 1, what)); };
  if (!doc.is_object()) throw top_error("a catalog must be a JSON object with \"format\", \"gpu\" and \"workloads\"");
  for (const auto& item : doc.items()) {
    const std::string& key = item.key();
    if (key != "crowds" && key != "format" && key != "gpu" && key != "interference" && key != "notes" && key != "pairs" &&
        key != "sweeps" && key != "switch_ms" && key != "workloads") {
      throw top_error("unknown key '" + text_excerpt(key) + "' (valid: " + kTopKeys + ")");
    }
  }
  if (!doc.contains("format") || doc.at("format") != kFormat) {
    throw top_error(std::string("\"format\" must be \"") + kFormat + "\"" +
                    (doc.contains("format") ? ", got " + json_excerpt(doc.at("format")) : ""));
  }
  if (!doc.contains("gpu") || !doc.at("gpu").is_string() || doc.at("gpu").get<std::string>().empty()) {
    throw top_error("\"gpu\" must be a non-empty string naming the GPU the figures are for");
  }
  if (!doc.contains("workloads") || !doc.at("workloads").is_array()) throw top_error("missing \"workloads\" array");
  const json& workloads = doc.at("workloads");
  if (workloads.empty()) throw top_error("no workloads");

  const std::vector<long> lines = json_array_element_lines(text, "workloads");
  Catalog catalog;
  catalog.path_ = path;
  catalog.gpu_ = doc.at("gpu").get<std::string>();
  std::map<std::string, long, std::less<>> first_line;
  for (std::size_t i = 0; i < workloads.size(); ++i) {
    const long line = i < lines.size() ? lines[i] : 1;
    WorkloadProfile p = EntryReader(workloads[i], path, line).read();
    if (auto it = first_line.find(p.name); it != first_line.end()) {
      throw core::InputError(
          core::at(path, line, "duplicate workload name '" + p.name + "' (first at line " + std::to_string(it->second) + ")"));
    }
    first_line.emplace(p.name, line);
    catalog.profiles_.emplace(p.name, std::move(p));
  }
  if (doc.contains("pairs")) catalog.pairs_ = read_pairs(doc.at("pairs"), text, path, catalog);
  if (doc.contains("crowds")) catalog.crowds_ = read_crowds(doc.at("crowds"), text, path, catalog);
  if (doc.contains("sweeps")) catalog.sweeps_ = read_sweeps(doc.at("sweeps"), text, path, catalog);
  if (doc.contains("switch_ms")) {
    const json& v = doc.at("switch_ms");
    const std::optional<core::TimeNs> ns =
        v.is_number() && std::isfinite(v.get<double>()) && v.get<double>() >= 0 ? core::ns_from_ms(v.get<double>())
                                                                                : std::nullopt;
    if (!ns) throw top_error("\"switch_ms\" must be a number of milliseconds >= 0, got " + json_excerpt(v));
    catalog.switch_ns_ = *ns;
  }
  if (doc.contains("interference")) {
    const json& v = doc.at("interference");
    if (!v.is_string() || v.get<std::string>().empty()) {
      throw top_error("\"interference\" must name an interference model, got " + json_excerpt(v));
    }
    catalog.interference_ = v.get<std::string>();
  }
  return catalog;
}

std::vector<std::string> data_dir_candidates() {
  std::vector<std::string> out;
  if (const char* env = std::getenv("SALUS_DATA_DIR"); env != nullptr && *env != '\0') {
    out.emplace_back(env);
    return out;  // an explicit choice is not second-guessed
  }
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec || exe.empty()) return out;
  const std::filesystem::path bin = exe.parent_path();
  // Installed: <prefix>/bin beside <prefix>/share/salus; a build tree has the same layout
  // (<build>/bin, and <build>/share/salus a link to the source's traces/ made by CMake), wherever
  // the build folder is.
  out.push_back((bin.parent_path() / "share" / "salus").lexically_normal().string());
  // A build tree inside the source tree whose link is missing (build/tests/...): its traces/
  // folder, up to four levels up.
  std::filesystem::path dir = bin;
  for (int up = 0; up < 4 && dir.has_parent_path() && dir != dir.parent_path(); ++up) {
    dir = dir.parent_path();
    out.push_back((dir / "traces").lexically_normal().string());
  }
  return out;
}

std::string data_dir() {
  if (const char* env = std::getenv("SALUS_DATA_DIR"); env != nullptr && *env != '\0') return env;  // taken as given
  const std::vector<std::string> candidates = data_dir_candidates();
  for (const std::string& c : candidates) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(std::filesystem::path(c) / "profiles" / "catalog.json", ec)) continue;
    // A build tree's <build>/share/salus is a link: name the folder it points at.
    const std::filesystem::path real = std::filesystem::canonical(c, ec);
    return ec ? c : real.string();
  }
  return candidates.empty() ? std::string("share/salus") : candidates.front();
}

std::string plots_dir() {
  std::error_code ec;
  const std::filesystem::path data(data_dir());
  const std::filesystem::path installed = data / "plots";  // cmake --install: <prefix>/share/salus/plots
  if (std::filesystem::is_regular_file(installed / "make_figures.py", ec)) return installed.string();
  // A source tree, reached directly or through a build tree's link: traces/../plots.
  const std::filesystem::path real = std::filesystem::canonical(data, ec);
  if (!ec) {
    const std::filesystem::path source = real.parent_path() / "plots";
    if (std::filesystem::is_regular_file(source / "make_figures.py", ec)) return source.string();
  }
  return installed.string();
}

std::string Catalog::default_path() { return data_dir() + "/profiles/catalog.json"; }

Catalog Catalog::load_default() { return load(default_path()); }

const WorkloadProfile* Catalog::find(std::string_view name) const {
  auto it = profiles_.find(name);
  return it == profiles_.end() ? nullptr : &it->second;
}

const WorkloadProfile* Catalog::find_model(std::string_view model) const {
  if (const WorkloadProfile* exact = find(model)) return exact;
  if (model.empty()) return nullptr;
  // Variants are "<model>_<suffix>" with no further '_' in the suffix. A numeric suffix is a
  // batch size and the smallest wins; only when there is none does the smallest name win
  // (seq2seq_large < seq2seq_medium < seq2seq_small).
  const WorkloadProfile* best = nullptr;
  std::string_view best_suffix;
  const std::string prefix = std::string(model) + "_";
  for (auto it = profiles_.lower_bound(prefix); it != profiles_.end() && it->first.starts_with(prefix); ++it) {
    const std::string_view suffix = std::string_view(it->first).substr(prefix.size());
    if (suffix.empty() || suffix.find('_') != std::string_view::npos) continue;
    if (!best) {
      best = &it->second;
      best_suffix = suffix;
      continue;
    }
    const bool num = all_digits(suffix);
    const bool best_num = all_digits(best_suffix);
    // Names are visited in sorted order, so among equals the first seen is the smallest name.
    const bool better = num && best_num ? numeric_less(suffix, best_suffix) : num && !best_num;
    if (better) {
      best = &it->second;
      best_suffix = suffix;
    }
  }
  return best;
}

std::vector<std::string> Catalog::names() const {
  std::vector<std::string> out;
  out.reserve(profiles_.size());
  for (const auto& [name, profile] : profiles_) out.push_back(name);
  return out;
}

std::string Catalog::unknown_workload(std::string_view name) const {
  std::string out = "unknown workload '" + text_excerpt(name) + "' (";
  if (profiles_.size() <= 8) return out + "valid: " + names_joined() + ")";
  std::vector<std::pair<std::size_t, std::string_view>> by_distance;
  const std::string_view cut = name.substr(0, 256);  // the distance of a longer name says nothing more
  for (const auto& [candidate, profile] : profiles_) by_distance.emplace_back(core::edit_distance(cut, candidate), candidate);
  std::stable_sort(by_distance.begin(), by_distance.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  out += "nearest: ";
  for (std::size_t i = 0; i < 3; ++i) out += std::string(i ? ", " : "") + std::string(by_distance[i].second);
  out += "; the catalog's " + std::to_string(profiles_.size()) +
         " workloads: its file, docs/traces.md \"The workload catalog\")";
  return out + core::did_you_mean(cut, names());
}

std::string Catalog::names_joined() const {
  std::string out;
  for (const auto& [name, profile] : profiles_) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

}  // namespace salus::traces
