#include "core/errors.h"
#include "gpu_backend/device.h"
#include "gpu_backend/fault_injection.h"

namespace salus::gpu {
namespace {

void check_fp32(const char* device, MathMode math) {
  if (math != MathMode::kFp32) {
    throw core::InputError(std::string("--math ") + to_string(math) + ": the " + device +
                           " device computes in FP32 only (valid on " + device + ": fp32)");
  }
}

std::unique_ptr<Device> make_cpu(const DeviceOptions& o) {
  check_fp32("cpu", o.math);
  return make_cpu_device();
}

std::unique_ptr<Device> make_cpu_faults(const DeviceOptions& o) {
  check_fp32("cpu-faults", o.math);
  return make_cpu_faults_device(o.faults);
}

std::unique_ptr<Device> make_cuda(const DeviceOptions& o) {
  if (const std::string why = cuda_unavailable_reason(); !why.empty()) throw core::InputError("--device cuda: " + why);
  return make_cuda_device(0, o.math);
}

constexpr DeviceRegistry::Entry kDevices[] = {
    {"cpu", "the host's cores, Eigen kernels (memory pool in host memory; fp32 only)", &make_cpu},
    {"cpu-faults", "the cpu device failing allocations and iterations and losing itself at random points, "
                   "seeded (--inject-faults; for testing)", &make_cpu_faults},
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

std::unique_ptr<Device> make_device(const std::string& name, const DeviceOptions& options) {
  return device_registry().at(name).factory(options);
}

std::unique_ptr<Device> make_device(const std::string& name, MathMode math) {
  DeviceOptions o;
  o.math = math;
  return make_device(name, o);
}

std::vector<std::string> device_names() { return device_registry().names(); }

}  // namespace salus::gpu
