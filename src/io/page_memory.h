// Large buffers taken from the system in whole pages (an anonymous mapping on
// POSIX; aligned heap memory elsewhere) that can be mapped in ahead of their
// first write: populate() takes one call for a range where writing it would
// take a page fault per 4 KiB page. Repacking 550 MB of weights spent most of
// its time in those faults.
//
// Pages: 4 KiB ones by default. On the development machine (a VM whose host
// reclaims the guest's free 2 MiB blocks) transparent huge pages came from
// reclaimed memory and took 2.2 s to fill 550 MB of weights, against 0.35 s
// in 4 KiB pages. Memory that every decode step reads end to end, the KV
// cache, asks for huge pages (Pages::Huge, MADV_HUGEPAGE on Linux): in 4 KiB
// pages each 4 KiB of its K and V streams cost a TLB miss and a fresh start
// of the hardware prefetcher, and decode at depth ran measurably slower.
#pragma once

#include <cstddef>
#include <cstdint>

namespace peak::io {

class PageMemory {
 public:
  enum class Pages { Small, Huge };

  // Throws std::bad_alloc when the system has no room. Huge: transparent huge
  // pages where the system has them (a hint; 4 KiB pages otherwise).
  explicit PageMemory(size_t bytes, Pages pages = Pages::Small);
  ~PageMemory();
  PageMemory(const PageMemory&) = delete;
  PageMemory& operator=(const PageMemory&) = delete;

  // Aligned to at least 64 bytes.
  uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

  // Maps the pages of [offset, offset + length) in before they are written
  // (MADV_POPULATE_WRITE, Linux 5.14 on); a no-op where the system cannot.
  // Threads may populate ranges that share a page.
  void populate(size_t offset, size_t length) const;

 private:
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
  size_t mapped_ = 0;  // bytes of the mapping (whole pages); 0 for heap memory
};

}  // namespace peak::io
