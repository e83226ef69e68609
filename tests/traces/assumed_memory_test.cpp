// The shares of one GPU that Alibaba's gpu_milli gives, in bytes of the run's GPU.
#include <doctest/doctest.h>

#include "core/units.h"
#include "traces/trace.h"

namespace core = salus::core;

TEST_CASE("assumed memory: shares of one GPU that add up to all of it fit on it together") {
  // Rounded to the byte, 300 + 300 + 400 gpu_milli of 16 GiB took 512 bytes more than the GPU
  // once the scheduler rounded each E up to 256 bytes; rounded down to 256 they fit.
  const core::Bytes cap = 16 * core::kGiB;
  const core::Bytes a = salus::traces::share_of(cap, 300'000), b = salus::traces::share_of(cap, 400'000);
  CHECK(a % 256 == 0);
  CHECK(b % 256 == 0);
  CHECK(a + a + b <= cap);
  CHECK(a > cap * 3 / 10 - 256);
  CHECK(b > cap * 4 / 10 - 256);
  CHECK(salus::traces::share_of(cap, 250'000) == 4 * core::kGiB);
}
