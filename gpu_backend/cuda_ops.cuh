#pragma once
/// Private to the CUDA device: the factory of its execution contexts and the device-side copy of
/// the synthetic-data generator. No CUDA headers, so a plain C++ test can include it to check the
/// copy against ops.h on the host.
#include <cstdint>
#include <memory>

#include "gpu_backend/device.h"
#include "gpu_backend/ops.h"

#if defined(__CUDACC__)
#define SALUS_HOST_DEVICE __host__ __device__
#else
#define SALUS_HOST_DEVICE
#endif

namespace salus::gpu {

/// A CUDA execution context on device `ordinal`: its own non-blocking stream, cuDNN handle and
/// cuBLAS handle (defined in cuda_ops.cu), computing with `math`. Throws DeviceError.
std::unique_ptr<Ops> make_cuda_ops(int ordinal, MathMode math);

namespace generator {

/// The same arithmetic as salus::gpu::mix64 and uniform01 in ops.h, callable from kernels (the
/// ops.h versions are plain host functions). cuda_ops.cu checks them against values computed with
/// ops.h at compile time; tests/gpu_cuda compares them over many indices on the host.
SALUS_HOST_DEVICE constexpr std::uint64_t mix64(std::uint64_t z) {
  z += 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

/// The top 24 bits times 2^-24: both steps are exact in float, so host and device agree bit for bit.
SALUS_HOST_DEVICE constexpr float uniform01(std::uint64_t seed, std::uint64_t i) {
  return static_cast<float>(mix64(seed * 0x100000001B3ULL + i) >> 40) * 0x1.0p-24f;
}

}  // namespace generator
}  // namespace salus::gpu
