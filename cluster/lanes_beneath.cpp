// Lanes beneath a preemptive cluster policy: preemptive.h, "Lanes beneath"; docs/cluster.md.
#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <queue>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "cluster/job_slots.h"
#include "cluster/placement.h"
#include "cluster/preemptive.h"
#include "core/errors.h"
#include "policies/registry.h"
#include "sim/sim_executor.h"

namespace salus::cluster {
namespace {

using core::Bytes;
using core::Completion;
using core::JobIndex;
using core::JobSpec;
using core::JobState;
using core::JobStatus;
using core::LaneId;
using core::TimeNs;

/// A GPU's executor: its simulator, runs taken as dispatched and rotations never planned (a plan
/// cannot be cut at the boundary where a preempted job leaves).
class LaneExecutor final : public core::Executor, public core::Planning {
 public:
  explicit LaneExecutor(sim::SimExecutor& sim) : sim_(sim) {}
  TimeNs now() const override { return sim_.now(); }
  void admit(JobIndex j, const JobSpec& s, Bytes offset) override { sim_.admit(j, s, offset); }
  void release(JobIndex j) override { sim_.release(j); }
  void lane_closed(LaneId lane) override { sim_.lane_closed(lane); }
  void start(const core::Dispatch& d) override { sim_.start(d); }
  void stop_at_boundary(LaneId lane) override { sim_.stop_at_boundary(lane); }
  core::Planning* planning() override { return this; }
  void wait(TimeNs deadline, std::vector<Completion>& out) override { sim_.wait(deadline, out); }
  bool end_if_at_boundary(LaneId lane) override { return sim_.end_if_at_boundary(lane); }
  std::int64_t iterations_by_next_boundary(LaneId lane, TimeNs t) const override {
    return sim_.iterations_by_next_boundary(lane, t);
  }
  bool supports_plans() const override { return false; }
  bool start_plan(const core::PlanDispatch& p, core::PlanReport& report) override {
    (void)p;
    (void)report;
    return false;
  }
  void cancel_plan(LaneId lane) override { sim_.cancel_plan(lane); }
  void last_job_ended(LaneId lane) override { sim_.last_job_ended(lane); }

 private:
  sim::SimExecutor& sim_;
};

/// The engine's state of one job in the system (arrived, not finished).
struct Job {
  std::int64_t stamp = 0;          // gang finish entries of another stamp are stale
  std::vector<std::int32_t> gpus;  // while running: its GPUs; else its last run's
  std::vector<std::int32_t> target;  // a decision's placement (LeaseRoom::place)
  JobIndex slot = core::kNoJob;    // a 1-GPU job's run: running, or withdrawn and not yet left
  TimeNs run_start = 0;            // while running: its run's start (the lease's)
  TimeNs remaining = 0;            // a gang job's work left at solo speed, as of busy_from
  TimeNs busy_from = 0;            // a gang job's: the instant it progresses from (after a restart)
  std::int64_t iterations = 0;     // a 1-GPU job's: iterations done by its ended runs
  std::uint64_t walk = 0;          // the last walk (place) that passed it
  bool ran = false;                // has run before (a start after it restores its checkpoint)
  bool running = false;            // holds its lease
  bool draining = false;           // withdrawn, its run not yet at its boundary
  bool waiting_gpus = false;       // a gang job leased GPUs that preempted jobs have not yet left
};

/// Jobs on one GPU in a walk: their aligned sum P, max E, count, a gang among them.
struct Share {
  Bytes p = 0;
  Bytes e = 0;
  std::int32_t n = 0;
  std::int64_t util_ppm = 0;
  bool gang = false;
  Share& operator+=(const Share& o) {
    p += o.p;
    e = std::max(e, o.e);
    n += o.n;
    util_ppm += o.util_ppm;
    gang = gang || o.gang;
    return *this;
  }
  friend Share operator+(Share a, const Share& b) { return a += b; }
};

struct Gpu {
  std::unique_ptr<core::Policy> policy;
  std::unique_ptr<sim::SimExecutor> sim;
  std::unique_ptr<LaneExecutor> exec;
  std::unique_ptr<core::Scheduler> sched;
  std::vector<Completion> completions;
  std::vector<JobIndex> slots;  // runs here not ended (running or withdrawn)
  std::vector<JobIndex> live;   // the 1-GPU jobs running here (not withdrawn)
  std::size_t named = 0;        // its recording's runs before this one name input jobs (end_slot)
  JobIndex gang = core::kNoJob;  // the gang job that holds it
  Bytes capacity = 0;            // aligned down
  bool touched = false;
  bool event = false;
  bool busy = false;  // runs here (running or leaving) or a gang holds it
  bool calm = true;   // no running job here and no gang: LanedEngine::calm_ counts them
  Share held;         // its running jobs' (live) aligned sum P, max E, count, summed u
  bool indexed = false;  // in LanedEngine::order_ (no gang holds it)
  bool in_calm_index = false;  // in LanedEngine::node_calm_
  std::tuple<std::int64_t, std::int64_t, std::int32_t> key{};  // its entry there
  // A walk's (LeaseRoom::place): the running jobs kept here (pinned) and the waiting ones placed
  // here (members), each as aligned sum P, max E, count, and whether a gang holds it.
  std::uint64_t walk = 0;
  Share pinned, members;
};

class LanedEngine final : public LeaseRoom {
 public:
  LanedEngine(std::span<const JobSpec> jobs, const std::string& policy, const PreemptiveOptions& opts)
      : specs_(jobs), opts_(opts), policy_(make_lease_policy(policy, opts.lease)) {
    core::check_jobs(jobs);
    const std::string flag = "--gpu-sharing " + opts.gpu_policy;
    if (!policy_->takes_room()) {
      throw core::InputError(flag + ": lanes beneath the cluster policy " + policy + " are not modelled");
    }
    if (opts.model == nullptr) throw std::invalid_argument("lanes beneath need an interference model");
    if (!opts.cluster.kinds.empty()) {
      throw core::InputError(flag + ": lanes beneath a cluster policy run GPUs of one kind; this cluster names kinds (" +
                             std::to_string(opts.cluster.kinds.size()) + "): give --gpu-sharing exclusive");
    }
    check_lease_inputs(jobs, opts.cluster, flag);
    if (!opts.actual_iter_ns.empty() && opts.actual_iter_ns.size() != jobs.size()) {
      throw std::invalid_argument("actual_iter_ns: one per job");
    }
    (void)policies::make_policy(opts.gpu_policy);  // an unknown name: InputError listing the valid ones
    if (opts.progress_every < 1) throw std::invalid_argument("progress_every must be at least 1");
    align_ = opts.sched.alignment;
    gpus_.resize(opts.cluster.gpus.size());
    for (std::size_t g = 0; g < gpus_.size(); ++g) {
      gpus_[g].capacity = opts.cluster.gpus[g].capacity / align_ * align_;
      ++by_capacity_[gpus_[g].capacity];
    }
    calm_ = static_cast<std::int64_t>(gpus_.size());  // every GPU starts calm (Gpu::calm)
    policy_->set_room(this);
    placement_ = placement_registry().at(opts.placement).factory;  // an unknown name: InputError
    order_kind_ = opts.placement == "first-fit"  ? Order::kFirstFit
                  : opts.placement == "best-fit" ? Order::kBestFit
                  : opts.placement == "util-pack" ? Order::kUtilPack
                                                  : Order::kLeastLoaded;
    std::int32_t nodes = 0;
    for (const GpuSpec& g : opts.cluster.gpus) nodes = std::max(nodes, g.node + 1);
    node_calm_.resize(static_cast<std::size_t>(nodes));
    std::vector<std::int32_t> per_node(static_cast<std::size_t>(nodes), 0);
    for (const GpuSpec& g : opts.cluster.gpus) ++per_node[static_cast<std::size_t>(g.node)];
    one_per_node_ = std::all_of(per_node.begin(), per_node.end(), [](std::int32_t c) { return c == 1; });
    calm_bits_.assign((gpus_.size() + 63) / 64, 0);
    for (std::size_t g = 0; g < gpus_.size(); ++g) {
      reindex(static_cast<std::int32_t>(g));
      calm_index(static_cast<std::int32_t>(g), true);
      one_size_ = one_size_ && gpus_[g].capacity == gpus_.front().capacity;
    }
  }

  ClusterOutcome run();
  void place(std::span<const JobIndex> order, LeaseDecision& out) override;
  bool place_waiting(std::span<const std::pair<JobIndex, bool>> waiting, LeaseDecision& out) override;

 private:
  using Entry = std::tuple<TimeNs, std::int32_t, JobIndex, std::int64_t>;  // (finish, rank, job, stamp)

  std::size_t at(JobIndex j) const { return static_cast<std::size_t>(j); }
  Job& job(JobIndex j) { return jobs_[j]; }
  JobState& state(JobIndex j) { return out_.outcome.jobs[at(j)]; }
  Bytes aligned(Bytes b) const { return (b + align_ - 1) / align_ * align_; }
  Bytes p_of(JobIndex j) const { return aligned(specs_[at(j)].persistent); }
  Bytes e_of(JobIndex j) const { return aligned(specs_[at(j)].ephemeral); }
  bool exclusive_lanes() const { return opts_.sched.lane_mode == core::LaneMode::kExclusive; }
  /// Whether jobs of summed aligned P `p`, largest aligned E `e`, `n` of them, fit GPU g.
  bool fits(const Gpu& gpu, Bytes p, Bytes e, std::int32_t n) const {
    return exclusive_lanes() ? n <= 1 && p + e <= gpu.capacity : p + e <= gpu.capacity;
  }
  /// GPU g with its walk state current (reset at a walk's first look).
  Gpu& walked(std::int32_t g) {
    Gpu& gpu = gpus_[static_cast<std::size_t>(g)];
    if (gpu.walk != walk_) {
      gpu.walk = walk_;
      gpu.pinned = gpu.members = Share{};
    }
    return gpu;
  }
  /// Whether 1-GPU job j fits GPU g beside the jobs `there` (no gang among them is looked at).
  bool fits_with(const Gpu& gpu, const Share& there, JobIndex j) const {
    return fits(gpu, there.p + p_of(j), std::max(there.e, e_of(j)), there.n + 1);
  }
  /// Whether 1-GPU job j fits GPU g beside the jobs kept and placed there in this walk.
  bool fits_beside(std::int32_t g, JobIndex j) {
    const Gpu& gpu = walked(g);
    const Share there = gpu.pinned + gpu.members;
    return !there.gang && fits_with(gpu, there, j);
  }
  bool empty_in_walk(std::int32_t g) {
    const Gpu& gpu = walked(g);
    const Share there = gpu.pinned + gpu.members;
    return there.n == 0 && !there.gang;
  }
  /// Whether GPU g holds a running job not yet passed in this walk (one the walk may yet keep).
  bool occupied_ahead_of_walk(std::int32_t g) const;
  void add(Share& s, JobIndex j, bool gang) const {
    s.p += p_of(j);
    s.e = std::max(s.e, e_of(j));
    ++s.n;
    s.util_ppm += specs_[at(j)].gpu_util_ppm;
    s.gang = s.gang || gang;
  }
  /// Job j placed on GPU g among the walk's members (calm_taken_ counts the calm GPUs so taken;
  /// they leave the calm index until the next walk, or until a job runs there).
  void take_member(std::int32_t g, JobIndex j, bool gang) {
    Gpu& gpu = walked(g);
    if (gpu.members.n == 0) {
      if (gpu.calm) ++calm_taken_;
      walk_touched_.push_back(g);
      if (gpu.in_calm_index) calm_index(g, false);
    }
    add(gpu.members, j, gang);
    // The placement index holds what runs there and the walk's members (none after a gang).
    index_as(g, gpu.held + gpu.members, gpu.gang == core::kNoJob && !gpu.members.gang);
  }
  /// The calm GPUs (no job running, no gang, none of the walk's members) by node: each node's,
  /// lowest-numbered first, and the nodes by how many they have.
  void calm_index(std::int32_t g, bool in) {
    Gpu& gpu = gpus_[static_cast<std::size_t>(g)];
    if (gpu.in_calm_index == in) return;
    gpu.in_calm_index = in;
    if (one_per_node_) {
      // A node per GPU (--gpus N): the node rule takes the lowest-numbered calm GPUs; a bit each.
      const auto word = static_cast<std::size_t>(g) / 64;
      const std::uint64_t bit = std::uint64_t{1} << (static_cast<unsigned>(g) % 64);
      calm_bits_[word] = in ? (calm_bits_[word] | bit) : (calm_bits_[word] & ~bit);
      return;
    }
    const auto n = static_cast<std::size_t>(opts_.cluster.gpus[static_cast<std::size_t>(g)].node);
    std::set<std::int32_t>& node = node_calm_[n];
    const auto count = static_cast<std::int64_t>(node.size());
    const auto node_id = static_cast<std::int32_t>(n);
    if (count > 0) {
      nodes_fit_.erase({count, node_id});
      nodes_spill_.erase({-count, node_id});
    }
    if (in) {
      node.insert(g);
    } else {
      node.erase(g);
    }
    if (!node.empty()) {
      const auto c = static_cast<std::int64_t>(node.size());
      nodes_fit_.insert({c, node_id});
      nodes_spill_.insert({-c, node_id});
    }
  }
  /// k calm GPUs as by_nodes takes them (calm_ - calm_taken_ >= k).
  std::vector<std::int32_t> calm_by_node(std::size_t k) const {
    std::vector<std::int32_t> out;
    if (one_per_node_) {
      for (std::size_t w = 0; w < calm_bits_.size() && out.size() < k; ++w) {
        for (std::uint64_t bits = calm_bits_[w]; bits != 0 && out.size() < k; bits &= bits - 1) {
          out.push_back(static_cast<std::int32_t>(w * 64 + static_cast<std::size_t>(__builtin_ctzll(bits))));
        }
      }
      return out;
    }
    if (const auto it = nodes_fit_.lower_bound({static_cast<std::int64_t>(k), 0}); it != nodes_fit_.end()) {
      for (const std::int32_t g : node_calm_[static_cast<std::size_t>(it->second)]) {
        if (out.size() < k) out.push_back(g);
      }
      return out;
    }
    for (const auto& [count, n] : nodes_spill_) {
      for (const std::int32_t g : node_calm_[static_cast<std::size_t>(n)]) {
        if (out.size() < k) out.push_back(g);
      }
      if (out.size() == k) break;
    }
    return out;
  }
  /// The running jobs on GPU g not yet passed in this walk (those it may yet keep there).
  Share awaited(std::int32_t g) const;
  /// Places waiting job j among the members (its target), greedily: false where it fits nowhere.
  /// `displace`: also where it fits beside the jobs ahead of it only (a running job the walk has
  /// not reached may then not fit); else only beside every job there (the short walk).
  bool place_member(JobIndex j, bool displace = true);
  bool place_on_gpus(JobIndex j, bool displace);
  void begin_walk() {
    ++walk_;
    members_.clear();
    failed_.clear();
    calm_taken_ = 0;
    // The last walk's members out of the indexes: each GPU as what runs on it says.
    for (const std::int32_t g : walk_touched_) {
      calm_index(g, gpus_[static_cast<std::size_t>(g)].calm);
      reindex(g);
    }
    walk_touched_.clear();
  }
  /// Places every member again, in order, beside the jobs kept: false where one fits nowhere.
  bool repack();
  void clear_members();
  bool keep(JobIndex j);
  std::vector<std::int32_t> by_nodes(const std::vector<std::int32_t>& gpus, std::size_t k) const;

  Gpu& rt(std::int32_t g);
  void touch(std::int32_t g, TimeNs t);
  void end_slots(std::int32_t g, TimeNs t);
  void end_slot(JobIndex slot, TimeNs t);
  /// The runs GPU `gpu` recorded since the last call name input jobs, not slots (before a slot is
  /// given again, and at the end).
  void name_runs(Gpu& gpu);
  JobIndex new_slot(JobIndex j, std::int32_t g, TimeNs t);
  void rebase_all();
  void arrive(JobIndex j, TimeNs t);
  void decide(TimeNs t);
  void preempt(JobIndex j, TimeNs t);
  void start(JobIndex j, TimeNs t);
  void stop_gang(JobIndex j, TimeNs t);
  void begin_gangs(TimeNs t);
  void finish_job(JobIndex j, TimeNs t);
  void set_busy(std::int32_t g);
  void note_busy(TimeNs t);
  TimeNs next_gpu();
  TimeNs next_gang_finish();
  void record_run(JobIndex j, TimeNs start, TimeNs end, const std::vector<std::int32_t>& gpus, bool gang);

  std::span<const JobSpec> specs_;
  const PreemptiveOptions& opts_;
  std::unique_ptr<LeasePolicy> policy_;
  Bytes align_ = core::kAlignment;
  std::map<Bytes, std::size_t> by_capacity_;  // aligned memory -> GPUs
  std::vector<Gpu> gpus_;
  JobSlots<Job> jobs_;
  // The runs (slots): each a job of the iterations its job has left, given to one GPU's loop.
  std::vector<JobSpec> slot_specs_;
  std::vector<JobState> slot_states_;
  std::vector<JobIndex> slot_job_;
  std::vector<std::int32_t> slot_gpu_;
  std::vector<TimeNs> slot_iter_;   // actual iteration times (the simulators read them)
  std::vector<TimeNs> slot_start_;  // the run's lease start
  std::vector<JobIndex> free_slots_;
  std::size_t slots_used_ = 0;       // slots given out (the tables' size may be more)
  std::int64_t next_rank_ = 0;       // the runs' arrival ranks on their GPUs
  std::uint64_t walk_ = 0;
  std::vector<JobIndex> members_;   // a walk's waiting jobs placed so far, in order
  // A walk's demands (GPUs, aligned P, aligned E) that fitted nowhere: the GPUs only fill as the
  // walk goes, so a later job of one of them fits nowhere either (cleared where members are
  // placed again, repack).
  std::set<std::tuple<std::int32_t, Bytes, Bytes>> failed_;
  PlacementFn placement_ = nullptr;  // where a 1-GPU job goes among the GPUs with room
  std::vector<GpuLoad> loads_;      // place_member's candidates
  /// The short walk's 1-GPU placements without a scan of every GPU: the GPUs no gang holds in
  /// the order the placement prefers them, by what runs on them (Gpu::held) and the walk's
  /// members placed there (restored at the next walk). The same choice as placement_ over the
  /// scan's candidates (the differential tests compare the short walk with the whole).
  enum class Order : std::uint8_t { kFirstFit, kBestFit, kLeastLoaded, kUtilPack };
  Order order_kind_ = Order::kLeastLoaded;
  using Key = std::tuple<std::int64_t, std::int64_t, std::int32_t>;
  std::set<Key> order_;      // (first, second key, GPU) ascending: the placement's preference
  std::set<Key> by_util_;    // util-pack's second phase: (util, 0, GPU)
  Key key_of(std::int32_t g, const Share& h) const;
  void reindex(std::int32_t g);
  /// GPU g in the placement index with the load h (in: it may take a 1-GPU job), or out of it.
  void index_as(std::int32_t g, const Share& h, bool in);
  /// The short walk's choice for 1-GPU job j, or -1.
  std::int32_t indexed_choice(JobIndex j);
  std::vector<std::int32_t> calm_scratch_, busy_scratch_;
  bool one_size_ = true;  // every GPU of one (aligned) memory
  bool one_per_node_ = true;  // every node one GPU: the calm GPUs as bits (calm_bits_)
  std::vector<std::uint64_t> calm_bits_;
  std::vector<std::set<std::int32_t>> node_calm_;  // per node: its calm GPUs (calm_index)
  std::set<std::pair<std::int64_t, std::int32_t>> nodes_fit_;    // (calm GPUs, node), nodes with some
  std::set<std::pair<std::int64_t, std::int32_t>> nodes_spill_;  // (-calm GPUs, node)
  std::vector<std::int32_t> walk_touched_;  // GPUs this walk's members changed in the indexes
  std::vector<std::vector<std::int32_t>> saved_;  // repack's: the members' targets before it
  std::priority_queue<std::pair<TimeNs, std::int32_t>, std::vector<std::pair<TimeNs, std::int32_t>>, std::greater<>>
      due_;  // GPUs by their next completion (stale entries skipped)
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> finishes_;  // gang jobs'
  std::vector<JobIndex> waiting_gangs_;
  std::vector<std::int32_t> touched_;
  std::vector<Completion> scratch_;
  LeaseDecision decision_;
  ClusterOutcome out_;
  std::int64_t active_ = 0;
  std::int64_t busy_ = 0;
  std::int64_t calm_ = 0;        // GPUs with no job running (Gpu::calm)
  std::int64_t calm_taken_ = 0;  // a short walk's: calm GPUs its members took
  bool decide_needed_ = false;  // a finish or a preempted run's end at this instant
};

Gpu& LanedEngine::rt(std::int32_t g) {
  Gpu& gpu = gpus_[static_cast<std::size_t>(g)];
  if (gpu.sched) return gpu;
  core::SchedulerOptions o = opts_.sched;
  o.capacity = opts_.cluster.gpus[static_cast<std::size_t>(g)].capacity;
  o.paging = false;
  o.progress = nullptr;
  gpu.policy = policies::make_policy(opts_.gpu_policy);
  gpu.sim = std::make_unique<sim::SimExecutor>(std::span<const JobSpec>(slot_specs_), *opts_.model, opts_.switch_cost_ns,
                                               0, nullptr);
  gpu.sim->rebase(slot_specs_, slot_iter_);
  gpu.exec = std::make_unique<LaneExecutor>(*gpu.sim);
  gpu.sched = std::make_unique<core::Scheduler>(slot_specs_, slot_states_, *gpu.policy, *gpu.exec, o,
                                                core::Scheduler::JobCheck::kCheckedByDriver);
  return gpu;
}

void LanedEngine::rebase_all() {
  for (Gpu& gpu : gpus_) {
    if (!gpu.sched) continue;
    gpu.sched->rebase(slot_specs_, slot_states_);
    gpu.sim->rebase(slot_specs_, slot_iter_);
  }
}

JobIndex LanedEngine::new_slot(JobIndex j, std::int32_t g, TimeNs t) {
  JobIndex slot = core::kNoJob;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    if (slots_used_ == slot_specs_.size()) {
      // The tables grow by doubling; every GPU's loop and simulator are given the new ones.
      const std::size_t size = std::max<std::size_t>(16, 2 * slot_specs_.size());
      slot_specs_.resize(size);
      slot_states_.resize(size);
      slot_job_.resize(size, core::kNoJob);
      slot_gpu_.resize(size, -1);
      slot_iter_.resize(size, 1);
      slot_start_.resize(size, 0);
      rebase_all();
    }
    slot = static_cast<JobIndex>(slots_used_++);
  }
  const Job& s = job(j);
  const JobSpec& spec = specs_[at(j)];
  JobSpec run = spec;
  run.iterations = spec.iterations - s.iterations;
  run.first_iter_extra_ns = (s.iterations == 0 ? spec.first_iter_extra_ns : 0) + (s.ran ? opts_.restart_cost_ns : 0);
  run.arrival_ns = t;
  const auto k = static_cast<std::size_t>(slot);
  slot_specs_[k] = std::move(run);
  slot_states_[k] = JobState{};
  slot_job_[k] = j;
  slot_gpu_[k] = g;
  slot_iter_[k] = opts_.actual_iter_ns.empty() ? spec.iter_ns : opts_.actual_iter_ns[at(j)];
  slot_start_[k] = t;
  return slot;
}

void LanedEngine::touch(std::int32_t g, TimeNs t) {
  Gpu& gpu = rt(g);
  if (gpu.touched) return;
  gpu.touched = true;
  gpu.event = false;
  touched_.push_back(g);
  gpu.completions.clear();
  gpu.sim->wait(t, gpu.completions);
  gpu.event = gpu.sched->take_completions(gpu.completions);
  end_slots(g, t);
}

void LanedEngine::end_slots(std::int32_t g, TimeNs t) {
  Gpu& gpu = gpus_[static_cast<std::size_t>(g)];
  for (std::size_t i = 0; i < gpu.slots.size();) {
    const JobIndex slot = gpu.slots[i];
    const JobStatus st = slot_states_[static_cast<std::size_t>(slot)].status;
    if (st == JobStatus::kDone || st == JobStatus::kInterrupted) {
      end_slot(slot, t);  // erases it from gpu.slots
    } else {
      SALUS_INVARIANT(st == JobStatus::kPending || st == JobStatus::kAdmitted, "lanes beneath: a run ends done or withdrawn",
                      std::string(core::to_string(st)));
      ++i;
    }
  }
}

void LanedEngine::name_runs(Gpu& gpu) {
  std::vector<core::Segment>& runs = gpu.sched->outcome().segments;
  for (std::size_t i = gpu.named; i < runs.size(); ++i) runs[i].job = slot_job_[static_cast<std::size_t>(runs[i].job)];
  gpu.named = runs.size();
}

void LanedEngine::end_slot(JobIndex slot, TimeNs t) {
  const auto k = static_cast<std::size_t>(slot);
  const JobIndex j = slot_job_[k];
  const std::int32_t g = slot_gpu_[k];
  Gpu& gpu = gpus_[static_cast<std::size_t>(g)];
  const JobState& ss = slot_states_[k];
  Job& s = job(j);
  JobState& st = state(j);
  s.iterations += ss.iterations_done;
  st.iterations_done = s.iterations;
  st.gpu_time_ns += ss.gpu_time_ns;
  if (ss.first_start_ns >= 0) {
    s.ran = true;
    if (st.first_start_ns < 0) st.first_start_ns = ss.first_start_ns;
  }
  const TimeNs end = ss.finish_ns >= 0 ? ss.finish_ns : t;
  record_run(j, slot_start_[k], end, {g}, false);
  gpu.slots.erase(std::find(gpu.slots.begin(), gpu.slots.end(), slot));
  name_runs(gpu);
  free_slots_.push_back(slot);
  s.draining = false;
  s.slot = core::kNoJob;
  decide_needed_ = true;
  if (ss.status == JobStatus::kDone) {
    if (const auto it = std::find(gpu.live.begin(), gpu.live.end(), j); it != gpu.live.end()) gpu.live.erase(it);
    s.gpus = {g};
    finish_job(j, end);
  }
  set_busy(g);
}

void LanedEngine::record_run(JobIndex j, TimeNs start, TimeNs end, const std::vector<std::int32_t>& gpus, bool gang) {
  if (opts_.record_runs) out_.job_runs.push_back(JobRun{.job = j, .start_ns = start, .end_ns = end, .gpus = gpus});
  ++out_.runs;
  if (gang && opts_.record_timeline) {
    for (const std::int32_t g : gpus) {
      out_.gpu_timelines[static_cast<std::size_t>(g)].segments.push_back(
          core::Segment{.lane = 0, .job = j, .start_ns = start, .end_ns = end, .iterations = 0});
    }
  }
}

void LanedEngine::finish_job(JobIndex j, TimeNs t) {
  Job& s = job(j);
  JobState& st = state(j);
  for (const std::int32_t g : s.gpus) out_.job_gpus.add(at(j), g);
  st.status = JobStatus::kDone;
  st.finish_ns = t;
  st.running = false;
  st.iterations_done = specs_[at(j)].iterations;
  s.running = false;
  jobs_.release(j);
  policy_->finish(j, t);
  --active_;
  out_.outcome.end_ns = std::max(out_.outcome.end_ns, t);
}

void LanedEngine::set_busy(std::int32_t g) {
  Gpu& gpu = gpus_[static_cast<std::size_t>(g)];
  const bool busy = !gpu.slots.empty() || gpu.gang != core::kNoJob;
  if (busy != gpu.busy) busy_ += busy ? 1 : -1;
  gpu.busy = busy;
  const bool calm = gpu.live.empty() && gpu.gang == core::kNoJob;
  if (calm != gpu.calm) calm_ += calm ? 1 : -1;
  gpu.calm = calm;
  calm_index(g, calm);
  reindex(g);
}

LanedEngine::Key LanedEngine::key_of(std::int32_t g, const Share& h) const {
  const Gpu& gpu = gpus_[static_cast<std::size_t>(g)];
  switch (order_kind_) {
    case Order::kFirstFit: return {0, 0, g};
    case Order::kBestFit: return {gpu.capacity - h.p - h.e, 0, g};
    case Order::kLeastLoaded: return {h.n, h.util_ppm, g};
    case Order::kUtilPack: return {-h.util_ppm, 0, g};
  }
  return {0, 0, g};
}

void LanedEngine::reindex(std::int32_t g) {
  Gpu& gpu = gpus_[static_cast<std::size_t>(g)];
  gpu.held = Share{};
  for (const JobIndex o : gpu.live) add(gpu.held, o, false);
  index_as(g, gpu.held, gpu.gang == core::kNoJob);
}

void LanedEngine::index_as(std::int32_t g, const Share& h, bool in) {
  Gpu& gpu = gpus_[static_cast<std::size_t>(g)];
  if (in && gpu.indexed && gpu.key == key_of(g, h)) {
    // util-pack's second set is keyed by the same utilisation as its first: nothing moves.
    return;
  }
  if (gpu.indexed) {
    order_.erase(gpu.key);
    by_util_.erase({-std::get<0>(gpu.key), 0, g});
  }
  gpu.indexed = in;
  if (!in) return;
  gpu.key = key_of(g, h);
  order_.insert(gpu.key);
  if (order_kind_ == Order::kUtilPack) by_util_.insert({h.util_ppm, 0, g});
}

std::int32_t LanedEngine::indexed_choice(JobIndex j) {
  const JobSpec& spec = specs_[at(j)];
  // Whether j fits GPU g beside what runs there and the walk's members (the index's key).
  const auto fits_j = [&](std::int32_t g) {
    const Gpu& gpu = gpus_[static_cast<std::size_t>(g)];
    return fits_with(gpu, gpu.walk == walk_ ? gpu.held + gpu.members : gpu.held, j);
  };
  // The first GPU of `set` from `from` on where j fits.
  const auto first = [&](const std::set<Key>& set, std::set<Key>::const_iterator from) {
    for (auto it = from; it != set.end(); ++it) {
      if (fits_j(std::get<2>(*it))) return std::get<2>(*it);
    }
    return std::int32_t{-1};
  };
  if (order_kind_ != Order::kUtilPack) return first(order_, order_.begin());
  // util-pack: the fullest GPU whose u stays <= 1 with the job's, else the least utilised.
  const std::int32_t full = first(order_, order_.lower_bound({-(1'000'000 - spec.gpu_util_ppm), 0, 0}));
  return full >= 0 ? full : first(by_util_, by_util_.begin());
}

void LanedEngine::note_busy(TimeNs t) {
  const auto busy = static_cast<std::int32_t>(busy_);
  if (out_.busy.empty() || out_.busy.back().gpus != busy) {
    if (!out_.busy.empty() && out_.busy.back().time_ns == t) {
      out_.busy.back().gpus = busy;
    } else {
      out_.busy.push_back(BusySample{.time_ns = t, .gpus = busy});
    }
  }
}

void LanedEngine::arrive(JobIndex j, TimeNs t) {
  const JobSpec& s = specs_[at(j)];
  JobState& st = state(j);
  const Bytes need = aligned(s.persistent) + aligned(s.ephemeral);
  std::size_t able = 0;
  for (auto it = by_capacity_.lower_bound(need); it != by_capacity_.end(); ++it) able += it->second;
  if (able < static_cast<std::size_t>(s.gpus)) {
    st.status = JobStatus::kRejected;
    st.set_reason("needs " + std::to_string(s.gpus) + " GPUs with P + E = " + core::format_size(need) +
                  " (aligned), the cluster has " + std::to_string(able) + " that large");
    return;
  }
  st.status = JobStatus::kPending;
  Job& job = jobs_.take(j, [](Job& reused) { reused = Job{}; });  // take() keeps the stamp going
  job.remaining = s.solo_ns() + s.first_iter_extra_ns;
  ++active_;
  policy_->arrive(j, t);
}

// ---- The room (LeaseRoom::place) -------------------------------------------------------------

Share LanedEngine::awaited(std::int32_t g) const {
  const Gpu& gpu = gpus_[static_cast<std::size_t>(g)];
  Share r;
  for (const JobIndex o : gpu.live) {
    if (jobs_[o].walk != walk_) add(r, o, false);
  }
  if (gpu.gang != core::kNoJob && jobs_[gpu.gang].walk != walk_) add(r, gpu.gang, true);
  return r;
}

bool LanedEngine::occupied_ahead_of_walk(std::int32_t g) const {
  const Gpu& gpu = gpus_[static_cast<std::size_t>(g)];
  for (const JobIndex o : gpu.live) {
    if (jobs_[o].walk != walk_) return true;
  }
  return gpu.gang != core::kNoJob && jobs_[gpu.gang].walk != walk_;
}

std::vector<std::int32_t> LanedEngine::by_nodes(const std::vector<std::int32_t>& gpus, std::size_t k) const {
  // As the exclusive engine: one node if one has k (the fewest such, then the lowest-numbered),
  // else the nodes with the most first; lowest-numbered GPUs in a node.
  std::map<std::int32_t, std::vector<std::int32_t>> nodes;
  for (const std::int32_t g : gpus) nodes[opts_.cluster.gpus[static_cast<std::size_t>(g)].node].push_back(g);
  const std::vector<std::int32_t>* best = nullptr;
  for (const auto& [n, list] : nodes) {
    if (list.size() >= k && (best == nullptr || list.size() < best->size())) best = &list;
  }
  if (best != nullptr) return {best->begin(), best->begin() + static_cast<std::ptrdiff_t>(k)};
  std::vector<const std::vector<std::int32_t>*> order;
  for (const auto& [n, list] : nodes) order.push_back(&list);
  std::stable_sort(order.begin(), order.end(), [](const auto* a, const auto* b) { return a->size() > b->size(); });
  std::vector<std::int32_t> out;
  for (const auto* list : order) {
    for (const std::int32_t g : *list) {
      if (out.size() < k) out.push_back(g);
    }
  }
  return out;
}

bool LanedEngine::place_member(JobIndex j, bool displace) {
  const JobSpec& spec = specs_[at(j)];
  job(j).target.clear();
  const std::tuple<std::int32_t, Bytes, Bytes> demand{spec.gpus, p_of(j), e_of(j)};
  if (failed_.count(demand) != 0) return false;
  if (!place_on_gpus(j, displace)) {
    failed_.insert(demand);
    return false;
  }
  return true;
}

bool LanedEngine::place_on_gpus(JobIndex j, bool displace) {
  Job& s = job(j);
  const JobSpec& spec = specs_[at(j)];
  const auto n_gpus = static_cast<std::int32_t>(gpus_.size());
  // The short walk (no running job passed: every one awaited) needs GPUs with none running for a
  // gang, and for any job in exclusive lanes: too few such left, and it fits nowhere.
  const bool needs_calm = spec.gpus > 1 || exclusive_lanes();
  if (!displace && needs_calm && calm_ - calm_taken_ < spec.gpus) return false;
  if (spec.gpus > 1 && !displace && one_size_) {
    // The short walk on GPUs of one size: the calm GPUs by node (as the scan and by_nodes below).
    if (p_of(j) + e_of(j) > gpus_.front().capacity) return false;
    s.target = calm_by_node(static_cast<std::size_t>(spec.gpus));
    for (const std::int32_t g : s.target) take_member(g, j, true);
    return true;
  }
  if (spec.gpus > 1) {
    // GPUs empty in the walk with room for P + E: those no running job awaits first (as the
    // exclusive engine takes free GPUs, one node if it can), then the others.
    const Bytes need = p_of(j) + e_of(j);
    std::vector<std::int32_t>& calm = calm_scratch_;
    std::vector<std::int32_t>& busy = busy_scratch_;
    calm.clear();
    busy.clear();
    for (std::int32_t g = 0; g < n_gpus; ++g) {
      if (!empty_in_walk(g) || need > gpus_[static_cast<std::size_t>(g)].capacity) continue;
      (occupied_ahead_of_walk(g) ? busy : calm).push_back(g);
    }
    const auto k = static_cast<std::size_t>(spec.gpus);
    if (!displace) busy.clear();
    if (calm.size() + busy.size() < k) return false;
    if (calm.size() >= k) {
      s.target = by_nodes(calm, k);
    } else {
      s.target = calm;
      s.target.insert(s.target.end(), busy.begin(), busy.begin() + static_cast<std::ptrdiff_t>(k - calm.size()));
    }
    for (const std::int32_t g : s.target) take_member(g, j, true);
    return true;
  }
  // A 1-GPU job: the placement's choice (PreemptiveOptions::placement) among the GPUs where it
  // fits beside every job there, the running ones the walk has not reached included; where none,
  // among those where it fits beside the jobs ahead of it (a running job there may then go).
  if (!displace) {
    const std::int32_t g = indexed_choice(j);
    if (g < 0) return false;
    s.target = {g};
    take_member(g, j, false);
    return true;
  }
  for (const bool beside_all : {true, false}) {
    loads_.clear();
    for (std::int32_t g = 0; g < n_gpus; ++g) {
      if (!fits_beside(g, j)) continue;
      const Gpu& gpu = gpus_[static_cast<std::size_t>(g)];
      Share there = gpu.pinned + gpu.members;
      if (beside_all) there += awaited(g);
      if (beside_all && (there.gang || !fits_with(gpu, there, j))) continue;
      loads_.push_back(GpuLoad{.gpu = g,
                               .capacity = gpu.capacity,
                               .free_bytes = gpu.capacity - there.p - there.e,
                               .jobs = there.n,
                               .util_ppm = there.util_ppm});
    }
    if (loads_.empty()) continue;
    const std::int32_t g = loads_[placement_(spec, loads_)].gpu;
    s.target = {g};
    take_member(g, j, false);
    return true;
  }
  return false;
}

void LanedEngine::clear_members() {
  for (const JobIndex m : members_) {
    for (const std::int32_t g : job(m).target) walked(g).members = Share{};
  }
}

bool LanedEngine::repack() {
  failed_.clear();
  saved_.clear();
  for (const JobIndex m : members_) saved_.push_back(job(m).target);
  clear_members();
  bool ok = true;
  for (const JobIndex m : members_) ok = ok && place_member(m);
  if (ok) return true;
  failed_.clear();  // what failed around the running job tried is no failure without it
  clear_members();  // back as they were
  for (std::size_t i = 0; i < members_.size(); ++i) {
    const JobIndex m = members_[i];
    job(m).target = saved_[i];
    for (const std::int32_t g : saved_[i]) add(walked(g).members, m, specs_[at(m)].gpus > 1);
  }
  return false;
}

bool LanedEngine::keep(JobIndex j) {
  const Job& s = job(j);
  const bool gang = specs_[at(j)].gpus > 1;
  // Where it runs, beside the jobs kept there and the members placed there; else the members
  // placed again around it, if they all still fit.
  bool fits_now = true;
  for (const std::int32_t g : s.gpus) fits_now = fits_now && (gang ? empty_in_walk(g) : fits_beside(g, j));
  std::vector<Share> before;
  for (const std::int32_t g : s.gpus) {
    before.push_back(walked(g).pinned);
    add(walked(g).pinned, j, gang);
  }
  if (fits_now) return true;
  bool room = true;  // beside the jobs kept ahead of it, at least
  for (std::size_t i = 0; i < s.gpus.size(); ++i) {
    const Gpu& gpu = gpus_[static_cast<std::size_t>(s.gpus[i])];
    room = room && !before[i].gang && (gang ? before[i].n == 0 : fits(gpu, gpu.pinned.p, gpu.pinned.e, gpu.pinned.n));
  }
  if (room && repack()) return true;
  for (std::size_t i = 0; i < s.gpus.size(); ++i) walked(s.gpus[i]).pinned = before[i];
  return false;
}

void LanedEngine::place(std::span<const JobIndex> order, LeaseDecision& out) {
  // Membership in the policy's order: a job holds GPUs if it and every job ahead of it that does
  // can be placed, the running ones where they run, the waiting ones anywhere (placed greedily in
  // order, and again around a running job kept after them). With exclusive lanes on GPUs of one
  // size this is the exclusive engine's count.
  begin_walk();
  for (const JobIndex j : order) {
    Job& s = job(j);
    s.walk = walk_;
    if (s.running) {
      if (!keep(j)) out.preempt.push_back(j);
    } else if (!s.draining && place_member(j)) {  // a job whose preempted run has not left waits
      members_.push_back(j);
    }
  }
  for (const JobIndex j : members_) out.start.push_back(j);
}

bool LanedEngine::place_waiting(std::span<const std::pair<JobIndex, bool>> waiting, LeaseDecision& out) {
  // No running job is passed in this walk, so every one counts as awaited where it runs: a job
  // placed beside all of them leaves each its place, and the whole walk would place it there too.
  begin_walk();
  for (const auto& [j, running_after] : waiting) {
    if (job(j).draining) continue;  // waits in the whole walk too
    if (place_member(j, false)) {
      members_.push_back(j);
    } else if (running_after) {
      return false;  // the whole walk might preempt a running job after it for it
    }
  }
  for (const JobIndex j : members_) out.start.push_back(j);
  return true;
}

// ---- Decisions and runs ----------------------------------------------------------------------

void LanedEngine::preempt(JobIndex j, TimeNs t) {
  Job& s = job(j);
  ++out_.preemptions;
  s.running = false;
  state(j).running = false;
  if (specs_[at(j)].gpus > 1) {
    stop_gang(j, t);
    return;
  }
  const std::int32_t g = s.gpus[0];
  touch(g, t);
  Gpu& gpu = gpus_[static_cast<std::size_t>(g)];
  gpu.event = true;
  gpu.live.erase(std::find(gpu.live.begin(), gpu.live.end(), j));
  set_busy(g);
  s.draining = true;
  const JobIndex slot = s.slot;
  gpu.sched->withdraw(slot, t);
  if (slot_states_[static_cast<std::size_t>(slot)].status == JobStatus::kInterrupted) end_slot(slot, t);
}

void LanedEngine::stop_gang(JobIndex j, TimeNs t) {
  Job& s = job(j);
  if (!s.waiting_gpus) s.remaining -= std::min(s.remaining, std::max<TimeNs>(0, t - s.busy_from));
  state(j).gpu_time_ns += t - s.run_start;
  const JobSpec& spec = specs_[at(j)];
  const TimeNs work = spec.solo_ns() + spec.first_iter_extra_ns;
  state(j).iterations_done = std::min(spec.iterations, (work - s.remaining) / spec.iter_ns);
  record_run(j, s.run_start, t, s.gpus, true);
  for (const std::int32_t g : s.gpus) {
    gpus_[static_cast<std::size_t>(g)].gang = core::kNoJob;
    set_busy(g);
  }
  if (s.waiting_gpus) std::erase(waiting_gangs_, j);
  s.waiting_gpus = false;
  ++s.stamp;
}

void LanedEngine::start(JobIndex j, TimeNs t) {
  Job& s = job(j);
  JobState& st = state(j);
  if (s.ran || st.status == JobStatus::kAdmitted) {
    std::vector<std::int32_t> a = s.target, b = s.gpus;
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    if (a != b) ++out_.migrations;
  } else {
    st.status = JobStatus::kAdmitted;
    st.admitted_ns = t;
    ++out_.placements;
  }
  s.gpus = s.target;
  s.running = true;
  st.running = true;
  s.run_start = t;
  if (specs_[at(j)].gpus > 1) {
    for (const std::int32_t g : s.gpus) {
      gpus_[static_cast<std::size_t>(g)].gang = j;
      set_busy(g);
    }
    s.waiting_gpus = true;
    waiting_gangs_.push_back(j);
    return;
  }
  const std::int32_t g = s.gpus[0];
  touch(g, t);
  const JobIndex slot = new_slot(j, g, t);
  Gpu& gpu = gpus_[static_cast<std::size_t>(g)];
  gpu.event = true;
  gpu.slots.push_back(slot);
  gpu.live.push_back(j);
  s.slot = slot;
  gpu.sched->arrive(slot, next_rank_++);
  set_busy(g);
}

void LanedEngine::begin_gangs(TimeNs t) {
  for (std::size_t i = 0; i < waiting_gangs_.size();) {
    const JobIndex j = waiting_gangs_[i];
    Job& s = job(j);
    bool empty = true;
    for (const std::int32_t g : s.gpus) empty = empty && gpus_[static_cast<std::size_t>(g)].slots.empty();
    if (!empty) {
      ++i;
      continue;
    }
    waiting_gangs_.erase(waiting_gangs_.begin() + static_cast<std::ptrdiff_t>(i));
    s.waiting_gpus = false;
    s.busy_from = t + (s.ran ? opts_.restart_cost_ns : 0);
    s.ran = true;
    if (state(j).first_start_ns < 0) state(j).first_start_ns = t;
    ++s.stamp;
    ++out_.outcome.dispatches;
    finishes_.emplace(s.busy_from + s.remaining, state(j).submit_rank, j, s.stamp);
  }
}

void LanedEngine::decide(TimeNs t) {
  decision_.clear();
  policy_->decide(t, decision_);
  SALUS_INVARIANT(decision_.extend.empty() && decision_.start_until.empty(), "lanes beneath: no leases that end",
                  std::to_string(t));
  for (const JobIndex j : decision_.preempt) preempt(j, t);
  for (const JobIndex j : decision_.start) start(j, t);
}

TimeNs LanedEngine::next_gpu() {
  while (!due_.empty()) {
    const auto [time, g] = due_.top();
    Gpu& gpu = gpus_[static_cast<std::size_t>(g)];
    if (gpu.sim && gpu.sim->next_completion_ns() == time) return time;
    due_.pop();
  }
  return core::kNever;
}

TimeNs LanedEngine::next_gang_finish() {
  while (!finishes_.empty()) {
    const auto& [time, rank, j, stamp] = finishes_.top();
    if (jobs_.has(j)) {
      const Job& s = job(j);
      if (s.running && !s.waiting_gpus && s.stamp == stamp) return time;
    }
    finishes_.pop();
  }
  return core::kNever;
}

ClusterOutcome LanedEngine::run() {
  const std::size_t n = specs_.size();
  jobs_.clear(n);
  out_.outcome.jobs.assign(n, JobState{});
  out_.job_gpus = JobGpus(n);
  if (opts_.record_timeline) {
    out_.gpu_timelines.resize(gpus_.size());
    for (std::size_t g = 0; g < gpus_.size(); ++g) rt(static_cast<std::int32_t>(g));
  }
  policy_->begin(specs_, opts_.cluster, opts_.restart_cost_ns);
  const std::vector<JobIndex> arrivals = rank_arrivals(specs_, out_.outcome.jobs);
  std::size_t next_arrival = 0;
  TimeNs t = n > 0 ? specs_[at(arrivals[0])].arrival_ns : 0;
  TimeNs policy_due = core::kNever;
  note_busy(t);
  while (next_arrival < n || active_ > 0) {
    decide_needed_ = false;
    // Runs that end now (finishes, preempted runs at their boundary), then gang finishes.
    while (next_gpu() <= t) {
      const std::int32_t g = due_.top().second;
      due_.pop();
      touch(g, t);
    }
    while (next_gang_finish() <= t) {
      const JobIndex j = std::get<2>(finishes_.top());
      finishes_.pop();
      Job& s = job(j);
      state(j).gpu_time_ns += t - s.run_start;
      record_run(j, s.run_start, t, s.gpus, true);
      for (const std::int32_t g : s.gpus) {
        gpus_[static_cast<std::size_t>(g)].gang = core::kNoJob;
        set_busy(g);
      }
      finish_job(j, t);
      decide_needed_ = true;
    }
    const std::size_t arrived = next_arrival;
    for (; next_arrival < n && specs_[at(arrivals[next_arrival])].arrival_ns <= t; ++next_arrival) {
      arrive(arrivals[next_arrival], t);
    }
    if (decide_needed_ || next_arrival != arrived || t >= policy_due) {
      decide(t);
      policy_due = active_ > 0 ? policy_->next_change(t) : core::kNever;
    }
    for (const std::int32_t g : touched_) {
      Gpu& gpu = gpus_[static_cast<std::size_t>(g)];
      gpu.sched->split_at_instant(t, gpu.event, scratch_);
      gpu.sched->schedule(t, gpu.event);
      gpu.touched = false;
      if (const TimeNs c = gpu.sim->next_completion_ns(); c != core::kNever) due_.emplace(c, g);
    }
    touched_.clear();
    begin_gangs(t);
    note_busy(t);
    ++out_.events;
    if (opts_.progress && out_.events % opts_.progress_every == 0) {
      opts_.progress(core::Progress{.now = t, .events = out_.events, .jobs = out_.outcome.jobs});
    }
    TimeNs next = std::min(next_gpu(), next_gang_finish());
    if (next_arrival < n) next = std::min(next, specs_[at(arrivals[next_arrival])].arrival_ns);
    next = std::min(next, policy_due);
    if (next == core::kNever) break;
    // A preempted run stopped at a boundary of this very instant ends now: the same instant again.
    SALUS_INVARIANT(next >= t, "lanes beneath: time moves forward", std::to_string(t) + " -> " + std::to_string(next));
    t = next;
  }
  SALUS_INVARIANT(active_ == 0, "lanes beneath: every job ends", std::to_string(active_) + " left at " + std::to_string(t));
  // The GPUs' counters and timelines.
  core::ScheduleOutcome& o = out_.outcome;
  for (std::size_t g = 0; g < gpus_.size(); ++g) {
    Gpu& gpu = gpus_[g];
    if (!gpu.sched) continue;
    gpu.sched->end_at(o.end_ns);
    core::ScheduleOutcome& go = gpu.sched->outcome();
    add_gpu_counters(o, go);
    if (opts_.record_timeline) {
      core::Timeline& tl = out_.gpu_timelines[g];
      name_runs(gpu);
      tl.segments.insert(tl.segments.end(), go.segments.begin(), go.segments.end());
      std::stable_sort(tl.segments.begin(), tl.segments.end(),
                       [](const core::Segment& a, const core::Segment& b) { return a.start_ns < b.start_ns; });
      tl.memory = std::move(go.memory);
      tl.lane_moves = std::move(go.lane_moves);
    }
  }
  o.steps = out_.events;
  for (std::size_t j = 0; j < n; ++j) o.iterations += o.jobs[j].iterations_done;
  out_.promotions = policy_->promotions();
  return std::move(out_);
}

}  // namespace

ClusterOutcome run_lanes_beneath(std::span<const core::JobSpec> jobs, const std::string& policy,
                                 const PreemptiveOptions& opts) {
  LanedEngine e(jobs, policy, opts);
  return e.run();
}

}  // namespace salus::cluster
