#include "gpu_backend/model.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/errors.h"
#include "gpu_backend/gradient_buffers.h"

namespace salus::gpu {

namespace {

/// `count` floats rounded up to whole 256-byte units: every weight, bias and statistics
/// sub-buffer of the persistent block, and the saved statistics in the lane, start on a 256-byte
/// boundary, as cuDNN's and cuBLAS's vectorised kernels want their operands.
std::int64_t aligned_floats(std::int64_t count) {
  constexpr std::int64_t kUnit = kAlignment / static_cast<std::int64_t>(sizeof(float));
  return (count + kUnit - 1) / kUnit * kUnit;
}

}  // namespace

Network::Network(int batch) : batch_(batch) {
  SALUS_INVARIANT(batch > 0, "positive batch", std::to_string(batch));
}

std::int64_t Network::take_params(std::int64_t count) {
  const std::int64_t at = params_;
  params_ += aligned_floats(count);
  param_count_ += count;
  return at;
}

int Network::push(Node n) {
  nodes_.push_back(std::move(n));
  return static_cast<int>(nodes_.size()) - 1;
}

int Network::input(int c, int h, int w) {
  Node n;
  n.kind = Kind::kInput;
  n.out = {batch_, c, h, w};
  return push(n);
}

int Network::conv(int x, int k, int kernel, int stride, int pad) { return conv(x, k, kernel, kernel, stride, stride, pad, pad); }

int Network::conv(int x, int k, int kh, int kw, int sh, int sw, int ph, int pw) {
  const Dims& d = dims(x);
  Node n;
  n.kind = Kind::kConv;
  n.in = {x};
  n.conv = ConvShape{d.n, d.c, d.h, d.w, k, kh, kw, ph, pw, sh, sw};
  SALUS_INVARIANT(n.conv.out_h() > 0 && n.conv.out_w() > 0, "convolution output not empty", std::to_string(nodes_.size()));
  n.out = {d.n, k, n.conv.out_h(), n.conv.out_w()};
  n.w = take_params(static_cast<std::int64_t>(k) * d.c * kh * kw);
  n.b = take_params(k);
  return push(n);
}

int Network::batchnorm(int x, bool zero_gamma) {
  Node n;
  n.kind = Kind::kBatchNorm;
  n.zero_gamma = zero_gamma;
  n.in = {x};
  n.out = dims(x);
  n.w = take_params(n.out.c);  // gamma, then beta
  n.b = take_params(n.out.c);
  n.stats = stats_;  // running mean, then (at stats + aligned_floats(c)) running variance
  stats_ += 2 * aligned_floats(n.out.c);
  return push(n);
}

int Network::relu(int x) {
  Node n;
  n.kind = Kind::kRelu;
  n.in = {x};
  n.out = dims(x);
  return push(n);
}

namespace {
PoolShape pool_shape(PoolMode mode, const Dims& d, int window, int stride, int pad) {
  PoolShape p;
  p.mode = mode;
  p.n = d.n;
  p.c = d.c;
  p.h = d.h;
  p.w = d.w;
  p.window_h = p.window_w = window;
  p.stride_h = p.stride_w = stride;
  p.pad_h = p.pad_w = pad;
  return p;
}
}  // namespace

int Network::maxpool(int x, int window, int stride, int pad) {
  Node n;
  n.kind = Kind::kPool;
  n.in = {x};
  n.pool = pool_shape(PoolMode::kMax, dims(x), window, stride, pad);
  n.out = {n.pool.n, n.pool.c, n.pool.out_h(), n.pool.out_w()};
  return push(n);
}

int Network::avgpool(int x, int window, int stride, int pad) {
  Node n;
  n.kind = Kind::kPool;
  n.in = {x};
  n.pool = pool_shape(PoolMode::kAverage, dims(x), window, stride, pad);
  n.out = {n.pool.n, n.pool.c, n.pool.out_h(), n.pool.out_w()};
  return push(n);
}

int Network::fc(int x, int out) {
  const Dims& d = dims(x);
  Node n;
  n.kind = Kind::kFc;
  n.in = {x};
  n.fc_in = static_cast<int>(d.per_sample());
  n.fc_out = out;
  n.out = {d.n, out, 1, 1};
  n.w = take_params(static_cast<std::int64_t>(out) * n.fc_in);
  n.b = take_params(out);
  return push(n);
}

int Network::add(int a, int b) {
  const Dims& da = dims(a);
  const Dims& db = dims(b);
  SALUS_INVARIANT(da.count() == db.count() && da.c == db.c, "residual add of equal shapes",
                  std::to_string(a) + ", " + std::to_string(b));
  Node n;
  n.kind = Kind::kAdd;
  n.in = {a, b};
  n.out = da;
  return push(n);
}

int Network::concat(const std::vector<int>& xs) {
  SALUS_INVARIANT(!xs.empty(), "concat of something", "");
  Node n;
  n.kind = Kind::kConcat;
  n.in = xs;
  n.out = dims(xs.front());
  n.out.c = 0;
  for (int x : xs) {
    SALUS_INVARIANT(dims(x).h == n.out.h && dims(x).w == n.out.w, "concat of equal spatial sizes", std::to_string(x));
    n.out.c += dims(x).c;
  }
  return push(n);
}

int Network::conv_bn_relu(int x, int k, int kernel, int stride, int pad) {
  return relu(batchnorm(conv(x, k, kernel, stride, pad)));
}

bool Network::relu_in_place(int i) const {
  const Node& n = node(i);
  if (n.kind != Kind::kRelu) return false;
  const Kind in = node(n.in.front()).kind;
  if (in != Kind::kConv && in != Kind::kFc && in != Kind::kBatchNorm && in != Kind::kAdd) return false;
  int readers = 0;
  for (const Node& o : nodes_) {
    for (int k : o.in) readers += k == n.in.front();
  }
  return readers == 1 && n.in.front() != logits_;
}

void Network::set_loss(int logits, int classes) {
  SALUS_INVARIANT(dims(logits).per_sample() == classes, "logits have one value per class", std::to_string(classes));
  logits_ = logits;
  classes_ = classes;
}

namespace {
Bytes floats(std::int64_t n) { return align_up(n * static_cast<Bytes>(sizeof(float))); }
}  // namespace

Bytes Network::persistent_bytes() const {
  const Dims& in = dims(0);
  return 3 * floats(params_) + floats(stats_) + floats(in.count()) +
         align_up(static_cast<Bytes>(batch_) * static_cast<Bytes>(sizeof(std::int32_t))) + floats(1);
}

Bytes Network::workspace_bytes(Ops& ops) const {
  if (workspace_cache_ >= 0) return workspace_cache_;
  Bytes ws = 0;
  bool gemm = false;
  for (const Node& n : nodes_) {
    if (n.kind == Kind::kConv) ws = std::max(ws, ops.conv_workspace_bytes(n.conv));
    gemm |= n.kind == Kind::kFc;
  }
  if (gemm) ws = std::max(ws, ops.blas_workspace_bytes());
  workspace_cache_ = ws;
  return ws;
}

Bytes Network::ephemeral_bytes(Ops& ops, bool train) const {
  Arena counting;
  pass(nullptr, counting, train, workspace_bytes(ops));
  return counting.peak();
}

void Network::bind(Ops& ops, std::byte* block, std::uint64_t seed) {
  SALUS_INVARIANT(logits_ >= 0, "network has a loss", "");
  Arena a(block, persistent_bytes());
  w_ = a.allocate_array<float>(params_);
  dw_ = a.allocate_array<float>(params_);
  v_ = a.allocate_array<float>(params_);
  running_ = a.allocate_array<float>(stats_);
  batch_data_ = a.allocate_array<float>(dims(0).count());
  labels_ = a.allocate_array<std::int32_t>(batch_);
  loss_ = a.allocate_array<float>(1);
  // The padding between sub-buffers is never read by a layer but is updated by SGD over the whole
  // arrays: zeros, which SGD keeps at zero (weights first, then each layer's own values).
  ops.fill(params_, w_, 0.0f);
  ops.fill(params_, dw_, 0.0f);
  std::uint64_t stream = seed * 1000;
  int weight_layers = 0;
  for (const Node& n : nodes_) weight_layers += n.kind == Kind::kConv || n.kind == Kind::kFc;
  const bool deep_plain = stats_ == 0 && weight_layers > 5;
  for (const Node& n : nodes_) {
    switch (n.kind) {
      case Kind::kConv:
      case Kind::kFc: {
        const std::int64_t fan_in = n.kind == Kind::kFc ? n.fc_in : static_cast<std::int64_t>(n.conv.c) * n.conv.r * n.conv.s;
        const std::int64_t count = (n.kind == Kind::kFc ? n.fc_out : n.conv.k) * fan_in;
        // He-uniform, U(+-sqrt(6 / fan_in)), keeps the signal's scale through ReLU layers and
        // lets shallow and batch-normalised networks learn fast. Deep stacks without batch norm
        // (alexnet, vgg, overfeat, googlenet) take U(+-1/sqrt(fan_in)), with which SGD at lr 0.01
        // stays finite on them, and every classifier does, so the first loss is near
        // log(classes) rather than large enough to diverge.
        const bool classifier = static_cast<int>(&n - nodes_.data()) == logits_;
        const float bound = (classifier || deep_plain ? 1.0f : std::sqrt(6.0f)) / std::sqrt(static_cast<float>(fan_in));
        ops.fill_uniform(count, w_ + n.w, -bound, bound, ++stream);
        ops.fill(n.kind == Kind::kFc ? n.fc_out : n.conv.k, w_ + n.b, 0.0f);
        break;
      }
      case Kind::kBatchNorm:
        ops.fill(n.out.c, w_ + n.w, n.zero_gamma ? 0.0f : 1.0f);
        ops.fill(n.out.c, w_ + n.b, 0.0f);
        ops.fill(n.out.c, running_ + n.stats, 0.0f);
        ops.fill(n.out.c, running_ + n.stats + aligned_floats(n.out.c), 1.0f);
        break;
      default: break;
    }
  }
  ops.fill(params_, v_, 0.0f);
  ops.fill_uniform(dims(0).count(), batch_data_, -1.0f, 1.0f, seed * 1000 + 999);
  ops.fill_labels(batch_, labels_, classes_, seed * 1000 + 998);
  ops.synchronize();
}

namespace {

/// Gives the context's GEMMs the lane's workspace for one pass and takes it back at the end
/// (also when the pass throws), so that no later GEMM of the context can write into a region that
/// has gone to another job by then. The kernels already enqueued keep the workspace they were
/// launched with; the region stays reserved until the context has been synchronised.
class BlasWorkspace {
 public:
  BlasWorkspace(Ops* ops, void* workspace, Bytes bytes) : ops_(ops) {
    if (ops_ != nullptr) ops_->set_blas_workspace(workspace, bytes);
  }
  ~BlasWorkspace() {
    if (ops_ == nullptr) return;
    try {
      ops_->set_blas_workspace(nullptr, 0);
    } catch (const std::exception&) {
      // Only after a device failure, which the pass reports itself.
    }
  }
  BlasWorkspace(const BlasWorkspace&) = delete;
  BlasWorkspace& operator=(const BlasWorkspace&) = delete;

 private:
  Ops* ops_;
};

}  // namespace

GradientBuffers::GradientBuffers(const Arena& lane, std::size_t nodes, Ops* ops)
    : heap_(lane.available(), lane.used(), lane.size()),
      base_(lane.next()),
      ops_(ops),
      g_(nodes, nullptr),
      offset_(nodes, -1) {}

float* GradientBuffers::allocate(std::int64_t count, Bytes* offset) {
  *offset = heap_.allocate(count * static_cast<Bytes>(sizeof(float)));
  return base_ == nullptr ? nullptr : reinterpret_cast<float*>(base_ + *offset);
}

float* GradientBuffers::create(std::size_t j, std::int64_t count) { return g_[j] = allocate(count, &offset_[j]); }

float* GradientBuffers::target(std::size_t j, std::int64_t count) {
  if (offset_[j] < 0) return create(j, count);
  return allocate(count, &scratch_);
}

void GradientBuffers::finish(std::size_t j, std::int64_t count, float* buf) {
  if (buf == g_[j] && scratch_ < 0) return;
  if (ops_) ops_->accumulate(count, buf, g_[j]);
  heap_.release(scratch_);
  scratch_ = -1;
}

// One pass. Allocation order is identical with and without ops, so the counting run measures
// exactly what a real iteration takes from its lane.
void Network::pass(Ops* ops, Arena& lane, bool train, Bytes workspace) const {
  lane.reset();
  Activations a{std::vector<float*>(nodes_.size(), nullptr), std::vector<float*>(nodes_.size(), nullptr)};
  const Workspace ws{workspace > 0 ? lane.allocate(workspace) : nullptr, workspace};
  const bool gemm = std::any_of(nodes_.begin(), nodes_.end(), [](const Node& n) { return n.kind == Kind::kFc; });
  const BlasWorkspace blas(gemm ? ops : nullptr, ws.ptr, ws.bytes);
  for (std::size_t i = 0; i < nodes_.size(); ++i) forward_node(ops, lane, train, i, a, ws);
  float* probs = lane.allocate_array<float>(static_cast<std::int64_t>(batch_) * classes_);
  if (ops) ops->softmax_xent_forward(batch_, classes_, a.y[static_cast<std::size_t>(logits_)], labels_, probs, loss_);
  if (train) backward(ops, lane, a, probs, ws);
}

void Network::forward_node(Ops* ops, Arena& lane, bool train, std::size_t i, Activations& a, Workspace ws) const {
  std::vector<float*>& y = a.y;
  const Node& n = nodes_[i];
  if (n.kind == Kind::kInput) {
    y[i] = batch_data_;
    return;
  }
  const float* x = y[static_cast<std::size_t>(n.in.front())];
  // ReLU overwrites its input when nothing else reads it: no backward pass needs the output of
  // a convolution, fully connected layer, batch norm or residual add, only their inputs.
  y[i] = relu_in_place(static_cast<int>(i)) ? y[static_cast<std::size_t>(n.in.front())]
                                            : lane.allocate_array<float>(n.out.count());
  switch (n.kind) {
    case Kind::kConv:
      if (ops) ops->conv_forward(n.conv, x, w_ + n.w, w_ + n.b, y[i], ws.ptr, ws.bytes);
      break;
    case Kind::kBatchNorm: {
      const std::int64_t c = aligned_floats(n.out.c);
      if (train) {
        float* save = a.save[i] = lane.allocate_array<float>(2 * c);
        if (ops) {
          ops->batchnorm_forward_train(n.out.n, n.out.c, n.out.h, n.out.w, x, w_ + n.w, w_ + n.b, y[i],
                                       running_ + n.stats, running_ + n.stats + c, save, save + c, 0.1, 1e-5);
        }
      } else if (ops) {
        ops->batchnorm_forward_infer(n.out.n, n.out.c, n.out.h, n.out.w, x, w_ + n.w, w_ + n.b, running_ + n.stats,
                                     running_ + n.stats + c, y[i], 1e-5);
      }
      break;
    }
    case Kind::kRelu:
      if (ops) ops->relu_forward(n.out.count(), x, y[i]);
      break;
    case Kind::kPool:
      if (ops) ops->pool_forward(n.pool, x, y[i]);
      break;
    case Kind::kFc:
      if (ops) ops->fc_forward(n.out.n, n.fc_in, n.fc_out, x, w_ + n.w, w_ + n.b, y[i]);
      break;
    case Kind::kAdd:
      if (ops) ops->add(n.out.count(), x, y[static_cast<std::size_t>(n.in[1])], y[i]);
      break;
    case Kind::kConcat: {
      int offset = 0;
      for (int in : n.in) {
        const Dims& d = dims(in);
        if (ops) {
          ops->copy_channels(n.out.n, n.out.h * n.out.w, y[static_cast<std::size_t>(in)], d.c, 0, y[i], n.out.c, offset,
                             d.c, false);
        }
        offset += d.c;
      }
      break;
    }
    case Kind::kInput: break;
  }
}

// Backward. Gradients live in a first-fit heap after the forward buffers and are freed as soon
// as they have been consumed, so only the gradients in flight take memory.
void Network::backward(Ops* ops, Arena& lane, const Activations& a, const float* probs, Workspace ws) const {
  GradientBuffers g(lane, nodes_.size(), ops);
  const auto l = static_cast<std::size_t>(logits_);
  float* dlogits = g.create(l, static_cast<std::int64_t>(batch_) * classes_);
  if (ops) ops->softmax_xent_backward(batch_, classes_, probs, labels_, dlogits);
  for (std::size_t r = nodes_.size(); r-- > 0;) {
    const Kind kind = nodes_[r].kind;
    if (!g.has(r) || kind == Kind::kInput) continue;
    if (kind == Kind::kAdd || kind == Kind::kConcat) {
      backward_fan_in(ops, r, g);
    } else {
      backward_layer(ops, r, a, g, ws);
    }
    g.release(r);  // consumed
  }
  lane.allocate(g.peak());  // the heap's high-water mark belongs to the lane's peak
}

void Network::backward_layer(Ops* ops, std::size_t r, const Activations& a, GradientBuffers& g, Workspace ws) const {
  const Node& n = nodes_[r];
  const float* dy = g.of(r);
  const auto in0 = static_cast<std::size_t>(n.in.front());
  const std::int64_t in_count = dims(n.in.front()).count();
  const bool needs_dx = nodes_[in0].kind != Kind::kInput;
  const float* x = a.y[in0];
  // Batch norm, ReLU and pooling always write a gradient for their input; a convolution or fully
  // connected layer reading the input batch writes none.
  const bool writes_dx = needs_dx || (n.kind != Kind::kConv && n.kind != Kind::kFc);
  float* dx = writes_dx ? g.target(in0, in_count) : nullptr;
  switch (n.kind) {
    case Kind::kConv:
      if (ops) ops->conv_backward_filter(n.conv, x, dy, dw_ + n.w, dw_ + n.b, ws.ptr, ws.bytes);
      if (needs_dx && ops) ops->conv_backward_data(n.conv, w_ + n.w, dy, dx, ws.ptr, ws.bytes);
      break;
    case Kind::kBatchNorm: {
      const std::int64_t c = aligned_floats(n.out.c);
      if (ops) {
        ops->batchnorm_backward(n.out.n, n.out.c, n.out.h, n.out.w, x, dy, w_ + n.w, a.save[r], a.save[r] + c, dx,
                                dw_ + n.w, dw_ + n.b, 1e-5);
      }
      break;
    }
    case Kind::kRelu:
      if (ops) ops->relu_backward(n.out.count(), a.y[r], dy, dx);
      break;
    case Kind::kPool:
      if (ops) ops->pool_backward(n.pool, x, a.y[r], dy, dx);
      break;
    case Kind::kFc:
      if (ops) ops->fc_backward(n.out.n, n.fc_in, n.fc_out, x, w_ + n.w, dy, dx, dw_ + n.w, dw_ + n.b);
      break;
    case Kind::kAdd:
    case Kind::kConcat:
    case Kind::kInput: break;  // backward_fan_in's, and nothing to do
  }
  if (writes_dx) g.finish(in0, in_count, dx);
}

// A residual add or a concatenation hands each of its inputs its share of the gradient.
void Network::backward_fan_in(Ops* ops, std::size_t r, GradientBuffers& g) const {
  const Node& n = nodes_[r];
  const float* dy = g.of(r);
  int offset = 0;
  for (int in : n.in) {
    const Dims& d = dims(in);
    const auto u = static_cast<std::size_t>(in);
    if (node(in).kind != Kind::kInput) {
      float* dx = g.target(u, d.count());
      if (n.kind == Kind::kAdd) {
        if (ops) ops->copy_channels(n.out.n, n.out.h * n.out.w, dy, n.out.c, 0, dx, n.out.c, 0, n.out.c, false);
      } else if (ops) {
        ops->copy_channels(n.out.n, n.out.h * n.out.w, dy, n.out.c, offset, dx, d.c, 0, d.c, false);
      }
      g.finish(u, d.count(), dx);
    }
    offset += d.c;
  }
}

float Network::train_step(Ops& ops, Arena& lane, const TrainConfig& cfg, bool read_loss) {
  pass(&ops, lane, true, workspace_bytes(ops));
  ops.sgd_momentum(params_, w_, dw_, v_, cfg.learning_rate, cfg.momentum, cfg.weight_decay);
  if (!read_loss) return std::numeric_limits<float>::quiet_NaN();
  return this->read_loss(ops);
}

float Network::read_loss(Ops& ops) const {
  float loss = 0;
  ops.to_host(loss_, &loss, sizeof loss);
  return loss;
}

void Network::infer_step(Ops& ops, Arena& lane) { pass(&ops, lane, false, workspace_bytes(ops)); }

}  // namespace salus::gpu
