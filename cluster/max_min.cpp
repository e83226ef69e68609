#include "cluster/max_min.h"

#include <glpk.h>

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "cluster/job_slots.h"
#include "core/errors.h"

namespace salus::cluster {
namespace {

using core::JobIndex;
using core::TimeNs;

/// Coefficient of x[j][k] in job j's normalised throughput (max_min.h).
std::vector<double> normalised(const MaxMinProblem& p) {
  const std::size_t kinds = p.gpus.size();
  const std::size_t jobs = p.scale.size();
  const double total = static_cast<double>(std::accumulate(p.gpus.begin(), p.gpus.end(), std::int64_t{0}));
  std::vector<double> a(jobs * kinds, 0.0);
  for (std::size_t j = 0; j < jobs; ++j) {
    double prop = 0;
    for (std::size_t k = 0; k < kinds; ++k) prop += p.speed[j * kinds + k] * static_cast<double>(p.gpus[k]) / total;
    SALUS_INVARIANT(prop > 0, "max-min: every job can run on some kind", std::to_string(j));
    for (std::size_t k = 0; k < kinds; ++k) {
      a[j * kinds + k] = p.speed[j * kinds + k] * static_cast<double>(p.scale[j]) / prop;
    }
  }
  return a;
}

/// One kind: each job gets min(scale, L) GPUs' worth of time, L the level at which the GPUs are
/// all given (or every job all its GPUs, if they fit).
std::vector<double> water_fill(const MaxMinProblem& p) {
  const std::size_t jobs = p.scale.size();
  std::vector<std::int64_t> sizes(p.scale);
  std::sort(sizes.begin(), sizes.end());
  double left = static_cast<double>(p.gpus[0]);
  double level = 0;
  bool all_fit = true;
  for (std::size_t i = 0; i < jobs; ++i) {
    const double s = static_cast<double>(sizes[i]);
    const double rest = static_cast<double>(jobs - i);  // jobs not yet saturated
    if (s * rest <= left) {
      left -= s;  // saturated at its full size
      continue;
    }
    level = left / rest;
    all_fit = false;
    break;
  }
  std::vector<double> x(jobs);
  for (std::size_t j = 0; j < jobs; ++j) {
    const double s = static_cast<double>(p.scale[j]);
    x[j] = all_fit ? 1.0 : std::min(s, level) / s;
  }
  return x;
}

/// The LP of max_min.h with GLPK. `second`: after the max-min level, maximise the sum of the
/// normalised throughputs among the allocations that keep it. Returns x, and the level in `level`.
std::vector<double> solve_lp(const MaxMinProblem& p, bool second, double& level) {
  const std::size_t kinds = p.gpus.size();
  const std::size_t jobs = p.scale.size();
  const std::vector<double> a = normalised(p);
  glp_prob* lp = glp_create_prob();
  glp_set_obj_dir(lp, GLP_MAX);
  // Columns: x[j][k] for the pairs that can run, then t.
  std::vector<int> col(jobs * kinds, 0);
  int cols = 0;
  for (std::size_t i = 0; i < jobs * kinds; ++i) {
    if (p.speed[i] > 0) col[i] = ++cols;
  }
  const int t_col = cols + 1;
  glp_add_cols(lp, t_col);
  for (int c = 1; c <= cols; ++c) glp_set_col_bnds(lp, c, GLP_DB, 0.0, 1.0);
  glp_set_col_bnds(lp, t_col, GLP_LO, 0.0, 0.0);
  glp_set_obj_coef(lp, t_col, 1.0);
  // Rows: per job its level >= t and its time <= 1; per kind its GPUs.
  const int rows = static_cast<int>(2 * jobs + kinds);
  glp_add_rows(lp, rows);
  std::vector<int> ia{0}, ja{0};
  std::vector<double> ar{0.0};
  auto put = [&](int r, int c, double v) {
    ia.push_back(r);
    ja.push_back(c);
    ar.push_back(v);
  };
  for (std::size_t j = 0; j < jobs; ++j) {
    const int level_row = static_cast<int>(j) + 1;
    const int time_row = static_cast<int>(jobs + j) + 1;
    glp_set_row_bnds(lp, level_row, GLP_LO, 0.0, 0.0);
    glp_set_row_bnds(lp, time_row, GLP_UP, 0.0, 1.0);
    put(level_row, t_col, -1.0);
    for (std::size_t k = 0; k < kinds; ++k) {
      const int c = col[j * kinds + k];
      if (c == 0) continue;
      put(level_row, c, a[j * kinds + k]);
      put(time_row, c, 1.0);
      put(static_cast<int>(2 * jobs + k) + 1, c, static_cast<double>(p.scale[j]));
    }
  }
  for (std::size_t k = 0; k < kinds; ++k) {
    glp_set_row_bnds(lp, static_cast<int>(2 * jobs + k) + 1, GLP_UP, 0.0, static_cast<double>(p.gpus[k]));
  }
  glp_load_matrix(lp, static_cast<int>(ia.size()) - 1, ia.data(), ja.data(), ar.data());
  glp_smcp parm;
  glp_init_smcp(&parm);
  parm.msg_lev = GLP_MSG_OFF;
  auto solve = [&](const char* what) {
    const int rc = glp_simplex(lp, &parm);
    SALUS_INVARIANT(rc == 0 && glp_get_status(lp) == GLP_OPT, "max-min: GLPK solves the allocation LP",
                    std::string(what) + ": rc " + std::to_string(rc) + ", status " + std::to_string(glp_get_status(lp)));
  };
  solve("max-min");
  level = glp_get_obj_val(lp);
  if (second) {
    // Keep the level (less a hair for rounding), maximise the sum.
    glp_set_col_bnds(lp, t_col, GLP_LO, level * (1 - 1e-9), 0.0);
    glp_set_obj_coef(lp, t_col, 0.0);
    for (std::size_t i = 0; i < jobs * kinds; ++i) {
      if (col[i] != 0) glp_set_obj_coef(lp, col[i], a[i]);
    }
    solve("sum");
  }
  std::vector<double> x(jobs * kinds, 0.0);
  for (std::size_t i = 0; i < jobs * kinds; ++i) {
    if (col[i] != 0) x[i] = std::clamp(glp_get_col_prim(lp, col[i]), 0.0, 1.0);
  }
  glp_delete_prob(lp);
  return x;
}

/// Rounds (LeaseOptions::round_ns). At a round's start the jobs present are ranked, on each kind
/// in turn (the cluster's kinds in order), by priority = allocation / fraction, fraction = the
/// job's time on the kind since the last reset over the kind's (Gavel: 1e9 x allocation while
/// the fraction is 0; 0 with no allocation), then deficit, then allocation, ties in arrival
/// order; each in turn takes its GPUs on that kind if they are left and it has none yet. Each job
/// so chosen runs the whole iterations that fit the round (at least one), or to its end: its lease
/// ends there and it holds its GPUs idle to the round's end, which is when the last lease ends
/// (a GPU freed earlier stays idle, a job that arrives waits for the next round). A job chosen in
/// consecutive rounds keeps its GPUs; one not chosen is preempted. The allocation is computed at
/// a reset: at a round's start when jobs arrived or finished since the last one, and
/// reset_ns passed (or the last was at time 0, or no job could run and none is left to arrive, as
/// Gavel's simulator has it). At a reset each job's time on each kind restarts at round / 2, and
/// its deficit gains what it should have had (allocation x time since the last reset) less what
/// it had. A job chosen with no allocation yet (it arrived since) holds its GPUs' place in the
/// round but does not run (fifo-rounds passes it over instead, as Gavel's FIFO policies). All of
/// it is Gavel's scheduler.py (_schedule_jobs_on_workers, _update_priorities,
/// _reset_time_run_so_far, simulate) read line by line; tests/cluster/max_min_test.cpp holds it
/// to Gavel's own outputs.
class MaxMin final : public LeasePolicy {
 public:
  /// `fifo`: Gavel's fifo_perf allocation instead of max-min (fifo_allocation), and, as Gavel's
  /// FIFO policies, a job with no allocation is passed over rather than holding a place.
  MaxMin(const LeaseOptions& o, bool fifo) : opts_(o), fifo_(fifo) {
    SALUS_INVARIANT(o.round_ns > 0 && o.reset_ns >= 0, "max-min: the round is positive and the reset interval not negative",
                    std::to_string(o.round_ns) + ", " + std::to_string(o.reset_ns));
  }

  std::string_view name() const override { return fifo_ ? "fifo-rounds" : "max-min"; }
  bool runs_kinds() const override { return true; }
  /// Lanes beneath (one kind): the ranking decides who goes first, the room who fits.
  bool takes_room() const override { return true; }

  void begin(std::span<const core::JobSpec> jobs, const ClusterSpec& cluster, TimeNs restart_ns) override {
    specs_ = jobs;
    kinds_of_.emplace(cluster);
    restart_ns_ = restart_ns;
    kinds_ = std::max<std::size_t>(1, cluster.kinds.size());
    gpus_.assign(kinds_, 0);
    for (const GpuSpec& g : cluster.gpus) ++gpus_[cluster.kinds.empty() ? 0 : static_cast<std::size_t>(g.kind)];
    worker_time_.assign(kinds_, 0.0);
    kind_order_.resize(kinds_);
    std::iota(kind_order_.begin(), kind_order_.end(), std::size_t{0});
    if (!cluster.kinds.empty()) {
      std::sort(kind_order_.begin(), kind_order_.end(),
                [&](std::size_t a, std::size_t b) { return cluster.kinds[a].name < cluster.kinds[b].name; });
    }
    check_rounds(jobs, cluster);
    jobs_.clear(jobs.size());
    present_.clear();
    leased_.clear();
    last_arrival_ = 0;
    for (const core::JobSpec& s : jobs) last_arrival_ = std::max(last_arrival_, s.arrival_ns);
    in_round_ = false;
    need_update_ = false;
    last_reset_ = 0;
  }

  void arrive(JobIndex j, TimeNs now) override {
    (void)now;
    const core::JobSpec& s = specs_[static_cast<std::size_t>(j)];
    Job& job = jobs_.take(j, [](Job& reused) {
      const std::int64_t stamp = reused.stamp;
      reused = Job{};
      reused.stamp = stamp;
    });
    job.work = s.solo_ns() + s.first_iter_extra_ns;
    job.per_kind.assign(kinds_, PerKind{});
    for (std::size_t k = 0; k < kinds_; ++k) {
      job.per_kind[k].speed = kinds_of_->speed(s, static_cast<std::int32_t>(k));
      job.per_kind[k].time = half_round();
    }
    present_.push_back(j);
    need_update_ = true;
  }

  void finish(JobIndex j, TimeNs now) override {
    if (room_ != nullptr) {
      // Lanes beneath: its lease ends with it (as a slice that ends with the job's work).
      const Job& job = jobs_[j];
      if (job.lease >= 0 && static_cast<std::size_t>(job.lease) < leased_.size()) {
        Lease& l = leased_[static_cast<std::size_t>(job.lease)];
        if (l.job == j && l.stamp == job.stamp) l.slice = now - round_start_;
      }
    }
    jobs_.release(j);
    need_update_ = true;
  }

  void unplaced(JobIndex j, TimeNs now) override {
    (void)now;
    Job& job = jobs_[j];
    job.running = false;
    job.kind = -1;
    job.slice = 0;
    job.ran = job.ran_before;  // it did not start
    std::erase_if(leased_, [&](const Lease& l) { return l.job == j; });
  }

  TimeNs next_change(TimeNs now) override { return in_round_ && round_end_ > now ? round_end_ : core::kNever; }

  void decide(TimeNs now, LeaseDecision& out) override {
    // Mid-round: GPUs freed stay idle, arrivals wait. With lanes beneath the round ends when its
    // last lease does, as with whole GPUs: at its length, or when every job leased has finished.
    if (in_round_ && now < round_end_ && (room_ == nullptr || leases_live())) return;
    round_start_ = now;
    end_round();
    std::erase_if(present_, [&](JobIndex j) { return !jobs_.has(j); });
    if (present_.empty()) {
      in_round_ = false;
      return;
    }
    for (int pass = 0; pass < 2; ++pass) {
      if (need_update_ && (last_reset_ == 0 || now - last_reset_ >= opts_.reset_ns)) reset(now);
      choose();
      if (any_runs_ || now < last_arrival_ || last_reset_ == 0) break;
      last_reset_ = 0;  // nothing can run and nothing is left to arrive: Gavel forces a reset
    }
    // Preempt the jobs not chosen again (or chosen on another kind); start the new ones.
    TimeNs longest = 0;
    for (const JobIndex j : present_) {
      Job& job = jobs_[j];
      const bool keep = job.running && job.next_kind == job.kind;
      if (job.running && !keep) {
        out.preempt.push_back(j);
        job.running = false;
      }
      job.kind = job.next_kind;
      job.slice = 0;
      if (job.kind < 0 || !job.runs_next) {
        job.kind = -1;
        continue;
      }
      if (room_ != nullptr) {
        // Lanes beneath: leased for the round, iterating to its end (the engine restores a
        // restarted job on its first iteration); a job kept runs on.
        job.ran = true;
        job.slice = opts_.round_ns;
        longest = opts_.round_ns;
        if (!keep) {
          out.start.push_back(j);
          job.running = true;
        }
        job.lease = static_cast<std::int32_t>(leased_.size());
        leased_.push_back(Lease{.job = j, .stamp = job.stamp, .kind = job.kind, .slice = job.slice});
        continue;
      }
      const TimeNs restart = !keep && job.ran ? restart_ns_ : 0;
      job.ran_before = job.ran;
      job.ran = true;
      job.restart = restart;
      // Whole iterations (at least one) that fit the round, or what is left.
      const std::int64_t speed = job.per_kind[static_cast<std::size_t>(job.kind)].speed;
      const TimeNs iter = gpu_iter_ns(specs_[static_cast<std::size_t>(j)].iter_ns, speed);
      const TimeNs whole = std::max<TimeNs>(1, (opts_.round_ns - restart) / iter) * iter;
      job.slice = restart + std::min(whole, lease_time(job.work, speed));
      longest = std::max(longest, job.slice);
      // Its lease ends with its slice: to the round's end it holds its GPUs idle (Gavel: a worker
      // whose micro-task ended waits for the round's end).
      if (keep) {
        out.extend.emplace_back(j, now + job.slice);
      } else {
        out.start.push_back(j);
        out.start_kind.push_back(job.kind);
        out.start_until.push_back(now + job.slice);
        job.running = true;
      }
      leased_.push_back(Lease{.job = j, .stamp = job.stamp, .kind = job.kind, .slice = job.slice});
    }
    in_round_ = !leased_.empty();
    round_end_ = now + longest;
  }

 private:
  struct PerKind {
    std::int64_t speed = 0;  // ppm; 0: cannot run there
    double alloc = 0;        // share of time (allocation), from the last reset
    double time = 0;         // time on the kind since the last reset (s), from round / 2
    double deficit = 0;      // s
    double priority = 0;
  };
  struct Job {
    std::int64_t stamp = 0;
    TimeNs work = 0;        // left, ns at speed 1, as of the round's start
    TimeNs slice = 0;       // this round's lease (restart included)
    TimeNs restart = 0;     // of it, restoring after a preemption
    std::int32_t kind = -1;       // the kind it holds GPUs of this round; -1: none
    std::int32_t next_kind = -1;  // chosen for the next round
    bool runs_next = false;       // chosen and has an allocation
    bool has_alloc = false;
    bool running = false;  // holds GPUs (the engine's view)
    std::int32_t lease = -1;  // lanes beneath: its entry in this round's leased_ (finish)
    bool ran = false;
    bool ran_before = false;  // ran, before this round's start (unplaced() takes the start back)
    std::vector<PerKind> per_kind;
  };

  double half_round() const { return static_cast<double>(opts_.round_ns) / 2e9; }
  bool leases_live() const {
    for (const Lease& l : leased_) {
      if (jobs_.has(l.job) && jobs_[l.job].stamp == l.stamp) return true;
    }
    return false;
  }

  /// Refuses a run that certainly takes more than kMaxRounds rounds (an input error: a round of
  /// a second beside jobs of years), rather than stepping it for hours. Rounds run while a job
  /// is present: at least each job's work at its fastest, and the trace's GPU-time at its
  /// fastest over every GPU at once, each over the jobs the engine accepts (those with their
  /// width of GPUs of one kind they can run on) on the kinds where they may run.
  void check_rounds(std::span<const core::JobSpec> jobs, const ClusterSpec& cluster) const {
    constexpr double kMaxRounds = 1e8;
    double longest = 0, gpu_time = 0;
    std::size_t longest_job = 0;
    for (std::size_t j = 0; j < jobs.size(); ++j) {
      const core::JobSpec& s = jobs[j];
      std::int64_t best = 0;
      for (std::size_t k = 0; k < kinds_; ++k) {
        const auto kind = static_cast<std::int32_t>(k);
        if (kinds_of_->able(s, kind) >= static_cast<std::size_t>(s.gpus)) best = std::max(best, kinds_of_->speed(s, kind));
      }
      if (best <= 0) continue;  // rejected at arrival
      const double t = static_cast<double>(lease_time(s.solo_ns() + s.first_iter_extra_ns, best));
      if (t > longest) {
        longest = t;
        longest_job = j;
      }
      gpu_time += t * static_cast<double>(s.gpus);
    }
    const double round = static_cast<double>(opts_.round_ns);
    const double rounds = std::max(longest, gpu_time / static_cast<double>(cluster.gpus.size())) / round;
    if (rounds <= kMaxRounds) return;
    char round_s[32];
    std::snprintf(round_s, sizeof round_s, "%g", round / 1e9);
    throw core::InputError(
        "--round-s " + std::string(round_s) + ": " + std::string(name()) +
        " would run at least " + std::to_string(static_cast<std::int64_t>(rounds)) + " rounds (job '" +
        jobs[longest_job].id.str() + "' alone runs " + std::to_string(static_cast<std::int64_t>(longest / 1e9)) +
        " s at its fastest), more than 100000000: give a longer --round-s");
  }

  /// The round that ends now: each job's time on its kind (and the kind's), and its work left.
  void end_round() {
    for (const Lease& l : leased_) {
      const double seconds = static_cast<double>(l.slice) / 1e9;
      worker_time_[static_cast<std::size_t>(l.kind)] += seconds;  // a job that finished counts too
      if (!jobs_.has(l.job) || jobs_[l.job].stamp != l.stamp) continue;
      Job& job = jobs_[l.job];
      PerKind& pk = job.per_kind[static_cast<std::size_t>(l.kind)];
      pk.time += seconds;
      // (Lanes beneath: the engine keeps the work; slices do not depend on it.)
      if (room_ == nullptr) job.work -= std::min(job.work, lease_work(l.slice - job.restart, pk.speed));
    }
    leased_.clear();
  }

  void reset(TimeNs now) {
    const double elapsed = static_cast<double>(now - last_reset_) / 1e9;
    std::fill(worker_time_.begin(), worker_time_.end(), 0.0);
    for (const JobIndex j : present_) {
      Job& job = jobs_[j];
      for (std::size_t k = 0; k < kinds_; ++k) {
        PerKind& pk = job.per_kind[k];
        const double should = job.has_alloc ? pk.alloc * elapsed : 0.0;
        pk.deficit += should - (pk.time - half_round());
        pk.time = half_round();
        worker_time_[k] += pk.time;
      }
    }
    MaxMinProblem p;
    p.gpus = gpus_;
    p.scale.reserve(present_.size());
    p.speed.reserve(present_.size() * kinds_);
    for (const JobIndex j : present_) {
      p.scale.push_back(specs_[static_cast<std::size_t>(j)].gpus);
      for (std::size_t k = 0; k < kinds_; ++k) p.speed.push_back(static_cast<double>(jobs_[j].per_kind[k].speed) / 1e6);
    }
    const std::vector<double> x = fifo_ ? fifo_allocation(p, kind_order_) : max_min_allocation(p);
    for (std::size_t i = 0; i < present_.size(); ++i) {
      Job& job = jobs_[present_[i]];
      job.has_alloc = true;
      for (std::size_t k = 0; k < kinds_; ++k) job.per_kind[k].alloc = x[i * kinds_ + k];
    }
    last_reset_ = now;
    need_update_ = false;
  }

  /// Ranks the jobs on each kind and gives out the GPUs (Gavel's _schedule_jobs_on_workers_helper).
  void choose() {
    std::vector<std::int64_t> left = gpus_;
    any_runs_ = false;
    for (const JobIndex j : present_) {
      Job& job = jobs_[j];
      job.next_kind = -1;
      job.runs_next = false;
    }
    for (std::size_t k = 0; k < kinds_; ++k) {
      order_.clear();
      for (const JobIndex j : present_) {
        PerKind& pk = jobs_[j].per_kind[k];
        const double fraction = worker_time_[k] == 0.0 ? 0.0 : pk.time / worker_time_[k];
        if (!jobs_[j].has_alloc || pk.alloc == 0.0 || pk.speed == 0) {
          pk.priority = 0;
        } else {
          pk.priority = fraction > 0 ? pk.alloc / fraction : pk.alloc * 1e9;
        }
        order_.push_back(j);
      }
      std::stable_sort(order_.begin(), order_.end(), [&](JobIndex a, JobIndex b) {
        const PerKind& x = jobs_[a].per_kind[k];
        const PerKind& y = jobs_[b].per_kind[k];
        if (x.priority != y.priority) return x.priority > y.priority;
        if (x.deficit != y.deficit) return x.deficit > y.deficit;
        return x.alloc > y.alloc;
      });
      if (room_ != nullptr) {
        choose_by_room(k);
        continue;
      }
      for (const JobIndex j : order_) {
        if (left[k] == 0) break;
        Job& job = jobs_[j];
        const std::int64_t s = specs_[static_cast<std::size_t>(j)].gpus;
        if (job.next_kind >= 0 || job.per_kind[k].speed == 0 || s > left[k]) continue;
        if (fifo_ && job.per_kind[k].priority <= 0) continue;  // Gavel: FIFO passes over priority 0
        left[k] -= s;
        job.next_kind = static_cast<std::int32_t>(k);
        job.runs_next = job.has_alloc;
        any_runs_ = any_runs_ || job.runs_next;
      }
    }
  }

  /// Lanes beneath (one kind, k): the ranked jobs that may run there through the room, which
  /// keeps a running job where it fits beside those ranked ahead of it and places the others;
  /// those it keeps or places are chosen (a chosen job with no allocation holds its place and
  /// does not run, as with whole GPUs).
  void choose_by_room(std::size_t k) {
    ranked_.clear();
    for (const JobIndex j : order_) {
      const PerKind& pk = jobs_[j].per_kind[k];
      if (pk.speed == 0 || (fifo_ && pk.priority <= 0)) continue;
      ranked_.push_back(j);
    }
    placed_.clear();
    if (!opts_.dlas_short_walks || !short_walk()) room_->place(ranked_, placed_);
    for (const JobIndex j : placed_.preempt) jobs_[j].next_kind = -2;  // marked: not chosen
    const auto choose = [&](JobIndex j) {
      Job& job = jobs_[j];
      job.next_kind = static_cast<std::int32_t>(k);
      job.runs_next = job.has_alloc;
      any_runs_ = any_runs_ || job.runs_next;
    };
    for (const JobIndex j : ranked_) {
      Job& job = jobs_[j];
      if (job.running && job.next_kind != -2) choose(j);
      if (job.next_kind == -2) job.next_kind = -1;
    }
    for (const JobIndex j : placed_.start) choose(j);
  }

  /// The room's short walk (LeaseRoom::place_waiting) over the ranked jobs: the waiting ones, each
  /// with whether a running one is ranked after it. False: the whole walk is needed.
  bool short_walk() {
    waiting_.clear();
    bool running_after = false;
    for (auto it = ranked_.rbegin(); it != ranked_.rend(); ++it) {
      if (jobs_[*it].running) {
        running_after = true;
      } else {
        waiting_.emplace_back(*it, running_after);
      }
    }
    std::reverse(waiting_.begin(), waiting_.end());
    return room_->place_waiting(waiting_, placed_);
  }

  const LeaseOptions& opts_;
  bool fifo_ = false;
  std::vector<std::pair<JobIndex, bool>> waiting_;  // short_walk's
  std::vector<JobIndex> ranked_;  // choose_by_room's
  LeaseDecision placed_;          // choose_by_room's
  std::vector<std::size_t> kind_order_;  // kinds by name (fifo_allocation's ties)
  std::span<const core::JobSpec> specs_;
  std::optional<LeaseKinds> kinds_of_;  // the run's cluster's
  TimeNs restart_ns_ = 0;
  std::size_t kinds_ = 1;
  std::vector<std::int64_t> gpus_;   // per kind
  std::vector<double> worker_time_;  // per kind, s since the last reset
  JobSlots<Job> jobs_;
  std::vector<JobIndex> present_;  // arrival order
  struct Lease {
    JobIndex job;
    std::int64_t stamp;
    std::int32_t kind;
    TimeNs slice;
  };
  std::vector<Lease> leased_;      // this round's
  std::vector<JobIndex> order_;    // scratch
  TimeNs last_arrival_ = 0;
  TimeNs round_end_ = 0;
  TimeNs round_start_ = 0;
  TimeNs last_reset_ = 0;
  bool in_round_ = false;
  bool need_update_ = false;
  bool any_runs_ = false;
};

}  // namespace

std::vector<double> max_min_allocation(const MaxMinProblem& p) {
  SALUS_INVARIANT(!p.gpus.empty() && p.speed.size() == p.scale.size() * p.gpus.size(), "max-min: the problem's sizes agree",
                  std::to_string(p.gpus.size()));
  if (p.scale.empty()) return {};
  if (p.gpus.size() == 1) return water_fill(p);
  double level = 0;
  return solve_lp(p, true, level);
}

double max_min_level_lp(const MaxMinProblem& p) {
  double level = 0;
  solve_lp(p, false, level);
  return level;
}

std::vector<double> fifo_allocation(const MaxMinProblem& p, std::span<const std::size_t> kind_order) {
  const std::size_t kinds = p.gpus.size();
  std::vector<double> x(p.scale.size() * kinds, 0.0);
  std::vector<std::int64_t> left = p.gpus;
  for (std::size_t j = 0; j < p.scale.size(); ++j) {
    // The fastest kind with GPUs enough left, the first by name of equal speeds; none: the queue
    // stops here (head-of-line blocking).
    std::size_t best = kinds;
    for (const std::size_t k : kind_order) {
      if (left[k] <= 0 || left[k] < p.scale[j]) continue;
      if (best == kinds || p.speed[j * kinds + k] > p.speed[j * kinds + best]) best = k;
    }
    if (best == kinds) break;
    if (p.speed[j * kinds + best] <= 0) continue;
    x[j * kinds + best] = 1.0;
    left[best] -= p.scale[j];
  }
  return x;
}

std::unique_ptr<LeasePolicy> make_max_min(const LeaseOptions& opts) { return std::make_unique<MaxMin>(opts, false); }
std::unique_ptr<LeasePolicy> make_fifo_rounds(const LeaseOptions& opts) { return std::make_unique<MaxMin>(opts, true); }

}  // namespace salus::cluster
