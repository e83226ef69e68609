#pragma once
/// Checks for every CUDA runtime, cuDNN and cuBLAS call of the CUDA device (cuda_device.cu,
/// cuda_ops.cu only: this header includes the CUDA headers, so plain C++ files never include it).
///
/// A failed call throws salus::gpu::DeviceError with
///   "<call text> failed: <error string> on cuda:<ordinal> (<device name>) at <file>:<line>",
/// where the device is the calling thread's current device (every entry point sets it first).
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <string>

#include "gpu_backend/ops.h"

namespace salus::gpu::cuda {

/// "cuda:0 (NVIDIA H100 80GB HBM3)" for the calling thread's current device, or as much of it as
/// can still be learned; never throws a CUDA error of its own and leaves no error pending.
inline std::string current_device_label() {
  int ordinal = -1;
  if (cudaGetDevice(&ordinal) != cudaSuccess) {
    (void)cudaGetLastError();
    return "cuda:?";
  }
  std::string label = "cuda:" + std::to_string(ordinal);
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, ordinal) == cudaSuccess) {
    label += " (";
    label += prop.name;
    label += ")";
  } else {
    (void)cudaGetLastError();
  }
  return label;
}

/// True for the errors after which, as the CUDA runtime documents them, "the process is in an
/// inconsistent state and any further CUDA work will return the same error" (sticky errors: the
/// context is lost for every stream and every thread).
inline bool is_sticky(cudaError_t status) {
  switch (status) {
    case cudaErrorECCUncorrectable:
    case cudaErrorContained:
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchTimeout:
    case cudaErrorAssert:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorLaunchFailure:
    case cudaErrorTensorMemoryLeak:
    case cudaErrorMpsClientTerminated:
    case cudaErrorExternalDevice:
      return true;
    default:
      return false;
  }
}

[[noreturn]] inline void throw_device_error(const char* call, const std::string& error, const char* file,
                                            int line, bool device_lost = false) {
  throw DeviceError(std::string(call) + " failed: " + error + " on " + current_device_label() + " at " + file + ":" +
                        std::to_string(line) + (device_lost ? " (sticky: the device's context is lost)" : ""),
                    device_lost);
}

inline void check_cuda(cudaError_t status, const char* call, const char* file, int line) {
  if (status == cudaSuccess) return;
  // A failed call is also recorded as the thread's last error; clear it so that the next launch
  // check does not report this failure again (a caller may catch this one, e.g. an allocation).
  // Sticky errors (a kernel fault) stay: every later call reports them, which is what we want.
  (void)cudaGetLastError();
  throw_device_error(call, std::string(cudaGetErrorString(status)) + " (" + cudaGetErrorName(status) + ")", file,
                     line, is_sticky(status));
}

inline void check_cudnn(cudnnStatus_t status, const char* call, const char* file, int line) {
  if (status == CUDNN_STATUS_SUCCESS) return;
  std::string error = cudnnGetErrorString(status);
  // cuDNN 9 keeps a more precise message for the last failure on this thread.
  char detail[512] = {};
  cudnnGetLastErrorString(detail, sizeof(detail));
  if (detail[0] != '\0') error += std::string(" [") + detail + "]";
  throw_device_error(call, error, file, line);
}

inline void check_cublas(cublasStatus_t status, const char* call, const char* file, int line) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  throw_device_error(call, std::string(cublasGetStatusString(status)) + " (" + cublasGetStatusName(status) + ")",
                     file, line);
}

/// Makes `ordinal` the calling thread's current device, with its primary context bound to the
/// thread. Every entry point of the CUDA device calls it: an Ops object may be used from any
/// thread. The first call on a thread always calls cudaSetDevice: cudaGetDevice answers 0 on a
/// new thread without binding a context, and cuDNN's engines call the driver API directly
/// (cublasLtCreate's cuCtxGetLimit), which fails with CUDA_ERROR_INVALID_CONTEXT on a thread with
/// no current context (compute-sanitizer reports each such call). Later calls are cheap.
inline void use_device(int ordinal) {
  thread_local int bound = -1;
  if (bound == ordinal) {
    int current = -1;
    check_cuda(cudaGetDevice(&current), "cudaGetDevice(&current)", __FILE__, __LINE__);
    if (current == ordinal) return;
  }
  check_cuda(cudaSetDevice(ordinal), "cudaSetDevice(ordinal)", __FILE__, __LINE__);
  bound = ordinal;
}

}  // namespace salus::gpu::cuda

#define CUDA_CHECK(expr) ::salus::gpu::cuda::check_cuda((expr), #expr, __FILE__, __LINE__)
#define CUDNN_CHECK(expr) ::salus::gpu::cuda::check_cudnn((expr), #expr, __FILE__, __LINE__)
#define CUBLAS_CHECK(expr) ::salus::gpu::cuda::check_cublas((expr), #expr, __FILE__, __LINE__)
/// After a kernel launch: reports a bad launch configuration (the kernel's own faults surface at
/// the next synchronising call, also checked).
#define CUDA_CHECK_LAUNCH(kernel_name) \
  ::salus::gpu::cuda::check_cuda(cudaGetLastError(), "launch of " kernel_name, __FILE__, __LINE__)
