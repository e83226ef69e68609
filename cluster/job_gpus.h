#pragma once
/// Where a cluster run placed each job: the GPU of each of its replicas, kept flat (a job's
/// replicas are bound at one instant, one after another), 12 bytes a job and 4 a replica rather
/// than a vector per job.
#include <algorithm>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace salus::cluster {

/// One job's GPUs, in replica order.
class GpuList : public std::span<const std::int32_t> {
 public:
  using std::span<const std::int32_t>::span;
  GpuList(std::span<const std::int32_t> s) : std::span<const std::int32_t>(s) {}  // NOLINT: a view of the same
  std::int32_t at(std::size_t i) const {
    if (i >= size()) throw std::out_of_range("GpuList::at: " + std::to_string(i) + " of " + std::to_string(size()));
    return (*this)[i];
  }
  friend bool operator==(GpuList a, GpuList b) { return std::ranges::equal(a, b); }
  friend bool operator==(GpuList a, const std::vector<std::int32_t>& b) { return std::ranges::equal(a, b); }
};

class JobGpus {
 public:
  JobGpus() = default;
  explicit JobGpus(std::size_t jobs) : begin_(jobs, 0), count_(jobs, 0) {}
  std::size_t size() const { return begin_.size(); }
  bool empty() const { return begin_.empty(); }
  /// Job j's GPUs (empty if it was never placed).
  GpuList operator[](std::size_t j) const {
    return std::span<const std::int32_t>(gpus_).subspan(static_cast<std::size_t>(begin_[j]), count_[j]);
  }
  /// Job j's next replica is on GPU g: its replicas are added one after another, with no other
  /// job's between them (throws std::logic_error otherwise).
  void add(std::size_t j, std::int32_t g) {
    if (count_[j] == 0) {
      begin_[j] = static_cast<std::int64_t>(gpus_.size());
    } else if (begin_[j] + count_[j] != static_cast<std::int64_t>(gpus_.size())) {
      throw std::logic_error("JobGpus::add: job " + std::to_string(j) + "'s replicas are not placed one after another");
    }
    gpus_.push_back(g);
    ++count_[j];
  }
  friend bool operator==(const JobGpus& a, const JobGpus& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t j = 0; j < a.size(); ++j) {
      if (!(a[j] == b[j])) return false;
    }
    return true;
  }
  friend bool operator==(const JobGpus& a, const std::vector<std::vector<std::int32_t>>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t j = 0; j < a.size(); ++j) {
      if (!(a[j] == b[j])) return false;
    }
    return true;
  }

 private:
  std::vector<std::int64_t> begin_;   // per job: where its GPUs start in gpus_
  std::vector<std::int32_t> count_;   // per job: its replicas placed
  std::vector<std::int32_t> gpus_;    // every placed replica's GPU, job after job in placement order
};

}  // namespace salus::cluster
