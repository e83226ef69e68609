// One model zoo, two consumers: for every model the real backend runs, the network it builds from
// the zoo's graph has the graph's layer shapes, and its parameters and persistent bytes equal the
// analytic catalog's (traces/derivation.h) up to the rules gpu_backend/models.h documents.
#include <doctest/doctest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/units.h"
#include "gpu_backend/device.h"
#include "gpu_backend/memory_pool.h"
#include "gpu_backend/model.h"
#include "gpu_backend/models.h"
#include "traces/derivation.h"
#include "workloads/graph.h"
#include "workloads/zoo.h"

namespace {

using salus::core::Bytes;
using namespace salus;
using workloads::Graph;
using workloads::Layer;
using workloads::Op;

/// The parameters the backend adds to a graph's: its convolutions and fully connected layers
/// always carry a bias, its batch norms always a gamma (gpu_backend/models.h).
std::int64_t added_parameters(const Graph& g) {
  std::int64_t added = 0;
  for (const Layer& l : g.layers()) {
    if ((l.op == Op::kConv || l.op == Op::kFullyConnected) && !l.bias) added += l.out.c;
    if (l.op == Op::kBatchNorm && !l.scale) added += l.out.c;
  }
  return added;
}

std::vector<const workloads::Model*> runnable_models() {
  std::vector<const workloads::Model*> v;
  for (const workloads::Model& m : workloads::models()) {
    if (m.runnable) v.push_back(&m);
  }
  return v;
}

}  // namespace

TEST_CASE("zoo: the backend runs exactly the zoo's runnable models") {
  std::vector<std::string> names;
  for (const auto* m : runnable_models()) names.push_back(m->name);
  std::sort(names.begin(), names.end());
  CHECK(gpu::model_names() == names);
  CHECK(names.size() == 11);
}

TEST_CASE("zoo: every layer of a runnable model has the graph's shape in the backend's network") {
  constexpr int kBatch = 3;
  for (const auto* m : runnable_models()) {
    CAPTURE(m->name);
    const Graph g = m->graph(m->variants.front());
    const gpu::LoweredNetwork lowered = gpu::lower(g, kBatch);
    REQUIRE(lowered.node.size() == static_cast<std::size_t>(g.size()));
    int left_out = 0, previous = -1;
    for (int i = 0; i < g.size(); ++i) {
      const Layer& l = g.at(i);
      const int node = lowered.node[static_cast<std::size_t>(i)];
      CAPTURE(i);
      if (node < 0) {
        // Only dropout and the loss have no node of their own.
        CHECK((l.op == Op::kDropout || l.op == Op::kSoftmaxLoss));
        ++left_out;
        continue;
      }
      CHECK(node > previous);  // in the graph's order, one node per layer
      previous = node;
      const gpu::Dims& d = lowered.network->dims(node);
      CHECK(d.n == kBatch);
      CHECK(d.c == l.out.c);
      CHECK(d.h == l.out.h);
      CHECK(d.w == l.out.w);
    }
    CHECK(left_out >= 1);  // the loss
  }
}

TEST_CASE("zoo: parameters and persistent bytes of the backend's networks equal the analytic side's") {
  for (const auto* m : runnable_models()) {
    const std::string& variant = m->variants.front();
    CAPTURE(m->name);
    const Graph g = m->graph(variant);
    const traces::ArchitectureFigures f = traces::describe_model(m->name, variant);
    const int batch = m->batch(variant);
    const auto net = gpu::build_model(m->name + "_" + variant);
    // Parameters: the analytic count plus one bias per channel of each bias-free convolution.
    CHECK(net->parameters() == f.params + added_parameters(g));
    if (m->name == "lenet" || m->name == "mlp" || m->name == "alexnet" || m->name == "vgg16") {
      CHECK(added_parameters(g) == 0);  // every layer has its bias: the counts are equal
    }
    // Persistent bytes: the analytic state (weights, gradients, momentum, running statistics, the
    // synthetic batch; without the catalog's fitted framework overhead) plus the added parameters'
    // three copies, the labels and the loss; every parameter, gradient, momentum and statistics
    // buffer of every layer (at most 4 tensors x 3 copies + 2 statistics) and the other arrays
    // each start on a 256-byte boundary.
    const traces::DerivedWorkload w = traces::derive_workload(m->name, variant, false);
    const Bytes analytic_state = w.persistent - w.overhead;
    CHECK(analytic_state == 4 * (3 * f.params + f.fixed_params) + batch * f.input_bytes);
    const Bytes unpadded = analytic_state + 4 * 3 * added_parameters(g) + 4 * batch + 4;
    CHECK(net->persistent_bytes() >= unpadded);
    CHECK(net->persistent_bytes() < unpadded + (14 * static_cast<Bytes>(g.layers().size()) + 7) * gpu::kAlignment);
  }
}

TEST_CASE("zoo: the analytic E of the backend's test models covers what the CPU device takes") {
  // lenet_32 and mlp_64 are derived with the backend's own memory rules (traces/README.md): an
  // upper bound of the lane memory the CPU device measures for one training iteration.
  auto device = gpu::make_cpu_device();
  auto ops = device->create_ops();
  for (const char* name : {"lenet", "mlp"}) {
    const workloads::Model& m = workloads::find_model(name);
    const std::string& variant = m.variants.front();
    CAPTURE(name);
    const Bytes measured = gpu::build_model(m.name + "_" + variant)->ephemeral_bytes(*ops, true);
    const Bytes derived = traces::derive_workload(name, variant, false).ephemeral;
    CHECK(derived >= measured);
    CHECK(derived < 2 * measured);
  }
}

TEST_CASE("zoo: a graph the backend cannot run is a logic error naming the layer") {
  CHECK_THROWS_WITH_AS(gpu::lower(workloads::find_model("speech").graph("25"), 2),
                       "the real backend cannot build layer 1 (fully_connected): a fully connected layer per step "
                       "of a sequence",
                       std::logic_error);
  CHECK_THROWS_WITH_AS(gpu::lower(workloads::find_model("superres").graph("32"), 2),
                       "the real backend cannot build layer 1 (input): the backend's network has one input, the "
                       "first layer",
                       std::logic_error);
  Graph even;
  const int x = even.input(1, 8, 8, true);
  even.softmax_loss(even.fully_connected(even.max_pool(x, 2, 2, workloads::kSame), 10));
  CHECK_THROWS_WITH_AS(gpu::lower(even, 2),
                       "the real backend cannot build layer 1 (max_pool): SAME padding of an even window is asymmetric",
                       std::logic_error);
  Graph no_loss;
  no_loss.fully_connected(no_loss.input(1, 8, 8, true), 10);
  CHECK_THROWS_WITH_AS(gpu::lower(no_loss, 2), "the real backend needs a graph that ends in a softmax loss",
                       std::logic_error);
}
