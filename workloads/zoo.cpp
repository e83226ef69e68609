#include "workloads/zoo.h"

#include <algorithm>

#include "core/errors.h"

namespace salus::workloads {
namespace {

int numeric_batch(const std::string& variant) { return std::stoi(variant); }

// --- tf_cnn_benchmarks building blocks (convnet_builder.py semantics) --------------------

struct TfCnn {
  Graph& g;
  bool batch_norm = false;  // conv -> batch norm (no bias) instead of conv + bias
  bool bn_scale = false;    // tf_cnn_benchmarks batch norm has no gamma except in ResNets

  int conv(int x, int k, int kh, int kw, int s = 1, int pad = kSame, bool relu = true) {
    int y = g.conv(x, k, kh, kw, s, s, pad, !batch_norm);
    if (batch_norm) y = g.batch_norm(y, bn_scale);
    return relu ? g.relu(y) : y;
  }
  int affine(int x, int out, bool relu = true) {
    const int y = g.fully_connected(x, out);
    return relu ? g.relu(y) : y;
  }
  /// Logits over the 1001 ImageNet classes tf_cnn_benchmarks uses, and the loss.
  void classifier(int x) { g.softmax_loss(g.fully_connected(x, 1001)); }
};

Graph alexnet() {  // tf_cnn_benchmarks alexnet_model.py: 227x227 (224 + 3, VALID first conv)
  Graph g;
  TfCnn t{g};
  int x = g.input(3, 227, 227, true);
  x = t.conv(x, 64, 11, 11, 4, 0);
  x = g.max_pool(x, 3, 2, 0);
  x = t.conv(x, 192, 5, 5);
  x = g.max_pool(x, 3, 2, 0);
  x = t.conv(x, 384, 3, 3);
  x = t.conv(x, 384, 3, 3);
  x = t.conv(x, 256, 3, 3);
  x = g.max_pool(x, 3, 2, 0);
  x = g.dropout(t.affine(x, 4096));
  x = g.dropout(t.affine(x, 4096));
  t.classifier(x);
  return g;
}

Graph overfeat() {  // tf_cnn_benchmarks overfeat_model.py: 231x231
  Graph g;
  TfCnn t{g};
  int x = g.input(3, 231, 231, true);
  x = t.conv(x, 96, 11, 11, 4, 0);
  x = g.max_pool(x, 2, 2, 0);
  x = t.conv(x, 256, 5, 5, 1, 0);
  x = g.max_pool(x, 2, 2, 0);
  x = t.conv(x, 512, 3, 3);
  x = t.conv(x, 1024, 3, 3);
  x = t.conv(x, 1024, 3, 3);
  x = g.max_pool(x, 2, 2, 0);
  x = g.dropout(t.affine(x, 3072));
  x = g.dropout(t.affine(x, 4096));
  t.classifier(x);
  return g;
}

Graph vgg(const std::vector<int>& convs_per_stage) {  // tf_cnn_benchmarks vgg_model.py
  static constexpr int kWidth[] = {64, 128, 256, 512, 512};
  Graph g;
  TfCnn t{g};
  int x = g.input(3, 224, 224, true);
  for (std::size_t s = 0; s < convs_per_stage.size(); ++s) {
    for (int i = 0; i < convs_per_stage[s]; ++i) x = t.conv(x, kWidth[s], 3, 3);
    x = g.max_pool(x, 2, 2, 0);
  }
  x = g.dropout(t.affine(x, 4096));
  x = g.dropout(t.affine(x, 4096));
  t.classifier(x);
  return g;
}

/// A column of an inception module: convs (k, kh, kw, stride, pad) or a pool first.
struct Col {
  enum Kind { kConv, kMax, kAvg, kShare } kind;
  int k = 0, kh = 1, kw = 1, s = 1, pad = kSame;
};
Col cv(int k, int kh, int kw, int s = 1, int pad = kSame) { return {Col::kConv, k, kh, kw, s, pad}; }
Col mp(int k, int s, int pad) { return {Col::kMax, 0, k, k, s, pad}; }
Col ap(int k, int s, int pad) { return {Col::kAvg, 0, k, k, s, pad}; }
Col share() { return {Col::kShare}; }

/// convnet_builder.inception_module: each column starts from the module input; 'share' reuses
/// the layer at the same depth of the previous column; the last layers are concatenated.
int inception(TfCnn& t, int x, const std::vector<std::vector<Col>>& cols) {
  std::vector<std::vector<int>> layers;
  for (const auto& col : cols) {
    layers.emplace_back();
    int y = x;
    for (std::size_t l = 0; l < col.size(); ++l) {
      const Col& op = col[l];
      switch (op.kind) {
        case Col::kConv: y = t.conv(y, op.k, op.kh, op.kw, op.s, op.pad); break;
        case Col::kMax: y = t.g.max_pool(y, op.kh, op.s, op.pad); break;
        case Col::kAvg: y = t.g.avg_pool(y, op.kh, op.s, op.pad); break;
        case Col::kShare: y = layers[layers.size() - 2][l]; break;
      }
      layers.back().push_back(y);
    }
  }
  std::vector<int> tops;
  for (const auto& col : layers) tops.push_back(col.back());
  return t.g.concat(tops);
}

Graph googlenet() {  // tf_cnn_benchmarks googlenet_model.py: conv + bias + relu, no aux heads
  Graph g;
  TfCnn t{g};
  auto v1 = [&](int x, int k, int l, int m, int n, int p, int q) {
    return inception(t, x, {{cv(k, 1, 1)}, {cv(l, 1, 1), cv(m, 3, 3)}, {cv(n, 1, 1), cv(p, 5, 5)},
                            {mp(3, 1, kSame), cv(q, 1, 1)}});
  };
  int x = g.input(3, 224, 224, true);
  x = t.conv(x, 64, 7, 7, 2);
  x = g.max_pool(x, 3, 2, kSame);
  x = t.conv(x, 64, 1, 1);
  x = t.conv(x, 192, 3, 3);
  x = g.max_pool(x, 3, 2, kSame);
  x = v1(x, 64, 96, 128, 16, 32, 32);
  x = v1(x, 128, 128, 192, 32, 96, 64);
  x = g.max_pool(x, 3, 2, kSame);
  x = v1(x, 192, 96, 208, 16, 48, 64);
  x = v1(x, 160, 112, 224, 24, 64, 64);
  x = v1(x, 128, 128, 256, 24, 64, 64);
  x = v1(x, 112, 144, 288, 32, 64, 64);
  x = v1(x, 256, 160, 320, 32, 128, 128);
  x = g.max_pool(x, 3, 2, kSame);
  x = v1(x, 256, 160, 320, 32, 128, 128);
  x = v1(x, 384, 192, 384, 48, 128, 128);
  x = g.avg_pool(x, 7, 1, 0);
  t.classifier(x);
  return g;
}

Graph inception3() {  // tf_cnn_benchmarks inception_model.py, 299x299, no auxiliary head
  Graph g;
  TfCnn t{g, true, false};
  auto a = [&](int x, int n) {
    return inception(t, x, {{cv(64, 1, 1)}, {cv(48, 1, 1), cv(64, 5, 5)},
                            {cv(64, 1, 1), cv(96, 3, 3), cv(96, 3, 3)}, {ap(3, 1, kSame), cv(n, 1, 1)}});
  };
  auto b = [&](int x) {
    return inception(t, x, {{cv(384, 3, 3, 2, 0)}, {cv(64, 1, 1), cv(96, 3, 3), cv(96, 3, 3, 2, 0)},
                            {mp(3, 2, 0)}});
  };
  auto c = [&](int x, int n) {
    return inception(t, x, {{cv(192, 1, 1)}, {cv(n, 1, 1), cv(n, 1, 7), cv(192, 7, 1)},
                            {cv(n, 1, 1), cv(n, 7, 1), cv(n, 1, 7), cv(n, 7, 1), cv(192, 1, 7)},
                            {ap(3, 1, kSame), cv(192, 1, 1)}});
  };
  auto d = [&](int x) {
    return inception(t, x, {{cv(192, 1, 1), cv(320, 3, 3, 2, 0)},
                            {cv(192, 1, 1), cv(192, 1, 7), cv(192, 7, 1), cv(192, 3, 3, 2, 0)},
                            {mp(3, 2, 0)}});
  };
  auto e = [&](int x, bool max_pool) {
    return inception(t, x, {{cv(320, 1, 1)}, {cv(384, 1, 1), cv(384, 1, 3)}, {share(), cv(384, 3, 1)},
                            {cv(448, 1, 1), cv(384, 3, 3), cv(384, 1, 3)}, {share(), share(), cv(384, 3, 1)},
                            {max_pool ? mp(3, 1, kSame) : ap(3, 1, kSame), cv(192, 1, 1)}});
  };
  int x = g.input(3, 299, 299, true);
  x = t.conv(x, 32, 3, 3, 2, 0);
  x = t.conv(x, 32, 3, 3, 1, 0);
  x = t.conv(x, 64, 3, 3);
  x = g.max_pool(x, 3, 2, 0);
  x = t.conv(x, 80, 1, 1, 1, 0);
  x = t.conv(x, 192, 3, 3, 1, 0);
  x = g.max_pool(x, 3, 2, 0);
  x = a(x, 32);
  x = a(x, 64);
  x = a(x, 64);
  x = b(x);
  x = c(x, 128);
  x = c(x, 160);
  x = c(x, 160);
  x = c(x, 192);
  x = d(x);
  x = e(x, false);
  x = e(x, true);
  x = g.avg_pool(x, 8, 1, 0);
  t.classifier(x);
  return g;
}

Graph inception4() {  // tf_cnn_benchmarks inception_model.py Inceptionv4Model, 299x299
  Graph g;
  TfCnn t{g, true, false};
  int x = g.input(3, 299, 299, true);
  x = t.conv(x, 32, 3, 3, 2, 0);
  x = t.conv(x, 32, 3, 3, 1, 0);
  x = t.conv(x, 64, 3, 3);
  x = inception(t, x, {{mp(3, 2, 0)}, {cv(96, 3, 3, 2, 0)}});
  x = inception(t, x, {{cv(64, 1, 1), cv(96, 3, 3, 1, 0)},
                       {cv(64, 1, 1), cv(64, 7, 1), cv(64, 1, 7), cv(96, 3, 3, 1, 0)}});
  x = inception(t, x, {{cv(192, 3, 3, 2, 0)}, {mp(3, 2, 0)}});
  for (int i = 0; i < 4; ++i) {
    x = inception(t, x, {{ap(3, 1, kSame), cv(96, 1, 1)}, {cv(96, 1, 1)}, {cv(64, 1, 1), cv(96, 3, 3)},
                         {cv(64, 1, 1), cv(96, 3, 3), cv(96, 3, 3)}});
  }
  x = inception(t, x, {{mp(3, 2, 0)}, {cv(384, 3, 3, 2, 0)}, {cv(192, 1, 1), cv(224, 3, 3), cv(256, 3, 3, 2, 0)}});
  for (int i = 0; i < 7; ++i) {
    x = inception(t, x, {{ap(3, 1, kSame), cv(128, 1, 1)}, {cv(384, 1, 1)},
                         {cv(192, 1, 1), cv(224, 1, 7), cv(256, 7, 1)},
                         {cv(192, 1, 1), cv(192, 1, 7), cv(224, 7, 1), cv(224, 1, 7), cv(256, 7, 1)}});
  }
  x = inception(t, x, {{mp(3, 2, 0)}, {cv(192, 1, 1), cv(192, 3, 3, 2, 0)},
                       {cv(256, 1, 1), cv(256, 1, 7), cv(320, 7, 1), cv(320, 3, 3, 2, 0)}});
  for (int i = 0; i < 3; ++i) {
    x = inception(t, x, {{ap(3, 1, kSame), cv(256, 1, 1)}, {cv(256, 1, 1)}, {cv(384, 1, 1), cv(256, 1, 3)},
                         {share(), cv(256, 3, 1)}, {cv(384, 1, 1), cv(448, 1, 3), cv(512, 3, 1), cv(256, 3, 1)},
                         {share(), share(), share(), cv(256, 1, 3)}});
  }
  x = g.dropout(g.spatial_mean(x));
  t.classifier(x);
  return g;
}

/// tf_cnn_benchmarks resnet_model.py, bottleneck_block_v1 (what `--model=resnet50` builds, and
/// what the Salus artifact ran): the stride on the first 1x1 convolution of the first block of
/// stages 2-4, batch norm with gamma and beta and no convolution bias, a projection shortcut
/// (1x1 convolution + batch norm) where the width changes. See workloads/README.md.
Graph resnet(const std::vector<int>& blocks_per_stage) {
  Graph g;
  TfCnn t{g, true, true};
  int x = g.input(3, 224, 224, true);
  x = t.conv(x, 64, 7, 7, 2, 3);
  x = g.max_pool(x, 3, 2, kSame);
  int width = 64;
  for (std::size_t s = 0; s < blocks_per_stage.size(); ++s, width *= 2) {
    for (int b = 0; b < blocks_per_stage[s]; ++b) {
      const int stride = (b == 0 && s > 0) ? 2 : 1;
      const int depth = 4 * width;
      const int shortcut = g.at(x).out.c == depth ? x : t.conv(x, depth, 1, 1, stride, kSame, false);
      int y = t.conv(x, width, 1, 1, stride);
      y = t.conv(y, width, 3, 3);
      y = t.conv(y, depth, 1, 1, 1, kSame, false);
      x = g.relu(g.add(shortcut, y));
    }
  }
  x = g.spatial_mean(x);
  t.classifier(x);
  return g;
}

// BSDS300 images are 481 x 321 (or 321 x 481) RGB; the PyTorch super_resolution example decodes
// each one, converts it to YCbCr, crops 255 x 255 and resizes the crop to 85 x 85 on the CPU.
constexpr double kBsds300DecodedBytes = 481.0 * 321.0 * 3.0;

Graph superres() {  // PyTorch examples/super_resolution (Shi et al. ESPCN), upscale 3
  Graph g;
  const int x = g.input(1, 85, 85, false);
  const int target = g.input(1, 255, 255, false);
  int y = g.relu(g.conv(x, 64, 5, 5, 1, 1, 2, true));
  y = g.relu(g.conv(y, 64, 3, 3, 1, 1, 1, true));
  y = g.relu(g.conv(y, 32, 3, 3, 1, 1, 1, true));
  y = g.pixel_shuffle(g.conv(y, 9, 3, 3, 1, 1, 1, true), 3);
  g.mse_loss(y, target);
  return g;
}

Graph vae() {  // PyTorch examples/vae (Kingma & Welling): 784-400-(20, 20)-400-784
  Graph g;
  const int x = g.input(1, 28, 28, false);
  const int h1 = g.relu(g.fully_connected(x, 400));
  const int mu = g.fully_connected(h1, 20);
  const int logvar = g.fully_connected(h1, 20);
  const int z = g.reparameterize(mu, logvar);
  const int h3 = g.relu(g.fully_connected(z, 400));
  const int recon = g.sigmoid(g.fully_connected(h3, 784));
  g.bce_loss(recon, x);
  return g;
}

// TIMIT: about 5 hours in 6300 sentences, 2.86 s each on average; Fathom's features are 26 MFCCs
// every 10 ms, so an average utterance is 286 frames.
constexpr int kSpeechFrames = 286;
constexpr int kSpeechFeatures = 26;

/// Fathom's speech workload (Deep Speech, Hannun et al. 2014, as the Salus artifact runs it):
/// three clipped-ReLU layers (1024, 1024, 2048), a bidirectional LSTM of 1024 units per
/// direction in tf.nn.dynamic_rnn, a 1024 clipped-ReLU layer, 62 outputs (61 TIMIT phonemes and
/// the blank), CTC loss, Adam.
Graph speech() {
  Graph g;
  const int x = g.input(kSpeechFeatures, kSpeechFrames, 1, false);
  int y = g.clipped_relu(g.fully_connected_per_step(x, 1024));
  y = g.clipped_relu(g.fully_connected_per_step(y, 1024));
  y = g.clipped_relu(g.fully_connected_per_step(y, 2048));
  const int fw = g.lstm(y, 1024, Recurrence::kDynamicRnn);
  const int bw = g.lstm(y, 1024, Recurrence::kDynamicRnn);
  y = g.concat({fw, bw});
  y = g.clipped_relu(g.fully_connected_per_step(y, 1024));
  y = g.fully_connected_per_step(y, 62);
  g.ctc_loss(y);
  return g;
}

/// The TF PTB word language model (Zaremba et al. 2014) that the Salus artifact runs as
/// "seq2seq": configurations small / medium / large.
struct PtbConfig {
  int hidden, steps;
  bool dropout;
};
constexpr int kPtbVocab = 10'000;
constexpr int kPtbLayers = 2;
constexpr int kPtbBatch = 20;
PtbConfig ptb_config(const std::string& variant) {
  if (variant == "small") return {200, 20, false};
  if (variant == "medium") return {650, 35, true};
  return {1500, 35, true};  // large
}

Graph seq2seq(const std::string& variant) {
  const PtbConfig cfg = ptb_config(variant);
  Graph g;
  const int ids = g.input(1, cfg.steps, 1, false);
  int y = g.embedding(ids, kPtbVocab, cfg.hidden);
  if (cfg.dropout) y = g.dropout(y);
  for (int l = 0; l < kPtbLayers; ++l) {
    y = g.lstm(y, cfg.hidden, Recurrence::kStaticUnroll);
    if (cfg.dropout) y = g.dropout(y);
  }
  g.softmax_loss(g.fully_connected_per_step(y, kPtbVocab));
  return g;
}

Graph lenet() {  // LeNet-5 on 28x28 grey images, synthetic batch on the device
  Graph g;
  const int x = g.input(1, 28, 28, true);
  int y = g.max_pool(g.relu(g.conv(x, 6, 5, 5, 1, 1, 2, true)), 2, 2, 0);
  y = g.max_pool(g.relu(g.conv(y, 16, 5, 5, 1, 1, 0, true)), 2, 2, 0);
  y = g.relu(g.fully_connected(y, 120));
  y = g.relu(g.fully_connected(y, 84));
  g.softmax_loss(g.fully_connected(y, 10));
  return g;
}

Graph mlp() {  // 784-512-256-10 on 28x28 images
  Graph g;
  const int x = g.input(1, 28, 28, true);
  int y = g.relu(g.fully_connected(x, 512));
  y = g.relu(g.fully_connected(y, 256));
  g.softmax_loss(g.fully_connected(y, 10));
  return g;
}

std::vector<Model> make_models() {
  const std::vector<std::string> b25_50_100 = {"25", "50", "100"};
  const std::vector<std::string> b25_50_75 = {"25", "50", "75"};
  auto synthetic = [](const std::string&) { return 0.0; };
  auto cnn = [&](std::string name, std::vector<std::string> variants, std::string description, bool runnable,
                 std::function<Graph()> graph) {
    Model m;
    m.name = std::move(name);
    m.variants = std::move(variants);
    m.runnable = runnable;
    m.description = std::move(description) + ", synthetic data on the GPU, SGD with momentum";
    m.optimizer = Optimizer::kMomentum;
    m.graph = [graph](const std::string&) { return graph(); };
    m.host_input_bytes = synthetic;
    m.batch = numeric_batch;
    return m;
  };
  std::vector<Model> v;
  v.push_back(cnn("alexnet", b25_50_100, "tf_cnn_benchmarks AlexNet (227x227)", true, alexnet));
  v.push_back(cnn("googlenet", b25_50_100, "tf_cnn_benchmarks GoogLeNet (224x224, no auxiliary heads)", true, googlenet));
  v.push_back(cnn("inception3", b25_50_100, "tf_cnn_benchmarks Inception-v3 (299x299, no auxiliary head)", false,
                  inception3));
  v.push_back(cnn("inception4", b25_50_75, "tf_cnn_benchmarks Inception-v4 (299x299)", false, inception4));
  v.push_back(cnn("overfeat", b25_50_100, "tf_cnn_benchmarks OverFeat fast (231x231)", true, overfeat));
  v.push_back(cnn("resnet50", b25_50_75, "tf_cnn_benchmarks ResNet-50 v1 (224x224)", true,
                  [] { return resnet({3, 4, 6, 3}); }));
  v.push_back(cnn("resnet101", b25_50_75, "tf_cnn_benchmarks ResNet-101 v1 (224x224)", true,
                  [] { return resnet({3, 4, 23, 3}); }));
  v.push_back(cnn("resnet152", b25_50_75, "tf_cnn_benchmarks ResNet-152 v1 (224x224)", true,
                  [] { return resnet({3, 8, 36, 3}); }));
  v.push_back(cnn("vgg11", b25_50_100, "tf_cnn_benchmarks VGG-11 (224x224)", true, [] { return vgg({1, 1, 2, 2, 2}); }));
  v.push_back(cnn("vgg16", b25_50_100, "tf_cnn_benchmarks VGG-16 (224x224)", true, [] { return vgg({2, 2, 3, 3, 3}); }));
  v.push_back(cnn("vgg19", b25_50_100, "tf_cnn_benchmarks VGG-19 (224x224)", true, [] { return vgg({2, 2, 4, 4, 4}); }));

  Model m;
  m.name = "vae";
  m.variants = {"64", "128", "256"};
  m.description = "PyTorch examples/vae, MNIST 784-400-20, each sample prepared on the CPU (784 B), Adam";
  m.optimizer = Optimizer::kAdam;
  m.framework = Framework::kPyTorch;
  m.graph = [](const std::string&) { return vae(); };
  m.host_input_bytes = [](const std::string&) { return 784.0; };
  m.batch = numeric_batch;
  v.push_back(m);

  m = Model{};
  m.name = "superres";
  m.variants = {"32", "64", "128"};
  m.description = "PyTorch examples/super_resolution (ESPCN, upscale 3, 1x85x85 input), each BSDS300 image "
                  "decoded, cropped and resized on the CPU (481x321x3 B decoded), Adam";
  m.optimizer = Optimizer::kAdam;
  m.framework = Framework::kPyTorch;
  m.graph = [](const std::string&) { return superres(); };
  m.host_input_bytes = [](const std::string&) { return kBsds300DecodedBytes; };
  m.batch = numeric_batch;
  v.push_back(m);

  m = Model{};
  m.name = "speech";
  m.variants = {"25", "50", "75"};
  m.description = "Fathom speech (Deep Speech: 3 clipped-ReLU layers, bidirectional LSTM 2x1024 in dynamic_rnn, "
                  "CTC), 286 frames x 26 MFCC per utterance fed from the host, Adam";
  m.optimizer = Optimizer::kAdam;
  m.graph = [](const std::string&) { return speech(); };
  m.host_input_bytes = [](const std::string&) { return 4.0 * kSpeechFrames * kSpeechFeatures; };
  m.batch = numeric_batch;
  v.push_back(m);

  m = Model{};
  m.name = "seq2seq";
  m.variants = {"small", "medium", "large"};
  m.variants_are_batches = false;
  m.description = "TF PTB word language model (Zaremba et al., 2 LSTM layers, vocabulary 10000, batch 20; "
                  "small 200 units x 20 steps, medium 650 x 35, large 1500 x 35 with dropout), the state fed "
                  "and fetched by the host, SGD with gradient clipping";
  m.optimizer = Optimizer::kSgd;
  m.clip_gradients = true;
  m.graph = seq2seq;
  m.host_input_bytes = [](const std::string& variant) {
    const PtbConfig cfg = ptb_config(variant);
    // Input and target ids, and the LSTM state (c, h per layer) fed in and fetched back.
    return 4.0 * (2.0 * cfg.steps + 2.0 * 2.0 * kPtbLayers * cfg.hidden);
  };
  m.batch = [](const std::string&) { return kPtbBatch; };
  v.push_back(m);

  m = Model{};
  m.from_paper = false;
  m.runnable = true;
  m.name = "lenet";
  m.variants = {"32"};
  m.description = "test workload, not from the paper: the real backend's LeNet-5 (28x28), synthetic batch on the "
                  "device, SGD with momentum, the backend's memory rules (every forward output kept until the "
                  "iteration ends, ReLU in place)";
  m.optimizer = Optimizer::kMomentum;
  m.framework = Framework::kSalusBackend;
  m.graph = [](const std::string&) { return lenet(); };
  m.host_input_bytes = synthetic;
  m.batch = numeric_batch;
  v.push_back(m);

  m.name = "mlp";
  m.variants = {"64"};
  m.description = "test workload, not from the paper: the real backend's MLP 784-512-256-10, synthetic batch on "
                  "the device, SGD with momentum, the backend's memory rules (every forward output kept until the "
                  "iteration ends, ReLU in place)";
  m.graph = [](const std::string&) { return mlp(); };
  v.push_back(m);
  return v;
}

}  // namespace

int optimizer_slots(Optimizer o) {
  switch (o) {
    case Optimizer::kSgd: return 0;
    case Optimizer::kMomentum: return 1;
    case Optimizer::kAdam: return 2;
  }
  return 0;
}

const std::vector<Model>& models() {
  static const std::vector<Model> kModels = make_models();
  return kModels;
}

std::string model_names_joined() {
  std::string s;
  for (const Model& m : models()) s += (s.empty() ? "" : ", ") + m.name;
  return s;
}

const Model* lookup(std::string_view name) {
  for (const Model& m : models()) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

const Model& find_model(std::string_view name) {
  const Model* m = lookup(name);
  if (m == nullptr) {
    throw core::InputError("unknown model '" + std::string(name) + "' (valid: " + model_names_joined() + ")");
  }
  return *m;
}

const Model& find_model(std::string_view name, std::string_view variant) {
  const Model& m = find_model(name);
  if (std::find(m.variants.begin(), m.variants.end(), variant) == m.variants.end()) {
    std::string valid;
    for (const std::string& v : m.variants) valid += (valid.empty() ? "" : ", ") + v;
    throw core::InputError("model '" + m.name + "' has no variant '" + std::string(variant) + "' (valid: " + valid +
                           ")");
  }
  return m;
}

}  // namespace salus::workloads
