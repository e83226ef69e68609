// The CPU device: identity, free memory, aligned allocation and its error, contexts.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "gpu_backend/device.h"

namespace {

using salus::gpu::DeviceError;
using salus::gpu::DeviceKind;

TEST_CASE("cpu device: kind, name and free memory") {
  const auto dev = salus::gpu::make_cpu_device();
  CHECK(dev->kind() == DeviceKind::kCpu);
  CHECK(dev->name() == "cpu");
  CHECK(dev->free_memory() > 16 * salus::core::kMiB);
}

TEST_CASE("cpu device: allocations are 256-byte aligned and usable") {
  const auto dev = salus::gpu::make_cpu_device();
  for (const salus::core::Bytes bytes : {salus::core::Bytes{0}, salus::core::Bytes{1}, salus::core::Bytes{255},
                                         salus::core::Bytes{257}, salus::core::kMiB + 3}) {
    INFO("bytes ", bytes);
    void* p = dev->allocate(bytes);
    REQUIRE(p != nullptr);
    CHECK(reinterpret_cast<std::uintptr_t>(p) % 256 == 0);
    std::memset(p, 0xAB, static_cast<std::size_t>(bytes));
    dev->deallocate(p);
  }
  dev->deallocate(nullptr);
}

TEST_CASE("cpu device: an impossible allocation throws DeviceError naming the size") {
  const auto dev = salus::gpu::make_cpu_device();
  const salus::core::Bytes huge = salus::core::Bytes{1} << 62;
  std::string message;
  try {
    dev->allocate(huge);
  } catch (const DeviceError& e) {
    message = e.what();
  }
  CHECK(message == "cpu: cannot allocate 4611686018427387904 bytes");
  CHECK_THROWS_WITH_AS(dev->allocate(-1), "cpu: cannot allocate -1 bytes", DeviceError);
}

TEST_CASE("cpu device: create_ops gives independent working contexts") {
  const auto dev = salus::gpu::make_cpu_device();
  const auto a = dev->create_ops(), b = dev->create_ops();
  REQUIRE(a != nullptr);
  REQUIRE(b != nullptr);
  CHECK(a.get() != b.get());
  auto* x = static_cast<float*>(dev->allocate(4 * sizeof(float)));
  a->fill(4, x, 1.5f);
  b->accumulate(4, x, x);
  for (int i = 0; i < 4; ++i) CHECK(x[i] == 3.0f);
  dev->deallocate(x);
}

}  // namespace
