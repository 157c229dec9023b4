#include "io/page_memory.h"

#include <algorithm>
#include <cstdint>
#include <new>

#include "io/have_mmap.h"

namespace peak::io {
namespace {

#if PEAK_HAVE_MMAP
size_t page_size() { return static_cast<size_t>(::sysconf(_SC_PAGESIZE)); }
#else
constexpr size_t kHeapAlignment = 64;
#endif

}  // namespace

PageMemory::PageMemory(size_t bytes, Pages pages) : size_(bytes) {
  if (bytes == 0) return;
#if PEAK_HAVE_MMAP
  const size_t page = page_size();
  if (bytes > SIZE_MAX - page) throw std::bad_alloc();
  mapped_ = (bytes + page - 1) / page * page;
  void* addr = ::mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (addr == MAP_FAILED) throw std::bad_alloc();
  data_ = static_cast<uint8_t*>(addr);
#if defined(MADV_HUGEPAGE)
  if (pages == Pages::Huge) ::madvise(addr, mapped_, MADV_HUGEPAGE);  // a hint: 4 KiB pages if refused
#endif
#else
  data_ = static_cast<uint8_t*>(::operator new(bytes, std::align_val_t{kHeapAlignment}));
#endif
  (void)pages;
}

PageMemory::~PageMemory() {
  if (data_ == nullptr) return;
#if PEAK_HAVE_MMAP
  ::munmap(data_, mapped_);
#else
  ::operator delete(data_, std::align_val_t{kHeapAlignment});
#endif
}

void PageMemory::populate(size_t offset, size_t length) const {
#if PEAK_HAVE_MMAP && defined(MADV_POPULATE_WRITE)
  if (offset >= mapped_ || length == 0) return;
  const size_t page = page_size();
  const size_t start = offset / page * page;
  const size_t end = std::min(mapped_, (offset + length + page - 1) / page * page);
  // Fails with EINVAL before Linux 5.14: the writes then fault the pages in.
  ::madvise(data_ + start, end - start, MADV_POPULATE_WRITE);
#else
  (void)offset;
  (void)length;
#endif
}

}  // namespace peak::io
