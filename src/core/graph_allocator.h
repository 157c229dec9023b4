// The graph allocator: "allocate first, compute later".
//
// reserve() plans a worst-case graph (largest batch, full context) once and
// allocates one compute buffer of the planned size plus one work buffer (scratch
// for ops, e.g. activations converted to a weight type's dot partner). allocate()
// then places the inputs and intermediates of each later graph in that buffer
// without touching the heap.
//
// Placement follows liveness: walking the nodes in execution order, a tensor gets
// the best-fitting free block when it is produced and gives the block back after
// its last consumer ran. Element-wise ops write in place over their first source
// when that source dies at this node, has the same size and is dense.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/graph.h"

namespace peak::core {

// A 64-byte aligned heap buffer, allocated once.
class AlignedBuffer {
 public:
  static constexpr size_t kAlignment = 64;
  void resize(size_t bytes);  // discards the contents
  void* data() const { return data_.get(); }
  size_t size() const { return size_; }

 private:
  struct Free {
    void operator()(void* p) const;
  };
  std::unique_ptr<void, Free> data_;
  size_t size_ = 0;
};

struct WorkBuffer {
  void* data = nullptr;
  size_t size = 0;
  int max_threads = 1;  // the buffer holds per-thread scratch for this many threads
};

class GraphAllocator {
 public:
  // Plans `worst_case` and allocates the compute buffer (the plan's peak) and the
  // work buffer (the largest scratch any node needs with `max_threads` threads).
  // May be called once per kind of graph (e.g. decode and KV-cache shift): the
  // buffers grow to fit every reserved worst case, so earlier allocations are
  // void and each graph must be allocate()d again before it runs.
  void reserve(const Graph& worst_case, int max_threads);

  // Sets the data pointer of every input, intermediate and view of `graph`. No heap
  // allocation. Throws std::length_error when the graph needs more memory than the
  // reserved worst case.
  void allocate(const Graph& graph);

  size_t planned_bytes() const { return compute_.size(); }  // the largest worst-case peak
  size_t naive_bytes() const { return naive_bytes_; }  // the largest sum of one block per tensor
  WorkBuffer work_buffer() const { return {work_.data(), work_.size(), max_threads_}; }

 private:
  struct Block {
    size_t offset;
    size_t size;
  };

  // Runs the placement over `graph`; with `assign` also sets the data pointers
  // (into the compute buffer). Returns the peak bytes.
  size_t plan(const Graph& graph, bool assign);
  bool owns_memory(const Tensor* t) const;
  size_t take_block(size_t bytes);
  void release_block(size_t offset, size_t bytes);
  void place(Tensor* t, bool assign);
  void give_back(const Tensor* t);

  AlignedBuffer compute_;
  AlignedBuffer work_;
  int max_threads_ = 1;
  size_t naive_bytes_ = 0;

  // Planning state, sized once by reserve() and indexed by Tensor::arena_index.
  std::vector<int32_t> pending_uses_;  // consumers not run yet; outputs get one extra
  std::vector<size_t> offsets_;
  std::vector<uint8_t> handed_on_;  // memory passed to an in-place consumer
  std::vector<Block> free_blocks_;  // sorted by offset, never touching the top
  size_t top_ = 0;                  // end of the used part of the buffer
  size_t peak_ = 0;
};

}  // namespace peak::core
