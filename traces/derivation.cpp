#include "traces/derivation.h"
#include "traces/catalog.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "workloads/graph.h"
#include "workloads/zoo.h"

namespace salus::traces {
namespace {

using workloads::find_model;
using workloads::Framework;
using workloads::Graph;
using workloads::Layer;
using workloads::LayerParameters;
using workloads::Model;
using workloads::models;
using workloads::Op;
using workloads::Recurrence;

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
// The derivation's view of a layer graph (workloads/graph.h)
// =====================================================================================

// Kernel counts per layer and what backward keeps follow TensorFlow's ops (the paper's workloads
// ran on TF; the PyTorch examples are counted the same way).
constexpr int kBatchNormTrainForwardOps = 7;  // fused batch norm + two assign_moving_average (3 ops each)

/// One layer as the derivation needs it: the graph's layer (op, inputs, output shape) plus what a
/// framework runs and keeps for it, per sample.
struct Node {
  Op kind = Op::kInput;
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

int loop_ops_per_step(Recurrence r) {
  return r == Recurrence::kDynamicRnn ? kDynamicRnnOpsPerStep : kStaticUnrollOpsPerStep;
}

Node analyse(const Graph& g, int id) {
  const Layer& l = g.at(id);
  const LayerParameters p = layer_parameters(g, id);
  Node n;
  n.kind = l.op;
  n.in = l.in;
  n.c = l.out.c;
  n.h = l.out.h;
  n.w = l.out.w;
  n.params = p.trainable;
  n.fixed = p.running;
  n.variables = p.tensors;
  const auto set_kernels = [&n](int forward, int backward, int infer) {
    n.fwd_kernels = forward;
    n.bwd_kernels = backward;
    n.infer_kernels = infer;
  };
  const auto activation = [&](int kernels) {
    n.saves_output = true;
    set_kernels(kernels, kernels, kernels);
  };
  switch (l.op) {
    case Op::kInput:
      n.on_gpu = l.on_device;
      break;
    case Op::kConv:
    case Op::kFullyConnected: {
      const Layer& src = g.at(l.in.front());
      if (l.op == Op::kConv) {
        n.weights = static_cast<std::int64_t>(l.kh) * l.kw * src.out.c * l.out.c;
        n.macs = static_cast<double>(n.weights) * n.h * n.w;
        n.winograd = l.kh == 3 && l.kw == 3 && l.sh == 1 && l.sw == 1;
      } else {
        n.weights = l.in_features * l.out.c;
        n.macs = static_cast<double>(n.weights) * l.rows;
      }
      n.bias = l.bias;
      n.first = src.op == Op::kInput;
      n.saves_inputs = true;
      set_kernels(l.bias ? 2 : 1, (n.first ? 1 : 2) + (l.bias ? 1 : 0), l.bias ? 2 : 1);
      break;
    }
    case Op::kBatchNorm:
      // Training also updates the running statistics.
      n.saves_inputs = true;
      set_kernels(kBatchNormTrainForwardOps, 1, 1);
      break;
    case Op::kRelu:
    case Op::kSigmoid:
      activation(1);
      break;
    case Op::kClippedRelu:
      // relu and minimum, both outputs needed by backward.
      activation(2);
      n.extra_saved = n.out();
      n.bwd_kernels = 4;
      break;
    case Op::kMaxPool:
    case Op::kAvgPool:
      // TF's MaxPoolGrad takes the pooling's input and output; AvgPoolGrad only shapes.
      n.saves_inputs = n.saves_output = l.op == Op::kMaxPool;
      set_kernels(1, 1, 1);
      break;
    case Op::kSpatialMean:
      set_kernels(1, 2, 1);
      break;
    case Op::kAdd:
      set_kernels(1, 0, 1);  // the gradient passes through to both inputs
      break;
    case Op::kConcat:
      set_kernels(1, static_cast<int>(l.in.size()), 1);  // one slice per input
      break;
    case Op::kDropout:
      // tf.nn.dropout: x / keep * mask, so backward needs both factors. Identity (no kernel) in
      // inference.
      n.extra_saved = 2 * n.out();
      set_kernels(6, 2, 0);
      break;
    case Op::kSoftmaxLoss:
      // Keeps the softmax (its gradient) of the logits.
      n.extra_saved = g.at(l.in.front()).out.elements();
      set_kernels(2, 2, 2);
      break;
    case Op::kMseLoss:
    case Op::kBceLoss:
    case Op::kCtcLoss:
      n.saves_inputs = true;
      set_kernels(3, 3, 3);
      break;
    case Op::kLstm: {
      // Each step multiplies [x_t, h_{t-1}] by a (in + hidden) x 4 hidden matrix. Backward needs per
      // step the concatenated input, the four gate activations, the previous cell, tanh(cell):
      // in + 7 hidden floats.
      n.steps = l.out.h;
      n.hidden = l.hidden;
      n.step_in = l.in_features + static_cast<std::int64_t>(l.hidden);
      n.weights = n.step_in * 4 * l.hidden;
      n.macs = static_cast<double>(n.weights) * n.steps;
      n.extra_saved = (n.step_in + 7 * static_cast<std::int64_t>(l.hidden)) * n.steps;
      const int loop = loop_ops_per_step(l.recurrence);
      set_kernels((kLstmCellForwardOps + loop) * n.steps, (kLstmCellBackwardOps + loop) * n.steps,
                  (kLstmCellForwardOps + loop) * n.steps);
      break;
    }
    case Op::kEmbedding:
      n.saves_inputs = true;  // the ids
      set_kernels(1, 2, 1);
      break;
    case Op::kPixelShuffle:
      set_kernels(1, 1, 1);  // a copy, nothing saved
      break;
    case Op::kReparameterize:
      // Backward keeps eps, the standard deviation, mu and exp(logvar).
      n.extra_saved = 4 * n.out();
      set_kernels(10, 10, 10);
      break;
  }
  return n;
}

/// A graph as the derivation walks it.
class Net {
 public:
  explicit Net(const Graph& g) {
    for (int i = 0; i < g.size(); ++i) nodes_.push_back(analyse(g, i));
  }
  const Node& at(int id) const { return nodes_[static_cast<std::size_t>(id)]; }
  const std::vector<Node>& nodes() const { return nodes_; }

 private:
  std::vector<Node> nodes_;
};

/// The real backend's memory rules (gpu_backend/model.cpp) instead of TF's: it keeps every
/// forward output in the lane's bump arena until the iteration ends (ReLU in place when it is the
/// only reader of a convolution, fully connected, batch norm or add output), holds the largest
/// convolution's workspace for the whole iteration, and takes gradients from a first-fit heap
/// that is never compacted.
bool arena_rules(const Model& m) { return m.framework == Framework::kSalusBackend; }

Net build(const Model& m, const std::string& variant) { return Net(m.graph(variant)); }
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
    if (!arena || nodes[t].kind != Op::kRelu) return false;
    const auto src = static_cast<std::size_t>(nodes[t].in.front());
    const Op k = nodes[src].kind;
    return (k == Op::kConv || k == Op::kFullyConnected || k == Op::kBatchNorm || k == Op::kAdd) && readers[src] == 1;
  };
  auto elems = [&](std::size_t t) {
    if (nodes[t].kind == Op::kInput && nodes[t].on_gpu) return std::int64_t{0};
    return in_place(t) ? std::int64_t{0} : nodes[t].out();
  };
  auto conv_workspace = [&](std::size_t i) {
    if (nodes[i].kind != Op::kConv) return std::int64_t{0};
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
    if (arena && nodes[t].kind != Op::kInput) {
      for (std::size_t i = t; i < 2 * n; ++i) keep[i] += e;  // until the arena is reset
    } else if (saved[t]) {
      // From its forward step to the backward step of its first saver.
      for (std::size_t i = t; i <= backward_step(first_saver[t]); ++i) keep[i] += e;
    } else {
      for (std::size_t i = t; i <= last_consumer[t]; ++i) flight[i] += e;
    }
    for (std::size_t i = t; i <= (arena ? 2 * n - 1 : backward_step(t)); ++i) keep[i] += nodes[t].extra_saved;
    if (nodes[t].kind != Op::kInput) {
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

ArchitectureFigures figures(const Net& net, const Model& m, const std::string& variant) {
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
    if (n.kind == Op::kInput) {
      f.input_bytes += static_cast<core::Bytes>(kFloatBytes) * n.out();
      continue;
    }
    const core::Bytes step = static_cast<core::Bytes>(kFloatBytes) * (inputs_out(net, n) + n.out());
    f.largest_step_bytes = std::max(f.largest_step_bytes, step);
  }
  std::int64_t saved_elems = extra;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    // A synthetic batch lives in P for the whole job; anything else backward needs is in E.
    if (saved[i] && !(nodes[i].kind == Op::kInput && nodes[i].on_gpu)) saved_elems += nodes[i].out();
  }
  f.saved_bytes = static_cast<core::Bytes>(kFloatBytes) * saved_elems;
  live_peaks(net, saved, arena_rules(m), f);
  f.host_input_bytes = static_cast<core::Bytes>(std::llround(m.host_input_bytes(variant)));
  f.optimizer_slots = optimizer_slots(m.optimizer);
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
    case Op::kInput:
      return t;
    case Op::kConv:
    case Op::kFullyConnected: {
      const double eff = n.kind == Op::kFullyConnected ? kGemmEfficiency : n.winograd ? kWinogradConvEfficiency : kConvEfficiency;
      const double product =
          roofline_ns(2.0 * n.macs * b, in_bytes + out_bytes + kFloatBytes * static_cast<double>(n.weights), eff);
      const double bias = n.bias ? memory_ns(2.0 * out_bytes) : 0.0;
      t.compute_forward = product;
      t.compute_backward = (n.first ? 1.0 : 2.0) * product;  // filter gradient (+ input gradient)
      t.forward = product + bias;
      t.backward = t.compute_backward + (n.bias ? memory_ns(out_bytes) : 0.0);
      break;
    }
    case Op::kLstm: {
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
    case Op::kAdd:
      t.forward = memory_ns(in_bytes + out_bytes);
      t.backward = 0;
      break;
    case Op::kConcat:
      t.forward = memory_ns(in_bytes + out_bytes);
      t.backward = t.forward;
      break;
    case Op::kBatchNorm:
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

Timing timing(const Net& net, const Model& m, const ArchitectureFigures& f, int batch, bool inference) {
  Timing t;
  for (const Node& n : net.nodes()) {
    if (n.kind == Op::kInput) continue;
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
DerivedWorkload derive_without_overhead(const Model& m, const std::string& variant, bool inference) {
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
  for (const Model& m : models()) v.push_back(m.name);
  return v;
}

std::vector<std::string> derivation_variants(std::string_view model) {
  return workloads::find_model(model).variants;
}

ArchitectureFigures describe_model(std::string_view model, std::string_view variant) {
  const Model& m = find_model(model, variant);
  const std::string v(variant);
  return figures(build(m, v), m, v);
}

DerivedWorkload derive_workload(std::string_view model, std::string_view variant, bool inference) {
  const Model& m = find_model(model, variant);
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
  const Model& m = find_model(model, variant);
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
  for (const Model& m : models()) {
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
  // Figures rounded as the catalog shows them (MiB to 2 decimals, ms and u to 3): the double
  // nearest the decimal, which the file then holds in its shortest form.
  auto rounded = [](double v, int decimals) { return std::stod(fixed(v, decimals)); };
  nlohmann::json workloads = nlohmann::json::array();
  for (const DerivedWorkload& w : derive_catalog()) {
    workloads.push_back({{"name", w.name},
                         {"persistent_mib", rounded(core::to_mib(w.persistent), 2)},
                         {"ephemeral_mib", rounded(core::to_mib(w.ephemeral), 2)},
                         {"iter_ms", rounded(w.iter_ms(), 3)},
                         {"gpu_util", rounded(w.gpu_util(), 3)},
                         {"source", w.source()}});
  }
  return catalog_text({{"format", "salus-catalog/1"},
                       {"gpu", "NVIDIA P100 16 GB (derived from the architectures, not measured)"},
                       {"notes", notes},
                       {"workloads", std::move(workloads)}});
}

}  // namespace salus::traces
