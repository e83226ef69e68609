// The cpu-faults device and its injector: seeded, stateless decisions (a hash of the point), a
// sticky lost flag, and the CPU device underneath.
#include "gpu_backend/fault_injection.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <vector>

#include "core/errors.h"
#include "core/registry.h"
#include "gpu_backend/cpu_ops.h"

namespace salus::gpu {

namespace {

constexpr const char* kValidKeys = "valid: alloc, iter, lost, seed";

/// splitmix64's finaliser: a bijection that spreads every input bit over the output.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

enum class Kind : std::uint64_t { kAlloc = 1, kIter = 2, kLost = 3 };

/// A uniform draw in [0, 1) that depends only on the point, so a fault's place does not depend
/// on which thread asks first (the file comment of fault_injection.h).
double draw(std::uint64_t seed, Kind kind, core::JobIndex job, std::int64_t iteration, std::int64_t n) {
  std::uint64_t h = mix(seed);
  h = mix(h ^ static_cast<std::uint64_t>(kind));
  h = mix(h ^ static_cast<std::uint64_t>(job));
  h = mix(h ^ static_cast<std::uint64_t>(iteration + 1));
  h = mix(h ^ static_cast<std::uint64_t>(n + 1));
  return static_cast<double>(h >> 11) * 0x1.0p-53;
}

bool fires(double rate, std::uint64_t seed, Kind kind, core::JobIndex job, std::int64_t iteration, std::int64_t n) {
  return rate > 0 && draw(seed, kind, job, iteration, n) < rate;
}

std::string rate_text(double r) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", r);
  // The shortest text that reads back as the same double.
  for (int p = 1; p <= 17; ++p) {
    char b[32];
    std::snprintf(b, sizeof b, "%.*g", p, r);
    if (std::strtod(b, nullptr) == r) return b;
  }
  return buf;
}

/// The CPU device's context; once the device is lost, waiting for its work fails as a sticky CUDA
/// error does (every lane's, and the admission's).
class FaultOps final : public CpuOps {
 public:
  explicit FaultOps(const FaultInjector& faults) : faults_(faults) {}
  void synchronize() override { faults_.check_lost("synchronize"); }

 private:
  const FaultInjector& faults_;
};

class CpuFaultsDevice final : public Device {
 public:
  explicit CpuFaultsDevice(FaultRates rates) : cpu_(make_cpu_device()), faults_(rates) {}
  DeviceKind kind() const override { return DeviceKind::kCpu; }
  std::string name() const override { return "cpu-faults (" + to_string(faults_.rates()) + ")"; }
  Bytes free_memory() const override { return cpu_->free_memory(); }
  std::optional<Bytes> used_memory() const override { return std::nullopt; }
  MathMode math() const override { return MathMode::kFp32; }
  void* allocate(Bytes bytes) override {
    faults_.check_lost("allocate");
    return cpu_->allocate(bytes);
  }
  // Memory is given back even after the loss: a lost CPU device still owns host memory.
  void deallocate(void* p) override { cpu_->deallocate(p); }
  std::unique_ptr<Ops> create_ops() override { return std::make_unique<FaultOps>(faults_); }
  FaultInjector* faults() override { return &faults_; }

 private:
  std::unique_ptr<Device> cpu_;
  FaultInjector faults_;
};

}  // namespace

FaultRates parse_fault_rates(const std::string& text, std::uint64_t default_seed) {
  FaultRates r;
  r.seed = default_seed;
  const std::vector<std::string> items = core::split_list(text);
  if (items.empty()) throw core::InputError("--inject-faults: no KEY=VALUE given (" + std::string(kValidKeys) + ")");
  std::set<std::string> seen;
  for (const std::string& item : items) {
    if (item.empty()) throw core::InputError("--inject-faults: empty item in '" + text + "'");
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos) {
      throw core::InputError("--inject-faults: '" + item + "' is not KEY=VALUE (" + kValidKeys + ")");
    }
    const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    double* rate = key == "alloc" ? &r.alloc : key == "iter" ? &r.iter : key == "lost" ? &r.lost : nullptr;
    if (rate == nullptr && key != "seed") {
      const std::vector<std::string> keys = {"alloc", "iter", "lost", "seed"};
      throw core::InputError("--inject-faults: unknown key '" + key + "' (" + kValidKeys + ")" +
                             core::did_you_mean(key, keys));
    }
    if (!seen.insert(key).second) throw core::InputError("--inject-faults: " + key + " given twice");
    if (rate != nullptr) {
      char* end = nullptr;
      const double v = value.empty() ? std::nan("") : std::strtod(value.c_str(), &end);
      if (end == nullptr || *end != '\0' || !(v >= 0 && v <= 1)) {
        throw core::InputError("--inject-faults: " + item + ": a rate must be a number in [0, 1] (a probability per " +
                               (key == "alloc" ? "allocation" : "iteration") + ")");
      }
      *rate = v;
    } else {
      std::uint64_t seed = 0;
      const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), seed);
      if (value.empty() || ec != std::errc() || ptr != value.data() + value.size()) {
        throw core::InputError("--inject-faults: " + item + ": the seed must be an unsigned 64-bit integer");
      }
      r.seed = seed;
    }
  }
  return r;
}

std::string to_string(const FaultRates& r) {
  return "alloc=" + rate_text(r.alloc) + ",iter=" + rate_text(r.iter) + ",lost=" + rate_text(r.lost) +
         ",seed=" + std::to_string(r.seed);
}

void FaultInjector::throw_lost(const std::string& operation) const {
  std::string at;
  {
    std::lock_guard<std::mutex> lk(mu_);
    at = lost_at_;
  }
  throw DeviceError("injected fault: " + operation + " failed: the device was lost (" + at + ")", true);
}

void FaultInjector::check_lost(const char* operation) const {
  if (lost_.load()) throw_lost(operation);
}

void FaultInjector::after_iteration(core::JobIndex job, const std::string& id, std::int64_t iteration) {
  const std::string where = "iteration " + std::to_string(iteration + 1) + " of job " + id;
  if (lost_.load()) throw_lost(where);
  if (fires(rates_.lost, rates_.seed, Kind::kLost, job, iteration, 0)) {
    {
      std::lock_guard<std::mutex> lk(mu_);
      if (lost_at_.empty()) lost_at_ = "at " + where;
    }
    lost_.store(true);
    throw DeviceError("injected fault: the device was lost at " + where, true);
  }
  if (fires(rates_.iter, rates_.seed, Kind::kIter, job, iteration, 0)) {
    ++iter_;
    throw DeviceError("injected fault: " + where + " reported an error");
  }
}

void FaultInjector::before_allocation(core::JobIndex job, const std::string& id, std::int64_t iteration,
                                      std::int64_t n, Bytes bytes) {
  const std::string what = iteration < 0 ? "the persistent block of job " + id
                                         : "allocation " + std::to_string(n + 1) + " of iteration " +
                                               std::to_string(iteration + 1) + " of job " + id;
  if (lost_.load()) throw_lost(what);
  if (fires(rates_.alloc, rates_.seed, Kind::kAlloc, job, iteration, n)) {
    ++alloc_;
    throw AllocationRefused("injected fault: the pool refused " + what + " (" + core::format_size(bytes) + ")");
  }
}

std::unique_ptr<Device> make_cpu_faults_device(FaultRates rates) { return std::make_unique<CpuFaultsDevice>(rates); }

}  // namespace salus::gpu
