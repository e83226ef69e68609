#pragma once
/// The gradients of one backward pass (Network::pass, model.cpp): a first-fit heap in the lane
/// after the forward buffers, where each node's output gradient lives only from its first writer
/// to the node's own backward step. Internal to salus_gpu; a header so that tests can drive it.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "gpu_backend/memory_pool.h"
#include "gpu_backend/ops.h"

namespace salus::gpu {

/// g[j] is the gradient of node j's output. The first gradient written for j becomes g[j]; a later
/// one (a node read by two others) goes to a scratch buffer that finish() adds into g[j] and frees.
/// Works on heap offsets, so that with a counting lane (ops == nullptr, every pointer null) it
/// makes exactly the placements of a real pass and peak() measures what the lane must hold.
class GradientBuffers {
 public:
  /// A heap over what `lane` has left after its current allocations, for a graph of `nodes`
  /// nodes; `ops` (nullptr when counting) accumulates scratch buffers.
  GradientBuffers(const Arena& lane, std::size_t nodes, Ops* ops);
  /// A new buffer of `count` floats as node j's gradient (j has none yet).
  float* create(std::size_t j, std::int64_t count);
  /// Where a gradient for node j (of `count` floats) is written: a new g[j] when j has none yet,
  /// else a scratch buffer. Pass what it returns to finish() once written.
  float* target(std::size_t j, std::int64_t count);
  /// After `buf` (from target(j)) is written: a scratch buffer is added into g[j] and freed.
  void finish(std::size_t j, std::int64_t count, float* buf);
  /// Whether node j has a gradient yet, and the gradient (null when counting).
  bool has(std::size_t j) const { return offset_[j] >= 0; }
  float* of(std::size_t j) const { return g_[j]; }
  /// Heap offset of node j's gradient, -1 without one.
  Bytes offset(std::size_t j) const { return offset_[j]; }
  /// Frees node j's gradient once its backward step has consumed it.
  void release(std::size_t j) { heap_.release(offset_[j]); }
  /// The heap's high-water mark: what the gradients took from the lane at most.
  Bytes peak() const { return heap_.peak(); }

 private:
  float* allocate(std::int64_t count, Bytes* offset);

  OffsetHeap heap_;
  std::byte* base_;  // the lane's next free byte when the heap was made; null when counting
  Ops* ops_;
  std::vector<float*> g_;
  std::vector<Bytes> offset_;  // -1: no gradient yet (pointers are all null when counting)
  Bytes scratch_ = -1;         // offset of the scratch buffer between target() and finish(), else -1
};

}  // namespace salus::gpu
