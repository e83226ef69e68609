// The binding rule as an independent oracle (docs/cluster.md; cluster/README.md, "When a job is
// bound"): "a job is bound to a GPU only where it starts at once, judged at every instant after
// every GPU's state at that instant is settled, on current remaining times, a held lane counting
// as not starting". This file does not ask the cluster anything: from a run's outputs alone (each
// job's GPUs, admission, first start and finish; each GPU's segments and lane moves) it rebuilds
// every GPU's residents, lanes and memory at every instant, and re-derives from the rule
//  (a) for every job at every instant it waited in the cluster queue, that fewer GPUs than it
//      needs could have started it there and then;
//  (b) for every 1-GPU job bound from the queue, that it started at once where it was bound: at
//      the bind (a lane of its own, or a lane with nothing in flight), at the end of the run in
//      flight in its lane (SRTF, priority), or within its lane's next turn (FAIR, LAS: no other
//      job of the lane runs twice after the bind before it runs).
// A gang replica holds its lane on a GPU from the instant that GPU chose it (its run's segment
// there starts) to the instant the last of its GPUs chose it (the latest start of that run's
// segments): a held lane starts no newcomer. Where the outputs do not say enough it asks nothing
// (a GPU counts as unable): a run in flight not at solo pace (its next boundary unknown; SRTF
// only), a lane move still pending (the layout not settled), blocks placed at one instant with a
// gang replica. So (a) may miss a violation but never reports one that is not.
// It runs on random traces with gangs under every policy x placement x interference model (none,
// profiled), and on the hand cases of the issue that found the rule broken.
// Under the queue disciplines that keep order (cluster/queue_discipline.h) it judges (a) for the
// first job of the queue only (strict: the jobs behind it wait by rule; EASY: they may wait for
// its reservation), and, under strict, (c): no job starts while one ahead of it in the queue's
// order (the policy's admission key, then arrival) waits.
#include <doctest/doctest.h>

#include <algorithm>
#include <initializer_list>
#include <cstdint>
#include <map>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "cluster/cluster.h"
#include "cluster/placement.h"
#include "core/units.h"
#include "policies/registry.h"
#include "sim/interference.h"
#include "support/jobs.h"

using namespace salus;

namespace {

using core::Bytes;
using core::TimeNs;

constexpr Bytes kAlign = 256;
Bytes up(Bytes b) { return (b + kAlign - 1) / kAlign * kAlign; }

enum class Mode { kExclusive, kSingle, kAuto };

Mode mode_of(const std::string& policy) {
  if (policy == "fifo") return Mode::kExclusive;
  if (policy == "pack") return Mode::kAuto;
  return Mode::kSingle;
}

cluster::ClusterOptions options(const std::string& policy, std::int32_t gpus, const std::string& placement,
                                const sim::InterferenceModel& model,
                                cluster::QueueDiscipline queue = cluster::QueueDiscipline::kBackfill,
                                cluster::GangMode gangs = cluster::GangMode::kHold) {
  cluster::ClusterOptions o;
  o.queue = queue;
  o.gangs = gangs;
  o.sched.lane_mode = policies::make_policy(policy)->default_lane_mode();
  o.sched.record_timeline = true;
  o.cluster = cluster::ClusterSpec::uniform(gpus, 16 * core::kGiB);
  o.placement = placement;
  o.model = &model;
  return o;
}

/// One job on one GPU, as the outputs show it.
struct Resident {
  std::size_t job = 0;
  TimeNs admitted = 0, finish = 0;
  core::LaneId lane = core::kNoLane;
  std::vector<core::Segment> runs;  // its segments on this GPU, by start
};

class Oracle {
 public:
  Oracle(const std::vector<core::JobSpec>& jobs, const cluster::ClusterOutcome& r, std::string policy,
         std::int32_t gpus, cluster::QueueDiscipline queue = cluster::QueueDiscipline::kBackfill,
         cluster::GangMode gangs = cluster::GangMode::kHold)
      : jobs_(jobs), r_(r), policy_(std::move(policy)), mode_(mode_of(policy_)), queue_(queue), gangs_(gangs) {
    std::vector<std::size_t> order(jobs.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return core::arrives_before(jobs[a], jobs[b]); });
    rank_.resize(jobs.size());
    for (std::size_t i = 0; i < order.size(); ++i) rank_[order[i]] = static_cast<std::int64_t>(i);
    gpus_.resize(static_cast<std::size_t>(gpus));
    moves_.resize(static_cast<std::size_t>(gpus));
    for (std::size_t j = 0; j < jobs.size(); ++j) {
      const core::JobState& s = r.outcome.jobs[j];
      instants_.push_back(jobs[j].arrival_ns);
      if (s.status != core::JobStatus::kDone) continue;
      instants_.push_back(s.admitted_ns);
      instants_.push_back(s.finish_ns);
      for (const std::int32_t g : r.job_gpus[j]) {
        gpus_[static_cast<std::size_t>(g)].push_back(Resident{j, s.admitted_ns, s.finish_ns, core::kNoLane, {}});
      }
    }
    for (std::size_t g = 0; g < gpus_.size(); ++g) {
      const core::Timeline& tl = r.gpu_timelines[g];
      for (const core::Segment& seg : tl.segments) {
        instants_.push_back(seg.start_ns);
        instants_.push_back(seg.end_ns);
        for (Resident& res : gpus_[g]) {
          if (res.job != static_cast<std::size_t>(seg.job)) continue;
          res.lane = seg.lane;
          res.runs.push_back(seg);
        }
      }
      for (const core::LaneMove& m : tl.lane_moves) moves_[g].push_back(m.time_ns);
    }
    events_.resize(gpus_.size());
    for (std::size_t g = 0; g < gpus_.size(); ++g) {
      for (Resident& res : gpus_[g]) {
        std::sort(res.runs.begin(), res.runs.end(), [](const auto& a, const auto& b) { return a.start_ns < b.start_ns; });
        const std::int64_t seq = r.outcome.jobs[res.job].admit_seq;
        events_[g].push_back(Event{res.admitted, false, seq, &res});
        events_[g].push_back(Event{res.finish, true, seq, &res});
      }
      std::sort(events_[g].begin(), events_[g].end(), [](const Event& a, const Event& b) {
        if (a.time != b.time) return a.time < b.time;
        if (a.finish != b.finish) return a.finish;
        return a.seq < b.seq;
      });
    }
    std::sort(instants_.begin(), instants_.end());
    instants_.erase(std::unique(instants_.begin(), instants_.end()), instants_.end());
  }

  /// The queue's order: the policy's admission key (srtf: the solo time the trace gives; priority:
  /// the highest first; the others: none), then arrival.
  bool ahead(std::size_t a, std::size_t b) const {
    const auto key = [&](std::size_t j) -> std::int64_t {
      if (policy_ == "srtf") return jobs_[j].solo_ns() + jobs_[j].first_iter_extra_ns;
      if (policy_ == "priority") return -jobs_[j].priority;
      return 0;
    };
    if (key(a) != key(b)) return key(a) < key(b);
    return rank_[a] < rank_[b];
  }
  bool waits_at(std::size_t j, TimeNs t) const {
    const core::JobState& s = r_.outcome.jobs[j];
    return s.status == core::JobStatus::kDone && jobs_[j].arrival_ns <= t && s.admitted_ns > t;
  }

  /// (a): the waits where at least as many GPUs as the job needs could have started it (under
  /// strict and EASY, of the first job of the queue only).
  std::vector<std::string> waiting_violations(std::int64_t& checked) const {
    std::vector<std::string> out;
    std::vector<GpuState> state(gpus_.size());
    std::vector<char> reported(jobs_.size(), 0);
    const bool head_only = queue_ != cluster::QueueDiscipline::kBackfill;
    for (const TimeNs t : instants_) {
      for (std::size_t g = 0; g < gpus_.size(); ++g) advance(g, state[g], t);
      std::size_t head = jobs_.size();
      if (head_only) {
        for (std::size_t j = 0; j < jobs_.size(); ++j) {
          if (waits_at(j, t) && (head == jobs_.size() || ahead(j, head))) head = j;
        }
      }
      for (std::size_t j = 0; j < jobs_.size(); ++j) {
        const core::JobState& s = r_.outcome.jobs[j];
        if (s.status != core::JobStatus::kDone || reported[j] || jobs_[j].arrival_ns > t || s.admitted_ns <= t) continue;
        if (head_only && j != head) continue;
        ++checked;
        std::vector<std::size_t> able;
        for (std::size_t g = 0; g < gpus_.size(); ++g) {
          if (could_start(g, state[g], j, t)) able.push_back(g);
        }
        if (static_cast<std::int32_t>(able.size()) < jobs_[j].gpus) continue;
        reported[j] = 1;
        std::ostringstream m;
        m << "job " << jobs_[j].id << " (" << jobs_[j].gpus << " GPUs) waited at " << t << " ns (bound at "
          << s.admitted_ns << ") while GPU " << able.front() << " could start it";
        out.push_back(m.str());
      }
    }
    return out;
  }

  /// (c), strict only: the jobs that started while a job ahead of them in the queue's order waited.
  std::vector<std::string> order_violations(std::int64_t& checked) const {
    std::vector<std::string> out;
    if (queue_ != cluster::QueueDiscipline::kStrict) return out;
    for (std::size_t j = 0; j < jobs_.size(); ++j) {
      const core::JobState& s = r_.outcome.jobs[j];
      if (s.status != core::JobStatus::kDone) continue;
      ++checked;
      for (std::size_t i = 0; i < jobs_.size(); ++i) {
        if (i == j || !ahead(i, j) || !waits_at(i, s.admitted_ns)) continue;
        std::ostringstream m;
        m << "job " << jobs_[j].id << " started at " << s.admitted_ns << " ns while job " << jobs_[i].id
          << ", ahead of it, waited (strict)";
        out.push_back(m.str());
        break;
      }
    }
    return out;
  }

  /// (b): the 1-GPU jobs that did not start at once where they were bound.
  std::vector<std::string> binding_violations(std::int64_t& checked) const {
    std::vector<std::string> out;
    for (std::size_t j = 0; j < jobs_.size(); ++j) {
      const core::JobState& s = r_.outcome.jobs[j];
      if (s.status != core::JobStatus::kDone || jobs_[j].gpus != 1) continue;
      const auto g = static_cast<std::size_t>(r_.job_gpus[j].front());
      const TimeNs t = s.admitted_ns;
      const Resident& me = resident(g, j);
      // The others of its lane at the bind (bound at t before it, or earlier), and the run in
      // flight there across t.
      std::vector<const Resident*> lane;
      const core::Segment* in_flight = nullptr;
      for (const Resident& o : gpus_[g]) {
        if (o.job == j || o.lane != me.lane || o.admitted > t || o.finish <= t) continue;
        lane.push_back(&o);
        for (const core::Segment& seg : o.runs) {
          if (seg.start_ns < t && t < seg.end_ns) in_flight = &seg;
        }
      }
      ++checked;
      bool ok = true;
      if (mode_ == Mode::kAuto) {
        // A lane of its own, placed at once or as soon as the lanes in its way have moved: at the
        // end of a run in flight on the GPU (core/lanes.h: a lane moves only at a boundary).
        TimeNs latest = t;
        for (const Resident& o : gpus_[g]) {
          for (const core::Segment& seg : o.runs) {
            if (o.job != j && seg.start_ns <= t && t < seg.end_ns) latest = std::max(latest, seg.end_ns);
          }
        }
        ok = s.first_start_ns >= t && s.first_start_ns <= latest;
      } else if (lane.empty() || mode_ == Mode::kExclusive) {
        ok = s.first_start_ns == t;
      } else {
        // A job bound into the lane after it (at or after t) may come before it by the policy's
        // order (SRTF: shorter; FAIR, LAS: the join restarts the turns): then judged from the
        // last such join.
        TimeNs joined = t;
        for (const Resident& o : gpus_[g]) {
          if (o.job != j && o.lane == me.lane && o.admitted >= t && o.admitted <= s.first_start_ns) {
            joined = std::max(joined, o.admitted);
          }
        }
        if (policy_ == "srtf" || policy_ == "priority") {
          ok = s.first_start_ns == (in_flight != nullptr ? in_flight->end_ns : t) || joined > t ||
               (joined == t && later_bound_at(g, me.lane, j, t));
        } else {
          // FAIR, LAS: its turn comes before any job of the lane runs twice after the last join.
          for (const Resident& o : gpus_[g]) {
            if (o.job == j || o.lane != me.lane) continue;
            std::int32_t runs = 0;
            for (const core::Segment& seg : o.runs) runs += seg.start_ns >= joined && seg.start_ns < s.first_start_ns ? 1 : 0;
            ok = ok && runs <= 1;
          }
          ok = ok && (in_flight == nullptr || in_flight->end_ns <= s.first_start_ns);
        }
      }
      if (!ok) {
        std::ostringstream m;
        m << "job " << jobs_[j].id << " bound to GPU " << g << " at " << t << " ns first ran at " << s.first_start_ns;
        out.push_back(m.str());
      }
    }
    return out;
  }

 private:
  /// Whether another job joined the lane at t after j (its admission later on the GPU).
  bool later_bound_at(std::size_t g, core::LaneId lane, std::size_t j, TimeNs t) const {
    const std::int64_t mine = r_.outcome.jobs[j].admit_seq;
    for (const Resident& o : gpus_[g]) {
      if (o.job != j && o.lane == lane && o.admitted == t && r_.outcome.jobs[o.job].admit_seq > mine) return true;
    }
    return false;
  }

  const Resident& resident(std::size_t g, std::size_t j) const {
    return *std::find_if(gpus_[g].begin(), gpus_[g].end(), [&](const Resident& r) { return r.job == j; });
  }

  /// Whether the gang replica `res` holds its lane on GPU g at t: chosen there (its run's segment
  /// starts: a gang run's segment on each GPU starts when that GPU chose it) before t, and the run
  /// starting after t (when the last of its GPUs chose it: the latest of the run's segments'
  /// starts, the k-th run on every GPU being the same gang run).
  bool held(std::size_t g, const Resident& res, TimeNs t) const {
    for (std::size_t k = 0; k < res.runs.size(); ++k) {
      const TimeNs chosen = res.runs[k].start_ns;
      if (chosen >= t) break;
      TimeNs start = chosen;
      for (std::size_t h = 0; h < gpus_.size(); ++h) {
        if (h == g) continue;
        for (const Resident& o : gpus_[h]) {
          if (o.job == res.job && k < o.runs.size()) start = std::max(start, o.runs[k].start_ns);
        }
      }
      if (t < start) return true;
    }
    return false;
  }

  /// A lane move on g still due at t: the layout was not settled (a move at m > t with nothing
  /// finishing on g in (t, m], so it was waiting at t for a run to reach its boundary).
  bool unsettled(std::size_t g, TimeNs t) const {
    for (const TimeNs m : moves_[g]) {
      if (m <= t) continue;
      bool caused_later = false;
      for (const Resident& res : gpus_[g]) caused_later = caused_later || (res.finish > t && res.finish <= m);
      if (!caused_later) return true;
    }
    return false;
  }

  /// A GPU's residents and persistent blocks at an instant: every finish up to it, then every
  /// admission up to it (at one instant finishes come first, as a GPU settles before the
  /// placement binds; admissions in their order on the GPU). Blocks go first-fit from offset 0,
  /// as core/lanes.h says the persistent region is laid out.
  struct GpuState {
    std::size_t next = 0;                           // events_[g] applied
    std::vector<const Resident*> here;
    std::map<Bytes, Bytes> blocks;                  // offset -> size
    std::map<std::size_t, Bytes> offset_of;         // job -> its block's offset
    // A gang replica was admitted at the same instant as another job: the order of the two on
    // this GPU is not in the outputs (admit_seq is the first replica's GPU's), so neither are
    // the blocks' places, until the GPU holds no block again.
    bool ambiguous = false;
  };

  void advance(std::size_t g, GpuState& st, TimeNs t) const {
    const std::vector<Event>& ev = events_[g];
    for (; st.next < ev.size() && ev[st.next].time <= t; ++st.next) {
      const Event& e = ev[st.next];
      const Bytes p = up(jobs_[e.res->job].persistent);
      if (e.finish) {
        st.here.erase(std::find(st.here.begin(), st.here.end(), e.res));
        if (const auto it = st.offset_of.find(e.res->job); it != st.offset_of.end()) {
          st.blocks.erase(it->second);
          st.offset_of.erase(it);
        }
        if (st.blocks.empty()) st.ambiguous = false;
        continue;
      }
      st.here.push_back(e.res);
      for (std::size_t k = 0; k < ev.size(); ++k) {
        const Event& o = ev[k];
        if (k != st.next && !o.finish && o.time == e.time && (jobs_[o.res->job].gpus > 1 || jobs_[e.res->job].gpus > 1)) {
          st.ambiguous = true;
        }
      }
      if (p == 0) continue;
      const Bytes at = first_fit(st.blocks, p);
      st.blocks.emplace(at, p);
      st.offset_of.emplace(e.res->job, at);
    }
  }

  static Bytes first_fit(const std::map<Bytes, Bytes>& blocks, Bytes size) {
    Bytes start = 0;
    for (const auto& [offset, len] : blocks) {
      if (offset - start >= size) break;
      start = offset + len;
    }
    return start;
  }

  /// Whether GPU g could certainly start job j at once at instant t, as every GPU's state is once
  /// t has settled (finishes at t gone; jobs bound at t counted, whichever came first: fewer GPUs
  /// able, never more). Memory as FindLane's sums and the physical layout of core/lanes.h: the
  /// job's block first-fit below C - sum L after it, and every block below that.
  bool could_start(std::size_t g, const GpuState& st, std::size_t j, TimeNs t) const {
    const core::JobSpec& me = jobs_[j];
    const std::vector<const Resident*>& here = st.here;
    bool gang_here = false;
    for (const Resident* res : here) gang_here = gang_here || jobs_[res->job].gpus > 1;
    if (me.gpus > 1 && gang_here) return false;  // one gang job per GPU
    // --gangs exclusive: nothing beside a gang, and a gang only on an empty GPU.
    if (gangs_ == cluster::GangMode::kExclusive && (gang_here || (me.gpus > 1 && !here.empty()))) return false;
    if (here.empty()) return true;               // an empty GPU: a lane of its own
    if (mode_ == Mode::kExclusive) return false;
    if (unsettled(g, t)) return false;
    Bytes persistent = 0;
    std::map<core::LaneId, Bytes> lanes;
    for (const Resident* res : here) {
      persistent += up(jobs_[res->job].persistent);
      Bytes& l = lanes[res->lane];
      l = std::max(l, up(jobs_[res->job].ephemeral));
    }
    Bytes lanes_bytes = 0;
    for (const auto& [id, l] : lanes) lanes_bytes += l;
    const Bytes c = 16 * core::kGiB;
    const Bytes p = up(me.persistent), e = up(me.ephemeral);
    // PACK: a lane of its own only; one lane: joining it (grown to E if need be).
    const Bytes lanes_after = mode_ == Mode::kAuto ? lanes_bytes + e : std::max(lanes_bytes, e);
    if (persistent + p + lanes_after > c) return false;
    const Bytes top = st.blocks.empty() ? 0 : std::prev(st.blocks.end())->first + std::prev(st.blocks.end())->second;
    if (st.ambiguous || top > c - lanes_after || first_fit(st.blocks, p) + p > c - lanes_after) return false;
    if (mode_ == Mode::kAuto) return true;
    if (policy_ == "fair" || policy_ == "las") {
      for (const Resident* res : here) {
        if (jobs_[res->job].gpus > 1 && held(g, *res, t)) return false;
      }
      return true;
    }
    for (const Resident* res : here) {
      const core::JobSpec& o = jobs_[res->job];
      TimeNs left = 0;
      if (!left_at_next_boundary(*res, t, left)) return false;
      if (policy_ == "priority") {
        if (o.priority > me.priority || (o.priority == me.priority && rank_[res->job] < rank_[j])) return false;
        continue;
      }
      const TimeNs mine = me.iterations * me.iter_ns + me.first_iter_extra_ns;
      if (left < mine || (left == mine && rank_[res->job] < rank_[j])) return false;
    }
    return true;
  }

  /// What the job has left (solo) at its lane's next iteration boundary at or after t (0: it
  /// finishes there, and so comes first); false when the outputs do not tell (its run in flight
  /// is not at solo pace).
  bool left_at_next_boundary(const Resident& res, TimeNs t, TimeNs& left) const {
    const core::JobSpec& o = jobs_[res.job];
    std::int64_t done = 0;
    for (const core::Segment& seg : res.runs) {
      if (seg.end_ns <= t) {
        done += seg.iterations;
        continue;
      }
      if (seg.start_ns >= t) break;
      // In flight across t: its boundaries, at solo pace only.
      const TimeNs first = o.iter_ns + (done == 0 ? o.first_iter_extra_ns : 0) + seg.switch_ns;
      if (seg.end_ns - seg.start_ns != first + (seg.iterations - 1) * o.iter_ns) return false;
      std::int64_t i = 1;
      if (seg.start_ns + first < t) i = 1 + (t - seg.start_ns - first + o.iter_ns - 1) / o.iter_ns;
      done += std::min(i, seg.iterations);
      break;
    }
    left = (o.iterations - done) * o.iter_ns + (done == 0 ? o.first_iter_extra_ns : 0);
    return true;
  }

  const std::vector<core::JobSpec>& jobs_;
  const cluster::ClusterOutcome& r_;
  std::string policy_;
  Mode mode_;
  std::vector<std::int64_t> rank_;
  std::vector<std::vector<Resident>> gpus_;
  std::vector<std::vector<TimeNs>> moves_;
  cluster::QueueDiscipline queue_;
  cluster::GangMode gangs_;
  struct Event {
    TimeNs time;
    bool finish;
    std::int64_t seq;
    const Resident* res;
  };
  std::vector<std::vector<Event>> events_;  // per GPU, in the order advance applies them
  std::vector<TimeNs> instants_;
};

struct Tally {
  std::int64_t waits = 0, binds = 0, orders = 0;
  std::vector<std::string> violations;
};

void check(const std::vector<core::JobSpec>& jobs, const std::string& policy, std::int32_t gpus,
           const std::string& placement, const sim::InterferenceModel& model, Tally& tally,
           cluster::QueueDiscipline queue = cluster::QueueDiscipline::kBackfill,
           cluster::GangMode gangs = cluster::GangMode::kHold) {
  const cluster::ClusterOutcome r = cluster::run_cluster(jobs, policy, options(policy, gpus, placement, model, queue, gangs));
  const Oracle oracle(jobs, r, policy, gpus, queue, gangs);
  const std::string name = policy + "/" + placement + "/" + std::string(cluster::to_string(queue)) + "/" +
                           std::string(cluster::to_string(gangs)) + ": ";
  for (std::string& v : oracle.waiting_violations(tally.waits)) tally.violations.push_back(name + v);
  for (std::string& v : oracle.binding_violations(tally.binds)) tally.violations.push_back(name + v);
  for (std::string& v : oracle.order_violations(tally.orders)) tally.violations.push_back(name + v);
}

// The random traces the oracle judges: 40 jobs, some gangs of 2 or 3, some of nearly a GPU's memory.
std::vector<core::JobSpec> oracle_jobs(std::uint64_t seed) {
  return test::random_jobs(seed, 40, 1 + static_cast<std::int64_t>(seed % 3) * 20, [](core::JobSpec& j, int, auto& pick) {
    j.priority = static_cast<std::int32_t>(pick(0, 2));
    if (pick(0, 3) == 0) j.first_iter_extra_ns = pick(0, 5'000'000);
    if (pick(0, 6) == 0) j.gpus = static_cast<std::int32_t>(pick(2, 3));
    if (pick(0, 4) == 0) j.ephemeral = test::mib(pick(9000, 15000));
  });
}

cluster::ClusterOutcome run(const std::vector<core::JobSpec>& jobs, const std::string& policy, std::int32_t gpus,
                            const std::string& placement) {
  const sim::NoInterference none;
  return cluster::run_cluster(jobs, policy, options(policy, gpus, placement, none));
}

}  // namespace

TEST_CASE("binding oracle: random traces with gangs, every policy x placement x interference model") {
  const sim::NoInterference none;
  const sim::UtilisationInterference profiled;
  const sim::InterferenceModel* models[] = {&none, &profiled};
  Tally tally;
  std::int64_t gang_waits = 0;
  for (std::uint64_t seed = 1; seed <= 16; ++seed) {
    const auto jobs = oracle_jobs(seed);
    const auto gpus = static_cast<std::int32_t>(2 + seed % 4);
    for (const sim::InterferenceModel* model : models) {
      for (const std::string& policy : policies::policy_names()) {
        for (const std::string& placement : cluster::placement_registry().names()) {
          const std::size_t before = tally.violations.size();
          check(jobs, policy, gpus, placement, *model, tally);
          if (tally.violations.size() > before) tally.violations.back() += " (seed " + std::to_string(seed) + ")";
        }
      }
    }
    for (const core::JobSpec& j : jobs) gang_waits += j.gpus > 1 ? 1 : 0;
  }
  for (std::size_t i = 0; i < std::min<std::size_t>(tally.violations.size(), 20); ++i) MESSAGE(tally.violations[i]);
  CHECK(tally.violations.empty());
  // Not vacuous: thousands of waits and binds judged.
  CHECK(tally.waits > 5000);
  CHECK(tally.binds > 5000);
  CHECK(gang_waits > 50);
  MESSAGE("waiting instants judged: " << tally.waits << ", binds judged: " << tally.binds << ", violations: "
                                      << tally.violations.size());
}

TEST_CASE("binding: a lane that moves at an instant is judged after it moves (PACK)") {
  // Two 16 GiB GPUs, first-fit. X (E 14000 MiB, 0.5 s) and A (E 14000 MiB, 8 s) fill GPU 0 and
  // GPU 1; Y (E 2000 MiB, 13 x 0.2 s) opens a lane beside X. Z (P 2048 MiB, E 8000 MiB, 10 ms)
  // arrives at 0.55 s: nowhere room. X ends at 0.5 s; Y's lane moves up at its boundary at
  // 0.6 s, after which GPU 0 has room for Z: Z runs 0.6-0.61 s (it waited for GPU 0's whole
  // next run, to 2.6 s, when the placement came before the move).
  const auto jobs = test::trace({test::job("X", 0, 1, test::ms(500), test::mib(2), test::mib(14000)),
                                 test::job("Y", 0, 13, test::ms(200), test::mib(4), test::mib(2000)),
                                 test::job("A", 0, 1, test::ms(8000), test::mib(1), test::mib(14000)),
                                 test::job("Z", test::ms(550), 1, test::ms(10), test::mib(2048), test::mib(8000))});
  const cluster::ClusterOutcome r = run(jobs, "pack", 2, "first-fit");
  CHECK(r.job_gpus[3] == std::vector<std::int32_t>{0});
  CHECK(r.outcome.jobs[3].admitted_ns == test::ms(600));
  CHECK(r.outcome.jobs[3].finish_ns == test::ms(610));
  Tally tally;
  const sim::NoInterference none;
  check(jobs, "pack", 2, "first-fit", none, tally);
  CHECK(tally.violations.empty());
}

TEST_CASE("binding: SRTF judges a lane's running job on what it has left now") {
  // A (10 s) and B (20 s) on two GPUs from 0; C (8 s) at 6 s is not shorter than A's 4 s left,
  // so only GPU 1 (B: 14 s left) starts it at once: C runs 6-14 s there, B ends at 28 s, A at
  // 10 s. Judged on A's time left at its dispatch (10 s), C joined A's lane and ran 10-18 s.
  const auto jobs = test::trace({test::job("A", 0, 100, test::ms(100), test::mib(1000), test::mib(1000)),
                                 test::job("B", 0, 200, test::ms(100), test::mib(1000), test::mib(1000)),
                                 test::job("C", test::ms(6000), 80, test::ms(100), test::mib(1000), test::mib(1000))});
  for (const std::string& placement : cluster::placement_registry().names()) {
    CAPTURE(placement);
    const cluster::ClusterOutcome r = run(jobs, "srtf", 2, placement);
    const std::int32_t b_gpu = r.job_gpus[1].front();
    CHECK(r.job_gpus[2] == std::vector<std::int32_t>{b_gpu});
    CHECK(r.outcome.jobs[2].first_start_ns == test::ms(6000));
    CHECK(r.outcome.jobs[2].finish_ns == test::ms(14'000));
    CHECK(r.outcome.jobs[1].finish_ns == test::ms(28'000));
    CHECK(r.outcome.jobs[0].finish_ns == test::ms(10'000));
  }
}


namespace {

/// The oracle on the random traces of seeds 1-8 under each discipline of `queues`, every policy x
/// interference model, first-fit and least-loaded.
Tally judge(std::initializer_list<cluster::QueueDiscipline> queues, cluster::GangMode gangs) {
  const sim::NoInterference none;
  const sim::UtilisationInterference profiled;
  const sim::InterferenceModel* models[] = {&none, &profiled};
  Tally tally;
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    const auto jobs = oracle_jobs(seed);
    const auto gpus = static_cast<std::int32_t>(2 + seed % 4);
    for (const cluster::QueueDiscipline queue : queues) {
      for (const sim::InterferenceModel* model : models) {
        for (const std::string& policy : policies::policy_names()) {
          for (const std::string placement : {"first-fit", "least-loaded"}) {
            const std::size_t before = tally.violations.size();
            check(jobs, policy, gpus, placement, *model, tally, queue, gangs);
            if (tally.violations.size() > before) tally.violations.back() += " (seed " + std::to_string(seed) + ")";
          }
        }
      }
    }
  }
  for (std::size_t i = 0; i < std::min<std::size_t>(tally.violations.size(), 20); ++i) MESSAGE(tally.violations[i]);
  MESSAGE("waiting instants judged: " << tally.waits << ", binds judged: " << tally.binds << ", orders judged: "
                                      << tally.orders << ", violations: " << tally.violations.size());
  return tally;
}

}  // namespace

TEST_CASE("binding oracle under strict and EASY: the first job of the queue never waits where it could start, strict keeps the order") {
  const Tally tally = judge({cluster::QueueDiscipline::kStrict, cluster::QueueDiscipline::kEasy}, cluster::GangMode::kHold);
  CHECK(tally.violations.empty());
  CHECK(tally.waits > 1000);
  CHECK(tally.binds > 1000);
  CHECK(tally.orders > 1000);
}

TEST_CASE("binding oracle with exclusive gangs: no job waits where it could start, a gang only on GPUs with no job") {
  const Tally tally = judge({cluster::QueueDiscipline::kBackfill, cluster::QueueDiscipline::kStrict}, cluster::GangMode::kExclusive);
  CHECK(tally.violations.empty());
  CHECK(tally.waits > 1000);
  CHECK(tally.binds > 1000);
}
