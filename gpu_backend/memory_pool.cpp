#include "gpu_backend/memory_pool.h"

#include <algorithm>
#include <cstdio>

#include "core/errors.h"

namespace salus::gpu {

ArenaOverflow::ArenaOverflow(Bytes req, Bytes u, Bytes s)
    : std::runtime_error("ephemeral memory overflow: needs " + core::format_size(u + req) + " but its region holds " +
                         core::format_size(s)),
      requested(req),
      used(u),
      size(s) {}

void* Arena::allocate(Bytes bytes) {
  const Bytes n = align_up(bytes);
  if (gate_ != nullptr) gate_->before_allocation(n);
  if (used_ + n > size_ && !counting()) throw ArenaOverflow(n, used_, size_);
  void* p = counting() ? nullptr : static_cast<void*>(base_ + used_);
  used_ += n;
  if (used_ > peak_) peak_ = used_;
  return p;
}

Bytes OffsetHeap::allocate(Bytes bytes) {
  const Bytes n = align_up(bytes);
  Bytes start = 0;
  for (const auto& [off, len] : used_) {
    if (off - start >= n) break;
    start = off + len;
  }
  if (start + n > limit_) throw ArenaOverflow(n, origin_ + start, region_size_);
  used_.emplace(start, n);
  peak_ = std::max(peak_, start + n);
  return start;
}

void OffsetHeap::release(Bytes offset) {
  const auto it = used_.find(offset);
  SALUS_INVARIANT(it != used_.end(), "released block was allocated", std::to_string(offset));
  used_.erase(it);
}

MemoryPool::MemoryPool(Device& device, Bytes capacity) : device_(device), capacity_(capacity), base_(nullptr) {
  const Bytes free = device.free_memory();
  if (capacity > free) {
    throw core::InputError("--gpu-mem: " + core::format_size(capacity) + " is more than " + device.name() +
                           " has free (" + core::format_size(free) + ")");
  }
  base_ = static_cast<std::byte*>(device.allocate(capacity));
}

MemoryPool::~MemoryPool() {
  // A destructor must not throw: after a device fault the release can fail too; say so and go on.
  try {
    device_.deallocate(base_);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "memory pool: %s\n", e.what());
  }
}

Arena MemoryPool::region(Bytes offset, Bytes size) const {
  SALUS_INVARIANT(offset >= 0 && size >= 0 && offset + size <= capacity_, "region inside the pool",
                  std::to_string(offset) + "+" + std::to_string(size));
  SALUS_INVARIANT(offset % kAlignment == 0, "a region starts on a 256-byte boundary (CUDA faults on misaligned data)",
                  std::to_string(offset) + "+" + std::to_string(size));
  return Arena(base_ + offset, size);
}

}  // namespace salus::gpu
