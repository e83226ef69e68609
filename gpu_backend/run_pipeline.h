#pragma once
/// The rules of a run's iteration pipeline in the real executor (RealExecutor::run_on,
/// real_executor.cpp), as plain functions so that tests can check them without a device.
/// Internal to salus_gpu.
#include <cstddef>
#include <cstdint>

namespace salus::gpu::pipeline {

/// Whether a run of `iterations` iterations that has enqueued `committed` of them and waits next
/// for iteration `waiting` enqueues another now: at most `lookahead` beyond the one waited for,
/// the first always, a later one only while no stop was asked for and the device lives
/// (`stopping` false). This is where the run decides whether it goes on, so a stop asked for
/// before it ends the run after the iterations enqueued so far.
inline bool may_enqueue(std::int64_t committed, std::int64_t waiting, std::int64_t iterations, int lookahead,
                        bool stopping) {
  return committed < iterations && committed <= waiting + lookahead && (committed == 0 || !stopping);
}

/// The slot of a run's iteration k in its ring of `ring` device marks (lookahead + 2: the mark
/// before the iteration waited for is not re-recorded by those enqueued since).
inline std::size_t ring_slot(std::int64_t k, std::size_t ring) { return static_cast<std::size_t>(k) % ring; }

/// Which of a job's iterations the worker waits for right after enqueuing it: the job's first
/// (timed apart, its loss read back before the next iteration overwrites it) and, when it
/// trains, its last (its loss read back).
struct Readback {
  bool first = false;  ///< the job's first iteration: its time and first loss are recorded
  bool last = false;   ///< the job's last iteration: its last loss is recorded
  bool wait = false;   ///< the worker waits for this iteration before it enqueues another
};
/// For iteration k of a run of a job that had done `before` iterations before it, of `total`.
inline Readback readback(std::int64_t before, std::int64_t k, std::int64_t total, bool inference) {
  const std::int64_t n = before + k;
  Readback r;
  r.first = n == 0;
  r.last = n + 1 == total;
  r.wait = r.first || (r.last && !inference);
  return r;
}

}  // namespace salus::gpu::pipeline
