// The real backend's models: names, parameter counts of the published architectures, the paper's
// persistent/ephemeral split, real training on the CPU device, and the ephemeral size being
// exactly what an iteration takes from its lane.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/errors.h"
#include "core/units.h"
#include "gpu_backend/device.h"
#include "gpu_backend/memory_pool.h"
#include "gpu_backend/model.h"

namespace {

using salus::core::Bytes;
using namespace salus::gpu;

constexpr Bytes kFloat = 4;

/// The persistent state as model.h lists it (weights, gradients, momentum, batch-norm running
/// statistics, batch, labels, loss), each array aligned to 256 bytes.
Bytes expected_persistent(std::int64_t params, std::int64_t stats, std::int64_t input_count, int batch) {
  return 3 * align_up(params * kFloat) + align_up(stats * kFloat) + align_up(input_count * kFloat) +
         align_up(static_cast<Bytes>(batch) * 4) + align_up(kFloat);
}

/// A network bound in the pool's persistent region [0, P), with its lane right above it.
struct Bound {
  std::unique_ptr<Device> device = make_cpu_device();
  std::unique_ptr<Ops> ops = device->create_ops();
  std::unique_ptr<Network> net;
  Bytes persistent = 0, ephemeral = 0;
  std::unique_ptr<MemoryPool> pool;

  explicit Bound(const std::string& workload, std::uint64_t seed = 7) : net(build_model(workload)) {
    persistent = net->persistent_bytes();
    ephemeral = net->ephemeral_bytes(*ops, true);
    pool = std::make_unique<MemoryPool>(*device, persistent + ephemeral);
    net->bind(*ops, pool->base(), seed);
  }
  Arena lane(Bytes size) const { return pool->region(persistent, size); }
};

std::vector<float> train(const std::string& workload, int steps, float learning_rate) {
  Bound b(workload);
  TrainConfig cfg;
  cfg.learning_rate = learning_rate;
  std::vector<float> losses;
  for (int i = 0; i < steps; ++i) {
    Arena lane = b.lane(b.ephemeral);
    losses.push_back(b.net->train_step(*b.ops, lane, cfg, true));
  }
  return losses;
}

}  // namespace

TEST_CASE("build_model parses <model>_<batch> for every model") {
  for (const std::string& m : model_names()) {
    CAPTURE(m);
    for (int batch : {1, 25, 64}) {
      const std::string w = m + "_" + std::to_string(batch);
      CHECK(is_model(w));
      // The big ImageNet models are built (shapes only, nothing allocated) quickly.
      const auto net = build_model(w);
      CHECK(net->batch() == batch);
      CHECK(net->parameters() > 0);
    }
  }
  CHECK(build_model("lenet_32")->dims(0).n == 32);
  CHECK(build_model("resnet50_25")->batch() == 25);
  CHECK(build_model("mlp_64")->batch() == 64);
}

TEST_CASE("model_names lists the eleven models in name order") {
  CHECK(model_names() == std::vector<std::string>{"alexnet", "googlenet", "lenet", "mlp", "overfeat", "resnet101",
                                                  "resnet152", "resnet50", "vgg11", "vgg16", "vgg19"});
}

TEST_CASE("unknown or malformed workload names are input errors listing the valid models") {
  const std::string valid =
      " (valid: <model>_<batch> with model one of alexnet, googlenet, lenet, mlp, overfeat, resnet101, resnet152, "
      "resnet50, vgg11, vgg16, vgg19)";
  for (const std::string w : {"inception3_25", "lenet", "lenet_", "lenet_0", "lenet_3x", "_32", "", "LeNet_32",
                              "lenet_32_infer", "lenet_1234567", "resnet50-25"}) {
    CAPTURE(w);
    CHECK_FALSE(is_model(w));
    std::string message;
    try {
      build_model(w);
    } catch (const salus::core::InputError& e) {
      message = e.what();
    }
    CHECK(message == "no real model for workload '" + w + "'" + valid);
  }
}

TEST_CASE("parameter counts match the published architectures") {
  // LeNet-5 (conv 6@5x5 pad 2, conv 16@5x5, fc 120, 84, 10): 61,706.
  CHECK(build_model("lenet_32")->parameters() == 61'706);
  // MLP 784-512-256-10 with biases.
  CHECK(build_model("mlp_64")->parameters() == 784 * 512 + 512 + 512 * 256 + 256 + 256 * 10 + 10);
  // The zoo's tf_cnn_benchmarks networks (workloads/) classify 1001 classes: the published
  // 1000-class counts plus one row of the last layer (4096 + 1 for alexnet and the VGGs).
  // tf_cnn_benchmarks AlexNet (227x227, 64-192-384-384-256) and the VGGs: every layer has a bias.
  CHECK(build_model("alexnet_25")->parameters() == 61'842'345);
  CHECK(build_model("vgg16_25")->parameters() == 138'357'544 + 4097);
  CHECK(build_model("vgg11_25")->parameters() == 132'863'336 + 4097);
  CHECK(build_model("vgg19_25")->parameters() == 143'667'240 + 4097);
  // ResNet-50's published 25,557,032 counts convolutions without bias (batch norm follows), as the
  // zoo describes them; the backend's convolution always carries a bias, which adds one per output
  // channel of each of them: stem 64; per stage blocks x (w + w + 4w) + a 4w projection: 1408 +
  // 3584 + 10240 + 11264. The 1001st class adds 2048 + 1.
  CHECK(build_model("resnet50_25")->parameters() == 25'557'032 + 2049 + 64 + 1408 + 3584 + 10240 + 11264);
  // The parameter count does not depend on the batch.
  CHECK(build_model("resnet50_1")->parameters() == build_model("resnet50_75")->parameters());
}

TEST_CASE("persistent_bytes is 3 x params x 4 B plus statistics, batch, labels and loss, aligned") {
  SUBCASE("lenet_32 (no batch norm)") {
    const auto net = build_model("lenet_32");
    // Every weight and bias sub-buffer starts on a 256-byte boundary (64 floats): conv1 150 -> 192,
    // 6 -> 64; conv2 2400 -> 2432, 16 -> 64; fc 48000, 120 -> 128; fc 10080 -> 10112, 84 -> 128;
    // fc 840 -> 896, 10 -> 64: 62,080 floats for 61,706 parameters.
    CHECK(net->parameters() == 61'706);
    CHECK(net->parameter_floats() == 62'080);
    CHECK(net->persistent_bytes() == expected_persistent(62'080, 0, 32 * 28 * 28, 32));
    // By hand: 3 x 248,320 (62,080 x 4, a whole number of 256-byte units) + 100,352 + 256 + 256.
    CHECK(net->persistent_bytes() == 845'824);
  }
  SUBCASE("mlp_64") {
    const auto net = build_model("mlp_64");
    // 784x512 + 512, 512x256 + 256, 256x10 + 10 -> 64: only the last bias is padded (54 floats).
    CHECK(net->parameter_floats() == net->parameters() + 54);
    CHECK(net->persistent_bytes() == expected_persistent(net->parameter_floats(), 0, 64 * 28 * 28, 64));
  }
  SUBCASE("resnet50_25 (batch norm: running mean and variance, as many floats as gamma and beta)") {
    const auto net = build_model("resnet50_25");
    const std::int64_t params = net->parameter_floats();
    // Batch-norm channels: 64 in the stem, then per stage blocks x (w + w + 4w) + 4w.
    const std::int64_t bn_channels = 64 + 1408 + 3584 + 10240 + 11264;
    const std::int64_t stats = 2 * bn_channels;
    CHECK(net->persistent_bytes() == expected_persistent(params, stats, 25LL * 3 * 224 * 224, 25));
    const Bytes unpadded = (3 * net->parameters() + stats + 25LL * 3 * 224 * 224 + 25 + 1) * 4;
    CHECK(net->persistent_bytes() >= unpadded);
    // Padding: under 64 floats per sub-buffer of each of the three arrays (2 per layer with
    // weights), plus the rounding of the five arrays after them.
    CHECK(net->parameter_floats() - net->parameters() < 64 * 2 * 160);
    CHECK(net->persistent_bytes() < unpadded + 3 * 4 * (net->parameter_floats() - net->parameters()) + 7 * kAlignment);
  }
}

TEST_CASE("training needs more ephemeral memory than inference, and more with a larger batch") {
  auto device = make_cpu_device();
  auto ops = device->create_ops();
  for (const std::string w : {"lenet_32", "mlp_64", "resnet50_25", "googlenet_25", "alexnet_25"}) {
    CAPTURE(w);
    const auto net = build_model(w);
    const Bytes train = net->ephemeral_bytes(*ops, true);
    const Bytes infer = net->ephemeral_bytes(*ops, false);
    CHECK(infer > 0);
    CHECK(train > infer);
    CHECK(train % kAlignment == 0);
  }
  CHECK(build_model("lenet_64")->ephemeral_bytes(*ops, true) > build_model("lenet_32")->ephemeral_bytes(*ops, true));
}

TEST_CASE("lenet_32 and mlp_64 learn their fixed batch: the loss halves in 30 iterations") {
  for (const std::string w : {"lenet_32", "mlp_64"}) {
    CAPTURE(w);
    const std::vector<float> losses = train(w, 30, 0.01f);
    INFO("first loss ", losses.front(), ", last loss ", losses.back());
    for (float l : losses) CHECK(std::isfinite(l));
    // Ten classes, random He-uniform weights: at or above chance, log(10) = 2.30.
    CHECK(losses.front() > 2.0f);
    CHECK(losses.back() < 0.5f * losses.front());
  }
}

TEST_CASE("training is deterministic: the same seed gives the same losses bit for bit") {
  CHECK(train("lenet_32", 3, 0.01f) == train("lenet_32", 3, 0.01f));
}

TEST_CASE("train_step without read_loss returns NaN and still trains") {
  Bound b("mlp_64");
  Arena lane = b.lane(b.ephemeral);
  const float first = b.net->train_step(*b.ops, lane, TrainConfig{}, true);
  for (int i = 0; i < 5; ++i) CHECK(std::isnan(b.net->train_step(*b.ops, lane, TrainConfig{}, false)));
  CHECK(b.net->train_step(*b.ops, lane, TrainConfig{}, true) < first);
}

TEST_CASE("an iteration takes exactly ephemeral_bytes() from its lane") {
  for (const std::string w : {"lenet_32", "mlp_64"}) {
    CAPTURE(w);
    Bound b(w);
    SUBCASE("training") {
      Arena lane = b.lane(b.ephemeral);
      b.net->train_step(*b.ops, lane, TrainConfig{}, true);
      CHECK(lane.peak() == b.ephemeral);
      // Reset at the boundary: a second iteration in the same arena peaks at the same size.
      b.net->train_step(*b.ops, lane, TrainConfig{}, true);
      CHECK(lane.peak() == b.ephemeral);
    }
    SUBCASE("inference") {
      const Bytes infer = b.net->ephemeral_bytes(*b.ops, false);
      Arena lane = b.lane(infer);
      b.net->infer_step(*b.ops, lane);
      CHECK(lane.peak() == infer);
    }
  }
}

TEST_CASE("a lane one byte smaller than ephemeral_bytes() overflows") {
  for (const std::string w : {"lenet_32", "mlp_64"}) {
    CAPTURE(w);
    Bound b(w);
    Arena small = b.lane(b.ephemeral - 1);
    CHECK_THROWS_AS(b.net->train_step(*b.ops, small, TrainConfig{}, true), ArenaOverflow);
    const Bytes infer = b.net->ephemeral_bytes(*b.ops, false);
    Arena small_infer = b.lane(infer - 1);
    CHECK_THROWS_AS(b.net->infer_step(*b.ops, small_infer), ArenaOverflow);
    // What fits, fits: the full lane still trains after the overflow.
    Arena full = b.lane(b.ephemeral);
    CHECK(std::isfinite(b.net->train_step(*b.ops, full, TrainConfig{}, true)));
  }
}

// The overflow is the reason a job stops with (salus-run prints it), so it must describe the
// lane: its size and how much the iteration needed of it, wherever in the pass it ran out
// (forward buffers, or the backward pass's gradient heap placed after them).
TEST_CASE("an overflow reports the lane's size and the iteration's need within it") {
  for (const std::string w : {"lenet_32", "mlp_64"}) {
    CAPTURE(w);
    Bound b(w);
    const Bytes size = b.ephemeral - 1;
    Arena small = b.lane(size);
    std::string message;
    Bytes reported_size = -1, reported_need = -1;
    try {
      b.net->train_step(*b.ops, small, TrainConfig{}, true);
    } catch (const ArenaOverflow& e) {
      message = e.what();
      reported_size = e.size;
      reported_need = e.used + e.requested;
    }
    CHECK(reported_size == size);
    CHECK(reported_need > size);
    CHECK(reported_need <= b.ephemeral);
    CHECK(message == "ephemeral memory overflow: needs " + salus::core::format_size(reported_need) +
                         " but its region holds " + salus::core::format_size(size));
  }
}
