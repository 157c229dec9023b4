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

// Computes every node of `graph` with `n_threads` threads (at most both the pool's
// and the work buffer's max_threads). The graph must have been allocated. No heap
// allocation, no locks while the nodes run. With `times`, each node's wall time
// (from its start to the barrier after it) is added to its op's entry.
void compute_graph(const Graph& graph, ThreadPool& pool, int n_threads, const WorkBuffer& work,
                   OpTimes* times = nullptr);

}  // namespace peak::core
