#pragma once
/// The backend's memory: one allocation of the configured capacity, laid out by core::LaneManager
/// (persistent blocks from offset 0, lanes stacked down from the top), and bump arenas over its
/// regions. Nothing a job runs allocates device memory any other way.
#include <cstddef>
#include <map>
#include <stdexcept>
#include <string>

#include "core/units.h"
#include "gpu_backend/device.h"

namespace salus::gpu {

/// A region ran out: a job asked for more than its lane (or persistent block) holds.
class ArenaOverflow : public std::runtime_error {
 public:
  ArenaOverflow(Bytes requested, Bytes used, Bytes size);
  Bytes requested, used, size;
};

/// Asked by an arena before each of its allocations; throws to refuse one (injected faults:
/// gpu_backend/fault_injection.h). The arena does not own it.
class AllocationGate {
 public:
  virtual ~AllocationGate() = default;
  /// `bytes` already rounded up to the alignment.
  virtual void before_allocation(Bytes bytes) = 0;
};

/// Bump allocator over [base, base + size). With a null base it only counts (planning).
/// Not thread-safe: one arena per lane run.
class Arena {
 public:
  Arena() = default;
  Arena(std::byte* base, Bytes size) : base_(base), size_(size) {}
  /// `bytes` rounded up to 256-byte alignment; throws ArenaOverflow past the end, or what the
  /// gate throws when it refuses.
  void* allocate(Bytes bytes);
  /// Every later allocation asks `gate` first (null: none); it must outlive those allocations.
  void set_gate(AllocationGate* gate) { gate_ = gate; }
  template <typename T>
  T* allocate_array(std::int64_t count) {
    return static_cast<T*>(allocate(static_cast<Bytes>(count) * static_cast<Bytes>(sizeof(T))));
  }
  /// Releases everything (the iteration boundary).
  void reset() { used_ = 0; }
  Bytes used() const { return used_; }
  Bytes peak() const { return peak_; }
  Bytes size() const { return size_; }
  bool counting() const { return base_ == nullptr; }
  /// Where the next allocation would start (null when counting), and how much is left.
  std::byte* next() const { return base_ == nullptr ? nullptr : base_ + used_; }
  Bytes available() const { return counting() ? (Bytes{1} << 60) : size_ - used_; }

 private:
  std::byte* base_ = nullptr;
  Bytes size_ = 0;
  Bytes used_ = 0;
  Bytes peak_ = 0;
  AllocationGate* gate_ = nullptr;
};

/// First-fit allocator with free over offsets [0, limit), for buffers that die before the
/// iteration ends (gradients). Works on offsets only, so a counting run (limit = unbounded) makes
/// exactly the same placements as a real one; peak() is the highest end offset reached.
class OffsetHeap {
 public:
  /// The heap sits at `origin` of a region of `region_size` bytes (for overflow messages, which
  /// speak of the whole region).
  OffsetHeap(Bytes limit, Bytes origin, Bytes region_size) : limit_(limit), origin_(origin), region_size_(region_size) {}
  /// Offset of a new block of `bytes` (rounded to 256); throws ArenaOverflow past the limit.
  Bytes allocate(Bytes bytes);
  void release(Bytes offset);
  Bytes peak() const { return peak_; }

 private:
  Bytes limit_;
  Bytes origin_;
  Bytes region_size_;
  Bytes peak_ = 0;
  std::map<Bytes, Bytes> used_;  // offset -> size
};

/// The one alignment (core/units.h): every region, arena and heap allocation is in whole units of it.
using core::kAlignment;
inline Bytes align_up(Bytes b) { return (b + kAlignment - 1) / kAlignment * kAlignment; }

/// The pool: `capacity` bytes reserved on the device at construction (never more than it has
/// free), released at destruction.
class MemoryPool {
 public:
  /// Throws core::InputError when the device has less than `capacity` free.
  MemoryPool(Device& device, Bytes capacity);
  ~MemoryPool();
  MemoryPool(const MemoryPool&) = delete;
  MemoryPool& operator=(const MemoryPool&) = delete;

  Bytes capacity() const { return capacity_; }
  std::byte* base() const { return base_; }
  /// An arena over [offset, offset + size) of the pool.
  Arena region(Bytes offset, Bytes size) const;

 private:
  Device& device_;
  Bytes capacity_;
  std::byte* base_;
};

}  // namespace salus::gpu
