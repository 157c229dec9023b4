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
//
// Best fit is not monotonic: a smaller graph can fragment the buffer differently
// and peak above the worst case (e.g. one token, where small tensors sit below
// the large logits). allocate() then reuses the places of a reserved plan whose
// tensors live exactly as long and are at least as large, which always fits.
#pragma once

#include <cstddef>
#include <climits>
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

  static constexpr int32_t kLivesOn = INT32_MAX;  // outputs are never freed

  // Where one owned tensor (input or intermediate) goes, in placement order:
  // inputs in leaf order, then intermediates in node order. Steps count the
  // nodes that compute (views excluded); inputs are born at step -1.
  struct Placement {
    Op op;
    size_t bytes;
    size_t offset;
    int32_t born;
    int32_t dies;         // step of the last reader, kLivesOn for outputs
    int32_t in_place_of;  // placement whose block this one took over, or -1
    bool handed_on;       // this block was taken over in place
  };

  // Runs the placement over `graph` into placements_ and returns the peak bytes.
  size_t plan(const Graph& graph);
  // placements_ (the graph just planned) fits in the places of `reserved`.
  bool fits_in(const std::vector<Placement>& reserved) const;
  void set_data_pointers(const Graph& graph, const std::vector<Placement>& placements);
  bool owns_memory(const Tensor* t) const;
  size_t take_block(size_t bytes);
  void release_block(size_t offset, size_t bytes);
  void place(const Tensor* t, int32_t step, int32_t in_place_of);
  void give_back(const Tensor* t, int32_t step);

  AlignedBuffer compute_;
  AlignedBuffer work_;
  int max_threads_ = 1;
  size_t naive_bytes_ = 0;
  std::vector<std::vector<Placement>> reserved_plans_;  // one per reserve()

  // Planning state, sized by reserve(); the first two indexed by Tensor::arena_index.
  std::vector<int32_t> pending_uses_;  // consumers not run yet; outputs get one extra
  std::vector<int32_t> placement_of_;  // index in placements_
  std::vector<Placement> placements_;
  std::vector<Block> free_blocks_;  // sorted by offset, never touching the top
  size_t top_ = 0;                  // end of the used part of the buffer
  size_t peak_ = 0;
};

}  // namespace peak::core
