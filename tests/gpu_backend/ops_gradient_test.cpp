// Backward passes of the CPU device checked against central finite differences of the scalar
// L = sum(y * g) for a fixed random g (so dL/dy = g), and the convolution forward checked against a
// direct seven-loop convolution. Inputs stay away from the kinks of relu and max pooling.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "gpu_backend/cpu_ops.h"

namespace {

using salus::gpu::ConvShape;
using salus::gpu::CpuOps;
using salus::gpu::PoolMode;
using salus::gpu::PoolShape;

std::vector<float> random_values(std::size_t count, float lo, float hi, std::uint64_t seed) {
  std::vector<float> v(count);
  for (std::size_t i = 0; i < count; ++i) v[i] = lo + (hi - lo) * salus::gpu::uniform01(seed, i);
  return v;
}

double dot(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) s += static_cast<double>(a[i]) * b[i];
  return s;
}

/// Compares `analytic` with the central difference (L(p + h) - L(p - h)) / 2h for every element of
/// `param`, within rel * max(|analytic|, |numeric|) + abs.
void check_gradient(const std::string& what, std::vector<float>& param, const std::vector<float>& analytic,
                    const std::function<double()>& loss, float h, double rel = 1e-2, double abs = 1e-3) {
  REQUIRE(param.size() == analytic.size());
  double largest = 0.0;
  for (std::size_t i = 0; i < param.size(); ++i) {
    const float saved = param[i];
    param[i] = saved + h;
    const double up = loss();
    param[i] = saved - h;
    const double down = loss();
    param[i] = saved;
    const double numeric = (up - down) / (2.0 * static_cast<double>(h));
    const double a = analytic[i];
    INFO(what, " element ", i, ": analytic ", a, ", numeric ", numeric);
    CHECK(std::abs(a - numeric) <= rel * std::max(std::abs(a), std::abs(numeric)) + abs);
    largest = std::max(largest, std::abs(a));
  }
  INFO(what);
  CHECK(largest > 10 * abs);  // the check compared gradients, not zeros
}

std::string describe(const ConvShape& cs) {
  return "conv n" + std::to_string(cs.n) + " c" + std::to_string(cs.c) + " " + std::to_string(cs.h) + "x" +
         std::to_string(cs.w) + " k" + std::to_string(cs.k) + " " + std::to_string(cs.r) + "x" +
         std::to_string(cs.s) + " pad " + std::to_string(cs.pad_h) + "," + std::to_string(cs.pad_w) + " stride " +
         std::to_string(cs.stride_h) + "," + std::to_string(cs.stride_w);
}

ConvShape conv_shape(int n, int c, int h, int w, int k, int r, int s, int pad_h, int pad_w, int stride_h,
                     int stride_w) {
  ConvShape cs;
  cs.n = n, cs.c = c, cs.h = h, cs.w = w, cs.k = k, cs.r = r, cs.s = s;
  cs.pad_h = pad_h, cs.pad_w = pad_w, cs.stride_h = stride_h, cs.stride_w = stride_w;
  return cs;
}

std::vector<ConvShape> conv_shapes() {
  return {
      conv_shape(2, 3, 5, 4, 2, 3, 2, 1, 0, 2, 1),  // non-square filter, k != c, mixed stride
      conv_shape(1, 2, 6, 6, 4, 3, 3, 1, 1, 2, 2),  // 3x3 stride 2 with padding
      conv_shape(3, 2, 4, 5, 3, 1, 1, 0, 0, 1, 1),  // 1x1 stride 1: no im2col
      conv_shape(2, 3, 5, 5, 2, 1, 1, 0, 0, 2, 2),  // 1x1 stride 2: im2col
      conv_shape(2, 4, 7, 5, 3, 2, 3, 0, 2, 3, 1),  // stride 3 rows, wide padding on columns
      conv_shape(1, 1, 3, 8, 5, 3, 5, 2, 2, 1, 1),  // padding as large as the filter allows
  };
}

// y[n][k][oh][ow] = bias[k] + sum over c, i, j of x[n][c][oh*sh - ph + i][ow*sw - pw + j] w[k][c][i][j].
std::vector<float> direct_conv(const ConvShape& cs, const std::vector<float>& x, const std::vector<float>& w,
                               const std::vector<float>& bias) {
  const int p = cs.out_h(), q = cs.out_w();
  std::vector<float> y(static_cast<std::size_t>(cs.n * cs.k * p * q));
  for (int n = 0; n < cs.n; ++n)
    for (int k = 0; k < cs.k; ++k)
      for (int oh = 0; oh < p; ++oh)
        for (int ow = 0; ow < q; ++ow) {
          double acc = bias[static_cast<std::size_t>(k)];
          for (int c = 0; c < cs.c; ++c)
            for (int i = 0; i < cs.r; ++i)
              for (int j = 0; j < cs.s; ++j) {
                const int ih = oh * cs.stride_h - cs.pad_h + i, iw = ow * cs.stride_w - cs.pad_w + j;
                if (ih < 0 || ih >= cs.h || iw < 0 || iw >= cs.w) continue;
                acc += static_cast<double>(x[static_cast<std::size_t>(((n * cs.c + c) * cs.h + ih) * cs.w + iw)]) *
                       w[static_cast<std::size_t>(((k * cs.c + c) * cs.r + i) * cs.s + j)];
              }
          y[static_cast<std::size_t>(((n * cs.k + k) * p + oh) * q + ow)] = static_cast<float>(acc);
        }
  return y;
}

struct ConvData {
  std::vector<float> x, w, bias, g, ws;
};

ConvData conv_data(CpuOps& ops, const ConvShape& cs) {
  ConvData d;
  d.x = random_values(static_cast<std::size_t>(cs.n * cs.c * cs.h * cs.w), -1, 1, 11);
  d.w = random_values(static_cast<std::size_t>(cs.k * cs.c * cs.r * cs.s), -1, 1, 12);
  d.bias = random_values(static_cast<std::size_t>(cs.k), -1, 1, 13);
  d.g = random_values(static_cast<std::size_t>(cs.n * cs.k * cs.out_h() * cs.out_w()), -1, 1, 14);
  const auto bytes = ops.conv_workspace_bytes(cs);
  CHECK(bytes == static_cast<std::int64_t>(cs.c) * cs.r * cs.s * cs.out_h() * cs.out_w() * 4);
  d.ws.resize(static_cast<std::size_t>(bytes / 4));
  return d;
}

TEST_CASE("conv forward matches a direct convolution") {
  CpuOps ops;
  for (const ConvShape& cs : conv_shapes()) {
    INFO(describe(cs));
    ConvData d = conv_data(ops, cs);
    std::vector<float> y(d.g.size());
    ops.conv_forward(cs, d.x.data(), d.w.data(), d.bias.data(), y.data(), d.ws.data(),
                     static_cast<std::int64_t>(d.ws.size() * 4));
    const std::vector<float> want = direct_conv(cs, d.x, d.w, d.bias);
    for (std::size_t i = 0; i < y.size(); ++i) {
      INFO("element ", i);
      CHECK(y[i] == doctest::Approx(want[i]).epsilon(1e-5).scale(1.0));
    }
  }
}

TEST_CASE("conv backward data, filter and bias match finite differences") {
  CpuOps ops;
  for (const ConvShape& cs : conv_shapes()) {
    INFO(describe(cs));
    ConvData d = conv_data(ops, cs);
    const auto ws_bytes = static_cast<std::int64_t>(d.ws.size() * 4);
    std::vector<float> y(d.g.size());
    auto loss = [&] {
      ops.conv_forward(cs, d.x.data(), d.w.data(), d.bias.data(), y.data(), d.ws.data(), ws_bytes);
      return dot(y, d.g);
    };
    std::vector<float> dx(d.x.size()), dw(d.w.size()), dbias(d.bias.size());
    ops.conv_backward_data(cs, d.w.data(), d.g.data(), dx.data(), d.ws.data(), ws_bytes);
    ops.conv_backward_filter(cs, d.x.data(), d.g.data(), dw.data(), dbias.data(), d.ws.data(), ws_bytes);
    // L is linear in each argument: a large step loses nothing to truncation.
    check_gradient("dx", d.x, dx, loss, 0.25f);
    check_gradient("dw", d.w, dw, loss, 0.25f);
    check_gradient("dbias", d.bias, dbias, loss, 0.25f);
  }
}

TEST_CASE("batchnorm backward matches finite differences") {
  CpuOps ops;
  struct Shape {
    int n, c, h, w;
  };
  for (const Shape s : {Shape{4, 3, 1, 1}, Shape{2, 2, 3, 2}, Shape{3, 1, 2, 5}}) {
    INFO("batchnorm ", s.n, "x", s.c, "x", s.h, "x", s.w);
    const auto count = static_cast<std::size_t>(s.n * s.c * s.h * s.w);
    const auto channels = static_cast<std::size_t>(s.c);
    std::vector<float> x = random_values(count, -2, 2, 21);
    std::vector<float> gamma = random_values(channels, 0.5f, 1.5f, 22);
    std::vector<float> beta = random_values(channels, -1, 1, 23);
    const std::vector<float> g = random_values(count, -1, 1, 24);
    std::vector<float> y(count), rmean(channels), rvar(channels), smean(channels), sinv(channels);
    const double eps = 1e-5;
    auto loss = [&] {
      ops.batchnorm_forward_train(s.n, s.c, s.h, s.w, x.data(), gamma.data(), beta.data(), y.data(), rmean.data(),
                                  rvar.data(), smean.data(), sinv.data(), 0.1, eps);
      return dot(y, g);
    };
    loss();
    std::vector<float> dx(count), dgamma(channels), dbeta(channels);
    ops.batchnorm_backward(s.n, s.c, s.h, s.w, x.data(), g.data(), gamma.data(), smean.data(), sinv.data(),
                           dx.data(), dgamma.data(), dbeta.data(), eps);
    check_gradient("dx", x, dx, loss, 1e-2f);
    check_gradient("dgamma", gamma, dgamma, loss, 1e-2f);
    check_gradient("dbeta", beta, dbeta, loss, 1e-2f);
  }
}

// Distinct values 0.1 apart in a shuffled order: a step of 0.01 never changes which one is largest.
std::vector<float> spaced_values(std::size_t count, std::uint64_t seed) {
  std::vector<float> v(count);
  std::iota(v.begin(), v.end(), 0.0f);
  for (std::size_t i = count; i > 1; --i) {
    const auto j = static_cast<std::size_t>(salus::gpu::uniform01(seed, i) * static_cast<float>(i));
    std::swap(v[i - 1], v[std::min(j, i - 1)]);
  }
  for (float& e : v) e = 0.1f * e - 1.0f;
  return v;
}

PoolShape pool_shape(PoolMode mode, int n, int c, int h, int w, int window, int stride, int pad) {
  PoolShape ps;
  ps.mode = mode;
  ps.n = n, ps.c = c, ps.h = h, ps.w = w;
  ps.window_h = ps.window_w = window;
  ps.stride_h = ps.stride_w = stride;
  ps.pad_h = ps.pad_w = pad;
  return ps;
}

TEST_CASE("max and average pooling backward match finite differences") {
  CpuOps ops;
  for (const PoolMode mode : {PoolMode::kMax, PoolMode::kAverage}) {
    for (const PoolShape& base : {pool_shape(mode, 2, 2, 4, 4, 2, 2, 0),  // disjoint windows
                                  pool_shape(mode, 1, 3, 5, 5, 3, 2, 1),  // overlapping, padded
                                  pool_shape(mode, 2, 1, 6, 4, 3, 1, 0)}) {
      PoolShape ps = base;
      ps.window_w = 2;  // non-square windows
      INFO((mode == PoolMode::kMax ? "max" : "average"), " pool ", ps.h, "x", ps.w, " window ", ps.window_h, "x",
           ps.window_w, " stride ", ps.stride_h, " pad ", ps.pad_h);
      const auto count = static_cast<std::size_t>(ps.n * ps.c * ps.h * ps.w);
      std::vector<float> x = spaced_values(count, 31);
      const std::vector<float> g = random_values(static_cast<std::size_t>(ps.n * ps.c * ps.out_h() * ps.out_w()),
                                                 -1, 1, 32);
      std::vector<float> y(g.size()), dx(count);
      auto loss = [&] {
        ops.pool_forward(ps, x.data(), y.data());
        return dot(y, g);
      };
      loss();
      ops.pool_backward(ps, x.data(), y.data(), g.data(), dx.data());
      check_gradient("dx", x, dx, loss, 1e-2f);
    }
  }
}

TEST_CASE("fully connected backward matches finite differences") {
  CpuOps ops;
  const int n = 3, in = 5, out = 4;
  std::vector<float> x = random_values(n * in, -1, 1, 41), w = random_values(out * in, -1, 1, 42);
  std::vector<float> b = random_values(out, -1, 1, 43);
  const std::vector<float> g = random_values(n * out, -1, 1, 44);
  std::vector<float> y(n * out), dx(n * in), dw(out * in), db(out);
  auto loss = [&] {
    ops.fc_forward(n, in, out, x.data(), w.data(), b.data(), y.data());
    return dot(y, g);
  };
  ops.fc_backward(n, in, out, x.data(), w.data(), g.data(), dx.data(), dw.data(), db.data());
  check_gradient("dx", x, dx, loss, 0.25f);
  check_gradient("dw", w, dw, loss, 0.25f);
  check_gradient("db", b, db, loss, 0.25f);
}

TEST_CASE("relu backward matches finite differences") {
  CpuOps ops;
  const std::size_t count = 40;
  // |x| >= 0.1: a step of 0.01 never crosses the kink at 0.
  std::vector<float> x = random_values(count, 0.1f, 1.0f, 51);
  for (std::size_t i = 0; i < count; i += 2) x[i] = -x[i];
  const std::vector<float> g = random_values(count, -1, 1, 52);
  std::vector<float> y(count), dx(count);
  auto loss = [&] {
    ops.relu_forward(static_cast<std::int64_t>(count), x.data(), y.data());
    return dot(y, g);
  };
  loss();
  ops.relu_backward(static_cast<std::int64_t>(count), y.data(), g.data(), dx.data());
  check_gradient("dx", x, dx, loss, 1e-2f);
}

TEST_CASE("softmax cross-entropy backward matches finite differences of the loss") {
  CpuOps ops;
  const int n = 4, classes = 5;
  std::vector<float> logits = random_values(n * classes, -3, 3, 61);
  const std::vector<std::int32_t> labels{0, 4, 2, 2};
  std::vector<float> probs(n * classes), dlogits(n * classes);
  float loss_value = 0.0f;
  auto loss = [&] {
    ops.softmax_xent_forward(n, classes, logits.data(), labels.data(), probs.data(), &loss_value);
    return static_cast<double>(loss_value);
  };
  loss();
  ops.softmax_xent_backward(n, classes, probs.data(), labels.data(), dlogits.data());
  check_gradient("dlogits", logits, dlogits, loss, 1e-2f, 1e-2, 1e-4);
}

}  // namespace
