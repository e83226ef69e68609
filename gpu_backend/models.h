#pragma once
/// Runnable networks built from the model zoo's layer graphs (workloads/graph.h): the real
/// backend's side of "each architecture described once". build_model() (model.h) goes through
/// lower(); this header exposes the lowering itself, with where each layer of the graph went, so
/// that tests can compare the two sides layer by layer.
///
/// The lowering is exact except where the backend's layer set has no counterpart (each rule is
/// documented in workloads/README.md and checked by tests/gpu_backend/model_zoo_test.cpp):
/// - dropout is left out (the backend has no dropout layer; it changes no shape);
/// - a convolution without a bias gets one (the backend's convolution always adds one: one more
///   parameter per output channel), a batch norm without gamma gets one (one per channel);
/// - SAME padding becomes the symmetric padding (k - 1) / 2, which gives TF's output size for odd
///   windows (TF puts the odd pixel of padding at the bottom/right, so border values differ);
/// - the spatial mean is an average pool over the whole (square) feature map;
/// - the softmax loss is the network's loss over the logits' features (labels are synthetic);
/// - the batch norm that ends a residual branch (the second input of an add) starts with gamma 0,
///   so that each block starts as the identity (Goyal et al.; tf_cnn_benchmarks starts it at 1).
/// A layer the backend cannot run at all (LSTM, embedding, other losses, ...) or a graph with more
/// than one input is a std::logic_error naming the layer.
#include <memory>
#include <vector>

#include "gpu_backend/model.h"
#include "workloads/graph.h"

namespace salus::gpu {

/// A network built from a graph, and where each of the graph's layers went.
struct LoweredNetwork {
  std::unique_ptr<Network> network;
  /// node[i]: the network's node that computes layer i of the graph, or -1 for a layer the
  /// network leaves out (dropout, the loss).
  std::vector<int> node;
};

/// Builds the network of `graph` for mini-batches of `batch` samples.
LoweredNetwork lower(const workloads::Graph& graph, int batch);

}  // namespace salus::gpu
