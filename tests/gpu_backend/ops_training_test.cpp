// Training is real: a two-layer perceptron built from the CPU device's operations learns a fixed
// random batch, and two runs from the same seeds produce the same losses bit for bit.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "gpu_backend/cpu_ops.h"

namespace {

using salus::gpu::CpuOps;

/// fc(in → hidden), relu, fc(hidden → classes), softmax cross-entropy; sgd with momentum.
std::vector<float> train_mlp(int steps) {
  CpuOps ops;
  const int n = 32, in = 8, hidden = 16, classes = 4;
  std::vector<float> x(n * in), w1(hidden * in), b1(hidden), w2(classes * hidden), b2(classes);
  std::vector<std::int32_t> labels(n);
  ops.fill_uniform(n * in, x.data(), -1, 1, 1);
  ops.fill_labels(n, labels.data(), classes, 2);
  const float s1 = 1.0f / std::sqrt(static_cast<float>(in)), s2 = 1.0f / std::sqrt(static_cast<float>(hidden));
  ops.fill_uniform(hidden * in, w1.data(), -s1, s1, 3);
  ops.fill_uniform(classes * hidden, w2.data(), -s2, s2, 4);
  ops.fill(hidden, b1.data(), 0.0f);
  ops.fill(classes, b2.data(), 0.0f);

  std::vector<float> h(n * hidden), logits(n * classes), probs(n * classes), dlogits(n * classes), dh(n * hidden);
  std::vector<float> dw1(w1.size()), db1(b1.size()), dw2(w2.size()), db2(b2.size());
  std::vector<float> vw1(w1.size()), vb1(b1.size()), vw2(w2.size()), vb2(b2.size());
  std::vector<float> losses;
  for (int step = 0; step < steps; ++step) {
    float loss = 0.0f;
    ops.fc_forward(n, in, hidden, x.data(), w1.data(), b1.data(), h.data());
    ops.relu_forward(n * hidden, h.data(), h.data());
    ops.fc_forward(n, hidden, classes, h.data(), w2.data(), b2.data(), logits.data());
    ops.softmax_xent_forward(n, classes, logits.data(), labels.data(), probs.data(), &loss);
    losses.push_back(loss);

    ops.softmax_xent_backward(n, classes, probs.data(), labels.data(), dlogits.data());
    ops.fc_backward(n, hidden, classes, h.data(), w2.data(), dlogits.data(), dh.data(), dw2.data(), db2.data());
    ops.relu_backward(n * hidden, h.data(), dh.data(), dh.data());
    ops.fc_backward(n, in, hidden, x.data(), w1.data(), dh.data(), nullptr, dw1.data(), db1.data());

    const float lr = 0.1f, momentum = 0.9f, decay = 1e-4f;
    ops.sgd_momentum(static_cast<std::int64_t>(w1.size()), w1.data(), dw1.data(), vw1.data(), lr, momentum, decay);
    ops.sgd_momentum(static_cast<std::int64_t>(b1.size()), b1.data(), db1.data(), vb1.data(), lr, momentum, 0.0f);
    ops.sgd_momentum(static_cast<std::int64_t>(w2.size()), w2.data(), dw2.data(), vw2.data(), lr, momentum, decay);
    ops.sgd_momentum(static_cast<std::int64_t>(b2.size()), b2.data(), db2.data(), vb2.data(), lr, momentum, 0.0f);
  }
  ops.synchronize();
  return losses;
}

TEST_CASE("a two-layer perceptron trained with sgd_momentum halves its loss in 50 steps") {
  const std::vector<float> losses = train_mlp(50);
  INFO("first loss ", losses.front(), ", last loss ", losses.back());
  // Small random weights start near chance: log(4) = 1.386.
  CHECK(losses.front() == doctest::Approx(std::log(4.0)).epsilon(0.1));
  CHECK(losses.back() < 0.5f * losses.front());
  for (const float l : losses) CHECK(std::isfinite(l));
}

TEST_CASE("training is deterministic: the same seeds give the same losses bit for bit") {
  CHECK(train_mlp(10) == train_mlp(10));
}

}  // namespace
