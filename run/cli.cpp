#include "run/cli.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <stdexcept>

#include <boost/program_options/errors.hpp>

#include "cluster/lease_policy.h"
#include "cluster/placement.h"
#include "cluster/queue_discipline.h"
#include "core/errors.h"
#include "core/registry.h"
#include "core/units.h"
#include "run/output.h"
#include "policies/registry.h"
#include "traces/csv.h"

namespace salus::run {

std::vector<std::string> parse_policy_list(const std::string& list, bool cluster_policies) {
  std::vector<std::string> out;
  const std::string valid = policies::policy_names_joined() +
                            (cluster_policies ? "; cluster policies: " + cluster::lease_registry().names_joined() : "");
  for (const std::string& p : core::split_list(list)) {
    if (p.empty()) throw core::InputError("--policy: an empty item in '" + list + "' (valid: " + valid + ")");
    if (cluster::is_lease_policy(p)) {
      if (!cluster_policies) {
        throw core::InputError("--policy: '" + p + "' is a preemptive cluster policy, which salus-sim runs; here the "
                               "valid policies are " + policies::policy_names_joined());
      }
    } else {
      try {
        policies::make_policy(p);  // a name the table or a Python policy (policies/registry.h) gives
      } catch (const core::InputError&) {
        if (!cluster_policies) throw;
        throw core::InputError(
            policies::policy_registry().unknown(p, "; cluster policies: " + cluster::lease_registry().names_joined()));
      }
    }
    for (const std::string& q : out) {
      if (q == p) throw core::InputError("--policy: '" + p + "' is listed twice");
    }
    out.push_back(p);
  }
  if (out.empty()) throw core::InputError("--policy: no policy given (valid: " + policies::policy_names_joined() + ")");
  return out;
}

core::Bytes parse_capacity(const std::string& text) {
  std::string why;
  const auto cap = core::parse_size(text, &why);
  if (!cap) throw core::InputError("--gpu-mem: " + why);
  if (*cap <= 0) throw core::InputError("--gpu-mem: must be positive");
  return *cap;
}

core::LaneMode parse_lane_mode(const std::string& text) {
  if (text == "single") return core::LaneMode::kSingle;
  if (text == "auto") return core::LaneMode::kAuto;
  if (text == "exclusive") return core::LaneMode::kExclusive;
  throw core::InputError("--lanes: unknown lane mode '" + text + "' (valid: single, auto, exclusive)");
}

traces::LoadOptions make_load_options(const TraceOptionValues& v, std::uint64_t seed) {
  traces::LoadOptions o;
  if (!v.format.empty() && !traces::trace_format_registry().find(v.format)) {
    throw core::InputError("--format: " + traces::trace_format_registry().unknown(v.format));
  }
  o.format = v.format;
  if (v.durations == "trace") o.durations = traces::DurationSource::kTrace;
  else if (v.durations == "catalog") o.durations = traces::DurationSource::kCatalog;
  else throw core::InputError("--durations: unknown source '" + v.durations + "' (valid: trace, catalog)");
  o.throughputs = v.throughputs;
  o.worker_type = v.worker_type;
  if (v.gavel_scaling == "linear") o.gavel_scaling = traces::LoadOptions::GavelScaling::kLinear;
  else if (v.gavel_scaling == "none") o.gavel_scaling = traces::LoadOptions::GavelScaling::kNone;
  else if (v.gavel_scaling == "refuse") o.gavel_scaling = traces::LoadOptions::GavelScaling::kRefuse;
  else throw core::InputError("--gavel-scaling: unknown value '" + v.gavel_scaling + "' (valid: linear, none, refuse)");
  const std::optional<core::TimeNs> iter = core::ns_from_ms(v.assumed_iter_ms);
  if (!(v.assumed_iter_ms > 0) || !iter || *iter <= 0) throw core::InputError("--assumed-iter-ms: must be a positive number");
  o.assumed_iter_ns = *iter;
  o.assumed_memory = traces::parse_assumed_memory(v.assumed_memory);
  if (!v.window.empty()) {
    const auto [start, end] = traces::parse_window(v.window);
    o.window_start = start;
    o.window_end = end;
  }
  if (!(v.sample > 0 && v.sample <= 1)) throw core::InputError("--sample: must be a fraction in (0, 1]");
  o.sample = v.sample;
  o.seed = seed;
  return o;
}

ModelOptions make_model_options(const ModelOptionValues& v, const boost::program_options::variables_map& vm) {
  ModelOptions m;
  if (vm.count("lanes")) m.lanes = parse_lane_mode(v.lanes);
  if (v.interference != "auto" && !sim::interference_registry().find(v.interference)) {
    throw core::InputError("--interference: " + sim::interference_registry().unknown(v.interference, ", or auto"));
  }
  m.interference = v.interference;
  if (!(v.share_exponent > 0 && v.share_exponent <= 2)) throw core::InputError("--share-exponent: must be a number in (0, 2]");
  m.share_exponent = v.share_exponent;
  m.lane_shrink = parse_on_off("--lane-shrink", v.lane_shrink);
  if (vm.count("switch-cost-ms")) {
    const auto sw = core::ns_from_ms(v.switch_ms);
    if (!sw) throw core::InputError("--switch-cost-ms: must be a non-negative number");
    m.switch_cost_ns = *sw;
  }
  if (vm.count("placement")) cluster::placement_registry().at(v.placement);  // unknown: exit 2 with the valid ones
  m.placement = v.placement;
  m.queue = cluster::queue_registry().at(v.queue).factory;  // unknown: exit 2 with the valid ones
  m.gangs = cluster::gang_registry().at(v.gangs).factory;
  m.lease.dlas_thresholds_ns.clear();
  for (const std::string& item : core::split_list(v.dlas_thresholds)) {
    char* end = nullptr;
    const double s = std::strtod(item.c_str(), &end);
    const core::TimeNs ns = !item.empty() && end == item.c_str() + item.size() && std::isfinite(s) && s > 0 && s < 9e9
                                ? core::ns_from_seconds(s).value_or(0)
                                : 0;
    if (ns <= 0 || (!m.lease.dlas_thresholds_ns.empty() && ns <= m.lease.dlas_thresholds_ns.back())) {
      throw core::InputError("--dlas-thresholds: '" + v.dlas_thresholds +
                             "' must be seconds, positive and increasing, comma-separated (e.g. 3250,7200)");
    }
    m.lease.dlas_thresholds_ns.push_back(ns);
  }
  if (!(v.dlas_starvation >= 0 && v.dlas_starvation <= 1e6)) {
    throw core::InputError("--dlas-starvation: must be a number in [0, 1e6] (0: off)");
  }
  m.lease.dlas_starvation = v.dlas_starvation;
  if (v.dlas_checks == "exact") {
    m.lease.dlas_checks = cluster::DlasChecks::kExact;
  } else if (v.dlas_checks == "tiresias") {
    m.lease.dlas_checks = cluster::DlasChecks::kTiresias;
  } else {
    throw core::InputError("--dlas-checks: unknown value '" + core::text_excerpt(v.dlas_checks) + "' (valid: exact, tiresias)");
  }
  const auto restart = core::ns_from_ms(v.restart_cost_ms);
  if (!restart) throw core::InputError("--restart-cost-ms: must be a non-negative number");
  m.restart_cost_ns = *restart;
  if (v.gpu_sharing != "exclusive") {
    if (policies::policy_registry().find(v.gpu_sharing) == nullptr) {
      throw core::InputError("--gpu-sharing: unknown value '" + core::text_excerpt(v.gpu_sharing) +
                             "' (valid: exclusive, " + policies::policy_registry().names_joined() + ")");
    }
    m.gpu_sharing = v.gpu_sharing;
  }
  // At least a second: each round is a decision over every job present, so a trace's span in
  // rounds bounds the run's cost.
  const auto round = v.round_s >= 1 && v.round_s <= 1e9 ? core::ns_from_seconds(v.round_s) : std::nullopt;
  if (!round) throw core::InputError("--round-s: must be a number of seconds from 1 to 1e9");
  m.lease.round_ns = *round;
  const auto reset = v.reset_s <= 1e9 ? core::ns_from_seconds(v.reset_s) : std::nullopt;
  if (!reset) throw core::InputError("--reset-s: must be a non-negative number of seconds, at most 1e9");
  m.lease.reset_ns = *reset;
  return m;
}

std::string trace_formats_help(bool mappings) {
  if (!mappings) return traces::trace_format_registry().help();
  std::string out;
  for (const auto& e : traces::trace_format_registry().entries()) {
    out += std::string(e.name) + ": " + std::string(e.description) + "\n  " + std::string(e.factory.mapping) + "\n";
  }
  return out;
}

namespace {

// The hint for an argument that no option takes: the option it spells ("gpus" -> --gpus), the
// option that takes a file when it looks like one, else none.
std::string unexpected_argument(const std::string& token, const std::string& after, unsigned positionals,
                                const boost::program_options::options_description& desc) {
  std::vector<std::string> options;
  for (const auto& o : desc.options()) options.push_back("--" + o->long_name());
  std::string message = "unexpected argument '" + token + "'";
  std::string bare = token;
  while (!bare.empty() && bare.front() == '-') bare.erase(0, 1);
  const std::string best = core::nearest_name("--" + bare, options);
  const bool has_trace = desc.find_nothrow("trace", false) != nullptr;
  const bool has_out = desc.find_nothrow("out", false) != nullptr;
  std::error_code ec;
  const bool file_like = std::filesystem::exists(token, ec) || token.find('/') != std::string::npos ||
                         std::filesystem::path(token).has_extension();
  if (!best.empty()) {
    message += " (did you mean " + best + "?)";
  } else if (positionals > 0) {
    message += " (at most " + count_text(positionals, "argument") + "; see --help)";
  } else if (file_like && has_trace) {
    message += " (did you mean --trace " + token + "?)";
  } else if (file_like && has_out) {
    message += " (did you mean --out " + token + "?)";
  } else if (!after.empty()) {
    message += " (--" + after + " takes one value; see --help)";
  } else {
    message += " (see --help)";
  }
  return message;
}

}  // namespace

boost::program_options::parsed_options parse_command_line(int argc, char** argv,
                                                          const boost::program_options::options_description& desc,
                                                          const boost::program_options::positional_options_description* positional) {
  namespace po = boost::program_options;
  namespace style = po::command_line_style;
  po::command_line_parser parser(argc, argv);
  // Exact names only: Boost's default guesses "--devic" as --device.
  parser.options(desc).style(style::default_style & ~style::allow_guessing);
  po::parsed_options parsed(&desc);
  try {
    parsed = parser.run();
  } catch (const po::unknown_option& e) {
    std::string name = e.get_option_name();
    std::vector<std::string> options;
    for (const auto& o : desc.options()) options.push_back("--" + o->long_name());
    std::string message = "unrecognised option '" + name + "'";
    const std::string best = core::nearest_name(name, options);
    if (!best.empty()) message += " (did you mean " + best + "?)";
    throw core::InputError(message + " (see --help)");
  }
  // Without a positional description Boost hands arguments back with no name, and store() drops
  // them: they are given their positional names here, and any beyond those are an error.
  unsigned position = 0;
  std::string after;  // the option just before, when it took a value
  for (po::option& o : parsed.options) {
    if (!o.string_key.empty()) {
      after = o.value.empty() ? std::string() : o.string_key;
      continue;
    }
    const std::string token = o.original_tokens.empty() ? std::string() : o.original_tokens.front();
    if (positional == nullptr || position >= positional->max_total_count()) {
      throw core::InputError(unexpected_argument(token, after, positional == nullptr ? 0 : positional->max_total_count(), desc));
    }
    o.string_key = positional->name_for_position(position++);
    after.clear();
  }
  return parsed;
}

namespace {

// The file `path` names (following links), or nothing when it does not exist.
std::optional<struct stat> stat_of(const std::string& path) {
  struct stat st {};
  if (path.empty() || ::stat(path.c_str(), &st) != 0) return std::nullopt;
  return st;
}

bool same_file(const struct stat& a, const struct stat& b) { return a.st_dev == b.st_dev && a.st_ino == b.st_ino; }

}  // namespace

void check_output_paths(const std::vector<OutputPath>& outputs, const std::vector<InputPath>& inputs) {
  namespace fs = std::filesystem;
  // The inputs that exist, as files: an output must be none of them.
  std::vector<std::pair<const InputPath*, struct stat>> existing;
  for (const InputPath& in : inputs) {
    if (const auto st = stat_of(in.path)) existing.emplace_back(&in, *st);
  }
  const auto refuse_input = [&](const std::string& what, const struct stat& st) {
    for (const auto& [in, ist] : existing) {
      if (same_file(st, ist)) {
        throw core::InputError(what + " is the same file as " + in->option + " '" + in->path +
                               "' (an output never replaces an input)");
      }
    }
  };
  for (const OutputPath& out : outputs) {
    if (out.path.empty()) continue;
    const std::string what = out.option + ": '" + out.path + "'";
    std::error_code ec;
    const fs::path p(out.path);
    if (const auto st = stat_of(out.path)) {
      const bool folder = S_ISDIR(st->st_mode);
      if (out.kind == OutputKind::kFile && folder) throw core::InputError(what + " is a folder, not a file");
      if (out.kind == OutputKind::kFolder && !folder) {
        if (S_ISREG(st->st_mode)) throw core::InputError(what + " is a file, not a folder");
        throw core::InputError(what + " is " + file_type_text(st->st_mode) + ", not a folder");
      }
      if (out.kind == OutputKind::kFile && !S_ISREG(st->st_mode)) {
        throw core::InputError(what + " " + not_a_regular_file(st->st_mode));
      }
      if (out.kind == OutputKind::kFile) refuse_input(what, *st);
      if (out.kind == OutputKind::kFolder) {
        // What the folder holds under the names the programs write there: each must be a
        // regular file and none an input.
        for (const fs::directory_entry& e : fs::directory_iterator(p, ec)) {
          if (!run_file_name(e.path().filename().string())) continue;
          const auto ist = stat_of(e.path().string());
          if (!ist) continue;
          const std::string what_inside = out.option + ": '" + e.path().string() + "'";
          if (!S_ISREG(ist->st_mode)) throw core::InputError(what_inside + " " + not_a_regular_file(ist->st_mode));
          refuse_input(what_inside, *ist);
        }
      }
    }
    // The folder that takes the new file (a file's own folder, or the folder itself) or, when it
    // does not exist yet, the nearest folder above it, where it will be made.
    fs::path holder = out.kind == OutputKind::kFolder ? p : p.parent_path();
    if (holder.empty()) holder = ".";
    while (!fs::exists(fs::status(holder, ec))) {
      const fs::path up = holder.has_parent_path() && holder.parent_path() != holder ? holder.parent_path() : fs::path(".");
      if (up == holder) break;
      holder = up;
    }
    if (!fs::is_directory(fs::status(holder, ec))) {
      throw core::InputError(what + ": '" + holder.string() + "' is a file, not a folder");
    }
    // Writable: make a file there and remove it (access() says yes to root on a read-only mount).
    std::string probe = (holder / ".salus-probe-XXXXXX").string();
    const int fd = ::mkstemp(probe.data());
    if (fd < 0) {
      const int e = errno;
      throw core::InputError(what + ": cannot write in '" + holder.string() + "' (" + std::strerror(e) + ")");
    }
    ::close(fd);
    ::unlink(probe.c_str());
  }
}

std::string version_text(const char* tool) { return std::string(tool) + " " + SALUS_VERSION; }

bool parse_on_off(const std::string& option, const std::string& value) {
  if (value == "on") return true;
  if (value == "off") return false;
  throw core::InputError(option + ": must be on or off, got '" + value + "'");
}

std::string error_line(std::string_view what, std::size_t max_bytes) {
  std::string out;
  out.reserve(what.size());
  for (const char c : what) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\x%02x", static_cast<unsigned>(u));
      out += esc;
    } else {
      out += c;
    }
  }
  return traces::text_excerpt(out, max_bytes);
}

namespace {

// Prints "<tool>: <prefix><what><suffix>" as one bounded line.
void print_error(const char* tool, const char* prefix, std::string_view what, const char* suffix) {
  const std::size_t fixed = std::strlen(tool) + 2 + std::strlen(prefix) + std::strlen(suffix);
  const std::string line = error_line(what, fixed < 200 ? 300 - fixed : 100);
  std::fprintf(stderr, "%s: %s%s%s\n", tool, prefix, line.c_str(), suffix);
}

}  // namespace

int guarded_main(const char* tool, int (*body)(int, char**), int argc, char** argv) {
  try {
    const int status = body(argc, argv);
    // Buffered output meets a full disk or a closed pipe only when flushed: here, not at exit,
    // where the failure would go unseen.
    std::cout.flush();
    if (std::fflush(stdout) != 0 || std::ferror(stdout) != 0 || !std::cout) {
      const int e = errno;
      std::fprintf(stderr, "%s: error: cannot write to standard output (%s)\n", tool, std::strerror(e));
      return status != 0 ? status : 1;
    }
    return status;
  } catch (const core::InputError& e) {
    print_error(tool, "", e.what(), "");
    return 2;
  } catch (const boost::program_options::error& e) {
    print_error(tool, "", e.what(), " (see --help)");
    return 2;
  } catch (const std::logic_error& e) {
    print_error(tool, "internal error: ", e.what(), "");
    return 1;
  } catch (const std::exception& e) {
    print_error(tool, "error: ", e.what(), "");
    return 1;
  }
}

}  // namespace salus::run
