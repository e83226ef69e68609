// The CPU device: host memory from aligned_alloc, free memory from /proc/meminfo, CpuOps contexts.
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

#include "gpu_backend/cpu_ops.h"
#include "gpu_backend/device.h"

namespace salus::gpu {

namespace {

using core::kAlignment;

class CpuDevice final : public Device {
 public:
  DeviceKind kind() const override { return DeviceKind::kCpu; }
  std::string name() const override { return "cpu"; }

  /// MemAvailable from /proc/meminfo: what the kernel estimates can be allocated without swapping.
  Bytes free_memory() const override {
    std::ifstream in("/proc/meminfo");
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      std::string key, unit;
      Bytes kib = 0;
      if (fields >> key >> kib >> unit && key == "MemAvailable:") return kib * 1024;
    }
    throw DeviceError("cpu: cannot read MemAvailable from /proc/meminfo");
  }

  std::optional<Bytes> used_memory() const override { return std::nullopt; }
  MathMode math() const override { return MathMode::kFp32; }

  void* allocate(Bytes bytes) override {
    // aligned_alloc wants a size that is a multiple of the alignment (and not 0).
    void* p = nullptr;
    if (bytes >= 0 && bytes <= std::numeric_limits<Bytes>::max() - kAlignment) {
      const Bytes rounded = std::max<Bytes>(kAlignment, (bytes + kAlignment - 1) / kAlignment * kAlignment);
      p = std::aligned_alloc(static_cast<std::size_t>(kAlignment), static_cast<std::size_t>(rounded));
    }
    if (p == nullptr) throw DeviceError("cpu: cannot allocate " + std::to_string(bytes) + " bytes");
    return p;
  }

  void deallocate(void* p) override { std::free(p); }

  std::unique_ptr<Ops> create_ops() override { return std::make_unique<CpuOps>(); }
};

}  // namespace

std::unique_ptr<Device> make_cpu_device() { return std::make_unique<CpuDevice>(); }

}  // namespace salus::gpu
