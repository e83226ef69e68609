// The real backend's networks, built from the model zoo (workloads/): "<model>_<batch>" names a
// zoo model marked runnable at any batch size. The lowering rules are listed in models.h.
#include "gpu_backend/models.h"

#include <algorithm>
#include <cctype>
#include <stdexcept>
#include <string>

#include "core/errors.h"
#include "workloads/zoo.h"

namespace salus::gpu {
namespace {

using workloads::Graph;
using workloads::Layer;
using workloads::Op;

[[noreturn]] void unsupported(const Graph& g, int id, const std::string& why) {
  throw std::logic_error("the real backend cannot build layer " + std::to_string(id) + " (" +
                         std::string(workloads::op_name(g.at(id).op)) + "): " + why);
}

/// Symmetric padding of a window of k: SAME becomes (k - 1) / 2, which needs an odd window.
int padding(const Graph& g, int id, int k, int pad) {
  if (pad != workloads::kSame) return pad;
  if (k % 2 == 0) unsupported(g, id, "SAME padding of an even window is asymmetric");
  return (k - 1) / 2;
}

/// The zoo's runnable models, in name order.
std::vector<std::string> runnable_names() {
  std::vector<std::string> v;
  for (const workloads::Model& m : workloads::models()) {
    if (m.runnable) v.push_back(m.name);
  }
  std::sort(v.begin(), v.end());
  return v;
}

std::string joined_names() {
  std::string s;
  for (const std::string& name : runnable_names()) s += (s.empty() ? "" : ", ") + name;
  return s;
}

const workloads::Model* runnable(const std::string& name) {
  const workloads::Model* m = workloads::lookup(name);
  return m != nullptr && m->runnable ? m : nullptr;
}

bool split(const std::string& workload, std::string* model, int* batch) {
  const auto us = workload.rfind('_');
  if (us == std::string::npos || us + 1 >= workload.size()) return false;
  const std::string digits = workload.substr(us + 1);
  for (char c : digits) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  if (digits.size() > 6) return false;
  *model = workload.substr(0, us);
  *batch = std::stoi(digits);
  return *batch > 0 && runnable(*model) != nullptr;
}

}  // namespace

LoweredNetwork lower(const Graph& g, int batch) {
  LoweredNetwork out;
  out.network = std::make_unique<Network>(batch);
  Network& net = *out.network;
  const int count = g.size();
  out.node.assign(static_cast<std::size_t>(count), -1);
  // value[i]: the node holding layer i's output (for a dropout, its input's).
  std::vector<int> value(static_cast<std::size_t>(count), -1);
  // The batch norm ending a residual branch starts with gamma 0 (models.h).
  std::vector<bool> branch_end(static_cast<std::size_t>(count), false);
  for (const Layer& l : g.layers()) {
    if (l.op == Op::kAdd) branch_end[static_cast<std::size_t>(l.in[1])] = true;
  }
  bool has_loss = false;
  for (int i = 0; i < count; ++i) {
    const Layer& l = g.at(i);
    const auto in = [&](std::size_t k) {
      const int v = value[static_cast<std::size_t>(l.in.at(k))];
      SALUS_INVARIANT(v >= 0, "a lowered layer reads lowered layers", std::to_string(i));
      return v;
    };
    int node = -1;
    switch (l.op) {
      case Op::kInput:
        if (i != 0) unsupported(g, i, "the backend's network has one input, the first layer");
        node = net.input(l.out.c, l.out.h, l.out.w);
        break;
      case Op::kConv:
        node = net.conv(in(0), l.out.c, l.kh, l.kw, l.sh, l.sw, padding(g, i, l.kh, l.pad), padding(g, i, l.kw, l.pad));
        break;
      case Op::kFullyConnected:
        if (l.rows != 1) unsupported(g, i, "a fully connected layer per step of a sequence");
        node = net.fc(in(0), l.out.c);
        break;
      case Op::kBatchNorm:
        node = net.batchnorm(in(0), branch_end[static_cast<std::size_t>(i)]);
        break;
      case Op::kRelu:
        node = net.relu(in(0));
        break;
      case Op::kMaxPool:
      case Op::kAvgPool:
        if (l.kh != l.kw || l.sh != l.sw) unsupported(g, i, "a pooling window or stride that is not square");
        node = l.op == Op::kMaxPool ? net.maxpool(in(0), l.kh, l.sh, padding(g, i, l.kh, l.pad))
                                    : net.avgpool(in(0), l.kh, l.sh, padding(g, i, l.kh, l.pad));
        break;
      case Op::kSpatialMean: {
        const workloads::Shape& s = g.at(l.in.front()).out;
        if (s.h != s.w) unsupported(g, i, "a spatial mean over a feature map that is not square");
        node = net.avgpool(in(0), s.h, 1, 0);
        break;
      }
      case Op::kAdd:
        node = net.add(in(0), in(1));
        break;
      case Op::kConcat: {
        std::vector<int> xs;
        for (std::size_t k = 0; k < l.in.size(); ++k) xs.push_back(in(k));
        node = net.concat(xs);
        break;
      }
      case Op::kDropout:
        value[static_cast<std::size_t>(i)] = in(0);
        continue;
      case Op::kSoftmaxLoss: {
        if (has_loss) unsupported(g, i, "a second loss");
        const workloads::Shape& s = g.at(l.in.front()).out;
        if (s.h != 1 || s.w != 1) unsupported(g, i, "a softmax over a sequence");
        net.set_loss(in(0), s.c);
        has_loss = true;
        continue;
      }
      default: unsupported(g, i, "no such layer in gpu_backend/ops.h");
    }
    const Dims& d = net.dims(node);
    SALUS_INVARIANT(d.n == batch && d.c == l.out.c && d.h == l.out.h && d.w == l.out.w,
                    "the network's layer has the graph's shape", std::to_string(i));
    out.node[static_cast<std::size_t>(i)] = value[static_cast<std::size_t>(i)] = node;
  }
  if (!has_loss) throw std::logic_error("the real backend needs a graph that ends in a softmax loss");
  return out;
}

std::vector<std::string> model_names() { return runnable_names(); }

bool is_model(const std::string& workload) {
  std::string model;
  int batch = 0;
  return split(workload, &model, &batch);
}

std::optional<RealWorkload> parse_real_workload(const std::string& workload) {
  static constexpr char kSuffix[] = "_infer";
  constexpr std::size_t k = sizeof(kSuffix) - 1;
  RealWorkload w{workload, false};
  if (workload.size() > k && workload.compare(workload.size() - k, k, kSuffix) == 0) {
    w.model.resize(workload.size() - k);
    w.inference = true;
  }
  if (!is_model(w.model)) return std::nullopt;
  return w;
}

std::string real_workload_help() { return "<model>_<batch>[_infer] with model one of " + joined_names(); }

std::unique_ptr<Network> build_model(const std::string& workload) {
  std::string model;
  int batch = 0;
  if (!split(workload, &model, &batch)) {
    throw core::InputError("no real model for workload '" + workload + "' (valid: <model>_<batch> with model one of " +
                           joined_names() + ")");
  }
  const workloads::Model& m = *runnable(model);
  SALUS_INVARIANT(m.variants_are_batches, "a runnable model's graph does not depend on its variant", m.name);
  return lower(m.graph(m.variants.front()), batch).network;
}

}  // namespace salus::gpu
