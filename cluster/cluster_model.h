#pragma once
/// The cluster of one run_cluster call, internal to cluster/ (cluster/README.md, "The model"): its
/// GPUs (Gpu, built at their first use: GpuRuntime), the executor each GPU's Scheduler sees
/// (GpuExecutor), gang jobs (Gang) and the Cluster that runs them. Its member functions are
/// defined by topic, each file a section of the README:
///   cluster.cpp   the loop (Cluster::run), each instant's steps in order, and the GPUs' executor;
///   arrival.cpp   a job's arrival, the cluster queue and the placement ("When a job is bound");
///   gangs.cpp     gang jobs' lock-step runs and what the speed mechanisms ask of them;
///   outcome.cpp   replica slots and the run's outcome.
/// The speed mechanisms are classes of their own (gang_batches.h, joint_planner.h,
/// speculation.h, able_gpus.h, step_heap.h, room_index.h) that ask the Cluster through their Host.
#include "cluster/cluster.h"

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <set>
#include <stdexcept>
#include <tuple>

#include "cluster/able_gpus.h"
#include "cluster/gang_batches.h"
#include "cluster/job_kinds.h"
#include "cluster/joint_planner.h"
#include "cluster/placement.h"
#include "cluster/replicas.h"
#include "cluster/speculation.h"
#include "cluster/room_index.h"
#include "cluster/step_heap.h"
#include "core/errors.h"
#include "core/pending_queue.h"
#include "policies/registry.h"
#include "sim/sim_executor.h"

namespace salus::cluster::model {

using core::Bytes;
using core::Completion;
using core::Dispatch;
using core::JobIndex;
using core::JobSpec;
using core::JobState;
using core::JobStatus;
using core::LaneId;
using core::TimeNs;

class Cluster;

/// One GPU's executor as its Scheduler sees it: the simulator for ordinary jobs; for a replica of
/// a gang job, the cluster's lock-step coordination (a dispatch holds the lane until every
/// replica's GPU has chosen its replica; the run's iterations end together, and after the first
/// they run as one batch while the replicas stay in phase: cluster/gang_batches.h).
class GpuExecutor final : public core::Executor, public core::Planning {
 public:
  /// The jobs (the cluster's replica slots) come with rebase, before the first is used.
  GpuExecutor(Cluster& cluster, std::int32_t gpu, const sim::InterferenceModel& model, TimeNs switch_cost_ns,
              std::int64_t paging_bytes_per_s)
      : cluster_(cluster), gpu_(gpu), sim_({}, model, switch_cost_ns, paging_bytes_per_s, nullptr) {}

  TimeNs now() const override { return sim_.now(); }
  void admit(JobIndex job, const JobSpec& spec, Bytes offset) override;
  void release(JobIndex job) override;
  bool supports_paging() const override { return sim_.supports_paging(); }
  void page_out(JobIndex job, LaneId lane) override {
    note_transfer(lane);
    sim_.page_out(job, lane);
  }
  void page_in(JobIndex job, LaneId lane, Bytes offset) override {
    note_transfer(lane);
    sim_.page_in(job, lane, offset);
  }
  void start(const Dispatch& d) override;
  void stop_at_boundary(LaneId lane) override;
  void cancel_plan(LaneId lane) override { sim_.cancel_plan(lane); }
  void last_job_ended(LaneId lane) override { sim_.last_job_ended(lane); }
  bool end_if_at_boundary(LaneId lane) override {
    return gang_lane(lane) == core::kNoJob && sim_.end_if_at_boundary(lane);
  }
  core::Planning* planning() override { return this; }
  bool supports_plans() const override;
  bool plans_now() const override;
  /// A lane that holds only this GPU's gang replica takes part in its gang's joint plans.
  bool plans_lone_job() const override;
  bool start_plan(const core::PlanDispatch& p, core::PlanReport& report) override;
  void wait(TimeNs deadline, std::vector<Completion>& out) override;
  /// A lane its gang replica holds (chosen, its other GPUs not yet): kHeldLane. A gang run in
  /// flight: its lock-step iterations done so far and the sub-run's to its next boundary.
  std::int64_t iterations_by_next_boundary(LaneId lane, TimeNs t) const override;

  sim::SimExecutor& sim() { return sim_; }
  /// The speculative plans' state of this GPU (cluster/speculation.h).
  Speculation::GpuState& speculation() { return speculation_; }
  /// The gang replica holding the lane (dispatched, its gang run not over), or kNoJob.
  JobIndex gang_lane(LaneId lane) const {
    for (const auto& [l, r] : gang_lanes_) {
      if (l == lane) return r;
    }
    return core::kNoJob;
  }
  void set_gang_lane(LaneId lane, JobIndex replica) {
    std::erase_if(gang_lanes_, [&](const std::pair<LaneId, JobIndex>& e) { return e.first == lane; });
    if (replica != core::kNoJob) gang_lanes_.emplace_back(lane, replica);
  }
  void lane_closed(LaneId lane) override { sim_.lane_closed(lane); }

 private:
  /// A paging transfer charged to a lane a gang replica holds lengthens its next sub-run.
  void note_transfer(LaneId lane);

  /// Replica r's gang (-1: a 1-GPU job).
  std::int32_t gang_of(JobIndex r) const;

  Cluster& cluster_;
  std::int32_t gpu_;
  sim::SimExecutor sim_;
  std::vector<std::pair<LaneId, JobIndex>> gang_lanes_;  // lanes a gang replica holds (at most one)
  core::PlanDispatch plan_;  // the plan handed to the simulator: the loop's, with the cluster's deadline
  Speculation::GpuState speculation_;
};

/// A job of k > 1 GPUs: its replicas and the state of its current lock-step run.
struct Gang {
  JobIndex job = core::kNoJob;          // input job
  std::vector<JobIndex> replicas;       // replica indices, one per GPU
  std::vector<std::int32_t> gpus;       // GPU of each replica (once placed)
  std::vector<Dispatch> chosen;         // each replica's dispatch in the current run
  std::vector<char> is_chosen;
  std::vector<TimeNs> run_start;        // when each replica was dispatched (its lane held from then)
  std::vector<TimeNs> switch_ns;        // switching cost of each replica's first sub-run
  std::int32_t n_chosen = 0;
  std::int32_t sub_done = 0;            // replicas whose current iteration has ended
  std::int64_t target = 0;              // iterations of this run: the least any replica's GPU dispatched
  std::int64_t iterations = 0;          // lock-step iterations done in this run
  std::int64_t round_done = -1;         // iterations the sub-runs that ended this round report (-1: none yet)
  bool running = false;
  bool cut = false;                     // some replica's GPU asked the run to end at a boundary
  bool transfer = false;                // a paging transfer was charged to a replica's lane since its sub-run began
  AbleSet able;  // while it waits in the cluster queue: the GPUs that could take a replica
};

/// What a GPU runs with, built at its first use (Cluster::runtime): until a job is bound to it or
/// it is stepped, a GPU is only its Gpu entry, whose answers to the placement are those of an
/// empty GPU (Cluster::can_start), so that a cluster of a million GPUs given a few jobs builds a
/// few of these.
struct GpuRuntime {
  std::unique_ptr<core::Policy> policy;
  std::unique_ptr<GpuExecutor> exec;
  std::unique_ptr<core::Scheduler> sched;
  std::vector<Completion> completions;  // taken at this instant's step
  std::uint64_t memo_version = 0;       // the layout version `memo` holds answers for
  std::vector<std::int8_t> memo;        // per demand class: Scheduler::admit_kind (-1: not asked yet)
  JointPlanner::GpuState plan;          // the joint and turn plans' (cluster/joint_planner.h)
  std::size_t named = 0;                // its recording's runs before this one name input jobs (name_runs)
};

struct Gpu {
  std::unique_ptr<GpuRuntime> rt;       // null until the GPU's first use
  Bytes capacity = 0;
  std::int64_t speed_ppm = kSpeedOne;   // ClusterSpec's relative speed
  std::int32_t kind = -1;               // its index in ClusterSpec::kinds (-1: none)
  std::int32_t table = -1;              // its iteration times (Cluster::iter_tables_; -1: the specs')
  std::uint64_t kind_bit = kUnnamedKind;  // its kind's bit in a job's allowed kinds
  std::int64_t jobs = 0;                // admitted, unfinished replicas
  std::int64_t util_ppm = 0;            // their summed u
  std::int64_t bound = 0;               // replicas given to it, unfinished (admitted or pending)
  std::int32_t gang = -1;               // the gang job it hosts a replica of (at most one)
  // EASY (QueueDiscipline::kEasy): when its replicas are expected to have ended, by their
  // profiled solo times from their binding at its speed (-1: none bound).
  TimeNs free_at = -1;
  bool touched = false;                 // stepped at this instant
  bool event = false;
  // What the last placement pass that judged it saw (Cluster::place): its layout version, its
  // own queue's length, its gang (a GPU never judged: a version no Scheduler reaches).
  struct Placed {
    std::uint64_t version = ~std::uint64_t{0};
    std::size_t pending = 0;
    std::int32_t gang = -1;
    bool operator==(const Placed&) const = default;
  };
  Placed placed;
};

/// Which iteration times a GPU's simulator reads (Cluster::iter_tables_, by replica slot).
struct IterKey {
  std::int32_t kind = -1;          // the GPU's kind where jobs have speeds of their own, else -1
  std::int64_t speed = kSpeedOne;  // the GPU's relative speed
  bool operator==(const IterKey&) const = default;
};
struct IterTable {
  IterKey key;
  std::vector<TimeNs> ns;
};

class Cluster final : private GangBatches::Host, private JointPlanner::Host, private Speculation::Host {
  // The speed mechanisms take the cluster as their Host, by its own type where they ask it at every instant.
  friend class cluster::GangBatches;
  friend class cluster::JointPlanner;

 public:
  Cluster(std::span<const JobSpec> jobs, const std::string& policy, const ClusterOptions& opts)
      : jobs_(jobs), opts_(opts), policy_name_(policy), placement_(placement_registry().at(opts.placement).factory) {
    if (opts.model == nullptr) throw std::invalid_argument("run_cluster: an interference model is required");
    if (opts.cluster.gpus.empty()) throw std::invalid_argument("run_cluster: a cluster of at least one GPU");
    if (opts.progress_every < 1) throw std::invalid_argument("run_cluster: progress_every must be at least 1");
    for (const JobSpec& s : jobs) {
      if (s.gpus < 1) throw std::invalid_argument("job '" + s.id + "' needs at least one GPU");
    }
    if (!opts.actual_iter_ns.empty() && opts.actual_iter_ns.size() != jobs.size()) {
      throw std::invalid_argument("run_cluster: one actual time per job");
    }
    // Checked once for the run (replicas are copies of their job). A job wider than the cluster
    // gets no replica: its arrival rejects it ("needs k GPUs ..."), so nothing is sized by a
    // width the cluster cannot hold.
    core::check_jobs(jobs);
    job_kinds_.emplace(jobs, opts.cluster);
    const auto n = static_cast<std::int32_t>(opts.cluster.gpus.size());
    gpus_.resize(static_cast<std::size_t>(n));
    touch_log_.reset(gpus_.size());
    for (std::int32_t g = 0; g < n; ++g) {
      Gpu& gpu = at(g);
      const GpuSpec& spec = opts.cluster.gpus[static_cast<std::size_t>(g)];
      gpu.capacity = spec.capacity;
      gpu.speed_ppm = spec.speed_ppm;
      if (!opts.cluster.kinds.empty() && spec.kind >= 0) {
        gpu.kind = spec.kind;
        gpu.kind_bit = std::uint64_t{1} << spec.kind;
      }
      // A GPU of speed s runs every iteration in gpu_iter_ns(t, s) (t: the actual time, else the
      // profile's; s: the job's own speed on the GPU's kind where it has one, else the GPU's): one
      // table per speed (per kind where jobs have speeds of their own), by replica slot, shared by
      // the GPUs of that speed (kind). Where neither applies the simulator reads the spec's.
      const IterKey key{job_kinds_->has_speeds() ? gpu.kind : -1, spec.speed_ppm};
      if (key.kind >= 0 || key.speed != kSpeedOne || !opts.actual_iter_ns.empty()) {
        auto it = std::find_if(iter_tables_.begin(), iter_tables_.end(), [&](const IterTable& t) { return t.key == key; });
        if (it == iter_tables_.end()) it = iter_tables_.insert(it, IterTable{key, {}});
        gpu.table = static_cast<std::int32_t>(it - iter_tables_.begin());
      }
      idle_[gpu_class(gpu)].insert(g);
    }
    for (const Gpu& g : gpus_) {
      ++gpus_of_class_[gpu_class(g)];
      uniform_speed_ = uniform_speed_ && g.speed_ppm == at(0).speed_ppm;
    }
    uniform_speed_ = uniform_speed_ && !job_kinds_->has_speeds();
    probe_ = policies::make_policy(policy);
    newcomer_ = probe_->newcomer();
    // Demand classes (P, E) for the placement's memo, when few (a catalog's workloads).
    std::map<std::pair<Bytes, Bytes>, std::int32_t> classes;
    for (const JobSpec& s : jobs_) {
      classes.try_emplace({s.persistent, s.ephemeral}, static_cast<std::int32_t>(classes.size()));
      if (classes.size() > kMemoClasses) break;
    }
    if (classes.size() <= kMemoClasses) {
      for (const JobSpec& s : jobs_) demand_of_.push_back(classes.at({s.persistent, s.ephemeral}));
      memo_classes_ = classes.size();
    }
    for (std::int32_t g = 1; g < n; ++g) {
      if (aligned_capacity(at(g).capacity) > aligned_capacity(at(largest_gpu_).capacity)) largest_gpu_ = g;
    }
    planner_.skip_periods(opts.tuning.periodic_plans);
    planner_.jump_turns(opts.tuning.turn_jumps);
    reuse_slots_ = opts.tuning.reuse_slots;
    result_.outcome.jobs.resize(jobs.size());
    // A timeline has every GPU's recording from 0 (each GPU's memory samples): all built now.
    if (opts.sched.record_timeline) {
      for (std::int32_t g = 0; g < n; ++g) runtime(g);
    }
  }
  ClusterOutcome run();

  // ---- called by GpuExecutor ----------------------------------------------------------------
  void on_admit(std::int32_t g, JobIndex r) {
    Gpu& gpu = at(g);
    if (gpu.jobs++ == 0) ++busy_;
    gpu.util_ppm += replicas_.spec(r).gpu_util_ppm;
  }
  void on_release(std::int32_t g, JobIndex r) {
    Gpu& gpu = at(g);
    if (--gpu.jobs == 0) --busy_;
    gpu.util_ppm -= replicas_.spec(r).gpu_util_ppm;
    if (replicas_.gang(r) >= 0) gpu.gang = -1;
    unbind(g);
    ended_.push_back(r);
  }
  std::int32_t replica_gang(JobIndex r) const { return replicas_.gang(r); }
  /// The executor's completions up to `deadline` (a time no GPU has passed): ordinary ones to
  /// `out`, gang sub-runs to their gang.
  void collect(std::int32_t g, TimeNs deadline, std::vector<Completion>& out) {
    GpuExecutor& e = *at(g).rt->exec;
    raw_.clear();
    e.sim().wait(deadline, raw_);
    for (Completion& c : raw_) {
      if (c.plan || replicas_.gang(c.job) < 0) {
        out.push_back(std::move(c));
      } else {
        gang_sub_done(c);
      }
    }
  }
  void gang_chosen(std::int32_t g, const Dispatch& d) {
    const JobIndex r = d.job;
    Gang& gang = gang_of(r);
    const auto i = static_cast<std::size_t>(replicas_.pos(r));
    SALUS_INVARIANT(!gang.is_chosen[i] && !gang.running, "a gang replica is dispatched once per gang run",
                    replicas_.spec(r).id);
    gang.chosen[i] = d;
    gang.is_chosen[i] = 1;
    gang.run_start[i] = at(g).rt->exec->now();
    at(g).rt->exec->set_gang_lane(d.lane, r);
    if (++gang.n_chosen == static_cast<std::int32_t>(gang.replicas.size())) ready_gangs_.push_back(replicas_.gang(r));
  }
  void gang_cut(JobIndex r) { gang_of(r).cut = true; }
  /// Replica r's gang run: its lock-step iterations done so far, or -1 while it is held (some
  /// replica's GPU has not chosen it yet).
  std::int64_t gang_run_iterations(JobIndex r) const {
    const Gang& g = gangs_[static_cast<std::size_t>(replicas_.gang(r))];
    return g.running ? g.iterations : -1;
  }
  void gang_transfer(JobIndex r) { gang_of(r).transfer = true; }
  bool plans() const { return opts_.tuning.plans; }
  bool gang_plans() const { return opts_.tuning.plans && opts_.tuning.gang_plans; }
  /// Whether GPU g has admitted the replica of the gang job bound to it (it may wait in the
  /// GPU's own queue behind jobs given to it without a choice).
  bool gang_admitted(std::int32_t g) const override {
    const std::int32_t k = gpus_[static_cast<std::size_t>(g)].gang;
    if (k < 0) return false;
    const Gang& gang = gangs_[static_cast<std::size_t>(k)];
    for (std::size_t i = 0; i < gang.replicas.size(); ++i) {
      if (gang.gpus[i] == g) return replicas_.state(gang.replicas[i]).status == JobStatus::kAdmitted;
    }
    return false;
  }
  /// Whether a gang job waiting in the cluster queue keeps GPU g from planning ahead: one could
  /// be placed on g at any boundary. Not under GangMode::kExclusive on a GPU with jobs bound: a
  /// gang takes only GPUs with none, and g becomes one only at a finish, where its plan ends.
  /// Nor where the policy lets a newcomer take its turn (FAIR, LAS: the ones that plan), under
  /// backfill or strict: inside a plan g's answer to a gang job does not change (its memory and
  /// queue stay as they are until a finish or a bind, which end or take back the plan; no held
  /// lane, as g hosts no admitted gang; a newcomer always starts at once), so g's boundaries,
  /// which the plan does not step, could place none that the instants of the GPUs that do change
  /// would not; one placed on g at such an instant takes the plan back (Speculation::rewind), as
  /// a 1-GPU job does. (EASY decides at every instant: a pass may place where nothing changed.)
  bool gang_queue_blocks(std::int32_t g) const {
    if (queued_gangs_ == 0) return false;
    if (opts_.queue == QueueDiscipline::kEasy || gpus_[static_cast<std::size_t>(g)].bound == 0) return true;
    return opts_.gangs != GangMode::kExclusive && newcomer_ != core::Policy::Newcomer::kTakesTurn;
  }
  /// Whether GPU g, which hosts an admitted gang replica, has its part of a joint plan or its
  /// turn plan to run from now (computed in the instant's planning phase, JointPlanner::plan).
  bool joint_plan_ready(std::int32_t g) const {
    return opts_.tuning.gang_plans && JointPlanner::ready(at(g).rt->plan, now_);
  }
  /// GPU g's start_plan of a plan with its gang replica: the plan computed for it at this
  /// instant's planning phase (JointPlanner::take), started in its simulator; false when none.
  bool take_joint_plan(std::int32_t g, const core::PlanDispatch& p, core::PlanReport& report) {
    if (!planner_.take(g, now_, p, report, *this)) return false;
    at(g).rt->exec->sim().start_computed_plan(p, report);
    return true;
  }
  std::size_t gpus() const { return gpus_.size(); }
  TimeNs plan_deadline(std::int32_t g);

 private:
  Gpu& at(std::int32_t g) { return gpus_[static_cast<std::size_t>(g)]; }
  const Gpu& at(std::int32_t g) const { return gpus_[static_cast<std::size_t>(g)]; }
  /// GPU g's policy, simulator and Scheduler, built at its first use (GpuRuntime): its simulator's
  /// clock then stands at 0 as an idle GPU's would, and touch() brings it to the instant.
  GpuRuntime& runtime(std::int32_t g) {
    Gpu& gpu = at(g);
    if (gpu.rt) return *gpu.rt;
    gpu.rt = std::make_unique<GpuRuntime>();
    GpuRuntime& rt = *gpu.rt;
    rt.policy = policies::make_policy(policy_name_);
    rt.exec = std::make_unique<GpuExecutor>(*this, g, *opts_.model, opts_.switch_cost_ns, opts_.paging_bytes_per_s);
    core::SchedulerOptions so = opts_.sched;
    so.capacity = gpu.capacity;
    rt.sched = std::make_unique<core::Scheduler>(replicas_.specs(), replicas_.states(), *rt.policy, *rt.exec, so,
                                                 core::Scheduler::JobCheck::kCheckedByDriver);
    rt.exec->sim().rebase(replicas_.specs(), iter_times(gpu));
    rt.memo.assign(memo_classes_, -1);
    return rt;
  }
  std::span<const TimeNs> iter_times(const Gpu& gpu) const {
    return gpu.table >= 0 ? std::span<const TimeNs>(iter_tables_[static_cast<std::size_t>(gpu.table)].ns)
                          : std::span<const TimeNs>{};
  }
  Bytes align() const { return opts_.sched.alignment; }
  Bytes aligned_capacity(Bytes c) const { return c / align() * align(); }
  /// GPUs of one class are interchangeable to the placement while nothing is bound to them.
  /// (Speed too: a gang's placement keeps its replicas at one speed where it can, keep_speed.)
  using GpuClass = std::tuple<Bytes, std::uint64_t, std::int64_t>;  // aligned capacity, kind bit, speed
  GpuClass gpu_class(const Gpu& gpu) const { return {aligned_capacity(gpu.capacity), gpu.kind_bit, gpu.speed_ppm}; }
  /// Whether input job j may run on a GPU of this kind (JobSpec::gpu_kinds).
  bool allowed(const Gpu& gpu, JobIndex j) const { return (allowed_of(j) & gpu.kind_bit) != 0; }
  /// Input job j's allowed kind bits, and the index of its allowed set (0: any GPU): JobKinds.
  std::uint64_t allowed_of(JobIndex j) const { return job_kinds_->allowed(j); }
  std::int32_t kind_set_of(JobIndex j) const { return job_kinds_->set_of(j); }
  /// Input job j's relative speed on the GPU: its own on the GPU's kind (JobSpec::kind_speeds),
  /// else the GPU's.
  std::int64_t speed_on(const Gpu& gpu, JobIndex j) const { return job_kinds_->speed(j, gpu.kind, gpu.speed_ppm); }
  Bytes aligned(Bytes b) const { return (b + align() - 1) / align() * align(); }

  /// GPU g takes part in the instant now_: its clock is brought to now_ (nothing of it completes
  /// before now_: the heap orders every GPU's next completion).
  void touch(std::int32_t g) {
    Gpu& gpu = at(g);
    if (gpu.touched) return;
    runtime(g);
    gpu.touched = true;
    gpu.event = false;
    touched_.push_back(g);
    touch_log_.touch(g);
    const TimeNs plan_end = gpu.rt->exec->sim().plan_end_ns();
    const bool rewound = plan_end != core::kNever && plan_end > now_;
    SALUS_INVARIANT(!rewound || gpu.rt->plan.end != plan_end, "a joint plan is never taken back", std::to_string(now_));
    if (rewound) {
      SALUS_INVARIANT(taken_, "a GPU is rewound at a bind, after the instant's completions", std::to_string(now_));
      speculation_.rewind(g, now_, *this);
    }
    collect(g, now_, gpu.rt->completions);
    // The completions of this instant would have been taken before its arrivals (step 2, passed
    // already: a rewind comes from a bind); none finishes a job (see rewind).
    if (rewound && !gpu.rt->completions.empty()) take_replayed_completions(gpu, now_);
  }
  // Speculation::Host: what a rewind (cluster/speculation.h) does to a GPU.
  Speculation::GpuState& speculation(std::int32_t g) override { return at(g).rt->exec->speculation(); }
  TimeNs clock(std::int32_t g) const override { return at(g).rt->exec->now(); }
  void replan(std::int32_t g, TimeNs t) override { at(g).rt->sched->replan(t); }
  TimeNs next_completion(std::int32_t g) const override { return at(g).rt->exec->sim().next_completion_ns(); }
  void step_alone(std::int32_t g, TimeNs t) override {
    Gpu& gpu = at(g);
    collect(g, t, gpu.rt->completions);
    take_replayed_completions(gpu, t);
    gpu.rt->sched->schedule(t, false);
  }
  /// A rewound GPU's completions at t, taken as run()'s loop takes them; none finishes a job (the
  /// plan taken back would have ended at that finish, before the bind).
  void take_replayed_completions(Gpu& gpu, TimeNs t) {
    const bool finished = gpu.rt->sched->take_completions(gpu.rt->completions);
    SALUS_INVARIANT(!finished, "a rewound GPU finishes no job before the bind", std::to_string(t));
  }
  void bind_count(std::int32_t g) {
    Gpu& gpu = at(g);
    if (gpu.bound++ == 0) idle_[gpu_class(gpu)].erase(g);
  }
  void unbind(std::int32_t g) {
    Gpu& gpu = at(g);
    if (--gpu.bound == 0) {
      idle_[gpu_class(gpu)].insert(g);
      gpu.free_at = -1;
    }
  }

  Gang& gang_of(JobIndex r) { return gangs_[static_cast<std::size_t>(replicas_.gang(r))]; }
  /// Replica slots for arriving input job j (and its Gang), every holder of the table's spans
  /// given the new ones when it grew; the first slot (slot_of_).
  JobIndex add_replicas(JobIndex j, std::int64_t rank);
  /// Input job j's state from its replicas' (a gang job's: its replicas' common progress, first
  /// start and finish).
  JobState merged_state(JobIndex j) const;
  void rebase();
  /// Input job j's speed on the GPUs of an iteration table's key (speed_on's, by key).
  std::int64_t speed_for(const IterKey& key, JobIndex j) const { return job_kinds_->speed(j, key.kind, key.speed); }
  /// The input jobs whose replicas ended at this instant: their states merged into the outcome,
  /// their slots (and Gang) free for the next arrivals.
  void retire_ended();
  /// GPU g's recorded runs (record_timeline) name the input job, not its replica's slot: those
  /// recorded since the last call are renamed, before any slot they name is given again.
  void name_runs(std::int32_t g);
  /// Every live job's state merged into the outcome (a progress report reads it).
  void merge_live();

  void gang_sub_done(const Completion& c) {
    Gang& gang = gang_of(c.job);
    const auto i = static_cast<std::size_t>(replicas_.pos(c.job));
    if (gang.iterations == 0) gang.switch_ns[i] = c.switch_ns;
    if (gang.round_done < 0) gang.round_done = c.iterations_done;
    SALUS_INVARIANT(c.iterations_done == gang.round_done && c.iterations_done > 0,
                    "a gang's replicas end each round with the same iterations", replicas_.spec(c.job).id);
    if (++gang.sub_done == static_cast<std::int32_t>(gang.replicas.size())) {
      gang_iteration_ends_.push_back(replicas_.gang(c.job));
    }
  }

  void start_sub_runs(Gang& gang, TimeNs t);
  /// A gang's replicas on GPUs where the job runs at one speed, where the candidates allow: once
  /// the placement chose the first replica's GPU (of speed `speed` for input job j), the
  /// candidates of other speeds are dropped when at least `more` of that speed remain (as Gavel
  /// gives a job's workers one worker type; a gang across speeds runs at its slowest replica's
  /// pace). On GPUs of one speed for the job, nothing is dropped.
  void keep_speed(JobIndex j, std::int64_t speed, std::int32_t more) {
    const auto other = [&](const GpuLoad& c) { return speed_on(at(c.gpu), j) != speed; };
    const auto n = static_cast<std::int32_t>(loads_.size() + joins_.size());
    const auto others = static_cast<std::int32_t>(std::count_if(loads_.begin(), loads_.end(), other) +
                                                  std::count_if(joins_.begin(), joins_.end(), other));
    if (others == 0 || n - others < more) return;
    std::erase_if(loads_, other);
    std::erase_if(joins_, other);
  }
  /// Whether a gang replica on GPU g may run held to a slower replica's pace (its iterations
  /// padded to the slowest one's, SimExecutor::start_paced): exact where the padding changes no
  /// other run's speed, i.e. the model is ideal, or nothing runs beside it on g now (a run that
  /// starts beside it later finds the iteration in flight as lock-step has it: its own work, or
  /// its lane held, idle; SimExecutor::unpad); no paging (a transfer would fall in the padding).
  bool paceable_on(std::int32_t g) {
    if (!opts_.tuning.pace_replicas) return false;
    if (opts_.model->ideal()) return true;
    return opts_.paging_bytes_per_s == 0 && at(g).rt->exec->sim().running() == 0;
  }
  // JointPlanner::Host: what the joint and turn plans (cluster/joint_planner.h) read.
  JointPlanner::Gang gang(std::int32_t k) const override {
    const Gang& g = gangs_[static_cast<std::size_t>(k)];
    return {.running = g.running, .chosen = g.n_chosen > 0, .gpus = g.gpus, .replicas = g.replicas,
            .is_chosen = g.is_chosen, .id = jobs_[static_cast<std::size_t>(g.job)].id};
  }
  JointPlanner::GpuState& gpu_state(std::int32_t g) override { return at(g).rt->plan; }
  const sim::SimExecutor* plannable(std::int32_t g, TimeNs t0) override {
    const Gpu& gpu = at(g);
    const sim::SimExecutor& sim = gpu.rt->exec->sim();
    if (!gpu.touched || sim.now() != t0 || sim.running() != 0) return nullptr;
    return admits_queued_job(g) ? nullptr : &sim;
  }
  bool offer(std::int32_t g, TimeNs t0, core::PlanDispatch& out) override {
    return at(g).rt->sched->offer_plan(t0, out);
  }
  /// The next job arrival not yet taken (kNever: none): joint and turn plans end by it.
  TimeNs next_arrival() const override {
    return cursor_ < order_.size() ? jobs_[static_cast<std::size_t>(order_[cursor_])].arrival_ns : core::kNever;
  }
  void resolve_gangs(TimeNs t);
  void start_ready_gangs(TimeNs t);
  // GangBatches::Host: what the batched gang runs (cluster/gang_batches.h) read and cut.
  std::pair<std::uint64_t, std::size_t> layout(std::int32_t g) const override {
    return {at(g).rt->sched->layout_version(), at(g).rt->sched->pending()};
  }
  std::int32_t gang_on(std::int32_t g) const override { return at(g).gang; }
  std::span<const std::int32_t> gang_gpus(std::int32_t k) const override {
    return gangs_[static_cast<std::size_t>(k)].gpus;
  }
  bool cut_or_transfer(std::int32_t k) const override {
    const Gang& gang = gangs_[static_cast<std::size_t>(k)];
    return gang.cut || gang.transfer;
  }
  bool crowded(std::int32_t g) const override { return !opts_.model->ideal() && at(g).rt->exec->sim().running() > 1; }
  bool admits_queued_job(std::int32_t g) override;
  bool queued_gang_placeable() override;
  bool pace_crowded(std::int32_t k) override;
  bool steady(std::int32_t k, TimeNs since) override;
  void cut_batch(std::int32_t k, TimeNs t, bool crowded) override;
  std::size_t able_gpus(Gang& gang);
  /// GPU g's next step after instant t: its completions not yet taken (at t), its executor's next
  /// completion, its next request.
  void reschedule(std::int32_t g, TimeNs t) {
    Gpu& gpu = at(g);
    TimeNs next = gpu.rt->completions.empty() ? gpu.rt->exec->sim().next_completion_ns() : t;
    steps_.set(g, std::min(next, gpu.rt->sched->next_request(t)));
  }
  void advance(std::int32_t g, TimeNs t) {
    SALUS_INVARIANT(t == now_, "GPUs advance to the cluster's instant", std::to_string(t));
    touch(g);
  }
  /// Whether input job j would start at once on GPU g (cluster/README.md, "When a job is
  /// bound"): kNewLane, admitted into a lane of its own; kJoins, admitted into a lane with jobs
  /// where its policy runs it from the lane's next boundary (Policy::starts_at_once); kNo
  /// otherwise (not admitted now, or it would wait behind the lane's jobs). The memory part,
  /// Scheduler::admit_kind, is remembered per demand class while the GPU's memory layout stays
  /// the same (first-fit asks every GPU below the one it picks, at every arrival).
  enum class Start : std::uint8_t { kNo, kJoins, kNewLane };
  /// GangMode::kExclusive: a gang job only on a GPU with no job bound, and no job on a GPU a gang
  /// holds. Always true under kHold.
  bool shares_with_gangs(const Gpu& gpu, const JobSpec& s) const {
    if (opts_.gangs != GangMode::kExclusive) return true;
    return gpu.gang < 0 && (s.gpus == 1 || gpu.bound == 0);
  }
  Start can_start(std::int32_t g, JobIndex j) {
    using Kind = core::Scheduler::AdmitKind;
    const JobSpec& s = jobs_[static_cast<std::size_t>(j)];
    Gpu& gpu = at(g);
    if (!allowed(gpu, j)) return Start::kNo;
    if (!gpu.rt) return fresh_fits(gpu, s) ? Start::kNewLane : Start::kNo;
    const core::Scheduler& sched = *gpu.rt->sched;
    Kind kind = Kind::kNo;
    if (demand_of_.empty()) {
      kind = sched.admit_kind(s.persistent, s.ephemeral);
    } else {
      if (sched.pending() > 0) return Start::kNo;
      if (const std::uint64_t v = sched.layout_version(); gpu.rt->memo_version != v) {
        std::fill(gpu.rt->memo.begin(), gpu.rt->memo.end(), std::int8_t{-1});
        gpu.rt->memo_version = v;
      }
      std::int8_t& m = gpu.rt->memo[static_cast<std::size_t>(demand_of_[static_cast<std::size_t>(j)])];
      if (m < 0) m = static_cast<std::int8_t>(sched.admit_kind(s.persistent, s.ephemeral));
      kind = static_cast<Kind>(m);
    }
    switch (kind) {
      case Kind::kNo: return Start::kNo;
      case Kind::kNewLane: return Start::kNewLane;
      case Kind::kExistingLane: break;
    }
    // FAIR and LAS take turns, SRTF and priority by their order; never in a lane its gang
    // replica holds (Scheduler::starts_at_once).
    if (newcomer_ == core::Policy::Newcomer::kWaits) return Start::kNo;
    return sched.starts_at_once(slot_of_[static_cast<std::size_t>(j)], now_) ? Start::kJoins : Start::kNo;
  }
  /// Whether a job of spec s gets a lane of its own on the GPU, empty and never used (no runtime
  /// built): what Scheduler::admit_kind answers there (kNewLane where P + E fits its memory, all
  /// aligned, in any lane mode; else kNo). tests/cluster/cluster_test.cpp checks that a fresh
  /// Scheduler answers so, cluster_gang_test.cpp that GPUs built at once give the same results.
  bool fresh_fits(const Gpu& gpu, const JobSpec& s) const {
    return aligned(s.persistent) + aligned(s.ephemeral) <= aligned_capacity(gpu.capacity);
  }
  /// The memory the safety condition leaves GPU g (Scheduler::free_bytes; a GPU never used: all).
  Bytes free_bytes(const Gpu& gpu) const { return gpu.rt ? gpu.rt->sched->free_bytes() : aligned_capacity(gpu.capacity); }
  /// GPUs whose memory could ever hold P + E bytes (aligned).
  std::int64_t able_gpus(Bytes need, std::uint64_t kinds) const;
  /// The GPU a 1-GPU job is given at its arrival without a choice (the only one that can hold
  /// it; when none can, the largest), or -1 when it goes to the cluster queue or is rejected.
  std::int32_t fixed_gpu(JobIndex j) const;
  void arrive(JobIndex j, std::int64_t rank, TimeNs t);
  void bind(JobIndex r, std::int32_t g, std::int64_t rank, TimeNs t, bool admit_now);
  void place(TimeNs t);
  core::PendingQueue::Verdict try_place(JobIndex j, TimeNs t);
  void index_room(std::int32_t g);
  Gpu::Placed placed_key(std::int32_t g) {
    const core::Scheduler& sched = *runtime(g).sched;
    return {sched.layout_version(), sched.pending(), at(g).gang};
  }
  void gather_candidates(JobIndex j);
  ClusterOutcome finish(TimeNs end);

  std::span<const JobSpec> jobs_;
  const ClusterOptions& opts_;
  std::string policy_name_;                // every GPU's policy (policies::make_policy)
  std::unique_ptr<core::Policy> probe_;    // an instance for what no GPU is asked: admission keys, newcomer()
  std::size_t memo_classes_ = 0;           // demand classes the memo keeps (0: none)
  PlacementFn placement_;
  static constexpr std::size_t kMemoClasses = 256;
  std::vector<std::int32_t> demand_of_;  // input job -> its demand class (empty: more than kMemoClasses)
  bool first_candidate_ = takes_first_candidate(placement_);  // the placement takes the first (first-fit)
  // EASY's reservation in the current placement pass (Cluster::reserve): the GPUs the first job
  // that could not start will start on (sorted), from `at`, when the last of them is expected free
  // (the smallest time: all of them are free now).
  struct Reservation {
    bool active = false;
    TimeNs at = 0;
    std::vector<std::int32_t> gpus;
  };
  Reservation reservation_;
  std::vector<std::pair<TimeNs, std::int32_t>> free_order_;  // reserve's scratch: (expected free, GPU)
  /// Input job j's profiled solo time on GPU g (what is left of it: a job is bound before it runs):
  /// EASY's estimate of how long it holds the GPU.
  TimeNs solo_on(JobIndex j, const Gpu& gpu) const {
    const JobSpec& s = jobs_[static_cast<std::size_t>(j)];
    const std::int64_t speed = speed_on(gpu, j);
    return s.iterations * gpu_iter_ns(s.iter_ns, speed) + gpu_iter_ns(s.first_iter_extra_ns, speed);
  }
  /// EASY: the reservation of input job j, the first job of this pass that cannot start.
  void reserve(JobIndex j);
  /// EASY: drops from the candidates the reserved GPUs where input job j would still run at the
  /// reservation. Returns whether it dropped any.
  bool keep_reservation(JobIndex j, TimeNs t);
  // GPUs with jobs bound and nothing in their own queue, by the memory the safety condition leaves
  // them (Scheduler::free_bytes), as of the last index_room: a job of P + E gets a lane of its
  // own only where that is at least P + E. Only with lanes per Algorithm 1 (LaneMode::kAuto): in
  // one lane or exclusively, a GPU with jobs never opens another.
  RoomIndex roomy_{opts_.cluster.gpus.size()};
  std::vector<std::int32_t> candidates_;  // gather_candidates' scratch
  bool uniform_speed_ = true;             // every job runs at one speed on every GPU (keep_speed drops nothing)
  std::optional<JobKinds> job_kinds_;      // the jobs' allowed kinds and own speeds (after check_jobs)
  ReplicaTable replicas_;                  // the live jobs' replicas, shared by every GPU's Scheduler
  bool reuse_slots_ = true;                // an ended job's slots are given again (Tuning::reuse_slots)
  std::vector<JobIndex> slot_of_;          // input job -> its first replica's slot (kNoJob: none live)
  std::vector<JobIndex> ended_;            // replicas released at this instant (retire_ended)
  // The iteration times of the GPUs that do not run jobs at their spec's (Gpu::table), by slot.
  std::vector<IterTable> iter_tables_;
  std::vector<Gang> gangs_;                // the live gang jobs' (by index: arrivals may move them)
  std::vector<std::int32_t> free_gangs_;   // entries of gangs_ free for the next gang job
  std::vector<Gpu> gpus_;
  std::map<GpuClass, std::set<std::int32_t>> idle_;  // by class: GPUs nothing is bound to
  std::map<GpuClass, std::int64_t> gpus_of_class_;    // class -> how many GPUs have it
  std::vector<std::int32_t> touched_;
  // The GPUs by their last touch (able_gpus asks a waiting gang job's count again only of those
  // touched since), and the instant's first touch's sequence number.
  TouchLog touch_log_;
  AbleCounter able_counter_;
  std::uint64_t instant_seq_ = 0;
  std::vector<std::int32_t> ready_gangs_;
  // start_ready_gangs: the GPUs whose held lanes a gang run's start freed, and those bound to
  // while the queue is tried on them (bind, while second_pass_).
  std::vector<std::int32_t> freed_, rebound_;
  bool second_pass_ = false;
  std::vector<std::int32_t> gang_iteration_ends_;
  GangBatches batches_;                    // batched gang runs (tuning.gang_batches)
  std::vector<std::int32_t> waiting_gangs_;  // gangs in the cluster queue, in arrival order
  std::vector<Completion> raw_, scratch_;
  JointPlanner planner_;                    // joint and turn plans (tuning.gang_plans)
  StepHeap steps_{opts_.cluster.gpus.size()};  // the GPUs by the instant of their next step
  core::PendingQueue queue_;               // the cluster queue: arrival order, class skip
  std::map<std::tuple<Bytes, Bytes, std::int32_t, std::int32_t>, std::int64_t> class_ids_;  // its classes
  std::map<std::pair<Bytes, Bytes>, std::int64_t> queued_demands_;  // (P, E) -> jobs of it in the cluster queue
  std::int64_t queued_gangs_ = 0;          // gang jobs in the cluster queue
  std::vector<JobIndex> order_;            // input jobs in arrival order
  std::size_t cursor_ = 0;                 // in order_: the next job to arrive
  Speculation speculation_;                // speculative plans (tuning.plans, on several GPUs)
  bool taken_ = false;                     // step 2 of this instant is done (rewinds come after)
  std::vector<JobIndex> rank_;             // input job -> arrival rank (< the jobs, a JobIndex)
  JobGpus job_gpus_;
  std::int64_t first_new_rank_ = -1;       // rank of the first job queued at this instant (-1: none)
  core::Policy::Newcomer newcomer_ = core::Policy::Newcomer::kWaits;  // the policy's (every GPU runs it)
  std::vector<GpuLoad> loads_;  // try_place's candidates: a lane of its own there
  std::vector<GpuLoad> joins_;  // and: joins a lane, starts by its policy's turn
  std::int32_t largest_gpu_ = 0;           // the lowest-numbered GPU of the largest memory
  std::int64_t busy_ = 0;
  TimeNs now_ = 0;  // the instant being processed
  ClusterOutcome result_;
};

}  // namespace salus::cluster::model
