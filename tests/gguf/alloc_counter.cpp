#include "alloc_counter.h"

#include <atomic>
#include <cstdlib>
#include <new>

namespace {
std::atomic<bool> g_counting{false};
std::atomic<size_t> g_bytes{0};
std::atomic<size_t> g_largest{0};

void* counted_alloc(size_t n) {
  if (g_counting.load(std::memory_order_relaxed)) {
    g_bytes.fetch_add(n, std::memory_order_relaxed);
    size_t prev = g_largest.load(std::memory_order_relaxed);
    while (n > prev && !g_largest.compare_exchange_weak(prev, n)) {
    }
  }
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
}  // namespace

void* operator new(size_t n) { return counted_alloc(n); }
void* operator new[](size_t n) { return counted_alloc(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }

namespace peak::test {

AllocationScope::AllocationScope() {
  g_bytes = 0;
  g_largest = 0;
  g_counting = true;
}

AllocationScope::~AllocationScope() { g_counting = false; }

AllocationStats AllocationScope::stats() const { return {g_bytes.load(), g_largest.load()}; }

}  // namespace peak::test
