#include "alloc_counter.h"

#include <atomic>
#include <cstdlib>
#include <new>

namespace {
std::atomic<bool> g_counting{false};
std::atomic<size_t> g_bytes{0};
std::atomic<size_t> g_largest{0};

// alignment 0: malloc's own.
void* counted_alloc(size_t n, size_t alignment = 0) {
  if (g_counting.load(std::memory_order_relaxed)) {
    g_bytes.fetch_add(n, std::memory_order_relaxed);
    size_t prev = g_largest.load(std::memory_order_relaxed);
    while (n > prev && !g_largest.compare_exchange_weak(prev, n)) {
    }
  }
  if (n == 0) n = 1;
  void* p = alignment == 0 ? std::malloc(n) : std::aligned_alloc(alignment, (n + alignment - 1) / alignment * alignment);
  if (p) return p;
  throw std::bad_alloc();
}
}  // namespace

void* operator new(size_t n) { return counted_alloc(n); }
void* operator new[](size_t n) { return counted_alloc(n); }
void* operator new(size_t n, std::align_val_t a) { return counted_alloc(n, static_cast<size_t>(a)); }
void* operator new[](size_t n, std::align_val_t a) { return counted_alloc(n, static_cast<size_t>(a)); }
// The nothrow forms too (std::stable_sort's buffer uses them): every new this
// program makes must pair with the deletes below, or a sanitizer sees malloc
// memory from its own operator new freed here.
void* operator new(size_t n, const std::nothrow_t&) noexcept {
  try {
    return counted_alloc(n);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void* operator new[](size_t n, const std::nothrow_t& tag) noexcept { return operator new(n, tag); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { std::free(p); }

namespace peak::test {

AllocationScope::AllocationScope() {
  g_bytes = 0;
  g_largest = 0;
  g_counting = true;
}

AllocationScope::~AllocationScope() { g_counting = false; }

AllocationStats AllocationScope::stats() const { return {g_bytes.load(), g_largest.load()}; }

}  // namespace peak::test
