// The trace generator: determinism, a golden tiny trace, the CSV round trip through load_trace,
// the distributions it promises (checked on 20000 jobs), workload selection and bad options.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/errors.h"
#include "support/temp_files.h"
#include "traces/catalog.h"
#include "traces/generator.h"
#include "traces/trace.h"

namespace core = salus::core;
using salus::traces::Catalog;
using salus::traces::GeneratedJob;
using salus::traces::GeneratedTrace;
using salus::traces::generate_trace;
using salus::traces::GeneratorOptions;
using salus::traces::to_native_csv;
using salus::traces::training_workloads;

namespace {

using salus::test::temp_file;

std::string entry(const std::string& name, double iter_ms) {
  return R"({"name": ")" + name + R"(", "persistent_mib": 100, "ephemeral_mib": 200, "iter_ms": )" +
         salus::traces::format_number(iter_ms) + R"(, "gpu_util": 0.5, "source": "test"})";
}

std::string catalog_text(const std::vector<std::string>& entries) {
  std::string text = "{\"format\": \"salus-catalog/1\", \"gpu\": \"test GPU\", \"workloads\": [\n";
  for (std::size_t i = 0; i < entries.size(); ++i) text += (i ? ",\n" : "") + entries[i];
  return text + "\n]}\n";
}

// Four training workloads with iteration times from 0.5 ms to 1 s, plus entries the default
// selection must skip: an inference entry and the two non-paper test workloads.
Catalog gen_catalog() {
  return Catalog::load(temp_file("generator_catalog.json",
                                 catalog_text({entry("alpha_10", 10), entry("beta_20", 250), entry("gamma_5", 1000),
                                               entry("delta_64", 0.5), entry("alpha_infer", 4), entry("lenet_32", 2),
                                               entry("mlp_64", 1.5)})));
}

const std::vector<std::string> kTraining = {"alpha_10", "beta_20", "delta_64", "gamma_5"};

/// Fixed parameters (not the defaults, which may be retuned): the distribution checks below are
/// written for these numbers.
GeneratorOptions options(int jobs, std::uint64_t seed) {
  GeneratorOptions o;
  o.jobs = jobs;
  o.seed = seed;
  o.mean_interarrival_s = 90;
  o.median_duration_s = 120;
  o.duration_sigma = 1.1;
  o.min_duration_s = 20;
  o.max_duration_s = 3600;
  return o;
}

void check_error(const Catalog& catalog, const GeneratorOptions& o, const std::string& what) {
  try {
    generate_trace(catalog, o);
    FAIL("no error, expected: " << what);
  } catch (const core::InputError& e) {
    CHECK(std::string(e.what()) == what);
  }
}

double seconds(core::TimeNs ns) { return core::to_seconds(ns); }

// Standard normal CDF (the tests may use libm: they check statistics, not bytes).
double phi(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

std::vector<double> sorted_durations_s(const GeneratedTrace& t) {
  std::vector<double> d;
  for (const GeneratedJob& j : t.jobs) d.push_back(seconds(j.duration_ns));
  std::sort(d.begin(), d.end());
  return d;
}

double quantile(const std::vector<double>& sorted, double q) {
  return sorted[static_cast<std::size_t>(q * static_cast<double>(sorted.size() - 1) + 0.5)];
}

// Pearson's statistic for "each of the k names is equally likely"; with k - 1 degrees of
// freedom its mean is k - 1 and its standard deviation sqrt(2 (k - 1)).
double chi_square(const std::map<std::string, int>& counts, std::size_t k, std::size_t n) {
  const double expected = static_cast<double>(n) / static_cast<double>(k);
  double chi2 = 0;
  for (const auto& [name, c] : counts) chi2 += (c - expected) * (c - expected) / expected;
  chi2 += static_cast<double>(k - counts.size()) * expected;  // names never drawn
  return chi2;
}

double chi_square_bound(std::size_t k) {
  const double df = static_cast<double>(k - 1);
  return df + 5 * std::sqrt(2 * df);
}

}  // namespace

TEST_CASE("generator: the default workloads are the catalog's training entries, sorted") {
  CHECK(training_workloads(gen_catalog()) == kTraining);
  const GeneratedTrace t = generate_trace(gen_catalog(), options(10, 1));
  CHECK(t.options.workloads == kTraining);
  CHECK(t.catalog_gpu == "test GPU");
}

TEST_CASE("generator: same options give the same bytes, other seeds other traces") {
  const Catalog catalog = gen_catalog();
  const std::string a = to_native_csv(generate_trace(catalog, options(200, 42)), "header");
  const std::string b = to_native_csv(generate_trace(catalog, options(200, 42)), "header");
  CHECK(a == b);
  const std::string c = to_native_csv(generate_trace(catalog, options(200, 43)), "header");
  CHECK(a != c);
  // A different seed changes every column, not just one.
  const GeneratedTrace x = generate_trace(catalog, options(200, 42));
  const GeneratedTrace y = generate_trace(catalog, options(200, 43));
  int same_arrival = 0, same_duration = 0, same_workload = 0;
  for (std::size_t i = 1; i < x.jobs.size(); ++i) {
    same_arrival += x.jobs[i].arrival_ns == y.jobs[i].arrival_ns;
    same_duration += x.jobs[i].duration_ns == y.jobs[i].duration_ns;
    same_workload += x.jobs[i].workload_index == y.jobs[i].workload_index;
  }
  CHECK(same_arrival < 5);
  CHECK(same_duration < 20);  // the lower clip makes some equal
  CHECK(same_workload < 100);
}

TEST_CASE("generator: the defaults are the documented ones (traces/README.md)") {
  const GeneratorOptions o;
  CHECK(o.jobs == 100);
  CHECK(o.seed == 1);
  CHECK(o.mean_interarrival_s == 60);
  CHECK(o.median_duration_s == 60);
  CHECK(o.duration_sigma == 1.8);
  CHECK(o.min_duration_s == 20);
  CHECK(o.max_duration_s == 7200);
}

TEST_CASE("generator: golden tiny trace (seed 1, 6 jobs, the test catalog)") {
  // Pins the PRNG, the sampling and the CSV form: a change here changes every shipped trace. The
  // rows were checked against an independent Python transcription using the platform's log/exp.
  const std::string csv = to_native_csv(generate_trace(gen_catalog(), options(6, 1)), "Generated by: test\nline two");
  CHECK(csv ==
        "# Generated by: test\n"
        "# line two\n"
        "# salus-trace generator: 6 jobs, seed 1\n"
        "# arrivals: Poisson, exponential inter-arrival times with mean 90 s, first job at 0\n"
        "# solo duration: log-normal, median 120 s, sigma 1.1, clipped to [20 s, 3600 s]; iterations = max(1, "
        "round(duration / iteration time))\n"
        "# workloads, uniform over 4: alpha_10, beta_20, delta_64, gamma_5\n"
        "# catalog GPU: test GPU\n"
        "job_id,arrival_s,workload,iterations\n"
        "job000,0.000,delta_64,66412\n"
        "job001,28.443,delta_64,511820\n"
        "job002,235.420,gamma_5,179\n"
        "job003,298.553,delta_64,40000\n"
        "job004,494.099,gamma_5,561\n"
        "job005,522.765,delta_64,233993\n");
}

TEST_CASE("generator: the CSV loads back through load_trace as the same jobs") {
  const Catalog catalog = gen_catalog();
  const GeneratedTrace t = generate_trace(catalog, options(300, 5));
  const std::string path = temp_file("generator_roundtrip.csv", to_native_csv(t, "round trip"));
  const salus::traces::Trace loaded = salus::traces::load_trace(path, catalog);
  CHECK(loaded.format == salus::traces::TraceFormat::kNative);
  REQUIRE(loaded.jobs.size() == t.jobs.size());
  for (std::size_t i = 0; i < t.jobs.size(); ++i) {
    const GeneratedJob& g = t.jobs[i];
    const core::JobSpec& j = loaded.jobs[i];
    INFO("job ", t.job_id(i));
    CHECK(j.id == t.job_id(i));
    CHECK(j.arrival_ns == g.arrival_ns);
    CHECK(j.workload == t.workload_of(g));
    CHECK(j.gpus == 1);
    CHECK(j.iterations == g.iterations);
    CHECK(j.iter_ns == g.iter_ns);
    CHECK(j.solo_ns() == g.solo_ns());
  }
}

TEST_CASE("generator: job ids are zero-padded to the width of the last id") {
  const Catalog catalog = gen_catalog();
  CHECK(generate_trace(catalog, options(1, 1)).job_id(0) == "job000");
  const GeneratedTrace hundred = generate_trace(catalog, options(100, 1));
  CHECK(hundred.job_id(0) == "job000");
  CHECK(hundred.job_id(99) == "job099");
  CHECK(generate_trace(catalog, options(1000, 1)).job_id(999) == "job999");
  const GeneratedTrace more = generate_trace(catalog, options(1001, 1));
  CHECK(more.job_id(0) == "job0000");
  CHECK(more.job_id(1000) == "job1000");
}

TEST_CASE("generator: 20000 jobs follow the documented distributions") {
  const Catalog catalog = gen_catalog();
  const int n = 20000;
  const GeneratedTrace t = generate_trace(catalog, options(n, 2020));
  REQUIRE(t.jobs.size() == static_cast<std::size_t>(n));
  const GeneratorOptions& o = t.options;

  SUBCASE("arrivals: first at 0, non-decreasing, whole ms, exponential gaps with mean 90 s") {
    CHECK(t.jobs[0].arrival_ns == 0);
    int longer_than_mean = 0;
    for (std::size_t i = 1; i < t.jobs.size(); ++i) {
      REQUIRE(t.jobs[i].arrival_ns >= t.jobs[i - 1].arrival_ns);
      CHECK(t.jobs[i].arrival_ns % core::kNsPerMs == 0);
      longer_than_mean += seconds(t.jobs[i].arrival_ns - t.jobs[i - 1].arrival_ns) > o.mean_interarrival_s;
    }
    // Standard error of the mean gap: 90 s / sqrt(n) = 0.7%.
    const double mean_gap = seconds(t.jobs.back().arrival_ns) / (n - 1);
    CHECK(mean_gap == doctest::Approx(90).epsilon(0.03));
    // P(gap > mean) = 1/e for an exponential (0.5 for a uniform or normal one); s.e. 0.0034.
    CHECK(longer_than_mean / double(n - 1) == doctest::Approx(std::exp(-1.0)).epsilon(0.04));
  }

  SUBCASE("durations: log-normal median 120 s, sigma 1.1, clipped to [20 s, 3600 s]") {
    const std::vector<double> d = sorted_durations_s(t);
    CHECK(d.front() >= 20);
    CHECK(d.back() <= 3600);
    // Standard error of ln(sample median): 1.1 sqrt(pi / 2) / sqrt(n) = 1%.
    CHECK(quantile(d, 0.5) == doctest::Approx(120).epsilon(0.04));
    // Quartiles at 120 e^(-+0.6745 sigma) pin sigma: a wrong sigma moves both.
    CHECK(quantile(d, 0.25) == doctest::Approx(120 * std::exp(-0.6744898 * 1.1)).epsilon(0.05));
    CHECK(quantile(d, 0.75) == doctest::Approx(120 * std::exp(0.6744898 * 1.1)).epsilon(0.05));
    // The heavy tail: 5% above the log-normal's 95th percentile (732 s); s.e. 0.0015.
    const double p95 = 120 * std::exp(1.6448536 * 1.1);
    const auto above = std::count_if(d.begin(), d.end(), [&](double s) { return s > p95; });
    CHECK(std::abs(above / double(n) - 0.05) < 0.006);
    // Clipping, not redrawing: the mass below 20 s sits at exactly 20 s.
    const auto at_min = std::count_if(d.begin(), d.end(), [](double s) { return s == 20; });
    CHECK(std::abs(at_min / double(n) - phi(std::log(20.0 / 120) / 1.1)) < 0.007);
    const auto at_max = std::count_if(d.begin(), d.end(), [](double s) { return s == 3600; });
    CHECK(at_max < 0.004 * n);  // P(> 3600 s) = 0.1%
  }

  SUBCASE("iterations = max(1, round(duration / iteration time))") {
    for (const GeneratedJob& j : t.jobs) {
      const double ratio = static_cast<double>(j.duration_ns) / static_cast<double>(j.iter_ns);
      const core::TimeNs expected = std::max<core::TimeNs>(1, std::llround(ratio));
      REQUIRE(j.iterations == expected);
      REQUIRE(j.iter_ns == catalog.find(t.workload_of(j))->iter_ns);
      if (j.iterations > 1) REQUIRE(std::abs(j.solo_ns() - j.duration_ns) <= j.iter_ns / 2);
    }
  }

  SUBCASE("workloads: every training entry, uniformly, nothing else") {
    std::map<std::string, int> counts;
    for (const GeneratedJob& j : t.jobs) ++counts[t.workload_of(j)];
    std::vector<std::string> seen;
    for (const auto& [name, c] : counts) seen.push_back(name);
    CHECK(seen == kTraining);
    // Each share 25% +- 1.2%: off by 5% of its share gives chi-square ~50.
    CHECK(chi_square(counts, kTraining.size(), n) < chi_square_bound(kTraining.size()));
  }
}

TEST_CASE("generator: the shipped catalog's training workloads all appear, uniformly") {
  const Catalog catalog = Catalog::load_default();
  const std::vector<std::string> training = training_workloads(catalog);
  REQUIRE(!training.empty());
  for (const std::string& name : training) {
    CHECK(!name.ends_with("_infer"));
    CHECK(name != "lenet_32");
    CHECK(name != "mlp_64");
  }
  const std::size_t n = 400 * training.size();
  const GeneratedTrace t = generate_trace(catalog, options(static_cast<int>(n), 3));
  std::map<std::string, int> counts;
  for (const GeneratedJob& j : t.jobs) ++counts[t.workload_of(j)];
  std::vector<std::string> seen;
  for (const auto& [name, c] : counts) seen.push_back(name);
  CHECK(seen == training);
  CHECK(chi_square(counts, training.size(), n) < chi_square_bound(training.size()));
}

TEST_CASE("generator: --workloads restricts the draw and leaves arrivals and durations alone") {
  const Catalog catalog = gen_catalog();
  GeneratorOptions o = options(2000, 9);
  o.workloads = {"gamma_5", "lenet_32"};  // any catalog entry may be named, in any order
  const GeneratedTrace t = generate_trace(catalog, o);
  CHECK(t.options.workloads == std::vector<std::string>{"gamma_5", "lenet_32"});
  std::map<std::string, int> counts;
  for (const GeneratedJob& j : t.jobs) ++counts[t.workload_of(j)];
  REQUIRE(counts.size() == 2);
  CHECK(counts["gamma_5"] + counts["lenet_32"] == 2000);
  CHECK(chi_square(counts, 2, 2000) < chi_square_bound(2));

  // The order of the list does not matter; the other columns come from their own streams.
  o.workloads = {"lenet_32", "gamma_5"};
  CHECK(to_native_csv(generate_trace(catalog, o), "") == to_native_csv(t, ""));
  const GeneratedTrace all = generate_trace(catalog, options(2000, 9));
  for (std::size_t i = 0; i < t.jobs.size(); ++i) {
    REQUIRE(t.jobs[i].arrival_ns == all.jobs[i].arrival_ns);
    REQUIRE(t.jobs[i].duration_ns == all.jobs[i].duration_ns);
  }
}

TEST_CASE("generator: degenerate parameters") {
  const Catalog catalog = gen_catalog();
  GeneratorOptions o = options(50, 4);
  o.mean_interarrival_s = 0;
  o.duration_sigma = 0;
  for (const GeneratedJob& j : generate_trace(catalog, o).jobs) {
    CHECK(j.arrival_ns == 0);
    CHECK(j.duration_ns == 120 * core::kNsPerS);  // exp(log(120)) to the nanosecond
  }
  o.min_duration_s = o.max_duration_s = 30;
  o.duration_sigma = 2;
  for (const GeneratedJob& j : generate_trace(catalog, o).jobs) CHECK(j.duration_ns == 30 * core::kNsPerS);
  // One iteration longer than twice the duration still makes one iteration.
  o.workloads = {"gamma_5"};
  o.min_duration_s = o.max_duration_s = 0.2;
  for (const GeneratedJob& j : generate_trace(catalog, o).jobs) CHECK(j.iterations == 1);
}

TEST_CASE("generator: bad options name the option") {
  const Catalog catalog = gen_catalog();
  const double nan = std::nan("");
  auto with = [](auto set) {
    GeneratorOptions o;
    set(o);
    return o;
  };
  check_error(catalog, with([](GeneratorOptions& o) { o.jobs = 0; }), "--jobs: must be a positive integer, got 0");
  check_error(catalog, with([](GeneratorOptions& o) { o.jobs = -3; }), "--jobs: must be a positive integer, got -3");
  check_error(catalog, with([](GeneratorOptions& o) { o.jobs = 10'000'001; }),
              "--jobs: must be at most 10000000, got 10000001");
  check_error(catalog, with([&](GeneratorOptions& o) { o.mean_interarrival_s = nan; }),
              "--mean-interarrival-s: must be a finite number >= 0");
  check_error(catalog, with([](GeneratorOptions& o) { o.mean_interarrival_s = -1; }),
              "--mean-interarrival-s: must be a finite number >= 0");
  check_error(catalog, with([](GeneratorOptions& o) { o.median_duration_s = 0; }),
              "--median-duration-s: must be a finite number > 0");
  check_error(catalog, with([](GeneratorOptions& o) { o.duration_sigma = -0.5; }),
              "--duration-sigma: must be a finite number >= 0");
  check_error(catalog, with([](GeneratorOptions& o) { o.duration_sigma = INFINITY; }),
              "--duration-sigma: must be a finite number >= 0");
  check_error(catalog, with([](GeneratorOptions& o) { o.min_duration_s = -1; }),
              "--min-duration-s: must be a finite number >= 0");
  check_error(catalog, with([](GeneratorOptions& o) { o.max_duration_s = 0; }),
              "--max-duration-s: must be a finite number > 0");
  check_error(catalog, with([](GeneratorOptions& o) { o.max_duration_s = 1e9; }),
              "--max-duration-s: must be at most 100000000 s (about 3 years)");
  check_error(catalog, with([](GeneratorOptions& o) {
                o.jobs = 1000;
                o.mean_interarrival_s = 1e8;  // ~92 jobs reach INT64_MAX ns
              }),
              "--mean-interarrival-s: arrival times overflow 64-bit nanoseconds; use a smaller mean or fewer jobs");
  check_error(catalog, with([](GeneratorOptions& o) {
                o.min_duration_s = 600;
                o.max_duration_s = 60.5;
              }),
              "--min-duration-s (600) must not exceed --max-duration-s (60.5)");
}

TEST_CASE("generator: unknown, repeated and empty workload names") {
  const Catalog catalog = gen_catalog();
  const std::string valid = "alpha_10, alpha_infer, beta_20, delta_64, gamma_5, lenet_32, mlp_64";
  GeneratorOptions o;
  o.workloads = {"alpha_10", "resnet50_25"};
  check_error(catalog, o, "--workloads: unknown workload 'resnet50_25' (valid: " + valid + ")");
  o.workloads = {"alpha_10", "beta_20", "alpha_10"};
  check_error(catalog, o, "--workloads: 'alpha_10' is listed twice");
  o.workloads = {"alpha_10", ""};
  check_error(catalog, o, "--workloads: empty workload name");

  const std::string path =
      temp_file("generator_infer_only.json", catalog_text({entry("a_infer", 1), entry("mlp_64", 1)}));
  check_error(Catalog::load(path), GeneratorOptions{},
              path + ": no training workloads to draw from (catalog has: a_infer, mlp_64); name some with --workloads");
  o.workloads = {"mlp_64"};
  CHECK(generate_trace(Catalog::load(path), o).jobs.size() == 100);
}

TEST_CASE("generator: workload names that need CSV quoting survive the round trip") {
  const std::string path = temp_file("generator_quoted.json", catalog_text({entry("odd, \\\"name\\\"", 10)}));
  const Catalog catalog = Catalog::load(path);
  const GeneratedTrace t = generate_trace(catalog, options(3, 1));
  REQUIRE(t.workload_of(t.jobs[0]) == "odd, \"name\"");
  const std::string csv = to_native_csv(t, "");
  CHECK(csv.find(",\"odd, \"\"name\"\"\",") != std::string::npos);
  const salus::traces::Trace loaded = salus::traces::load_trace(temp_file("generator_quoted.csv", csv), catalog);
  REQUIRE(loaded.jobs.size() == 3);
  CHECK(loaded.jobs[2].workload == "odd, \"name\"");
}

// ---- gang sizes, shapes, layouts --------------------------------------------------------------

namespace {

using salus::traces::GangSize;
using salus::traces::offered_load;
using salus::traces::OfferedLoad;
using salus::traces::parse_gang_sizes;
using salus::traces::shaped_options;
using salus::traces::trace_csv;
using salus::traces::TraceLayout;

const char* const kHeliosGangs = "1:0.72,2:0.1,4:0.08,8:0.06,16:0.02,32:0.015,64:0.005";

void check_gang_error(const std::string& text, const std::string& what) {
  CAPTURE(text);
  try {
    parse_gang_sizes(text);
    FAIL("no error, expected: " << what);
  } catch (const core::InputError& e) {
    CHECK(std::string(e.what()) == what);
  }
}

// The rows of a CSV: every line after the first that does not start with '#' (the header).
std::vector<std::string> rows_of(const std::string& csv) {
  std::vector<std::string> rows;
  std::size_t start = 0;
  bool header = true;
  while (start < csv.size()) {
    const std::size_t nl = csv.find('\n', start);
    const std::string line = csv.substr(start, nl - start);
    start = nl + 1;
    if (line.starts_with("#")) continue;
    if (header) {
      header = false;
      continue;
    }
    rows.push_back(line);
  }
  return rows;
}

// Options as `salus-trace generate --shape helios` with the options named in `given`.
GeneratorOptions helios(const GeneratorOptions& typed, std::set<std::string> given) {
  return shaped_options("helios", typed, [&given](std::string_view name) { return given.count(std::string(name)) > 0; });
}

}  // namespace

TEST_CASE("generator: --gang-sizes parses SIZE:WEIGHT lists, sorted by size") {
  const std::vector<GangSize> g = parse_gang_sizes(" 4:1 , 1:3,2 : 0.5e0 ");
  REQUIRE(g.size() == 3);
  CHECK(g[0].gpus == 1);
  CHECK(g[0].weight == 3);
  CHECK(g[1].gpus == 2);
  CHECK(g[1].weight == 0.5);
  CHECK(g[2].gpus == 4);
  CHECK(g[2].weight == 1);
  CHECK(parse_gang_sizes(kHeliosGangs).size() == 7);
  CHECK(parse_gang_sizes("2147483647:1")[0].gpus == 2147483647);
}

TEST_CASE("generator: bad --gang-sizes name the option and what is wrong") {
  const std::string expected = "expected SIZE:WEIGHT,... (e.g. 1:0.72,2:0.1,4:0.18)";
  check_gang_error("", "--gang-sizes: empty list, " + expected);
  check_gang_error("1:0.5,,2:0.5", "--gang-sizes: empty item in '1:0.5,,2:0.5'");
  check_gang_error("1:0.5,", "--gang-sizes: empty item in '1:0.5,'");
  check_gang_error("4", "--gang-sizes: '4' is not SIZE:WEIGHT, " + expected);
  for (const char* size : {"0", "-2", "1.5", "x", "", "2147483648", "+1", "1e1"}) {
    check_gang_error(std::string(size) + ":1", "--gang-sizes: size '" + std::string(size) + "' must be an integer in [1, 2147483647]");
  }
  for (const char* weight : {"0", "-1", "nan", "inf", "", "abc", "1e999", "0x1p1", "1:2", "0.5 0.5"}) {
    check_gang_error(std::string("1:1,2:") + weight,
                     "--gang-sizes: weight '" + std::string(weight) + "' of size 2 must be a finite number > 0");
  }
  check_gang_error("2:1,1:1,2:3", "--gang-sizes: size 2 is listed twice");
  check_gang_error("1:1e308,2:1e308", "--gang-sizes: the weights add up to more than a double holds");

  // Options set in code are checked as strictly.
  const Catalog catalog = gen_catalog();
  GeneratorOptions o = options(10, 1);
  o.gang_sizes = {GangSize{.gpus = 0, .weight = 1}};
  check_error(catalog, o, "--gang-sizes: size 0 must be at least 1");
  o.gang_sizes = {GangSize{.gpus = 2, .weight = 0}};
  check_error(catalog, o, "--gang-sizes: the weight of size 2 must be a finite number > 0, got 0");
  o.gang_sizes = {GangSize{.gpus = 2, .weight = 1}, GangSize{.gpus = 2, .weight = 1}};
  check_error(catalog, o, "--gang-sizes: size 2 is listed twice");
}

TEST_CASE("generator: golden tiny gang trace in both layouts (seed 1, 6 jobs, the test catalog)") {
  // The rows of the golden trace above with a gpus column; the sizes 1, 8, 2, 1, 2, 1 were checked
  // against an independent Python transcription of the PRNG (stream 4) and the draw.
  GeneratorOptions o = options(6, 1);
  o.gang_sizes = parse_gang_sizes("8:1,4:1,2:1,1:1");
  const GeneratedTrace t = generate_trace(gen_catalog(), o);
  // sum(gpus x solo) = 33.206 + 8 x 255.91 + 2 x 179 + 20 + 2 x 561 + 116.9965 = 3697.4825 s over 522.765 s.
  const std::string header =
      "# Generated by: test\n"
      "# salus-trace generator: 6 jobs, seed 1\n"
      "# arrivals: Poisson, exponential inter-arrival times with mean 90 s, first job at 0\n"
      "# solo duration: log-normal, median 120 s, sigma 1.1, clipped to [20 s, 3600 s]; iterations = max(1, "
      "round(duration / iteration time))\n"
      "# workloads, uniform over 4: alpha_10, beta_20, delta_64, gamma_5\n"
      "# catalog GPU: test GPU\n"
      "# GPUs per job, size: weight (drawn with probability weight / the sum of the weights): 1: 1, 2: 1, 4: 1, 8: 1\n"
      "# drawn: 50.00% of the jobs on 1 GPU, 2.500 GPUs per job; offered load: sum(gpus x solo time) / arrival span "
      "= 7.1 GPUs\n";
  CHECK(to_native_csv(t, "Generated by: test") == header +
                                        "job_id,arrival_s,workload,iterations,gpus\n"
                                        "job000,0.000,delta_64,66412,1\n"
                                        "job001,28.443,delta_64,511820,8\n"
                                        "job002,235.420,gamma_5,179,2\n"
                                        "job003,298.553,delta_64,40000,1\n"
                                        "job004,494.099,gamma_5,561,2\n"
                                        "job005,522.765,delta_64,233993,1\n");
  // Helios: duration = the solo time rounded to whole ms (116.9965 s rounds up).
  CHECK(trace_csv(t, "Generated by: test", TraceLayout::kHelios) ==
        header +
            "# layout helios: Helios cluster_log.csv columns; submit_time in seconds; duration = the solo time "
            "(iterations x iteration time), seconds rounded to whole ms\n"
            "job_id,gpu_num,submit_time,duration\n"
            "job000,1,0.000,33.206\n"
            "job001,8,28.443,255.910\n"
            "job002,2,235.420,179.000\n"
            "job003,1,298.553,20.000\n"
            "job004,2,494.099,561.000\n"
            "job005,1,522.765,116.997\n");
  const OfferedLoad load = offered_load(t);
  CHECK(load.one_gpu_jobs == 3);
  CHECK(load.mean_gpus == 2.5);
  CHECK(load.busy_gpus == doctest::Approx(3697.4825 / 522.765).epsilon(1e-12));
  CHECK(load.load == 0);  // no reference cluster
}

TEST_CASE("generator: gang sizes come from their own stream and leave the other columns alone") {
  const Catalog catalog = gen_catalog();
  const GeneratedTrace plain = generate_trace(catalog, options(3000, 11));
  GeneratorOptions o = options(3000, 11);
  o.gang_sizes = parse_gang_sizes("1:0.5,2:0.3,16:0.2");
  const GeneratedTrace gangs = generate_trace(catalog, o);
  REQUIRE(gangs.jobs.size() == plain.jobs.size());
  std::map<int, int> sizes;
  for (std::size_t i = 0; i < plain.jobs.size(); ++i) {
    const GeneratedJob& a = plain.jobs[i];
    const GeneratedJob& b = gangs.jobs[i];
    REQUIRE(a.gpus == 1);
    REQUIRE(a.arrival_ns == b.arrival_ns);
    REQUIRE(a.duration_ns == b.duration_ns);
    REQUIRE(a.workload_index == b.workload_index);
    REQUIRE(a.iterations == b.iterations);
    ++sizes[b.gpus];
  }
  REQUIRE(sizes.size() == 3);
  // Binomial standard errors on 3000 jobs: 0.9%, 0.8%, 0.7%; 5 of them allowed.
  CHECK(std::abs(sizes[1] / 3000.0 - 0.5) < 0.046);
  CHECK(std::abs(sizes[2] / 3000.0 - 0.3) < 0.042);
  CHECK(std::abs(sizes[16] / 3000.0 - 0.2) < 0.037);

  // Without gangs the CSV has no gpus column and its rows are today's; with them, the same rows
  // with the gpus column added.
  const std::string without = to_native_csv(plain, "");
  const std::string with = to_native_csv(gangs, "");
  CHECK(without.find("\njob_id,arrival_s,workload,iterations\n") != std::string::npos);
  CHECK(without.find("GPUs per job") == std::string::npos);
  CHECK(with.find("\njob_id,arrival_s,workload,iterations,gpus\n") != std::string::npos);
  const std::vector<std::string> rows_without = rows_of(without), rows_with = rows_of(with);
  REQUIRE(rows_with.size() == rows_without.size());
  for (std::size_t i = 0; i < rows_with.size(); ++i) {
    REQUIRE(rows_with[i] == rows_without[i] + "," + std::to_string(gangs.jobs[i].gpus));
  }
  // Every job on 1 GPU: no gpus column, the same rows as without the option.
  o.gang_sizes = parse_gang_sizes("1:1");
  CHECK(rows_of(to_native_csv(generate_trace(catalog, o), "")) == rows_without);
  CHECK(to_native_csv(generate_trace(catalog, o), "").find("\njob_id,arrival_s,workload,iterations\n") !=
        std::string::npos);
}

TEST_CASE("generator: same options with gang sizes give the same bytes in both layouts, other seeds others") {
  const Catalog catalog = gen_catalog();
  GeneratorOptions o = options(500, 21);
  o.gang_sizes = parse_gang_sizes(kHeliosGangs);
  for (const TraceLayout layout : {TraceLayout::kNative, TraceLayout::kHelios}) {
    const std::string a = trace_csv(generate_trace(catalog, o), "h", layout);
    CHECK(a == trace_csv(generate_trace(catalog, o), "h", layout));
    GeneratorOptions other = o;
    other.seed = 22;
    const std::string b = trace_csv(generate_trace(catalog, other), "h", layout);
    CHECK(a != b);
    // The seed changes the GPU column too, not only the others.
    const GeneratedTrace x = generate_trace(catalog, o), y = generate_trace(catalog, other);
    int same = 0;
    for (std::size_t i = 0; i < x.jobs.size(); ++i) same += x.jobs[i].gpus == y.jobs[i].gpus;
    CHECK(same < 400);  // P(same) = sum p^2 = 0.54
  }
}

TEST_CASE("generator: the native and helios layouts read back through load_trace as the same jobs") {
  const Catalog catalog = gen_catalog();
  GeneratorOptions o = options(2000, 8);
  o.gang_sizes = parse_gang_sizes(kHeliosGangs);
  const GeneratedTrace t = generate_trace(catalog, o);
  const salus::traces::Trace native =
      salus::traces::load_trace(temp_file("generator_layout_native.csv", trace_csv(t, "n", TraceLayout::kNative)), catalog);
  const salus::traces::Trace helios =
      salus::traces::load_trace(temp_file("generator_layout_helios.csv", trace_csv(t, "h", TraceLayout::kHelios)), catalog);
  CHECK(native.format == salus::traces::TraceFormat::kNative);
  CHECK(helios.format == salus::traces::TraceFormat::kHelios);
  REQUIRE(native.jobs.size() == t.jobs.size());
  REQUIRE(helios.jobs.size() == t.jobs.size());
  int gangs = 0;
  for (std::size_t i = 0; i < t.jobs.size(); ++i) {
    const GeneratedJob& g = t.jobs[i];
    const core::JobSpec& n = native.jobs[i];
    const core::JobSpec& h = helios.jobs[i];
    INFO("job ", t.job_id(i));
    REQUIRE(n.id == t.job_id(i));
    REQUIRE(h.id == n.id);
    REQUIRE(n.arrival_ns == g.arrival_ns);
    REQUIRE(h.arrival_ns == g.arrival_ns);
    REQUIRE(n.gpus == g.gpus);
    REQUIRE(h.gpus == g.gpus);
    REQUIRE(n.solo_ns() == g.solo_ns());
    REQUIRE(n.workload == t.workload_of(g));
    // Helios has durations, no iterations: the solo time to the nearest ms.
    const core::TimeNs helios_solo = h.solo_ns() + h.first_iter_extra_ns;
    REQUIRE(helios_solo == std::max<core::TimeNs>(core::kNsPerMs, (g.solo_ns() + core::kNsPerMs / 2) / core::kNsPerMs *
                                                                      core::kNsPerMs));
    REQUIRE(std::abs(helios_solo - n.solo_ns()) <= core::kNsPerMs / 2);
    gangs += g.gpus > 1;
  }
  CHECK(gangs > 400);  // 28% of 2000: the gpus column was read, not defaulted
}

TEST_CASE("generator: --shape helios: its preset, --jobs scaling, and options given beside it") {
  GeneratorOptions typed;
  typed.seed = 7;
  const GeneratorOptions full = helios(typed, {});
  CHECK(full.shape == "helios");
  CHECK(full.seed == 7);
  CHECK(full.jobs == 3'360'000);
  CHECK(full.mean_interarrival_s == 4.7);
  CHECK(full.median_duration_s == 600);
  CHECK(full.duration_sigma == 2.2);
  CHECK(full.min_duration_s == 1);
  CHECK(full.max_duration_s == 14 * 86400);
  CHECK(full.reference_gpus == 6416);
  REQUIRE(full.gang_sizes.size() == 7);
  for (std::size_t i = 0; i < full.gang_sizes.size(); ++i) CHECK(full.gang_sizes[i].gpus == 1 << i);
  CHECK(full.gang_sizes[0].weight == 0.72);
  CHECK(full.workloads.empty());

  // --jobs N keeps the span (about 6 months): gaps x 3360000 / N, on a cluster N / 3360000 as large.
  typed.jobs = 336'000;
  const GeneratorOptions tenth = helios(typed, {"jobs"});
  CHECK(tenth.jobs == 336'000);
  CHECK(tenth.mean_interarrival_s == 47);
  CHECK(tenth.reference_gpus == doctest::Approx(641.6).epsilon(1e-12));
  typed.jobs = 3'360'000;
  CHECK(helios(typed, {"jobs"}).mean_interarrival_s == 4.7);  // the full count given: exactly the preset

  // Options given beside --shape win; those not given are the shape's.
  typed.jobs = 1000;
  typed.mean_interarrival_s = 3;
  typed.median_duration_s = 30;
  typed.duration_sigma = 0.5;
  typed.min_duration_s = 2;
  typed.max_duration_s = 90;
  typed.workloads = {"alpha_10"};
  typed.gang_sizes = parse_gang_sizes("1:1,3:1");
  const GeneratorOptions mixed = helios(typed, {"jobs", "mean-interarrival-s", "duration-sigma", "gang-sizes"});
  CHECK(mixed.jobs == 1000);
  CHECK(mixed.mean_interarrival_s == 3);
  CHECK(mixed.reference_gpus == doctest::Approx(6416.0 * 1000 / 3'360'000).epsilon(1e-12));
  CHECK(mixed.median_duration_s == 600);
  CHECK(mixed.duration_sigma == 0.5);
  CHECK(mixed.min_duration_s == 1);
  CHECK(mixed.max_duration_s == 14 * 86400);
  CHECK(mixed.workloads.empty());
  REQUIRE(mixed.gang_sizes.size() == 2);
  CHECK(mixed.gang_sizes[1].gpus == 3);
  const GeneratorOptions all = helios(typed, {"median-duration-s", "min-duration-s", "max-duration-s", "workloads"});
  CHECK(all.jobs == 3'360'000);
  CHECK(all.median_duration_s == 30);
  CHECK(all.min_duration_s == 2);
  CHECK(all.max_duration_s == 90);
  CHECK(all.workloads == std::vector<std::string>{"alpha_10"});
  CHECK(all.gang_sizes.size() == 7);

  try {
    shaped_options("helio", typed, [](std::string_view) { return false; });
    FAIL("no error");
  } catch (const core::InputError& e) {
    CHECK(std::string(e.what()) == "--shape: unknown trace shape 'helio' (valid: helios); did you mean 'helios'?");
  }
}

TEST_CASE("generator: --shape helios at 100000 jobs: 72% on 1 GPU, powers of two to 64, offered load 0.6") {
  GeneratorOptions typed;
  typed.jobs = 100'000;
  const Catalog catalog = Catalog::load_default();
  const GeneratedTrace t = generate_trace(catalog, helios(typed, {"jobs"}));
  const double n = static_cast<double>(t.jobs.size());
  REQUIRE(t.jobs.size() == 100'000);
  const double reference = 6416.0 * 100'000 / 3'360'000;  // 190.95 GPUs
  CHECK(t.options.reference_gpus == doctest::Approx(reference).epsilon(1e-12));

  // Each size's share within 5 binomial standard errors of its probability (1 GPU: 0.72 +- 0.007).
  const std::map<int, double> p = {{1, 0.72}, {2, 0.1}, {4, 0.08}, {8, 0.06}, {16, 0.02}, {32, 0.015}, {64, 0.005}};
  std::map<int, int> count;
  core::Int128 demand = 0;
  for (const GeneratedJob& j : t.jobs) {
    ++count[j.gpus];
    demand += static_cast<core::Int128>(j.gpus) * j.solo_ns();
  }
  REQUIRE(count.size() == p.size());
  for (const auto& [size, prob] : p) {
    CAPTURE(size);
    REQUIRE(count.count(size) == 1);
    CHECK(std::abs(count[size] / n - prob) < 5 * std::sqrt(prob * (1 - prob) / n));
  }
  const OfferedLoad load = offered_load(t);
  CHECK(load.one_gpu_jobs == count[1]);
  // Mean GPUs 2.84, variance 47.2 - 2.84^2 = 39.1: standard error 0.020.
  CHECK(std::abs(load.mean_gpus - 2.84) < 0.1);

  // Gaps: mean 4.7 s x 33.6 = 157.92 s, standard error 0.3%.
  const double span_s = seconds(t.jobs.back().arrival_ns - t.jobs.front().arrival_ns);
  CHECK(span_s / (n - 1) == doctest::Approx(157.92).epsilon(0.016));
  CHECK(span_s / 86400 == doctest::Approx(182.8).epsilon(0.016));  // about six months
  // Durations: median 600 s (standard error of ln(median) 2.2 sqrt(pi / 2) / sqrt(n) = 0.9%).
  const std::vector<double> d = sorted_durations_s(t);
  CHECK(quantile(d, 0.5) == doctest::Approx(600).epsilon(0.045));
  CHECK(d.front() >= 1);
  CHECK(d.back() <= 14 * 86400);

  // The load: sum(gpus x solo) / (span x 190.95 GPUs), as offered_load computes it.
  CHECK(load.busy_gpus == doctest::Approx(static_cast<double>(demand) / 1e9 / span_s).epsilon(1e-9));
  CHECK(load.load == doctest::Approx(load.busy_gpus / reference).epsilon(1e-12));
  // Its expectation is 2.84 x 6374 s / (157.92 s x 190.95) = 0.600 (6374 s: the mean of the clipped
  // log-normal). gpus x duration has a coefficient of variation of 14.1 (the tail), so on 100000
  // jobs the load has a standard error of 4.5%: 20% is 4.4 of them. A wrong gap scaling (x 10),
  // forgotten gang sizes (x 1/2.84) or sigma 2.0 (-31%) fall outside.
  CHECK(load.load == doctest::Approx(0.6).epsilon(0.2));
}
