// salus-profile's homogeneous sweeps (real/profiler.h profile_sweeps) on the CPU device:
// k copies of one workload at once, for the `capacity` interference model's C(k) = k u / s(k).
#include <doctest/doctest.h>

#include <sched.h>

#include <string>
#include <vector>

#include "core/errors.h"
#include "gpu_backend/device.h"
#include "gpu_backend/memory_pool.h"
#include "gpu_backend/model.h"
#include "real/profiler.h"

namespace gpu = salus::gpu;
using salus::core::InputError;

namespace {

/// Pins this thread (and the threads it starts) to the first CPU it may use, for the scope.
class OneCpu {
 public:
  OneCpu() {
    REQUIRE(sched_getaffinity(0, sizeof saved_, &saved_) == 0);
    int first = 0;
    while (first < CPU_SETSIZE && !CPU_ISSET(first, &saved_)) ++first;
    REQUIRE(first < CPU_SETSIZE);
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    REQUIRE(sched_setaffinity(0, sizeof one, &one) == 0);
  }
  ~OneCpu() { sched_setaffinity(0, sizeof saved_, &saved_); }
  OneCpu(const OneCpu&) = delete;
  OneCpu& operator=(const OneCpu&) = delete;

 private:
  cpu_set_t saved_{};
};

/// What one copy of `workload` takes of a pool (its persistent block and its lane, aligned).
salus::core::Bytes footprint(gpu::Device& device, const std::string& workload) {
  const auto net = gpu::build_model(workload);
  const auto ops = device.create_ops();
  return gpu::align_up(net->persistent_bytes()) + gpu::align_up(net->ephemeral_bytes(*ops, true));
}

gpu::WorkloadMeasurement measured(const std::string& name) {
  gpu::WorkloadMeasurement m;
  m.name = name;
  return m;
}

}  // namespace

TEST_CASE("profile_sweeps: k copies of mlp_64 on one CPU core take longer than one, at most k times") {
  // Pinned to one core, k lanes time-slice it: a copy's iteration takes about k times its time
  // alone (docs/model.md, "Interference": two copies read 1.9-2.3x so pinned). L other busy threads on that core (ctest
  // -j2 runs another suite beside this one) make it (k + L) / (1 + L): 1.38 and 1.91 were read for
  // 2 and 3 copies so. Between 1 and k whatever L is, and growing with k: a ratio turned upside
  // down (1/k), summed over the lanes (k times too large) or left at 0 falls outside.
  const OneCpu pinned;
  const auto device = gpu::make_cpu_device();
  gpu::ProfileOptions o;
  o.capacity = 256 * salus::core::kMiB;
  o.warmup = 1;
  o.iterations = 3;
  o.min_seconds = 0.2;
  o.crowd_rounds = 1;
  const std::vector<gpu::SweepMeasurement> sweeps = gpu::profile_sweeps(*device, {measured("mlp_64")}, o, {2, 3});
  REQUIRE(sweeps.size() == 1);
  const gpu::SweepMeasurement& s = sweeps.front();
  CHECK(s.workload == "mlp_64");
  CHECK(s.did_not_fit == 0);
  REQUIRE(s.lanes == std::vector<int>{2, 3});
  REQUIRE(s.slowdowns.size() == 2);
  CAPTURE(s.slowdowns[0]);
  CAPTURE(s.slowdowns[1]);
  // The lower bound is 0.65, not 1: the solo time and the crowd's are read at different moments,
  // and load that comes and goes between them read 2 copies at 0.88 once (a loaded machine); an
  // upside-down ratio reads 1/2 or 1/3.
  for (std::size_t p = 0; p < 2; ++p) {
    CHECK(s.slowdowns[p] > 0.65);
    CHECK(s.slowdowns[p] < 1.4 * s.lanes[p]);
  }
  // Not checked: that 3 copies read slower than 2. Under ctest -j2 the other suite's load comes and
  // goes within the sweep, and the two points were once read inverted; the bounds above are what
  // a wrong ratio breaks whatever the load.
}

TEST_CASE("profile_sweeps: a sweep stops at the first k whose copies do not fit the pool") {
  const auto device = gpu::make_cpu_device();
  gpu::ProfileOptions o;
  o.warmup = 0;
  o.iterations = 1;
  o.min_seconds = 0;
  o.crowd_rounds = 1;
  // Room for two copies of lenet_32 and a half: 3 and 4 copies are not measured.
  const salus::core::Bytes one = footprint(*device, "lenet_32");
  o.capacity = (5 * one / 2) / gpu::kAlignment * gpu::kAlignment;
  gpu::WorkloadMeasurement unmeasured = measured("mlp_64");
  unmeasured.error = "does not fit";  // a workload the profile could not measure is not swept
  const auto sweeps = gpu::profile_sweeps(*device, {measured("lenet_32"), unmeasured}, o, {2, 3, 4});
  REQUIRE(sweeps.size() == 1);
  CHECK(sweeps[0].workload == "lenet_32");
  CHECK(sweeps[0].lanes == std::vector<int>{2});
  CHECK(sweeps[0].slowdowns.size() == 1);
  CHECK(sweeps[0].slowdowns[0] > 0);
  CHECK(sweeps[0].did_not_fit == 3);
  // Not even two copies fit: no point, and it says where it stopped.
  o.capacity = (3 * one / 2) / gpu::kAlignment * gpu::kAlignment;
  const auto none = gpu::profile_sweeps(*device, {measured("lenet_32")}, o, {2, 3});
  REQUIRE(none.size() == 1);
  CHECK(none[0].lanes.empty());
  CHECK(none[0].did_not_fit == 2);
  // No sizes: nothing measured.
  CHECK(gpu::profile_sweeps(*device, {measured("lenet_32")}, o, {}).empty());
}

TEST_CASE("profile_sweeps: sizes below 2 or out of order, and no rounds, are refused with the message") {
  const auto device = gpu::make_cpu_device();
  gpu::ProfileOptions o;
  for (const std::vector<int>& sizes : {std::vector<int>{1, 3}, std::vector<int>{3, 3}, std::vector<int>{4, 2}}) {
    CHECK_THROWS_WITH_AS(gpu::profile_sweeps(*device, {measured("lenet_32")}, o, sizes),
                         "sweep sizes must be numbers of lanes >= 2, increasing", InputError);
  }
  o.crowd_rounds = 0;
  CHECK_THROWS_WITH_AS(gpu::profile_sweeps(*device, {measured("lenet_32")}, o, {2}),
                       "--crowd-rounds: must be at least 1", InputError);
  CHECK_THROWS_WITH_AS(gpu::profile_crowds(*device, {measured("lenet_32")}, o, {3}),
                       "--crowd-rounds: must be at least 1", InputError);
}
