// The workload catalog: the shipped file, lookups by name and by model, and bad entries.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/errors.h"
#include "support/temp_files.h"
#include "traces/catalog.h"

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
  CHECK_THROWS_WITH_AS(Catalog::load("/nonexistent/catalog.json"), "/nonexistent/catalog.json: cannot open catalog file",
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
              "ephemeral_bytes, iter_ms, iter_median_ms, first_iter_ms, gpu_util, source)");
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
            ":1: unknown key 'workload' (valid: format, gpu, notes, pairs, switch_ms, workloads)");
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
