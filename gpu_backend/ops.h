#pragma once
/// The layer operations of the real backend, behind a plain C++ interface with no CUDA types.
///
/// Two implementations: the CPU device (Eigen, cpu_ops.cpp) and the CUDA device (cuDNN, cuBLAS and
/// a few kernels, cuda_ops.cu). An `Ops` object is one lane's execution context: on CUDA it owns a
/// stream and its own cuDNN and cuBLAS handles; operations are enqueued on that stream in call
/// order and may complete asynchronously until synchronize(). On the CPU they run at once.
///
/// Conventions: float32, NCHW, row-major. Every pointer is device memory of the Ops' device
/// (host memory for the CPU device), allocated by the caller from the memory pool; no operation
/// allocates device memory itself: workspaces are passed in. Fully connected weights are
/// [out][in]. Gradients are written, not accumulated, unless the name says accumulate.
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "core/units.h"

namespace salus::gpu {

using core::Bytes;

/// A 2-D convolution with bias: input [n][c][h][w], filter [k][c][r][s], output [n][k][p][q].
struct ConvShape {
  int n = 1, c = 1, h = 1, w = 1;  ///< input
  int k = 1, r = 1, s = 1;         ///< output channels, filter height and width
  int pad_h = 0, pad_w = 0, stride_h = 1, stride_w = 1;
  int out_h() const { return (h + 2 * pad_h - r) / stride_h + 1; }
  int out_w() const { return (w + 2 * pad_w - s) / stride_w + 1; }
};

enum class PoolMode { kMax, kAverage };

/// Pooling over [n][c][h][w] windows; average pooling divides by the full window (padding
/// counted as zeros, cuDNN's CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING).
struct PoolShape {
  PoolMode mode = PoolMode::kMax;
  int n = 1, c = 1, h = 1, w = 1;
  int window_h = 2, window_w = 2, stride_h = 2, stride_w = 2, pad_h = 0, pad_w = 0;
  int out_h() const { return (h + 2 * pad_h - window_h) / stride_h + 1; }
  int out_w() const { return (w + 2 * pad_w - window_w) / stride_w + 1; }
};

/// A failed device call (cuDNN, cuBLAS, CUDA): names the call, the device and file:line.
/// device_lost(): the error is sticky (e.g. an illegal address or a misaligned access in a
/// kernel): the device's context can run nothing more, in this lane or any other.
class DeviceError : public std::runtime_error {
 public:
  explicit DeviceError(const std::string& what, bool device_lost = false)
      : std::runtime_error(what), device_lost_(device_lost) {}
  bool device_lost() const { return device_lost_; }

 private:
  bool device_lost_;
};

/// A timestamp taken on a device's own clock, in the order of an execution context's work (a
/// CUDA event). Made by Ops::create_mark; destroyed by whoever holds it, from any thread.
class DeviceMark {
 public:
  virtual ~DeviceMark() = default;
};

class Ops {
 public:
  virtual ~Ops() = default;

  // --- Convolution ------------------------------------------------------------------------
  /// Workspace the three convolution calls need for this shape (the maximum of the three).
  virtual Bytes conv_workspace_bytes(const ConvShape& cs) = 0;
  /// y = conv(x, w) + bias (bias per output channel).
  virtual void conv_forward(const ConvShape& cs, const float* x, const float* w, const float* bias, float* y,
                            void* workspace, Bytes workspace_bytes) = 0;
  /// dx = conv_transpose(dy, w).
  virtual void conv_backward_data(const ConvShape& cs, const float* w, const float* dy, float* dx, void* workspace,
                                  Bytes workspace_bytes) = 0;
  /// dw = correlation of x and dy; dbias = sum of dy over n, p, q.
  virtual void conv_backward_filter(const ConvShape& cs, const float* x, const float* dy, float* dw, float* dbias,
                                    void* workspace, Bytes workspace_bytes) = 0;

  // --- Batch normalisation (per channel, spatial) ------------------------------------------
  /// Training mode: normalises with the batch statistics, saves mean and 1/sqrt(var + eps) for
  /// the backward pass, and updates running = (1 - momentum) running + momentum batch (the
  /// running variance with the unbiased batch variance).
  virtual void batchnorm_forward_train(int n, int c, int h, int w, const float* x, const float* gamma,
                                       const float* beta, float* y, float* running_mean, float* running_var,
                                       float* save_mean, float* save_invstd, double momentum, double eps) = 0;
  /// Inference mode: normalises with the running statistics.
  virtual void batchnorm_forward_infer(int n, int c, int h, int w, const float* x, const float* gamma,
                                       const float* beta, const float* running_mean, const float* running_var,
                                       float* y, double eps) = 0;
  virtual void batchnorm_backward(int n, int c, int h, int w, const float* x, const float* dy, const float* gamma,
                                  const float* save_mean, const float* save_invstd, float* dx, float* dgamma,
                                  float* dbeta, double eps) = 0;

  // --- Element-wise ------------------------------------------------------------------------
  virtual void relu_forward(std::int64_t count, const float* x, float* y) = 0;
  /// dx = dy where y > 0, else 0.
  virtual void relu_backward(std::int64_t count, const float* y, const float* dy, float* dx) = 0;
  /// y = a + b (residual add).
  virtual void add(std::int64_t count, const float* a, const float* b, float* y) = 0;
  /// dst += src.
  virtual void accumulate(std::int64_t count, const float* src, float* dst) = 0;
  virtual void fill(std::int64_t count, float* x, float value) = 0;

  // --- Pooling -----------------------------------------------------------------------------
  virtual void pool_forward(const PoolShape& ps, const float* x, float* y) = 0;
  /// Max pooling routes dy to the first maximum of each window (ties: the first in row-major
  /// order); average pooling spreads dy evenly over the window.
  virtual void pool_backward(const PoolShape& ps, const float* x, const float* y, const float* dy, float* dx) = 0;

  // --- Fully connected ---------------------------------------------------------------------
  /// y[n][out] = x[n][in] * w[out][in]^T + b[out].
  virtual void fc_forward(int n, int in, int out, const float* x, const float* w, const float* b, float* y) = 0;
  /// dx = dy * w (skipped when dx is null), dw = dy^T * x, db = sum over n of dy.
  virtual void fc_backward(int n, int in, int out, const float* x, const float* w, const float* dy, float* dx,
                           float* dw, float* db) = 0;

  // --- Concatenation along channels --------------------------------------------------------
  /// For each sample, copies `channels` channels of h*w values from src (which has src_c
  /// channels, starting at channel src_offset) to dst (dst_c channels, starting at dst_offset).
  /// With accumulate, adds instead of copying. Forward concat and its backward split both use it.
  virtual void copy_channels(int n, int hw, const float* src, int src_c, int src_offset, float* dst, int dst_c,
                             int dst_offset, int channels, bool accumulate) = 0;

  // --- Loss --------------------------------------------------------------------------------
  /// probs = softmax(logits) per row; *loss (one float in device memory) = mean over rows of
  /// -log probs[label].
  virtual void softmax_xent_forward(int n, int classes, const float* logits, const std::int32_t* labels, float* probs,
                                    float* loss) = 0;
  /// dlogits = (probs - onehot(label)) / n.
  virtual void softmax_xent_backward(int n, int classes, const float* probs, const std::int32_t* labels,
                                     float* dlogits) = 0;

  // --- Optimiser ---------------------------------------------------------------------------
  /// SGD with momentum and weight decay: v = momentum v + (dw + weight_decay w); w -= lr v.
  virtual void sgd_momentum(std::int64_t count, float* w, const float* dw, float* v, float lr, float momentum,
                            float weight_decay) = 0;

  // --- Synthetic data (generated on the device) --------------------------------------------
  /// Uniform values in [lo, hi) from a counter-based generator: element i depends only on
  /// (seed, i), so the CPU and CUDA devices produce the same values.
  virtual void fill_uniform(std::int64_t count, float* x, float lo, float hi, std::uint64_t seed) = 0;
  /// labels[i] in [0, classes) from the same generator.
  virtual void fill_labels(int n, std::int32_t* labels, int classes, std::uint64_t seed) = 0;

  // --- Library workspace -------------------------------------------------------------------
  /// Workspace the context's GEMMs (fc_forward, fc_backward) want, to be taken from the lane: 0
  /// on the CPU; on CUDA the size cuBLAS recommends for the GPU (32 MiB on Hopper and later,
  /// 4 MiB before), which it would otherwise allocate outside the pool for each handle.
  virtual Bytes blas_workspace_bytes() = 0;
  /// Makes [workspace, workspace + bytes) (256-byte aligned) the GEMMs' workspace from now on, on
  /// this context's stream; null and 0 leave them none. The memory must stay reserved until the
  /// work enqueued with it has finished. No-op on the CPU.
  virtual void set_blas_workspace(void* workspace, Bytes bytes) = 0;

  // --- Device timestamps -------------------------------------------------------------------
  /// A new mark, or null when the device has no clock of its own (the CPU: callers use the host
  /// clock instead).
  virtual std::unique_ptr<DeviceMark> create_mark() = 0;
  /// Records `mark` on this context after everything enqueued so far: it takes the time at which
  /// the device reaches it (re-recording moves it). The mark must come from this device.
  virtual void record_mark(DeviceMark& mark) = 0;
  /// Device time from `from` to `to` (both recorded, possibly by different contexts of the same
  /// device), waiting for `to` to be reached. On CUDA, cudaEventElapsedTime (resolution about
  /// 0.5 us).
  virtual core::TimeNs mark_elapsed_ns(const DeviceMark& from, const DeviceMark& to) = 0;

  // --- Transfers and synchronisation -------------------------------------------------------
  /// Synchronous copies between host memory and this device's memory.
  virtual void to_host(const void* device_src, void* host_dst, Bytes bytes) = 0;
  virtual void to_device(const void* host_src, void* device_dst, Bytes bytes) = 0;
  /// Waits until everything enqueued on this context has finished; throws DeviceError if any of
  /// it failed.
  virtual void synchronize() = 0;
};

/// Counter-based uniform variate in [0, 1) for element i of stream `seed` (splitmix64), used by
/// both devices' fill_uniform and fill_labels so they agree bit for bit.
inline std::uint64_t mix64(std::uint64_t z) {
  z += 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}
inline float uniform01(std::uint64_t seed, std::uint64_t i) {
  return static_cast<float>(mix64(seed * 0x100000001B3ULL + i) >> 40) * 0x1.0p-24f;
}

}  // namespace salus::gpu
