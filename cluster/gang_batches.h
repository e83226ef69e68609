#pragma once
/// Batched gang runs, a speed mechanism of the cluster's gang lock-step
/// (ClusterOptions::tuning.gang_batches). After a gang run's first iteration, while
/// every replica's lane runs alone on its GPU (or the interference model is ideal), every
/// replica's iteration takes the job's solo iteration time, so lock-step's iterations all start
/// and end at the same instants on every replica: the rest of the run is dispatched as one batch
/// per replica, all starting at one instant and ending at one instant. Lock-step would differ
/// from the batch only through what happens at an instant where some replica's GPU is stepped
/// (an arrival bound to it, another lane's completion, a request), or through the instants of
/// its boundaries themselves, which the batch does not step. At the end of every instant t where
/// a replica's GPU was stepped, the batch is cut back to end with the iteration in flight (at a
/// boundary of t, the one starting at t), which is always exact (lock-step goes on from there
/// one iteration at a time, and the next round is a batch again if nothing is left to differ),
/// when:
///  - a replica's GPU asked the run to end at a boundary (gang_cut): the run ends there;
///  - another lane runs on a replica's GPU under a model that is not ideal: that replica is
///    slowed from t on (the simulator re-evaluates speeds after this check, at the GPU's next
///    wait), and the others then wait for it at the end of the iteration, as in lock-step.
///    Except at the batch's first instant, where the batch goes on beside those lanes when
///    every replica beside another lane is the slowest at the slowdown its company gives it
///    (Host::pace_crowded, tuning.crowded_batches): it then runs without a gap in lock-step too,
///    so its company sees the same running set through every iteration, and the others are
///    held to its pace. Such a batch is cut where some replica's slowdown or pace changes
///    (Host::steady: company came or left), its paced replicas then made lock-step's;
///  - a paging transfer was charged to a replica's lane: lock-step's next sub-run pays it;
///  - the instants of the gang's boundaries matter to the cluster queue. Lock-step steps every
///    replica's GPU at each boundary, where the placement tries the queue's 1-GPU jobs that
///    arrived earlier on the GPUs stepped and its gang jobs on every GPU. Nothing of a GPU
///    changes between its steps, and a step with no completion, arrival or request changes
///    nothing in its Scheduler; so such a boundary places a job exactly when, at the end of the
///    last instant, some GPU stepped then could admit something the queue holds that it had
///    refused at that instant's placement (`schedule` settles lanes and admits its own pending
///    jobs after the placement): a 1-GPU job, on a replica's GPU (that gang's batch is cut), or a
///    gang job on k GPUs (every batch is cut).
/// Everything else a stepped GPU does leaves the replica's speed and the queue's answers as they
/// were. Tests: tests/cluster/cluster_gang_test.cpp compares every job's state, the placements
/// and the busy samples with batches and without.
///
/// This class keeps which gangs run a batch and the touched GPUs' layouts between the placement
/// and the end of the instant; the cluster (GangBatches::Host) says what the GPUs and gangs are
/// and cuts a batch back when asked.
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/units.h"

namespace salus::cluster {

class GangBatches {
 public:
  /// What the batches read of the cluster, and the one thing they do to it.
  class Host {
   public:
    virtual ~Host() = default;
    /// GPU g's answers to the placement: its layout version and its own queue's length
    /// (Scheduler::layout_version, Scheduler::pending).
    virtual std::pair<std::uint64_t, std::size_t> layout(std::int32_t g) const = 0;
    /// The gang GPU g hosts a replica of (-1: none).
    virtual std::int32_t gang_on(std::int32_t g) const = 0;
    /// Gang k's GPUs.
    virtual std::span<const std::int32_t> gang_gpus(std::int32_t k) const = 0;
    /// Whether gang k's run was asked to end at a boundary, or a transfer was charged to a lane of it.
    virtual bool cut_or_transfer(std::int32_t k) const = 0;
    /// Whether another lane runs beside the replica on GPU g under a model that is not ideal.
    virtual bool crowded(std::int32_t g) const = 0;
    /// Whether GPU g admits now a 1-GPU job waiting in the cluster queue.
    virtual bool admits_queued_job(std::int32_t g) = 0;
    /// Whether a gang job in the cluster queue has the GPUs to start now.
    virtual bool queued_gang_placeable() = 0;
    /// At the instant gang k's batch started, with another lane beside some replica: whether
    /// the batch can go on beside them (every crowded replica the slowest, unpaced; the others
    /// then held to its pace), made so if it can.
    virtual bool pace_crowded(std::int32_t k) = 0;
    /// Whether every replica of gang k still runs as it did at `since` (its slowdown and pace
    /// unchanged since then).
    virtual bool steady(std::int32_t k, core::TimeNs since) = 0;
    /// Ends gang k's batch on every replica with the iteration in flight at t; `crowded`: a
    /// batch beside other lanes, whose slowest replica's speed may have changed at t and may
    /// change again before its iteration ends: the paced replicas are made lock-step's at t.
    virtual void cut_batch(std::int32_t k, core::TimeNs t, bool crowded) = 0;
  };

  /// Gang k's sub-runs started at t are a batch.
  void started(std::int32_t k, core::TimeNs t);
  /// Gang k's sub-runs ended (every replica's): its batch, if it ran one, is over.
  void ended(std::int32_t k);
  /// Gang k ended: its entry starts afresh for the next gang given its index.
  void forget(std::int32_t k) {
    if (static_cast<std::size_t>(k) >= start_.size()) return;
    if (start_[static_cast<std::size_t>(k)] >= 0) --batching_;
    start_[static_cast<std::size_t>(k)] = -1;
    checked_[static_cast<std::size_t>(k)] = -1;
    crowded_[static_cast<std::size_t>(k)] = 0;
  }
  /// Whether gang k's sub-runs in flight are a batch.
  bool batching(std::int32_t k) const {
    return static_cast<std::size_t>(k) < start_.size() && start_[static_cast<std::size_t>(k)] >= 0;
  }
  // The calls that take the cluster are templates over its type H (a final class deriving from
  // Host), so that its answers inline: they are asked at every instant.

  /// After the instant's placement, before its schedule: what each GPU touched would answer it.
  template <class H>
  void note_layouts(std::span<const std::int32_t> touched, const H& host) {
    static_assert(std::is_base_of_v<Host, H>);
    layouts_.clear();
    if (batching_ == 0) return;
    for (const std::int32_t g : touched) layouts_.push_back(host.layout(g));
  }
  /// At the end of instant t: cuts the batches back where lock-step could differ from them.
  template <class H>
  void check(core::TimeNs t, std::span<const std::int32_t> touched, std::size_t gpus, H& host) {
    static_assert(std::is_base_of_v<Host, H>);
    if (batching_ == 0) return;
    changed_.resize(gpus, 0);
    bool any_changed = false;
    for (std::size_t k = 0; k < touched.size(); ++k) {
      const bool changed = k >= layouts_.size() || layouts_[k] != host.layout(touched[k]);
      changed_[static_cast<std::size_t>(touched[k])] = changed ? 1 : 0;
      any_changed |= changed;
    }
    if (any_changed && host.queued_gang_placeable()) {
      for (std::size_t k = 0; k < start_.size(); ++k) {
        if (start_[k] >= 0) stop(static_cast<std::int32_t>(k), t, host);
      }
    }
    for (const std::int32_t g : touched) {
      const std::int32_t k = host.gang_on(g);
      if (k < 0 || !batching(k)) continue;
      core::TimeNs& checked = checked_[static_cast<std::size_t>(k)];
      if (checked == t) continue;
      checked = t;
      if (breaks(k, t, host)) stop(k, t, host);
    }
    for (const std::int32_t g : touched) changed_[static_cast<std::size_t>(g)] = 0;
  }

 private:
  template <class H>
  void stop(std::int32_t k, core::TimeNs t, H& host) {
    const auto i = static_cast<std::size_t>(k);
    start_[i] = -1;
    --batching_;
    const bool crowded = crowded_[i] != 0;
    crowded_[i] = 0;
    host.cut_batch(k, t, crowded);
  }
  // Whether gang k's batch must be cut at t. A batch beside other lanes goes on where it can
  // from its first instant (pace_crowded), and then while every replica runs as it did then.
  template <class H>
  bool breaks(std::int32_t k, core::TimeNs t, H& host) {
    if (host.cut_or_transfer(k)) return true;
    bool crowded = false;
    for (const std::int32_t g : host.gang_gpus(k)) {
      crowded = crowded || host.crowded(g);
      if (changed_[static_cast<std::size_t>(g)] != 0 && host.admits_queued_job(g)) return true;
    }
    const auto i = static_cast<std::size_t>(k);
    if (crowded_[i] != 0) return !host.steady(k, start_[i]);
    if (!crowded) return false;
    if (start_[i] != t || !host.pace_crowded(k)) return true;
    crowded_[i] = 1;
    return false;
  }

  std::vector<core::TimeNs> start_;    // per gang: the instant its batch started (-1: none)
  std::vector<core::TimeNs> checked_;  // per gang: the instant check() last looked at it
  std::vector<char> crowded_;          // per gang: its batch runs beside other lanes (pace_crowded)
  std::int64_t batching_ = 0;          // gangs whose sub-runs in flight are a batch
  // note_layouts: each touched GPU's answers after the placement, by position in `touched`;
  // check: per GPU, whether they may have changed since the placement judged it.
  std::vector<std::pair<std::uint64_t, std::size_t>> layouts_;
  std::vector<char> changed_;
};

}  // namespace salus::cluster
