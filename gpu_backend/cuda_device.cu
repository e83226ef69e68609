// The CUDA device: one GPU by ordinal; memory from cudaMalloc, execution contexts from cuda_ops.cu.
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>

#include "core/errors.h"
#include "gpu_backend/cuda_check.h"
#include "gpu_backend/cuda_ops.cuh"
#include "gpu_backend/device.h"

namespace salus::gpu {

namespace {

using core::kAlignment;

class CudaDevice final : public Device {
 public:
  CudaDevice(int ordinal, MathMode math) : ordinal_(ordinal), math_(math) {
    cuda::use_device(ordinal_);
    // The primary context now, so that used_memory() counts it from the first call on.
    CUDA_CHECK(cudaFree(nullptr));
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, ordinal_));
    name_ = prop.name;
  }

  DeviceKind kind() const override { return DeviceKind::kCuda; }
  std::string name() const override { return name_; }

  Bytes free_memory() const override {
    cuda::use_device(ordinal_);
    std::size_t free = 0, total = 0;
    CUDA_CHECK(cudaMemGetInfo(&free, &total));
    return static_cast<Bytes>(free);
  }

  std::optional<Bytes> used_memory() const override {
    cuda::use_device(ordinal_);
    std::size_t free = 0, total = 0;
    CUDA_CHECK(cudaMemGetInfo(&free, &total));
    return static_cast<Bytes>(total) - static_cast<Bytes>(free);
  }

  MathMode math() const override { return math_; }

  void* allocate(Bytes bytes) override {
    if (bytes < 0) throw DeviceError("cuda:" + std::to_string(ordinal_) + ": cannot allocate " +
                                     std::to_string(bytes) + " bytes");
    cuda::use_device(ordinal_);
    // Rounded like the CPU device's: a whole number of 256-byte units, at least one.
    const Bytes rounded = std::max(kAlignment, (bytes + kAlignment - 1) / kAlignment * kAlignment);
    void* p = nullptr;
    const std::string call = "cudaMalloc(" + std::to_string(rounded) + " bytes)";
    cuda::check_cuda(cudaMalloc(&p, static_cast<std::size_t>(rounded)), call.c_str(), __FILE__, __LINE__);
    SALUS_INVARIANT(reinterpret_cast<std::uintptr_t>(p) % kAlignment == 0, "cudaMalloc memory is 256-byte aligned",
                    std::to_string(reinterpret_cast<std::uintptr_t>(p)));
    return p;
  }

  /// cudaFree waits for the whole device: call it between runs, not while lanes are busy.
  /// Throws DeviceError if it fails, except while another exception is unwinding the stack (a
  /// memory pool's destructor after a kernel fault, when cudaFree reports the same sticky error):
  /// then the failure goes to stderr, as throwing would terminate the program and lose the first
  /// error.
  void deallocate(void* p) override {
    if (p == nullptr) return;
    try {
      cuda::use_device(ordinal_);
      CUDA_CHECK(cudaFree(p));
    } catch (const DeviceError& e) {
      if (std::uncaught_exceptions() == 0) throw;
      std::fprintf(stderr, "%s\n", e.what());
    }
  }

  std::unique_ptr<Ops> create_ops() override { return make_cuda_ops(ordinal_, math_); }

 private:
  const int ordinal_;
  const MathMode math_;
  std::string name_;
};

}  // namespace

bool cuda_compiled() { return true; }

std::string cuda_unavailable_reason() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();  // not an error here: the caller decides
    if (status == cudaErrorNoDevice) return "no CUDA GPU is visible";
    if (status == cudaErrorInsufficientDriver) {
      // The runtime says this both for an old driver and for none at all: tell them apart.
      void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
      if (driver == nullptr) return "no CUDA GPU is visible (no NVIDIA driver: libcuda.so.1 is not installed)";
      dlclose(driver);
    }
    // A driver older than the runtime, a missing driver, a broken installation: say which.
    return std::string("the CUDA runtime cannot use the GPU: ") + cudaGetErrorString(status) + " (" +
           cudaGetErrorName(status) + ")";
  }
  return count > 0 ? std::string() : std::string("no CUDA GPU is visible");
}

bool cuda_available() { return cuda_unavailable_reason().empty(); }

std::unique_ptr<Device> make_cuda_device(int ordinal, MathMode math) {
  int count = 0;
  CUDA_CHECK(cudaGetDeviceCount(&count));
  if (ordinal < 0 || ordinal >= count) {
    throw DeviceError("no CUDA device " + std::to_string(ordinal) + ": " +
                      (count == 0 ? std::string("none is visible")
                                  : std::to_string(count) + " visible, ordinals 0 to " + std::to_string(count - 1)));
  }
  return std::make_unique<CudaDevice>(ordinal, math);
}

}  // namespace salus::gpu
