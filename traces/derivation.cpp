#include "traces/derivation.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "core/errors.h"

namespace salus::traces {
namespace {

// =====================================================================================
// Constants: every number the derivation uses that is not a shape, with its source.
// =====================================================================================

// NVIDIA Tesla P100 PCIe 16 GB datasheet: 9.3 TFLOP/s fp32 peak, 732 GB/s HBM2.
constexpr double kPeakFlops = 9.3e12;
constexpr double kPeakBytesPerS = 732e9;

// Fractions of those peaks the kernels reach, in FLOPs of a direct convolution / plain matrix
// product. Each layer takes max(FLOPs / compute rate, bytes / memory rate).
// - 3x3 stride-1 convolutions: cuDNN runs them with Winograd transforms (Lavin & Gray 2016:
//   F(2x2,3x3) needs 2.25x fewer multiplies, F(4x4,3x3) 4x), so while well under peak in real
//   multiplies they reach about 95% of it counted in direct-convolution FLOPs;
// - other convolutions (1x1, strided, 5x5, 7x7, 1x7/7x1) run as implicit GEMM / FFT at about 70%;
// - cuBLAS SGEMM on large products about 75%;
// - streaming (elementwise, pooling, batch norm) kernels about 75% of HBM2 bandwidth
//   (STREAM-like copy on P100: ~550 of 732 GB/s).
// These are assumptions, not fits to the paper, chosen with the iteration times the Salus artifact
// measured in TF on its P100 in view (SymbioticLab/Salus tests/workloads.csv): the derived CNN
// iteration times are within about 20% of those (traces/README.md).
constexpr double kWinogradConvEfficiency = 0.95;
constexpr double kConvEfficiency = 0.70;
constexpr double kGemmEfficiency = 0.75;
constexpr double kMemoryEfficiency = 0.75;
// A kernel occupies the GPU for at least a few microseconds however small it is (launch and
// ramp-up on Pascal); small models are made of such kernels.
constexpr double kMinKernelNs = 3'000;

// Host side. Calibrated (the only two constants fitted to the paper's speed figures):
// - dispatch cost per framework op, chosen so that resnet50_50 (synthetic data on the GPU, no
//   input pipeline) has u = 1/1.07, the paper's PACK makespan gain for 300 resnet50_50 jobs;
// - host input-pipeline throughput in bytes of decoded input per second, chosen so that
//   superres_128 (PyTorch example: decode, crop and resize each BSDS300 image on the CPU) has
//   u = 1/2.38, the paper's gain for 300 superres_128 jobs.
// With u = GPU time / iteration time and the simulator's slowdown max(1, sum u), packing k jobs
// gains about 1/u once k u >= 1, which is how the two figures pin the two constants.
constexpr double kHostOpNs = 17'000;
constexpr double kHostInputBytesPerS = 0.91e9;

// Convolution workspace: TF and PyTorch let cuDNN pick its fastest algorithm, whose buffers
// (Winograd/FFT transforms, im2col tiles) are about one copy of the layer's input and output;
// each convolution holds that while it runs (forward and backward).
constexpr double kConvWorkspaceFactor = 1.0;

// Kernels (framework ops) per layer kind that are not obvious from the layer: a TF
// BasicLSTMCell step is concat, matmul, bias add, split, 3 sigmoids, 2 tanh, forget-bias add,
// 3 multiplies and 1 add; its gradient about two ops per op. tf.nn.dynamic_rnn adds per step a
// TensorArray read and write, three selects for sequence_length and about eight control-flow
// ops; a statically unrolled loop (the PTB model) adds one input slice per step.
constexpr int kLstmCellForwardOps = 14;
constexpr int kLstmCellBackwardOps = 28;
constexpr int kDynamicRnnOpsPerStep = 13;
constexpr int kStaticUnrollOpsPerStep = 1;
// Floats of elementwise traffic per hidden unit in one LSTM step (gates, cell, activations).
constexpr int kLstmElementwiseFloatsPerUnit = 16;

// The paper's persistent-memory figures (MB = 1e6 B) that fit the framework-overhead line.
constexpr double kPaperGooglenet25PersistentBytes = 110.9e6;
constexpr double kPaperResnet152_75PersistentBytes = 822.2e6;

constexpr double kFloatBytes = 4;

// =====================================================================================
// Layer graphs
// =====================================================================================

enum class Kind {
  kInput,
  kConv,
  kFc,
  kBatchNorm,
  kRelu,
  kClippedRelu,
  kSigmoid,
  kMaxPool,
  kAvgPool,
  kAdd,
  kConcat,
  kDropout,
  kSoftmaxLoss,
  kMseLoss,
  kBceLoss,
  kCtcLoss,
  kLstm,
  kEmbedding,
  kPixelShuffle,
  kReparameterize,
};

/// SAME padding (TF): output = ceil(input / stride). Any other value is explicit symmetric
/// padding (0 = TF's VALID).
constexpr int kSame = -1;

struct Node {
  Kind kind = Kind::kInput;
  std::vector<int> in;
  int c = 1, h = 1, w = 1;  // output per sample; sequences: c features x h steps
  std::int64_t params = 0, fixed = 0;
  int variables = 0;
  double macs = 0;            // forward multiply-accumulates per sample
  std::int64_t weights = 0;   // weight elements a matrix product reads
  int steps = 1;              // sequential matrix products (recurrent layers)
  std::int64_t step_in = 0;   // LSTM: input + hidden features of one step
  std::int64_t hidden = 0;    // LSTM: hidden units
  bool bias = false;          // conv / fc: a separate bias-add kernel
  bool winograd = false;      // conv: 3x3 stride 1
  bool first = false;         // conv / fc whose input is the data: no input gradient
  bool saves_inputs = false;  // backward needs the inputs
  bool saves_output = false;  // backward needs the output
  std::int64_t extra_saved = 0;  // further elements per sample backward needs
  int fwd_kernels = 0, bwd_kernels = 0, infer_kernels = 0;
  bool on_gpu = false;        // input held on the GPU for the whole job (synthetic data)
  std::int64_t out() const { return static_cast<std::int64_t>(c) * h * w; }
};

int out_size(int in, int k, int s, int pad) {
  if (pad == kSame) return (in + s - 1) / s;
  return (in + 2 * pad - k) / s + 1;
}

class Net {
 public:
  int input(int c, int h, int w, bool on_gpu) {
    Node n;
    n.c = c;
    n.h = h;
    n.w = w;
    n.on_gpu = on_gpu;
    return add(n);
  }
  const Node& at(int id) const { return nodes_[static_cast<std::size_t>(id)]; }
  const std::vector<Node>& nodes() const { return nodes_; }

  int conv(int x, int k, int kh, int kw, int sh, int sw, int pad, bool bias) {
    const Node& src = at(x);
    Node n;
    n.kind = Kind::kConv;
    n.in = {x};
    n.c = k;
    n.h = out_size(src.h, kh, sh, pad);
    n.w = out_size(src.w, kw, sw, pad);
    n.weights = static_cast<std::int64_t>(kh) * kw * src.c * k;
    n.params = n.weights + (bias ? k : 0);
    n.variables = bias ? 2 : 1;
    n.macs = static_cast<double>(n.weights) * n.h * n.w;
    n.bias = bias;
    n.winograd = kh == 3 && kw == 3 && sh == 1 && sw == 1;
    n.first = src.kind == Kind::kInput;
    n.saves_inputs = true;
    n.fwd_kernels = n.infer_kernels = bias ? 2 : 1;
    n.bwd_kernels = (n.first ? 1 : 2) + (bias ? 1 : 0);
    return add(n);
  }
  /// Fully connected: `rows` independent rows per sample of `in_features` each (1 for a
  /// flattened feature map, the number of steps for a time-distributed layer).
  int fc(int x, int out_features, bool bias = true) { return dense(x, out_features, 1, at(x).out(), bias); }
  int dense_seq(int x, int out_features) {
    const Node& src = at(x);
    return dense(x, out_features, src.h, src.c, true);
  }
  /// Batch norm; `scale` adds gamma to beta. Training also updates the running statistics (TF:
  /// two assign_moving_average, three ops each).
  int batchnorm(int x, bool scale) {
    Node n = like(Kind::kBatchNorm, x);
    n.params = (scale ? 2 : 1) * static_cast<std::int64_t>(n.c);
    n.fixed = 2 * static_cast<std::int64_t>(n.c);
    n.variables = scale ? 2 : 1;
    n.saves_inputs = true;
    n.fwd_kernels = 7;
    n.bwd_kernels = 1;
    n.infer_kernels = 1;
    return add(n);
  }
  int relu(int x) { return activation(Kind::kRelu, x, 1); }
  int sigmoid(int x) { return activation(Kind::kSigmoid, x, 1); }
  /// min(relu(x), 20) as Deep Speech: relu and minimum, both outputs needed by backward.
  int clipped_relu(int x) {
    const int id = activation(Kind::kClippedRelu, x, 2);
    nodes_.back().extra_saved = at(id).out();
    nodes_.back().bwd_kernels = 4;
    return id;
  }
  int maxpool(int x, int k, int s, int pad) { return pool(Kind::kMaxPool, x, k, s, pad); }
  int avgpool(int x, int k, int s, int pad) { return pool(Kind::kAvgPool, x, k, s, pad); }
  /// Mean over the spatial dimensions (TF reduce_mean).
  int spatial_mean(int x) {
    Node n = like(Kind::kAvgPool, x);
    n.h = n.w = 1;
    n.fwd_kernels = n.infer_kernels = 1;
    n.bwd_kernels = 2;
    return add(n);
  }
  int residual_add(int a, int b) {
    Node n = like(Kind::kAdd, a);
    n.in = {a, b};
    n.fwd_kernels = n.infer_kernels = 1;
    n.bwd_kernels = 0;  // the gradient passes through to both inputs
    return add(n);
  }
  int concat(const std::vector<int>& xs) {
    Node n = like(Kind::kConcat, xs.front());
    n.in = xs;
    n.c = 0;
    for (int x : xs) n.c += at(x).c;
    n.fwd_kernels = n.infer_kernels = 1;
    n.bwd_kernels = static_cast<int>(xs.size());  // one slice per input
    return add(n);
  }
  /// Dropout as tf.nn.dropout: x / keep * mask, so backward needs both factors. Identity (no
  /// kernel) in inference.
  int dropout(int x) {
    Node n = like(Kind::kDropout, x);
    n.extra_saved = 2 * n.out();
    n.fwd_kernels = 6;
    n.bwd_kernels = 2;
    n.infer_kernels = 0;
    return add(n);
  }
  /// Softmax cross-entropy; keeps the softmax (its gradient) of the logits.
  int softmax_loss(int logits) {
    Node n = like(Kind::kSoftmaxLoss, logits);
    n.extra_saved = n.out();
    n.c = n.h = n.w = 1;
    n.fwd_kernels = n.infer_kernels = 2;
    n.bwd_kernels = 2;
    return add(n);
  }
  int loss(Kind kind, std::vector<int> xs) {
    Node n = like(kind, xs.front());
    n.in = std::move(xs);
    n.saves_inputs = true;
    n.c = n.h = n.w = 1;
    n.fwd_kernels = n.infer_kernels = 3;
    n.bwd_kernels = 3;
    return add(n);
  }
  /// One LSTM layer (TF BasicLSTMCell) over the steps of a sequence: each step multiplies
  /// [x_t, h_{t-1}] by a (in + hidden) x 4 hidden matrix. Backward needs per step the concatenated
  /// input, the four gate activations, the previous cell, tanh(cell): in + 7 hidden floats.
  int lstm(int x, int hidden, int loop_ops_per_step) {
    const Node& src = at(x);
    Node n;
    n.kind = Kind::kLstm;
    n.in = {x};
    n.c = hidden;
    n.h = src.h;
    n.steps = src.h;
    n.hidden = hidden;
    n.step_in = src.c + static_cast<std::int64_t>(hidden);
    n.weights = n.step_in * 4 * hidden;
    n.params = n.weights + 4 * static_cast<std::int64_t>(hidden);
    n.variables = 2;
    n.macs = static_cast<double>(n.weights) * n.steps;
    n.extra_saved = (n.step_in + 7 * static_cast<std::int64_t>(hidden)) * n.steps;
    n.fwd_kernels = n.infer_kernels = (kLstmCellForwardOps + loop_ops_per_step) * n.steps;
    n.bwd_kernels = (kLstmCellBackwardOps + loop_ops_per_step) * n.steps;
    return add(n);
  }
  /// Embedding lookup of a sequence of ids (c = 1 per step) into `width` features.
  int embedding(int ids, int vocab, int width) {
    Node n = like(Kind::kEmbedding, ids);
    n.c = width;
    n.params = static_cast<std::int64_t>(vocab) * width;
    n.variables = 1;
    n.saves_inputs = true;  // the ids
    n.fwd_kernels = n.infer_kernels = 1;
    n.bwd_kernels = 2;
    return add(n);
  }
  /// Sub-pixel rearrangement (c r^2, h, w) -> (c, h r, w r): a copy, nothing saved.
  int pixel_shuffle(int x, int r) {
    Node n = like(Kind::kPixelShuffle, x);
    n.c /= r * r;
    n.h *= r;
    n.w *= r;
    n.fwd_kernels = n.infer_kernels = 1;
    n.bwd_kernels = 1;
    return add(n);
  }
  /// VAE sampling z = mu + eps exp(logvar / 2) and the KL term: backward keeps eps, the standard
  /// deviation, mu and exp(logvar).
  int reparameterize(int mu, int logvar) {
    Node n = like(Kind::kReparameterize, mu);
    n.in = {mu, logvar};
    n.extra_saved = 4 * n.out();
    n.fwd_kernels = 10;
    n.bwd_kernels = 10;
    n.infer_kernels = 10;
    return add(n);
  }

 private:
  int add(const Node& n) {
    nodes_.push_back(n);
    return static_cast<int>(nodes_.size()) - 1;
  }
  Node like(Kind kind, int x) const {
    Node n;
    n.kind = kind;
    n.in = {x};
    n.c = at(x).c;
    n.h = at(x).h;
    n.w = at(x).w;
    return n;
  }
  int activation(Kind kind, int x, int kernels) {
    Node n = like(kind, x);
    n.saves_output = true;
    n.fwd_kernels = n.infer_kernels = kernels;
    n.bwd_kernels = kernels;
    return add(n);
  }
  int pool(Kind kind, int x, int k, int s, int pad) {
    Node n = like(kind, x);
    n.h = out_size(n.h, k, s, pad);
    n.w = out_size(n.w, k, s, pad);
    // TF's MaxPoolGrad takes the pooling's input and output; AvgPoolGrad only shapes.
    n.saves_inputs = n.saves_output = kind == Kind::kMaxPool;
    n.fwd_kernels = n.infer_kernels = 1;
    n.bwd_kernels = 1;
    return add(n);
  }
  int dense(int x, int out_features, int rows, std::int64_t in_features, bool bias) {
    const Node& src = at(x);
    Node n;
    n.kind = Kind::kFc;
    n.in = {x};
    n.c = out_features;
    n.h = rows;
    n.weights = in_features * out_features;
    n.params = n.weights + (bias ? out_features : 0);
    n.variables = bias ? 2 : 1;
    n.macs = static_cast<double>(n.weights) * rows;
    n.bias = bias;
    n.first = src.kind == Kind::kInput;
    n.saves_inputs = true;
    n.fwd_kernels = n.infer_kernels = bias ? 2 : 1;
    n.bwd_kernels = (n.first ? 1 : 2) + (bias ? 1 : 0);
    return add(n);
  }

  std::vector<Node> nodes_;
};

// --- tf_cnn_benchmarks building blocks (convnet_builder.py semantics) --------------------

struct TfCnn {
  Net& net;
  bool batch_norm = false;  // conv -> batch norm (no bias) instead of conv + bias
  bool bn_scale = false;    // tf_cnn_benchmarks batch norm has no gamma except in ResNets

  int conv(int x, int k, int kh, int kw, int s = 1, int pad = kSame, bool relu = true) {
    int y = net.conv(x, k, kh, kw, s, s, pad, !batch_norm);
    if (batch_norm) y = net.batchnorm(y, bn_scale);
    return relu ? net.relu(y) : y;
  }
  int affine(int x, int out, bool relu = true) {
    const int y = net.fc(x, out);
    return relu ? net.relu(y) : y;
  }
  /// Logits over the 1001 ImageNet classes tf_cnn_benchmarks uses, and the loss.
  void classifier(int x) { net.softmax_loss(net.fc(x, 1001)); }
};

// --- Model descriptions --------------------------------------------------------------------

/// What a model is and how its reference program runs it.
struct ModelInfo {
  std::string name;
  std::vector<std::string> variants;
  bool from_paper = true;
  std::string description;  // for the source strings
  int optimizer_slots = 1;
  bool clip_gradients = false;  // global-norm clipping (PTB): two ops per variable, 3 words/param
  /// This repository's real backend (gpu_backend/model.cpp) instead of TF or PyTorch: it keeps
  /// every forward output in the lane's bump arena until the iteration ends (ReLU in place when
  /// it is the only reader of a convolution, fully connected, batch norm or add output), holds
  /// the largest convolution's workspace for the whole iteration, and takes gradients from a
  /// first-fit heap that is never compacted.
  bool arena = false;
  std::function<void(Net&, const std::string& variant)> build;
  /// Bytes the host prepares per sample (0 = synthetic data on the GPU).
  std::function<double(const std::string& variant)> host_bytes;
  std::function<int(const std::string& variant)> batch;
};

int numeric_batch(const std::string& variant) { return std::stoi(variant); }

void alexnet(Net& net) {  // tf_cnn_benchmarks alexnet_model.py: 227x227 (224 + 3, VALID first conv)
  TfCnn t{net};
  int x = net.input(3, 227, 227, true);
  x = t.conv(x, 64, 11, 11, 4, 0);
  x = net.maxpool(x, 3, 2, 0);
  x = t.conv(x, 192, 5, 5);
  x = net.maxpool(x, 3, 2, 0);
  x = t.conv(x, 384, 3, 3);
  x = t.conv(x, 384, 3, 3);
  x = t.conv(x, 256, 3, 3);
  x = net.maxpool(x, 3, 2, 0);
  x = net.dropout(t.affine(x, 4096));
  x = net.dropout(t.affine(x, 4096));
  t.classifier(x);
}

void overfeat(Net& net) {  // tf_cnn_benchmarks overfeat_model.py: 231x231
  TfCnn t{net};
  int x = net.input(3, 231, 231, true);
  x = t.conv(x, 96, 11, 11, 4, 0);
  x = net.maxpool(x, 2, 2, 0);
  x = t.conv(x, 256, 5, 5, 1, 0);
  x = net.maxpool(x, 2, 2, 0);
  x = t.conv(x, 512, 3, 3);
  x = t.conv(x, 1024, 3, 3);
  x = t.conv(x, 1024, 3, 3);
  x = net.maxpool(x, 2, 2, 0);
  x = net.dropout(t.affine(x, 3072));
  x = net.dropout(t.affine(x, 4096));
  t.classifier(x);
}

void vgg(Net& net, std::vector<int> convs_per_stage) {  // tf_cnn_benchmarks vgg_model.py
  static constexpr int kWidth[] = {64, 128, 256, 512, 512};
  TfCnn t{net};
  int x = net.input(3, 224, 224, true);
  for (std::size_t s = 0; s < convs_per_stage.size(); ++s) {
    for (int i = 0; i < convs_per_stage[s]; ++i) x = t.conv(x, kWidth[s], 3, 3);
    x = net.maxpool(x, 2, 2, 0);
  }
  x = net.dropout(t.affine(x, 4096));
  x = net.dropout(t.affine(x, 4096));
  t.classifier(x);
}

/// A column of an inception module: convs (k, kh, kw, stride, pad) or a pool first.
struct Col {
  enum Op { kConv, kMax, kAvg, kShare } op;
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
      switch (op.op) {
        case Col::kConv: y = t.conv(y, op.k, op.kh, op.kw, op.s, op.pad); break;
        case Col::kMax: y = t.net.maxpool(y, op.kh, op.s, op.pad); break;
        case Col::kAvg: y = t.net.avgpool(y, op.kh, op.s, op.pad); break;
        case Col::kShare: y = layers[layers.size() - 2][l]; break;
      }
      layers.back().push_back(y);
    }
  }
  std::vector<int> tops;
  for (const auto& col : layers) tops.push_back(col.back());
  return t.net.concat(tops);
}

void googlenet(Net& net) {  // tf_cnn_benchmarks googlenet_model.py: conv + bias + relu, no aux heads
  TfCnn t{net};
  auto v1 = [&](int x, int k, int l, int m, int n, int p, int q) {
    return inception(t, x, {{cv(k, 1, 1)}, {cv(l, 1, 1), cv(m, 3, 3)}, {cv(n, 1, 1), cv(p, 5, 5)},
                            {mp(3, 1, kSame), cv(q, 1, 1)}});
  };
  int x = net.input(3, 224, 224, true);
  x = t.conv(x, 64, 7, 7, 2);
  x = net.maxpool(x, 3, 2, kSame);
  x = t.conv(x, 64, 1, 1);
  x = t.conv(x, 192, 3, 3);
  x = net.maxpool(x, 3, 2, kSame);
  x = v1(x, 64, 96, 128, 16, 32, 32);
  x = v1(x, 128, 128, 192, 32, 96, 64);
  x = net.maxpool(x, 3, 2, kSame);
  x = v1(x, 192, 96, 208, 16, 48, 64);
  x = v1(x, 160, 112, 224, 24, 64, 64);
  x = v1(x, 128, 128, 256, 24, 64, 64);
  x = v1(x, 112, 144, 288, 32, 64, 64);
  x = v1(x, 256, 160, 320, 32, 128, 128);
  x = net.maxpool(x, 3, 2, kSame);
  x = v1(x, 256, 160, 320, 32, 128, 128);
  x = v1(x, 384, 192, 384, 48, 128, 128);
  x = net.avgpool(x, 7, 1, 0);
  t.classifier(x);
}

void inception3(Net& net) {  // tf_cnn_benchmarks inception_model.py, 299x299, no auxiliary head
  TfCnn t{net, true, false};
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
  int x = net.input(3, 299, 299, true);
  x = t.conv(x, 32, 3, 3, 2, 0);
  x = t.conv(x, 32, 3, 3, 1, 0);
  x = t.conv(x, 64, 3, 3);
  x = net.maxpool(x, 3, 2, 0);
  x = t.conv(x, 80, 1, 1, 1, 0);
  x = t.conv(x, 192, 3, 3, 1, 0);
  x = net.maxpool(x, 3, 2, 0);
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
  x = net.avgpool(x, 8, 1, 0);
  t.classifier(x);
}

void inception4(Net& net) {  // tf_cnn_benchmarks inception_model.py Inceptionv4Model, 299x299
  TfCnn t{net, true, false};
  int x = net.input(3, 299, 299, true);
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
  x = net.dropout(net.spatial_mean(x));
  t.classifier(x);
}

/// tf_cnn_benchmarks resnet_model.py, v1: bottleneck blocks with the stride on the first 1x1
/// convolution, batch norm with gamma and beta, projection shortcut when the width changes.
void resnet(Net& net, std::vector<int> blocks_per_stage) {
  TfCnn t{net, true, true};
  int x = net.input(3, 224, 224, true);
  x = t.conv(x, 64, 7, 7, 2, 3);
  x = net.maxpool(x, 3, 2, kSame);
  int width = 64;
  for (std::size_t s = 0; s < blocks_per_stage.size(); ++s, width *= 2) {
    for (int b = 0; b < blocks_per_stage[s]; ++b) {
      const int stride = (b == 0 && s > 0) ? 2 : 1;
      const int depth = 4 * width;
      const int shortcut = net.at(x).c == depth ? x : t.conv(x, depth, 1, 1, stride, kSame, false);
      int y = t.conv(x, width, 1, 1, stride);
      y = t.conv(y, width, 3, 3);
      y = t.conv(y, depth, 1, 1, 1, kSame, false);
      x = net.relu(net.residual_add(shortcut, y));
    }
  }
  x = net.spatial_mean(x);
  t.classifier(x);
}

// BSDS300 images are 481 x 321 (or 321 x 481) RGB; the PyTorch super_resolution example decodes
// each one, converts it to YCbCr, crops 255 x 255 and resizes the crop to 85 x 85 on the CPU.
constexpr double kBsds300DecodedBytes = 481.0 * 321.0 * 3.0;

void superres(Net& net) {  // PyTorch examples/super_resolution (Shi et al. ESPCN), upscale 3
  const int x = net.input(1, 85, 85, false);
  const int target = net.input(1, 255, 255, false);
  int y = net.relu(net.conv(x, 64, 5, 5, 1, 1, 2, true));
  y = net.relu(net.conv(y, 64, 3, 3, 1, 1, 1, true));
  y = net.relu(net.conv(y, 32, 3, 3, 1, 1, 1, true));
  y = net.pixel_shuffle(net.conv(y, 9, 3, 3, 1, 1, 1, true), 3);
  net.loss(Kind::kMseLoss, {y, target});
}

void vae(Net& net) {  // PyTorch examples/vae (Kingma & Welling): 784-400-(20, 20)-400-784
  const int x = net.input(1, 28, 28, false);
  const int h1 = net.relu(net.fc(x, 400));
  const int mu = net.fc(h1, 20);
  const int logvar = net.fc(h1, 20);
  const int z = net.reparameterize(mu, logvar);
  const int h3 = net.relu(net.fc(z, 400));
  const int recon = net.sigmoid(net.fc(h3, 784));
  net.loss(Kind::kBceLoss, {recon, x});
}

// TIMIT: about 5 hours in 6300 sentences, 2.86 s each on average; Fathom's features are 26 MFCCs
// every 10 ms, so an average utterance is 286 frames.
constexpr int kSpeechFrames = 286;
constexpr int kSpeechFeatures = 26;

/// Fathom's speech workload (Deep Speech, Hannun et al. 2014, as the Salus artifact runs it):
/// three clipped-ReLU layers (1024, 1024, 2048), a bidirectional LSTM of 1024 units per
/// direction in tf.nn.dynamic_rnn, a 1024 clipped-ReLU layer, 62 outputs (61 TIMIT phonemes and
/// the blank), CTC loss, Adam.
void speech(Net& net) {
  const int x = net.input(kSpeechFeatures, kSpeechFrames, 1, false);
  int y = net.clipped_relu(net.dense_seq(x, 1024));
  y = net.clipped_relu(net.dense_seq(y, 1024));
  y = net.clipped_relu(net.dense_seq(y, 2048));
  const int fw = net.lstm(y, 1024, kDynamicRnnOpsPerStep);
  const int bw = net.lstm(y, 1024, kDynamicRnnOpsPerStep);
  y = net.concat({fw, bw});
  y = net.clipped_relu(net.dense_seq(y, 1024));
  y = net.dense_seq(y, 62);
  net.loss(Kind::kCtcLoss, {y});
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

void seq2seq(Net& net, const std::string& variant) {
  const PtbConfig cfg = ptb_config(variant);
  const int ids = net.input(1, cfg.steps, 1, false);
  int y = net.embedding(ids, kPtbVocab, cfg.hidden);
  if (cfg.dropout) y = net.dropout(y);
  for (int l = 0; l < kPtbLayers; ++l) {
    y = net.lstm(y, cfg.hidden, kStaticUnrollOpsPerStep);
    if (cfg.dropout) y = net.dropout(y);
  }
  net.softmax_loss(net.dense_seq(y, kPtbVocab));
}

void lenet(Net& net) {  // gpu_backend/models.cpp lenet: LeNet-5 on 28x28, synthetic batch on the device
  const int x = net.input(1, 28, 28, true);
  int y = net.maxpool(net.relu(net.conv(x, 6, 5, 5, 1, 1, 2, true)), 2, 2, 0);
  y = net.maxpool(net.relu(net.conv(y, 16, 5, 5, 1, 1, 0, true)), 2, 2, 0);
  y = net.relu(net.fc(y, 120));
  y = net.relu(net.fc(y, 84));
  net.softmax_loss(net.fc(y, 10));
}

void mlp(Net& net) {  // gpu_backend/models.cpp mlp: 784-512-256-10
  const int x = net.input(1, 28, 28, true);
  int y = net.relu(net.fc(x, 512));
  y = net.relu(net.fc(y, 256));
  net.softmax_loss(net.fc(y, 10));
}

const std::vector<ModelInfo>& models() {
  static const std::vector<ModelInfo> kModels = [] {
    const std::vector<std::string> b25_50_100 = {"25", "50", "100"};
    const std::vector<std::string> b25_50_75 = {"25", "50", "75"};
    auto synthetic = [](const std::string&) { return 0.0; };
    auto cnn = [&](std::string name, std::vector<std::string> variants, std::string description,
                   std::function<void(Net&)> build) {
      ModelInfo m;
      m.name = std::move(name);
      m.variants = std::move(variants);
      m.description = std::move(description) + ", synthetic data on the GPU, SGD with momentum";
      m.optimizer_slots = 1;
      m.build = [build](Net& net, const std::string&) { build(net); };
      m.host_bytes = synthetic;
      m.batch = numeric_batch;
      return m;
    };
    std::vector<ModelInfo> v;
    v.push_back(cnn("alexnet", b25_50_100, "tf_cnn_benchmarks AlexNet (227x227)", alexnet));
    v.push_back(cnn("googlenet", b25_50_100, "tf_cnn_benchmarks GoogLeNet (224x224, no auxiliary heads)", googlenet));
    v.push_back(cnn("inception3", b25_50_100, "tf_cnn_benchmarks Inception-v3 (299x299, no auxiliary head)", inception3));
    v.push_back(cnn("inception4", b25_50_75, "tf_cnn_benchmarks Inception-v4 (299x299)", inception4));
    v.push_back(cnn("overfeat", b25_50_100, "tf_cnn_benchmarks OverFeat fast (231x231)", overfeat));
    v.push_back(cnn("resnet50", b25_50_75, "tf_cnn_benchmarks ResNet-50 v1 (224x224)",
                    [](Net& n) { resnet(n, {3, 4, 6, 3}); }));
    v.push_back(cnn("resnet101", b25_50_75, "tf_cnn_benchmarks ResNet-101 v1 (224x224)",
                    [](Net& n) { resnet(n, {3, 4, 23, 3}); }));
    v.push_back(cnn("resnet152", b25_50_75, "tf_cnn_benchmarks ResNet-152 v1 (224x224)",
                    [](Net& n) { resnet(n, {3, 8, 36, 3}); }));
    v.push_back(cnn("vgg11", b25_50_100, "tf_cnn_benchmarks VGG-11 (224x224)", [](Net& n) { vgg(n, {1, 1, 2, 2, 2}); }));
    v.push_back(cnn("vgg16", b25_50_100, "tf_cnn_benchmarks VGG-16 (224x224)", [](Net& n) { vgg(n, {2, 2, 3, 3, 3}); }));
    v.push_back(cnn("vgg19", b25_50_100, "tf_cnn_benchmarks VGG-19 (224x224)", [](Net& n) { vgg(n, {2, 2, 4, 4, 4}); }));

    ModelInfo m;
    m.name = "vae";
    m.variants = {"64", "128", "256"};
    m.description = "PyTorch examples/vae, MNIST 784-400-20, each sample prepared on the CPU (784 B), Adam";
    m.optimizer_slots = 2;
    m.build = [](Net& n, const std::string&) { vae(n); };
    m.host_bytes = [](const std::string&) { return 784.0; };
    m.batch = numeric_batch;
    v.push_back(m);

    m = ModelInfo{};
    m.name = "superres";
    m.variants = {"32", "64", "128"};
    m.description = "PyTorch examples/super_resolution (ESPCN, upscale 3, 1x85x85 input), each BSDS300 image "
                    "decoded, cropped and resized on the CPU (481x321x3 B decoded), Adam";
    m.optimizer_slots = 2;
    m.build = [](Net& n, const std::string&) { superres(n); };
    m.host_bytes = [](const std::string&) { return kBsds300DecodedBytes; };
    m.batch = numeric_batch;
    v.push_back(m);

    m = ModelInfo{};
    m.name = "speech";
    m.variants = {"25", "50", "75"};
    m.description = "Fathom speech (Deep Speech: 3 clipped-ReLU layers, bidirectional LSTM 2x1024 in dynamic_rnn, "
                    "CTC), 286 frames x 26 MFCC per utterance fed from the host, Adam";
    m.optimizer_slots = 2;
    m.build = [](Net& n, const std::string&) { speech(n); };
    m.host_bytes = [](const std::string&) { return kFloatBytes * kSpeechFrames * kSpeechFeatures; };
    m.batch = numeric_batch;
    v.push_back(m);

    m = ModelInfo{};
    m.name = "seq2seq";
    m.variants = {"small", "medium", "large"};
    m.description = "TF PTB word language model (Zaremba et al., 2 LSTM layers, vocabulary 10000, batch 20; "
                    "small 200 units x 20 steps, medium 650 x 35, large 1500 x 35 with dropout), the state fed "
                    "and fetched by the host, SGD with gradient clipping";
    m.optimizer_slots = 0;
    m.clip_gradients = true;
    m.build = seq2seq;
    m.host_bytes = [](const std::string& variant) {
      const PtbConfig cfg = ptb_config(variant);
      // Input and target ids, and the LSTM state (c, h per layer) fed in and fetched back.
      return kFloatBytes * (2.0 * cfg.steps + 2.0 * 2.0 * kPtbLayers * cfg.hidden);
    };
    m.batch = [](const std::string&) { return kPtbBatch; };
    v.push_back(m);

    m = ModelInfo{};
    m.from_paper = false;
    m.name = "lenet";
    m.variants = {"32"};
    m.description = "test workload, not from the paper: the real backend's LeNet-5 (28x28), synthetic batch on the "
                    "device, SGD with momentum, the backend's memory rules (every forward output kept until the "
                    "iteration ends, ReLU in place)";
    m.optimizer_slots = 1;
    m.arena = true;
    m.build = [](Net& n, const std::string&) { lenet(n); };
    m.host_bytes = synthetic;
    m.batch = numeric_batch;
    v.push_back(m);

    m.name = "mlp";
    m.variants = {"64"};
    m.description = "test workload, not from the paper: the real backend's MLP 784-512-256-10, synthetic batch on "
                    "the device, SGD with momentum, the backend's memory rules (every forward output kept until the "
                    "iteration ends, ReLU in place)";
    m.build = [](Net& n, const std::string&) { mlp(n); };
    v.push_back(m);
    return v;
  }();
  return kModels;
}

std::string model_names_joined() {
  std::string s;
  for (const ModelInfo& m : models()) s += (s.empty() ? "" : ", ") + m.name;
  return s;
}

const ModelInfo& find_model(std::string_view name, std::string_view variant) {
  for (const ModelInfo& m : models()) {
    if (m.name != name) continue;
    if (std::find(m.variants.begin(), m.variants.end(), variant) == m.variants.end()) {
      std::string valid;
      for (const std::string& v : m.variants) valid += (valid.empty() ? "" : ", ") + v;
      throw core::InputError("model '" + m.name + "' has no variant '" + std::string(variant) + "' (valid: " + valid +
                             ")");
    }
    return m;
  }
  throw core::InputError("unknown model '" + std::string(name) + "' (valid: " + model_names_joined() + ")");
}

Net build(const ModelInfo& m, const std::string& variant) {
  Net net;
  m.build(net, variant);
  return net;
}

// =====================================================================================
// Figures from a graph
// =====================================================================================

std::int64_t inputs_out(const Net& net, const Node& n) {
  std::int64_t s = 0;
  for (int i : n.in) s += net.at(i).out();
  return s;
}

/// Walks one iteration (forward in node order, then backward in reverse order) and records the
/// peak of live activations per sample. Forward, node i's output lives until its last consumer
/// ran, or to the end of the forward pass when backward needs it (then until the backward of the
/// first node that needs it). Backward, the gradient of node t's output lives from the backward
/// of its last consumer to its own. A convolution holds its workspace while it runs.
void live_peaks(const Net& net, const std::vector<bool>& saved, bool arena, ArchitectureFigures& f) {
  const auto& nodes = net.nodes();
  const std::size_t n = nodes.size();
  std::vector<std::size_t> last_consumer(n), first_saver(n, n);
  for (std::size_t i = 0; i < n; ++i) last_consumer[i] = i;
  for (std::size_t i = 0; i < n; ++i) {
    if (nodes[i].saves_output) first_saver[i] = std::min(first_saver[i], i);
    for (int in : nodes[i].in) {
      const auto t = static_cast<std::size_t>(in);
      last_consumer[t] = std::max(last_consumer[t], i);
      if (nodes[i].saves_inputs) first_saver[t] = std::min(first_saver[t], i);
    }
  }
  std::vector<int> readers(n, 0);
  for (const Node& node : nodes) {
    for (int in : node.in) ++readers[static_cast<std::size_t>(in)];
  }
  auto in_place = [&](std::size_t t) {
    if (!arena || nodes[t].kind != Kind::kRelu) return false;
    const auto src = static_cast<std::size_t>(nodes[t].in.front());
    const Kind k = nodes[src].kind;
    return (k == Kind::kConv || k == Kind::kFc || k == Kind::kBatchNorm || k == Kind::kAdd) && readers[src] == 1;
  };
  auto elems = [&](std::size_t t) {
    if (nodes[t].kind == Kind::kInput && nodes[t].on_gpu) return std::int64_t{0};
    return in_place(t) ? std::int64_t{0} : nodes[t].out();
  };
  auto conv_workspace = [&](std::size_t i) {
    if (nodes[i].kind != Kind::kConv) return std::int64_t{0};
    return static_cast<std::int64_t>(std::llround(kConvWorkspaceFactor *
                                                  static_cast<double>(inputs_out(net, nodes[i]) + nodes[i].out())));
  };
  std::int64_t largest_workspace = 0;
  for (std::size_t i = 0; i < n; ++i) largest_workspace = std::max(largest_workspace, conv_workspace(i));
  auto workspace = [&](std::size_t i) { return arena ? largest_workspace : conv_workspace(i); };
  // Per step (forward steps 0..n-1, backward steps n..2n-1 for nodes n-1..0): elements kept for
  // backward, elements in flight, workspace.
  std::vector<std::int64_t> keep(2 * n, 0), flight(2 * n, 0), infer(n, 0);
  auto backward_step = [n](std::size_t node) { return 2 * n - 1 - node; };
  for (std::size_t t = 0; t < n; ++t) {
    const std::int64_t e = elems(t);
    for (std::size_t i = t; i <= last_consumer[t]; ++i) infer[i] += e;
    if (arena && nodes[t].kind != Kind::kInput) {
      for (std::size_t i = t; i < 2 * n; ++i) keep[i] += e;  // until the arena is reset
    } else if (saved[t]) {
      // From its forward step to the backward step of its first saver.
      for (std::size_t i = t; i <= backward_step(first_saver[t]); ++i) keep[i] += e;
    } else {
      for (std::size_t i = t; i <= last_consumer[t]; ++i) flight[i] += e;
    }
    for (std::size_t i = t; i <= (arena ? 2 * n - 1 : backward_step(t)); ++i) keep[i] += nodes[t].extra_saved;
    if (nodes[t].kind != Kind::kInput) {
      // The gradient of t's output, from its last consumer's backward to t's own; the real
      // backend's first-fit gradient heap is never compacted, so there every gradient of the
      // backward pass counts once (an upper bound of its high-water mark).
      const std::size_t from = arena ? n : backward_step(last_consumer[t]);
      for (std::size_t i = from; i <= (arena ? 2 * n - 1 : backward_step(t)); ++i) flight[i] += nodes[t].out();
    }
  }
  const auto bytes = [](std::int64_t e) { return static_cast<core::Bytes>(kFloatBytes) * e; };
  for (std::size_t i = 0; i < 2 * n; ++i) {
    const std::int64_t ws = workspace(i < n ? i : 2 * n - 1 - i);
    const core::Bytes total = bytes(keep[i] + flight[i] + ws);
    if (total > f.train_peak_bytes) {
      f.train_peak_bytes = total;
      f.train_peak_saved = bytes(keep[i]);
      f.train_peak_transient = bytes(flight[i]);
      f.train_peak_workspace = bytes(ws);
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    const core::Bytes total = bytes(infer[i] + workspace(i));
    if (total > f.infer_peak_bytes) {
      f.infer_peak_bytes = total;
      f.infer_peak_workspace = bytes(workspace(i));
    }
  }
}

ArchitectureFigures figures(const Net& net, const ModelInfo& m, const std::string& variant) {
  ArchitectureFigures f;
  const auto& nodes = net.nodes();
  std::vector<bool> saved(nodes.size(), false);
  std::int64_t extra = 0;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const Node& n = nodes[i];
    f.params += n.params;
    f.fixed_params += n.fixed;
    f.variables += n.variables;
    f.forward_macs += n.macs;
    f.forward_kernels += n.fwd_kernels;
    f.backward_kernels += n.bwd_kernels;
    if (n.saves_output) saved[i] = true;
    if (n.saves_inputs) {
      for (int in : n.in) saved[static_cast<std::size_t>(in)] = true;
    }
    extra += n.extra_saved;
    if (n.kind == Kind::kInput) {
      f.input_bytes += static_cast<core::Bytes>(kFloatBytes) * n.out();
      continue;
    }
    const core::Bytes step = static_cast<core::Bytes>(kFloatBytes) * (inputs_out(net, n) + n.out());
    f.largest_step_bytes = std::max(f.largest_step_bytes, step);
  }
  std::int64_t saved_elems = extra;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    // A synthetic batch lives in P for the whole job; anything else backward needs is in E.
    if (saved[i] && !(nodes[i].kind == Kind::kInput && nodes[i].on_gpu)) saved_elems += nodes[i].out();
  }
  f.saved_bytes = static_cast<core::Bytes>(kFloatBytes) * saved_elems;
  live_peaks(net, saved, m.arena, f);
  f.host_input_bytes = static_cast<core::Bytes>(std::llround(m.host_bytes(variant)));
  f.optimizer_slots = m.optimizer_slots;
  return f;
}

/// Time in ns of a pass over one layer: the roofline max(FLOPs / compute rate, bytes / memory
/// rate), at least kMinKernelNs per kernel.
struct PassTimes {
  double forward = 0, backward = 0;
  double compute_forward = 0, compute_backward = 0;  // the matrix-product part
};

double memory_ns(double bytes) { return bytes / (kPeakBytesPerS * kMemoryEfficiency) * 1e9; }
double roofline_ns(double flops, double bytes, double efficiency) {
  return std::max(flops / (kPeakFlops * efficiency) * 1e9, memory_ns(bytes));
}

PassTimes layer_times(const Net& net, const Node& n, int batch) {
  PassTimes t;
  const double b = batch;
  const double out_bytes = kFloatBytes * b * static_cast<double>(n.out());
  const double in_bytes = kFloatBytes * b * static_cast<double>(inputs_out(net, n));
  switch (n.kind) {
    case Kind::kInput:
      return t;
    case Kind::kConv:
    case Kind::kFc: {
      const double eff = n.kind == Kind::kFc ? kGemmEfficiency : n.winograd ? kWinogradConvEfficiency : kConvEfficiency;
      const double product =
          roofline_ns(2.0 * n.macs * b, in_bytes + out_bytes + kFloatBytes * static_cast<double>(n.weights), eff);
      const double bias = n.bias ? memory_ns(2.0 * out_bytes) : 0.0;
      t.compute_forward = product;
      t.compute_backward = (n.first ? 1.0 : 2.0) * product;  // filter gradient (+ input gradient)
      t.forward = product + bias;
      t.backward = t.compute_backward + (n.bias ? memory_ns(out_bytes) : 0.0);
      break;
    }
    case Kind::kLstm: {
      const double in_h = static_cast<double>(n.step_in);
      const double h4 = 4.0 * static_cast<double>(n.hidden);
      const double step_product = roofline_ns(2.0 * b * in_h * h4, kFloatBytes * (static_cast<double>(n.weights) + b * (in_h + h4)),
                                              kGemmEfficiency);
      const double step_elementwise =
          memory_ns(kFloatBytes * b * kLstmElementwiseFloatsPerUnit * static_cast<double>(n.hidden));
      t.compute_forward = n.steps * step_product;
      t.compute_backward = 2.0 * t.compute_forward;
      t.forward = t.compute_forward + n.steps * step_elementwise;
      t.backward = t.compute_backward + 2.0 * n.steps * step_elementwise;
      break;
    }
    case Kind::kAdd:
      t.forward = memory_ns(in_bytes + out_bytes);
      t.backward = 0;
      break;
    case Kind::kConcat:
      t.forward = memory_ns(in_bytes + out_bytes);
      t.backward = t.forward;
      break;
    case Kind::kBatchNorm:
      // Statistics pass plus normalising pass; backward reads x and dy twice.
      t.forward = memory_ns(2.0 * in_bytes + out_bytes);
      t.backward = memory_ns(3.0 * in_bytes + 2.0 * out_bytes);
      break;
    default:
      // Elementwise and pooling: backward reads the output gradient and a saved tensor and
      // writes the input gradient, about twice the forward traffic.
      t.forward = memory_ns(in_bytes + out_bytes + kFloatBytes * b * static_cast<double>(n.extra_saved));
      t.backward = 2.0 * t.forward;
      break;
  }
  return t;
}

// =====================================================================================
// The catalog formulas
// =====================================================================================

/// P without the framework overhead: weights (+ gradients and optimizer slots when training),
/// running statistics and a synthetic batch held on the GPU.
double state_bytes(const ArchitectureFigures& f, int batch, bool inference, bool synthetic) {
  const double copies = inference ? 1.0 : 2.0 + f.optimizer_slots;
  const double state = kFloatBytes * (copies * static_cast<double>(f.params) + static_cast<double>(f.fixed_params));
  return state + (synthetic ? static_cast<double>(batch) * static_cast<double>(f.input_bytes) : 0.0);
}

struct Timing {
  double gpu_ns = 0, compute_ns = 0, host_ns = 0;
  std::int64_t ops = 0;
};

Timing timing(const Net& net, const ModelInfo& m, const ArchitectureFigures& f, int batch, bool inference) {
  Timing t;
  for (const Node& n : net.nodes()) {
    if (n.kind == Kind::kInput) continue;
    const PassTimes p = layer_times(net, n, batch);
    if (inference) {
      t.gpu_ns += std::max(p.forward, n.infer_kernels * kMinKernelNs);
      t.compute_ns += p.compute_forward;
      t.ops += n.infer_kernels;
    } else {
      t.gpu_ns += std::max(p.forward, n.fwd_kernels * kMinKernelNs) + std::max(p.backward, n.bwd_kernels * kMinKernelNs);
      t.compute_ns += p.compute_forward + p.compute_backward;
      t.ops += n.fwd_kernels + n.bwd_kernels;
    }
  }
  if (!inference) {
    // One fused update kernel per variable reading weights, gradients and slots and writing
    // weights and slots; global-norm clipping adds two ops per variable and 3 words per param.
    const double words = 3.0 + 2.0 * f.optimizer_slots + (m.clip_gradients ? 3.0 : 0.0);
    const std::int64_t kernels = f.variables * (m.clip_gradients ? 3 : 1);
    t.gpu_ns += std::max(memory_ns(kFloatBytes * words * static_cast<double>(f.params)), kernels * kMinKernelNs);
    t.ops += kernels;
  }
  t.host_ns = static_cast<double>(t.ops) * kHostOpNs +
              static_cast<double>(batch) * static_cast<double>(f.host_input_bytes) / kHostInputBytesPerS * 1e9;
  return t;
}

/// Everything of a workload except the overhead line (which is fitted from two of these).
DerivedWorkload derive_without_overhead(const ModelInfo& m, const std::string& variant, bool inference) {
  DerivedWorkload w;
  w.model = m.name;
  w.variant = variant;
  w.inference = inference;
  w.from_paper = m.from_paper;
  w.name = m.name + "_" + variant + (inference ? "_infer" : "");
  w.batch = m.batch(variant);
  const Net net = build(m, variant);
  w.arch = figures(net, m, variant);
  const bool synthetic = w.arch.host_input_bytes == 0;
  w.persistent = static_cast<core::Bytes>(std::llround(state_bytes(w.arch, w.batch, inference, synthetic)));
  w.ephemeral = w.batch * (inference ? w.arch.infer_peak_bytes : w.arch.train_peak_bytes);
  const Timing t = timing(net, m, w.arch, w.batch, inference);
  w.gpu_ms = t.gpu_ns / 1e6;
  w.compute_ms = t.compute_ns / 1e6;
  w.host_ms = t.host_ns / 1e6;
  w.host_ops = t.ops;
  return w;
}

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  std::string s = buf;
  if (s.find_first_not_of("-0.") == std::string::npos && s.front() == '-') s.erase(0, 1);  // no "-0.00"
  return s;
}
std::string mb(double bytes, int decimals = 1) { return fixed(bytes / 1e6, decimals); }
std::string millions(double n) { return fixed(n / 1e6, 2) + " M"; }
std::string pct(double fraction) { return fixed(fraction * 100, 0) + "%"; }

}  // namespace

// =====================================================================================
// Public API
// =====================================================================================

const OverheadFit& overhead_fit() {
  static const OverheadFit kFit = [] {
    const DerivedWorkload g = derive_without_overhead(find_model("googlenet", "25"), "25", false);
    const DerivedWorkload r = derive_without_overhead(find_model("resnet152", "75"), "75", false);
    const double yg = kPaperGooglenet25PersistentBytes - static_cast<double>(g.persistent);
    const double yr = kPaperResnet152_75PersistentBytes - static_cast<double>(r.persistent);
    const double pg = static_cast<double>(g.arch.params), pr = static_cast<double>(r.arch.params);
    OverheadFit fit;
    fit.b_bytes_per_param = (yr - yg) / (pr - pg);
    fit.a_bytes = yg - fit.b_bytes_per_param * pg;
    if (!(fit.a_bytes >= 0 && fit.b_bytes_per_param >= 0)) {
      throw std::logic_error("overhead fit: the line through the paper's P figures must not be negative");
    }
    return fit;
  }();
  return kFit;
}

std::vector<std::string> derivation_model_names() {
  std::vector<std::string> v;
  for (const ModelInfo& m : models()) v.push_back(m.name);
  return v;
}

std::vector<std::string> derivation_variants(std::string_view model) {
  for (const ModelInfo& m : models()) {
    if (m.name == model) return m.variants;
  }
  throw core::InputError("unknown model '" + std::string(model) + "' (valid: " + model_names_joined() + ")");
}

ArchitectureFigures describe_model(std::string_view model, std::string_view variant) {
  const ModelInfo& m = find_model(model, variant);
  const std::string v(variant);
  return figures(build(m, v), m, v);
}

DerivedWorkload derive_workload(std::string_view model, std::string_view variant, bool inference) {
  const ModelInfo& m = find_model(model, variant);
  DerivedWorkload w = derive_without_overhead(m, std::string(variant), inference);
  const OverheadFit& fit = overhead_fit();
  w.overhead = static_cast<core::Bytes>(std::llround(fit.a_bytes + fit.b_bytes_per_param * static_cast<double>(w.arch.params)));
  w.persistent += w.overhead;
  return w;
}

core::Bytes DerivedWorkload::average() const {
  return persistent + static_cast<core::Bytes>(std::llround(gpu_util() * static_cast<double>(ephemeral) / 2.0));
}

std::string DerivedWorkload::source() const {
  const ModelInfo& m = find_model(model, variant);
  const OverheadFit& fit = overhead_fit();
  const ArchitectureFigures& f = arch;
  const double b = batch;
  const bool synthetic = f.host_input_bytes == 0;
  std::string s = "estimated: " + m.description + "; batch " + std::to_string(batch) + ", " +
                  (inference ? "inference (forward only)" : "training") + ". Per sample: " +
                  millions(static_cast<double>(f.params)) + " params, " + fixed(f.forward_macs / 1e9, 3) +
                  " GMAC forward, " + mb(static_cast<double>(f.saved_bytes), 2) + " MB activations saved for backward, " +
                  mb(static_cast<double>(f.largest_step_bytes), 2) + " MB largest layer step (inputs + output), " +
                  std::to_string(f.forward_kernels) + " forward and " + std::to_string(f.backward_kernels) +
                  " backward kernels. ";

  const char* copies = inference ? "1 (weights)"
                       : f.optimizer_slots == 0 ? "2 (weights, gradients)"
                       : f.optimizer_slots == 1 ? "3 (weights, gradients, momentum)"
                                                : "4 (weights, gradients, Adam moments)";
  s += "P = " + millions(static_cast<double>(f.params)) + " params x 4 B x " + copies;
  if (f.fixed_params > 0) s += " + " + mb(kFloatBytes * static_cast<double>(f.fixed_params), 2) + " MB running statistics";
  if (synthetic) s += " + " + mb(b * static_cast<double>(f.input_bytes)) + " MB synthetic batch";
  s += " + " + mb(static_cast<double>(overhead), 1) + " MB framework overhead (" + mb(fit.a_bytes, 2) + " MB + " +
       fixed(fit.b_bytes_per_param, 3) + " B/param, the line through the paper's googlenet_25 and resnet152_75 P) = " +
       mb(static_cast<double>(persistent)) + " MB. ";

  s += "E = batch x peak live activations of " + std::string(inference ? "a forward pass" : "an iteration") + " = " +
       std::to_string(batch) + " x ";
  if (inference) {
    s += mb(static_cast<double>(f.infer_peak_bytes), 2) + " MB";
    if (f.infer_peak_workspace > 0) s += " (of which " + mb(static_cast<double>(f.infer_peak_workspace), 2) + " MB convolution workspace)";
  } else {
    s += "(" + mb(static_cast<double>(f.train_peak_saved), 2) + " MB kept for backward + " +
         mb(static_cast<double>(f.train_peak_transient), 2) + " MB gradients and tensors in flight + " +
         mb(static_cast<double>(f.train_peak_workspace), 2) + " MB convolution workspace)";
  }
  s += " = " + mb(static_cast<double>(ephemeral)) + " MB; peak P + E = " + mb(static_cast<double>(peak())) +
       " MB, average P + u E / 2 = " + mb(static_cast<double>(average())) + " MB. ";

  s += "GPU " + fixed(gpu_ms, 3) + " ms: " + fixed((inference ? 2.0 : 6.0) * f.forward_macs * b / 1e9, 1) + " GFLOP" +
       (inference ? "" : " forward + backward") + " at " + pct(kWinogradConvEfficiency) + " (3x3 convolutions) / " +
       pct(kConvEfficiency) + " (other convolutions) / " + pct(kGemmEfficiency) + " (matrix products) of " +
       fixed(kPeakFlops / 1e12, 1) + " TFLOP/s = " + fixed(compute_ms, 3) + " ms, the rest memory-bound at " +
       pct(kMemoryEfficiency) + " of " + fixed(kPeakBytesPerS / 1e9, 0) + " GB/s, >= " + fixed(kMinKernelNs / 1e3, 0) +
       " us per kernel" + (inference ? "" : ", plus the optimizer update") + ". Host " + fixed(host_ms, 3) + " ms: " +
       std::to_string(host_ops) + " ops x " + fixed(kHostOpNs / 1e3, 0) + " us dispatch";
  if (!synthetic) {
    s += " + " + std::to_string(batch) + " x " + fixed(static_cast<double>(f.host_input_bytes) / 1e3, 1) +
         " kB input prepared at " + fixed(kHostInputBytesPerS / 1e9, 2) + " GB/s";
  }
  s += ". Iteration = GPU + host = " + fixed(iter_ms(), 3) + " ms, u = GPU / iteration = " + fixed(gpu_util(), 3) +
       ". MB = 1e6 B, stored in MiB";
  return s;
}

std::vector<DerivedWorkload> derive_catalog() {
  std::vector<DerivedWorkload> out;
  for (const ModelInfo& m : models()) {
    for (const std::string& v : m.variants) out.push_back(derive_workload(m.name, v, false));
    if (m.from_paper) out.push_back(derive_workload(m.name, m.variants.front(), true));
  }
  return out;
}

std::string catalog_json() {
  const OverheadFit& fit = overhead_fit();
  const std::string notes =
      "Generated by salus-catalog (traces/derivation.cpp); do not edit by hand. Every figure is estimated from the "
      "model's layer list, not measured: P = weights (+ gradients and optimizer state when training) + running "
      "statistics + the synthetic batch when the data lives on the GPU + framework overhead a + b x params with a = " +
      mb(fit.a_bytes, 2) + " MB and b = " + fixed(fit.b_bytes_per_param, 3) +
      " B/param, the line through the paper's googlenet_25 (110.9 MB) and resnet152_75 (822.2 MB) persistent figures; "
      "E = batch x the peak of live activations over the iteration (kept for backward, gradients and tensors in "
      "flight, convolution workspace of one copy of the running convolution's inputs and output); average memory "
      "P + u E / 2. GPU time per layer = max(FLOPs / (" + fixed(kPeakFlops / 1e12, 1) + " TFLOP/s x " +
      fixed(kWinogradConvEfficiency, 2) + " for 3x3 stride-1 convolutions (Winograd), " + fixed(kConvEfficiency, 2) +
      " other convolutions, " + fixed(kGemmEfficiency, 2) + " matrix products), bytes / (" +
      fixed(kPeakBytesPerS / 1e9, 0) + " GB/s x " + fixed(kMemoryEfficiency, 2) + ")), at least " +
      fixed(kMinKernelNs / 1e3, 0) + " us per kernel (P100 PCIe 16 GB). Host time = " + fixed(kHostOpNs / 1e3, 0) +
      " us per framework op + bytes of input prepared on the CPU / " + fixed(kHostInputBytesPerS / 1e9, 2) +
      " GB/s; these two constants are calibrated so that u = GPU / (GPU + host) is 1/1.07 for resnet50_50 and 1/2.38 "
      "for superres_128, the paper's PACK makespan gains for 300 such jobs. _infer entries are forward only at the "
      "smallest batch. MB = 1e6 B; the file stores MiB.";
  std::string s = "{\n";
  s += "  \"format\": \"salus-catalog/1\",\n";
  s += "  \"gpu\": \"NVIDIA P100 16 GB (derived from the architectures, not measured)\",\n";
  s += "  \"notes\": " + nlohmann::json(notes).dump() + ",\n";
  s += "  \"workloads\": [\n";
  const std::vector<DerivedWorkload> all = derive_catalog();
  for (std::size_t i = 0; i < all.size(); ++i) {
    const DerivedWorkload& w = all[i];
    s += "    {\n";
    s += "      \"name\": " + nlohmann::json(w.name).dump() + ",\n";
    s += "      \"persistent_mib\": " + fixed(core::to_mib(w.persistent), 2) + ",\n";
    s += "      \"ephemeral_mib\": " + fixed(core::to_mib(w.ephemeral), 2) + ",\n";
    s += "      \"iter_ms\": " + fixed(w.iter_ms(), 3) + ",\n";
    s += "      \"gpu_util\": " + fixed(w.gpu_util(), 3) + ",\n";
    s += "      \"source\": " + nlohmann::json(w.source()).dump() + "\n";
    s += i + 1 < all.size() ? "    },\n" : "    }\n";
  }
  s += "  ]\n}\n";
  return s;
}

}  // namespace salus::traces
