#pragma once
/// The workload catalog derived from the models' architectures: every figure in
/// profiles/catalog.json comes from `catalog_json()` (program salus-catalog), never by hand.
///
/// Each model of the paper's Table 3 (and two small test models) is described once, as a layer
/// graph in the model zoo (workloads/zoo.h), from which the real backend builds its networks too.
/// Walking a model's graph the code computes parameters, forward FLOPs, the activations backward
/// needs, the largest layer step and the number of kernels, and from those, with the P100
/// constants and the formulas in derivation.cpp (one documented place), the catalog fields P, E,
/// iteration time and u.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/units.h"

namespace salus::traces {

/// Figures of one model that do not depend on the batch size (all per sample).
struct ArchitectureFigures {
  std::int64_t params = 0;             ///< trainable parameters
  std::int64_t fixed_params = 0;       ///< non-trainable state (batch-norm running statistics)
  std::int64_t variables = 0;          ///< trainable variables (one optimizer kernel each)
  double forward_macs = 0;             ///< multiply-accumulates of one forward pass, per sample
  core::Bytes saved_bytes = 0;         ///< activations the backward pass needs, per sample
  core::Bytes largest_step_bytes = 0;  ///< inputs + output of the largest layer, per sample
  /// Peak of live activations over a training iteration, per sample, and its parts at the peak:
  /// activations kept for backward, gradients in flight (and forward tensors awaiting their
  /// consumers), convolution workspace. E = batch x train_peak_bytes.
  core::Bytes train_peak_bytes = 0;
  core::Bytes train_peak_saved = 0;
  core::Bytes train_peak_transient = 0;
  core::Bytes train_peak_workspace = 0;
  /// Peak of live activations over a forward pass (inference), per sample, and its workspace part.
  core::Bytes infer_peak_bytes = 0;
  core::Bytes infer_peak_workspace = 0;
  core::Bytes input_bytes = 0;         ///< one sample as the GPU holds it (inputs, targets, labels)
  core::Bytes host_input_bytes = 0;    ///< bytes the host prepares per sample (0: synthetic data)
  std::int64_t forward_kernels = 0;    ///< kernels (framework ops) of one forward pass
  std::int64_t backward_kernels = 0;   ///< kernels of one backward pass
  int optimizer_slots = 0;             ///< optimizer state per parameter: 0 SGD, 1 momentum, 2 Adam
};

/// One catalog entry and how it was derived.
struct DerivedWorkload {
  std::string name;     ///< "resnet50_25", "seq2seq_small", "resnet50_25_infer"
  std::string model;    ///< "resnet50"
  std::string variant;  ///< "25", "small"
  int batch = 0;        ///< samples per iteration
  bool inference = false;
  bool from_paper = true;  ///< false for the test workloads lenet_32 and mlp_64
  ArchitectureFigures arch;

  core::Bytes persistent = 0;  ///< P
  core::Bytes ephemeral = 0;   ///< E = peak - P
  core::Bytes overhead = 0;    ///< framework-internal part of P (the fitted line)
  double gpu_ms = 0;           ///< GPU busy time of one iteration
  double host_ms = 0;          ///< host time of one iteration the GPU waits for
  double compute_ms = 0;       ///< part of gpu_ms in convolutions and matrix products
  std::int64_t host_ops = 0;   ///< framework ops dispatched per iteration

  double iter_ms() const { return gpu_ms + host_ms; }
  /// u = GPU time / iteration time, in (0, 1].
  double gpu_util() const { return gpu_ms / iter_ms(); }
  core::Bytes peak() const { return persistent + ephemeral; }
  /// Average memory over an iteration: P + u x E / 2. Ephemeral memory exists only while the
  /// GPU works (it ramps up over the forward pass and down over the backward pass, mean E/2) and
  /// is released while the iteration waits on the host (a fraction 1 - u of the time).
  core::Bytes average() const;
  /// Provenance: "estimated: ..." with the numbers of the derivation.
  std::string source() const;
};

/// Names of the zoo's models, paper models in Table 3 order, then lenet and mlp.
std::vector<std::string> derivation_model_names();
/// The variants of a model: batch sizes ("25", "50", "100"), or "small", "medium", "large".
std::vector<std::string> derivation_variants(std::string_view model);
/// Per-sample figures of a model variant. Throws core::InputError naming the valid models.
ArchitectureFigures describe_model(std::string_view model, std::string_view variant);
/// One workload, training or inference. Throws core::InputError on an unknown model/variant.
DerivedWorkload derive_workload(std::string_view model, std::string_view variant, bool inference);
/// All catalog entries, in catalog order: per model its training variants then its inference
/// entry (smallest variant), paper models first, then the test workloads.
std::vector<DerivedWorkload> derive_catalog();
/// The catalog file text (format salus-catalog/1), deterministic: fixed key order and number
/// formatting, a trailing newline.
std::string catalog_json();

/// The framework-overhead line of P, overhead = a + b x params, fitted through the paper's
/// googlenet_25 (110.9 MB) and resnet152_75 (822.2 MB) persistent figures.
struct OverheadFit {
  double a_bytes = 0;            ///< a
  double b_bytes_per_param = 0;  ///< b
};
const OverheadFit& overhead_fit();

}  // namespace salus::traces
