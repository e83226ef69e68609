#pragma once
/// A trainable network on the Ops interface: a small graph of layers (convolution, batch
/// normalisation, ReLU, pooling, fully connected, residual add, concatenation) ending in softmax
/// cross-entropy, trained with SGD with momentum on a fixed synthetic batch generated on the device.
///
/// Memory follows the paper's split. Persistent (one block from the pool's persistent region, for
/// as long as the job is admitted): weights, gradients, momentum, batch-norm running statistics,
/// the synthetic batch and its labels. Ephemeral (the lane's region, released at every iteration
/// boundary): activations, their gradients, batch-norm saved statistics and convolution workspace.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gpu_backend/memory_pool.h"
#include "gpu_backend/ops.h"

namespace salus::gpu {

class GradientBuffers;  // gradient_buffers.h

struct Dims {
  int n = 1, c = 1, h = 1, w = 1;
  std::int64_t count() const { return static_cast<std::int64_t>(n) * c * h * w; }
  std::int64_t per_sample() const { return static_cast<std::int64_t>(c) * h * w; }
};

struct TrainConfig {
  float learning_rate = 0.01f;
  float momentum = 0.9f;
  float weight_decay = 1e-4f;
};

class Network {
 public:
  /// A network for mini-batches of `batch` samples.
  explicit Network(int batch);

  // --- Building (node ids are returned and passed on) ---------------------------------------
  int input(int c, int h, int w);
  int conv(int x, int k, int kernel, int stride = 1, int pad = 0);
  int conv(int x, int k, int kh, int kw, int sh, int sw, int ph, int pw);
  /// Batch normalisation; zero_gamma starts its scale at 0 (the last one of a residual branch,
  /// so that the block starts as the identity, as Goyal et al. train ResNets).
  int batchnorm(int x, bool zero_gamma = false);
  int relu(int x);
  int maxpool(int x, int window, int stride, int pad = 0);
  int avgpool(int x, int window, int stride, int pad = 0);
  /// Fully connected over the flattened input.
  int fc(int x, int out);
  int add(int a, int b);
  int concat(const std::vector<int>& xs);
  /// conv + batchnorm + relu, the common unit of residual networks.
  int conv_bn_relu(int x, int k, int kernel, int stride, int pad);
  /// Softmax cross-entropy of `logits` against synthetic labels in [0, classes).
  void set_loss(int logits, int classes);

  // --- Figures -------------------------------------------------------------------------------
  int batch() const { return batch_; }
  const Dims& dims(int node) const { return nodes_[static_cast<std::size_t>(node)].out; }
  /// Trainable parameters (weights, biases, batch-norm scales and shifts).
  std::int64_t parameters() const { return param_count_; }
  /// Length in floats of each parameter array (weights, gradients, momentum): parameters() with
  /// every layer's weights and biases starting on a 256-byte boundary (zero padding between).
  std::int64_t parameter_floats() const { return params_; }
  /// P: weights, gradients, momentum, batch-norm running statistics, batch, labels, loss.
  Bytes persistent_bytes() const;
  /// E: the lane memory one iteration needs on this Ops' device (training or inference),
  /// library workspaces included (the convolutions' and, with fully connected layers, cuBLAS's:
  /// one buffer of the largest of them, as they run one after another on the context's stream).
  Bytes ephemeral_bytes(Ops& ops, bool train) const;

  // --- Running -------------------------------------------------------------------------------
  /// Places the persistent state in [block, block + persistent_bytes()) and initialises it on
  /// the device: He-uniform weights (U(+-1/sqrt(fan_in)) for classifiers and deep networks
  /// without batch norm), zero biases and momentum, unit batch-norm scales, a
  /// synthetic batch in [-1, 1) and labels, all from `seed`.
  void bind(Ops& ops, std::byte* block, std::uint64_t seed);
  /// One training iteration (forward, backward, SGD) with all ephemeral memory from `lane`
  /// (reset first). Returns the loss when read_loss (synchronising), else NaN.
  float train_step(Ops& ops, Arena& lane, const TrainConfig& cfg, bool read_loss);
  /// One inference iteration: forward pass only.
  void infer_step(Ops& ops, Arena& lane);
  /// The loss of the last pass, copied to the host (waits for the context's work).
  float read_loss(Ops& ops) const;

 private:
  enum class Kind { kInput, kConv, kBatchNorm, kRelu, kPool, kFc, kAdd, kConcat };
  struct Node {
    Kind kind = Kind::kInput;
    std::vector<int> in;
    Dims out;
    ConvShape conv;
    PoolShape pool;
    int fc_in = 0, fc_out = 0;
    std::int64_t w = -1, b = -1;  // offsets (floats) into the parameter arrays
    std::int64_t stats = -1;      // offset (floats) of running mean, then running var
    bool zero_gamma = false;
  };
  int push(Node n);
  /// Offset (floats) of a new parameter sub-buffer of `count` floats, 256-byte aligned.
  std::int64_t take_params(std::int64_t count);
  const Node& node(int i) const { return nodes_[static_cast<std::size_t>(i)]; }
  /// The forward (and with train, backward) pass. With ops == nullptr only allocates from the
  /// (counting) arena, to size the ephemeral region exactly as a real pass would use it.
  void pass(Ops* ops, Arena& lane, bool train, Bytes workspace) const;
  // The pass's steps (model.cpp), in the order pass() calls them; each allocates from the lane in
  // the same order with and without ops.
  /// Each node's output (y) and, for batch norm in training, its saved mean and 1/std (save).
  struct Activations {
    std::vector<float*> y;
    std::vector<float*> save;
  };
  /// The convolutions' and GEMMs' workspace, at the start of the lane.
  struct Workspace {
    void* ptr = nullptr;
    Bytes bytes = 0;
  };
  /// Node i's output from its inputs' (allocated from the lane, or its input's buffer for a ReLU
  /// in place).
  void forward_node(Ops* ops, Arena& lane, bool train, std::size_t i, Activations& a, Workspace ws) const;
  /// From the loss's gradient back to the weights' (dw_), the gradients in a GradientBuffers heap
  /// after the forward buffers; its high-water mark is then taken from the lane.
  void backward(Ops* ops, Arena& lane, const Activations& a, const float* probs, Workspace ws) const;
  /// Node r's backward step for a layer of one input (convolution, batch norm, ReLU, pooling,
  /// fully connected): its weights' gradient, and its input's unless that is the input batch.
  void backward_layer(Ops* ops, std::size_t r, const Activations& a, GradientBuffers& g, Workspace ws) const;
  /// Node r's backward step for a residual add or a concatenation: each input's share of dy.
  void backward_fan_in(Ops* ops, std::size_t r, GradientBuffers& g) const;
  Bytes workspace_bytes(Ops& ops) const;
  bool relu_in_place(int node) const;

  int batch_;
  std::vector<Node> nodes_;
  std::int64_t params_ = 0;       // floats in each parameter array, padding included
  std::int64_t param_count_ = 0;  // parameters without the padding
  std::int64_t stats_ = 0;
  int logits_ = -1;
  int classes_ = 0;
  // Bound persistent state (device pointers).
  float* w_ = nullptr;
  float* dw_ = nullptr;
  float* v_ = nullptr;
  float* running_ = nullptr;
  float* batch_data_ = nullptr;
  std::int32_t* labels_ = nullptr;
  float* loss_ = nullptr;
  mutable Bytes workspace_cache_ = -1;
};

/// Models by workload name "<model>_<batch>" (e.g. "resnet50_25", "lenet_32"):
/// lenet, mlp, alexnet, vgg11, vgg16, vgg19, resnet50, resnet101, resnet152, googlenet, overfeat.
/// Throws core::InputError naming the valid models for anything else.
std::unique_ptr<Network> build_model(const std::string& workload);
std::vector<std::string> model_names();
/// True when `workload` names a model build_model() knows.
bool is_model(const std::string& workload);

/// A workload the real backend runs: "<model>_<batch>" trains, "<model>_<batch>_infer" runs the
/// forward pass only.
struct RealWorkload {
  std::string model;  ///< "<model>_<batch>", for build_model()
  bool inference = false;
};
/// Splits off "_infer"; nullopt when the rest is not a model build_model() knows.
std::optional<RealWorkload> parse_real_workload(const std::string& workload);
/// "<model>_<batch>[_infer] with model one of lenet, mlp, ...", for messages.
std::string real_workload_help();

}  // namespace salus::gpu
