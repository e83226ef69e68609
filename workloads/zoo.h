#pragma once
/// The model zoo: every architecture of the paper's Table 3 and the two small test models, each
/// described once as a layer graph (graph.h) with how its reference program runs it. The analytic
/// catalog (traces/derivation.cpp) derives P, E and iteration times from these descriptions; the
/// real backend (gpu_backend/models.cpp) builds its runnable networks from the same graphs.
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "workloads/graph.h"

namespace salus::workloads {

/// The optimizer of the reference program; its state per parameter is slots() floats.
enum class Optimizer {
  kSgd,           ///< plain SGD (the PTB model, with global-norm gradient clipping)
  kMomentum,      ///< SGD with momentum (tf_cnn_benchmarks, this repository's real backend)
  kAdam,          ///< Adam: two moments
};
int optimizer_slots(Optimizer o);

/// Which program the description follows: decides the memory rules the analytic side applies.
enum class Framework {
  kTensorFlow,    ///< tf_cnn_benchmarks, Fathom, the TF PTB model
  kPyTorch,       ///< the PyTorch examples (vae, superres); derived with the same rules as TF
  kSalusBackend,  ///< this repository's real backend (gpu_backend/): its arena and gradient heap
};

/// One model of the zoo.
struct Model {
  std::string name;                   ///< "resnet50"
  std::vector<std::string> variants;  ///< "25", "50", "75" (batch sizes) or "small", "medium", "large"
  bool from_paper = true;             ///< false for the test models lenet and mlp
  /// True when every variant is a batch size and the graph does not depend on it: then any batch
  /// (not only the variants) names a workload of the real backend, "<name>_<batch>".
  bool variants_are_batches = true;
  /// True when the real backend (gpu_backend/) builds and trains this model.
  bool runnable = false;
  std::string description;            ///< what the program is and runs, for the catalog's sources
  Optimizer optimizer = Optimizer::kMomentum;
  bool clip_gradients = false;        ///< global-norm gradient clipping (the PTB model)
  Framework framework = Framework::kTensorFlow;
  /// The layer graph of a variant (per sample).
  std::function<Graph(const std::string& variant)> graph;
  /// Samples per iteration of a variant.
  std::function<int(const std::string& variant)> batch;
  /// Bytes the host prepares per sample and iteration (decoded input, fed state); 0 when the data
  /// is a synthetic batch on the device.
  std::function<double(const std::string& variant)> host_input_bytes;
};

/// The zoo, paper models in Table 3 order, then lenet and mlp.
const std::vector<Model>& models();
/// The model named `name`, or nullptr.
const Model* lookup(std::string_view name);
/// The model named `name`. Throws core::InputError "unknown model 'x' (valid: alexnet, ...)".
const Model& find_model(std::string_view name);
/// The model named `name` with `variant` among its variants. Throws core::InputError naming the
/// valid models or variants.
const Model& find_model(std::string_view name, std::string_view variant);
/// "alexnet, googlenet, ...", in zoo order.
std::string model_names_joined();

}  // namespace salus::workloads
