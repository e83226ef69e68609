// The CPU device's operations on tiny inputs whose outputs are worked out by hand in the comments.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "gpu_backend/cpu_ops.h"

namespace {

using salus::gpu::ConvShape;
using salus::gpu::CpuOps;
using salus::gpu::PoolMode;
using salus::gpu::PoolShape;

void check_values(const std::vector<float>& got, const std::vector<float>& want, double tol = 1e-5) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("element ", i);
    CHECK(got[i] == doctest::Approx(want[i]).epsilon(tol));
  }
}

// x = [1 2 3; 4 5 6; 7 8 9], w = [1 2; 3 4], bias 0.5.
const std::vector<float> kConvX{1, 2, 3, 4, 5, 6, 7, 8, 9};
const std::vector<float> kConvW{1, 2, 3, 4};

ConvShape conv_3x3_2x2(int pad, int stride) {
  ConvShape cs;
  cs.h = cs.w = 3;
  cs.r = cs.s = 2;
  cs.pad_h = cs.pad_w = pad;
  cs.stride_h = cs.stride_w = stride;
  return cs;
}

TEST_CASE("conv: 3x3 input, 2x2 filter, no padding, stride 1") {
  CpuOps ops;
  const ConvShape cs = conv_3x3_2x2(0, 1);
  REQUIRE(cs.out_h() == 2);
  // c * r * s * p * q floats.
  CHECK(ops.conv_workspace_bytes(cs) == 1 * 2 * 2 * 2 * 2 * 4);
  std::vector<float> ws(4 * 4), y(4);
  const float bias = 0.5f;
  ops.conv_forward(cs, kConvX.data(), kConvW.data(), &bias, y.data(), ws.data(), 64);
  // 1*1+2*2+4*3+5*4 = 37, 2+6+15+24 = 47, 4+10+21+32 = 67, 5+12+24+36 = 77.
  check_values(y, {37.5f, 47.5f, 67.5f, 77.5f});
}

TEST_CASE("conv: 3x3 input, 2x2 filter, padding 1, stride 2: forward, data and filter gradients") {
  CpuOps ops;
  const ConvShape cs = conv_3x3_2x2(1, 2);
  REQUIRE(cs.out_h() == 2);
  REQUIRE(cs.out_w() == 2);
  const auto ws_bytes = ops.conv_workspace_bytes(cs);
  CHECK(ws_bytes == 16 * 4);
  std::vector<float> ws(16), y(4);
  const float bias = 0.5f;
  ops.conv_forward(cs, kConvX.data(), kConvW.data(), &bias, y.data(), ws.data(), ws_bytes);
  // Windows start at (-1,-1), (-1,1), (1,-1), (1,1):
  // 1*4; 2*3 + 3*4; 4*2 + 7*4; 5*1 + 6*2 + 8*3 + 9*4.
  check_values(y, {4.5f, 18.5f, 36.5f, 77.5f});

  // dy = 1 everywhere: each input collects the filter taps that read it.
  const std::vector<float> dy(4, 1.0f);
  std::vector<float> dx(9, -1.0f);
  ops.conv_backward_data(cs, kConvW.data(), dy.data(), dx.data(), ws.data(), ws_bytes);
  check_values(dx, {4, 3, 4, 2, 1, 2, 4, 3, 4});

  // dw[a][b] = sum over windows of x at (origin + a, origin + b); dbias = number of outputs.
  std::vector<float> dw(4, -1.0f);
  float dbias = -1.0f;
  ops.conv_backward_filter(cs, kConvX.data(), dy.data(), dw.data(), &dbias, ws.data(), ws_bytes);
  check_values(dw, {5, 10, 10, 20});
  CHECK(dbias == 4.0f);
}

TEST_CASE("conv: a workspace smaller than conv_workspace_bytes is refused") {
  CpuOps ops;
  const ConvShape cs = conv_3x3_2x2(1, 2);
  std::vector<float> ws(16), y(4);
  CHECK_THROWS_AS(ops.conv_forward(cs, kConvX.data(), kConvW.data(), nullptr, y.data(), ws.data(), 60),
                  std::logic_error);
}

// x = [1 3 2 2; 3 0 2 2; 5 6 7 8; 4 6 9 1], 2x2 windows, stride 2. Windows 0, 1 and 2 hold ties.
const std::vector<float> kPoolX{1, 3, 2, 2, 3, 0, 2, 2, 5, 6, 7, 8, 4, 6, 9, 1};

PoolShape pool_4x4(PoolMode mode) {
  PoolShape ps;
  ps.mode = mode;
  ps.h = ps.w = 4;
  return ps;
}

TEST_CASE("max pool: the first maximum in row-major order takes the gradient") {
  CpuOps ops;
  const PoolShape ps = pool_4x4(PoolMode::kMax);
  std::vector<float> y(4), dx(16, -1.0f);
  ops.pool_forward(ps, kPoolX.data(), y.data());
  check_values(y, {3, 2, 6, 9});
  const std::vector<float> dy{1, 2, 3, 4};
  ops.pool_backward(ps, kPoolX.data(), y.data(), dy.data(), dx.data());
  // Window 0: 3 at (0,1) before (1,0); window 1: all 2, first (0,2); window 2: 6 at (2,1) before (3,1).
  check_values(dx, {0, 1, 2, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 4, 0});
}

TEST_CASE("average pool: dy is spread evenly over the window") {
  CpuOps ops;
  const PoolShape ps = pool_4x4(PoolMode::kAverage);
  std::vector<float> y(4), dx(16, -1.0f);
  ops.pool_forward(ps, kPoolX.data(), y.data());
  check_values(y, {7.0f / 4, 8.0f / 4, 21.0f / 4, 25.0f / 4});
  const std::vector<float> dy{1, 2, 3, 4};
  ops.pool_backward(ps, kPoolX.data(), y.data(), dy.data(), dx.data());
  check_values(dx, {0.25f, 0.25f, 0.5f, 0.5f, 0.25f, 0.25f, 0.5f, 0.5f, 0.75f, 0.75f, 1, 1, 0.75f, 0.75f, 1, 1});
}

TEST_CASE("pooling with padding: max ignores the padding, average counts it as zeros") {
  CpuOps ops;
  // 3x3 input 1..9, 2x2 windows, stride 2, padding 1: windows start at (-1,-1), (-1,1), (1,-1), (1,1).
  PoolShape ps;
  ps.h = ps.w = 3;
  ps.pad_h = ps.pad_w = 1;
  REQUIRE(ps.out_h() == 2);
  std::vector<float> y(4);
  const std::vector<float> x{-1, -2, -3, -4, -5, -6, -7, -8, -9};
  ops.pool_forward(ps, x.data(), y.data());
  check_values(y, {-1, -2, -4, -5});  // all-negative inputs: a zero from the padding never wins
  ps.mode = PoolMode::kAverage;
  ops.pool_forward(ps, kConvX.data(), y.data());
  check_values(y, {1.0f / 4, 5.0f / 4, 11.0f / 4, 28.0f / 4});
  const std::vector<float> dy{4, 8, 12, 16};
  std::vector<float> dx(9);
  ops.pool_backward(ps, kConvX.data(), y.data(), dy.data(), dx.data());
  check_values(dx, {1, 2, 2, 3, 4, 4, 3, 4, 4});
}

TEST_CASE("relu forward and backward") {
  CpuOps ops;
  const std::vector<float> x{-1, 0, 2, -0.5f, 3};
  std::vector<float> y(5), dx(5);
  ops.relu_forward(5, x.data(), y.data());
  check_values(y, {0, 0, 2, 0, 3});
  const std::vector<float> dy{1, 2, 3, 4, 5};
  ops.relu_backward(5, y.data(), dy.data(), dx.data());
  check_values(dx, {0, 0, 3, 0, 5});
  // In place, as a layer may run it.
  std::vector<float> z = x;
  ops.relu_forward(5, z.data(), z.data());
  check_values(z, {0, 0, 2, 0, 3});
}

TEST_CASE("add, accumulate and fill") {
  CpuOps ops;
  const std::vector<float> a{1, 2, 3}, b{10, 20, 30};
  std::vector<float> y(3);
  ops.add(3, a.data(), b.data(), y.data());
  check_values(y, {11, 22, 33});
  ops.accumulate(3, a.data(), y.data());
  check_values(y, {12, 24, 36});
  ops.fill(3, y.data(), -2.5f);
  check_values(y, {-2.5f, -2.5f, -2.5f});
}

TEST_CASE("fully connected forward and backward") {
  CpuOps ops;
  // x [2][3], w [2][3] (out by in), b [2].
  const std::vector<float> x{1, 2, 3, 4, 5, 6}, w{1, 0, -1, 2, 1, 0}, b{0.5f, -1};
  std::vector<float> y(4);
  ops.fc_forward(2, 3, 2, x.data(), w.data(), b.data(), y.data());
  check_values(y, {-1.5f, 3, -1.5f, 12});
  const std::vector<float> dy{1, 0, 0, 1};
  std::vector<float> dx(6), dw(6), db(2);
  ops.fc_backward(2, 3, 2, x.data(), w.data(), dy.data(), dx.data(), dw.data(), db.data());
  check_values(dx, {1, 0, -1, 2, 1, 0});  // dy * w
  check_values(dw, {1, 2, 3, 4, 5, 6});   // dy^T * x
  check_values(db, {1, 1});
  // The first layer of a network has no dx to compute.
  std::vector<float> dw2(6);
  const std::vector<float> dy2{1, 2, 3, 4};
  ops.fc_backward(2, 3, 2, x.data(), w.data(), dy2.data(), nullptr, dw2.data(), db.data());
  check_values(dw2, {13, 17, 21, 18, 24, 30});
  check_values(db, {4, 6});
}

TEST_CASE("softmax cross-entropy with known logits") {
  CpuOps ops;
  SUBCASE("zero logits give uniform probabilities and loss log(classes)") {
    const std::vector<float> logits(8, 0.0f);
    const std::vector<std::int32_t> labels{0, 3};
    std::vector<float> probs(8), dlogits(8);
    float loss = -1.0f;
    ops.softmax_xent_forward(2, 4, logits.data(), labels.data(), probs.data(), &loss);
    check_values(probs, std::vector<float>(8, 0.25f));
    CHECK(loss == doctest::Approx(std::log(4.0)).epsilon(1e-6));
    ops.softmax_xent_backward(2, 4, probs.data(), labels.data(), dlogits.data());
    // (p - onehot) / n
    check_values(dlogits, {-0.375f, 0.125f, 0.125f, 0.125f, 0.125f, 0.125f, 0.125f, -0.375f});
  }
  SUBCASE("logits log(1..4) give probabilities 0.1..0.4") {
    const std::vector<float> logits{0, std::log(2.0f), std::log(3.0f), std::log(4.0f)};
    const std::int32_t label = 2;
    std::vector<float> probs(4);
    float loss = -1.0f;
    ops.softmax_xent_forward(1, 4, logits.data(), &label, probs.data(), &loss);
    check_values(probs, {0.1f, 0.2f, 0.3f, 0.4f});
    CHECK(loss == doctest::Approx(-std::log(0.3)).epsilon(1e-6));
  }
  SUBCASE("large logits stay finite") {
    const std::vector<float> logits{1000, 0, 0, 1000};
    const std::vector<std::int32_t> labels{0, 0};
    std::vector<float> probs(4);
    float loss = -1.0f;
    ops.softmax_xent_forward(2, 2, logits.data(), labels.data(), probs.data(), &loss);
    check_values(probs, {1, 0, 0, 1});
    // Row 0 is right (loss 0); row 1 puts the label 1000 below the winner.
    CHECK(loss == doctest::Approx(500.0).epsilon(1e-6));
  }
  SUBCASE("probs may overwrite the logits") {
    std::vector<float> buffer{0, std::log(2.0f), std::log(3.0f), std::log(4.0f)};
    const std::int32_t label = 3;
    float loss = -1.0f;
    ops.softmax_xent_forward(1, 4, buffer.data(), &label, buffer.data(), &loss);
    check_values(buffer, {0.1f, 0.2f, 0.3f, 0.4f});
    CHECK(loss == doctest::Approx(-std::log(0.4)).epsilon(1e-6));
  }
}

TEST_CASE("sgd with momentum and weight decay: two steps by hand") {
  CpuOps ops;
  std::vector<float> w{1.0f, -2.0f}, v{0.0f, 0.0f};
  const std::vector<float> dw{0.5f, 0.0f};
  ops.sgd_momentum(2, w.data(), dw.data(), v.data(), 0.1f, 0.9f, 0.01f);
  // v = 0.5 + 0.01 * 1 = 0.51, w = 1 - 0.051; v = 0 + 0.01 * -2 = -0.02, w = -2 + 0.002.
  check_values(v, {0.51f, -0.02f});
  check_values(w, {0.949f, -1.998f});
  ops.sgd_momentum(2, w.data(), dw.data(), v.data(), 0.1f, 0.9f, 0.01f);
  // v = 0.9 * 0.51 + 0.5 + 0.00949 = 0.96849, w = 0.949 - 0.096849;
  // v = 0.9 * -0.02 - 0.01998 = -0.03798, w = -1.998 + 0.003798.
  check_values(v, {0.96849f, -0.03798f});
  check_values(w, {0.852151f, -1.994202f});
}

TEST_CASE("copy_channels: concat forward, split backward, accumulate") {
  CpuOps ops;
  // src: 2 samples x 3 channels x hw 2; value = 100 * sample + 10 * channel + position.
  std::vector<float> src(12);
  for (int i = 0; i < 2; ++i)
    for (int c = 0; c < 3; ++c)
      for (int j = 0; j < 2; ++j) src[static_cast<std::size_t>((i * 3 + c) * 2 + j)] = 100.0f * i + 10.0f * c + j;
  // Channels 1..2 of src into channels 2..3 of a 4-channel dst.
  std::vector<float> dst(16, -1.0f);
  ops.copy_channels(2, 2, src.data(), 3, 1, dst.data(), 4, 2, 2, false);
  check_values(dst, {-1, -1, -1, -1, 10, 11, 20, 21, -1, -1, -1, -1, 110, 111, 120, 121});
  ops.copy_channels(2, 2, src.data(), 3, 1, dst.data(), 4, 2, 2, true);
  check_values(dst, {-1, -1, -1, -1, 20, 22, 40, 42, -1, -1, -1, -1, 220, 222, 240, 242});
  // Backward: split dst's channels 2..3 back into a 2-channel gradient.
  std::vector<float> back(8, 7.0f);
  ops.copy_channels(2, 2, dst.data(), 4, 2, back.data(), 2, 0, 2, false);
  check_values(back, {20, 22, 40, 42, 220, 222, 240, 242});
  CHECK_THROWS_AS(ops.copy_channels(2, 2, src.data(), 3, 2, dst.data(), 4, 0, 2, false), std::logic_error);
}

TEST_CASE("batchnorm forward on a tiny tensor") {
  CpuOps ops;
  // n=2, c=2, h=1, w=2. Channel 0 holds 1, 3, 5, 7 (mean 4, biased variance 5, unbiased 20/3);
  // channel 1 holds 2 everywhere (variance 0).
  const std::vector<float> x{1, 3, 2, 2, 5, 7, 2, 2};
  const std::vector<float> gamma{2, 3}, beta{1, -1};
  std::vector<float> rmean{0, 0}, rvar{1, 1}, smean(2), sinv(2), y(8);
  const double eps = 1e-5;
  ops.batchnorm_forward_train(2, 2, 1, 2, x.data(), gamma.data(), beta.data(), y.data(), rmean.data(), rvar.data(),
                              smean.data(), sinv.data(), 0.1, eps);
  const float inv0 = static_cast<float>(1.0 / std::sqrt(5.0 + eps));
  check_values(smean, {4, 2});
  check_values(sinv, {inv0, static_cast<float>(1.0 / std::sqrt(eps))});
  check_values(y, {1 - 6 * inv0, 1 - 2 * inv0, -1, -1, 1 + 2 * inv0, 1 + 6 * inv0, -1, -1});
  check_values(rmean, {0.4f, 0.2f});
  check_values(rvar, {0.9f + 0.1f * 20.0f / 3.0f, 0.9f});

  // Inference normalises with the running statistics: channel 0 mean 0.4, variance 1.5666...
  // (a large eps, so that leaving it out would show).
  const double eps_infer = 0.1;
  ops.batchnorm_forward_infer(2, 2, 1, 2, x.data(), gamma.data(), beta.data(), rmean.data(), rvar.data(), y.data(),
                              eps_infer);
  const double s0 = 2.0 / std::sqrt(0.9 + 0.1 * 20.0 / 3.0 + eps_infer), s1 = 3.0 / std::sqrt(0.9 + eps_infer);
  std::vector<float> want(8);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) {
      const auto a = static_cast<std::size_t>(i * 4 + j), b = a + 2;
      want[a] = static_cast<float>((x[a] - 0.4) * s0 + 1);
      want[b] = static_cast<float>((x[b] - 0.2) * s1 - 1);
    }
  check_values(y, want);
}

}  // namespace
