#pragma once
/// The workload catalog: per-workload persistent memory P, ephemeral memory E, solo iteration
/// time and GPU utilisation, each with where the numbers came from. Loaded from JSON.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/units.h"

namespace salus::traces {

struct WorkloadProfile {
  std::string name;                       ///< e.g. "resnet50_25" (model_batch)
  core::Bytes persistent = 0;             ///< P
  core::Bytes ephemeral = 0;              ///< E = peak - P
  core::TimeNs iter_ns = 0;               ///< solo iteration time
  std::int32_t gpu_util_ppm = 1'000'000;  ///< u in (0, 1], parts per million
  core::TimeNs first_iter_extra_ns = 0;   ///< first_iter_ms - iter_ms when the entry has first_iter_ms (>= 0)
  core::TimeNs switch_ns = -1;            ///< the entry's switch_ms (its own switching cost); -1 when absent
  std::string source;                     ///< provenance: "estimated: ..." or "measured on <GPU>"
};

/// A measured pair (salus-profile): each workload's iteration time while the other runs in a
/// second lane, over its solo time.
struct PairSlowdown {
  std::string a, b;
  double slowdown_a = 1, slowdown_b = 1;
};

/// A measured crowd (salus-profile --crowds): k >= 3 lanes running at once, the workload of
/// each lane, and each lane's iteration time in the crowd over its solo time.
struct CrowdSlowdown {
  std::vector<std::string> workloads;
  std::vector<double> slowdowns;
};

/// A homogeneous sweep (salus-profile --sweeps): k copies of one workload in k lanes at once, for
/// each k measured, and a copy's iteration time there over its solo time.
struct SweepSlowdown {
  std::string workload;
  std::vector<std::size_t> lanes;  ///< k of each point, each >= 2, increasing
  std::vector<double> slowdowns;   ///< one per point, > 0
};

/// Where the shipped data (catalog, traces, experiments' inputs) is, first found of: the
/// SALUS_DATA_DIR environment variable (taken as given); <dir of the program>/../share/salus (an
/// installed program, or a build tree anywhere: CMake links <build>/share/salus to traces/); a
/// traces/ folder up to four levels above the program's folder (a build tree inside the source
/// tree). A folder counts when it has profiles/catalog.json; when none
/// does, the first candidate is returned, so that errors name where the data was looked for.
std::string data_dir();
/// The candidates data_dir() tries, in order.
std::vector<std::string> data_dir_candidates();
/// Where the plotting scripts (make_figures.py, plot_run.py) are: data_dir()/plots once installed
/// (cmake --install puts them there), else the source tree's plots/ beside the data's real folder.
std::string plots_dir();

/// The text of a catalog document, the one writer of the format (salus-catalog, salus-profile and
/// fidelity's calibrated catalogs): nlohmann's dump(2) and a newline, checked to read back with
/// Catalog::parse (std::logic_error otherwise: a writer's bug, not bad input).
std::string catalog_text(const nlohmann::json& doc);

class Catalog {
 public:
  /// Reads a catalog file. Throws core::InputError "path:line: what" on bad content.
  static Catalog load(const std::string& path);
  /// The same from its text (`path` names it in errors).
  static Catalog parse(const std::string& text, const std::string& path);
  /// The shipped catalog: data_dir()/profiles/catalog.json.
  static Catalog load_default();
  static std::string default_path();

  /// The profile with exactly this name, or nullptr.
  const WorkloadProfile* find(std::string_view name) const;
  /// For a model name without batch size (e.g. "vgg16"): the exact entry if any, else the
  /// variant "<model>_<batch>" with the smallest batch; nullptr when there is none.
  const WorkloadProfile* find_model(std::string_view model) const;
  /// All names, sorted.
  std::vector<std::string> names() const;
  /// Comma-separated list of all names, for error messages.
  std::string names_joined() const;
  /// "unknown workload 'NAME' (valid: a, b, c)" for a catalog of at most 8 names; for a larger one
  /// the nearest 3 by edit distance and where to find them all: "(nearest: ...; the catalog's N
  /// workloads: --profiles FILE, docs/traces.md \"The workload catalog\")", then "; did you mean
  /// 'x'?" where one is close. The name is quoted in at most 80 bytes.
  std::string unknown_workload(std::string_view name) const;

  /// The measured pairs, as the file lists them; both names are entries of this catalog.
  const std::vector<PairSlowdown>& pairs() const { return pairs_; }
  /// The measured crowds, as the file lists them; every name is an entry of this catalog.
  const std::vector<CrowdSlowdown>& crowds() const { return crowds_; }
  /// The measured homogeneous sweeps, as the file lists them; each names an entry of this catalog,
  /// at most one per workload.
  const std::vector<SweepSlowdown>& sweeps() const { return sweeps_; }

  /// The executor's switch latency measured with the catalog (top-level "switch_ms"), if any:
  /// salus-sim's default switching cost.
  std::optional<core::TimeNs> switch_ns() const { return switch_ns_; }
  /// The interference model that fits the device the catalog was measured on (top-level
  /// "interference", written by salus-profile), if any: salus-sim's and the experiments' choice
  /// under `auto`. The name is checked against the simulator's table where it is used.
  const std::optional<std::string>& interference() const { return interference_; }

  const std::string& path() const { return path_; }
  const std::string& gpu() const { return gpu_; }
  std::size_t size() const { return profiles_.size(); }

 private:
  std::string path_;
  std::string gpu_;
  std::map<std::string, WorkloadProfile, std::less<>> profiles_;
  std::vector<PairSlowdown> pairs_;
  std::vector<CrowdSlowdown> crowds_;
  std::vector<SweepSlowdown> sweeps_;
  std::optional<core::TimeNs> switch_ns_;
  std::optional<std::string> interference_;
};

}  // namespace salus::traces
