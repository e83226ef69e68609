// Algorithm 1's pending queue: visited by admission key, then arrival order; a class that failed is skipped for the
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
  q.push(3, 0, 0, 1, 1);
  q.push(1, 0, 1, 2, 2);
  q.push(0, 0, 2, 1, 1);
  q.push(2, 0, 3, 5, 5);
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
  q.push(0, 0, 0, 1, 1);  // class A
  q.push(1, 0, 1, 2, 2);  // class B
  q.push(2, 0, 2, 1, 1);  // class A
  q.push(3, 0, 3, 3, 3);  // class C
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
  q.push(0, 0, 0, 1, 1);
  q.push(1, 0, 1, 2, 2);
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

TEST_CASE("admission keys come first, arrival order breaks ties, also inside a class") {
  PendingQueue q;
  q.push(0, 50, 0, 1, 1);  // class A
  q.push(1, 10, 1, 2, 2);  // class B
  q.push(2, 10, 2, 1, 1);  // class A, a smaller key than the class's head: it becomes the head
  q.push(3, 50, 3, 3, 3);  // class C
  std::vector<JobIndex> seen;
  CHECK(q.process([&](JobIndex j) {
    seen.push_back(j);
    return V::kAdmitted;
  }) == 4);
  CHECK(seen == std::vector<JobIndex>{1, 2, 0, 3});
  // A class blocked at its smaller-key head skips its larger-key jobs for the pass.
  q.push(4, 7, 4, 1, 1);
  q.push(5, 9, 5, 1, 1);
  q.push(6, 8, 6, 2, 2);
  seen.clear();
  CHECK(q.process([&](JobIndex j) {
    seen.push_back(j);
    return j == 4 ? V::kBlocked : V::kAdmitted;
  }) == 1);
  CHECK(seen == std::vector<JobIndex>{4, 6});
}

TEST_CASE("a job passed over waits alone: its class's next jobs are tried, and it keeps its place for the next pass") {
  PendingQueue q;
  q.push(0, 0, 0, 1, 1);  // class A
  q.push(1, 0, 1, 1, 1);  // class A
  q.push(2, 0, 2, 2, 2);  // class B
  q.push(3, 0, 3, 1, 1);  // class A
  std::vector<JobIndex> seen;
  CHECK(q.process([&](JobIndex j) {
    seen.push_back(j);
    if (j == 0 || j == 2) return V::kPassOver;
    return j == 1 ? V::kAdmitted : V::kBlocked;
  }) == 1);
  CHECK(seen == std::vector<JobIndex>{0, 1, 2, 3});
  CHECK(q.size() == 3);
  // The next pass visits the jobs left in arrival order again, the passed-over ones first.
  seen.clear();
  CHECK(q.process([&](JobIndex j) {
    seen.push_back(j);
    return V::kAdmitted;
  }) == 3);
  CHECK(seen == std::vector<JobIndex>{0, 2, 3});
  CHECK(q.empty());
  // kStop after a pass-over: the pass ends, and nothing is lost.
  q.push(4, 0, 4, 1, 1);
  q.push(5, 0, 5, 1, 1);
  q.push(6, 0, 6, 1, 1);
  seen.clear();
  CHECK(q.process([&](JobIndex j) {
    seen.push_back(j);
    return j == 4 ? V::kPassOver : V::kStop;
  }) == 0);
  CHECK(seen == std::vector<JobIndex>{4, 5});
  CHECK(q.size() == 3);
  seen.clear();
  q.process([&](JobIndex j) {
    seen.push_back(j);
    return V::kAdmitted;
  });
  CHECK(seen == std::vector<JobIndex>{4, 5, 6});
}

TEST_CASE("remove takes one waiting job out, its class and the order of the rest kept") {
  salus::core::PendingQueue q;
  q.push(0, 5, 0, 10, 20);
  q.push(1, 3, 1, 10, 20);
  q.push(2, 4, 2, 30, 40);
  CHECK(q.remove(1, 10, 20));
  CHECK_FALSE(q.remove(1, 10, 20));  // gone
  CHECK_FALSE(q.remove(2, 10, 20));  // not in that class
  CHECK(q.size() == 2);
  std::vector<salus::core::JobIndex> order;
  q.process([&](salus::core::JobIndex j) {
    order.push_back(j);
    return salus::core::PendingQueue::Verdict::kAdmitted;
  });
  CHECK(order == std::vector<salus::core::JobIndex>{2, 0});  // keys 4, 5
  CHECK(q.empty());
}
