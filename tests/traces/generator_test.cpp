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
    same_workload += x.jobs[i].workload == y.jobs[i].workload;
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
    INFO("job ", g.job_id);
    CHECK(j.id == g.job_id);
    CHECK(j.arrival_ns == g.arrival_ns);
    CHECK(j.workload == g.workload);
    CHECK(j.iterations == g.iterations);
    CHECK(j.iter_ns == g.iter_ns);
    CHECK(j.solo_ns() == g.solo_ns());
  }
}

TEST_CASE("generator: job ids are zero-padded to the width of the last id") {
  const Catalog catalog = gen_catalog();
  CHECK(generate_trace(catalog, options(1, 1)).jobs[0].job_id == "job000");
  const GeneratedTrace hundred = generate_trace(catalog, options(100, 1));
  CHECK(hundred.jobs.front().job_id == "job000");
  CHECK(hundred.jobs.back().job_id == "job099");
  CHECK(generate_trace(catalog, options(1000, 1)).jobs.back().job_id == "job999");
  const GeneratedTrace more = generate_trace(catalog, options(1001, 1));
  CHECK(more.jobs.front().job_id == "job0000");
  CHECK(more.jobs.back().job_id == "job1000");
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
      REQUIRE(j.iter_ns == catalog.find(j.workload)->iter_ns);
      if (j.iterations > 1) REQUIRE(std::abs(j.solo_ns() - j.duration_ns) <= j.iter_ns / 2);
    }
  }

  SUBCASE("workloads: every training entry, uniformly, nothing else") {
    std::map<std::string, int> counts;
    for (const GeneratedJob& j : t.jobs) ++counts[j.workload];
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
  for (const GeneratedJob& j : t.jobs) ++counts[j.workload];
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
  for (const GeneratedJob& j : t.jobs) ++counts[j.workload];
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
  REQUIRE(t.jobs[0].workload == "odd, \"name\"");
  const std::string csv = to_native_csv(t, "");
  CHECK(csv.find(",\"odd, \"\"name\"\"\",") != std::string::npos);
  const salus::traces::Trace loaded = salus::traces::load_trace(temp_file("generator_quoted.csv", csv), catalog);
  REQUIRE(loaded.jobs.size() == 3);
  CHECK(loaded.jobs[2].workload == "odd, \"name\"");
}
