#pragma once
/// Advice to the kernel for large buffers that are about to be written whole.
#include <cstddef>

namespace salus::core {

/// Asks the kernel to back the whole 2 MiB pages inside [data, data + bytes) with transparent
/// huge pages (Linux madvise MADV_HUGEPAGE; nothing elsewhere, and nothing when the kernel's THP
/// mode is "never"). A 200k-job trace's text and jobs are ~40 MB, which 4 KiB page faults made a
/// fifth of salus-sim's time; the loop's job states are ~27 MB more.
void advise_huge_pages(const void* data, std::size_t bytes);

}  // namespace salus::core
