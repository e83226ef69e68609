#pragma once
/// A compute device for the real backend: the CPU (Eigen) or a CUDA GPU. Plain C++, no CUDA types.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/registry.h"
#include "core/units.h"
#include "gpu_backend/ops.h"

namespace salus::gpu {

enum class DeviceKind { kCpu, kCuda };

/// Arithmetic of convolutions and GEMMs. kFp32: exact FP32 (FMA) everywhere, as the CPU device
/// computes; the default, so that a run on CUDA is comparable with the CPU reference and with
/// every figure measured so far. kTf32: TF32 tensor cores for cuDNN convolutions
/// (CUDNN_TENSOR_OP_MATH on the convolution descriptor) and cuBLAS GEMMs
/// (CUBLAS_TF32_TENSOR_OP_MATH), as frameworks run FP32 training on Ampere and Hopper: inputs
/// rounded to 10 mantissa bits, FP32 accumulation. CUDA only: the CPU device refuses it.
enum class MathMode { kFp32, kTf32 };
const char* to_string(MathMode m);
/// "fp32" or "tf32"; throws core::InputError "--math: unknown math mode 'x' (valid: fp32, tf32)".
MathMode parse_math_mode(const std::string& name);

class FaultInjector;  // gpu_backend/fault_injection.h

class Device {
 public:
  virtual ~Device() = default;
  virtual DeviceKind kind() const = 0;
  /// Human-readable name, e.g. "cpu" or "NVIDIA H100 80GB HBM3".
  virtual std::string name() const = 0;
  /// Memory that can still be allocated on the device now.
  virtual Bytes free_memory() const = 0;
  /// Device memory in use now by everyone (total - free, cudaMemGetInfo): this process's context,
  /// handles, loaded modules and allocations, and other processes' on the same GPU. nullopt on
  /// the CPU, whose memory is not the device's own.
  virtual std::optional<Bytes> used_memory() const = 0;
  /// The arithmetic its execution contexts use.
  virtual MathMode math() const = 0;
  /// One large allocation (the memory pool); aligned to at least 256 bytes. Throws DeviceError.
  virtual void* allocate(Bytes bytes) = 0;
  virtual void deallocate(void* p) = 0;
  /// A new execution context (on CUDA: a stream with its own cuDNN and cuBLAS handles).
  virtual std::unique_ptr<Ops> create_ops() = 0;
  /// The faults this device injects into the jobs' runs (the cpu-faults device); null on every
  /// device that only fails for real. Owned by the device.
  virtual FaultInjector* faults() { return nullptr; }
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
std::unique_ptr<Device> make_cuda_device(int ordinal = 0, MathMode math = MathMode::kFp32);

/// --inject-faults: a probability per operation for each kind of fault the cpu-faults device
/// injects, and their seed (gpu_backend/fault_injection.h says where each happens).
struct FaultRates {
  double alloc = 0;  ///< per allocation from the pool (persistent block at admission, lane buffers)
  double iter = 0;   ///< per iteration: it reports an error
  double lost = 0;   ///< per iteration: the device is lost (sticky)
  std::uint64_t seed = 1;
};

/// What a device is made with: its arithmetic and, for cpu-faults, the faults it injects.
struct DeviceOptions {
  MathMode math = MathMode::kFp32;
  FaultRates faults;  ///< read only by cpu-faults (all zero: it injects none)
};

using DeviceFactory = std::unique_ptr<Device> (*)(const DeviceOptions&);
using DeviceRegistry = core::Registry<DeviceFactory>;
/// The table: cpu, cpu-faults, cuda.
const DeviceRegistry& device_registry();

/// "cpu", "cpu-faults" or "cuda" → a device; throws core::InputError listing the valid names,
/// and for MathMode::kTf32 on the CPU ("--math tf32: the cpu device computes in FP32 only (valid
/// on cpu: fp32)").
std::unique_ptr<Device> make_device(const std::string& name, const DeviceOptions& options);
std::unique_ptr<Device> make_device(const std::string& name, MathMode math = MathMode::kFp32);
std::vector<std::string> device_names();

}  // namespace salus::gpu
