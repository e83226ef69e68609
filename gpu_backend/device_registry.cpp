#include "core/errors.h"
#include "gpu_backend/device.h"

namespace salus::gpu {

std::unique_ptr<Device> make_device(const std::string& name) {
  if (name == "cpu") return make_cpu_device();
  if (name == "cuda") {
    if (!cuda_compiled()) {
      throw core::InputError("--device cuda: this build has no CUDA device (nvcc or cuDNN were not found when it was configured)");
    }
    if (!cuda_available()) throw core::InputError("--device cuda: no CUDA GPU is visible");
    return make_cuda_device(0);
  }
  throw core::InputError("unknown device '" + name + "' (valid: cpu, cuda)");
}

std::vector<std::string> device_names() { return {"cpu", "cuda"}; }

}  // namespace salus::gpu
