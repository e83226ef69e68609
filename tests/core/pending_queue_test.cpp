// Algorithm 1's pending queue: visited in arrival order; a class that failed is skipped for the
// rest of the pass; kStop ends the pass.
#include <doctest/doctest.h>

#include <vector>

#include "core/pending_queue.h"

namespace {
using salus::core::JobIndex;
using salus::core::PendingQueue;
using V = PendingQueue::Verdict;
}  // namespace

TEST_CASE("process visits jobs in arrival order and removes the admitted ones") {
  PendingQueue q;
  q.push(3, 0, 1, 1);
  q.push(1, 1, 2, 2);
  q.push(0, 2, 1, 1);
  q.push(2, 3, 5, 5);
  CHECK(q.size() == 4);
  std::vector<JobIndex> seen;
  CHECK(q.process([&](JobIndex j) {
    seen.push_back(j);
    return V::kAdmitted;
  }) == 4);
  CHECK(seen == std::vector<JobIndex>{3, 1, 0, 2});
  CHECK(q.empty());
}

TEST_CASE("a blocked job's class is skipped for the rest of the pass, others still visited") {
  PendingQueue q;
  q.push(0, 0, 1, 1);  // class A
  q.push(1, 1, 2, 2);  // class B
  q.push(2, 2, 1, 1);  // class A
  q.push(3, 3, 3, 3);  // class C
  std::vector<JobIndex> seen;
  CHECK(q.process([&](JobIndex j) {
    seen.push_back(j);
    return j == 0 ? V::kBlocked : V::kAdmitted;
  }) == 2);
  CHECK(seen == std::vector<JobIndex>{0, 1, 3});  // 2 is of 0's class: not tried
  CHECK(q.size() == 2);
  // The next pass starts again from the earliest.
  seen.clear();
  CHECK(q.process([&](JobIndex j) {
    seen.push_back(j);
    return V::kAdmitted;
  }) == 2);
  CHECK(seen == std::vector<JobIndex>{0, 2});
}

TEST_CASE("kStop ends the pass and keeps the job") {
  PendingQueue q;
  q.push(0, 0, 1, 1);
  q.push(1, 1, 2, 2);
  std::vector<JobIndex> seen;
  CHECK(q.process([&](JobIndex j) {
    seen.push_back(j);
    return V::kStop;
  }) == 0);
  CHECK(seen == std::vector<JobIndex>{0});
  CHECK(q.size() == 2);
  seen.clear();
  q.process([&](JobIndex j) {
    seen.push_back(j);
    return j == 0 ? V::kAdmitted : V::kStop;
  });
  CHECK(seen == std::vector<JobIndex>{0, 1});
  CHECK(q.size() == 1);
}
