#pragma once
/// The layer graph every architecture of the model zoo is written in: one small IR that both the
/// analytic catalog (traces/derivation.cpp) and the runnable networks (gpu_backend/models.cpp)
/// are built from, so the two cannot describe different networks.
///
/// A graph is a list of layers in topological order; each layer names the earlier layers it reads
/// and has one output whose shape is per sample (the batch is not part of the graph): images are
/// channels x height x width, sequences are features (c) x steps (h) x 1. Shapes are computed when
/// a layer is added, with TensorFlow's rules (SAME padding: output = ceil(input / stride)).
/// A layer that cannot have the shape asked for (an empty convolution output, a residual add of
/// different shapes) is a bug in a model description: std::logic_error (SALUS_INVARIANT).
#include <cstdint>
#include <string_view>
#include <vector>

namespace salus::workloads {

/// Padding value meaning TensorFlow's SAME: output = ceil(input / stride), the padding split with
/// the odd pixel at the bottom/right. Any other value is explicit symmetric padding (0 = VALID).
inline constexpr int kSame = -1;

enum class Op {
  kInput,           ///< data: images, or a sequence of features or ids
  kConv,            ///< 2-D convolution (cross-correlation), optional bias
  kFullyConnected,  ///< matrix product over the flattened input (rows = 1) or per step (rows = steps)
  kBatchNorm,       ///< batch normalisation over channels: beta, optional gamma, running statistics
  kRelu,
  kClippedRelu,     ///< min(relu(x), 20), Deep Speech
  kSigmoid,
  kMaxPool,
  kAvgPool,
  kSpatialMean,     ///< mean over height and width (TF reduce_mean), output c x 1 x 1
  kAdd,             ///< residual add: in[0] the shortcut, in[1] the residual branch
  kConcat,          ///< channel concatenation (inception modules, bidirectional LSTM)
  kDropout,
  kSoftmaxLoss,     ///< softmax cross-entropy over the logits' features (one class each)
  kMseLoss,
  kBceLoss,
  kCtcLoss,
  kLstm,            ///< one LSTM layer (BasicLSTMCell) over the steps of a sequence
  kEmbedding,       ///< lookup of a sequence of ids into a table
  kPixelShuffle,    ///< sub-pixel rearrangement (c r^2, h, w) -> (c, h r, w r)
  kReparameterize,  ///< VAE sampling z = mu + eps exp(logvar / 2) and its KL term
};

/// "conv", "batch_norm", ...: for messages.
std::string_view op_name(Op op);

/// How the reference program runs a recurrent layer over its steps.
enum class Recurrence {
  kDynamicRnn,     ///< tf.nn.dynamic_rnn: a while loop with TensorArrays
  kStaticUnroll,   ///< a Python loop that unrolls every step into the graph
};

/// One layer's output, per sample.
struct Shape {
  int c = 1, h = 1, w = 1;
  std::int64_t elements() const { return static_cast<std::int64_t>(c) * h * w; }
  bool operator==(const Shape&) const = default;
};

struct Layer {
  Op op = Op::kInput;
  std::vector<int> in;  ///< layers read, all earlier in the graph
  Shape out;            ///< output per sample
  /// kConv, kMaxPool, kAvgPool: window, strides and padding (kSame or symmetric explicit).
  int kh = 1, kw = 1, sh = 1, sw = 1, pad = 0;
  /// kConv, kFullyConnected: a bias per output feature.
  bool bias = false;
  /// kFullyConnected: independent rows per sample (1 = the flattened input, else one per step)
  /// of in_features each.
  int rows = 1;
  std::int64_t in_features = 0;
  /// kBatchNorm: a learned scale gamma besides the shift beta.
  bool scale = false;
  /// kLstm: hidden units and how the loop over steps runs.
  int hidden = 0;
  Recurrence recurrence = Recurrence::kStaticUnroll;
  /// kEmbedding: vocabulary size (the width is out.c).
  int vocab = 0;
  /// kPixelShuffle: upscale factor r.
  int factor = 1;
  /// kInput: the data is a synthetic batch generated on the device and held there for the whole
  /// job (tf_cnn_benchmarks' synthetic data), rather than prepared and fed by the host.
  bool on_device = false;
};

/// Trainable parameters and non-trainable state of one layer, in elements (floats).
struct LayerParameters {
  std::int64_t trainable = 0;  ///< weights, biases, batch-norm gamma and beta, embeddings
  std::int64_t running = 0;    ///< batch-norm running mean and variance
  int tensors = 0;             ///< trainable variables (weight, bias, gamma, beta are one each)
};

class Graph {
 public:
  // --- Building: each returns the new layer's id -------------------------------------------
  int input(int c, int h, int w, bool on_device);
  /// Convolution with `filters` output channels, a kh x kw window, strides sh, sw and padding
  /// kSame or explicit symmetric.
  int conv(int x, int filters, int kh, int kw, int sh, int sw, int pad, bool bias);
  /// Fully connected over the flattened input: units outputs per sample.
  int fully_connected(int x, int units, bool bias = true);
  /// Fully connected applied to every step of a sequence (c features x h steps): units x h.
  int fully_connected_per_step(int x, int units);
  int batch_norm(int x, bool scale);
  int relu(int x);
  int clipped_relu(int x);
  int sigmoid(int x);
  int max_pool(int x, int window, int stride, int pad);
  int avg_pool(int x, int window, int stride, int pad);
  int spatial_mean(int x);
  /// Residual add of a shortcut and a residual branch of the same shape.
  int add(int shortcut, int branch);
  int concat(const std::vector<int>& xs);
  int dropout(int x);
  int softmax_loss(int logits);
  int mse_loss(int prediction, int target);
  int bce_loss(int prediction, int target);
  int ctc_loss(int logits);
  int lstm(int x, int hidden, Recurrence recurrence);
  int embedding(int ids, int vocab, int width);
  int pixel_shuffle(int x, int factor);
  int reparameterize(int mu, int logvar);

  // --- Reading --------------------------------------------------------------------------------
  const std::vector<Layer>& layers() const { return layers_; }
  const Layer& at(int id) const { return layers_[static_cast<std::size_t>(id)]; }
  int size() const { return static_cast<int>(layers_.size()); }

 private:
  int push(Layer l);
  Layer like(Op op, int x) const;
  Layer loss(Op op, std::vector<int> xs) const;

  std::vector<Layer> layers_;
};

/// Output size of a window of k with stride s and padding pad (kSame or explicit) over n.
int window_output(int n, int k, int s, int pad);
/// The parameters of layer `id` of `g`.
LayerParameters layer_parameters(const Graph& g, int id);
/// Sums over the graph.
LayerParameters parameters(const Graph& g);

}  // namespace salus::workloads
