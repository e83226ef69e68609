#pragma once
/// A compute device for the real backend: the CPU (Eigen) or a CUDA GPU. Plain C++, no CUDA types.
#include <memory>
#include <string>
#include <vector>

#include "core/registry.h"
#include "core/units.h"
#include "gpu_backend/ops.h"

namespace salus::gpu {

enum class DeviceKind { kCpu, kCuda };

class Device {
 public:
  virtual ~Device() = default;
  virtual DeviceKind kind() const = 0;
  /// Human-readable name, e.g. "cpu" or "NVIDIA H100 80GB HBM3".
  virtual std::string name() const = 0;
  /// Memory that can still be allocated on the device now.
  virtual Bytes free_memory() const = 0;
  /// One large allocation (the memory pool); aligned to at least 256 bytes. Throws DeviceError.
  virtual void* allocate(Bytes bytes) = 0;
  virtual void deallocate(void* p) = 0;
  /// A new execution context (on CUDA: a stream with its own cuDNN and cuBLAS handles).
  virtual std::unique_ptr<Ops> create_ops() = 0;
};

/// The CPU device (always available).
std::unique_ptr<Device> make_cpu_device();

/// True when the CUDA device was compiled in and at least one GPU is visible.
bool cuda_compiled();
bool cuda_available();
/// Why cuda_available() is false, in words: "this build has no CUDA device", "no CUDA GPU is
/// visible", or the CUDA runtime's own error (e.g. a driver older than the runtime). Empty when a
/// GPU is available.
std::string cuda_unavailable_reason();
/// The CUDA device `ordinal`. Throws DeviceError when CUDA is not compiled in or no GPU is there.
std::unique_ptr<Device> make_cuda_device(int ordinal = 0);

using DeviceFactory = std::unique_ptr<Device> (*)();
using DeviceRegistry = core::Registry<DeviceFactory>;
/// The table: cpu, cuda.
const DeviceRegistry& device_registry();

/// "cpu" or "cuda" → a device; throws core::InputError listing the valid names.
std::unique_ptr<Device> make_device(const std::string& name);
std::vector<std::string> device_names();

}  // namespace salus::gpu
