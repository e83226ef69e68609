// An independent brute-force reference for FIFO and SRTF, written from the semantics alone,
// iteration by iteration on an ideal GPU with no switching cost, compared job by job (exact ns)
// with run_schedule on the simulator and on the fake executor over hundreds of random traces.
//
// Reference semantics:
//  - a job with P + E > C is rejected at arrival;
//  - FIFO: one job at a time, in (arrival, trace order), each to completion;
//  - SRTF: one lane. The lane's size L is the largest E of its admitted, unfinished jobs (the
//    paper's L_j = max E; with lane shrinking off, the largest E admitted since it opened); it is
//    removed when its last job finishes (L = 0). Admission (Algorithm 1 ProcessRequests) visits
//    the queue by SRTF's priority, (solo time, arrival, trace order), at every arrival and every
//    finish, admitting each job with
//    sum P + P + max(L, E) <= C whose persistent block fits first-fit (from offset 0, between the
//    blocks of admitted jobs) below C - max(L, E), with every block below that line. At every iteration boundary the admitted job with the least
//    remaining solo time runs the next iteration; ties: earlier arrival, then trace order.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "core/scheduler.h"
#include "policies/registry.h"
#include "sim/interference.h"
#include "sim/sim_executor.h"
#include "support/fake_executor.h"
#include "support/jobs.h"

namespace {

using namespace salus::core;

struct Reference {
  std::vector<TimeNs> finish;
  std::vector<TimeNs> admitted;
  std::vector<bool> rejected;
};

std::vector<std::size_t> arrival_order(const std::vector<JobSpec>& jobs) {
  std::vector<std::size_t> order(jobs.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (jobs[a].arrival_ns != jobs[b].arrival_ns) return jobs[a].arrival_ns < jobs[b].arrival_ns;
    return jobs[a].trace_order < jobs[b].trace_order;
  });
  return order;
}

Reference reference_fifo(const std::vector<JobSpec>& jobs, Bytes capacity) {
  Reference r{std::vector<TimeNs>(jobs.size(), -1), std::vector<TimeNs>(jobs.size(), -1), std::vector<bool>(jobs.size(), false)};
  TimeNs free_at = 0;
  for (std::size_t j : arrival_order(jobs)) {
    if (jobs[j].persistent + jobs[j].ephemeral > capacity) {
      r.rejected[j] = true;
      continue;
    }
    const TimeNs start = std::max(free_at, jobs[j].arrival_ns);
    TimeNs t = start;
    for (std::int64_t i = 0; i < jobs[j].iterations; ++i) t += jobs[j].iter_ns;
    r.admitted[j] = start;
    r.finish[j] = t;
    free_at = t;
  }
  return r;
}

Reference reference_srtf(const std::vector<JobSpec>& jobs, Bytes capacity, bool shrink = true) {
  const std::size_t n = jobs.size();
  Reference r{std::vector<TimeNs>(n, -1), std::vector<TimeNs>(n, -1), std::vector<bool>(n, false)};
  const std::vector<std::size_t> order = arrival_order(jobs);
  std::vector<std::int64_t> done(n, 0);
  std::vector<std::size_t> pending;   // waiting for admission
  std::vector<std::size_t> admitted;  // unfinished
  Bytes sum_p = 0;
  std::map<Bytes, Bytes> blocks;             // persistent blocks: offset -> size
  std::vector<Bytes> block_of(n, 0);         // where each admitted job's block starts
  Bytes lane = 0;  // 0: no lane
  std::size_t next_arrival = 0;
  std::size_t finished = 0;
  std::size_t running = n;  // n: none
  TimeNs running_end = 0;
  TimeNs t = 0;
  auto earlier = [&](std::size_t a, std::size_t b) {
    if (jobs[a].arrival_ns != jobs[b].arrival_ns) return jobs[a].arrival_ns < jobs[b].arrival_ns;
    return jobs[a].trace_order < jobs[b].trace_order;
  };
  while (finished < n) {
    // 1. The iteration in flight ends.
    bool event = false;
    if (running != n && running_end == t) {
      const std::size_t j = running;
      running = n;
      if (++done[j] == jobs[j].iterations) {
        r.finish[j] = t;
        ++finished;
        sum_p -= jobs[j].persistent;
        if (jobs[j].persistent > 0) blocks.erase(block_of[j]);
        admitted.erase(std::find(admitted.begin(), admitted.end(), j));
        if (admitted.empty()) lane = 0;
        if (shrink) {
          lane = 0;
          for (std::size_t k : admitted) lane = std::max(lane, jobs[k].ephemeral);
        }
        event = true;
      }
    }
    // 2. Arrivals up to now.
    for (; next_arrival < n && jobs[order[next_arrival]].arrival_ns <= t; ++next_arrival) {
      const std::size_t j = order[next_arrival];
      event = true;
      if (jobs[j].persistent + jobs[j].ephemeral > capacity) {
        r.rejected[j] = true;
        ++finished;
      } else {
        pending.push_back(j);
      }
    }
    // 3. Admission by (solo time, arrival, trace order).
    if (event) {
      std::sort(pending.begin(), pending.end(), [&](std::size_t a, std::size_t b) {
        if (jobs[a].solo_ns() != jobs[b].solo_ns()) return jobs[a].solo_ns() < jobs[b].solo_ns();
        return earlier(a, b);
      });
      for (auto it = pending.begin(); it != pending.end();) {
        const JobSpec& s = jobs[*it];
        // The persistent block goes first-fit from offset 0 and, like the whole persistent
        // region, must end below the lane (which sits at the top, C - L).
        const Bytes limit = capacity - std::max(lane, s.ephemeral);
        Bytes hole = 0;
        for (const auto& [off, len] : blocks) {
          if (off - hole >= s.persistent) break;
          hole = off + len;
        }
        const Bytes top = blocks.empty() ? 0 : blocks.rbegin()->first + blocks.rbegin()->second;
        if (sum_p + s.persistent + std::max(lane, s.ephemeral) <= capacity && hole + s.persistent <= limit &&
            top <= limit) {
          if (s.persistent > 0) blocks[hole] = s.persistent;
          block_of[*it] = hole;
          sum_p += s.persistent;
          lane = std::max(lane, s.ephemeral);
          admitted.push_back(*it);
          r.admitted[*it] = t;
          it = pending.erase(it);
        } else {
          ++it;
        }
      }
    }
    // 4. At a boundary (nothing in flight) the shortest remaining job runs one iteration.
    if (running == n && !admitted.empty()) {
      std::size_t best = admitted.front();
      for (std::size_t j : admitted) {
        const TimeNs left = (jobs[j].iterations - done[j]) * jobs[j].iter_ns;
        const TimeNs best_left = (jobs[best].iterations - done[best]) * jobs[best].iter_ns;
        if (left < best_left || (left == best_left && earlier(j, best))) best = j;
      }
      running = best;
      running_end = t + jobs[best].iter_ns;
    }
    if (finished == n) break;
    // 5. Next instant: the end of the iteration in flight or the next arrival.
    TimeNs next = kNever;
    if (running != n) next = running_end;
    if (next_arrival < n) next = std::min(next, jobs[order[next_arrival]].arrival_ns);
    REQUIRE(next != kNever);  // something always runs or arrives (an idle GPU admits any job)
    t = next;
  }
  return r;
}

std::vector<JobSpec> random_trace(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto pick = [&](std::int64_t lo, std::int64_t hi) {
    return lo + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(hi - lo + 1));
  };
  const int n = static_cast<int>(pick(2, 12));
  std::vector<JobSpec> jobs;
  for (int i = 0; i < n; ++i) {
    JobSpec s;
    s.id = "j" + std::to_string(i);
    // A third arrive together with an earlier job (ties); the rest anywhere in the first 2 s.
    if (i > 0 && pick(0, 2) == 0) {
      s.arrival_ns = jobs[static_cast<std::size_t>(pick(0, i - 1))].arrival_ns;
    } else {
      s.arrival_ns = pick(0, 2'000'000'000);
    }
    s.iterations = pick(1, 50);
    s.iter_ns = pick(1'000'000, 100'000'000);
    // 16 GiB GPU: P up to 6 GiB and E up to 8 GiB make admission memory-limited now and then;
    // one job in 25 does not fit at all.
    if (pick(0, 24) == 0) {
      s.persistent = salus::test::gib(10);
      s.ephemeral = salus::test::gib(7);
    } else {
      s.persistent = salus::test::mib(pick(256, 6 * 1024));
      s.ephemeral = salus::test::mib(pick(256, 8 * 1024));
    }
    jobs.push_back(s);
  }
  // Trace order is a random permutation, so that it differs from the vector position.
  std::vector<std::int32_t> perm(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) perm[static_cast<std::size_t>(i)] = i;
  std::shuffle(perm.begin(), perm.end(), rng);
  for (int i = 0; i < n; ++i) jobs[static_cast<std::size_t>(i)].trace_order = perm[static_cast<std::size_t>(i)];
  return jobs;
}

std::string describe(const std::vector<JobSpec>& jobs) {
  std::string out;
  for (const JobSpec& s : jobs) {
    out += s.id + " arr " + std::to_string(s.arrival_ns) + " order " + std::to_string(s.trace_order) + " " +
           std::to_string(s.iterations) + " x " + std::to_string(s.iter_ns) + " P " + std::to_string(s.persistent / salus::test::mib(1)) +
           " MiB E " + std::to_string(s.ephemeral / salus::test::mib(1)) + " MiB\n";
  }
  return out;
}

// Compares one run with the reference; returns what differs ("" when nothing).
std::string compare(const std::vector<JobSpec>& jobs, const ScheduleOutcome& out, const Reference& ref) {
  std::string diff;
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    const JobState& st = out.jobs[j];
    if (ref.rejected[j] != (st.status == JobStatus::kRejected)) diff += jobs[j].id + ": rejection differs\n";
    if (st.finish_ns != ref.finish[j]) {
      diff += jobs[j].id + ": finish " + std::to_string(st.finish_ns) + ", reference " + std::to_string(ref.finish[j]) + "\n";
    }
    if (st.admitted_ns != ref.admitted[j]) {
      diff += jobs[j].id + ": admitted " + std::to_string(st.admitted_ns) + ", reference " + std::to_string(ref.admitted[j]) + "\n";
    }
  }
  return diff;
}

struct Totals {
  int traces = 0;
  int mismatched = 0;
  int mismatched_small_lane = 0;  // of which a run was given a lane smaller than its job's E
  std::string first;
  int delayed_admissions = 0;  // memory-limited: admitted after arrival though the GPU was shared
  int rejections = 0;
  int ties = 0;
};

void compare_on_random_traces(const char* policy_name, std::uint64_t first_seed, int count, Totals& totals,
                              bool shrink = true) {
  const auto policy = salus::policies::make_policy(policy_name);
  const Bytes capacity = salus::test::gib(16);
  for (std::uint64_t seed = first_seed; seed < first_seed + static_cast<std::uint64_t>(count); ++seed) {
    const std::vector<JobSpec> jobs = random_trace(seed);
    const Reference ref =
        std::string(policy_name) == "fifo" ? reference_fifo(jobs, capacity) : reference_srtf(jobs, capacity, shrink);
    SchedulerOptions o;
    o.capacity = capacity;
    o.lane_shrink = shrink;
    o.lane_mode = policy->default_lane_mode();
    salus::sim::NoInterference model;
    salus::sim::SimExecutor sim(jobs, model);
    const ScheduleOutcome by_sim = run_schedule(jobs, *policy, sim, o);
    salus::test::FakeExecutor fake(jobs);
    const ScheduleOutcome by_fake = run_schedule(jobs, *policy, fake, o);
    std::string diff = compare(jobs, by_sim, ref);
    const std::string fake_diff = compare(jobs, by_fake, ref);
    if (!fake_diff.empty() && diff.empty()) diff = "(fake executor only)\n" + fake_diff;
    ++totals.traces;
    bool small_lane = false;
    for (const Dispatch& d : fake.dispatches) small_lane |= d.lane_size < jobs[static_cast<std::size_t>(d.job)].ephemeral;
    if (!diff.empty() && small_lane) ++totals.mismatched_small_lane;
    if (!diff.empty() && totals.mismatched++ == 0) {
      totals.first = std::string(policy_name) + ", seed " + std::to_string(seed) + ":\n" + describe(jobs) + diff;
    }
    for (std::size_t j = 0; j < jobs.size(); ++j) {
      if (ref.rejected[j]) ++totals.rejections;
      if (ref.admitted[j] > jobs[j].arrival_ns) ++totals.delayed_admissions;
      for (std::size_t k = 0; k < j; ++k) totals.ties += jobs[k].arrival_ns == jobs[j].arrival_ns;
    }
  }
}

}  // namespace

TEST_CASE("reference: FIFO on 250 random traces, exact finish times") {
  Totals t;
  compare_on_random_traces("fifo", 1, 250, t);
  CHECK_MESSAGE(t.mismatched == 0, t.mismatched, " of ", t.traces, " traces differ (", t.mismatched_small_lane,
                " of them ran a job in a lane smaller than its E); first:\n", t.first);
  CHECK(t.rejections > 10);
  CHECK(t.ties > 100);
}

TEST_CASE("reference: SRTF on 250 random traces, exact finish and admission times") {
  Totals t;
  compare_on_random_traces("srtf", 1001, 250, t);
  CHECK_MESSAGE(t.mismatched == 0, t.mismatched, " of ", t.traces, " traces differ (", t.mismatched_small_lane,
                " of them ran a job in a lane smaller than its E); first:\n", t.first);
  // The traces did exercise memory-limited admission, rejection and simultaneous arrivals.
  CHECK(t.delayed_admissions > 100);
  CHECK(t.rejections > 10);
  CHECK(t.ties > 100);
}

TEST_CASE("reference: SRTF with lane shrinking off on 250 random traces, exact finish and admission times") {
  Totals t;
  compare_on_random_traces("srtf", 3001, 250, t, false);
  CHECK_MESSAGE(t.mismatched == 0, t.mismatched, " of ", t.traces, " traces differ; first:\n", t.first);
  CHECK(t.delayed_admissions > 100);
}

TEST_CASE("reference: the reference itself on the example") {
  // FIFO a 1.0, b 1.2, c 1.5; SRTF a 1.5, b 0.5, c 0.8 (the hand-verified example).
  const auto jobs = salus::test::paper_example();
  CHECK(reference_fifo(jobs, salus::test::gib(16)).finish == std::vector<TimeNs>{1'000'000'000, 1'200'000'000, 1'500'000'000});
  CHECK(reference_srtf(jobs, salus::test::gib(16)).finish == std::vector<TimeNs>{1'500'000'000, 500'000'000, 800'000'000});
}
