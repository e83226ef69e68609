// The workload catalog: the shipped file, lookups by name and by model, and bad entries.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "core/errors.h"
#include "support/temp_files.h"
#include "traces/catalog.h"
#include "traces/trace.h"

using salus::core::InputError;
using salus::traces::Catalog;
namespace core = salus::core;

namespace {

using salus::test::temp_file;

std::string entry(const std::string& name, const std::string& extra = "") {
  return R"({"name": ")" + name +
         R"(", "persistent_mib": 1, "ephemeral_mib": 2, "iter_ms": 3, "gpu_util": 0.5, "source": "test")" + extra + "}";
}

std::string catalog_text(const std::string& entries) {
  return "{\n  \"format\": \"salus-catalog/1\",\n  \"gpu\": \"test\",\n  \"workloads\": [\n" + entries + "\n  ]\n}\n";
}

bool within_percent(double value, double target, double percent) {
  return std::abs(value - target) <= target * percent / 100.0;
}

}  // namespace

TEST_CASE("catalog: the shipped catalog loads and names its GPU") {
  const Catalog c = Catalog::load_default();
  CHECK(c.path() == Catalog::default_path());
  // Table 3's 45 training workloads, an inference entry per model, and lenet_32 and mlp_64.
  CHECK(c.size() == 45 + 15 + 2);
  for (const char* name : {"alexnet_100", "inception4_75", "resnet152_75", "vgg19_100", "vae_256", "superres_128",
                           "speech_75", "seq2seq_large", "resnet50_25_infer", "seq2seq_small_infer", "lenet_32", "mlp_64"}) {
    CAPTURE(name);
    CHECK(c.find(name) != nullptr);
  }
  CHECK(c.gpu().find("P100") != std::string::npos);
  for (const std::string& name : c.names()) {
    const auto* p = c.find(name);
    REQUIRE(p != nullptr);
    CHECK(p->source.rfind("estimated: ", 0) == 0);
    CHECK(p->iter_ns > 0);
    CHECK(p->gpu_util_ppm > 0);
    CHECK(p->gpu_util_ppm <= 1'000'000);
    CHECK(p->persistent + p->ephemeral <= 16 * core::kGiB);
  }
}

TEST_CASE("catalog: the shipped figures match what the paper states") {
  const Catalog c = Catalog::load_default();
  // The paper gives persistent memory in MB (decimal, 1e6 bytes), the catalog stores MiB.
  const auto* googlenet = c.find("googlenet_25");
  REQUIRE(googlenet != nullptr);
  CHECK(within_percent(static_cast<double>(googlenet->persistent), 110.9e6, 1.0));  // 110.9 MB
  const auto* resnet152 = c.find("resnet152_75");
  REQUIRE(resnet152 != nullptr);
  CHECK(within_percent(static_cast<double>(resnet152->persistent), 822.2e6, 1.0));  // 822.2 MB
  CHECK(resnet152->persistent + resnet152->ephemeral <= static_cast<core::Bytes>(13.8e9));  // peak <= 13.8 GB
  CHECK(resnet152->persistent + resnet152->ephemeral >= static_cast<core::Bytes>(13.7e9));
  const auto* vae = c.find("vae_64");
  REQUIRE(vae != nullptr);
  CHECK(vae->persistent <= static_cast<core::Bytes>(22e6));  // troughs under the 22 MB average
  // Average P + u E / 2 near the paper's 22 MB; the peak stays under its 35 MB (the derived
  // activations are under 1 MB, see traces/README.md for the deviation).
  const double u = vae->gpu_util_ppm / 1e6;
  CHECK(within_percent(static_cast<double>(vae->persistent) + u * static_cast<double>(vae->ephemeral) / 2, 22e6, 25.0));
  CHECK(vae->persistent + vae->ephemeral <= static_cast<core::Bytes>(35e6));
  // Persistent memory is small next to the peak (the paper's Observation 2).
  CHECK(c.find("resnet50_50")->persistent * 5 < c.find("resnet50_50")->ephemeral);
  // PACK gains for 300 identical jobs (§5.2) are about 1/u: 1.07x for resnet50_50, 2.38x for superres_128.
  CHECK(within_percent(1e6 / c.find("resnet50_50")->gpu_util_ppm, 1.07, 2.0));
  CHECK(within_percent(1e6 / c.find("superres_128")->gpu_util_ppm, 2.38, 2.0));
}

TEST_CASE("catalog: figures convert from MiB, ms and fractions to bytes, ns and ppm") {
  const std::string path = temp_file("units.json", catalog_text(
      R"({"name": "m_8", "persistent_mib": 1.5, "ephemeral_mib": 0, "iter_ms": 0.0005, "gpu_util": 0.3333334, "source": "x"})"));
  const Catalog c = Catalog::load(path);
  const auto* p = c.find("m_8");
  REQUIRE(p != nullptr);
  CHECK(p->persistent == 1'572'864);
  CHECK(p->ephemeral == 0);
  CHECK(p->iter_ns == 500);
  CHECK(p->gpu_util_ppm == 333'333);
  CHECK(p->source == "x");
  CHECK(c.gpu() == "test");
}

TEST_CASE("catalog: find is exact, find_model picks the smallest batch variant") {
  const std::string path = temp_file(
      "variants.json",
      catalog_text(entry("vgg16_100") + ",\n" + entry("vgg16_25") + ",\n" + entry("vgg16_50") + ",\n" +
                   entry("seq2seq_small") + ",\n" + entry("seq2seq_large") + ",\n" + entry("resnet50_25") + ",\n" +
                   entry("resnet_v2_50") + ",\n" + entry("lenet")));
  const Catalog c = Catalog::load(path);
  CHECK(c.find("vgg16") == nullptr);
  CHECK(c.find("vgg16_50")->name == "vgg16_50");
  CHECK(c.find_model("vgg16")->name == "vgg16_25");  // 25 < 50 < 100 numerically, not as text
  CHECK(c.find_model("vgg16_50")->name == "vgg16_50");
  CHECK(c.find_model("seq2seq")->name == "seq2seq_large");  // no numeric suffix: smallest name
  CHECK(c.find_model("lenet")->name == "lenet");
  CHECK(c.find_model("resnet") == nullptr);  // resnet50_25 is not a variant of resnet
  CHECK(c.find_model("resnet_v2")->name == "resnet_v2_50");
  CHECK(c.find_model("vgg") == nullptr);
  CHECK(c.find_model("") == nullptr);
  CHECK(c.names_joined() ==
        "lenet, resnet50_25, resnet_v2_50, seq2seq_large, seq2seq_small, vgg16_100, vgg16_25, vgg16_50");
}

TEST_CASE("catalog: bad files and entries name the file, the entry's line and what is wrong") {
  CHECK_THROWS_WITH_AS(Catalog::load("/nonexistent/catalog.json"), "/nonexistent/catalog.json: cannot open catalog file: No such file or directory",
                       InputError);

  const std::string syntax = temp_file("syntax.json", "{\n  \"format\": \"salus-catalog/1\"\n  \"gpu\": \"x\"\n}\n");
  const std::string syntax_error =
      syntax + ":3: invalid JSON: syntax error while parsing object - unexpected string literal; expected '}'";
  CHECK_THROWS_WITH_AS(Catalog::load(syntax), syntax_error.c_str(), InputError);

  // Entries start on lines 5, 6 and 7.
  auto check_entry = [](const std::string& name, const std::string& bad_entry, const std::string& expected) {
    const std::string path = temp_file(name, catalog_text(entry("a_1") + ",\n" + entry("b_1") + ",\n" + bad_entry));
    CHECK_THROWS_WITH_AS(Catalog::load(path), (path + expected).c_str(), InputError);
  };
  check_entry("util_high.json",
              R"({"name": "c", "persistent_mib": 1, "ephemeral_mib": 2, "iter_ms": 3, "gpu_util": 1.5, "source": "t"})",
              ":7: workload 'c': gpu_util must be a number in (0, 1], got 1.5");
  check_entry("util_zero.json",
              R"({"name": "c", "persistent_mib": 1, "ephemeral_mib": 2, "iter_ms": 3, "gpu_util": 0, "source": "t"})",
              ":7: workload 'c': gpu_util must be a number in (0, 1], got 0");
  check_entry("negative.json",
              R"({"name": "c", "persistent_mib": -1, "ephemeral_mib": 2, "iter_ms": 3, "gpu_util": 1, "source": "t"})",
              ":7: workload 'c': persistent_mib must be a number >= 0, got -1");
  check_entry("iter_zero.json",
              R"({"name": "c", "persistent_mib": 1, "ephemeral_mib": 2, "iter_ms": 0, "gpu_util": 1, "source": "t"})",
              ":7: workload 'c': iter_ms must be a number > 0, got 0");
  check_entry("string_number.json",
              R"({"name": "c", "persistent_mib": 1, "ephemeral_mib": "2", "iter_ms": 3, "gpu_util": 1, "source": "t"})",
              ":7: workload 'c': ephemeral_mib must be a number >= 0, got \"2\"");
  check_entry("no_source.json", R"({"name": "c", "persistent_mib": 1, "ephemeral_mib": 2, "iter_ms": 3, "gpu_util": 1})",
              ":7: workload 'c': missing 'source'");
  check_entry("empty_source.json", entry("c").replace(entry("c").find("\"test\""), 6, "\"\""),
              ":7: workload 'c': source must be a non-empty string");
  check_entry("no_name.json", R"({"persistent_mib": 1})", ":7: workload has no 'name'");
  check_entry("empty_name.json", entry(""), ":7: name must be a non-empty string, got \"\"");
  check_entry("unknown_key.json", entry("c", R"(, "peak_mib": 3)"),
              ":7: workload 'c': unknown key 'peak_mib' (valid: name, persistent_mib, ephemeral_mib, persistent_bytes, "
              "ephemeral_bytes, iter_ms, iter_exec_mean_ms, iter_exec_median_ms, iter_median_ms, first_iter_ms, gpu_util, switch_ms, burst_allowance, source)");
  check_entry("bytes_fraction.json", entry("c", R"(, "persistent_bytes": 1.5)"),
              ":7: workload 'c': persistent_bytes must be a whole number of bytes >= 0, got 1.5");
  check_entry("bytes_disagree.json", entry("c", R"(, "ephemeral_bytes": 1)"),
              ":7: workload 'c': ephemeral_bytes = 1 B is 0.000001 MiB, but ephemeral_mib says 2 MiB");
  check_entry("duplicate.json", entry("a_1"), ":7: duplicate workload name 'a_1' (first at line 5)");
  check_entry("not_object.json", "42", ":7: a workload must be a JSON object, got 42");
}

TEST_CASE("catalog: bad top-level structure") {
  auto check_top = [](const std::string& name, const std::string& text, const std::string& expected) {
    const std::string path = temp_file(name, text);
    CHECK_THROWS_WITH_AS(Catalog::load(path), (path + expected).c_str(), InputError);
  };
  check_top("array.json", "[]", ":1: a catalog must be a JSON object with \"format\", \"gpu\" and \"workloads\"");
  check_top("format.json", R"({"format": "salus-catalog/2", "gpu": "x", "workloads": []})",
            ":1: \"format\" must be \"salus-catalog/1\", got \"salus-catalog/2\"");
  check_top("no_format.json", R"({"gpu": "x", "workloads": []})", ":1: \"format\" must be \"salus-catalog/1\"");
  check_top("no_gpu.json", R"({"format": "salus-catalog/1", "workloads": []})",
            ":1: \"gpu\" must be a non-empty string naming the GPU the figures are for");
  check_top("no_workloads.json", R"({"format": "salus-catalog/1", "gpu": "x"})", ":1: missing \"workloads\" array");
  check_top("empty.json", R"({"format": "salus-catalog/1", "gpu": "x", "workloads": []})", ":1: no workloads");
  check_top("top_key.json", R"({"format": "salus-catalog/1", "gpu": "x", "workload": []})",
            ":1: unknown key 'workload' (valid: crowds, format, gpu, interference, notes, pairs, sweeps, switch_ms, workloads)");
}

TEST_CASE("catalog: the bad-entry fixture in tests/data") {
  const std::string path = SALUS_TEST_DATA_DIR "/traces/bad_catalog.json";
  CHECK_THROWS_WITH_AS(Catalog::load(path), (path + ":13: workload 'vae_64': gpu_util must be a number in (0, 1], got 1.5").c_str(),
                       InputError);
}

TEST_CASE("catalog: exact byte figures win over the rounded MiB ones (what salus-profile writes)") {
  // 841984 B is 0.803 MiB: a catalog that kept only the MiB figure rounded to 0.80 would declare
  // 838861 B, less than the model needs.
  const std::string path = temp_file(
      "exact.json", catalog_text(R"({"name": "a_1", "persistent_mib": 0.8, "ephemeral_mib": 2, "persistent_bytes": 841984, )"
                                 R"("ephemeral_bytes": 2097408, "iter_ms": 3, "gpu_util": 0.5, "source": "test"})"));
  const Catalog c = Catalog::load(path);
  const auto* p = c.find("a_1");
  REQUIRE(p != nullptr);
  CHECK(p->persistent == 841984);
  CHECK(p->ephemeral == 2097408);
}

// salus-profile's additions: the "pairs" table, the top-level "switch_ms" and the per-entry
// "iter_median_ms" and "first_iter_ms".
namespace {

// Workloads a_1 (line 5) and b_1 (line 6); the pairs from line 9 on, one per line.
std::string catalog_with_pairs(const std::string& pairs) {
  return "{\n  \"format\": \"salus-catalog/1\",\n  \"gpu\": \"test\",\n  \"workloads\": [\n" + entry("a_1") + ",\n" +
         entry("b_1") + "\n  ],\n  \"pairs\": [\n" + pairs + "\n  ]\n}\n";
}

// The catalog of catalog_text with one more top-level member before "workloads".
std::string catalog_with_top(const std::string& member, const std::string& entries = entry("a_1")) {
  return "{\n  \"format\": \"salus-catalog/1\",\n  \"gpu\": \"test\",\n  " + member + ",\n  \"workloads\": [\n" +
         entries + "\n  ]\n}\n";
}

const std::string kGoodPair = R"({"a": "a_1", "b": "b_1", "slowdown_a": 1.5, "slowdown_b": 1.25})";

}  // namespace

TEST_CASE("catalog: the pairs table is read as the file lists it") {
  // Figures below 1 (noise) and whole numbers are taken as they are.
  const std::string path = temp_file(
      "pairs.json", catalog_with_pairs(R"({"a": "b_1", "b": "a_1", "slowdown_a": 0.95, "slowdown_b": 2})"));
  const Catalog c = Catalog::load(path);
  REQUIRE(c.pairs().size() == 1);
  CHECK(c.pairs()[0].a == "b_1");
  CHECK(c.pairs()[0].b == "a_1");
  CHECK(c.pairs()[0].slowdown_a == 0.95);
  CHECK(c.pairs()[0].slowdown_b == 2);
  CHECK(c.size() == 2);
  const Catalog good = Catalog::load(temp_file("good_pair.json", catalog_with_pairs(kGoodPair)));
  REQUIRE(good.pairs().size() == 1);
  CHECK(good.pairs()[0].a == "a_1");
  CHECK(good.pairs()[0].slowdown_a == 1.5);
  CHECK(good.pairs()[0].slowdown_b == 1.25);
  // An empty table is a table with no pairs; no table, likewise; neither has a switch latency.
  CHECK(Catalog::load(temp_file("no_pairs.json", catalog_with_pairs(""))).pairs().empty());
  const Catalog plain = Catalog::load(temp_file("plain.json", catalog_text(entry("a_1"))));
  CHECK(plain.pairs().empty());
  CHECK_FALSE(plain.switch_ns().has_value());
}

TEST_CASE("catalog: bad pairs name the file, the pair's line and what is wrong") {
  // The bad pair is the second one, on line 10.
  auto check_pair = [](const std::string& name, const std::string& bad_pair, const std::string& expected) {
    const std::string path = temp_file(name, catalog_with_pairs(kGoodPair + ",\n" + bad_pair));
    CHECK_THROWS_WITH_AS(Catalog::load(path), (path + expected).c_str(), InputError);
  };
  check_pair("pair_not_object.json", "42", ":10: pair: must be a JSON object, got 42");
  check_pair("pair_array.json", R"(["a_1", "b_1"])", ":10: pair: must be a JSON object, got [\"a_1\",\"b_1\"]");
  check_pair("pair_unknown_key.json", R"({"a": "a_1", "b": "b_1", "slowdown_a": 1, "slowdown_b": 1, "window_ms": 5})",
             ":10: pair: unknown key 'window_ms' (valid: a, b, slowdown_a, slowdown_b)");
  check_pair("pair_unknown_a.json", R"({"a": "c_1", "b": "b_1", "slowdown_a": 1, "slowdown_b": 1})",
             ":10: pair: unknown workload 'c_1' (not an entry of this catalog)");
  check_pair("pair_unknown_b.json", R"({"a": "a_1", "b": "a", "slowdown_a": 1, "slowdown_b": 1})",
             ":10: pair: unknown workload 'a' (not an entry of this catalog)");
  check_pair("pair_no_a.json", R"({"b": "b_1", "slowdown_a": 1, "slowdown_b": 1})", ":10: pair: 'a' must name a workload");
  check_pair("pair_b_number.json", R"({"a": "a_1", "b": 1, "slowdown_a": 1, "slowdown_b": 1})",
             ":10: pair: 'b' must name a workload");
  check_pair("pair_zero.json", R"({"a": "a_1", "b": "b_1", "slowdown_a": 0, "slowdown_b": 1})",
             ":10: pair: slowdown_a must be a number > 0, got 0");
  check_pair("pair_negative.json", R"({"a": "a_1", "b": "b_1", "slowdown_a": 1, "slowdown_b": -1.5})",
             ":10: pair: slowdown_b must be a number > 0, got -1.5");
  check_pair("pair_string.json", R"({"a": "a_1", "b": "b_1", "slowdown_a": "1.2", "slowdown_b": 1})",
             ":10: pair: slowdown_a must be a number > 0, got \"1.2\"");
  check_pair("pair_missing.json", R"({"a": "a_1", "b": "b_1", "slowdown_a": 1.2})",
             ":10: pair: slowdown_b must be a number > 0");
  // Each unordered pair once; a workload beside itself has one slowdown.
  check_pair("pair_twice.json", R"({"a": "a_1", "b": "b_1", "slowdown_a": 1, "slowdown_b": 1})",
             ":10: pair: a_1 and b_1 measured twice (first at line 9)");
  check_pair("pair_reversed.json", R"({"a": "b_1", "b": "a_1", "slowdown_a": 1, "slowdown_b": 1})",
             ":10: pair: b_1 and a_1 measured twice (first at line 9)");
  check_pair("pair_self.json", R"({"a": "b_1", "b": "b_1", "slowdown_a": 2.1, "slowdown_b": 2})",
             ":10: pair: 'b_1' beside itself has one slowdown (slowdown_a 2.1, slowdown_b 2)");
  const std::string self = R"({"a": "b_1", "b": "b_1", "slowdown_a": 2, "slowdown_b": 2})";
  check_pair("pair_self_twice.json", self + ",\n" + self, ":11: pair: b_1 and b_1 measured twice (first at line 10)");
  // Not an array: the top level's line.
  const std::string obj = temp_file("pairs_object.json", catalog_with_top(R"("pairs": {"a": "a_1"})"));
  CHECK_THROWS_WITH_AS(Catalog::load(obj), (obj + ":1: \"pairs\" must be an array").c_str(), InputError);
  const std::string num = temp_file("pairs_number.json", catalog_with_top(R"("pairs": 3)"));
  CHECK_THROWS_WITH_AS(Catalog::load(num), (num + ":1: \"pairs\" must be an array").c_str(), InputError);
}

TEST_CASE("catalog: switch_ms is read in exact nanoseconds, a negative or non-number one is refused") {
  CHECK(Catalog::load(temp_file("sw_quarter.json", catalog_with_top(R"("switch_ms": 0.25)"))).switch_ns() ==
        std::optional<core::TimeNs>{250'000});
  CHECK(Catalog::load(temp_file("sw_whole.json", catalog_with_top(R"("switch_ms": 2)"))).switch_ns() ==
        std::optional<core::TimeNs>{2'000'000});
  CHECK(Catalog::load(temp_file("sw_fine.json", catalog_with_top(R"("switch_ms": 0.012345)"))).switch_ns() ==
        std::optional<core::TimeNs>{12'345});
  // 0 is a measurement (no latency), not a missing one.
  CHECK(Catalog::load(temp_file("sw_zero.json", catalog_with_top(R"("switch_ms": 0)"))).switch_ns() ==
        std::optional<core::TimeNs>{0});
  auto check_bad = [](const std::string& name, const std::string& value, const std::string& shown) {
    const std::string path = temp_file(name, catalog_with_top("\"switch_ms\": " + value));
    CHECK_THROWS_WITH_AS(Catalog::load(path),
                         (path + ":1: \"switch_ms\" must be a number of milliseconds >= 0, got " + shown).c_str(),
                         InputError);
  };
  check_bad("sw_negative.json", "-1", "-1");
  check_bad("sw_negative_small.json", "-0.5", "-0.5");
  check_bad("sw_string.json", "\"0.25\"", "\"0.25\"");
  check_bad("sw_null.json", "null", "null");
  check_bad("sw_bool.json", "true", "true");
  check_bad("sw_huge.json", "1e300", "1e+300");  // a number, but past the nanosecond range
}

TEST_CASE("catalog: first_iter_ms sets the first iteration's extra, floored at 0, and iter_median_ms is accepted") {
  // iter_ms 3 (entry()). first 10 -> 7 ms extra; 3.5 -> 0.5 ms; 3 -> 0; 2 (faster than the mean) -> 0.
  const std::string path = temp_file(
      "first_iter.json",
      catalog_text(entry("a_1", R"(, "first_iter_ms": 10, "iter_median_ms": 2.9)") + ",\n" +
                   entry("b_1", R"(, "first_iter_ms": 3.5)") + ",\n" + entry("c_1", R"(, "first_iter_ms": 3)") + ",\n" +
                   entry("d_1", R"(, "first_iter_ms": 2)") + ",\n" + entry("e_1", R"(, "iter_median_ms": 3.1)")));
  const Catalog c = Catalog::load(path);
  CHECK(c.find("a_1")->first_iter_extra_ns == 7'000'000);
  CHECK(c.find("a_1")->iter_ns == 3'000'000);  // the mean stays the iteration time, not the median
  CHECK(c.find("b_1")->first_iter_extra_ns == 500'000);
  CHECK(c.find("c_1")->first_iter_extra_ns == 0);
  CHECK(c.find("d_1")->first_iter_extra_ns == 0);
  CHECK(c.find("e_1")->first_iter_extra_ns == 0);
  CHECK(c.find("e_1")->iter_ns == 3'000'000);
}

TEST_CASE("catalog: a non-positive first_iter_ms or iter_median_ms names the entry's line") {
  // Entries start on lines 5, 6 and 7.
  auto check_entry = [](const std::string& name, const std::string& bad_entry, const std::string& expected) {
    const std::string path = temp_file(name, catalog_text(entry("a_1") + ",\n" + entry("b_1") + ",\n" + bad_entry));
    CHECK_THROWS_WITH_AS(Catalog::load(path), (path + expected).c_str(), InputError);
  };
  check_entry("first_zero.json", entry("c", R"(, "first_iter_ms": 0)"),
              ":7: workload 'c': first_iter_ms must be a number > 0, got 0");
  check_entry("first_negative.json", entry("c", R"(, "first_iter_ms": -4)"),
              ":7: workload 'c': first_iter_ms must be a number > 0, got -4");
  check_entry("first_string.json", entry("c", R"(, "first_iter_ms": "4")"),
              ":7: workload 'c': first_iter_ms must be a number > 0, got \"4\"");
  check_entry("first_huge.json", entry("c", R"(, "first_iter_ms": 1e300)"), ":7: workload 'c': first_iter_ms is out of range");
  check_entry("median_zero.json", entry("c", R"(, "iter_median_ms": 0)"),
              ":7: workload 'c': iter_median_ms must be a number > 0, got 0");
  check_entry("median_negative.json", entry("c", R"(, "iter_median_ms": -0.5)"),
              ":7: workload 'c': iter_median_ms must be a number > 0, got -0.5");
}

TEST_CASE("catalog: a trace's jobs take the first iteration's extra from their workload") {
  // a_1 has first_iter_ms 10 over iter_ms 3: 7 ms. A native row naming it gets 7 ms; a row with
  // explicit figures only, or naming b_1 (no first_iter_ms), gets 0.
  const Catalog c = Catalog::load(
      temp_file("first_trace_catalog.json",
                catalog_text(entry("a_1", R"(, "first_iter_ms": 10)") + ",\n" + entry("b_1"))));
  const std::string trace = temp_file("first_trace.csv",
                                      "job_id,workload,arrival_s,iterations,persistent_mib,ephemeral_mib,iter_ms\n"
                                      "j1,a_1,0,5,,,\n"
                                      "j2,b_1,0,5,,,\n"
                                      "j3,,0,5,1,2,3\n"
                                      "j4,a_1,0,5,,,4\n");
  const salus::traces::Trace t = salus::traces::load_trace(trace, c);
  REQUIRE(t.jobs.size() == 4);
  // A row that gives its own iteration time has no measured first iteration: the catalog's extra
  // was measured against the catalog's iter_ms.
  CHECK(t.jobs[3].iter_ns == 4'000'000);
  CHECK(t.jobs[3].first_iter_extra_ns == 0);
  CHECK(t.jobs[0].first_iter_extra_ns == 7'000'000);
  CHECK(t.jobs[0].iter_ns == 3'000'000);
  CHECK(t.jobs[1].first_iter_extra_ns == 0);
  CHECK(t.jobs[2].first_iter_extra_ns == 0);
}

TEST_CASE("catalog: an entry's switch_ms is its own switching cost, absent -1, and a bad one names the entry's line") {
  const std::string path = temp_file("entry_switch.json", catalog_text(entry("a_1", R"(, "switch_ms": 0.25)") + ",\n" +
                                                                       entry("b_1", R"(, "switch_ms": 0)") + ",\n" +
                                                                       entry("c_1")));
  const Catalog c = Catalog::load(path);
  CHECK(c.find("a_1")->switch_ns == 250'000);
  CHECK(c.find("b_1")->switch_ns == 0);
  CHECK(c.find("c_1")->switch_ns == -1);
  auto check_entry = [](const std::string& name, const std::string& bad_entry, const std::string& expected) {
    const std::string p = temp_file(name, catalog_text(entry("a_1") + ",\n" + entry("b_1") + ",\n" + bad_entry));
    CHECK_THROWS_WITH_AS(Catalog::load(p), (p + expected).c_str(), InputError);
  };
  check_entry("entry_switch_negative.json", entry("c", R"(, "switch_ms": -0.1)"),
              ":7: workload 'c': switch_ms must be a number >= 0, got -0.1");
  check_entry("entry_switch_string.json", entry("c", R"(, "switch_ms": "0.1")"),
              ":7: workload 'c': switch_ms must be a number >= 0, got \"0.1\"");
  check_entry("entry_switch_huge.json", entry("c", R"(, "switch_ms": 1e300)"), ":7: workload 'c': switch_ms is out of range");
}

TEST_CASE("catalog: a workload beside itself is a pair, and \"interference\" names the model that fits the device") {
  const std::string path = temp_file(
      "self_pair.json",
      "{\n  \"format\": \"salus-catalog/1\",\n  \"gpu\": \"test\",\n  \"interference\": \"pairs\",\n"
      "  \"workloads\": [\n" + entry("a_1") + "\n  ],\n"
      "  \"pairs\": [{\"a\": \"a_1\", \"b\": \"a_1\", \"slowdown_a\": 2.2, \"slowdown_b\": 2.2}]\n}\n");
  const Catalog c = Catalog::load(path);
  REQUIRE(c.pairs().size() == 1);
  CHECK(c.pairs()[0].a == "a_1");
  CHECK(c.pairs()[0].b == "a_1");
  CHECK(c.pairs()[0].slowdown_a == 2.2);
  CHECK(c.interference() == std::optional<std::string>("pairs"));
  CHECK_FALSE(Catalog::load(temp_file("no_model.json", catalog_text(entry("a_1")))).interference().has_value());
  const std::string bad = temp_file("bad_model.json", "{\n  \"format\": \"salus-catalog/1\",\n  \"gpu\": \"test\",\n"
                                                       "  \"interference\": 3,\n  \"workloads\": [\n" + entry("a_1") + "\n  ]\n}\n");
  CHECK_THROWS_WITH_AS(Catalog::load(bad), (bad + ":1: \"interference\" must name an interference model, got 3").c_str(),
                       InputError);
}

// salus-profile --crowds: k >= 3 lanes at once, the workload of each lane and its slowdown.
namespace {

// Workloads a_1 (line 5) and b_1 (line 6); the crowds from line 9 on, one per line.
std::string catalog_with_crowds(const std::string& crowds) {
  return "{\n  \"format\": \"salus-catalog/1\",\n  \"gpu\": \"test\",\n  \"workloads\": [\n" + entry("a_1") + ",\n" +
         entry("b_1") + "\n  ],\n  \"crowds\": [\n" + crowds + "\n  ]\n}\n";
}

const std::string kGoodCrowd = R"({"workloads": ["a_1", "b_1", "a_1"], "slowdowns": [3.1, 3.3, 2.9]})";

}  // namespace

TEST_CASE("catalog: crowds are read as the file lists them") {
  const Catalog c = Catalog::load(temp_file(
      "crowds.json", catalog_with_crowds(kGoodCrowd + ",\n" +
                                         R"({"workloads": ["b_1", "b_1", "b_1", "a_1"], "slowdowns": [4, 4.5, 0.9, 4]})")));
  REQUIRE(c.crowds().size() == 2);
  CHECK(c.crowds()[0].workloads == std::vector<std::string>{"a_1", "b_1", "a_1"});
  CHECK(c.crowds()[0].slowdowns == std::vector<double>{3.1, 3.3, 2.9});
  CHECK(c.crowds()[1].workloads.size() == 4);
  CHECK(c.crowds()[1].slowdowns[2] == 0.9);
  CHECK(Catalog::load(temp_file("no_crowds.json", catalog_with_crowds(""))).crowds().empty());
  CHECK(Catalog::load(temp_file("plain_crowds.json", catalog_text(entry("a_1")))).crowds().empty());
}

TEST_CASE("catalog: bad crowds name the file, the crowd's line and what is wrong") {
  // The bad crowd is the second one, on line 10.
  auto check_crowd = [](const std::string& name, const std::string& bad, const std::string& expected) {
    const std::string path = temp_file(name, catalog_with_crowds(kGoodCrowd + ",\n" + bad));
    CHECK_THROWS_WITH_AS(Catalog::load(path), (path + expected).c_str(), InputError);
  };
  check_crowd("crowd_number.json", "7", ":10: crowd: must be a JSON object, got 7");
  check_crowd("crowd_key.json", R"({"workloads": ["a_1", "a_1", "a_1"], "slowdowns": [3, 3, 3], "lanes": 3})",
              ":10: crowd: unknown key 'lanes' (valid: slowdowns, workloads)");
  check_crowd("crowd_two.json", R"({"workloads": ["a_1", "b_1"], "slowdowns": [2, 2]})",
              ":10: crowd: 'workloads' must be an array naming the workload of each of at least 3 lanes");
  check_crowd("crowd_no_workloads.json", R"({"slowdowns": [2, 2, 2]})",
              ":10: crowd: 'workloads' must be an array naming the workload of each of at least 3 lanes");
  check_crowd("crowd_short.json", R"({"workloads": ["a_1", "b_1", "a_1"], "slowdowns": [3, 3]})",
              ":10: crowd: 'slowdowns' must be an array with one slowdown per lane (3)");
  check_crowd("crowd_no_slowdowns.json", R"({"workloads": ["a_1", "b_1", "a_1"]})",
              ":10: crowd: 'slowdowns' must be an array with one slowdown per lane (3)");
  check_crowd("crowd_unknown.json", R"({"workloads": ["a_1", "c_1", "a_1"], "slowdowns": [3, 3, 3]})",
              ":10: crowd: unknown workload \"c_1\" (not an entry of this catalog)");
  check_crowd("crowd_name_number.json", R"({"workloads": ["a_1", 2, "a_1"], "slowdowns": [3, 3, 3]})",
              ":10: crowd: unknown workload 2 (not an entry of this catalog)");
  check_crowd("crowd_zero.json", R"({"workloads": ["a_1", "b_1", "a_1"], "slowdowns": [3, 0, 3]})",
              ":10: crowd: a slowdown must be a number > 0, got 0");
  check_crowd("crowd_string.json", R"({"workloads": ["a_1", "b_1", "a_1"], "slowdowns": [3, "3", 3]})",
              ":10: crowd: a slowdown must be a number > 0, got \"3\"");
  const std::string obj = temp_file("crowds_object.json", catalog_with_top(R"("crowds": {"workloads": []})"));
  CHECK_THROWS_WITH_AS(Catalog::load(obj), (obj + ":1: \"crowds\" must be an array").c_str(), InputError);
}

// salus-profile --sweeps: k copies of one workload at once, for each k measured, and a copy's slowdown.
namespace {

// Workloads a_1 (line 5) and b_1 (line 6); the sweeps from line 9 on, one per line.
std::string catalog_with_sweeps(const std::string& sweeps) {
  return "{\n  \"format\": \"salus-catalog/1\",\n  \"gpu\": \"test\",\n  \"workloads\": [\n" + entry("a_1") + ",\n" +
         entry("b_1") + "\n  ],\n  \"sweeps\": [\n" + sweeps + "\n  ]\n}\n";
}

const std::string kGoodSweep = R"({"workload": "a_1", "lanes": [3, 6, 12], "slowdowns": [1.3, 2.5, 4.75]})";

}  // namespace

TEST_CASE("catalog: sweeps are read as the file lists them, and a catalog without them has none") {
  const Catalog c = Catalog::load(temp_file(
      "sweeps.json", catalog_with_sweeps(kGoodSweep + ",\n" + R"({"workload": "b_1", "lanes": [2], "slowdowns": [0.9]})")));
  REQUIRE(c.sweeps().size() == 2);
  CHECK(c.sweeps()[0].workload == "a_1");
  CHECK(c.sweeps()[0].lanes == std::vector<std::size_t>{3, 6, 12});
  CHECK(c.sweeps()[0].slowdowns == std::vector<double>{1.3, 2.5, 4.75});
  CHECK(c.sweeps()[1].workload == "b_1");
  CHECK(c.sweeps()[1].lanes == std::vector<std::size_t>{2});
  CHECK(c.sweeps()[1].slowdowns == std::vector<double>{0.9});
  CHECK(Catalog::load(temp_file("no_sweeps.json", catalog_with_sweeps(""))).sweeps().empty());
  // Older catalogs (no "sweeps" key) read as before.
  CHECK(Catalog::load(temp_file("plain_sweeps.json", catalog_text(entry("a_1")))).sweeps().empty());
  CHECK(Catalog::load(temp_file("crowds_only.json", catalog_with_crowds(kGoodCrowd))).sweeps().empty());
}

TEST_CASE("catalog: bad sweeps name the file, the sweep's line and what is wrong") {
  // The bad sweep is the second one, on line 10.
  auto check_sweep = [](const std::string& name, const std::string& bad, const std::string& expected) {
    const std::string path = temp_file(name, catalog_with_sweeps(kGoodSweep + ",\n" + bad));
    CHECK_THROWS_WITH_AS(Catalog::load(path), (path + expected).c_str(), InputError);
  };
  check_sweep("sweep_number.json", "7", ":10: sweep: must be a JSON object, got 7");
  check_sweep("sweep_key.json", R"({"workload": "b_1", "lanes": [3], "slowdowns": [2], "rounds": 3})",
              ":10: sweep: unknown key 'rounds' (valid: lanes, slowdowns, workload)");
  check_sweep("sweep_no_workload.json", R"({"lanes": [3], "slowdowns": [2]})", ":10: sweep: 'workload' must name a workload");
  check_sweep("sweep_unknown.json", R"({"workload": "c_1", "lanes": [3], "slowdowns": [2]})",
              ":10: sweep: unknown workload 'c_1' (not an entry of this catalog)");
  check_sweep("sweep_twice.json", R"({"workload": "a_1", "lanes": [4], "slowdowns": [2]})",
              ":10: sweep: a_1 swept twice (first at line 9)");
  check_sweep("sweep_no_lanes.json", R"({"workload": "b_1", "lanes": [], "slowdowns": []})",
              ":10: sweep: 'lanes' must be an array of the numbers of lanes measured (k copies at once)");
  check_sweep("sweep_one_lane.json", R"({"workload": "b_1", "lanes": [1, 3], "slowdowns": [1, 2]})",
              ":10: sweep: a number of lanes must be a whole number from 2 to 1024, got 1");
  check_sweep("sweep_fraction.json", R"({"workload": "b_1", "lanes": [2.5], "slowdowns": [2]})",
              ":10: sweep: a number of lanes must be a whole number from 2 to 1024, got 2.5");
  check_sweep("sweep_order.json", R"({"workload": "b_1", "lanes": [6, 3], "slowdowns": [2, 1]})",
              ":10: sweep: 'lanes' must be increasing, got [6,3]");
  check_sweep("sweep_short.json", R"({"workload": "b_1", "lanes": [3, 6], "slowdowns": [2]})",
              ":10: sweep: 'slowdowns' must be an array with one slowdown per number of lanes (2)");
  check_sweep("sweep_zero.json", R"({"workload": "b_1", "lanes": [3], "slowdowns": [0]})",
              ":10: sweep: a slowdown must be a number > 0, got 0");
  const std::string obj = temp_file("sweeps_object.json", catalog_with_top(R"("sweeps": {"workload": "a_1"})"));
  CHECK_THROWS_WITH_AS(Catalog::load(obj), (obj + ":1: \"sweeps\" must be an array").c_str(), InputError);
}
