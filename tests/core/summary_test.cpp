// Run metrics (makespan, queuing, JCT, nearest-rank percentiles) and the summary JSON, on
// hand-built job states.
#include <doctest/doctest.h>

#include <vector>

#include "core/summary.h"
#include "support/jobs.h"

namespace {

using namespace salus::core;
using salus::test::job;
using salus::test::mib;
using salus::test::ms;

JobState done(TimeNs start, TimeNs finish, LaneId lane = 0) {
  JobState s;
  s.status = JobStatus::kDone;
  s.first_start_ns = start;
  s.finish_ns = finish;
  s.lane = lane;
  return s;
}

}  // namespace

TEST_CASE("nearest_rank is the ceil(q n)-th smallest value") {
  CHECK(nearest_rank({}, 0.95) == 0);
  const std::vector<TimeNs> one = {7};
  CHECK(nearest_rank(one, 0.95) == 7);
  CHECK(nearest_rank(one, 0.5) == 7);
  std::vector<TimeNs> v;
  for (TimeNs i = 1; i <= 20; ++i) v.push_back(i * 10);
  CHECK(nearest_rank(v, 0.95) == 190);  // ceil(19) = 19th
  CHECK(nearest_rank(v, 0.5) == 100);   // ceil(10) = 10th
  CHECK(nearest_rank(v, 1.0) == 200);
  v.push_back(210);                      // n = 21
  CHECK(nearest_rank(v, 0.95) == 200);  // ceil(19.95) = 20th
  CHECK(nearest_rank(v, 0.5) == 110);   // ceil(10.5) = 11th
  // Exact for every n where 0.95 n is an integer (no floating-point off-by-one).
  for (std::size_t n = 20; n <= 2000; n += 20) {
    std::vector<TimeNs> w(n);
    for (std::size_t i = 0; i < n; ++i) w[i] = static_cast<TimeNs>(i + 1);
    CHECK(nearest_rank(w, 0.95) == static_cast<TimeNs>(n * 95 / 100));
  }
}

TEST_CASE("compute_metrics over the FIFO schedule of the example, with a rejected and a failed job") {
  // FIFO: a 0 - 1.0 s, b 1.0 - 1.2 s (arrived 0.25), c 1.2 - 1.5 s (arrived 0.5).
  // JCT: 1.0, 0.95, 1.0 -> avg 2.95 / 3; queuing: 0, 0.75, 0.7 -> avg 1.45 / 3; p95: 3rd of 3
  // = 1.0 s; median: 2nd = 1.0 s. The failed job f ran 2.0 - 2.1 s: it counts for the makespan
  // (2.1 - 0) but not for JCT; the rejected job counts for neither.
  std::vector<JobSpec> specs = salus::test::paper_example();
  specs.push_back(job("r", ms(100), 1, ms(1), mib(1), mib(1)));
  specs.push_back(job("f", ms(2000), 1, ms(100), mib(1), mib(1)));
  std::vector<JobState> states = {done(0, ms(1000)), done(ms(1000), ms(1200)), done(ms(1200), ms(1500))};
  JobState r;
  r.status = JobStatus::kRejected;
  r.set_reason("too big");
  states.push_back(r);
  JobState f = done(ms(2000), ms(2100));
  f.status = JobStatus::kFailed;
  f.set_reason("kernel failed");
  states.push_back(f);
  const RunMetrics m = compute_metrics(specs, states);
  CHECK(m.jobs == 5);
  CHECK(m.done == 3);
  CHECK(m.rejected == 1);
  CHECK(m.failed == 1);
  CHECK(m.makespan_ns == ms(2100));
  CHECK(m.avg_jct_s == doctest::Approx(2.95 / 3).epsilon(1e-12));
  CHECK(m.avg_queuing_s == doctest::Approx(1.45 / 3).epsilon(1e-12));
  CHECK(m.p95_jct_ns == ms(1000));
  CHECK(m.median_jct_ns == ms(1000));
}

TEST_CASE("the makespan starts at the first arrival of a job that ran") {
  // The rejected job arrived first (t = 0); the others at 1 s and 2 s, finishing at 3 s.
  const std::vector<JobSpec> specs = salus::test::trace({job("r", 0, 1, ms(1), mib(1), mib(1)),
                                                         job("a", ms(1000), 1, ms(1), mib(1), mib(1)),
                                                         job("b", ms(2000), 1, ms(1), mib(1), mib(1))});
  JobState r;
  r.status = JobStatus::kRejected;
  const std::vector<JobState> states = {r, done(ms(1000), ms(2500)), done(ms(2500), ms(3000))};
  const RunMetrics m = compute_metrics(specs, states);
  CHECK(m.makespan_ns == ms(2000));
  CHECK(m.done == 2);
  // JCTs 1.5 s and 1.0 s; p95 of two = 2nd smallest = 1.5 s; median = ceil(1) = 1st = 1.0 s.
  CHECK(m.p95_jct_ns == ms(1500));
  CHECK(m.median_jct_ns == ms(1000));
}

TEST_CASE("no job done: zero metrics, no division by zero") {
  const std::vector<JobSpec> specs = salus::test::trace({job("r", 0, 1, ms(1), mib(1), mib(1))});
  JobState r;
  r.status = JobStatus::kRejected;
  const RunMetrics m = compute_metrics(specs, std::vector<JobState>{r});
  CHECK(m.done == 0);
  CHECK(m.makespan_ns == 0);
  CHECK(m.avg_jct_s == 0);
  CHECK(m.p95_jct_ns == 0);
}
