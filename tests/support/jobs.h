#pragma once
/// Small helpers to write traces by hand in tests: exact integer units, trace order by position.
#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/job.h"
#include "core/scheduler.h"
#include "core/units.h"

namespace salus::test {

constexpr core::TimeNs ms(std::int64_t x) { return x * core::kNsPerMs; }
constexpr core::Bytes mib(std::int64_t x) { return x * core::kMiB; }
constexpr core::Bytes gib(std::int64_t x) { return x * core::kGiB; }

/// One job; trace_order is set by `trace()` from its position.
inline core::JobSpec job(std::string id, core::TimeNs arrival_ns, std::int64_t iterations, core::TimeNs iter_ns,
                         core::Bytes persistent, core::Bytes ephemeral, std::int32_t util_ppm = 1'000'000) {
  core::JobSpec s;
  s.id = std::move(id);
  s.arrival_ns = arrival_ns;
  s.iterations = iterations;
  s.iter_ns = iter_ns;
  s.persistent = persistent;
  s.ephemeral = ephemeral;
  s.gpu_util_ppm = util_ppm;
  return s;
}

/// A whole-GPU job of `gpus` GPUs (1 + 14 GiB) arriving at `arrival_s` and running `seconds` alone,
/// in iterations of 1 s: the preemptive cluster policies' hand cases.
inline core::JobSpec whole_gpu_job(std::string id, std::int64_t arrival_s, std::int64_t seconds, std::int32_t gpus = 1) {
  core::JobSpec s = job(std::move(id), arrival_s * core::kNsPerS, seconds, core::kNsPerS, gib(1), gib(14));
  s.gpus = gpus;
  return s;
}

/// Numbers the jobs in vector order (JobSpec::trace_order = index), as a trace loader does.
inline std::vector<core::JobSpec> trace(std::vector<core::JobSpec> jobs) {
  for (std::size_t i = 0; i < jobs.size(); ++i) jobs[i].trace_order = static_cast<std::int32_t>(i);
  return jobs;
}

/// The hand-verified example of the brief: 16 GiB, P = 1000 MiB, E = 4000 MiB, 100 ms iterations;
/// a (t = 0, 10 iterations), b (t = 0.25 s, 2), c (t = 0.5 s, 3).
/// n random jobs for equivalence tests, in arrival order: arrivals in steps of 0-400 ms (a quarter
/// at the same instant as the one before), 1-60 iterations times `iteration_scale`, 1-51 ms
/// iterations, P up to 3000 MiB, E up to 9000 MiB, utilisation 0.1-1. After each job's base figures,
/// `extra(job, i, pick)` may change it, drawing from the same generator (pick(lo, hi): uniform in
/// [lo, hi]), so a test's traces depend only on its seed and its own draws.
template <class Extra>
std::vector<core::JobSpec> random_jobs(std::uint64_t seed, int n, std::int64_t iteration_scale, Extra extra) {
  std::mt19937_64 rng(seed);
  auto pick = [&](std::int64_t lo, std::int64_t hi) {
    return lo + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(hi - lo + 1));
  };
  std::vector<core::JobSpec> jobs;
  core::TimeNs t = 0;
  for (int i = 0; i < n; ++i) {
    if (pick(0, 3) != 0) t += ms(pick(0, 400));
    jobs.push_back(job("j" + std::to_string(i), t, pick(1, 60) * iteration_scale, ms(pick(1, 50)) + pick(0, 999'999),
                       mib(pick(0, 3000)), mib(pick(0, 9000)), static_cast<std::int32_t>(pick(100'000, 1'000'000))));
    extra(jobs.back(), i, pick);
  }
  return trace(std::move(jobs));
}

inline std::vector<core::JobSpec> paper_example() {
  return trace({job("a", 0, 10, ms(100), mib(1000), mib(4000)),
                job("b", ms(250), 2, ms(100), mib(1000), mib(4000)),
                job("c", ms(500), 3, ms(100), mib(1000), mib(4000))});
}

/// Finish times of all jobs, indexed like the specs.
inline std::vector<core::TimeNs> finishes(const core::ScheduleOutcome& out) {
  std::vector<core::TimeNs> f;
  for (const core::JobState& s : out.jobs) f.push_back(s.finish_ns);
  return f;
}

/// A segment as a comparable tuple (lane, job, start, end, iterations, switch).
struct Seg {
  core::LaneId lane;
  core::JobIndex job;
  core::TimeNs start_ns;
  core::TimeNs end_ns;
  std::int64_t iterations;
  core::TimeNs switch_ns = 0;
  friend bool operator==(const Seg&, const Seg&) = default;
};

/// Segments sorted by (start, lane): the order in which runs of one instant complete is the
/// executor's business, so tests compare this canonical order.
inline std::vector<Seg> sorted(std::vector<Seg> v) {
  std::sort(v.begin(), v.end(), [](const Seg& a, const Seg& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.lane < b.lane;
  });
  return v;
}

inline std::vector<Seg> segments(const core::ScheduleOutcome& out) {
  std::vector<Seg> v;
  for (const core::Segment& s : out.segments) v.push_back({s.lane, s.job, s.start_ns, s.end_ns, s.iterations, s.switch_ns});
  return sorted(std::move(v));
}

inline std::string to_string(const Seg& s) {
  return "{lane " + std::to_string(s.lane) + ", job " + std::to_string(s.job) + ", " + std::to_string(s.start_ns) +
         ".." + std::to_string(s.end_ns) + ", " + std::to_string(s.iterations) + " it, switch " +
         std::to_string(s.switch_ns) + "}";
}

inline std::string to_string(const std::vector<Seg>& v) {
  std::string out;
  for (const Seg& s : v) out += to_string(s) + "\n";
  return out;
}

inline std::string to_string(const core::LaneMove& m) {
  return "{t " + std::to_string(m.time_ns) + ", lane " + std::to_string(m.lane) + ", from " +
         std::to_string(m.from_offset) + "+" + std::to_string(m.from_size) + ", to " + std::to_string(m.to_offset) +
         "+" + std::to_string(m.to_size) + "}";
}

inline bool same_move(const core::LaneMove& a, const core::LaneMove& b) {
  return a.time_ns == b.time_ns && a.lane == b.lane && a.from_offset == b.from_offset && a.from_size == b.from_size &&
         a.to_offset == b.to_offset && a.to_size == b.to_size;
}

inline std::string to_string(const std::vector<core::LaneMove>& v) {
  std::string out;
  for (const core::LaneMove& m : v) out += to_string(m) + "\n";
  return out;
}

}  // namespace salus::test
