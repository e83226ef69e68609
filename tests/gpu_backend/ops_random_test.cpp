// Synthetic data on the CPU device: fill_uniform and fill_labels follow uniform01 exactly, so the
// CUDA device can be checked against them bit for bit.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "gpu_backend/cpu_ops.h"

namespace {

using salus::gpu::CpuOps;
using salus::gpu::uniform01;

TEST_CASE("uniform01 is splitmix64 of seed * FNV prime + i") {
  // The first output of the reference splitmix64 from state 0.
  CHECK(salus::gpu::mix64(0) == 0xE220A8397B1DCDAFULL);
  CHECK(uniform01(0, 0) == static_cast<float>(0xE220A8397B1DCDAFULL >> 40) * 0x1.0p-24f);
  CHECK(uniform01(3, 5) == static_cast<float>(salus::gpu::mix64(3 * 0x100000001B3ULL + 5) >> 40) * 0x1.0p-24f);
}

TEST_CASE("fill_uniform: range, determinism, seeds and the exact formula") {
  CpuOps ops;
  const std::int64_t count = 10000;
  std::vector<float> a(count), b(count), c(count);
  ops.fill_uniform(count, a.data(), -2.0f, 3.0f, 7);
  ops.fill_uniform(count, b.data(), -2.0f, 3.0f, 7);
  ops.fill_uniform(count, c.data(), -2.0f, 3.0f, 8);
  CHECK(a == b);
  std::int64_t same = 0;
  double sum = 0.0;
  for (std::int64_t i = 0; i < count; ++i) {
    const auto k = static_cast<std::size_t>(i);
    INFO("element ", i);
    REQUIRE(a[k] >= -2.0f);
    REQUIRE(a[k] < 3.0f);
    REQUIRE(a[k] == std::fma(5.0f, uniform01(7, static_cast<std::uint64_t>(i)), -2.0f));
    REQUIRE(a[k] == salus::gpu::uniform_value(-2.0f, 3.0f, 7, static_cast<std::uint64_t>(i)));
    same += a[k] == c[k];
    sum += a[k];
  }
  CHECK(same < 10);
  CHECK(sum / count == doctest::Approx(0.5).epsilon(0.05));
  // Element i does not depend on how many elements are filled.
  std::vector<float> head(10);
  ops.fill_uniform(10, head.data(), -2.0f, 3.0f, 7);
  CHECK(std::equal(head.begin(), head.end(), a.begin()));
}

TEST_CASE("fill_uniform never returns hi, even where the sum rounds up to it") {
  // With lo = 1, hi = 3 the largest u (1 - 2^-24) gives 3 - 2^-23, which rounds to 3 in float.
  const float u_max = 1.0f - 0x1.0p-24f;
  CHECK(std::fma(2.0f, u_max, 1.0f) == 3.0f);
  // Element 3747935 of seed 0 is that largest u (found by search).
  CHECK(uniform01(0, 3747935) == u_max);
  CHECK(salus::gpu::uniform_value(1.0f, 3.0f, 0, 3747935) == std::nextafter(3.0f, 1.0f));
  CpuOps ops;
  std::vector<float> x(20000);
  ops.fill_uniform(static_cast<std::int64_t>(x.size()), x.data(), 1.0f, 3.0f, 99);
  for (const float v : x) REQUIRE((v >= 1.0f && v < 3.0f));
  CHECK(salus::gpu::uniform_value(1.0f, 1.0f, 99, 0) == 1.0f);  // empty range: lo
}

TEST_CASE("fill_labels: range, every class drawn, determinism and the exact formula") {
  CpuOps ops;
  const int n = 1000, classes = 10;
  std::vector<std::int32_t> a(n), b(n), c(n);
  ops.fill_labels(n, a.data(), classes, 5);
  ops.fill_labels(n, b.data(), classes, 5);
  ops.fill_labels(n, c.data(), classes, 6);
  CHECK(a == b);
  CHECK(a != c);
  std::vector<int> seen(classes);
  for (int i = 0; i < n; ++i) {
    const std::int32_t label = a[static_cast<std::size_t>(i)];
    INFO("label ", i);
    REQUIRE(label >= 0);
    REQUIRE(label < classes);
    const float u = uniform01(5, static_cast<std::uint64_t>(i));
    REQUIRE(label == std::min(classes - 1, static_cast<int>(std::floor(u * static_cast<float>(classes)))));
    ++seen[static_cast<std::size_t>(label)];
  }
  for (int k = 0; k < classes; ++k) CHECK(seen[static_cast<std::size_t>(k)] > 50);
  // One class: always 0.
  ops.fill_labels(n, a.data(), 1, 5);
  CHECK(std::all_of(a.begin(), a.end(), [](std::int32_t l) { return l == 0; }));
}

TEST_CASE("transfers copy bytes and synchronize returns") {
  CpuOps ops;
  const std::vector<float> src{1, 2, 3, 4};
  std::vector<float> mid(4), dst(4);
  ops.to_device(src.data(), mid.data(), 16);
  ops.to_host(mid.data(), dst.data(), 16);
  ops.synchronize();
  CHECK(dst == src);
}

}  // namespace
