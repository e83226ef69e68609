// Steps of the backend's two long routines, called on their own: the gradient heap of
// Network::pass (gpu_backend/gradient_buffers.h) with a counting lane and with the CPU device, and
// the rules of RealExecutor's iteration pipeline (gpu_backend/run_pipeline.h). Placements and
// schedules are worked out by hand in the comments.
#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "gpu_backend/cpu_ops.h"
#include "gpu_backend/gradient_buffers.h"
#include "gpu_backend/run_pipeline.h"

namespace gpu = salus::gpu;
using gpu::Bytes;

TEST_CASE("GradientBuffers: first gradient in place, a second through a scratch buffer freed at finish") {
  gpu::Arena lane;         // counting: every pointer null, placements as in a real lane
  lane.allocate(1000);     // forward buffers: 1024 B
  gpu::GradientBuffers g(lane, 3, nullptr);
  CHECK_FALSE(g.has(2));
  CHECK(g.create(2, 100) == nullptr);  // 400 B -> 512 at heap offset 0
  CHECK(g.offset(2) == 0);
  g.target(1, 64);  // node 1's first gradient: its own 256 B at 512
  CHECK(g.offset(1) == 512);
  g.finish(1, 64, nullptr);
  float* scratch = g.target(1, 64);  // a second writer: scratch at 768, node 1 keeps its buffer
  CHECK(g.offset(1) == 512);
  CHECK(g.peak() == 1024);
  g.finish(1, 64, scratch);     // accumulated and freed
  g.target(0, 10);              // first fit: the freed scratch's 768
  CHECK(g.offset(0) == 768);
  g.release(2);                 // consumed: 0..512 free again
  float* s2 = g.target(0, 100); // node 0 has a gradient: scratch, first fit at 0
  g.finish(0, 100, s2);
  CHECK(g.peak() == 1024);
}

TEST_CASE("GradientBuffers on the CPU device: finish adds the scratch buffer into the gradient") {
  gpu::CpuOps ops;
  std::vector<float> storage(4096 / sizeof(float) + 64);
  auto* base = reinterpret_cast<std::byte*>(storage.data());
  gpu::Arena lane(base, 4096);
  lane.allocate(256);
  gpu::GradientBuffers g(lane, 2, &ops);
  float* own = g.target(1, 4);
  CHECK(own == reinterpret_cast<float*>(base + 256));  // the heap starts after the forward buffers
  for (int i = 0; i < 4; ++i) own[i] = static_cast<float>(i + 1);
  g.finish(1, 4, own);  // its own buffer: nothing to add
  float* scratch = g.target(1, 4);
  CHECK(scratch == reinterpret_cast<float*>(base + 512));
  for (int i = 0; i < 4; ++i) scratch[i] = static_cast<float>(10 * (i + 1));
  g.finish(1, 4, scratch);
  CHECK(g.of(1) == own);
  CHECK(std::vector<float>(own, own + 4) == std::vector<float>{11, 22, 33, 44});
  // More than the lane has left after its forward buffers (3840 B):
  CHECK_THROWS_AS(g.target(0, 4096), gpu::ArenaOverflow);
}

TEST_CASE("may_enqueue: the first iteration always, then at most lookahead beyond the one waited for, none after a stop") {
  using gpu::pipeline::may_enqueue;
  CHECK(may_enqueue(0, 0, 5, 0, true));   // the first, even with a stop asked for
  CHECK_FALSE(may_enqueue(1, 0, 5, 0, false));
  CHECK(may_enqueue(1, 0, 5, 1, false));
  CHECK_FALSE(may_enqueue(2, 0, 5, 1, false));
  CHECK_FALSE(may_enqueue(1, 0, 5, 1, true));
  CHECK_FALSE(may_enqueue(5, 4, 5, 1, false));  // all enqueued
}

namespace {

// run_on's loop over may_enqueue, with a stop asked for once iteration `stop_after` has been
// waited for: how many iterations the run does.
std::int64_t iterations_run(std::int64_t iterations, int lookahead, std::int64_t stop_after) {
  std::int64_t committed = 0, done = 0;
  bool stop = false;
  for (std::int64_t i = 0; i < iterations; ++i) {
    while (gpu::pipeline::may_enqueue(committed, i, iterations, lookahead, stop)) ++committed;
    if (i >= committed) break;
    ++done;
    if (i == stop_after) stop = true;
  }
  return done;
}

}  // namespace

TEST_CASE("may_enqueue in run_on's loop: a stop during iteration k ends the run after k + lookahead") {
  CHECK(iterations_run(10, 0, 1) == 2);
  CHECK(iterations_run(10, 1, 1) == 3);
  CHECK(iterations_run(10, 2, 1) == 4);
  CHECK(iterations_run(10, 1, 9) == 10);
  CHECK(iterations_run(3, 4, -1) == 3);
}

TEST_CASE("readback: the job's first iteration is waited for, its last only when it trains") {
  using gpu::pipeline::readback;
  const gpu::pipeline::Readback first = readback(0, 0, 5, false);
  CHECK(first.first);
  CHECK_FALSE(first.last);
  CHECK(first.wait);
  CHECK_FALSE(readback(0, 2, 5, false).wait);
  CHECK(readback(2, 2, 5, false).last);  // a later run's iteration 2 is the job's 5th
  CHECK(readback(2, 2, 5, false).wait);
  CHECK_FALSE(readback(2, 2, 5, true).wait);  // inference: no loss to read
  const gpu::pipeline::Readback only = readback(0, 0, 1, true);
  CHECK((only.first && only.last && only.wait));
  CHECK(gpu::pipeline::ring_slot(7, 3) == 1);
}
