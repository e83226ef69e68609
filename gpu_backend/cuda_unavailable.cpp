// Built instead of the CUDA device when CMake found no nvcc or no cuDNN.
#include <memory>

#include "gpu_backend/device.h"

namespace salus::gpu {

bool cuda_compiled() { return false; }

bool cuda_available() { return false; }

std::string cuda_unavailable_reason() {
  return "this build has no CUDA device (nvcc or cuDNN were not found when it was configured)";
}

std::unique_ptr<Device> make_cuda_device(int /*ordinal*/, MathMode /*math*/) {
  throw DeviceError("this build has no CUDA device (nvcc or cuDNN were not found at configure time)");
}

}  // namespace salus::gpu
