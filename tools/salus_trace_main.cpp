// salus-trace: makes and inspects job traces. `generate` draws a synthetic trace for the paper's
// long-running training experiment (§5.1: Poisson arrivals, log-normal durations, workloads from
// the catalog) and writes the native CSV; `stats` summarises any trace salus-sim can read.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "core/errors.h"
#include "core/registry.h"
#include "core/units.h"
#include "run/cli.h"
#include "run/output.h"
#include "traces/catalog.h"
#include "traces/generator.h"
#include "traces/trace.h"

namespace po = boost::program_options;
using namespace salus;

namespace {

constexpr const char* kSubcommands = "generate, stats, formats";

const char* const kUsage =
    "salus-trace: make and inspect job traces\n"
    "\n"
    "Usage:\n"
    "  salus-trace generate [options]          draw a synthetic trace and write it as native CSV\n"
    "  salus-trace stats FILE [options]        summarise a trace (any format salus-sim reads)\n"
    "  salus-trace formats                     the trace formats and how each maps to jobs\n"
    "  salus-trace SUBCOMMAND --help           the subcommand's options\n"
    "  salus-trace --version                   print the version\n";

// Text that a POSIX shell reads back as the same word.
std::string shell_word(const std::string& s) {
  const bool plain = !s.empty() && s.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                                       "0123456789_-+=.,/:@%") == std::string::npos;
  if (plain) return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// "a, b,c" -> {"a", "b", "c"}; empty items are kept so that the generator can reject them.
std::vector<std::string> split_list(const std::string& list) {
  std::vector<std::string> out;
  std::string item;
  std::stringstream ss(list);
  while (std::getline(ss, item, ',')) {
    const auto b = item.find_first_not_of(" \t");
    const auto e = item.find_last_not_of(" \t");
    out.push_back(b == std::string::npos ? std::string() : item.substr(b, e - b + 1));
  }
  if (list.empty() || list.back() == ',') out.emplace_back();
  return out;
}

std::uint64_t parse_seed(const std::string& text) {
  std::uint64_t v = 0;
  bool ok = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
  for (char c : text) {
    if (!ok) break;
    const std::uint64_t d = static_cast<std::uint64_t>(c - '0');
    if (v > (UINT64_MAX - d) / 10) ok = false;
    v = v * 10 + d;
  }
  if (!ok) throw core::InputError("--seed: must be an integer in [0, 18446744073709551615], got '" + text + "'");
  return v;
}

// ---- generate ------------------------------------------------------------------------------

int generate(int argc, char** argv) {
  traces::GeneratorOptions opt;
  std::string seed_text = "1", out_path, profiles, workloads;
  po::options_description desc(
      "salus-trace generate: draw a synthetic trace for the long-running training experiment (paper 5.1)\n"
      "Poisson arrivals, log-normal solo durations clipped to [min, max], workloads uniform over the catalog's\n"
      "training entries; iterations = max(1, round(duration / iteration time)). Same options -> same bytes.\n"
      "\nOptions");
  auto num = [](double v) { return traces::format_number(v); };
  desc.add_options()
      ("help,h", "print this help")
      ("jobs", po::value(&opt.jobs)->default_value(opt.jobs), "number of jobs")
      ("seed", po::value(&seed_text)->default_value(seed_text), "PRNG seed, an unsigned 64-bit integer")
      ("out", po::value(&out_path), "write the CSV here (default: standard output)")
      ("profiles", po::value(&profiles)->default_value(traces::Catalog::default_path()), "workload catalog (JSON)")
      ("mean-interarrival-s", po::value(&opt.mean_interarrival_s)->default_value(opt.mean_interarrival_s,
                                                                              num(opt.mean_interarrival_s)),
       "mean of the exponential gaps between arrivals, seconds (first job at 0)")
      ("median-duration-s", po::value(&opt.median_duration_s)->default_value(opt.median_duration_s,
                                                                          num(opt.median_duration_s)),
       "median solo duration, seconds (log-normal)")
      ("duration-sigma", po::value(&opt.duration_sigma)->default_value(opt.duration_sigma, num(opt.duration_sigma)),
       "sigma of ln(duration)")
      ("min-duration-s", po::value(&opt.min_duration_s)->default_value(opt.min_duration_s, num(opt.min_duration_s)),
       "shorter drawn durations are raised to this, seconds")
      ("max-duration-s", po::value(&opt.max_duration_s)->default_value(opt.max_duration_s, num(opt.max_duration_s)),
       "longer drawn durations are lowered to this, seconds")
      ("workloads", po::value(&workloads),
       "comma-separated catalog names to draw from (default: every entry not ending in _infer, "
       "except lenet_32 and mlp_64)");
  po::variables_map vm;
  const po::positional_options_description none;  // generate takes no file arguments
  po::store(run::parse_command_line(argc, argv, desc, &none), vm);
  if (vm.count("help")) {
    std::cout << desc;
    return 0;
  }
  po::notify(vm);
  opt.seed = parse_seed(seed_text);
  run::check_output_paths({{"--out", out_path, run::OutputKind::kFile}});
  if (vm.count("workloads")) opt.workloads = split_list(workloads);

  const traces::Catalog catalog = traces::Catalog::load(profiles);
  const traces::GeneratedTrace trace = traces::generate_trace(catalog, opt);

  // The command that reproduces the content, in canonical form: --out changes only where it goes,
  // so it is left out and writing to a file or to stdout gives the same bytes.
  std::string command =
      "salus-trace generate --jobs " + std::to_string(opt.jobs) + " --seed " + std::to_string(opt.seed);
  for (const char* name : {"profiles", "mean-interarrival-s", "median-duration-s", "duration-sigma", "min-duration-s",
                           "max-duration-s", "workloads"}) {
    if (!vm.count(name) || vm[name].defaulted()) continue;
    const std::string key = name;
    std::string value;
    if (key == "profiles") value = profiles;
    else if (key == "workloads") value = workloads;
    else value = num(vm[name].as<double>());
    command += " --" + key + " " + shell_word(value);
  }
  const std::string csv = traces::to_native_csv(trace, "Generated by: " + command);
  if (out_path.empty()) {
    std::fputs(csv.c_str(), stdout);
  } else {
    run::write_text_file(out_path, csv);
    std::printf("wrote %s (%s)\n", out_path.c_str(), run::count_text(trace.jobs.size(), "job").c_str());
  }
  return 0;
}

// ---- stats ---------------------------------------------------------------------------------

std::string seconds_and_minutes(core::TimeNs ns) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f s (%.1f min)", core::to_seconds(ns), core::to_seconds(ns) / 60);
  return buf;
}

int stats(int argc, char** argv) {
  std::string path, profiles, seed_text = "1";
  run::TraceOptionValues trace_options;
  po::options_description desc(
      "salus-trace stats FILE: count, arrival span, solo durations and workload mix\n\nOptions");
  desc.add_options()
      ("help,h", "print this help")
      ("profiles", po::value(&profiles)->default_value(traces::Catalog::default_path()), "workload catalog (JSON)")
      ("seed", po::value(&seed_text)->default_value(seed_text), "seed of --sample, an unsigned 64-bit integer");
  run::add_trace_options(desc, trace_options);
  po::options_description hidden;
  hidden.add_options()("trace", po::value(&path));
  po::options_description all;
  all.add(desc).add(hidden);
  po::positional_options_description positional;
  positional.add("trace", 1);
  po::variables_map vm;
  po::store(run::parse_command_line(argc, argv, all, &positional), vm);
  if (vm.count("help")) {
    std::cout << desc;
    return 0;
  }
  po::notify(vm);
  if (path.empty()) throw core::InputError("stats: no trace file given (usage: salus-trace stats FILE [--profiles P])");
  const traces::LoadOptions load = run::make_load_options(trace_options, parse_seed(seed_text));

  const traces::Catalog catalog = traces::Catalog::load(profiles);
  const traces::Trace trace = traces::load_trace(path, catalog, load);
  const std::vector<core::JobSpec>& jobs = trace.jobs;
  for (const std::string& n : trace.notes) std::printf("note: %s\n", n.c_str());
  std::printf("trace: %s (%s, %s)\n", path.c_str(), traces::to_string(trace.format),
              run::count_text(jobs.size(), "job").c_str());
  if (jobs.empty()) return 0;

  core::TimeNs first = jobs[0].arrival_ns, last = jobs[0].arrival_ns;
  std::vector<core::TimeNs> solo;
  core::Int128 total = 0;
  std::map<std::string, std::int64_t> mix;
  for (const core::JobSpec& j : jobs) {
    first = std::min(first, j.arrival_ns);
    last = std::max(last, j.arrival_ns);
    solo.push_back(j.solo_ns());
    total += j.solo_ns();
    ++mix[j.workload.empty() ? "(explicit figures)" : j.workload];
  }
  std::sort(solo.begin(), solo.end());
  const std::size_t n = solo.size();
  const core::TimeNs span = last - first;
  std::printf("arrivals: first %s s, last %s s, span %s", run::seconds_text(first).c_str(),
              run::seconds_text(last).c_str(), seconds_and_minutes(span).c_str());
  if (n > 1) std::printf(", mean inter-arrival %.1f s", core::to_seconds(span) / static_cast<double>(n - 1));
  std::printf("\n");
  // Median: mean of the two middle values for an even count. p95: nearest rank, ceil(0.95 n).
  const core::TimeNs median = n % 2 ? solo[n / 2] : solo[n / 2 - 1] + (solo[n / 2] - solo[n / 2 - 1]) / 2;
  const std::size_t p95_rank = (95 * n + 99) / 100;
  const double total_s = static_cast<double>(total) / 1e9;
  std::printf("solo duration (iterations x iteration time):\n");
  std::printf("  median %s\n", seconds_and_minutes(median).c_str());
  const auto mean = static_cast<core::TimeNs>(total / static_cast<core::Int128>(n));
  std::printf("  mean   %s\n", seconds_and_minutes(mean).c_str());
  std::printf("  p95    %s\n", seconds_and_minutes(solo[p95_rank - 1]).c_str());
  std::printf("  min    %s\n", seconds_and_minutes(solo.front()).c_str());
  std::printf("  max    %s\n", seconds_and_minutes(solo.back()).c_str());
  std::printf("  total  %.1f s (%.1f min)", total_s, total_s / 60);
  if (span > 0) std::printf(", %.2f x the arrival span", total_s / core::to_seconds(span));
  std::printf("\n");
  std::size_t width = 0;
  for (const auto& [name, count] : mix) width = std::max(width, name.size());
  std::printf("workloads: %zu distinct\n", mix.size());
  for (const auto& [name, count] : mix) {
    std::printf("  %-*s %5lld  %5.1f%%\n", static_cast<int>(width), name.c_str(), static_cast<long long>(count),
                100.0 * static_cast<double>(count) / static_cast<double>(n));
  }
  return 0;
}

int body(int argc, char** argv) {
  if (argc < 2) throw core::InputError(std::string("no subcommand given (valid: ") + kSubcommands + ")");
  const std::string sub = argv[1];
  if (sub == "--help" || sub == "-h" || sub == "help") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (sub == "--version") {
    std::printf("%s\n", run::version_text("salus-trace").c_str());
    return 0;
  }
  if (sub == "formats") {
    if (argc > 2) throw core::InputError("formats: takes no arguments, got '" + std::string(argv[2]) + "'");
    std::fputs(run::trace_formats_help(true).c_str(), stdout);
    return 0;
  }
  // The subcommand's parser sees "salus-trace" as its program name and the rest as options.
  if (sub == "generate") return generate(argc - 1, argv + 1);
  if (sub == "stats") return stats(argc - 1, argv + 1);
  throw core::InputError("unknown subcommand '" + sub + "' (valid: " + kSubcommands + ")" +
                         core::did_you_mean(sub, std::vector<std::string>{"generate", "stats", "formats"}));
}

}  // namespace

int main(int argc, char** argv) { return salus::run::guarded_main("salus-trace", body, argc, argv); }
