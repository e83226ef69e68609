#include "workloads/graph.h"

#include <string>

#include "core/errors.h"

namespace salus::workloads {

std::string_view op_name(Op op) {
  switch (op) {
    case Op::kInput: return "input";
    case Op::kConv: return "conv";
    case Op::kFullyConnected: return "fully_connected";
    case Op::kBatchNorm: return "batch_norm";
    case Op::kRelu: return "relu";
    case Op::kClippedRelu: return "clipped_relu";
    case Op::kSigmoid: return "sigmoid";
    case Op::kMaxPool: return "max_pool";
    case Op::kAvgPool: return "avg_pool";
    case Op::kSpatialMean: return "spatial_mean";
    case Op::kAdd: return "add";
    case Op::kConcat: return "concat";
    case Op::kDropout: return "dropout";
    case Op::kSoftmaxLoss: return "softmax_loss";
    case Op::kMseLoss: return "mse_loss";
    case Op::kBceLoss: return "bce_loss";
    case Op::kCtcLoss: return "ctc_loss";
    case Op::kLstm: return "lstm";
    case Op::kEmbedding: return "embedding";
    case Op::kPixelShuffle: return "pixel_shuffle";
    case Op::kReparameterize: return "reparameterize";
  }
  return "?";
}

int window_output(int n, int k, int s, int pad) {
  if (pad == kSame) return (n + s - 1) / s;
  return (n + 2 * pad - k) / s + 1;
}

int Graph::push(Layer l) {
  for (int i : l.in) SALUS_INVARIANT(i >= 0 && i < size(), "a layer reads earlier layers", std::to_string(i));
  SALUS_INVARIANT(l.out.c > 0 && l.out.h > 0 && l.out.w > 0, "layer output not empty",
                  std::string(op_name(l.op)) + " at " + std::to_string(size()));
  layers_.push_back(std::move(l));
  return size() - 1;
}

Layer Graph::like(Op op, int x) const {
  Layer l;
  l.op = op;
  l.in = {x};
  l.out = at(x).out;
  return l;
}

Layer Graph::loss(Op op, std::vector<int> xs) const {
  Layer l;
  l.op = op;
  l.in = std::move(xs);
  l.out = Shape{};
  return l;
}

int Graph::input(int c, int h, int w, bool on_device) {
  Layer l;
  l.out = {c, h, w};
  l.on_device = on_device;
  return push(l);
}

int Graph::conv(int x, int filters, int kh, int kw, int sh, int sw, int pad, bool bias) {
  const Shape& src = at(x).out;
  Layer l;
  l.op = Op::kConv;
  l.in = {x};
  l.kh = kh;
  l.kw = kw;
  l.sh = sh;
  l.sw = sw;
  l.pad = pad;
  l.bias = bias;
  l.out = {filters, window_output(src.h, kh, sh, pad), window_output(src.w, kw, sw, pad)};
  return push(l);
}

int Graph::fully_connected(int x, int units, bool bias) {
  Layer l;
  l.op = Op::kFullyConnected;
  l.in = {x};
  l.bias = bias;
  l.rows = 1;
  l.in_features = at(x).out.elements();
  l.out = {units, 1, 1};
  return push(l);
}

int Graph::fully_connected_per_step(int x, int units) {
  const Shape& src = at(x).out;
  Layer l;
  l.op = Op::kFullyConnected;
  l.in = {x};
  l.bias = true;
  l.rows = src.h;
  l.in_features = src.c;
  l.out = {units, src.h, 1};
  return push(l);
}

int Graph::batch_norm(int x, bool scale) {
  Layer l = like(Op::kBatchNorm, x);
  l.scale = scale;
  return push(l);
}

int Graph::relu(int x) { return push(like(Op::kRelu, x)); }
int Graph::clipped_relu(int x) { return push(like(Op::kClippedRelu, x)); }
int Graph::sigmoid(int x) { return push(like(Op::kSigmoid, x)); }

int Graph::max_pool(int x, int window, int stride, int pad) {
  Layer l = like(Op::kMaxPool, x);
  l.kh = l.kw = window;
  l.sh = l.sw = stride;
  l.pad = pad;
  l.out.h = window_output(l.out.h, window, stride, pad);
  l.out.w = window_output(l.out.w, window, stride, pad);
  return push(l);
}

int Graph::avg_pool(int x, int window, int stride, int pad) {
  Layer l = like(Op::kAvgPool, x);
  l.kh = l.kw = window;
  l.sh = l.sw = stride;
  l.pad = pad;
  l.out.h = window_output(l.out.h, window, stride, pad);
  l.out.w = window_output(l.out.w, window, stride, pad);
  return push(l);
}

int Graph::spatial_mean(int x) {
  Layer l = like(Op::kSpatialMean, x);
  l.out.h = l.out.w = 1;
  return push(l);
}

int Graph::add(int shortcut, int branch) {
  SALUS_INVARIANT(at(shortcut).out == at(branch).out, "residual add of equal shapes",
                  std::to_string(shortcut) + ", " + std::to_string(branch));
  Layer l = like(Op::kAdd, shortcut);
  l.in = {shortcut, branch};
  return push(l);
}

int Graph::concat(const std::vector<int>& xs) {
  SALUS_INVARIANT(!xs.empty(), "concat of something", std::to_string(size()));
  Layer l = like(Op::kConcat, xs.front());
  l.in = xs;
  l.out.c = 0;
  for (int x : xs) {
    SALUS_INVARIANT(at(x).out.h == l.out.h && at(x).out.w == l.out.w, "concat of equal spatial sizes",
                    std::to_string(x));
    l.out.c += at(x).out.c;
  }
  return push(l);
}

int Graph::dropout(int x) { return push(like(Op::kDropout, x)); }
int Graph::softmax_loss(int logits) { return push(loss(Op::kSoftmaxLoss, {logits})); }
int Graph::mse_loss(int prediction, int target) { return push(loss(Op::kMseLoss, {prediction, target})); }
int Graph::bce_loss(int prediction, int target) { return push(loss(Op::kBceLoss, {prediction, target})); }
int Graph::ctc_loss(int logits) { return push(loss(Op::kCtcLoss, {logits})); }

int Graph::lstm(int x, int hidden, Recurrence recurrence) {
  const Shape& src = at(x).out;
  Layer l;
  l.op = Op::kLstm;
  l.in = {x};
  l.hidden = hidden;
  l.recurrence = recurrence;
  l.in_features = src.c;
  l.out = {hidden, src.h, 1};
  return push(l);
}

int Graph::embedding(int ids, int vocab, int width) {
  Layer l = like(Op::kEmbedding, ids);
  l.vocab = vocab;
  l.out.c = width;
  return push(l);
}

int Graph::pixel_shuffle(int x, int factor) {
  Layer l = like(Op::kPixelShuffle, x);
  SALUS_INVARIANT(l.out.c % (factor * factor) == 0, "pixel shuffle of factor^2 x channels", std::to_string(l.out.c));
  l.factor = factor;
  l.out.c /= factor * factor;
  l.out.h *= factor;
  l.out.w *= factor;
  return push(l);
}

int Graph::reparameterize(int mu, int logvar) {
  SALUS_INVARIANT(at(mu).out == at(logvar).out, "mu and logvar of equal shapes",
                  std::to_string(mu) + ", " + std::to_string(logvar));
  Layer l = like(Op::kReparameterize, mu);
  l.in = {mu, logvar};
  return push(l);
}

LayerParameters layer_parameters(const Graph& g, int id) {
  const Layer& l = g.at(id);
  LayerParameters p;
  switch (l.op) {
    case Op::kConv: {
      const std::int64_t weights = static_cast<std::int64_t>(l.kh) * l.kw * g.at(l.in.front()).out.c * l.out.c;
      p.trainable = weights + (l.bias ? l.out.c : 0);
      p.tensors = l.bias ? 2 : 1;
      break;
    }
    case Op::kFullyConnected:
      p.trainable = l.in_features * l.out.c + (l.bias ? l.out.c : 0);
      p.tensors = l.bias ? 2 : 1;
      break;
    case Op::kBatchNorm:
      p.trainable = (l.scale ? 2 : 1) * static_cast<std::int64_t>(l.out.c);
      p.running = 2 * static_cast<std::int64_t>(l.out.c);
      p.tensors = l.scale ? 2 : 1;
      break;
    case Op::kLstm:
      // One (in + hidden) x 4 hidden matrix for the four gates, and their biases.
      p.trainable = (l.in_features + l.hidden + 1) * 4 * static_cast<std::int64_t>(l.hidden);
      p.tensors = 2;
      break;
    case Op::kEmbedding:
      p.trainable = static_cast<std::int64_t>(l.vocab) * l.out.c;
      p.tensors = 1;
      break;
    default: break;
  }
  return p;
}

LayerParameters parameters(const Graph& g) {
  LayerParameters sum;
  for (int i = 0; i < g.size(); ++i) {
    const LayerParameters p = layer_parameters(g, i);
    sum.trainable += p.trainable;
    sum.running += p.running;
    sum.tensors += p.tensors;
  }
  return sum;
}

}  // namespace salus::workloads
