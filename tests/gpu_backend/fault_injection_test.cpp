// The cpu-faults device's parts: --inject-faults parsed and refused with exact messages, the
// injector's decisions a pure function of the seed and the point (not of who asks first), the
// rates met over many points, the lost device sticky for every later operation, and the registry
// entry by name.
#include <doctest/doctest.h>

#include <cmath>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/errors.h"
#include "gpu_backend/device.h"
#include "gpu_backend/fault_injection.h"
#include "gpu_backend/memory_pool.h"

namespace {

using namespace salus;
using gpu::FaultInjector;
using gpu::FaultRates;

FaultRates rates(double alloc, double iter, double lost, std::uint64_t seed) {
  FaultRates r;
  r.alloc = alloc;
  r.iter = iter;
  r.lost = lost;
  r.seed = seed;
  return r;
}

/// Which iterations of `jobs` jobs (`iters` each) the injector fails (1: an error, 2: the device
/// lost, stopping there), and which of their first `allocs` allocations it refuses.
std::vector<int> pattern(FaultInjector& f, int jobs, int iters, int allocs) {
  std::vector<int> out;
  for (int j = 0; j < jobs; ++j) {
    for (int i = 0; i < iters; ++i) {
      for (int n = 0; n < allocs; ++n) {
        try {
          f.before_allocation(j, "j", i, n, 256);
          out.push_back(0);
        } catch (const gpu::AllocationRefused&) {
          out.push_back(3);
        }
      }
      try {
        f.after_iteration(j, "j", i);
        out.push_back(0);
      } catch (const gpu::DeviceError& e) {
        out.push_back(e.device_lost() ? 2 : 1);
        if (e.device_lost()) return out;
      }
    }
  }
  return out;
}

}  // namespace

TEST_CASE("--inject-faults: every key, any subset, the seed from --seed unless given") {
  const FaultRates r = gpu::parse_fault_rates("alloc=0.01,iter=0.02,lost=0.001,seed=7", 1);
  CHECK(r.alloc == 0.01);
  CHECK(r.iter == 0.02);
  CHECK(r.lost == 0.001);
  CHECK(r.seed == 7);
  const FaultRates s = gpu::parse_fault_rates(" lost=1 , iter=0 ", 42);
  CHECK(s.alloc == 0);
  CHECK(s.iter == 0);
  CHECK(s.lost == 1);
  CHECK(s.seed == 42);
  CHECK(gpu::to_string(r) == "alloc=0.01,iter=0.02,lost=0.001,seed=7");
  CHECK(gpu::to_string(s) == "alloc=0,iter=0,lost=1,seed=42");
  // The text reads back as the same rates.
  const FaultRates back = gpu::parse_fault_rates(gpu::to_string(r), 1);
  CHECK(back.alloc == r.alloc);
  CHECK(back.iter == r.iter);
  CHECK(back.lost == r.lost);
  CHECK(back.seed == r.seed);
}

TEST_CASE("--inject-faults: bad items are refused with the exact message and the valid keys") {
  struct Case {
    std::string text, error;
  };
  const Case cases[] = {
      {"", "--inject-faults: no KEY=VALUE given (valid: alloc, iter, lost, seed)"},
      {"alloc", "--inject-faults: 'alloc' is not KEY=VALUE (valid: alloc, iter, lost, seed)"},
      {"allocs=0.1", "--inject-faults: unknown key 'allocs' (valid: alloc, iter, lost, seed); did you mean 'alloc'?"},
      {"oom=0.1", "--inject-faults: unknown key 'oom' (valid: alloc, iter, lost, seed)"},
      {"alloc=2", "--inject-faults: alloc=2: a rate must be a number in [0, 1] (a probability per allocation)"},
      {"iter=-0.1", "--inject-faults: iter=-0.1: a rate must be a number in [0, 1] (a probability per iteration)"},
      {"lost=abc", "--inject-faults: lost=abc: a rate must be a number in [0, 1] (a probability per iteration)"},
      {"lost=", "--inject-faults: lost=: a rate must be a number in [0, 1] (a probability per iteration)"},
      {"iter=nan", "--inject-faults: iter=nan: a rate must be a number in [0, 1] (a probability per iteration)"},
      {"iter=0.1x", "--inject-faults: iter=0.1x: a rate must be a number in [0, 1] (a probability per iteration)"},
      {"seed=-1", "--inject-faults: seed=-1: the seed must be an unsigned 64-bit integer"},
      {"seed=18446744073709551616", "--inject-faults: seed=18446744073709551616: the seed must be an unsigned 64-bit integer"},
      {"iter=0.1,iter=0.2", "--inject-faults: iter given twice"},
      {"iter=0.1,,lost=0.1", "--inject-faults: empty item in 'iter=0.1,,lost=0.1'"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.text);
    CHECK_THROWS_WITH_AS(gpu::parse_fault_rates(c.text, 1), c.error.c_str(), core::InputError);
  }
}

TEST_CASE("the injector: the same seed fails the same points whoever asks first, another seed others") {
  const FaultRates r = rates(0.05, 0.05, 0, 7);
  FaultInjector a(r), b(r);
  const std::vector<int> first = pattern(a, 8, 20, 10);
  // b, asked on another thread, marks the same points.
  std::vector<int> again;
  std::thread([&] { again = pattern(b, 8, 20, 10); }).join();
  CHECK(first == again);
  CHECK(a.counts().alloc == b.counts().alloc);
  CHECK(a.counts().iter == b.counts().iter);
  FaultInjector c(rates(0.05, 0.05, 0, 8));
  CHECK(pattern(c, 8, 20, 10) != first);
  // Per point, not per counter: asking job 5's points alone gives job 5's part of the pattern.
  FaultInjector d(r);
  std::vector<int> job5;
  for (int i = 0; i < 20; ++i) {
    for (int n = 0; n < 10; ++n) {
      try {
        d.before_allocation(5, "j", i, n, 256);
        job5.push_back(0);
      } catch (const gpu::AllocationRefused&) {
        job5.push_back(3);
      }
    }
    try {
      d.after_iteration(5, "j", i);
      job5.push_back(0);
    } catch (const gpu::DeviceError&) {
      job5.push_back(1);
    }
  }
  CHECK(job5 == std::vector<int>(first.begin() + 5 * 220, first.begin() + 6 * 220));
}

TEST_CASE("the injector meets its rates over many points: 0 never, 1 always") {
  FaultInjector f(rates(0.1, 0.2, 0, 3));
  (void)pattern(f, 50, 100, 4);  // 20000 allocations, 5000 iterations
  const gpu::FaultCounts c = f.counts();
  // Binomial: the standard deviations are 42 and 28; 5 of them either side.
  CHECK(std::abs(static_cast<double>(c.alloc) - 2000) < 5 * 42);
  CHECK(std::abs(static_cast<double>(c.iter) - 1000) < 5 * 28);
  CHECK(c.lost == 0);
  FaultInjector never(rates(0, 0, 0, 3));
  CHECK(pattern(never, 10, 10, 10) == std::vector<int>(10 * 10 * 11, 0));
  FaultInjector always(rates(1, 1, 0, 3));
  CHECK_THROWS_WITH_AS(always.before_allocation(2, "b", 0, 0, 512),
                       "injected fault: the pool refused allocation 1 of iteration 1 of job b (512 B)",
                       gpu::AllocationRefused);
  CHECK_THROWS_WITH_AS(always.before_allocation(2, "b", -1, 0, 1024),
                       "injected fault: the pool refused the persistent block of job b (1024 B)", gpu::AllocationRefused);
  CHECK_THROWS_WITH_AS(always.after_iteration(2, "b", 4), "injected fault: iteration 5 of job b reported an error",
                       gpu::DeviceError);
}

TEST_CASE("a lost device is sticky: every later iteration, allocation, synchronisation and reservation fails") {
  auto device = gpu::make_device("cpu-faults", gpu::DeviceOptions{gpu::MathMode::kFp32, rates(0, 0, 1, 1)});
  CHECK(device->name() == "cpu-faults (alloc=0,iter=0,lost=1,seed=1)");
  gpu::FaultInjector* f = device->faults();
  REQUIRE(f != nullptr);
  auto ops = device->create_ops();
  ops->synchronize();  // not lost yet
  gpu::MemoryPool pool(*device, core::kMiB);
  CHECK_FALSE(f->lost());
  try {
    f->after_iteration(0, "a", 0);
    FAIL("the device was not lost");
  } catch (const gpu::DeviceError& e) {
    CHECK(e.device_lost());
    CHECK(std::string(e.what()) == "injected fault: the device was lost at iteration 1 of job a");
  }
  CHECK(f->lost());
  CHECK(f->counts().lost == 1);
  const std::string later = " failed: the device was lost (at iteration 1 of job a)";
  CHECK_THROWS_WITH_AS(f->after_iteration(1, "b", 3), ("injected fault: iteration 4 of job b" + later).c_str(),
                       gpu::DeviceError);
  CHECK_THROWS_WITH_AS(f->before_allocation(1, "b", 3, 0, 256),
                       ("injected fault: allocation 1 of iteration 4 of job b" + later).c_str(), gpu::DeviceError);
  CHECK_THROWS_WITH_AS(ops->synchronize(), ("injected fault: synchronize" + later).c_str(), gpu::DeviceError);
  CHECK_THROWS_WITH_AS(gpu::MemoryPool(*device, core::kMiB), ("injected fault: allocate" + later).c_str(),
                       gpu::DeviceError);
  CHECK(f->counts().lost == 1);
  // The arena asks its gate before every allocation, and not the device after a refusal.
  FaultInjector g(rates(1, 0, 0, 1));
  gpu::Arena lane = pool.region(0, 4096);
  const std::string job_a = "a";
  gpu::IterationAllocations gate(g, 0, job_a, 0);
  lane.set_gate(&gate);
  CHECK_THROWS_AS(lane.allocate(100), gpu::AllocationRefused);
  CHECK(lane.used() == 0);
}

TEST_CASE("cpu-faults by name: in the device table, fp32 only, no faults on the other devices") {
  const std::vector<std::string> names = gpu::device_names();
  CHECK(names == std::vector<std::string>{"cpu", "cpu-faults", "cuda"});
  CHECK_THROWS_WITH_AS(gpu::make_device("cpu-faults", gpu::MathMode::kTf32),
                       "--math tf32: the cpu-faults device computes in FP32 only (valid on cpu-faults: fp32)",
                       core::InputError);
  const auto plain = gpu::make_device("cpu-faults");
  REQUIRE(plain->faults() != nullptr);
  CHECK(plain->faults()->rates().alloc == 0);
  CHECK(plain->kind() == gpu::DeviceKind::kCpu);
  CHECK(gpu::make_device("cpu")->faults() == nullptr);
}
