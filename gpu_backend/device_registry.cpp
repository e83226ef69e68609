#include "core/errors.h"
#include "gpu_backend/device.h"

namespace salus::gpu {
namespace {

std::unique_ptr<Device> make_cuda() {
  if (const std::string why = cuda_unavailable_reason(); !why.empty()) throw core::InputError("--device cuda: " + why);
  return make_cuda_device(0);
}

constexpr DeviceRegistry::Entry kDevices[] = {
    {"cpu", "the host's cores, Eigen kernels (memory pool in host memory)", &make_cpu_device},
    {"cuda", "the first CUDA GPU, cuDNN and cuBLAS kernels (memory pool in GPU memory)", &make_cuda},
};

}  // namespace

const DeviceRegistry& device_registry() {
  static constexpr DeviceRegistry kRegistry("device", kDevices);
  return kRegistry;
}

std::unique_ptr<Device> make_device(const std::string& name) { return device_registry().at(name).factory(); }

std::vector<std::string> device_names() { return device_registry().names(); }

}  // namespace salus::gpu
