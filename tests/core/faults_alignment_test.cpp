// Two guarantees the scheduling loop gives every executor: every persistent block and lane it
// hands out is aligned (SchedulerOptions::alignment, 256 bytes by default) whatever sizes the
// trace has, and a completion that reports the device lost (Completion::fatal) ends the run with
// every unfinished job failed. Driven by the fake executor with small policies written here.
#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/lanes.h"
#include "core/scheduler.h"
#include "support/fake_executor.h"
#include "support/jobs.h"
#include "support/test_policies.h"

namespace {

using namespace salus::core;
using salus::test::FakeExecutor;
using salus::test::job;
using salus::test::mib;
using salus::test::ms;
using salus::test::trace;

using salus::test::FirstAdmitted;  // within a lane the earliest admitted job runs to completion

// One iteration at a time, the lane's jobs in turn (the last job goes to the back).
class RoundRobin final : public Policy {
 public:
  std::string_view name() const override { return "round_robin"; }
  std::string_view description() const override { return "test"; }
  LaneMode default_lane_mode() const override { return LaneMode::kSingle; }
  bool supports(LaneMode) const override { return true; }
  Decision choose(const SchedulerView&, const LaneSnapshot& lane) override {
    for (std::size_t k = 0; k < lane.jobs.size(); ++k) {
      if (lane.jobs[k] == lane.last_job) return {lane.jobs[(k + 1) % lane.jobs.size()], 1};
    }
    return {lane.jobs.front(), 1};
  }
};

/// The fake executor, checking every offset it is handed against the alignment and the capacity,
/// and recording them.
class CheckingExecutor final : public Executor {
 public:
  CheckingExecutor(std::span<const JobSpec> jobs, Bytes alignment, Bytes capacity)
      : inner_(jobs), jobs_(jobs), alignment_(alignment), capacity_(capacity) {}
  TimeNs now() const override { return inner_.now(); }
  void admit(JobIndex j, const JobSpec& s, Bytes offset) override {
    const Bytes block = (s.persistent + alignment_ - 1) / alignment_ * alignment_;
    INFO("job ", s.id, " P ", s.persistent, " at ", offset);
    CHECK(offset % alignment_ == 0);
    CHECK(offset >= 0);
    CHECK(offset + block <= capacity_);
    ++admits;
    inner_.admit(j, s, offset);
  }
  void release(JobIndex j) override { inner_.release(j); }
  void start(const Dispatch& d) override {
    const JobSpec& s = jobs_[static_cast<std::size_t>(d.job)];
    INFO("job ", s.id, " E ", s.ephemeral, " lane ", d.lane, " at ", d.lane_offset, " size ", d.lane_size);
    CHECK(d.lane_offset % alignment_ == 0);
    CHECK(d.lane_size % alignment_ == 0);
    CHECK(d.lane_size >= s.ephemeral);
    CHECK(d.lane_offset >= 0);
    CHECK(d.lane_offset + d.lane_size <= capacity_);
    ++starts;
    inner_.start(d);
  }
  void stop_at_boundary(LaneId lane) override { inner_.stop_at_boundary(lane); }
  void wait(TimeNs deadline, std::vector<Completion>& out) override { inner_.wait(deadline, out); }

  int admits = 0;
  int starts = 0;

 private:
  FakeExecutor inner_;
  std::span<const JobSpec> jobs_;
  Bytes alignment_;
  Bytes capacity_;
};

/// The fake executor; the first completion of `victim` reports the device lost.
class LosingExecutor final : public Executor {
 public:
  LosingExecutor(std::span<const JobSpec> jobs, JobIndex victim) : inner_(jobs), victim_(victim) {}
  TimeNs now() const override { return inner_.now(); }
  void start(const Dispatch& d) override {
    inner_.start(d);
    starts.push_back({d.job, inner_.now()});
  }
  void stop_at_boundary(LaneId lane) override { inner_.stop_at_boundary(lane); }
  void wait(TimeNs deadline, std::vector<Completion>& out) override {
    const std::size_t before = out.size();
    inner_.wait(deadline, out);
    for (std::size_t i = before; i < out.size(); ++i) {
      if (out[i].job == victim_ && !lost_) {
        out[i].failed = true;
        out[i].fatal = true;
        out[i].error = "cudaStreamSynchronize failed: an illegal memory access was encountered";
        lost_ = true;
      }
    }
  }
  std::vector<std::pair<JobIndex, TimeNs>> starts;

 private:
  FakeExecutor inner_;
  JobIndex victim_;
  bool lost_ = false;
};

}  // namespace

TEST_CASE("LaneManager with an alignment rounds P and E up and the capacity down") {
  LaneManager lm(1000, 0, false, 256);  // C = 768
  CHECK(lm.capacity() == 768);
  CHECK(lm.aligned(0) == 0);
  CHECK(lm.aligned(1) == 256);
  CHECK(lm.aligned(256) == 256);
  CHECK(lm.aligned(257) == 512);
  CHECK(lm.fits_alone(256, 512));
  CHECK_FALSE(lm.fits_alone(257, 512));  // 512 + 512 > 768
  const FindLaneResult a = lm.admit(10, 100);  // P 256 at 0, lane of 256 at 512
  CHECK(a.choice == LaneChoice::kNewLane);
  CHECK(a.persistent_offset == 0);
  CHECK(lm.persistent_bytes() == 256);
  CHECK(lm.lanes_bytes() == 256);
  lm.settle(0, nullptr);
  CHECK(lm.lane(a.lane).offset == 512);
  const FindLaneResult b = lm.admit(1, 1);  // P 256 at 256; sum P + P + sum L + E = 1024 > 768: the existing lane
  CHECK(b.choice == LaneChoice::kExistingLane);
  CHECK(b.persistent_offset == 256);
  CHECK(lm.admit(1, 1).choice == LaneChoice::kNotFound);  // 3 x 256 + 256 > 768
  lm.check_invariants();
  lm.release(b.lane, 1, b.persistent_offset);  // released with the size it was admitted with
  CHECK(lm.persistent_bytes() == 256);
  lm.check_invariants();
  CHECK_THROWS_AS(LaneManager(255, 0, false, 256), std::logic_error);  // nothing left after rounding down
  CHECK_THROWS_AS(LaneManager(1000, 0, false, 0), std::logic_error);
}

TEST_CASE("the loop's default alignment is the one constant core::kAlignment, 256 bytes") {
  static_assert(kAlignment == 256);
  CHECK(SchedulerOptions{}.alignment == kAlignment);
}

TEST_CASE("a job that fits only before rounding is rejected, and the reason says why") {
  // C = 1000 B rounds down to 768; P + E = 300 + 400 = 700 B fits C but not 512 + 512 > 768.
  const auto jobs = trace({job("r", 0, 1, ms(1), 300, 400), job("ok", 0, 1, ms(1), 256, 512)});
  FirstAdmitted p;
  FakeExecutor exec(jobs);
  SchedulerOptions o;
  o.capacity = 1000;
  const ScheduleOutcome out = run_schedule(jobs, p, exec, o);
  CHECK(out.jobs[0].status == JobStatus::kRejected);
  CHECK(out.jobs[0].reason() ==
        "needs P + E = 300 B + 400 B = 700 B, more than the GPU's 1000 B once P and E are rounded up and C down to "
        "whole 256-byte units");
  CHECK(out.jobs[1].status == JobStatus::kDone);
}

TEST_CASE("run_schedule refuses an alignment below 1 and a capacity below one unit") {
  const auto jobs = trace({job("a", 0, 1, ms(1), 1, 1)});
  FirstAdmitted p;
  FakeExecutor exec(jobs);
  SchedulerOptions o;
  o.alignment = 0;
  CHECK_THROWS_WITH_AS(run_schedule(jobs, p, exec, o), "alignment must be at least 1 byte", std::invalid_argument);
  o.alignment = 256;
  o.capacity = 255;
  CHECK_THROWS_WITH_AS(run_schedule(jobs, p, exec, o), "capacity must hold at least one alignment unit",
                       std::invalid_argument);
}

TEST_CASE("randomized traces with odd sizes: every block and lane handed to the executor is aligned and inside C") {
  // Sizes, capacities and arrival times drawn so that most are not multiples of 256 and lanes
  // open, grow, move and close; both lane modes. The loop checks its own invariants
  // (check_invariants: blocks and lanes aligned, no overlap) after every change.
  int runs = 0, admitted = 0, started = 0;
  for (std::uint32_t seed = 1; seed <= 150; ++seed) {
    std::mt19937_64 rng(seed);
    auto uniform = [&](std::int64_t lo, std::int64_t hi) {
      return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
    };
    const Bytes capacity = uniform(mib(64), mib(512)) | 1;  // odd
    std::vector<JobSpec> specs;
    const int n = static_cast<int>(uniform(1, 14));
    for (int j = 0; j < n; ++j) {
      specs.push_back(job("j" + std::to_string(j), ms(uniform(0, 200)), uniform(1, 6), ms(uniform(1, 40)),
                          uniform(0, mib(120)) | 1, uniform(1, mib(200)) | 3));
    }
    const auto jobs = trace(specs);
    for (const LaneMode mode : {LaneMode::kAuto, LaneMode::kSingle}) {
      CAPTURE(seed);
      CAPTURE(to_string(mode));
      CheckingExecutor exec(jobs, 256, capacity);
      FirstAdmitted first;
      RoundRobin rr;
      SchedulerOptions o;
      o.capacity = capacity;
      o.lane_mode = mode;
      const ScheduleOutcome out =
          mode == LaneMode::kAuto ? run_schedule(jobs, first, exec, o) : run_schedule(jobs, rr, exec, o);
      for (const JobState& st : out.jobs) {
        CHECK((st.status == JobStatus::kDone || st.status == JobStatus::kRejected));
      }
      ++runs;
      admitted += exec.admits;
      started += exec.starts;
    }
  }
  // The draw exercises the layout: most jobs are admitted and run.
  CHECK(runs == 300);
  CHECK(admitted > 1000);
  CHECK(started > admitted);
}

TEST_CASE("a completion reporting the device lost ends the run: every unfinished job fails with the reason") {
  // Auto lanes, 1 GiB. a (2 x 10 ms) and b (10 x 15 ms) run at once in two lanes from 0; w
  // (P 600 MiB) waits for memory; late arrives at 1 s. a's run ends at 20 ms with the device
  // lost: nothing more is admitted or dispatched, b is asked to stop at its next boundary (30 ms,
  // 2 iterations done), then b, w and late fail with the reason; the run ends at 30 ms.
  const auto jobs = trace({job("a", 0, 2, ms(10), mib(100), mib(100)), job("b", 0, 10, ms(15), mib(100), mib(100)),
                           job("w", 0, 1, ms(10), mib(600), mib(200)), job("late", ms(1000), 1, ms(10), mib(1), mib(1))});
  LosingExecutor exec(jobs, 0);
  FirstAdmitted p;
  SchedulerOptions o;
  o.capacity = salus::test::gib(1);
  const ScheduleOutcome out = run_schedule(jobs, p, exec, o);
  const std::string error = "cudaStreamSynchronize failed: an illegal memory access was encountered";
  CHECK(out.fatal_error == error);
  CHECK(out.jobs[0].status == JobStatus::kFailed);
  CHECK(out.jobs[0].reason() == error);
  CHECK(out.jobs[0].finish_ns == ms(20));
  CHECK(out.jobs[1].status == JobStatus::kFailed);
  CHECK(out.jobs[1].iterations_done == 2);
  const std::string lost = "not run to the end: the device was lost (" + error + ")";
  CHECK(out.jobs[1].reason() == lost);
  CHECK(out.jobs[2].status == JobStatus::kFailed);
  CHECK(out.jobs[2].reason() == lost);
  CHECK(out.jobs[2].first_start_ns == -1);
  CHECK(out.jobs[3].status == JobStatus::kFailed);
  CHECK(out.jobs[3].reason() == lost);
  CHECK(out.end_ns == ms(30));
  // Only a and b were ever dispatched, both at 0.
  REQUIRE(exec.starts.size() == 2);
  CHECK(exec.starts[0].second == 0);
  CHECK(exec.starts[1].second == 0);
}
