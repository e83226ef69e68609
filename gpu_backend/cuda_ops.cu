// The CUDA device's layer operations: cuDNN for convolution, batch normalisation and average
// pooling, cuBLAS for the fully connected layers, small kernels for the rest (max pooling among
// them, for ops.h's tie rule). One CudaOps is one lane's
// execution context: a non-blocking stream with its own cuDNN and cuBLAS handles bound to it.
//
// Numerics follow the CPU reference (cpu_ops.cpp) closely enough to be compared with it:
// with MathMode::kFp32 (the default) convolutions and GEMMs are restricted to FMA (no TF32 tensor
// cores; MathMode::kTf32 allows them, see device.h), element-wise kernels use explicitly
// rounded intrinsics (__fadd_rn, __fmul_rn) so nvcc cannot contract them into FMAs, and the
// synthetic data generators reproduce the CPU's bits exactly.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "core/errors.h"
#include "gpu_backend/cuda_check.h"
#include "gpu_backend/cuda_ops.cuh"
#include "gpu_backend/ops.h"
#include "gpu_backend/shapes.h"

namespace salus::gpu {

// The device copy of the generator must be the ops.h one. These values were computed with ops.h's
// mix64 and uniform01 on the host; tests/gpu_cuda also compares the two over many indices.
static_assert(generator::mix64(0x0ULL) == 0xe220a8397b1dcdafULL, "generator::mix64 differs from ops.h");
static_assert(generator::mix64(0x1ULL) == 0x910a2dec89025cc1ULL, "generator::mix64 differs from ops.h");
static_assert(generator::mix64(0xffffffffffffffffULL) == 0xe4d971771b652c20ULL, "generator::mix64 differs from ops.h");
static_assert(generator::mix64(0x123456789abcdefULL) == 0x157a3807a48faa9dULL, "generator::mix64 differs from ops.h");
static_assert(generator::uniform01(0x0ULL, 0x0ULL) == 0x1.c4415p-1f, "generator::uniform01 differs from ops.h");
static_assert(generator::uniform01(0x2aULL, 0x7ULL) == 0x1.6d01f2p-1f, "generator::uniform01 differs from ops.h");
static_assert(generator::uniform01(0xdeadbeefULL, 0x75bcd15ULL) == 0x1.61f5ep-1f,
              "generator::uniform01 differs from ops.h");
static_assert(generator::uniform01(0xffffffffffffffffULL, 0xffffffffffffffffULL) == 0x1.1ca948p-1f,
              "generator::uniform01 differs from ops.h");

namespace {

using core::kMiB;

/// Largest cuDNN workspace a convolution algorithm may ask for: the heuristics' first algorithm
/// that fits is taken. The workspace is ephemeral memory of every iteration of every job sharing
/// the GPU, so a fast algorithm that needs hundreds of MiB is not worth it.
constexpr std::size_t kConvWorkspaceLimit = 64 * kMiB;

constexpr int kThreads = 256;          // element-wise kernels (grid-stride loops)
constexpr std::int64_t kMaxBlocks = 65535;
constexpr int kSoftmaxThreads = 256;   // one block per row; a power of two for the tree reductions
constexpr int kLossThreads = 256;      // one block for the whole batch

unsigned grid_for(std::int64_t count) {
  const std::int64_t blocks = (count + kThreads - 1) / kThreads;
  return static_cast<unsigned>(std::min(blocks, kMaxBlocks));
}

// --- RAII for CUDA, cuDNN and cuBLAS objects ------------------------------------------------
// Destruction failures are ignored: there is nothing left to do with them in a destructor.

template <class T, class Status, Status (*Destroy)(T)>
class Owned {
 public:
  Owned() = default;
  explicit Owned(T handle) : handle_(handle) {}
  ~Owned() {
    if (handle_ != nullptr) (void)Destroy(handle_);
  }
  Owned(Owned&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  Owned& operator=(Owned&& other) noexcept {
    std::swap(handle_, other.handle_);
    return *this;
  }
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
  T get() const { return handle_; }

 private:
  T handle_ = nullptr;
};

using StreamHandle = Owned<cudaStream_t, cudaError_t, cudaStreamDestroy>;
using CudnnHandle = Owned<cudnnHandle_t, cudnnStatus_t, cudnnDestroy>;
using CublasHandle = Owned<cublasHandle_t, cublasStatus_t, cublasDestroy>;
using TensorDescriptor = Owned<cudnnTensorDescriptor_t, cudnnStatus_t, cudnnDestroyTensorDescriptor>;
using FilterDescriptor = Owned<cudnnFilterDescriptor_t, cudnnStatus_t, cudnnDestroyFilterDescriptor>;
using ConvolutionDescriptor =
    Owned<cudnnConvolutionDescriptor_t, cudnnStatus_t, cudnnDestroyConvolutionDescriptor>;
using PoolingDescriptor = Owned<cudnnPoolingDescriptor_t, cudnnStatus_t, cudnnDestroyPoolingDescriptor>;

// --- Shapes ---------------------------------------------------------------------------------





// --- Kernels --------------------------------------------------------------------------------
// Element-wise kernels take no __restrict__: callers may run them in place (y == x).

__device__ std::int64_t first_index() { return static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ std::int64_t index_stride() { return static_cast<std::int64_t>(gridDim.x) * blockDim.x; }

__global__ void relu_forward_kernel(std::int64_t count, const float* x, float* y) {
  for (std::int64_t i = first_index(); i < count; i += index_stride()) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

__global__ void relu_backward_kernel(std::int64_t count, const float* y, const float* dy, float* dx) {
  for (std::int64_t i = first_index(); i < count; i += index_stride()) dx[i] = y[i] > 0.0f ? dy[i] : 0.0f;
}

__global__ void add_kernel(std::int64_t count, const float* a, const float* b, float* y) {
  for (std::int64_t i = first_index(); i < count; i += index_stride()) y[i] = __fadd_rn(a[i], b[i]);
}

__global__ void accumulate_kernel(std::int64_t count, const float* src, float* dst) {
  for (std::int64_t i = first_index(); i < count; i += index_stride()) dst[i] = __fadd_rn(dst[i], src[i]);
}

__global__ void fill_kernel(std::int64_t count, float* x, float value) {
  for (std::int64_t i = first_index(); i < count; i += index_stride()) x[i] = value;
}

/// y[row][j] += b[j] for a row-major [rows][out] matrix of `count` elements.
__global__ void add_row_bias_kernel(std::int64_t count, int out, const float* b, float* y) {
  for (std::int64_t i = first_index(); i < count; i += index_stride()) y[i] = __fadd_rn(y[i], b[i % out]);
}

/// db[j] = sum over rows of dy[row][j]; one thread per column, rows in order.
__global__ void column_sum_kernel(int rows, int out, const float* dy, float* db) {
  const int j = static_cast<int>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= out) return;
  float sum = 0.0f;
  for (int row = 0; row < rows; ++row) sum = __fadd_rn(sum, dy[static_cast<std::int64_t>(row) * out + j]);
  db[j] = sum;
}

/// `count` = n * channels * hw elements; element `rem` of sample i's block of channels.
__global__ void copy_channels_kernel(std::int64_t count, std::int64_t block, std::int64_t hw, const float* src,
                                     int src_c, int src_offset, float* dst, int dst_c, int dst_offset,
                                     bool accumulate) {
  for (std::int64_t idx = first_index(); idx < count; idx += index_stride()) {
    const std::int64_t i = idx / block;
    const std::int64_t rem = idx - i * block;
    const float value = src[(i * src_c + src_offset) * hw + rem];
    float& target = dst[(i * dst_c + dst_offset) * hw + rem];
    target = accumulate ? __fadd_rn(target, value) : value;
  }
}

/// A pooling shape with its output size, for device code (PoolShape's methods are host-only).
struct PoolDims {
  int h, w, p, q, window_h, window_w, stride_h, stride_w, pad_h, pad_w;
};

PoolDims pool_dims(const PoolShape& ps) {
  return PoolDims{ps.h,        ps.w,        ps.out_h(),  ps.out_w(), ps.window_h,
                  ps.window_w, ps.stride_h, ps.stride_w, ps.pad_h,   ps.pad_w};
}

/// Offset within the plane of the first maximum (row-major, strict >) of window (oh, ow), padding
/// ignored; -1 when the window holds no input element. The same rule as the CPU device.
__device__ std::int64_t window_first_max(const float* plane, const PoolDims& d, int oh, int ow) {
  const int hs = oh * d.stride_h - d.pad_h, ws = ow * d.stride_w - d.pad_w;
  const int h0 = max(hs, 0), h1 = min(hs + d.window_h, d.h);
  const int w0 = max(ws, 0), w1 = min(ws + d.window_w, d.w);
  std::int64_t best = -1;
  float best_value = 0.0f;
  for (int ih = h0; ih < h1; ++ih) {
    for (int iw = w0; iw < w1; ++iw) {
      const std::int64_t at = static_cast<std::int64_t>(ih) * d.w + iw;
      if (best < 0 || plane[at] > best_value) {
        best = at;
        best_value = plane[at];
      }
    }
  }
  return best;
}

/// Max pooling forward, one thread per output: the window's first maximum, padding ignored, 0 for
/// a window made only of padding (the CPU's definition; cuDNN's would need padding < window).
__global__ void max_pool_forward_kernel(std::int64_t count, PoolDims d, const float* x, float* y) {
  const std::int64_t hw = static_cast<std::int64_t>(d.h) * d.w;
  const std::int64_t pq = static_cast<std::int64_t>(d.p) * d.q;
  for (std::int64_t idx = first_index(); idx < count; idx += index_stride()) {
    const std::int64_t plane = idx / pq;
    const std::int64_t o = idx - plane * pq;
    const float* xp = x + plane * hw;
    const std::int64_t at = window_first_max(xp, d, static_cast<int>(o / d.q), static_cast<int>(o % d.q));
    y[idx] = at < 0 ? 0.0f : xp[at];
  }
}

/// First output index whose window (stride, window, padding) contains input index i.
__device__ int first_window(int i, int pad, int window, int stride) {
  const int num = i + pad - window + 1;
  return num <= 0 ? 0 : (num + stride - 1) / stride;
}

/// Max pooling backward as a gather: each input element sums dy over the windows (in row-major
/// order, as the CPU does) whose first maximum it is. Deterministic, no atomics, no zeroing pass,
/// and exactly ops.h's tie rule (cuDNN routes a tie to some maximum, not necessarily the first).
__global__ void max_pool_backward_kernel(std::int64_t count, PoolDims d, const float* x, const float* dy,
                                         float* dx) {
  const std::int64_t hw = static_cast<std::int64_t>(d.h) * d.w;
  const std::int64_t pq = static_cast<std::int64_t>(d.p) * d.q;
  for (std::int64_t idx = first_index(); idx < count; idx += index_stride()) {
    const std::int64_t plane = idx / hw;
    const std::int64_t pos = idx - plane * hw;
    const int ih = static_cast<int>(pos / d.w), iw = static_cast<int>(pos % d.w);
    const float* xp = x + plane * hw;
    const float* g = dy + plane * pq;
    const int oh0 = first_window(ih, d.pad_h, d.window_h, d.stride_h);
    const int oh1 = min(d.p - 1, (ih + d.pad_h) / d.stride_h);
    const int ow0 = first_window(iw, d.pad_w, d.window_w, d.stride_w);
    const int ow1 = min(d.q - 1, (iw + d.pad_w) / d.stride_w);
    float sum = 0.0f;
    for (int oh = oh0; oh <= oh1; ++oh) {
      for (int ow = ow0; ow <= ow1; ++ow) {
        if (window_first_max(xp, d, oh, ow) == pos) sum = __fadd_rn(sum, g[static_cast<std::int64_t>(oh) * d.q + ow]);
      }
    }
    dx[idx] = sum;
  }
}

/// probs = softmax(logits) for one row per block; safe in place (probs == logits).
__global__ void softmax_rows_kernel(int classes, const float* logits, float* probs) {
  __shared__ float scratch[kSoftmaxThreads];
  const int t = static_cast<int>(threadIdx.x);
  const std::int64_t base = static_cast<std::int64_t>(blockIdx.x) * classes;
  const float* in = logits + base;
  float* out = probs + base;

  float row_max = -INFINITY;
  for (int j = t; j < classes; j += kSoftmaxThreads) row_max = fmaxf(row_max, in[j]);
  scratch[t] = row_max;
  __syncthreads();
  for (int half = kSoftmaxThreads / 2; half > 0; half /= 2) {
    if (t < half) scratch[t] = fmaxf(scratch[t], scratch[t + half]);
    __syncthreads();
  }
  row_max = scratch[0];
  __syncthreads();

  float sum = 0.0f;
  for (int j = t; j < classes; j += kSoftmaxThreads) {
    const float e = expf(in[j] - row_max);
    out[j] = e;
    sum += e;
  }
  scratch[t] = sum;
  __syncthreads();
  for (int half = kSoftmaxThreads / 2; half > 0; half /= 2) {
    if (t < half) scratch[t] += scratch[t + half];
    __syncthreads();
  }
  const float inv = 1.0f / scratch[0];
  for (int j = t; j < classes; j += kSoftmaxThreads) out[j] *= inv;
}

/// *loss = mean over rows of logsumexp(row) - row[label], from the logits (finite even where the
/// probability underflows). One block, fixed reduction order: deterministic. A label outside
/// [0, classes) makes the loss NaN (a kernel cannot throw; the CPU device asserts instead).
__global__ void softmax_xent_loss_kernel(int n, int classes, const float* logits, const std::int32_t* labels,
                                         float* loss) {
  __shared__ double partial[kLossThreads];
  const int t = static_cast<int>(threadIdx.x);
  double total = 0.0;
  for (int row = t; row < n; row += kLossThreads) {
    const float* in = logits + static_cast<std::int64_t>(row) * classes;
    float row_max = in[0];
    for (int j = 1; j < classes; ++j) row_max = fmaxf(row_max, in[j]);
    double sum = 0.0;
    for (int j = 0; j < classes; ++j) sum += static_cast<double>(expf(in[j] - row_max));
    const std::int32_t label = labels[row];
    if (label >= 0 && label < classes) {
      total += log(sum) - (static_cast<double>(in[label]) - static_cast<double>(row_max));
    } else {
      total += __longlong_as_double(0x7ff8000000000000LL);  // quiet NaN
    }
  }
  partial[t] = total;
  __syncthreads();
  for (int half = kLossThreads / 2; half > 0; half /= 2) {
    if (t < half) partial[t] += partial[t + half];
    __syncthreads();
  }
  if (t == 0) *loss = static_cast<float>(partial[0] / n);
}

__global__ void softmax_xent_backward_kernel(std::int64_t count, int classes, float inv_n, const float* probs,
                                             const std::int32_t* labels, float* dlogits) {
  for (std::int64_t i = first_index(); i < count; i += index_stride()) {
    const std::int64_t row = i / classes;
    const int j = static_cast<int>(i - row * classes);
    const float onehot = j == labels[row] ? 1.0f : 0.0f;
    dlogits[i] = __fmul_rn(__fsub_rn(probs[i], onehot), inv_n);
  }
}

/// v = momentum v + (dw + weight_decay w); w -= lr v, rounded step by step as the CPU does.
__global__ void sgd_momentum_kernel(std::int64_t count, float* w, const float* dw, float* v, float lr,
                                    float momentum, float weight_decay) {
  for (std::int64_t i = first_index(); i < count; i += index_stride()) {
    const float grad = __fadd_rn(dw[i], __fmul_rn(weight_decay, w[i]));
    const float velocity = __fadd_rn(__fmul_rn(momentum, v[i]), grad);
    v[i] = velocity;
    w[i] = __fsub_rn(w[i], __fmul_rn(lr, velocity));
  }
}

/// x[i] = fma(hi - lo, u, lo), moved below hi if it rounds up to it: CPU uniform_value's bits.
__global__ void fill_uniform_kernel(std::int64_t count, float* x, float lo, float hi, std::uint64_t seed) {
  const float range = __fsub_rn(hi, lo);
  for (std::int64_t i = first_index(); i < count; i += index_stride()) {
    const float u = generator::uniform01(seed, static_cast<std::uint64_t>(i));
    float value = fmaf(range, u, lo);
    if (value >= hi && lo < hi) value = nextafterf(hi, lo);
    x[i] = value;
  }
}

/// labels[i] = min(classes - 1, floor(u * classes)), the product in float: the CPU's values.
__global__ void fill_labels_kernel(std::int64_t count, std::int32_t* labels, int classes, std::uint64_t seed) {
  const float k = static_cast<float>(classes);
  for (std::int64_t i = first_index(); i < count; i += index_stride()) {
    const float u = generator::uniform01(seed, static_cast<std::uint64_t>(i));
    const auto label = static_cast<std::int32_t>(floorf(__fmul_rn(u, k)));
    labels[i] = min(classes - 1, label);
  }
}

// --- Convolution algorithm choice -----------------------------------------------------------

bool uses_tensor_cores(cudnnMathType_t math) {
  return math == CUDNN_TENSOR_OP_MATH || math == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
}

/// The first of cuDNN's heuristic results (best first) that is supported, uses tensor cores only
/// when `tensor_cores` allows them (TF32 loses precision against the float32 reference) and whose workspace fits
/// kConvWorkspaceLimit, preferring deterministic algorithms; `fallback` (an implicit-GEMM
/// algorithm that always runs) when none qualifies. `workspace_of(algo, &bytes)` asks cuDNN for
/// the workspace of one algorithm with the descriptors at hand.
template <class Perf, class Algo, class WorkspaceOf>
std::pair<Algo, std::size_t> choose_algorithm(const std::vector<Perf>& perf, int returned, Algo fallback,
                                             WorkspaceOf workspace_of, const char* fallback_call, bool tensor_cores) {
  for (const bool deterministic_only : {true, false}) {
    for (int i = 0; i < returned; ++i) {
      const Perf& p = perf[static_cast<std::size_t>(i)];
      if (p.status != CUDNN_STATUS_SUCCESS || (!tensor_cores && uses_tensor_cores(p.mathType))) continue;
      if (deterministic_only && p.determinism != CUDNN_DETERMINISTIC) continue;
      std::size_t bytes = 0;
      // A failed query only means this algorithm does not apply here; try the next.
      if (workspace_of(p.algo, &bytes) != CUDNN_STATUS_SUCCESS || bytes > kConvWorkspaceLimit) continue;
      return {p.algo, bytes};
    }
  }
  std::size_t bytes = 0;
  cuda::check_cudnn(workspace_of(fallback, &bytes), fallback_call, __FILE__, __LINE__);
  return {fallback, bytes};
}

// --- Convolution plans, shared by every context of a device ---------------------------------

/// Descriptors and chosen algorithms of one convolution shape. Immutable once made: every
/// execution context of the device reads it (cuDNN descriptors are host-side structures that
/// concurrent calls may share).
struct ConvPlan {
  TensorDescriptor x, y, bias;
  FilterDescriptor w;
  ConvolutionDescriptor conv;
  cudnnConvolutionFwdAlgo_t fwd_algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  cudnnConvolutionBwdDataAlgo_t bwd_data_algo = CUDNN_CONVOLUTION_BWD_DATA_ALGO_0;
  cudnnConvolutionBwdFilterAlgo_t bwd_filter_algo = CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0;
  std::size_t fwd_bytes = 0, bwd_data_bytes = 0, bwd_filter_bytes = 0;
};

TensorDescriptor make_tensor(int n, int c, int h, int w) {
  cudnnTensorDescriptor_t desc = nullptr;
  CUDNN_CHECK(cudnnCreateTensorDescriptor(&desc));
  TensorDescriptor owner(desc);
  CUDNN_CHECK(cudnnSetTensor4dDescriptor(desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, c, h, w));
  return owner;
}

/// Makes the plan of `cs` with `handle` (cuDNN's heuristics need one; any of the device's will do)
/// for `math`.
std::unique_ptr<ConvPlan> make_conv_plan(const ConvShape& cs, cudnnHandle_t handle, MathMode math);

/// The plans of one device and math mode, made once per shape whichever context asks first: a job's first
/// iteration on a fresh lane then costs what it costs on a lane that ran it before, and the
/// heuristics run once per shape in the process rather than once per worker.
class ConvPlanCache {
 public:
  static ConvPlanCache& of(int ordinal, MathMode math) {
    // Never destroyed: plans may be in use until the process ends, after static destructors of
    // cuDNN's own libraries may have run.
    static std::mutex registry_mutex;
    static auto* registry = new std::map<std::pair<int, MathMode>, std::unique_ptr<ConvPlanCache>>();
    std::lock_guard<std::mutex> lock(registry_mutex);
    auto& slot = (*registry)[{ordinal, math}];
    if (!slot) slot = std::make_unique<ConvPlanCache>(math);
    return *slot;
  }

  explicit ConvPlanCache(MathMode math) : math_(math) {}

  const ConvPlan& get(const ConvShape& cs, cudnnHandle_t handle) {
    const std::array<int, 11> key{cs.n,     cs.c,     cs.h,         cs.w,         cs.k,      cs.r,
                                  cs.s,     cs.pad_h, cs.pad_w,     cs.stride_h,  cs.stride_w};
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = plans_.find(key);
    if (it != plans_.end()) return *it->second;
    return *plans_.emplace(key, make_conv_plan(cs, handle, math_)).first->second;
  }

 private:
  const MathMode math_;
  std::mutex mutex_;
  std::map<std::array<int, 11>, std::unique_ptr<ConvPlan>> plans_;
};

// --- The execution context ------------------------------------------------------------------

class CudaOps final : public Ops {
 public:
  CudaOps(int ordinal, MathMode math);
  ~CudaOps() override;
  CudaOps(const CudaOps&) = delete;
  CudaOps& operator=(const CudaOps&) = delete;

  Bytes conv_workspace_bytes(const ConvShape& cs) override;
  void conv_forward(const ConvShape& cs, const float* x, const float* w, const float* bias, float* y,
                    void* workspace, Bytes workspace_bytes) override;
  void conv_backward_data(const ConvShape& cs, const float* w, const float* dy, float* dx, void* workspace,
                          Bytes workspace_bytes) override;
  void conv_backward_filter(const ConvShape& cs, const float* x, const float* dy, float* dw, float* dbias,
                            void* workspace, Bytes workspace_bytes) override;

  void batchnorm_forward_train(int n, int c, int h, int w, const float* x, const float* gamma, const float* beta,
                               float* y, float* running_mean, float* running_var, float* save_mean,
                               float* save_invstd, double momentum, double eps) override;
  void batchnorm_forward_infer(int n, int c, int h, int w, const float* x, const float* gamma, const float* beta,
                               const float* running_mean, const float* running_var, float* y, double eps) override;
  void batchnorm_backward(int n, int c, int h, int w, const float* x, const float* dy, const float* gamma,
                          const float* save_mean, const float* save_invstd, float* dx, float* dgamma, float* dbeta,
                          double eps) override;

  void relu_forward(std::int64_t count, const float* x, float* y) override;
  void relu_backward(std::int64_t count, const float* y, const float* dy, float* dx) override;
  void add(std::int64_t count, const float* a, const float* b, float* y) override;
  void accumulate(std::int64_t count, const float* src, float* dst) override;
  void fill(std::int64_t count, float* x, float value) override;

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

  void fill_uniform(std::int64_t count, float* x, float lo, float hi, std::uint64_t seed) override;
  void fill_labels(int n, std::int32_t* labels, int classes, std::uint64_t seed) override;

  Bytes blas_workspace_bytes() override { return blas_workspace_bytes_; }
  void set_blas_workspace(void* workspace, Bytes bytes) override;
  std::unique_ptr<DeviceMark> create_mark() override;
  void record_mark(DeviceMark& mark) override;
  core::TimeNs mark_elapsed_ns(const DeviceMark& from, const DeviceMark& to) override;

  void to_host(const void* device_src, void* host_dst, Bytes bytes) override;
  void to_device(const void* host_src, void* device_dst, Bytes bytes) override;
  void synchronize() override;

 private:
  /// Every public method starts with one: serialises use of the handles and caches (a cuDNN
  /// handle must not be used by two threads at once) and makes this context's device current
  /// for the calling thread, so any thread may use the context.
  class Entry {
   public:
    explicit Entry(CudaOps& ops) : lock_(ops.mutex_) { cuda::use_device(ops.ordinal_); }

   private:
    std::lock_guard<std::mutex> lock_;
  };

  cudnnTensorDescriptor_t tensor(int n, int c, int h, int w);
  const ConvPlan& conv_plan(const ConvShape& cs);
  /// The cuDNN descriptor of an average pooling shape.
  cudnnPoolingDescriptor_t pooling(const PoolShape& ps);
  void require_workspace(const char* op, const ConvShape& cs, int algo, std::size_t need, const void* workspace,
                         Bytes workspace_bytes) const;
  template <class Kernel, class... Args>
  void launch(const char* name, std::int64_t count, Kernel kernel, Args... args);

  const int ordinal_;
  const MathMode math_;
  Bytes blas_workspace_bytes_ = 0;
  std::mutex mutex_;
  // Declared in this order so that the handles go before the stream they are bound to.
  StreamHandle stream_;
  CudnnHandle cudnn_;
  CublasHandle cublas_;
  std::map<std::array<int, 4>, TensorDescriptor> tensors_;
  std::map<std::array<int, 11>, PoolingDescriptor> poolings_;
};

CudaOps::CudaOps(int ordinal, MathMode math) : ordinal_(ordinal), math_(math) {
  cuda::use_device(ordinal_);
  // cuBLAS's recommended workspace (its documentation of cublasSetWorkspace): 32 MiB on Hopper
  // and later, 4 MiB before. Lanes provide it (Network::pass), so the handle never needs its own.
  int major = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, ordinal_));
  blas_workspace_bytes_ = (major >= 9 ? 32 : 4) * kMiB;
  cudaStream_t stream = nullptr;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  stream_ = StreamHandle(stream);
  cudnnHandle_t cudnn = nullptr;
  CUDNN_CHECK(cudnnCreate(&cudnn));
  cudnn_ = CudnnHandle(cudnn);
  CUDNN_CHECK(cudnnSetStream(cudnn, stream));
  cublasHandle_t cublas = nullptr;
  CUBLAS_CHECK(cublasCreate(&cublas));
  cublas_ = CublasHandle(cublas);
  CUBLAS_CHECK(cublasSetStream(cublas, stream));
  // Plain float32 GEMMs (no TF32) unless TF32 was asked for; scalars passed from the host.
  // cublasSetStream above reset the workspace to cuBLAS's own pool; set_blas_workspace replaces it.
  CUBLAS_CHECK(cublasSetMathMode(cublas, math_ == MathMode::kTf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH));
  CUBLAS_CHECK(cublasSetPointerMode(cublas, CUBLAS_POINTER_MODE_HOST));
}

CudaOps::~CudaOps() {
  // Let enqueued work finish before the handles and stream go (and before the caller frees the
  // memory it uses). Errors cannot be reported from a destructor.
  if (cudaSetDevice(ordinal_) == cudaSuccess) (void)cudaStreamSynchronize(stream_.get());
  (void)cudaGetLastError();
}

template <class Kernel, class... Args>
void CudaOps::launch(const char* name, std::int64_t count, Kernel kernel, Args... args) {
  if (count <= 0) return;
  kernel<<<grid_for(count), kThreads, 0, stream_.get()>>>(count, args...);
  cuda::check_cuda(cudaGetLastError(), name, __FILE__, __LINE__);
}

cudnnTensorDescriptor_t CudaOps::tensor(int n, int c, int h, int w) {
  const std::array<int, 4> key{n, c, h, w};
  auto it = tensors_.find(key);
  if (it != tensors_.end()) return it->second.get();
  cudnnTensorDescriptor_t desc = nullptr;
  CUDNN_CHECK(cudnnCreateTensorDescriptor(&desc));
  TensorDescriptor owner(desc);
  CUDNN_CHECK(cudnnSetTensor4dDescriptor(desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, c, h, w));
  tensors_.emplace(key, std::move(owner));
  return desc;
}

const ConvPlan& CudaOps::conv_plan(const ConvShape& cs) {
  check_conv(cs);
  return ConvPlanCache::of(ordinal_, math_).get(cs, cudnn_.get());
}

std::unique_ptr<ConvPlan> make_conv_plan(const ConvShape& cs, cudnnHandle_t handle, MathMode math) {
  const bool tensor_cores = math == MathMode::kTf32;
  auto plan = std::make_unique<ConvPlan>();
  const int p = cs.out_h(), q = cs.out_w();
  plan->x = make_tensor(cs.n, cs.c, cs.h, cs.w);
  plan->y = make_tensor(cs.n, cs.k, p, q);
  plan->bias = make_tensor(1, cs.k, 1, 1);
  const cudnnTensorDescriptor_t xd = plan->x.get(), yd = plan->y.get();

  cudnnFilterDescriptor_t filter = nullptr;
  CUDNN_CHECK(cudnnCreateFilterDescriptor(&filter));
  plan->w = FilterDescriptor(filter);
  CUDNN_CHECK(cudnnSetFilter4dDescriptor(filter, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, cs.k, cs.c, cs.r, cs.s));

  cudnnConvolutionDescriptor_t conv = nullptr;
  CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&conv));
  plan->conv = ConvolutionDescriptor(conv);
  CUDNN_CHECK(cudnnSetConvolution2dDescriptor(conv, cs.pad_h, cs.pad_w, cs.stride_h, cs.stride_w, 1, 1,
                                              CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
  // FP32: FMA only (with the default math type cuDNN may run float convolutions as TF32 on tensor
  // cores). TF32: tensor-core algorithms permitted, FMA ones still allowed where they are best.
  CUDNN_CHECK(cudnnSetConvolutionMathType(conv, tensor_cores ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH));

  int on = 0, ok = 0, op = 0, oq = 0;
  CUDNN_CHECK(cudnnGetConvolution2dForwardOutputDim(conv, xd, filter, &on, &ok, &op, &oq));
  SALUS_INVARIANT(on == cs.n && ok == cs.k && op == p && oq == q, "cuDNN's conv output shape is ConvShape's",
                  describe(cs) + ": cuDNN says " + std::to_string(on) + "x" + std::to_string(ok) + "x" +
                      std::to_string(op) + "x" + std::to_string(oq));
  {
    int max_count = 0;
    CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithmMaxCount(handle, &max_count));
    std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(static_cast<std::size_t>(std::max(max_count, 1)));
    int returned = 0;
    CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(handle, xd, filter, conv, yd, max_count, &returned,
                                                        perf.data()));
    const auto chosen = choose_algorithm(
        perf, returned, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM,
        [&](cudnnConvolutionFwdAlgo_t algo, std::size_t* bytes) {
          return cudnnGetConvolutionForwardWorkspaceSize(handle, xd, filter, conv, yd, algo, bytes);
        },
        "cudnnGetConvolutionForwardWorkspaceSize(IMPLICIT_GEMM)", tensor_cores);
    plan->fwd_algo = chosen.first;
    plan->fwd_bytes = chosen.second;
  }
  {
    int max_count = 0;
    CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(handle, &max_count));
    std::vector<cudnnConvolutionBwdDataAlgoPerf_t> perf(static_cast<std::size_t>(std::max(max_count, 1)));
    int returned = 0;
    CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(handle, filter, yd, conv, xd, max_count,
                                                             &returned, perf.data()));
    const auto chosen = choose_algorithm(
        perf, returned, CUDNN_CONVOLUTION_BWD_DATA_ALGO_0,
        [&](cudnnConvolutionBwdDataAlgo_t algo, std::size_t* bytes) {
          return cudnnGetConvolutionBackwardDataWorkspaceSize(handle, filter, yd, conv, xd, algo, bytes);
        },
        "cudnnGetConvolutionBackwardDataWorkspaceSize(ALGO_0)", tensor_cores);
    plan->bwd_data_algo = chosen.first;
    plan->bwd_data_bytes = chosen.second;
  }
  {
    int max_count = 0;
    CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(handle, &max_count));
    std::vector<cudnnConvolutionBwdFilterAlgoPerf_t> perf(static_cast<std::size_t>(std::max(max_count, 1)));
    int returned = 0;
    CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(handle, xd, yd, conv, filter, max_count,
                                                               &returned, perf.data()));
    const auto chosen = choose_algorithm(
        perf, returned, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0,
        [&](cudnnConvolutionBwdFilterAlgo_t algo, std::size_t* bytes) {
          return cudnnGetConvolutionBackwardFilterWorkspaceSize(handle, xd, yd, conv, filter, algo, bytes);
        },
        "cudnnGetConvolutionBackwardFilterWorkspaceSize(ALGO_0)", tensor_cores);
    plan->bwd_filter_algo = chosen.first;
    plan->bwd_filter_bytes = chosen.second;
  }
  return plan;
}

void CudaOps::require_workspace(const char* op, const ConvShape& cs, int algo, std::size_t need,
                                const void* workspace, Bytes workspace_bytes) const {
  if (need == 0) return;
  if (workspace != nullptr && workspace_bytes >= 0 && static_cast<std::size_t>(workspace_bytes) >= need) return;
  throw DeviceError(std::string(op) + ": cuDNN algorithm " + std::to_string(algo) + " needs a workspace of " +
                    std::to_string(need) + " bytes, given " +
                    (workspace == nullptr ? std::string("none") : std::to_string(workspace_bytes) + " bytes") +
                    " (size it with conv_workspace_bytes) for " + describe(cs) + " on " +
                    cuda::current_device_label());
}

cudnnPoolingDescriptor_t CudaOps::pooling(const PoolShape& ps) {
  check_pool(ps);
  SALUS_INVARIANT(ps.mode == PoolMode::kAverage, "cuDNN pooling is used for average pooling only", describe(ps));
  SALUS_INVARIANT(ps.pad_h < ps.window_h && ps.pad_w < ps.window_w,
                  "pooling padding is smaller than the window (cuDNN's requirement)", describe(ps));
  const std::array<int, 11> key{static_cast<int>(ps.mode), ps.n, ps.c, ps.h, ps.w, ps.window_h, ps.window_w,
                                ps.stride_h, ps.stride_w, ps.pad_h, ps.pad_w};
  auto it = poolings_.find(key);
  if (it != poolings_.end()) return it->second.get();
  cudnnPoolingDescriptor_t desc = nullptr;
  CUDNN_CHECK(cudnnCreatePoolingDescriptor(&desc));
  PoolingDescriptor owner(desc);
  CUDNN_CHECK(cudnnSetPooling2dDescriptor(desc, CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING, CUDNN_NOT_PROPAGATE_NAN,
                                          ps.window_h, ps.window_w, ps.pad_h, ps.pad_w, ps.stride_h, ps.stride_w));
  int on = 0, oc = 0, op = 0, oq = 0;
  CUDNN_CHECK(cudnnGetPooling2dForwardOutputDim(desc, tensor(ps.n, ps.c, ps.h, ps.w), &on, &oc, &op, &oq));
  SALUS_INVARIANT(on == ps.n && oc == ps.c && op == ps.out_h() && oq == ps.out_w(),
                  "cuDNN's pooling output shape is PoolShape's",
                  describe(ps) + ": cuDNN says " + std::to_string(on) + "x" + std::to_string(oc) + "x" +
                      std::to_string(op) + "x" + std::to_string(oq));
  poolings_.emplace(key, std::move(owner));
  return desc;
}

// --- Convolution ----------------------------------------------------------------------------

Bytes CudaOps::conv_workspace_bytes(const ConvShape& cs) {
  Entry entry(*this);
  const ConvPlan& plan = conv_plan(cs);
  return static_cast<Bytes>(std::max({plan.fwd_bytes, plan.bwd_data_bytes, plan.bwd_filter_bytes}));
}

void CudaOps::conv_forward(const ConvShape& cs, const float* x, const float* w, const float* bias, float* y,
                           void* workspace, Bytes workspace_bytes) {
  Entry entry(*this);
  const ConvPlan& plan = conv_plan(cs);
  require_workspace("conv_forward", cs, plan.fwd_algo, plan.fwd_bytes, workspace, workspace_bytes);
  const std::size_t size = workspace == nullptr ? 0 : static_cast<std::size_t>(workspace_bytes);
  const float one = 1.0f, zero = 0.0f;
  CUDNN_CHECK(cudnnConvolutionForward(cudnn_.get(), &one, plan.x.get(), x, plan.w.get(), w, plan.conv.get(), plan.fwd_algo,
                                      workspace, size, &zero, plan.y.get(), y));
  if (bias != nullptr) CUDNN_CHECK(cudnnAddTensor(cudnn_.get(), &one, plan.bias.get(), bias, &one, plan.y.get(), y));
}

void CudaOps::conv_backward_data(const ConvShape& cs, const float* w, const float* dy, float* dx, void* workspace,
                                 Bytes workspace_bytes) {
  Entry entry(*this);
  const ConvPlan& plan = conv_plan(cs);
  require_workspace("conv_backward_data", cs, plan.bwd_data_algo, plan.bwd_data_bytes, workspace, workspace_bytes);
  const std::size_t size = workspace == nullptr ? 0 : static_cast<std::size_t>(workspace_bytes);
  const float one = 1.0f, zero = 0.0f;
  CUDNN_CHECK(cudnnConvolutionBackwardData(cudnn_.get(), &one, plan.w.get(), w, plan.y.get(), dy, plan.conv.get(),
                                           plan.bwd_data_algo, workspace, size, &zero, plan.x.get(), dx));
}

void CudaOps::conv_backward_filter(const ConvShape& cs, const float* x, const float* dy, float* dw, float* dbias,
                                   void* workspace, Bytes workspace_bytes) {
  Entry entry(*this);
  const ConvPlan& plan = conv_plan(cs);
  require_workspace("conv_backward_filter", cs, plan.bwd_filter_algo, plan.bwd_filter_bytes, workspace,
                    workspace_bytes);
  const std::size_t size = workspace == nullptr ? 0 : static_cast<std::size_t>(workspace_bytes);
  const float one = 1.0f, zero = 0.0f;
  CUDNN_CHECK(cudnnConvolutionBackwardFilter(cudnn_.get(), &one, plan.x.get(), x, plan.y.get(), dy, plan.conv.get(),
                                             plan.bwd_filter_algo, workspace, size, &zero, plan.w.get(), dw));
  if (dbias != nullptr) {
    CUDNN_CHECK(cudnnConvolutionBackwardBias(cudnn_.get(), &one, plan.y.get(), dy, &zero, plan.bias.get(), dbias));
  }
}

// --- Batch normalisation --------------------------------------------------------------------
// cuDNN's spatial mode is ops.h's definition: exponentialAverageFactor = momentum, the running
// variance updated with the unbiased batch variance, resultSaveInvVariance = 1/sqrt(var + eps).
// (With one element per channel, n*h*w == 1, cuDNN's unbiased variance divides by zero where the
// CPU device falls back to the biased one.)

void CudaOps::batchnorm_forward_train(int n, int c, int h, int w, const float* x, const float* gamma,
                                      const float* beta, float* y, float* running_mean, float* running_var,
                                      float* save_mean, float* save_invstd, double momentum, double eps) {
  Entry entry(*this);
  SALUS_INVARIANT(n > 0 && c > 0 && h > 0 && w > 0, "batchnorm has elements",
                  std::to_string(n) + "x" + std::to_string(c) + "x" + std::to_string(h) + "x" + std::to_string(w));
  const cudnnTensorDescriptor_t xd = tensor(n, c, h, w);
  const cudnnTensorDescriptor_t bn = tensor(1, c, 1, 1);
  const float one = 1.0f, zero = 0.0f;
  CUDNN_CHECK(cudnnBatchNormalizationForwardTraining(cudnn_.get(), CUDNN_BATCHNORM_SPATIAL, &one, &zero, xd, x, xd,
                                                     y, bn, gamma, beta, momentum, running_mean, running_var, eps,
                                                     save_mean, save_invstd));
}

void CudaOps::batchnorm_forward_infer(int n, int c, int h, int w, const float* x, const float* gamma,
                                      const float* beta, const float* running_mean, const float* running_var,
                                      float* y, double eps) {
  Entry entry(*this);
  SALUS_INVARIANT(n > 0 && c > 0 && h > 0 && w > 0, "batchnorm has elements",
                  std::to_string(n) + "x" + std::to_string(c) + "x" + std::to_string(h) + "x" + std::to_string(w));
  const cudnnTensorDescriptor_t xd = tensor(n, c, h, w);
  const cudnnTensorDescriptor_t bn = tensor(1, c, 1, 1);
  const float one = 1.0f, zero = 0.0f;
  CUDNN_CHECK(cudnnBatchNormalizationForwardInference(cudnn_.get(), CUDNN_BATCHNORM_SPATIAL, &one, &zero, xd, x, xd,
                                                      y, bn, gamma, beta, running_mean, running_var, eps));
}

void CudaOps::batchnorm_backward(int n, int c, int h, int w, const float* x, const float* dy, const float* gamma,
                                 const float* save_mean, const float* save_invstd, float* dx, float* dgamma,
                                 float* dbeta, double eps) {
  Entry entry(*this);
  SALUS_INVARIANT(n > 0 && c > 0 && h > 0 && w > 0, "batchnorm has elements",
                  std::to_string(n) + "x" + std::to_string(c) + "x" + std::to_string(h) + "x" + std::to_string(w));
  const cudnnTensorDescriptor_t xd = tensor(n, c, h, w);
  const cudnnTensorDescriptor_t bn = tensor(1, c, 1, 1);
  const float one = 1.0f, zero = 0.0f;
  CUDNN_CHECK(cudnnBatchNormalizationBackward(cudnn_.get(), CUDNN_BATCHNORM_SPATIAL, &one, &zero, &one, &zero, xd, x,
                                              xd, dy, xd, dx, bn, gamma, dgamma, dbeta, eps, save_mean, save_invstd));
}

// --- Element-wise ---------------------------------------------------------------------------

void CudaOps::relu_forward(std::int64_t count, const float* x, float* y) {
  Entry entry(*this);
  launch("launch of relu_forward_kernel", count, relu_forward_kernel, x, y);
}

void CudaOps::relu_backward(std::int64_t count, const float* y, const float* dy, float* dx) {
  Entry entry(*this);
  launch("launch of relu_backward_kernel", count, relu_backward_kernel, y, dy, dx);
}

void CudaOps::add(std::int64_t count, const float* a, const float* b, float* y) {
  Entry entry(*this);
  launch("launch of add_kernel", count, add_kernel, a, b, y);
}

void CudaOps::accumulate(std::int64_t count, const float* src, float* dst) {
  Entry entry(*this);
  launch("launch of accumulate_kernel", count, accumulate_kernel, src, dst);
}

void CudaOps::fill(std::int64_t count, float* x, float value) {
  Entry entry(*this);
  launch("launch of fill_kernel", count, fill_kernel, x, value);
}

// --- Pooling --------------------------------------------------------------------------------

// Max pooling runs on this file's kernels: ops.h fixes which maximum takes the gradient on ties
// (the first in row-major order) and that padding is ignored, neither of which cuDNN promises.
// Average pooling runs on cuDNN (CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING is ops.h's rule).

void CudaOps::pool_forward(const PoolShape& ps, const float* x, float* y) {
  Entry entry(*this);
  if (ps.mode == PoolMode::kMax) {
    check_pool(ps);
    const std::int64_t count = static_cast<std::int64_t>(ps.n) * ps.c * ps.out_h() * ps.out_w();
    launch("launch of max_pool_forward_kernel", count, max_pool_forward_kernel, pool_dims(ps), x, y);
    return;
  }
  const cudnnPoolingDescriptor_t desc = pooling(ps);
  const float one = 1.0f, zero = 0.0f;
  CUDNN_CHECK(cudnnPoolingForward(cudnn_.get(), desc, &one, tensor(ps.n, ps.c, ps.h, ps.w), x, &zero,
                                  tensor(ps.n, ps.c, ps.out_h(), ps.out_w()), y));
}

void CudaOps::pool_backward(const PoolShape& ps, const float* x, const float* y, const float* dy, float* dx) {
  Entry entry(*this);
  if (ps.mode == PoolMode::kMax) {
    check_pool(ps);
    const std::int64_t count = static_cast<std::int64_t>(ps.n) * ps.c * ps.h * ps.w;
    launch("launch of max_pool_backward_kernel", count, max_pool_backward_kernel, pool_dims(ps), x, dy, dx);
    return;
  }
  const cudnnPoolingDescriptor_t desc = pooling(ps);
  const float one = 1.0f, zero = 0.0f;
  const cudnnTensorDescriptor_t xd = tensor(ps.n, ps.c, ps.h, ps.w);
  const cudnnTensorDescriptor_t yd = tensor(ps.n, ps.c, ps.out_h(), ps.out_w());
  CUDNN_CHECK(cudnnPoolingBackward(cudnn_.get(), desc, &one, yd, y, yd, dy, xd, x, &zero, xd, dx));
}

// --- Fully connected ------------------------------------------------------------------------
// cuBLAS is column-major: a row-major [rows][cols] matrix is its column-major [cols][rows]
// transpose. So y = x w^T (row-major) is y^T = w x^T (column-major), and so on below.

void CudaOps::fc_forward(int n, int in, int out, const float* x, const float* w, const float* b, float* y) {
  Entry entry(*this);
  SALUS_INVARIANT(n > 0 && in > 0 && out > 0, "fc has rows, inputs and outputs",
                  "n=" + std::to_string(n) + " in=" + std::to_string(in) + " out=" + std::to_string(out));
  const float one = 1.0f, zero = 0.0f;
  // y^T [out x n] = (w^T [in x out])^T * x^T [in x n]
  CUBLAS_CHECK(cublasSgemm(cublas_.get(), CUBLAS_OP_T, CUBLAS_OP_N, out, n, in, &one, w, in, x, in, &zero, y, out));
  if (b != nullptr) {
    launch("launch of add_row_bias_kernel", static_cast<std::int64_t>(n) * out, add_row_bias_kernel, out, b, y);
  }
}

void CudaOps::fc_backward(int n, int in, int out, const float* x, const float* w, const float* dy, float* dx,
                          float* dw, float* db) {
  Entry entry(*this);
  SALUS_INVARIANT(n > 0 && in > 0 && out > 0, "fc has rows, inputs and outputs",
                  "n=" + std::to_string(n) + " in=" + std::to_string(in) + " out=" + std::to_string(out));
  const float one = 1.0f, zero = 0.0f;
  if (dx != nullptr) {
    // dx^T [in x n] = w^T [in x out] * dy^T [out x n]
    CUBLAS_CHECK(
        cublasSgemm(cublas_.get(), CUBLAS_OP_N, CUBLAS_OP_N, in, n, out, &one, w, in, dy, out, &zero, dx, in));
  }
  // dw^T [in x out] = x^T [in x n] * (dy^T [out x n])^T
  CUBLAS_CHECK(cublasSgemm(cublas_.get(), CUBLAS_OP_N, CUBLAS_OP_T, in, out, n, &one, x, in, dy, out, &zero, dw, in));
  if (db != nullptr) {
    const unsigned blocks = static_cast<unsigned>((out + kThreads - 1) / kThreads);
    column_sum_kernel<<<blocks, kThreads, 0, stream_.get()>>>(n, out, dy, db);
    CUDA_CHECK_LAUNCH("column_sum_kernel");
  }
}

// --- Concatenation along channels -----------------------------------------------------------

void CudaOps::copy_channels(int n, int hw, const float* src, int src_c, int src_offset, float* dst, int dst_c,
                            int dst_offset, int channels, bool accumulate) {
  Entry entry(*this);
  SALUS_INVARIANT(src_offset >= 0 && dst_offset >= 0 && src_offset + channels <= src_c &&
                      dst_offset + channels <= dst_c,
                  "copy_channels stays inside both tensors",
                  "src " + std::to_string(src_offset) + "+" + std::to_string(channels) + " of " +
                      std::to_string(src_c) + ", dst " + std::to_string(dst_offset) + "+" +
                      std::to_string(channels) + " of " + std::to_string(dst_c));
  if (n <= 0 || hw <= 0 || channels <= 0) return;
  const std::int64_t block = static_cast<std::int64_t>(channels) * hw;
  launch("launch of copy_channels_kernel", static_cast<std::int64_t>(n) * block, copy_channels_kernel, block,
         static_cast<std::int64_t>(hw), src, src_c, src_offset, dst, dst_c, dst_offset, accumulate);
}

// --- Loss -----------------------------------------------------------------------------------

void CudaOps::softmax_xent_forward(int n, int classes, const float* logits, const std::int32_t* labels,
                                   float* probs, float* loss) {
  Entry entry(*this);
  SALUS_INVARIANT(n > 0 && classes > 0, "softmax_xent has rows and classes",
                  "n=" + std::to_string(n) + " classes=" + std::to_string(classes));
  // The loss first: it reads the logits, which the softmax may overwrite (probs == logits).
  softmax_xent_loss_kernel<<<1, kLossThreads, 0, stream_.get()>>>(n, classes, logits, labels, loss);
  CUDA_CHECK_LAUNCH("softmax_xent_loss_kernel");
  softmax_rows_kernel<<<static_cast<unsigned>(n), kSoftmaxThreads, 0, stream_.get()>>>(classes, logits, probs);
  CUDA_CHECK_LAUNCH("softmax_rows_kernel");
}

void CudaOps::softmax_xent_backward(int n, int classes, const float* probs, const std::int32_t* labels,
                                    float* dlogits) {
  Entry entry(*this);
  SALUS_INVARIANT(n > 0 && classes > 0, "softmax_xent has rows and classes",
                  "n=" + std::to_string(n) + " classes=" + std::to_string(classes));
  const float inv_n = 1.0f / static_cast<float>(n);
  launch("launch of softmax_xent_backward_kernel", static_cast<std::int64_t>(n) * classes,
         softmax_xent_backward_kernel, classes, inv_n, probs, labels, dlogits);
}

// --- Optimiser ------------------------------------------------------------------------------

void CudaOps::sgd_momentum(std::int64_t count, float* w, const float* dw, float* v, float lr, float momentum,
                           float weight_decay) {
  Entry entry(*this);
  launch("launch of sgd_momentum_kernel", count, sgd_momentum_kernel, w, dw, v, lr, momentum, weight_decay);
}

// --- Synthetic data -------------------------------------------------------------------------

void CudaOps::fill_uniform(std::int64_t count, float* x, float lo, float hi, std::uint64_t seed) {
  Entry entry(*this);
  launch("launch of fill_uniform_kernel", count, fill_uniform_kernel, x, lo, hi, seed);
}

void CudaOps::fill_labels(int n, std::int32_t* labels, int classes, std::uint64_t seed) {
  Entry entry(*this);
  SALUS_INVARIANT(classes > 0, "fill_labels has classes", "classes=" + std::to_string(classes));
  launch("launch of fill_labels_kernel", static_cast<std::int64_t>(n), fill_labels_kernel, labels, classes, seed);
}

// --- cuBLAS workspace and device timestamps -------------------------------------------------

void CudaOps::set_blas_workspace(void* workspace, Bytes bytes) {
  Entry entry(*this);
  SALUS_INVARIANT(bytes >= 0 && (workspace != nullptr || bytes == 0) &&
                      reinterpret_cast<std::uintptr_t>(workspace) % 256 == 0,
                  "a cuBLAS workspace is 256-byte aligned (cublasSetWorkspace's requirement)",
                  std::to_string(reinterpret_cast<std::uintptr_t>(workspace)) + ", " + std::to_string(bytes) + " bytes");
  CUBLAS_CHECK(cublasSetWorkspace(cublas_.get(), workspace, static_cast<std::size_t>(bytes)));
}

/// A CUDA event with timing, of one device.
class CudaMark final : public DeviceMark {
 public:
  CudaMark(int ordinal, cudaEvent_t event) : ordinal_(ordinal), event_(event) {}
  ~CudaMark() override {
    if (cudaSetDevice(ordinal_) == cudaSuccess) (void)cudaEventDestroy(event_);
    (void)cudaGetLastError();
  }
  CudaMark(const CudaMark&) = delete;
  CudaMark& operator=(const CudaMark&) = delete;
  int ordinal() const { return ordinal_; }
  cudaEvent_t event() const { return event_; }

 private:
  int ordinal_;
  cudaEvent_t event_;
};

const CudaMark& cuda_mark(const DeviceMark& mark, int ordinal) {
  const auto* m = dynamic_cast<const CudaMark*>(&mark);
  SALUS_INVARIANT(m != nullptr && m->ordinal() == ordinal, "a mark is recorded and read on its own CUDA device",
                  "cuda:" + std::to_string(ordinal));
  return *m;
}

std::unique_ptr<DeviceMark> CudaOps::create_mark() {
  Entry entry(*this);
  cudaEvent_t event = nullptr;
  CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDefault));  // timing enabled
  return std::make_unique<CudaMark>(ordinal_, event);
}

void CudaOps::record_mark(DeviceMark& mark) {
  Entry entry(*this);
  CUDA_CHECK(cudaEventRecord(cuda_mark(mark, ordinal_).event(), stream_.get()));
}

core::TimeNs CudaOps::mark_elapsed_ns(const DeviceMark& from, const DeviceMark& to) {
  Entry entry(*this);
  const cudaEvent_t a = cuda_mark(from, ordinal_).event(), b = cuda_mark(to, ordinal_).event();
  CUDA_CHECK(cudaEventSynchronize(b));
  CUDA_CHECK(cudaEventSynchronize(a));
  float ms = 0.0f;
  CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
  return static_cast<core::TimeNs>(std::llround(static_cast<double>(ms) * 1e6));
}

// --- Transfers and synchronisation ----------------------------------------------------------
// Enqueued on the context's stream, so a copy sees everything enqueued before it; then waited
// for, as ops.h promises synchronous copies.

void CudaOps::to_host(const void* device_src, void* host_dst, Bytes bytes) {
  Entry entry(*this);
  if (bytes <= 0) return;
  CUDA_CHECK(cudaMemcpyAsync(host_dst, device_src, static_cast<std::size_t>(bytes), cudaMemcpyDeviceToHost,
                             stream_.get()));
  CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
}

void CudaOps::to_device(const void* host_src, void* device_dst, Bytes bytes) {
  Entry entry(*this);
  if (bytes <= 0) return;
  CUDA_CHECK(cudaMemcpyAsync(device_dst, host_src, static_cast<std::size_t>(bytes), cudaMemcpyHostToDevice,
                             stream_.get()));
  CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
}

void CudaOps::synchronize() {
  Entry entry(*this);
  CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace

std::unique_ptr<Ops> make_cuda_ops(int ordinal, MathMode math) { return std::make_unique<CudaOps>(ordinal, math); }

}  // namespace salus::gpu
