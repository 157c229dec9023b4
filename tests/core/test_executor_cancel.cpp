// A graph's computation stops where its cancellation is requested: thread 0
// polls before each barrier between nodes, every thread stops after the same
// barrier (no thread waits forever at a later one), nothing more is polled or
// computed, and a cancellation never requested changes nothing.
#include <gtest/gtest.h>

#include <vector>

#include "core/executor.h"
#include "core_test_support.h"
#include "llama_block.h"

namespace peak::core::testing {
namespace {

// Says "stop" at the `stop_at`-th poll (1-based), counting every poll.
struct CountingPoll {
  int stop_at;
  int polls = 0;
  static bool poll(const void* self) {
    auto* p = const_cast<CountingPoll*>(static_cast<const CountingPoll*>(self));
    return ++p->polls >= p->stop_at;
  }
};

uint64_t computed_nodes(const OpTimes& times) {
  uint64_t n = 0;
  for (const uint64_t calls : times.calls) n += calls;
  return n;
}

std::vector<float> outputs(const Tensor* out) {
  const auto* values = static_cast<const float*>(out->data);
  return std::vector<float>(values, values + out->element_count());
}

// The k-th poll stops the run after the nodes up to its barrier: at least k
// (one poll per barrier, at most one barrier per node), more for a larger k,
// fewer than the whole graph, and the same ones at every thread count (every
// thread takes the same barriers).
TEST(CoreExecutorCancel, StopsAfterTheNodesBeforeTheBarrierThatSawTheRequest) {
  Leaves leaves;
  LlamaBlock block(leaves, LlamaShape{});
  Graph g(512);
  block.build(g, 4, 3);
  GraphAllocator allocator;
  allocator.reserve(g, kMaxTestThreads);
  LlamaBlock::fill_inputs(g, 3);
  OpTimes all;
  ASSERT_TRUE(compute_graph(g, test_pool(), 1, allocator.work_buffer(), &all));
  const std::vector<int> stops = {1, 2, 5, 11};
  std::vector<uint64_t> computed_at_one_thread;
  for (int n_threads = 1; n_threads <= kMaxTestThreads; ++n_threads) {
    uint64_t previous = 0;
    for (size_t i = 0; i < stops.size(); ++i) {
      LlamaBlock::fill_inputs(g, 3);
      CountingPoll poll{stops[i]};
      const Cancellation cancel(CountingPoll::poll, &poll);
      OpTimes times;
      EXPECT_FALSE(compute_graph(g, test_pool(), n_threads, allocator.work_buffer(), &times, &cancel));
      EXPECT_EQ(poll.polls, stops[i]) << n_threads << " threads";
      const uint64_t computed = computed_nodes(times);
      EXPECT_GE(computed, static_cast<uint64_t>(stops[i]));
      EXPECT_GT(computed, previous);
      EXPECT_LT(computed, computed_nodes(all));
      if (n_threads == 1) computed_at_one_thread.push_back(computed);
      EXPECT_EQ(computed, computed_at_one_thread[i]) << n_threads << " threads, stop at poll " << stops[i];
      previous = computed;
    }
  }
}

// Without profiling consecutive solo nodes and matmuls that share an input
// share a barrier; every thread still stops at the same one (the run returns
// at all), and the next run on the same pool computes normally.
TEST(CoreExecutorCancel, EveryThreadStopsAtTheSameBarrierAndThePoolGoesOn) {
  Leaves leaves;
  LlamaBlock block(leaves, LlamaShape{});
  for (int64_t n_tokens : {1, 6}) {
    Graph g(512);
    const Tensor* out = block.build(g, n_tokens, 3);
    GraphAllocator allocator;
    allocator.reserve(g, kMaxTestThreads);
    LlamaBlock::fill_inputs(g, 3);
    ASSERT_TRUE(compute_graph(g, test_pool(), 1, allocator.work_buffer()));
    const std::vector<float> expected = outputs(out);
    for (int n_threads = 1; n_threads <= kMaxTestThreads; ++n_threads) {
      for (int stop_at = 1; stop_at <= 8; ++stop_at) {
        LlamaBlock::fill_inputs(g, 3);
        CountingPoll poll{stop_at};
        const Cancellation cancel(CountingPoll::poll, &poll);
        EXPECT_FALSE(compute_graph(g, test_pool(), n_threads, allocator.work_buffer(), nullptr, &cancel));
        EXPECT_EQ(poll.polls, stop_at);
      }
      // A cancellation polled but never requested: the whole graph, the same result.
      LlamaBlock::fill_inputs(g, 3);
      CountingPoll never{1 << 30};
      const Cancellation cancel(CountingPoll::poll, &never);
      EXPECT_TRUE(compute_graph(g, test_pool(), n_threads, allocator.work_buffer(), nullptr, &cancel));
      EXPECT_GT(never.polls, 0);
      EXPECT_EQ(outputs(out), expected) << n_tokens << " tokens, " << n_threads << " threads";
    }
  }
}

}  // namespace
}  // namespace peak::core::testing
