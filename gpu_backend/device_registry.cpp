#include "core/errors.h"
#include "gpu_backend/device.h"

namespace salus::gpu {

std::unique_ptr<Device> make_device(const std::string& name) {
  if (name == "cpu") return make_cpu_device();
  if (name == "cuda") {
    if (const std::string why = cuda_unavailable_reason(); !why.empty()) throw core::InputError("--device cuda: " + why);
    return make_cuda_device(0);
  }
  throw core::InputError("unknown device '" + name + "' (valid: cpu, cuda)");
}

std::vector<std::string> device_names() { return {"cpu", "cuda"}; }

}  // namespace salus::gpu
