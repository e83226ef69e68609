#pragma once
/// The CPU device's layer operations: Eigen GEMMs and plain loops, single-threaded and
/// deterministic (the same inputs give the same bits on every run). The reference the CUDA device
/// is checked against.
///
/// Every operation runs at once on the calling thread; synchronize() has nothing to wait for.
/// CpuOps holds no state, so several lanes may each use their own CpuOps on their own thread.
/// Pointers are host memory owned by the caller; no operation allocates memory that grows with the
/// batch or the activations: convolutions use the caller's workspace for their im2col buffer.
#include <cstdint>

#include "gpu_backend/ops.h"

namespace salus::gpu {

// Not final: tests derive device doubles from it (a context that loses the device on demand).
class CpuOps : public Ops {
 public:
  /// c * r * s * out_h * out_w floats: the im2col buffer of one sample, reused sample by sample
  /// by all three convolution calls.
  Bytes conv_workspace_bytes(const ConvShape& cs) override;
  /// bias may be null (no bias).
  void conv_forward(const ConvShape& cs, const float* x, const float* w, const float* bias, float* y,
                    void* workspace, Bytes workspace_bytes) override;
  void conv_backward_data(const ConvShape& cs, const float* w, const float* dy, float* dx, void* workspace,
                          Bytes workspace_bytes) override;
  /// dbias may be null (not computed).
  void conv_backward_filter(const ConvShape& cs, const float* x, const float* dy, float* dw, float* dbias,
                            void* workspace, Bytes workspace_bytes) override;

  void batchnorm_forward_train(int n, int c, int h, int w, const float* x, const float* gamma, const float* beta,
                               float* y, float* running_mean, float* running_var, float* save_mean,
                               float* save_invstd, double momentum, double eps) override;
  void batchnorm_forward_infer(int n, int c, int h, int w, const float* x, const float* gamma, const float* beta,
                               const float* running_mean, const float* running_var, float* y, double eps) override;
  /// Uses save_mean and save_invstd from the forward pass; eps is not needed again.
  void batchnorm_backward(int n, int c, int h, int w, const float* x, const float* dy, const float* gamma,
                          const float* save_mean, const float* save_invstd, float* dx, float* dgamma, float* dbeta,
                          double eps) override;

  void relu_forward(std::int64_t count, const float* x, float* y) override;
  void relu_backward(std::int64_t count, const float* y, const float* dy, float* dx) override;
  void add(std::int64_t count, const float* a, const float* b, float* y) override;
  void accumulate(std::int64_t count, const float* src, float* dst) override;
  void fill(std::int64_t count, float* x, float value) override;

  /// Max pooling ignores padding (a window made only of padding gives 0); average pooling counts it.
  void pool_forward(const PoolShape& ps, const float* x, float* y) override;
  void pool_backward(const PoolShape& ps, const float* x, const float* y, const float* dy, float* dx) override;

  void fc_forward(int n, int in, int out, const float* x, const float* w, const float* b, float* y) override;
  void fc_backward(int n, int in, int out, const float* x, const float* w, const float* dy, float* dx, float* dw,
                   float* db) override;

  void copy_channels(int n, int hw, const float* src, int src_c, int src_offset, float* dst, int dst_c,
                     int dst_offset, int channels, bool accumulate) override;

  void softmax_xent_forward(int n, int classes, const float* logits, const std::int32_t* labels, float* probs,
                            float* loss) override;
  void softmax_xent_backward(int n, int classes, const float* probs, const std::int32_t* labels,
                             float* dlogits) override;

  void sgd_momentum(std::int64_t count, float* w, const float* dw, float* v, float lr, float momentum,
                    float weight_decay) override;

  /// x[i] = fma(hi - lo, uniform01(seed, i), lo), moved down to the float below hi if it rounds
  /// up to hi (see uniform_value).
  void fill_uniform(std::int64_t count, float* x, float lo, float hi, std::uint64_t seed) override;
  /// labels[i] = min(classes - 1, floor(uniform01(seed, i) * classes)), the product in float.
  void fill_labels(int n, std::int32_t* labels, int classes, std::uint64_t seed) override;

  /// Eigen's GEMMs take no workspace from the lane.
  Bytes blas_workspace_bytes() override { return 0; }
  void set_blas_workspace(void* /*workspace*/, Bytes /*bytes*/) override {}
  /// No device clock: callers time with the host clock.
  std::unique_ptr<DeviceMark> create_mark() override { return nullptr; }
  void record_mark(DeviceMark& mark) override;
  core::TimeNs mark_elapsed_ns(const DeviceMark& from, const DeviceMark& to) override;

  void to_host(const void* device_src, void* host_dst, Bytes bytes) override;
  void to_device(const void* host_src, void* device_dst, Bytes bytes) override;
  void synchronize() override {}
};

/// Element i of fill_uniform(lo, hi, seed), exactly as the CPU device computes it. A single
/// correctly rounded fma keeps it independent of the compiler's contraction choices, so a CUDA
/// kernel computing fmaf(hi - lo, u, lo) and the same clamp gets the same bits.
float uniform_value(float lo, float hi, std::uint64_t seed, std::uint64_t i);

}  // namespace salus::gpu
