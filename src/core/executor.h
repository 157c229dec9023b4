// Runs an allocated graph on the thread pool: every thread walks the node list,
// computes its share of each node (rows or blocks), and waits at a barrier before
// the next node, since nodes depend on the results of earlier ones. Small cheap
// element-wise nodes run on thread 0 alone, with no barrier between consecutive
// ones (see runs_solo in executor.cpp).
#pragma once

#include "core/graph.h"
#include "core/graph_allocator.h"
#include "core/thread_pool.h"

namespace peak::core {

// Wall time spent per op type, for profiling. Indexed by static_cast<int>(Op).
struct OpTimes {
  double seconds[kOpCount] = {};
  uint64_t calls[kOpCount] = {};
};

// A request to stop a computation early, polled where stopping is cheap: by
// thread 0 before each barrier between nodes (every few microseconds to
// milliseconds of work) and between the batches of a prompt. `poll` reads
// whatever another thread sets (an atomic flag) and must be cheap.
class Cancellation {
 public:
  using Poll = bool (*)(const void* state);
  Cancellation(Poll poll, const void* state) : poll_(poll), state_(state) {}
  bool requested() const { return poll_(state_); }

 private:
  Poll poll_;
  const void* state_;
};

// Computes every node of `graph` with `n_threads` threads (at most both the pool's
// and the work buffer's max_threads). The graph must have been allocated. No heap
// allocation, no locks while the nodes run. With `times`, each node's wall time
// (from its start to the barrier after it) is added to its op's entry. With
// `cancel`, returns false when it was requested before the last barrier: every
// thread then stops there, and the nodes after it are not computed (the
// graph's outputs and whatever it writes, a KV cache's cells, are then partly
// written). Returns true when every node was computed.
bool compute_graph(const Graph& graph, ThreadPool& pool, int n_threads, const WorkBuffer& work,
                   OpTimes* times = nullptr, const Cancellation* cancel = nullptr);

}  // namespace peak::core
