// Runs an allocated graph on the thread pool: every thread walks the node list,
// computes its share of each node (rows or blocks), and waits at a barrier before
// the next node, since nodes depend on the results of earlier ones.
#pragma once

#include "core/graph.h"
#include "core/graph_allocator.h"
#include "core/thread_pool.h"

namespace peak::core {

// Computes every node of `graph` with `n_threads` threads (at most both the pool's
// and the work buffer's max_threads). The graph must have been allocated. No heap
// allocation, no locks while the nodes run.
void compute_graph(const Graph& graph, ThreadPool& pool, int n_threads, const WorkBuffer& work);

}  // namespace peak::core
