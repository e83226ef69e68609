#include "core/errors.h"
#include "gpu_backend/device.h"

namespace salus::gpu {
namespace {

std::unique_ptr<Device> make_cpu(MathMode math) {
  if (math != MathMode::kFp32) {
    throw core::InputError(std::string("--math ") + to_string(math) +
                           ": the cpu device computes in FP32 only (valid on cpu: fp32)");
  }
  return make_cpu_device();
}

std::unique_ptr<Device> make_cuda(MathMode math) {
  if (const std::string why = cuda_unavailable_reason(); !why.empty()) throw core::InputError("--device cuda: " + why);
  return make_cuda_device(0, math);
}

constexpr DeviceRegistry::Entry kDevices[] = {
    {"cpu", "the host's cores, Eigen kernels (memory pool in host memory; fp32 only)", &make_cpu},
    {"cuda", "the first CUDA GPU, cuDNN and cuBLAS kernels (memory pool in GPU memory)", &make_cuda},
};

}  // namespace

const char* to_string(MathMode m) {
  switch (m) {
    case MathMode::kFp32: return "fp32";
    case MathMode::kTf32: return "tf32";
  }
  return "?";
}

MathMode parse_math_mode(const std::string& name) {
  if (name == "fp32") return MathMode::kFp32;
  if (name == "tf32") return MathMode::kTf32;
  throw core::InputError("--math: unknown math mode '" + name + "' (valid: fp32, tf32)");
}

const DeviceRegistry& device_registry() {
  static constexpr DeviceRegistry kRegistry("device", kDevices);
  return kRegistry;
}

std::unique_ptr<Device> make_device(const std::string& name, MathMode math) {
  return device_registry().at(name).factory(math);
}

std::vector<std::string> device_names() { return device_registry().names(); }

}  // namespace salus::gpu
