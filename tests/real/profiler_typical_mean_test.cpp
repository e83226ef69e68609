// salus-profile's robust mean of a run of iteration times (real/profiler.h typical_mean).
#include <doctest/doctest.h>

#include <vector>

#include "real/profiler.h"

using salus::core::TimeNs;
using salus::gpu::typical_mean;

TEST_CASE("typical_mean: the plain mean below three blocks' worth of iterations") {
  CHECK(typical_mean({}) == 0);
  CHECK(typical_mean({10, 20, 60}) == 30);
  // 59 times: 59 / 20 = 2 blocks, fewer than 3: the plain mean.
  std::vector<TimeNs> v(59, 100);
  v[0] = 5'900 + 100;  // sum 5,900 + 5,900 + ... : mean 200
  CHECK(typical_mean(v) == 200);
}

TEST_CASE("typical_mean: a burst in one block does not move it, the skew of every block does") {
  // 180 iterations, 9 blocks of 20. Every block has the same right skew: 18 x 100 ns and 2 x
  // 200 ns, a mean of 110 (the median iteration is 100: the skew is in every job's sum too).
  std::vector<TimeNs> v;
  for (int b = 0; b < 9; ++b) {
    for (int i = 0; i < 20; ++i) v.push_back(i < 2 ? 200 : 100);
  }
  CHECK(typical_mean(v) == 110);
  // A neighbour's burst: block 4 ten times slower. The plain mean moves to 220; the median of
  // the block means stays at 110.
  for (int i = 80; i < 100; ++i) v[static_cast<std::size_t>(i)] *= 10;
  CHECK(typical_mean(v) == 110);
  TimeNs sum = 0;
  for (TimeNs t : v) sum += t;
  CHECK(sum / 180 == 220);
  // Bursts in five of the nine blocks are no longer a neighbour's: the median follows them.
  for (int b : {0, 2, 6, 8}) {
    for (int i = 20 * b; i < 20 * b + 20; ++i) v[static_cast<std::size_t>(i)] *= 10;
  }
  CHECK(typical_mean(v) == 1'100);
}

TEST_CASE("typical_mean: at most nine blocks, an odd number, every time in exactly one") {
  // 1,000 times, 50 per block: 9 blocks of 111 or 112. Times rising 0..999: block means rise,
  // the median is the fifth block's, [444, 555): mean (444 + 554) / 2 = 499.
  std::vector<TimeNs> v;
  for (TimeNs t = 0; t < 1000; ++t) v.push_back(t);
  CHECK(typical_mean(v) == 499);
  // 80 times: 4 blocks by size, made odd: 3 blocks [0, 26), [26, 53), [53, 80); the middle one's
  // mean is (26 + 52) / 2 = 39.
  v.resize(80);
  CHECK(typical_mean(v) == 39);
}
