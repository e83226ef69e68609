// The cluster's speed mechanisms as units, each against a fake cluster (its Host): what
// GangBatches cuts and when, where Speculation stops plans and how a rewind steps a GPU, which
// GPUs AbleCounter asks again; and
// JobKinds, the jobs' allowed GPU kinds and own speeds, on a hand-written cluster. The
// differential tests (cluster_gang_test.cpp, cluster_plan_test.cpp, cluster_gang_plan_test.cpp)
// check them inside the cluster against deciding at every boundary.
#include <doctest/doctest.h>

#include <map>
#include <set>
#include <stdexcept>
#include <utility>
#include <vector>

#include "cluster/able_gpus.h"
#include "cluster/gang_batches.h"
#include "cluster/job_kinds.h"
#include "cluster/speculation.h"
#include "support/jobs.h"

namespace {

using namespace salus;
using cluster::GangBatches;
using cluster::Speculation;
using core::TimeNs;

/// Two gangs: gang 0 on GPUs 0 and 1, gang 1 on GPUs 2 and 3; GPU 4 hosts none.
class FakeCluster final : public GangBatches::Host {
 public:
  std::map<std::int32_t, std::pair<std::uint64_t, std::size_t>> layouts;
  std::set<std::int32_t> crowded_gpus, admitting;
  std::set<std::int32_t> cut_or_transferred;
  bool gang_placeable = false;
  std::set<std::int32_t> paceable, unsteady;  // pace_crowded's and steady's answers, per gang
  std::vector<std::pair<std::int32_t, TimeNs>> cuts;
  std::vector<std::int32_t> crowded_cuts;  // the gangs cut as batches beside other lanes
  std::vector<std::pair<std::int32_t, TimeNs>> steady_asked;

  std::pair<std::uint64_t, std::size_t> layout(std::int32_t g) const override { return layouts.at(g); }
  std::int32_t gang_on(std::int32_t g) const override { return g < 4 ? g / 2 : -1; }
  std::span<const std::int32_t> gang_gpus(std::int32_t k) const override { return gpus_[static_cast<std::size_t>(k)]; }
  bool cut_or_transfer(std::int32_t k) const override { return cut_or_transferred.count(k) != 0; }
  bool crowded(std::int32_t g) const override { return crowded_gpus.count(g) != 0; }
  bool admits_queued_job(std::int32_t g) override { return admitting.count(g) != 0; }
  bool queued_gang_placeable() override { return gang_placeable; }
  bool pace_crowded(std::int32_t k) override { return paceable.count(k) != 0; }
  bool steady(std::int32_t k, TimeNs since) override {
    steady_asked.emplace_back(k, since);
    return unsteady.count(k) == 0;
  }
  void cut_batch(std::int32_t k, TimeNs t, bool crowded) override {
    cuts.emplace_back(k, t);
    if (crowded) crowded_cuts.push_back(k);
  }

 private:
  std::vector<std::vector<std::int32_t>> gpus_ = {{0, 1}, {2, 3}};
};

TEST_CASE("GangBatches: a batch is cut only where lock-step could differ from it") {
  FakeCluster c;
  for (std::int32_t g = 0; g < 5; ++g) c.layouts[g] = {1, 0};
  GangBatches b;
  const std::vector<std::int32_t> touched = {0, 2, 4};
  // Nothing batching: nothing is asked, nothing cut (even a crowded GPU).
  c.crowded_gpus = {0};
  b.note_layouts(touched, c);
  b.check(10, touched, 5, c);
  CHECK(c.cuts.empty());
  c.crowded_gpus.clear();

  b.started(0, 5);
  b.started(1, 5);
  CHECK(b.batching(0));
  CHECK(b.batching(1));
  // Nothing changed since the placement, nobody crowded: both go on.
  b.note_layouts(touched, c);
  b.check(10, touched, 5, c);
  CHECK(c.cuts.empty());

  // GPU 2's layout changed after the placement and it admits a queued job: gang 1 is cut, gang 0
  // is not (its GPUs' answers stand).
  c.admitting = {2, 0};
  b.note_layouts(touched, c);
  c.layouts[2] = {2, 0};
  b.check(20, touched, 5, c);
  CHECK(c.cuts == std::vector<std::pair<std::int32_t, TimeNs>>{{1, 20}});
  CHECK(b.batching(0));
  CHECK_FALSE(b.batching(1));

  // A lane beside gang 0's replica on GPU 1 (not touched: gang 0 is looked at through GPU 0).
  c.cuts.clear();
  c.crowded_gpus = {1};
  b.note_layouts(touched, c);
  b.check(30, touched, 5, c);
  CHECK(c.cuts == std::vector<std::pair<std::int32_t, TimeNs>>{{0, 30}});

  // A waiting gang job that can start once a touched GPU changed: every batch is cut.
  c.cuts.clear();
  c.crowded_gpus.clear();
  b.started(0, 35);
  b.started(1, 35);
  c.gang_placeable = true;
  b.note_layouts(touched, c);
  c.layouts[4] = {7, 0};
  b.check(40, touched, 5, c);
  CHECK(c.cuts == std::vector<std::pair<std::int32_t, TimeNs>>{{0, 40}, {1, 40}});

  // Asked to end at a boundary (or a transfer charged): cut; a round's end closes the batch.
  c.cuts.clear();
  c.gang_placeable = false;
  b.started(0, 45);
  c.cut_or_transferred = {0};
  b.note_layouts(touched, c);
  b.check(50, touched, 5, c);
  CHECK(c.cuts == std::vector<std::pair<std::int32_t, TimeNs>>{{0, 50}});
  b.started(1, 55);
  b.ended(1);
  CHECK_FALSE(b.batching(1));
  // A gang forgotten mid-batch leaves nothing batching: the next check asks nothing.
  b.started(0, 60);
  b.forget(0);
  CHECK_FALSE(b.batching(0));
  c.cuts.clear();
  c.crowded_gpus = {0, 1, 2, 3};
  b.note_layouts(touched, c);
  b.check(70, touched, 5, c);
  CHECK(c.cuts.empty());
  CHECK(c.crowded_cuts.empty());
  CHECK(c.steady_asked.empty());
}

TEST_CASE("GangBatches: a batch beside other lanes goes on from its first instant while it stays steady") {
  FakeCluster c;
  for (std::int32_t g = 0; g < 5; ++g) c.layouts[g] = {1, 0};
  GangBatches b;
  const std::vector<std::int32_t> touched = {0, 1, 2, 3};
  c.crowded_gpus = {0, 2};
  c.paceable = {0};  // gang 1's replicas cannot be held to a pace: cut at once
  b.started(0, 10);
  b.started(1, 10);
  b.note_layouts(touched, c);
  b.check(10, touched, 5, c);
  CHECK(c.cuts == std::vector<std::pair<std::int32_t, TimeNs>>{{1, 10}});
  CHECK(c.crowded_cuts.empty());  // gang 1 was never a batch beside others
  CHECK(b.batching(0));
  CHECK(c.steady_asked.empty());
  // Later instants ask whether gang 0 still runs as it did at 10, crowded or not.
  c.crowded_gpus.clear();
  b.check(20, touched, 5, c);
  CHECK(c.steady_asked == std::vector<std::pair<std::int32_t, TimeNs>>{{0, 10}});
  CHECK(c.cuts.size() == 1);
  c.unsteady = {0};
  b.check(30, touched, 5, c);
  CHECK(c.cuts.back() == std::pair<std::int32_t, TimeNs>{0, 30});
  CHECK(c.crowded_cuts == std::vector<std::int32_t>{0});
  CHECK_FALSE(b.batching(0));
  // A batch that found company after its first instant is cut there (pace_crowded not asked).
  c.unsteady.clear();
  c.steady_asked.clear();
  b.started(0, 40);
  b.check(40, touched, 5, c);
  CHECK(b.batching(0));
  c.crowded_gpus = {1};
  b.check(50, touched, 5, c);
  CHECK(c.cuts.back() == std::pair<std::int32_t, TimeNs>{0, 50});
  CHECK(c.crowded_cuts.size() == 1);
  CHECK(c.steady_asked.empty());
}

class FakeGpu final : public Speculation::Host {
 public:
  Speculation::GpuState state;
  TimeNs clock_ = 100;
  std::vector<TimeNs> completions = {150, 180, 240};
  std::vector<TimeNs> stepped;
  std::vector<TimeNs> replans;
  TimeNs replay_seen = -1;

  Speculation::GpuState& speculation(std::int32_t) override { return state; }
  TimeNs clock(std::int32_t) const override { return clock_; }
  void replan(std::int32_t, TimeNs t) override {
    replans.push_back(t);
    replay_seen = state.replay_until();
  }
  TimeNs next_completion(std::int32_t) const override {
    for (const TimeNs c : completions) {
      if (c > clock_) return c;
    }
    return core::kNever;
  }
  void step_alone(std::int32_t, TimeNs t) override {
    stepped.push_back(t);
    clock_ = t;
  }
};

TEST_CASE("Speculation: plans stop at gang arrivals (and on the largest GPU at jobs given to it), a rewind replays to the bind") {
  // Arrival order: a (1 GPU), b (a gang), c (1 GPU, given to the largest GPU), d (1 GPU).
  const auto at = [](const char* id, TimeNs arrival) { return salus::test::job(id, arrival, 1, core::kNsPerMs, 1, 1); };
  std::vector<core::JobSpec> jobs = {at("a", core::kNsPerS), at("b", 2 * core::kNsPerS), at("c", 3 * core::kNsPerS),
                                     at("d", 4 * core::kNsPerS)};
  jobs[1].gpus = 2;
  const std::vector<core::JobIndex> order = {0, 1, 2, 3};
  Speculation s;
  s.begin(jobs, order, [](core::JobIndex j) { return j == 2; });
  CHECK(s.stop(0, false) == 2 * core::kNsPerS);
  CHECK(s.stop(0, true) == 2 * core::kNsPerS);
  CHECK(s.stop(2, false) == core::kNever);
  CHECK(s.stop(2, true) == 3 * core::kNsPerS);
  CHECK(s.stop(3, true) == core::kNever);
  CHECK(s.stop(4, false) == core::kNever);

  // A bind at 200 inside a plan from 100: the plan is taken back at 100, the GPU steps through
  // its completions before 200 (150, 180) with plans ending by 200, then the replay ends.
  FakeGpu g;
  s.rewind(0, 200, g);
  CHECK(g.replans == std::vector<TimeNs>{100});
  CHECK(g.replay_seen == 200);
  CHECK(g.stepped == std::vector<TimeNs>{150, 180});
  CHECK_FALSE(g.state.replaying());
  CHECK(s.rewinds() == 1);

  // Deadlines: the policy's, the rule's, and on several GPUs the horizon (four times the time
  // between binds, 1 s before any).
  Speculation::GpuState st;
  CHECK(st.plan_deadline(0, core::kNever, core::kNever, false) == core::kNever);
  CHECK(st.plan_deadline(0, 50, 80, false) == 50);
  CHECK(st.plan_deadline(0, core::kNever, 80, false) == 80);
  CHECK(st.plan_deadline(0, core::kNever, core::kNever, true) == 4 * core::kNsPerS);
  st.note_bind(10 * core::kNsPerS);
  st.note_bind(12 * core::kNsPerS);  // interval (3 x 1 s + 2 s) / 4 = 1.25 s
  CHECK(st.plan_deadline(12 * core::kNsPerS, core::kNever, core::kNever, true) == 17 * core::kNsPerS);
}

TEST_CASE("JobKinds: allowed kind bits and sets, own speeds, names, and nothing kept without kinds") {
  cluster::ClusterSpec c;
  c.kinds = {{"V100", 16 * core::kGiB, 1'000'000}, {"P100", 16 * core::kGiB, 500'000}, {"K80", 12 * core::kGiB, 250'000}};
  const auto at = [](const char* id) { return salus::test::job(id, 0, 1, core::kNsPerMs, 1, 1); };
  std::vector<core::JobSpec> jobs = {at("any"), at("v"), at("pk"), at("kp"), at("none"), at("fast")};
  jobs[1].set_gpu_kinds("V100");
  jobs[2].set_gpu_kinds("P100|K80");
  jobs[3].set_gpu_kinds("K80|P100|A100");  // the same set; A100 is not in the cluster
  jobs[4].set_gpu_kinds("A100");           // no kind of the cluster: rejected at arrival
  jobs[5].set_kind_speeds({{"P100", 2'000'000}});
  const cluster::JobKinds k(jobs, c);
  CHECK(k.allowed(0) == cluster::kAnyKind);
  CHECK(k.set_of(0) == 0);
  CHECK(k.allowed(1) == 0b001);
  CHECK(k.allowed(2) == 0b110);
  CHECK(k.allowed(3) == 0b110);
  CHECK(k.set_of(2) == k.set_of(3));
  CHECK(k.set_of(1) != k.set_of(2));
  CHECK(k.set_of(1) > 0);
  CHECK(k.allowed(4) == 0);
  CHECK(k.has_speeds());
  CHECK(k.speed(5, 1, 500'000) == 2'000'000);  // its own on P100
  CHECK(k.speed(5, 0, 1'000'000) == 1'000'000);  // the GPU's elsewhere
  CHECK(k.speed(5, -1, 700'000) == 700'000);     // a GPU of no named kind
  CHECK(k.speed(0, 1, 500'000) == 500'000);
  CHECK(k.names() == "V100, P100, K80");
  // A speed that is not positive is refused; a cluster of no kinds keeps nothing and ignores both.
  jobs[5].set_kind_speeds({{"P100", 0}});
  CHECK_THROWS_AS(cluster::JobKinds(jobs, c), std::invalid_argument);
  const cluster::JobKinds none(jobs, cluster::ClusterSpec{});
  CHECK(none.allowed(4) == cluster::kAnyKind);
  CHECK(none.set_of(2) == 0);
  CHECK_FALSE(none.has_speeds());
  CHECK(none.speed(5, -1, 1'000'000) == 1'000'000);
  CHECK(none.names().empty());
}

}  // namespace

// AbleCounter: a waiting gang job's count of the GPUs that could take a replica, asked again
// only on the GPUs touched since, and on those whose yes was for now (SRTF's joins, which may
// turn no between touches).
TEST_CASE("AbleCounter: only touched GPUs and yeses for now are asked again") {
  using cluster::Able;
  cluster::TouchLog log(4);
  cluster::AbleCounter counter;
  cluster::AbleSet set;
  std::vector<Able> answer = {Able::kYes, Able::kYesForNow, Able::kNo, Able::kYes};
  std::vector<int> asked(4, 0);
  auto able = [&](std::int32_t g) {
    ++asked[static_cast<std::size_t>(g)];
    return answer[static_cast<std::size_t>(g)];
  };
  // The first count asks every GPU.
  CHECK(counter.count(set, log, log.seq(), 4, true, able) == 3);
  CHECK(asked == std::vector<int>{1, 1, 1, 1});
  // Nothing touched: only GPU 1 (a yes for now) is asked again; its yes turned no.
  answer[1] = Able::kNo;
  answer[3] = Able::kNo;  // not asked: GPU 3 was not touched, its yes stands
  CHECK(counter.count(set, log, log.seq(), 4, true, able) == 2);
  CHECK(asked == std::vector<int>{1, 2, 1, 1});
  // GPU 2 touched: asked again, now a yes; GPU 1's no is not asked again (a no stays until a touch).
  answer[2] = Able::kYesForNow;
  log.touch(2);
  CHECK(counter.count(set, log, log.seq(), 4, true, able) == 3);
  CHECK(asked == std::vector<int>{1, 2, 2, 1});
  // GPU 2's yes for now is asked again at the next count, touched or not.
  CHECK(counter.count(set, log, log.seq(), 4, true, able) == 3);
  CHECK(asked == std::vector<int>{1, 2, 3, 1});
  // Not incremental: every GPU asked; GPU 3's no is seen.
  CHECK(counter.count(set, log, log.seq(), 4, false, able) == 2);
  CHECK(asked == std::vector<int>{2, 3, 4, 2});
}
