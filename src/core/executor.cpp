#include "core/executor.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <stdexcept>

#include "core/ops.h"

namespace peak::core {

namespace {

constexpr uint32_t kNoStop = UINT32_MAX;

struct GraphRun {
  const Graph* graph;
  ThreadPool* pool;
  const WorkBuffer* work;
  OpTimes* times;  // null unless profiling
  const Cancellation* cancel;  // null: compute every node
  // The barrier (counted from 0) after which every thread stops. Thread 0 sets
  // it before arriving at that barrier, when it finds the cancellation
  // requested; a thread reads it only right after a barrier, so all of them
  // see the same value at the same barrier (one still before that barrier may
  // already read a later index, which does not stop it).
  std::atomic<uint32_t> stop_after{kNoStop};
};

// Thread 0's clock for profiling: a node's time runs from its start to the
// barrier after it, when every thread has finished its share.
class NodeClock {
 public:
  explicit NodeClock(OpTimes* times) : times_(times) {}
  void start(Op op) {
    op_ = op;
    start_ = std::chrono::steady_clock::now();
  }
  void stop() {
    const auto i = static_cast<int>(op_);
    times_->seconds[i] += std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    times_->calls[i] += 1;
  }

 private:
  OpTimes* times_;
  Op op_ = Op::None;
  std::chrono::steady_clock::time_point start_;
};

// Cheap element-wise nodes this small (one token's norms, rope, residual adds
// and cache writes during decode) run on thread 0 alone: splitting them saves
// less than the barrier costs, and a run of such nodes then needs no barrier
// between its members, only one after the run. Ops with exp/tanh and the
// matrix ops (which synchronise inside) are always split.
constexpr int64_t kSoloElements = 4096;

bool runs_solo(const Tensor& node) {
  switch (node.op) {
    case Op::GetRows: case Op::Add: case Op::Scale: case Op::RmsNorm: case Op::Rope: case Op::Copy:
      return node.element_count() <= kSoloElements;
    default:
      return false;
  }
}

// Decode matmuls that read the same activations (q, k and v; gate and up) do not
// need each other's results, so threads may run them back to back and meet only
// before a node that does: one barrier instead of three. A node may join the
// nodes started since the last barrier when all of them are matmuls whose
// scratch is per thread and no memory one writes is memory another reads or
// writes (the graph allocator reuses buffers, so addresses are compared, not
// tensors). Every thread takes the same decisions from the same graph.
constexpr int kMaxUnsyncedNodes = 4;

struct ByteRange {
  const char* begin;
  const char* end;
  bool overlaps(const ByteRange& other) const { return begin < other.end && other.begin < end; }
};

ByteRange bytes_of(const Tensor& t) {
  const char* begin = static_cast<const char*>(t.data);
  return {begin, begin + t.byte_size()};
}

bool writes_into_reads_of(const Tensor& writer, const Tensor& reader) {
  const ByteRange written = bytes_of(writer);
  if (written.overlaps(bytes_of(reader))) return true;
  for (const Tensor* src : reader.src) {
    if (src != nullptr && written.overlaps(bytes_of(*src))) return true;
  }
  return false;
}

class UnsyncedNodes {
 public:
  bool may_join(const Tensor& node) const {
    if (count_ == 0 || count_ == kMaxUnsyncedNodes || !runs_without_shared_scratch(node)) return false;
    for (int i = 0; i < count_; ++i) {
      if (!runs_without_shared_scratch(*nodes_[i])) return false;
      if (writes_into_reads_of(*nodes_[i], node) || writes_into_reads_of(node, *nodes_[i])) return false;
    }
    return true;
  }
  void add(const Tensor* node) { nodes_[count_++] = node; }
  void clear() { count_ = 0; }

 private:
  static bool runs_without_shared_scratch(const Tensor& node) {
    return node.op == Op::MulMat && converts_privately(node);
  }
  const Tensor* nodes_[kMaxUnsyncedNodes] = {};
  int count_ = 0;
};

void run_nodes(void* context, int thread_index, int n_threads) {
  auto& run = *static_cast<GraphRun*>(context);
  const ComputeParams params{thread_index, n_threads, run.work->data, run.work->size, run.pool};
  const ComputeParams solo_params{0, 1, run.work->data, run.work->size, run.pool};
  const std::vector<Tensor*>& nodes = run.graph->nodes();
  const bool timing = run.times && thread_index == 0;
  NodeClock clock(run.times);
  bool pending_barrier = false;
  bool previous_solo = false;
  uint32_t barriers = 0;  // passed so far, the same count on every thread
  UnsyncedNodes unsynced;  // since the last barrier; profiling keeps one barrier per node
  for (Tensor* node : nodes) {
    if (node->op == Op::View) continue;  // shares its source's memory: nothing to do
    const bool solo = runs_solo(*node);
    // may_join is false for the first node (nothing started) and after a solo node.
    if (run.times || !unsynced.may_join(*node)) {
      if (pending_barrier) {
        // Thread 0 ran the previous solo node itself: nothing to wait for.
        if (!(solo && previous_solo)) {
          if (run.cancel && thread_index == 0 && run.cancel->requested()) {
            run.stop_after.store(barriers, std::memory_order_relaxed);
          }
          params.barrier();
          if (run.cancel && run.stop_after.load(std::memory_order_relaxed) <= barriers) {
            if (timing) clock.stop();
            return;
          }
          ++barriers;
        }
        if (timing) clock.stop();
      }
      unsynced.clear();
    }
    unsynced.add(node);
    if (!solo || thread_index == 0) {
      if (timing) clock.start(node->op);
      compute_op(solo ? solo_params : params, *node);
    }
    pending_barrier = true;
    previous_solo = solo;
  }
  if (run.times && pending_barrier) {  // the last node's end, only needed when timing
    params.barrier();
    if (timing) clock.stop();
  }
}

}  // namespace

bool compute_graph(const Graph& graph, ThreadPool& pool, int n_threads, const WorkBuffer& work, OpTimes* times,
                   const Cancellation* cancel) {
  if (n_threads < 1 || n_threads > pool.max_threads() || n_threads > work.max_threads) {
    throw std::invalid_argument("compute_graph: n_threads exceeds the pool or the work buffer");
  }
  GraphRun run{&graph, &pool, &work, times, cancel};
  pool.run(n_threads, run_nodes, &run);
  return run.stop_after.load(std::memory_order_relaxed) == kNoStop;
}

}  // namespace peak::core
