// After reserve(), building, allocating and computing a llama block graph of any
// batch size and context length up to the reserved ones touches no heap memory,
// also with a sliding window and soft-capped attention scores.
// This binary replaces the global operator new / delete to count allocations.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include "core_test_support.h"
#include "llama_block.h"

namespace {

std::atomic<bool> g_counting{false};
int* volatile g_probe = nullptr;  // volatile: the probe allocation cannot be elided
std::atomic<long> g_allocations{0};

void* counted_allocation(std::size_t size, std::size_t alignment) {
  if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1);
  if (size == 0) size = 1;
  void* p = alignment <= alignof(std::max_align_t)
                ? std::malloc(size)
                : std::aligned_alloc(alignment, (size + alignment - 1) / alignment * alignment);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

}  // namespace

void* operator new(std::size_t size) { return counted_allocation(size, 0); }
void* operator new[](std::size_t size) { return counted_allocation(size, 0); }
void* operator new(std::size_t size, std::align_val_t a) { return counted_allocation(size, static_cast<std::size_t>(a)); }
void* operator new[](std::size_t size, std::align_val_t a) { return counted_allocation(size, static_cast<std::size_t>(a)); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

namespace peak::core::testing {
namespace {

TEST(CoreNoAlloc, CountingHookSeesAllocations) {
  g_allocations = 0;
  g_counting = true;
  g_probe = new int(7);
  g_counting = false;
  delete g_probe;
  EXPECT_EQ(g_allocations.load(), 1);
}

TEST(CoreNoAlloc, LlamaBlockAfterReserveAllocatesNothing) {
  LlamaShape windowed;
  windowed.window = 16;
  windowed.softcap = 50.0f;
  for (const LlamaShape& shape : {LlamaShape{}, windowed}) {
    Leaves leaves;
    LlamaBlock block(leaves, shape);
    // Workers that sleep at once between graphs, so waking them is counted too.
    ThreadPool pool(kMaxTestThreads, std::chrono::microseconds(0));
    Graph g(512);
    GraphAllocator allocator;
    const int64_t n_batch = 32;
    block.build(g, n_batch, shape.n_ctx - n_batch);  // worst case: full batch, full context
    allocator.reserve(g, kMaxTestThreads);

    struct Step {
      int64_t n_tokens, n_past;
    };
    const Step steps[] = {{32, 0}, {1, 32}, {1, 33}, {7, 34}, {1, 41}, {32, 32}};
    g_allocations = 0;
    g_counting = true;
    for (int n_threads = 1; n_threads <= kMaxTestThreads; ++n_threads) {
      for (const Step& step : steps) {
        g.reset();
        block.build(g, step.n_tokens, step.n_past);
        allocator.allocate(g);
        LlamaBlock::fill_inputs(g, step.n_past);
        compute_graph(g, pool, n_threads, allocator.work_buffer());
      }
    }
    g_counting = false;
    EXPECT_EQ(g_allocations.load(), 0) << "window " << shape.window;
  }
}

}  // namespace
}  // namespace peak::core::testing
