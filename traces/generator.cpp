#include "traces/generator.h"
#include "traces/csv.h"

#include <algorithm>
#include <charconv>
#include <cmath>
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
      throw core::InputError("--workloads: unknown workload '" + name + "' (valid: " + catalog.names_joined() + ")");
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


}  // namespace

std::string format_number(double v) {
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  SALUS_INVARIANT(ec == std::errc(), "to_chars(double) fits in 64 chars", "");
  return std::string(buf, end);
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

GeneratedTrace generate_trace(const Catalog& catalog, const GeneratorOptions& opt) {
  check_options(opt);
  GeneratedTrace trace;
  trace.options = opt;
  trace.options.workloads = resolve_workloads(catalog, opt.workloads);
  trace.catalog_gpu = catalog.gpu();
  const std::vector<std::string>& names = trace.options.workloads;

  Rng arrivals(opt.seed, kArrivalStream);
  Rng durations(opt.seed, kDurationStream);
  Rng workloads(opt.seed, kWorkloadStream);
  const double mu = det_log(opt.median_duration_s);
  const int width = std::max<int>(3, static_cast<int>(std::to_string(opt.jobs - 1).size()));

  core::TimeNs arrival = 0;
  trace.jobs.reserve(static_cast<std::size_t>(opt.jobs));
  for (int i = 0; i < opt.jobs; ++i) {
    GeneratedJob job;
    const std::string id = std::to_string(i);
    const std::size_t pad = static_cast<std::size_t>(width) - std::min<std::size_t>(id.size(), width);
    job.job_id = "job" + std::string(pad, '0') + id;

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

    job.workload = names[workloads.below(names.size())];
    const WorkloadProfile* profile = catalog.find(job.workload);
    SALUS_INVARIANT(profile && profile->iter_ns > 0, "resolved workloads are in the catalog", job.workload);
    job.iter_ns = profile->iter_ns;
    // Round half up in integers: max(1, round(duration / iter)).
    job.iterations = std::max<std::int64_t>(1, (job.duration_ns + job.iter_ns / 2) / job.iter_ns);
    trace.jobs.push_back(std::move(job));
  }
  return trace;
}

std::string to_native_csv(const GeneratedTrace& trace, const std::string& header_comment) {
  auto field = [](const std::string& v) {
    std::string f;
    append_csv_field(f, v);
    return f;
  };
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
  out << "job_id,arrival_s,workload,iterations\n";
  for (const GeneratedJob& j : trace.jobs) {
    // Integer formatting: arrival_ns is whole milliseconds, so 3 decimals are exact.
    const core::TimeNs ms = j.arrival_ns / core::kNsPerMs;
    const std::string frac = std::to_string(ms % 1000);
    out << j.job_id << "," << ms / 1000 << "." << std::string(3 - frac.size(), '0') << frac << ","
        << field(j.workload) << "," << j.iterations << "\n";
  }
  return out.str();
}

}  // namespace salus::traces
