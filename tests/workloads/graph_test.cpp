// The model zoo's layer graphs: TF's shape rules, parameter counts of the published
// architectures, ResNet v1 as tf_cnn_benchmarks builds it, and descriptions that cannot be built.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "core/errors.h"
#include "workloads/graph.h"
#include "workloads/zoo.h"

using namespace salus::workloads;

namespace {

Graph graph_of(const char* name) {
  const Model& m = find_model(name);
  return m.graph(m.variants.front());
}

std::int64_t trainable(const char* name) { return parameters(graph_of(name)).trainable; }

}  // namespace

TEST_CASE("window_output: SAME is ceil(n / stride), explicit padding is floor((n + 2p - k) / s) + 1") {
  CHECK(window_output(224, 7, 2, kSame) == 112);
  CHECK(window_output(225, 7, 2, kSame) == 113);
  CHECK(window_output(56, 1, 2, kSame) == 28);
  CHECK(window_output(224, 7, 2, 3) == 112);
  CHECK(window_output(227, 11, 4, 0) == 55);
  CHECK(window_output(55, 3, 2, 0) == 27);
  CHECK(window_output(28, 5, 1, 2) == 28);
}

TEST_CASE("graph: shapes are per sample and follow each layer's rule") {
  Graph g;
  const int x = g.input(3, 32, 32, true);
  const int c = g.conv(x, 16, 3, 3, 2, 2, kSame, false);
  CHECK(g.at(c).out == Shape{16, 16, 16});
  const int b = g.batch_norm(c, true);
  const int p = g.max_pool(g.relu(b), 3, 2, 0);
  CHECK(g.at(p).out == Shape{16, 7, 7});
  const int y = g.concat({p, g.avg_pool(g.relu(b), 3, 2, 0)});
  CHECK(g.at(y).out == Shape{32, 7, 7});
  const int m = g.spatial_mean(y);
  CHECK(g.at(m).out == Shape{32, 1, 1});
  const int fc = g.fully_connected(m, 10);
  CHECK(g.at(fc).in_features == 32);
  const int loss = g.softmax_loss(fc);
  CHECK(g.at(loss).out == Shape{1, 1, 1});
  CHECK(g.at(loss).in == std::vector<int>{fc});
  // Parameters: conv 3x3x3x16 without bias; batch norm gamma and beta, running mean and variance;
  // fully connected 32 x 10 + 10.
  CHECK(layer_parameters(g, c).trainable == 432);
  CHECK(layer_parameters(g, c).tensors == 1);
  CHECK(layer_parameters(g, b).trainable == 32);
  CHECK(layer_parameters(g, b).running == 32);
  CHECK(parameters(g).trainable == 432 + 32 + 330);
  CHECK(parameters(g).tensors == 1 + 2 + 2);
}

TEST_CASE("graph: sequences are features x steps") {
  Graph g;
  const int ids = g.input(1, 20, 1, false);
  const int e = g.embedding(ids, 100, 8);
  CHECK(g.at(e).out == Shape{8, 20, 1});
  const int l = g.lstm(e, 16, Recurrence::kStaticUnroll);
  CHECK(g.at(l).out == Shape{16, 20, 1});
  CHECK(layer_parameters(g, l).trainable == (8 + 16) * 4 * 16 + 4 * 16);
  const int fc = g.fully_connected_per_step(l, 100);
  CHECK(g.at(fc).out == Shape{100, 20, 1});
  CHECK(g.at(fc).rows == 20);
  CHECK(layer_parameters(g, fc).trainable == 16 * 100 + 100);
  CHECK(layer_parameters(g, e).trainable == 800);
}

TEST_CASE("graph: a description that cannot be built is our bug, named") {
  Graph g;
  const int x = g.input(3, 8, 8, true);
  const int a = g.conv(x, 4, 3, 3, 1, 1, kSame, true);
  const int b = g.conv(x, 4, 3, 3, 2, 2, kSame, true);
  CHECK_THROWS_AS(g.add(a, b), std::logic_error);
  CHECK_THROWS_AS(g.concat({a, b}), std::logic_error);
  CHECK_THROWS_AS(g.conv(x, 4, 11, 11, 1, 1, 0, true), std::logic_error);  // empty output
  CHECK_THROWS_AS(g.pixel_shuffle(a, 3), std::logic_error);              // 4 channels, not 9k
}

TEST_CASE("zoo: the paper's fifteen models and the two test models, each variant builds") {
  std::vector<std::string> names;
  for (const Model& m : models()) names.push_back(m.name);
  CHECK(names == std::vector<std::string>{"alexnet", "googlenet", "inception3", "inception4", "overfeat", "resnet50",
                                          "resnet101", "resnet152", "vgg11", "vgg16", "vgg19", "vae", "superres",
                                          "speech", "seq2seq", "lenet", "mlp"});
  for (const Model& m : models()) {
    CAPTURE(m.name);
    CHECK(m.from_paper == (m.name != "lenet" && m.name != "mlp"));
    REQUIRE(!m.variants.empty());
    for (const std::string& v : m.variants) {
      const Graph g = m.graph(v);
      CHECK(g.size() > 2);
      CHECK(g.at(0).op == Op::kInput);
      CHECK(m.batch(v) > 0);
      if (m.variants_are_batches) CHECK(m.batch(v) == std::stoi(v));
    }
  }
  // The real backend runs the CNNs whose layers it has and the two test models.
  std::vector<std::string> runnable;
  for (const Model& m : models()) {
    if (m.runnable) runnable.push_back(m.name);
  }
  CHECK(runnable == std::vector<std::string>{"alexnet", "googlenet", "overfeat", "resnet50", "resnet101", "resnet152",
                                             "vgg11", "vgg16", "vgg19", "lenet", "mlp"});
}

TEST_CASE("zoo: parameter counts of the published architectures, with tf_cnn_benchmarks' 1001 classes") {
  // He et al.'s ResNet-50 has 25,557,032 parameters with 1000 classes; tf_cnn_benchmarks' 1001st
  // class adds 2048 weights and a bias.
  CHECK(trainable("resnet50") == 25'557'032 + 2049);
  CHECK(trainable("vgg16") == 138'357'544 + 4097);
  // tf_cnn_benchmarks AlexNet: 64-192-384-384-256 with biases, 9216-4096-4096-1001.
  CHECK(trainable("alexnet") == (11 * 11 * 3 * 64 + 64) + (25 * 64 * 192 + 192) + (9 * 192 * 384 + 384) +
                                    (9 * 384 * 384 + 384) + (9 * 384 * 256 + 256) + (9216LL * 4096 + 4096) +
                                    (4096 * 4096 + 4096) + (4096 * 1001 + 1001));
  CHECK(trainable("lenet") == 61'706);
  CHECK(trainable("mlp") == 784 * 512 + 512 + 512 * 256 + 256 + 256 * 10 + 10);
  // Batch norm: resnet50 keeps running mean and variance of its 26,560 normalised channels.
  CHECK(parameters(graph_of("resnet50")).running == 2 * 26'560);
}

TEST_CASE("zoo: ResNet is v1 as tf_cnn_benchmarks builds it, the stride on the first 1x1 convolution") {
  const Graph g = graph_of("resnet50");
  // The first block of stage 2 reads the 256 x 56 x 56 output of stage 1: its projection
  // shortcut and its first 1x1 convolution have stride 2, its 3x3 convolution stride 1.
  std::vector<int> convs_reading_56;
  for (int i = 0; i < g.size(); ++i) {
    const Layer& l = g.at(i);
    if (l.op != Op::kConv || g.at(l.in.front()).out != Shape{256, 56, 56}) continue;
    if (l.out.h == 28) convs_reading_56.push_back(i);
  }
  REQUIRE(convs_reading_56.size() == 2);  // the projection (512) and the bottleneck's 1x1 (128)
  CHECK(g.at(convs_reading_56[0]).out == Shape{512, 28, 28});
  CHECK(g.at(convs_reading_56[1]).out == Shape{128, 28, 28});
  CHECK(g.at(convs_reading_56[1]).kh == 1);
  CHECK(g.at(convs_reading_56[1]).sh == 2);
  int strided_3x3 = 0, blocks = 0;
  for (const Layer& l : g.layers()) {
    strided_3x3 += l.op == Op::kConv && l.kh == 3 && l.sh != 1;
    blocks += l.op == Op::kAdd;
  }
  CHECK(strided_3x3 == 0);
  CHECK(blocks == 16);
  // Convolutions carry no bias (batch norm with gamma follows); the residual add reads the
  // shortcut first and the branch, ending in a batch norm, second.
  for (const Layer& l : g.layers()) {
    if (l.op == Op::kConv) CHECK_FALSE(l.bias);
    if (l.op == Op::kBatchNorm) CHECK(l.scale);
    if (l.op == Op::kAdd) CHECK(g.at(l.in[1]).op == Op::kBatchNorm);
  }
  CHECK(g.at(g.size() - 2).out == Shape{1001, 1, 1});
}

TEST_CASE("zoo: unknown models and variants name the valid ones") {
  CHECK_THROWS_WITH_AS(find_model("transformer"),
                       "unknown model 'transformer' (valid: alexnet, googlenet, inception3, inception4, overfeat, "
                       "resnet50, resnet101, resnet152, vgg11, vgg16, vgg19, vae, superres, speech, seq2seq, lenet, mlp)",
                       salus::core::InputError);
  CHECK_THROWS_WITH_AS(find_model("vgg16", "75"), "model 'vgg16' has no variant '75' (valid: 25, 50, 100)",
                       salus::core::InputError);
  CHECK(lookup("vgg16") == &find_model("vgg16"));
  CHECK(lookup("VGG16") == nullptr);
  CHECK(optimizer_slots(find_model("vae").optimizer) == 2);
  CHECK(optimizer_slots(find_model("seq2seq").optimizer) == 0);
  CHECK(find_model("seq2seq").clip_gradients);
}
