#include "traces/generator.h"
#include "traces/csv.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <set>
#include <sstream>

#include "core/errors.h"

// Determinism: the same seed must give byte-identical traces with any compiler and standard
// library. So: no std::*_distribution (their algorithms are implementation-defined), and no libm
// log/exp (accuracy differs between libraries). Everything below uses only +, -, *, /, sqrt and
// exact operations (frexp, ldexp, floor), which IEEE 754 fixes bit for bit; traces/CMakeLists.txt
// compiles this file with -ffp-contract=off so no compiler fuses a*b+c into an FMA.

namespace salus::traces {
namespace {

// ---- PRNG: xoshiro256** seeded by splitmix64 (Blackman & Vigna) ---------------------------

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

class Rng {
 public:
  /// Stream `stream` of seed `seed`: distinct streams start from unrelated states.
  Rng(std::uint64_t seed, std::uint64_t stream) {
    std::uint64_t sm = seed ^ (stream * 0xD1B54A32D192ED03ull);
    for (std::uint64_t& w : s_) w = splitmix64(sm);
  }

  std::uint64_t next() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  /// Uniform in (0, 1], multiples of 2^-53 (never 0, so log() is finite).
  double open_unit() { return static_cast<double>((next() >> 11) + 1) * 0x1p-53; }

  /// Uniform integer in [0, n), without modulo bias (rejects the incomplete top block).
  std::uint64_t below(std::uint64_t n) {
    constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
    const std::uint64_t limit = kMax - kMax % n;
    for (;;) {
      const std::uint64_t x = next();
      if (x < limit) return x % n;
    }
  }

  /// Standard normal, Marsaglia's polar method (only the first of each pair is used, so every
  /// draw consumes whole rejection rounds and nothing is carried between jobs).
  double normal();

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
};

// ---- log and exp from basic operations -----------------------------------------------------

constexpr double kLn2 = 0.693147180559945309417;
// fdlibm's split of ln 2: kLn2Hi has its low bits zero, so k * kLn2Hi is exact for |k| < 2^11.
constexpr double kLn2Hi = 6.93147180369123816490e-01;
constexpr double kLn2Lo = 1.90821492927058770002e-10;

/// Natural log of a finite x > 0, to about 1 ulp: x = m 2^e with m in [sqrt(1/2), sqrt(2)),
/// ln m = 2 atanh(s) with s = (m - 1)/(m + 1), |s| < 0.172, by its series.
double det_log(double x) {
  int e = 0;
  double m = std::frexp(x, &e);  // exact, m in [0.5, 1)
  if (m < 0.70710678118654752440) {
    m *= 2;
    --e;
  }
  const double s = (m - 1) / (m + 1);
  const double s2 = s * s;
  // s2 < 0.0295: 16 terms reach far below double precision.
  double sum = 0;
  for (int k = 31; k >= 1; k -= 2) sum = sum * s2 + 1.0 / k;
  return 2 * s * sum + e * kLn2;
}

/// e^x for finite x: x = k ln2 + r with |r| <= ln2 / 2, e^r by its Taylor series, times 2^k.
double det_exp(double x) {
  if (x > 709.78) return std::numeric_limits<double>::infinity();
  if (x < -745.2) return 0;
  const double k = std::floor(x / kLn2 + 0.5);
  const double r = (x - k * kLn2Hi) - k * kLn2Lo;
  double sum = 1;
  for (int n = 22; n >= 1; --n) sum = 1 + sum * r / n;
  return std::ldexp(sum, static_cast<int>(k));
}

double Rng::normal() {
  for (;;) {
    const double u = 2 * open_unit() - 1;
    const double v = 2 * open_unit() - 1;
    const double s = u * u + v * v;
    if (s > 0 && s < 1) return u * std::sqrt(-2 * det_log(s) / s);
  }
}

// ---- options -------------------------------------------------------------------------------

// Stream numbers: one per trace column, so each column depends only on its own parameters.
constexpr std::uint64_t kArrivalStream = 1;
constexpr std::uint64_t kDurationStream = 2;
constexpr std::uint64_t kWorkloadStream = 3;
constexpr std::uint64_t kGangStream = 4;

const char* const kNonPaperWorkloads[] = {"lenet_32", "mlp_64"};

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void check_seconds(const char* option, double v, bool zero_ok) {
  if (!std::isfinite(v) || v < 0 || (!zero_ok && v == 0)) {
    throw core::InputError(std::string(option) + ": must be a finite number " + (zero_ok ? ">= 0" : "> 0"));
  }
  if (v > kMaxGeneratorSeconds) {
    throw core::InputError(std::string(option) + ": must be at most " +
                           std::to_string(static_cast<std::int64_t>(kMaxGeneratorSeconds)) + " s (about 3 years)");
  }
}

// The gang sizes sorted by size, each size once, every weight finite and > 0, their sum finite.
std::vector<GangSize> checked_gang_sizes(std::vector<GangSize> sizes) {
  std::stable_sort(sizes.begin(), sizes.end(), [](const GangSize& a, const GangSize& b) { return a.gpus < b.gpus; });
  double total = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const GangSize& g = sizes[i];
    const std::string size = std::to_string(g.gpus);
    if (g.gpus < 1) throw core::InputError("--gang-sizes: size " + size + " must be at least 1");
    if (!std::isfinite(g.weight) || g.weight <= 0) {
      throw core::InputError("--gang-sizes: the weight of size " + size + " must be a finite number > 0, got " +
                             format_number(g.weight));
    }
    if (i > 0 && sizes[i - 1].gpus == g.gpus) throw core::InputError("--gang-sizes: size " + size + " is listed twice");
    total += g.weight;
  }
  if (!std::isfinite(total)) throw core::InputError("--gang-sizes: the weights add up to more than a double holds");
  return sizes;
}

void check_options(const GeneratorOptions& opt) {
  if (opt.jobs <= 0) throw core::InputError("--jobs: must be a positive integer, got " + std::to_string(opt.jobs));
  if (opt.jobs > kMaxGeneratedJobs) {
    throw core::InputError("--jobs: must be at most " + std::to_string(kMaxGeneratedJobs) + ", got " +
                           std::to_string(opt.jobs));
  }
  check_seconds("--mean-interarrival-s", opt.mean_interarrival_s, true);
  check_seconds("--median-duration-s", opt.median_duration_s, false);
  if (!std::isfinite(opt.duration_sigma) || opt.duration_sigma < 0) {
    throw core::InputError("--duration-sigma: must be a finite number >= 0");
  }
  check_seconds("--min-duration-s", opt.min_duration_s, true);
  check_seconds("--max-duration-s", opt.max_duration_s, false);
  if (opt.min_duration_s > opt.max_duration_s) {
    throw core::InputError("--min-duration-s (" + format_number(opt.min_duration_s) +
                           ") must not exceed --max-duration-s (" + format_number(opt.max_duration_s) + ")");
  }
  SALUS_INVARIANT(std::isfinite(opt.reference_gpus) && opt.reference_gpus >= 0, "reference_gpus is finite and >= 0",
                  format_number(opt.reference_gpus));
}

// The workloads to draw from, sorted so the trace depends on the set, not on how it was typed.
std::vector<std::string> resolve_workloads(const Catalog& catalog, const std::vector<std::string>& requested) {
  if (requested.empty()) {
    std::vector<std::string> all = training_workloads(catalog);
    if (all.empty()) {
      throw core::InputError(catalog.path() + ": no training workloads to draw from (catalog has: " +
                             catalog.names_joined() + "); name some with --workloads");
    }
    return all;
  }
  std::set<std::string> seen;
  for (const std::string& name : requested) {
    if (name.empty()) throw core::InputError("--workloads: empty workload name");
    if (!catalog.find(name)) {
      throw core::InputError("--workloads: " + catalog.unknown_workload(name));
    }
    if (!seen.insert(name).second) throw core::InputError("--workloads: '" + name + "' is listed twice");
  }
  return {seen.begin(), seen.end()};
}

// Whole milliseconds (in ns) of a number of seconds >= 0; nullopt when not representable.
std::optional<core::TimeNs> whole_ms_ns(double seconds) {
  const double ms = seconds * 1000;
  if (!(ms >= 0 && ms < 9.2e12)) return std::nullopt;  // INT64_MAX ns = 9.22e12 ms
  return static_cast<core::TimeNs>(std::llround(ms)) * core::kNsPerMs;
}

std::string trimmed(const std::string& s) {
  const std::size_t a = s.find_first_not_of(" \t");
  return a == std::string::npos ? std::string() : s.substr(a, s.find_last_not_of(" \t") - a + 1);
}

// cdf[i] = P(size <= sizes[i]): running sums of the weights over their total, the last exactly 1.
std::vector<double> gang_cdf(const std::vector<GangSize>& sizes) {
  double total = 0;
  for (const GangSize& g : sizes) total += g.weight;
  std::vector<double> cdf;
  double sum = 0;
  for (const GangSize& g : sizes) {
    sum += g.weight;
    cdf.push_back(sum / total);
  }
  if (!cdf.empty()) cdf.back() = 1;
  return cdf;
}

// ---- shapes --------------------------------------------------------------------------------

// Helios (Hu et al., SC'21: four clusters, 6,416 GPUs, 3.36 M jobs from April to September 2020).
// Durations: median 10 min, sigma 2.2, clipped to [1 s, 14 days]: mean 6,374 s (analytically).
// Gang sizes: mean 2.84 GPUs. A mean gap of 4.7 s then offers 2.84 x 6,374 / 4.7 = 3,852 GPUs of
// work, 0.600 of 6,416, over 3.36 M x 4.7 s = 183 days.
constexpr TraceShape kHelios{.jobs = 3'360'000,
                             .mean_interarrival_s = 4.7,
                             .median_duration_s = 600,
                             .duration_sigma = 2.2,
                             .min_duration_s = 1,
                             .max_duration_s = 1'209'600,
                             .gang_sizes = "1:0.72,2:0.1,4:0.08,8:0.06,16:0.02,32:0.015,64:0.005",
                             .reference_gpus = 6416};

constexpr TraceShapeRegistry::Entry kShapes[] = {
    {"helios",
     "Helios-like (Hu et al., SC'21): 3360000 jobs over about six months (mean inter-arrival 4.7 s), 72% on 1 GPU, "
     "the rest gangs of 2 to 64 GPUs (powers of two), log-normal durations with median 10 min (sigma 2.2, clipped to "
     "[1 s, 14 days]); offered load about 0.6 of 6416 GPUs",
     kHelios},
};
constexpr TraceShapeRegistry kShapeRegistry("trace shape", kShapes);

constexpr TraceLayoutRegistry::Entry kLayouts[] = {
    {"native", "job_id,arrival_s,workload,iterations, and gpus when a job has more than one GPU (the native CSV)",
     TraceLayout::kNative},
    {"helios",
     "job_id,gpu_num,submit_time,duration: Helios' cluster_log.csv columns (read back as format helios: no "
     "workload, --assumed-memory); duration = the solo time, whole ms",
     TraceLayout::kHelios},
};
constexpr TraceLayoutRegistry kLayoutRegistry("trace layout", kLayouts);

// ---- writing -------------------------------------------------------------------------------

constexpr std::size_t kPieceBytes = 1 << 20;

void append_int(std::string& out, std::int64_t v) {
  char buf[24];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, end);
}

// Whole milliseconds >= 0 as seconds with exactly 3 decimals: 28443 -> "28.443".
void append_ms_as_seconds(std::string& out, std::int64_t ms) {
  append_int(out, ms / 1000);
  const auto frac = static_cast<int>(ms % 1000);
  out += '.';
  out += static_cast<char>('0' + frac / 100);
  out += static_cast<char>('0' + frac / 10 % 10);
  out += static_cast<char>('0' + frac % 10);
}

int id_width(std::size_t jobs) {
  return std::max<int>(3, static_cast<int>(std::to_string(jobs == 0 ? 0 : jobs - 1).size()));
}

void append_job_id(std::string& out, std::size_t index, int width) {
  char buf[24];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, index);
  const auto digits = static_cast<int>(end - buf);
  out += "job";
  if (digits < width) out.append(static_cast<std::size_t>(width - digits), '0');
  out.append(buf, end);
}

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

// 6 significant digits: 6416 -> "6416", 6416 / 33.6 -> "190.952".
std::string short_number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string header_text(const GeneratedTrace& trace, const std::string& header_comment, TraceLayout layout,
                        const OfferedLoad& load) {
  const GeneratorOptions& o = trace.options;
  std::ostringstream out;
  std::istringstream lines(header_comment);
  for (std::string line; std::getline(lines, line);) out << "# " << line << "\n";
  out << "# salus-trace generator: " << trace.jobs.size() << " jobs, seed " << o.seed << "\n";
  out << "# arrivals: Poisson, exponential inter-arrival times with mean " << format_number(o.mean_interarrival_s)
      << " s, first job at 0\n";
  out << "# solo duration: log-normal, median " << format_number(o.median_duration_s) << " s, sigma "
      << format_number(o.duration_sigma) << ", clipped to [" << format_number(o.min_duration_s) << " s, "
      << format_number(o.max_duration_s) << " s]; iterations = max(1, round(duration / iteration time))\n";
  out << "# workloads, uniform over " << o.workloads.size() << ":";
  for (std::size_t i = 0; i < o.workloads.size(); ++i) out << (i ? ", " : " ") << o.workloads[i];
  out << "\n";
  if (!trace.catalog_gpu.empty()) out << "# catalog GPU: " << trace.catalog_gpu << "\n";
  // Lines that a trace without gang sizes, shape or layout never had, so its bytes stay as they were.
  if (!o.gang_sizes.empty()) {
    out << "# GPUs per job, size: weight (drawn with probability weight / the sum of the weights):";
    for (std::size_t i = 0; i < o.gang_sizes.size(); ++i) {
      out << (i ? ", " : " ") << o.gang_sizes[i].gpus << ": " << format_number(o.gang_sizes[i].weight);
    }
    out << "\n";
  }
  if (!o.shape.empty()) {
    out << "# shape: " << o.shape << " for " << trace.jobs.size()
        << " jobs (the values above; options given beside --shape override the shape's); reference cluster "
        << short_number(o.reference_gpus) << " GPUs\n";
  }
  if (!o.gang_sizes.empty() || !o.shape.empty()) out << "# drawn: " << offered_load_text(trace, load) << "\n";
  if (layout == TraceLayout::kHelios) {
    out << "# layout helios: Helios cluster_log.csv columns; submit_time in seconds; duration = the solo time "
           "(iterations x iteration time), seconds rounded to whole ms\n";
  }
  return out.str();
}

}  // namespace

std::string format_number(double v) {
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  SALUS_INVARIANT(ec == std::errc(), "to_chars(double) fits in 64 chars", "");
  return std::string(buf, end);
}

std::string GeneratedTrace::job_id(std::size_t index) const {
  std::string id;
  append_job_id(id, index, id_width(jobs.size()));
  return id;
}

std::vector<std::string> training_workloads(const Catalog& catalog) {
  std::vector<std::string> out;
  for (const std::string& name : catalog.names()) {
    if (ends_with(name, "_infer")) continue;
    if (std::find(std::begin(kNonPaperWorkloads), std::end(kNonPaperWorkloads), name) != std::end(kNonPaperWorkloads)) {
      continue;
    }
    out.push_back(name);
  }
  return out;
}

std::vector<GangSize> parse_gang_sizes(std::string_view text) {
  const std::string expected = "SIZE:WEIGHT,... (e.g. 1:0.72,2:0.1,4:0.18)";
  const std::vector<std::string> items = core::split_list(text);
  if (items.empty()) throw core::InputError("--gang-sizes: empty list, expected " + expected);
  std::vector<GangSize> sizes;
  for (const std::string& item : items) {
    if (item.empty()) throw core::InputError("--gang-sizes: empty item in '" + std::string(text) + "'");
    const std::size_t colon = item.find(':');
    if (colon == std::string::npos) {
      throw core::InputError("--gang-sizes: '" + item + "' is not SIZE:WEIGHT, expected " + expected);
    }
    const std::string size = trimmed(item.substr(0, colon)), weight = trimmed(item.substr(colon + 1));
    GangSize g;
    const auto [size_end, size_ec] = std::from_chars(size.data(), size.data() + size.size(), g.gpus);
    const bool digits = !size.empty() && size.find_first_not_of("0123456789") == std::string::npos;
    if (!digits || size_ec != std::errc() || size_end != size.data() + size.size() || g.gpus < 1) {
      throw core::InputError("--gang-sizes: size '" + size + "' must be an integer in [1, 2147483647]");
    }
    const auto [weight_end, weight_ec] = std::from_chars(weight.data(), weight.data() + weight.size(), g.weight);
    if (weight.empty() || weight_ec != std::errc() || weight_end != weight.data() + weight.size() ||
        !std::isfinite(g.weight) || g.weight <= 0) {
      throw core::InputError("--gang-sizes: weight '" + weight + "' of size " + size + " must be a finite number > 0");
    }
    sizes.push_back(g);
  }
  return checked_gang_sizes(std::move(sizes));
}

static_assert(sizeof(GeneratedJob) == 40, "GeneratedJob is documented as 40 bytes");

GeneratedTrace generate_trace(const Catalog& catalog, const GeneratorOptions& opt) {
  check_options(opt);
  GeneratedTrace trace;
  trace.options = opt;
  trace.options.workloads = resolve_workloads(catalog, opt.workloads);
  trace.options.gang_sizes = checked_gang_sizes(opt.gang_sizes);
  trace.catalog_gpu = catalog.gpu();
  const std::vector<std::string>& names = trace.options.workloads;
  std::vector<core::TimeNs> iter_ns;
  for (const std::string& name : names) {
    const WorkloadProfile* profile = catalog.find(name);
    SALUS_INVARIANT(profile && profile->iter_ns > 0, "resolved workloads are in the catalog", name);
    iter_ns.push_back(profile->iter_ns);
  }
  const std::vector<GangSize>& sizes = trace.options.gang_sizes;
  const std::vector<double> cdf = gang_cdf(sizes);

  Rng arrivals(opt.seed, kArrivalStream);
  Rng durations(opt.seed, kDurationStream);
  Rng workloads(opt.seed, kWorkloadStream);
  Rng gangs(opt.seed, kGangStream);
  const double mu = det_log(opt.median_duration_s);

  core::TimeNs arrival = 0;
  trace.jobs.reserve(static_cast<std::size_t>(opt.jobs));
  for (int i = 0; i < opt.jobs; ++i) {
    GeneratedJob job;
    if (i > 0) {
      // Gaps are rounded to whole milliseconds so that the CSV's arrival_s (3 decimals) is exact.
      const double gap_s = -opt.mean_interarrival_s * det_log(arrivals.open_unit());
      const std::optional<core::TimeNs> gap = whole_ms_ns(gap_s);
      if (!gap || *gap > std::numeric_limits<core::TimeNs>::max() - arrival) {
        throw core::InputError("--mean-interarrival-s: arrival times overflow 64-bit nanoseconds; use a smaller mean "
                               "or fewer jobs");
      }
      arrival += *gap;
    }
    job.arrival_ns = arrival;

    const double drawn_s = det_exp(mu + opt.duration_sigma * durations.normal());
    const double clipped_s = std::min(std::max(drawn_s, opt.min_duration_s), opt.max_duration_s);
    const std::optional<core::TimeNs> duration = core::ns_from_seconds(clipped_s);
    SALUS_INVARIANT(duration.has_value(), "clipped duration fits in int64 ns", format_number(clipped_s));
    job.duration_ns = *duration;

    const std::uint64_t w = workloads.below(names.size());
    job.workload_index = static_cast<std::int32_t>(w);
    job.iter_ns = iter_ns[w];
    // Round half up in integers: max(1, round(duration / iter)).
    job.iterations = std::max<std::int64_t>(1, (job.duration_ns + job.iter_ns / 2) / job.iter_ns);

    if (!sizes.empty()) {
      // The first size whose cumulative probability reaches u; u is in (0, 1] and cdf ends at 1.
      const double u = gangs.open_unit();
      const auto k = static_cast<std::size_t>(std::lower_bound(cdf.begin(), cdf.end(), u) - cdf.begin());
      job.gpus = sizes[k].gpus;
    }
    trace.jobs.push_back(job);
  }
  return trace;
}

std::string offered_load_text(const GeneratedTrace& trace, const OfferedLoad& load) {
  const double n = static_cast<double>(std::max<std::size_t>(1, trace.jobs.size()));
  std::string text = fixed(100.0 * static_cast<double>(load.one_gpu_jobs) / n, 2) + "% of the jobs on 1 GPU, " +
                     fixed(load.mean_gpus, 3) + " GPUs per job; offered load: sum(gpus x solo time) / arrival span = " +
                     fixed(load.busy_gpus, 1) + " GPUs";
  if (trace.options.reference_gpus > 0) {
    text += ", " + fixed(load.load, 3) + " of " + short_number(trace.options.reference_gpus) + " GPUs";
  }
  return text;
}

OfferedLoad offered_load(const GeneratedTrace& trace) {
  OfferedLoad load;
  if (trace.jobs.empty()) return load;
  core::Int128 demand = 0;
  std::int64_t gpus = 0;
  for (const GeneratedJob& j : trace.jobs) {
    demand += static_cast<core::Int128>(j.gpus) * j.solo_ns();
    gpus += j.gpus;
    load.one_gpu_jobs += j.gpus == 1 ? 1 : 0;
  }
  load.mean_gpus = static_cast<double>(gpus) / static_cast<double>(trace.jobs.size());
  const core::TimeNs span = trace.jobs.back().arrival_ns - trace.jobs.front().arrival_ns;
  if (span > 0) load.busy_gpus = static_cast<double>(demand) / static_cast<double>(span);
  if (trace.options.reference_gpus > 0) load.load = load.busy_gpus / trace.options.reference_gpus;
  return load;
}

const TraceShapeRegistry& trace_shape_registry() { return kShapeRegistry; }
const TraceLayoutRegistry& trace_layout_registry() { return kLayoutRegistry; }

GeneratorOptions shaped_options(std::string_view name, const GeneratorOptions& typed,
                                const std::function<bool(std::string_view option)>& given) {
  const TraceShapeRegistry::Entry* entry = kShapeRegistry.find(name);
  if (entry == nullptr) throw core::InputError("--shape: " + kShapeRegistry.unknown(name));
  const TraceShape& s = entry->factory;
  GeneratorOptions o;
  o.seed = typed.seed;
  o.shape = std::string(entry->name);
  o.jobs = given("jobs") ? typed.jobs : s.jobs;
  o.mean_interarrival_s = s.mean_interarrival_s;
  o.reference_gpus = s.reference_gpus;
  if (o.jobs > 0 && o.jobs != s.jobs) {
    // The same span with fewer (more) jobs: arrivals that much rarer, on a cluster that much smaller.
    o.mean_interarrival_s = s.mean_interarrival_s * s.jobs / o.jobs;
    o.reference_gpus = s.reference_gpus * o.jobs / s.jobs;
  }
  o.median_duration_s = s.median_duration_s;
  o.duration_sigma = s.duration_sigma;
  o.min_duration_s = s.min_duration_s;
  o.max_duration_s = s.max_duration_s;
  o.gang_sizes = parse_gang_sizes(s.gang_sizes);
  // Options given beside --shape win.
  if (given("mean-interarrival-s")) o.mean_interarrival_s = typed.mean_interarrival_s;
  if (given("median-duration-s")) o.median_duration_s = typed.median_duration_s;
  if (given("duration-sigma")) o.duration_sigma = typed.duration_sigma;
  if (given("min-duration-s")) o.min_duration_s = typed.min_duration_s;
  if (given("max-duration-s")) o.max_duration_s = typed.max_duration_s;
  if (given("workloads")) o.workloads = typed.workloads;
  if (given("gang-sizes")) o.gang_sizes = typed.gang_sizes;
  return o;
}

void write_trace_csv(const GeneratedTrace& trace, const std::string& header_comment, TraceLayout layout,
                     const std::function<void(std::string_view piece)>& sink) {
  const OfferedLoad load = offered_load(trace);
  const bool gangs = load.one_gpu_jobs < static_cast<std::int64_t>(trace.jobs.size());
  std::string buf = header_text(trace, header_comment, layout, load);
  buf.reserve(kPieceBytes + 4096);
  const int width = id_width(trace.jobs.size());
  if (layout == TraceLayout::kHelios) {
    buf += "job_id,gpu_num,submit_time,duration\n";
  } else {
    buf += gangs ? "job_id,arrival_s,workload,iterations,gpus\n" : "job_id,arrival_s,workload,iterations\n";
  }
  std::vector<std::string> fields;  // each workload as a CSV field, quoted where needed
  for (const std::string& name : trace.options.workloads) {
    fields.emplace_back();
    append_csv_field(fields.back(), name);
  }
  for (std::size_t i = 0; i < trace.jobs.size(); ++i) {
    const GeneratedJob& j = trace.jobs[i];
    append_job_id(buf, i, width);
    buf += ',';
    // arrival_ns is whole milliseconds, so 3 decimals are exact.
    if (layout == TraceLayout::kHelios) {
      append_int(buf, j.gpus);
      buf += ',';
      append_ms_as_seconds(buf, j.arrival_ns / core::kNsPerMs);
      buf += ',';
      // Round half up; a job never reads back as 0 s, which the Helios reader skips.
      append_ms_as_seconds(buf, std::max<core::TimeNs>(1, (j.solo_ns() + core::kNsPerMs / 2) / core::kNsPerMs));
    } else {
      append_ms_as_seconds(buf, j.arrival_ns / core::kNsPerMs);
      buf += ',';
      buf += fields[static_cast<std::size_t>(j.workload_index)];
      buf += ',';
      append_int(buf, j.iterations);
      if (gangs) {
        buf += ',';
        append_int(buf, j.gpus);
      }
    }
    buf += '\n';
    if (buf.size() >= kPieceBytes) {
      sink(buf);
      buf.clear();
    }
  }
  if (!buf.empty()) sink(buf);
}

std::string trace_csv(const GeneratedTrace& trace, const std::string& header_comment, TraceLayout layout) {
  std::string out;
  write_trace_csv(trace, header_comment, layout, [&out](std::string_view piece) { out += piece; });
  return out;
}

std::string to_native_csv(const GeneratedTrace& trace, const std::string& header_comment) {
  return trace_csv(trace, header_comment, TraceLayout::kNative);
}

}  // namespace salus::traces
