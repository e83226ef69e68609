#include "gpu_backend/cpu_ops.h"
#include "gpu_backend/shapes.h"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "core/errors.h"

namespace salus::gpu {

namespace {

using Index = Eigen::Index;
using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MatrixMap = Eigen::Map<RowMatrix>;
using ConstMatrixMap = Eigen::Map<const RowMatrix>;
using ConstVectorMap = Eigen::Map<const Eigen::VectorXf>;
using ConstRowVectorMap = Eigen::Map<const Eigen::RowVectorXf>;
using ArrayMap = Eigen::Map<Eigen::ArrayXf>;
using ConstArrayMap = Eigen::Map<const Eigen::ArrayXf>;



Bytes im2col_bytes(const ConvShape& cs) {
  return static_cast<Bytes>(cs.c) * cs.r * cs.s * cs.out_h() * cs.out_w() * static_cast<Bytes>(sizeof(float));
}

// A 1x1 filter with stride 1 and no padding reads the input as it lies: the im2col matrix of a
// sample is the sample itself, so the copy is skipped.
bool is_pointwise(const ConvShape& cs) {
  return cs.r == 1 && cs.s == 1 && cs.stride_h == 1 && cs.stride_w == 1 && cs.pad_h == 0 && cs.pad_w == 0;
}

float* workspace_floats(const ConvShape& cs, void* workspace, Bytes workspace_bytes) {
  const Bytes need = im2col_bytes(cs);
  SALUS_INVARIANT(workspace_bytes >= need && (need == 0 || workspace != nullptr),
                  "conv workspace covers conv_workspace_bytes",
                  "have " + std::to_string(workspace_bytes) + " bytes, need " + std::to_string(need) + " for " +
                      describe(cs));
  return static_cast<float*>(workspace);
}

// col[(ci * r + i) * s + j][oh * q + ow] = x[ci][oh * stride_h - pad_h + i][ow * stride_w - pad_w + j],
// zero where that falls in the padding.
void im2col(const ConvShape& cs, const float* x, float* col) {
  const int p = cs.out_h(), q = cs.out_w();
  float* out = col;
  for (int ci = 0; ci < cs.c; ++ci) {
    const float* plane = x + static_cast<std::int64_t>(ci) * cs.h * cs.w;
    for (int i = 0; i < cs.r; ++i) {
      for (int j = 0; j < cs.s; ++j) {
        for (int oh = 0; oh < p; ++oh) {
          const int ih = oh * cs.stride_h - cs.pad_h + i;
          if (ih < 0 || ih >= cs.h) {
            std::fill(out, out + q, 0.0f);
            out += q;
            continue;
          }
          const float* row = plane + static_cast<std::int64_t>(ih) * cs.w;
          for (int ow = 0; ow < q; ++ow) {
            const int iw = ow * cs.stride_w - cs.pad_w + j;
            *out++ = (iw >= 0 && iw < cs.w) ? row[iw] : 0.0f;
          }
        }
      }
    }
  }
}

// The adjoint of im2col: adds every column entry back to the input position it was read from.
// dx must be zeroed by the caller.
void col2im(const ConvShape& cs, const float* col, float* dx) {
  const int p = cs.out_h(), q = cs.out_w();
  const float* in = col;
  for (int ci = 0; ci < cs.c; ++ci) {
    float* plane = dx + static_cast<std::int64_t>(ci) * cs.h * cs.w;
    for (int i = 0; i < cs.r; ++i) {
      for (int j = 0; j < cs.s; ++j) {
        for (int oh = 0; oh < p; ++oh) {
          const int ih = oh * cs.stride_h - cs.pad_h + i;
          if (ih < 0 || ih >= cs.h) {
            in += q;
            continue;
          }
          float* row = plane + static_cast<std::int64_t>(ih) * cs.w;
          for (int ow = 0; ow < q; ++ow, ++in) {
            const int iw = ow * cs.stride_w - cs.pad_w + j;
            if (iw >= 0 && iw < cs.w) row[iw] += *in;
          }
        }
      }
    }
  }
}


// The part of a pooling window that lies inside the input: rows [h0, h1), columns [w0, w1).
struct Window {
  int h0, h1, w0, w1;
};

Window window_at(const PoolShape& ps, int oh, int ow) {
  const int hs = oh * ps.stride_h - ps.pad_h, ws = ow * ps.stride_w - ps.pad_w;
  return {std::max(hs, 0), std::min(hs + ps.window_h, ps.h), std::max(ws, 0), std::min(ws + ps.window_w, ps.w)};
}

// Offset within the plane of the first maximum of the window in row-major order; -1 when the
// window holds no input element.
std::int64_t first_max(const float* plane, int w, const Window& win) {
  std::int64_t best = -1;
  float best_value = 0.0f;
  for (int ih = win.h0; ih < win.h1; ++ih) {
    for (int iw = win.w0; iw < win.w1; ++iw) {
      const std::int64_t at = static_cast<std::int64_t>(ih) * w + iw;
      if (best < 0 || plane[at] > best_value) {
        best = at;
        best_value = plane[at];
      }
    }
  }
  return best;
}

}  // namespace

float uniform_value(float lo, float hi, std::uint64_t seed, std::uint64_t i) {
  const float v = std::fma(hi - lo, uniform01(seed, i), lo);
  // u < 1, but the sum can still round up to hi; keep the range half-open.
  return (v >= hi && lo < hi) ? std::nextafter(hi, lo) : v;
}

// --- Convolution ---------------------------------------------------------------------------

Bytes CpuOps::conv_workspace_bytes(const ConvShape& cs) {
  check_conv(cs);
  return im2col_bytes(cs);
}

void CpuOps::conv_forward(const ConvShape& cs, const float* x, const float* w, const float* bias, float* y,
                          void* workspace, Bytes workspace_bytes) {
  check_conv(cs);
  float* col = workspace_floats(cs, workspace, workspace_bytes);
  const Index crs = static_cast<Index>(cs.c) * cs.r * cs.s;
  const Index pq = static_cast<Index>(cs.out_h()) * cs.out_w();
  const Index hw = static_cast<Index>(cs.h) * cs.w;
  const ConstMatrixMap wm(w, cs.k, crs);
  for (int i = 0; i < cs.n; ++i) {
    const float* xi = x + i * cs.c * hw;
    MatrixMap yi(y + i * cs.k * pq, cs.k, pq);
    if (is_pointwise(cs)) {
      yi.noalias() = wm * ConstMatrixMap(xi, crs, pq);
    } else {
      im2col(cs, xi, col);
      yi.noalias() = wm * ConstMatrixMap(col, crs, pq);
    }
    if (bias != nullptr) yi.colwise() += ConstVectorMap(bias, cs.k);
  }
}

void CpuOps::conv_backward_data(const ConvShape& cs, const float* w, const float* dy, float* dx, void* workspace,
                                Bytes workspace_bytes) {
  check_conv(cs);
  float* col = workspace_floats(cs, workspace, workspace_bytes);
  const Index crs = static_cast<Index>(cs.c) * cs.r * cs.s;
  const Index pq = static_cast<Index>(cs.out_h()) * cs.out_w();
  const Index hw = static_cast<Index>(cs.h) * cs.w;
  const ConstMatrixMap wm(w, cs.k, crs);
  for (int i = 0; i < cs.n; ++i) {
    const ConstMatrixMap dyi(dy + i * cs.k * pq, cs.k, pq);
    float* dxi = dx + i * cs.c * hw;
    if (is_pointwise(cs)) {
      MatrixMap(dxi, crs, pq).noalias() = wm.transpose() * dyi;
    } else {
      MatrixMap(col, crs, pq).noalias() = wm.transpose() * dyi;
      std::fill(dxi, dxi + cs.c * hw, 0.0f);
      col2im(cs, col, dxi);
    }
  }
}

void CpuOps::conv_backward_filter(const ConvShape& cs, const float* x, const float* dy, float* dw, float* dbias,
                                  void* workspace, Bytes workspace_bytes) {
  check_conv(cs);
  float* col = workspace_floats(cs, workspace, workspace_bytes);
  const Index crs = static_cast<Index>(cs.c) * cs.r * cs.s;
  const Index pq = static_cast<Index>(cs.out_h()) * cs.out_w();
  const Index hw = static_cast<Index>(cs.h) * cs.w;
  MatrixMap dwm(dw, cs.k, crs);
  dwm.setZero();
  if (dbias != nullptr) std::fill(dbias, dbias + cs.k, 0.0f);
  for (int i = 0; i < cs.n; ++i) {
    const float* xi = x + i * cs.c * hw;
    const ConstMatrixMap dyi(dy + i * cs.k * pq, cs.k, pq);
    if (is_pointwise(cs)) {
      dwm.noalias() += dyi * ConstMatrixMap(xi, crs, pq).transpose();
    } else {
      im2col(cs, xi, col);
      dwm.noalias() += dyi * ConstMatrixMap(col, crs, pq).transpose();
    }
    if (dbias != nullptr) Eigen::Map<Eigen::VectorXf>(dbias, cs.k) += dyi.rowwise().sum();
  }
}

// --- Batch normalisation --------------------------------------------------------------------
// Per-channel sums run in double: a channel can hold millions of values (n * h * w) and float
// sums would lose the small variances that matter most.

void CpuOps::batchnorm_forward_train(int n, int c, int h, int w, const float* x, const float* gamma,
                                     const float* beta, float* y, float* running_mean, float* running_var,
                                     float* save_mean, float* save_invstd, double momentum, double eps) {
  const std::int64_t hw = static_cast<std::int64_t>(h) * w;
  const std::int64_t m = n * hw;
  SALUS_INVARIANT(m > 0 && c > 0, "batchnorm has elements", "n*h*w=" + std::to_string(m));
  for (int ch = 0; ch < c; ++ch) {
    double sum = 0.0;
    for (int i = 0; i < n; ++i) {
      const float* p = x + (static_cast<std::int64_t>(i) * c + ch) * hw;
      for (std::int64_t j = 0; j < hw; ++j) sum += p[j];
    }
    const double mean = sum / static_cast<double>(m);
    double sq = 0.0;
    for (int i = 0; i < n; ++i) {
      const float* p = x + (static_cast<std::int64_t>(i) * c + ch) * hw;
      for (std::int64_t j = 0; j < hw; ++j) sq += (p[j] - mean) * (p[j] - mean);
    }
    const double var = sq / static_cast<double>(m);
    const double unbiased = m > 1 ? sq / static_cast<double>(m - 1) : var;
    const double invstd = 1.0 / std::sqrt(var + eps);
    const double scale = gamma[ch] * invstd;
    const double shift = beta[ch] - mean * scale;
    for (int i = 0; i < n; ++i) {
      const std::int64_t base = (static_cast<std::int64_t>(i) * c + ch) * hw;
      for (std::int64_t j = 0; j < hw; ++j) y[base + j] = static_cast<float>(x[base + j] * scale + shift);
    }
    running_mean[ch] = static_cast<float>((1.0 - momentum) * running_mean[ch] + momentum * mean);
    running_var[ch] = static_cast<float>((1.0 - momentum) * running_var[ch] + momentum * unbiased);
    save_mean[ch] = static_cast<float>(mean);
    save_invstd[ch] = static_cast<float>(invstd);
  }
}

void CpuOps::batchnorm_forward_infer(int n, int c, int h, int w, const float* x, const float* gamma,
                                     const float* beta, const float* running_mean, const float* running_var,
                                     float* y, double eps) {
  const std::int64_t hw = static_cast<std::int64_t>(h) * w;
  for (int ch = 0; ch < c; ++ch) {
    const double scale = gamma[ch] / std::sqrt(static_cast<double>(running_var[ch]) + eps);
    const double shift = beta[ch] - running_mean[ch] * scale;
    for (int i = 0; i < n; ++i) {
      const std::int64_t base = (static_cast<std::int64_t>(i) * c + ch) * hw;
      for (std::int64_t j = 0; j < hw; ++j) y[base + j] = static_cast<float>(x[base + j] * scale + shift);
    }
  }
}

void CpuOps::batchnorm_backward(int n, int c, int h, int w, const float* x, const float* dy, const float* gamma,
                                const float* save_mean, const float* save_invstd, float* dx, float* dgamma,
                                float* dbeta, double /*eps*/) {
  const std::int64_t hw = static_cast<std::int64_t>(h) * w;
  const std::int64_t m = n * hw;
  SALUS_INVARIANT(m > 0 && c > 0, "batchnorm has elements", "n*h*w=" + std::to_string(m));
  for (int ch = 0; ch < c; ++ch) {
    const double mean = save_mean[ch], invstd = save_invstd[ch];
    double sum_dy = 0.0, sum_dy_xhat = 0.0;
    for (int i = 0; i < n; ++i) {
      const std::int64_t base = (static_cast<std::int64_t>(i) * c + ch) * hw;
      for (std::int64_t j = 0; j < hw; ++j) {
        sum_dy += dy[base + j];
        sum_dy_xhat += dy[base + j] * (x[base + j] - mean) * invstd;
      }
    }
    // dx = gamma * invstd / m * (m * dy - sum(dy) - xhat * sum(dy * xhat))
    const double md = static_cast<double>(m);
    const double k = gamma[ch] * invstd / md;
    for (int i = 0; i < n; ++i) {
      const std::int64_t base = (static_cast<std::int64_t>(i) * c + ch) * hw;
      for (std::int64_t j = 0; j < hw; ++j) {
        const double xhat = (x[base + j] - mean) * invstd;
        dx[base + j] = static_cast<float>(k * (md * dy[base + j] - sum_dy - xhat * sum_dy_xhat));
      }
    }
    dgamma[ch] = static_cast<float>(sum_dy_xhat);
    dbeta[ch] = static_cast<float>(sum_dy);
  }
}

// --- Element-wise ---------------------------------------------------------------------------

void CpuOps::relu_forward(std::int64_t count, const float* x, float* y) {
  for (std::int64_t i = 0; i < count; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

void CpuOps::relu_backward(std::int64_t count, const float* y, const float* dy, float* dx) {
  for (std::int64_t i = 0; i < count; ++i) dx[i] = y[i] > 0.0f ? dy[i] : 0.0f;
}

void CpuOps::add(std::int64_t count, const float* a, const float* b, float* y) {
  ArrayMap(y, count) = ConstArrayMap(a, count) + ConstArrayMap(b, count);
}

void CpuOps::accumulate(std::int64_t count, const float* src, float* dst) {
  ArrayMap(dst, count) += ConstArrayMap(src, count);
}

void CpuOps::fill(std::int64_t count, float* x, float value) { std::fill(x, x + count, value); }

// --- Pooling --------------------------------------------------------------------------------

void CpuOps::pool_forward(const PoolShape& ps, const float* x, float* y) {
  check_pool(ps);
  const int p = ps.out_h(), q = ps.out_w();
  const std::int64_t hw = static_cast<std::int64_t>(ps.h) * ps.w;
  const float window_size = static_cast<float>(ps.window_h * ps.window_w);
  for (std::int64_t plane_index = 0; plane_index < static_cast<std::int64_t>(ps.n) * ps.c; ++plane_index) {
    const float* plane = x + plane_index * hw;
    float* out = y + plane_index * p * q;
    for (int oh = 0; oh < p; ++oh) {
      for (int ow = 0; ow < q; ++ow) {
        const Window win = window_at(ps, oh, ow);
        float v = 0.0f;
        if (ps.mode == PoolMode::kMax) {
          const std::int64_t at = first_max(plane, ps.w, win);
          v = at < 0 ? 0.0f : plane[at];
        } else {
          for (int ih = win.h0; ih < win.h1; ++ih)
            for (int iw = win.w0; iw < win.w1; ++iw) v += plane[static_cast<std::int64_t>(ih) * ps.w + iw];
          v /= window_size;
        }
        out[oh * q + ow] = v;
      }
    }
  }
}

void CpuOps::pool_backward(const PoolShape& ps, const float* x, const float* /*y*/, const float* dy, float* dx) {
  check_pool(ps);
  const int p = ps.out_h(), q = ps.out_w();
  const std::int64_t hw = static_cast<std::int64_t>(ps.h) * ps.w;
  const std::int64_t planes = static_cast<std::int64_t>(ps.n) * ps.c;
  std::fill(dx, dx + planes * hw, 0.0f);
  const float window_size = static_cast<float>(ps.window_h * ps.window_w);
  for (std::int64_t plane_index = 0; plane_index < planes; ++plane_index) {
    const float* plane = x + plane_index * hw;
    float* dplane = dx + plane_index * hw;
    const float* g = dy + plane_index * p * q;
    for (int oh = 0; oh < p; ++oh) {
      for (int ow = 0; ow < q; ++ow) {
        const Window win = window_at(ps, oh, ow);
        const float d = g[oh * q + ow];
        if (ps.mode == PoolMode::kMax) {
          // Recomputing the first maximum from x gives the same element as searching for y in
          // the window, without trusting float equality.
          const std::int64_t at = first_max(plane, ps.w, win);
          if (at >= 0) dplane[at] += d;
        } else {
          const float share = d / window_size;
          for (int ih = win.h0; ih < win.h1; ++ih)
            for (int iw = win.w0; iw < win.w1; ++iw) dplane[static_cast<std::int64_t>(ih) * ps.w + iw] += share;
        }
      }
    }
  }
}

// --- Fully connected ------------------------------------------------------------------------

void CpuOps::fc_forward(int n, int in, int out, const float* x, const float* w, const float* b, float* y) {
  MatrixMap ym(y, n, out);
  ym.noalias() = ConstMatrixMap(x, n, in) * ConstMatrixMap(w, out, in).transpose();
  if (b != nullptr) ym.rowwise() += ConstRowVectorMap(b, out);
}

void CpuOps::fc_backward(int n, int in, int out, const float* x, const float* w, const float* dy, float* dx,
                         float* dw, float* db) {
  const ConstMatrixMap dym(dy, n, out);
  if (dx != nullptr) MatrixMap(dx, n, in).noalias() = dym * ConstMatrixMap(w, out, in);
  MatrixMap(dw, out, in).noalias() = dym.transpose() * ConstMatrixMap(x, n, in);
  if (db != nullptr) Eigen::Map<Eigen::RowVectorXf>(db, out) = dym.colwise().sum();
}

// --- Concatenation along channels -----------------------------------------------------------

void CpuOps::copy_channels(int n, int hw, const float* src, int src_c, int src_offset, float* dst, int dst_c,
                           int dst_offset, int channels, bool accumulate) {
  SALUS_INVARIANT(src_offset >= 0 && dst_offset >= 0 && src_offset + channels <= src_c &&
                      dst_offset + channels <= dst_c,
                  "copy_channels stays inside both tensors",
                  "src " + std::to_string(src_offset) + "+" + std::to_string(channels) + " of " +
                      std::to_string(src_c) + ", dst " + std::to_string(dst_offset) + "+" +
                      std::to_string(channels) + " of " + std::to_string(dst_c));
  const std::int64_t block = static_cast<std::int64_t>(channels) * hw;
  for (int i = 0; i < n; ++i) {
    const float* s = src + (static_cast<std::int64_t>(i) * src_c + src_offset) * hw;
    float* d = dst + (static_cast<std::int64_t>(i) * dst_c + dst_offset) * hw;
    if (accumulate) {
      ArrayMap(d, block) += ConstArrayMap(s, block);
    } else {
      std::copy(s, s + block, d);
    }
  }
}

// --- Loss -----------------------------------------------------------------------------------

void CpuOps::softmax_xent_forward(int n, int classes, const float* logits, const std::int32_t* labels, float* probs,
                                  float* loss) {
  SALUS_INVARIANT(n > 0 && classes > 0, "softmax_xent has rows and classes",
                  "n=" + std::to_string(n) + " classes=" + std::to_string(classes));
  double total = 0.0;
  for (int i = 0; i < n; ++i) {
    const float* row = logits + static_cast<std::int64_t>(i) * classes;
    float* prow = probs + static_cast<std::int64_t>(i) * classes;
    const std::int32_t label = labels[i];
    SALUS_INVARIANT(label >= 0 && label < classes, "label is a class",
                    "row " + std::to_string(i) + " label " + std::to_string(label) + " of " +
                        std::to_string(classes));
    // Read before probs is written: probs may be the logits' own buffer.
    const float max = *std::max_element(row, row + classes);
    const double label_logit = row[label];
    double sum = 0.0;
    for (int j = 0; j < classes; ++j) {
      prow[j] = std::exp(row[j] - max);
      sum += prow[j];
    }
    const float inv = static_cast<float>(1.0 / sum);
    for (int j = 0; j < classes; ++j) prow[j] *= inv;
    // -log p[label] from the shifted logits, finite even where p[label] underflows to 0.
    total += std::log(sum) - (label_logit - max);
  }
  *loss = static_cast<float>(total / n);
}

void CpuOps::softmax_xent_backward(int n, int classes, const float* probs, const std::int32_t* labels,
                                   float* dlogits) {
  const float inv_n = 1.0f / static_cast<float>(n);
  for (int i = 0; i < n; ++i) {
    const std::int64_t base = static_cast<std::int64_t>(i) * classes;
    for (int j = 0; j < classes; ++j) {
      const float onehot = j == labels[i] ? 1.0f : 0.0f;
      dlogits[base + j] = (probs[base + j] - onehot) * inv_n;
    }
  }
}

// --- Optimiser ------------------------------------------------------------------------------

void CpuOps::sgd_momentum(std::int64_t count, float* w, const float* dw, float* v, float lr, float momentum,
                          float weight_decay) {
  for (std::int64_t i = 0; i < count; ++i) {
    v[i] = momentum * v[i] + (dw[i] + weight_decay * w[i]);
    w[i] -= lr * v[i];
  }
}

// --- Synthetic data -------------------------------------------------------------------------

void CpuOps::fill_uniform(std::int64_t count, float* x, float lo, float hi, std::uint64_t seed) {
  for (std::int64_t i = 0; i < count; ++i) x[i] = uniform_value(lo, hi, seed, static_cast<std::uint64_t>(i));
}

void CpuOps::fill_labels(int n, std::int32_t* labels, int classes, std::uint64_t seed) {
  SALUS_INVARIANT(classes > 0, "fill_labels has classes", "classes=" + std::to_string(classes));
  const float k = static_cast<float>(classes);
  for (int i = 0; i < n; ++i) {
    const float u = uniform01(seed, static_cast<std::uint64_t>(i));
    labels[i] = std::min(classes - 1, static_cast<std::int32_t>(std::floor(u * k)));
  }
}

// --- Transfers ------------------------------------------------------------------------------

// create_mark() gives none, so no mark can reach these.
void CpuOps::record_mark(DeviceMark& /*mark*/) {
  core::invariant_failed("marks come from this device's create_mark()", __FILE__, __LINE__, "the cpu device has none");
}

core::TimeNs CpuOps::mark_elapsed_ns(const DeviceMark& /*from*/, const DeviceMark& /*to*/) {
  core::invariant_failed("marks come from this device's create_mark()", __FILE__, __LINE__, "the cpu device has none");
}

void CpuOps::to_host(const void* device_src, void* host_dst, Bytes bytes) {
  if (bytes > 0) std::memcpy(host_dst, device_src, static_cast<std::size_t>(bytes));
}

void CpuOps::to_device(const void* host_src, void* device_dst, Bytes bytes) {
  if (bytes > 0) std::memcpy(device_dst, host_src, static_cast<std::size_t>(bytes));
}

}  // namespace salus::gpu
