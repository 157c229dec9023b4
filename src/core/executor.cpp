#include "core/executor.h"

#include <stdexcept>

#include "core/ops.h"

namespace peak::core {

namespace {

struct GraphRun {
  const Graph* graph;
  ThreadPool* pool;
  const WorkBuffer* work;
};

void run_nodes(void* context, int thread_index, int n_threads) {
  const auto& run = *static_cast<const GraphRun*>(context);
  const ComputeParams params{thread_index, n_threads, run.work->data, run.work->size, run.pool};
  const std::vector<Tensor*>& nodes = run.graph->nodes();
  bool pending_barrier = false;
  for (Tensor* node : nodes) {
    if (node->op == Op::View) continue;  // shares its source's memory: nothing to do
    if (pending_barrier) params.barrier();
    compute_op(params, *node);
    pending_barrier = true;
  }
}

}  // namespace

void compute_graph(const Graph& graph, ThreadPool& pool, int n_threads, const WorkBuffer& work) {
  if (n_threads < 1 || n_threads > pool.max_threads() || n_threads > work.max_threads) {
    throw std::invalid_argument("compute_graph: n_threads exceeds the pool or the work buffer");
  }
  GraphRun run{&graph, &pool, &work};
  pool.run(n_threads, run_nodes, &run);
}

}  // namespace peak::core
