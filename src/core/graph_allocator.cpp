#include "core/graph_allocator.h"

#include <algorithm>
#include <new>
#include <stdexcept>

#include "core/ops.h"

namespace peak::core {

namespace {

constexpr size_t kMaxFreeBlocks = 1024;

size_t aligned_size(const Tensor* t) {
  const size_t a = AlignedBuffer::kAlignment;
  return (t->byte_size() + a - 1) / a * a;
}

const Tensor* memory_root(const Tensor* t) { return t->view_src != nullptr ? t->view_src : t; }

bool runs_in_place_safely(Op op) {
  switch (op) {
    case Op::Add:
    case Op::Scale:
    case Op::RmsNorm:
    case Op::LayerNorm:
    case Op::Rope:
    case Op::SwiGlu:
    case Op::GeGlu:
    case Op::Gelu:
    case Op::Softcap: return true;
    default:
      return false;
  }
}

}  // namespace

// ---- AlignedBuffer -------------------------------------------------------------

void AlignedBuffer::Free::operator()(void* p) const {
  ::operator delete(p, std::align_val_t(kAlignment));
}

void AlignedBuffer::resize(size_t bytes) {
  data_.reset();
  size_ = 0;
  if (bytes == 0) return;
  data_.reset(::operator new(bytes, std::align_val_t(kAlignment)));
  size_ = bytes;
}

// ---- GraphAllocator ------------------------------------------------------------

void GraphAllocator::reserve(const Graph& worst_case, int max_threads) {
  if (max_threads < 1) throw std::invalid_argument("reserve: max_threads must be at least 1");
  const size_t capacity = std::max(pending_uses_.size(), worst_case.arena_capacity());
  pending_uses_.resize(capacity);
  placement_of_.resize(capacity);
  placements_.reserve(capacity);
  free_blocks_.reserve(kMaxFreeBlocks);
  max_threads_ = std::max(max_threads_, max_threads);

  size_t naive = 0;
  size_t work_bytes = 0;
  for (const Tensor* leaf : worst_case.leafs()) {
    if (owns_memory(leaf)) naive += aligned_size(leaf);
  }
  for (const Tensor* node : worst_case.nodes()) {
    if (owns_memory(node)) naive += aligned_size(node);
    work_bytes = std::max(work_bytes, op_work_size(*node, max_threads_));
  }
  naive_bytes_ = std::max(naive_bytes_, naive);
  const size_t compute_bytes = plan(worst_case);
  if (compute_bytes > compute_.size()) compute_.resize(compute_bytes);
  if (work_bytes > work_.size()) work_.resize(work_bytes);
  reserved_plans_.push_back(placements_);
  allocate(worst_case);
}

void GraphAllocator::allocate(const Graph& graph) {
  if (graph.arena_capacity() > pending_uses_.size()) {
    throw std::length_error("allocate: graph is larger than the reserved one");
  }
  for (const Tensor* node : graph.nodes()) {
    if (op_work_size(*node, max_threads_) > work_.size()) {
      throw std::length_error("allocate: a node needs more work memory than reserved");
    }
  }
  if (plan(graph) <= compute_.size()) {
    set_data_pointers(graph, placements_);
    return;
  }
  // Best fit on smaller tensors can fragment differently and peak higher than the
  // worst case did. A graph whose tensors live exactly as long as a reserved
  // one's and are no larger fits in that plan's places.
  for (const std::vector<Placement>& reserved : reserved_plans_) {
    if (fits_in(reserved)) {
      set_data_pointers(graph, reserved);
      return;
    }
  }
  throw std::length_error("allocate: graph needs more compute memory than reserved");
}

bool GraphAllocator::owns_memory(const Tensor* t) const {
  return t->arena_index >= 0 && t->view_src == nullptr && (t->op != Op::None || t->is_input);
}

bool GraphAllocator::fits_in(const std::vector<Placement>& reserved) const {
  if (reserved.size() != placements_.size()) return false;
  for (size_t i = 0; i < reserved.size(); ++i) {
    const Placement& mine = placements_[i];
    const Placement& theirs = reserved[i];
    const bool same_life = mine.op == theirs.op && mine.born == theirs.born && mine.dies == theirs.dies;
    // A block the reserved plan shares in place must be shareable here too.
    const bool sharing_holds = theirs.in_place_of < 0 || mine.in_place_of == theirs.in_place_of;
    if (!same_life || mine.bytes > theirs.bytes || !sharing_holds) return false;
  }
  return true;
}

void GraphAllocator::set_data_pointers(const Graph& graph, const std::vector<Placement>& placements) {
  char* base = static_cast<char*>(compute_.data());
  size_t next = 0;
  for (Tensor* leaf : graph.leafs()) {
    if (owns_memory(leaf)) leaf->data = base + placements[next++].offset;
  }
  for (Tensor* node : graph.nodes()) {
    if (owns_memory(node)) {
      node->data = base + placements[next++].offset;
    } else if (node->view_src != nullptr) {
      // A view of a descriptor without memory (a plan of shapes alone) has none either.
      char* owner = static_cast<char*>(node->view_src->data);
      node->data = owner != nullptr ? owner + node->view_offset : nullptr;
    }
  }
}

size_t GraphAllocator::plan(const Graph& graph) {
  free_blocks_.clear();
  placements_.clear();
  top_ = 0;
  peak_ = 0;

  // Count the consumers of each owned memory block; views count against their root.
  for (const Tensor* node : graph.nodes()) pending_uses_[static_cast<size_t>(node->arena_index)] = 0;
  for (const Tensor* leaf : graph.leafs()) {
    if (leaf->arena_index >= 0) pending_uses_[static_cast<size_t>(leaf->arena_index)] = 0;
  }
  for (const Tensor* node : graph.nodes()) {
    if (node->is_output) {
      const Tensor* root = memory_root(node);
      if (owns_memory(root)) ++pending_uses_[static_cast<size_t>(root->arena_index)];
    }
    if (node->op == Op::View) continue;
    for (Tensor* source : node->src) {
      if (source == nullptr) continue;
      const Tensor* root = memory_root(source);
      if (owns_memory(root)) ++pending_uses_[static_cast<size_t>(root->arena_index)];
    }
  }

  // Inputs first (step -1): the caller fills them before compute starts.
  int32_t step = -1;
  for (const Tensor* leaf : graph.leafs()) {
    if (owns_memory(leaf)) place(leaf, step, -1);
  }

  for (const Tensor* node : graph.nodes()) {
    if (node->op == Op::View) continue;  // no compute, no memory of its own
    ++step;
    if (owns_memory(node)) {
      // In place over the first source (or the memory under it, when the source
      // is a reshape-like view of all of it): element i of the result then sits
      // where element i of the source was, and this node is its last reader.
      const Tensor* source = node->src[0];
      const Tensor* reused = source != nullptr ? memory_root(source) : nullptr;
      const bool in_place =
          runs_in_place_safely(node->op) && reused != nullptr && owns_memory(reused) &&
          !reused->is_input && pending_uses_[static_cast<size_t>(reused->arena_index)] == 1 &&
          source->type == node->type && source->view_offset == 0 && source->is_contiguous() &&
          aligned_size(reused) == aligned_size(node) && aligned_size(source) == aligned_size(node);
      place(node, step, in_place ? placement_of_[static_cast<size_t>(reused->arena_index)] : -1);
    }

    for (Tensor* source : node->src) {
      if (source == nullptr) continue;
      const Tensor* root = memory_root(source);
      if (!owns_memory(root)) continue;
      if (--pending_uses_[static_cast<size_t>(root->arena_index)] == 0) give_back(root, step);
    }
    if (owns_memory(node) && pending_uses_[static_cast<size_t>(node->arena_index)] == 0) {
      give_back(node, step);  // a result nobody reads: free right after it is written
    }
  }
  return peak_;
}

void GraphAllocator::place(const Tensor* t, int32_t step, int32_t in_place_of) {
  Placement p{t->op, aligned_size(t), 0, step, kLivesOn, in_place_of, false};
  if (in_place_of >= 0) {
    Placement& source = placements_[static_cast<size_t>(in_place_of)];
    source.handed_on = true;  // its block now belongs to this tensor
    p.offset = source.offset;
  } else {
    p.offset = take_block(p.bytes);
  }
  placement_of_[static_cast<size_t>(t->arena_index)] = static_cast<int32_t>(placements_.size());
  placements_.push_back(p);
}

void GraphAllocator::give_back(const Tensor* t, int32_t step) {
  Placement& p = placements_[static_cast<size_t>(placement_of_[static_cast<size_t>(t->arena_index)])];
  p.dies = step;
  if (!p.handed_on) release_block(p.offset, p.bytes);
}

size_t GraphAllocator::take_block(size_t bytes) {
  size_t best = free_blocks_.size();
  for (size_t b = 0; b < free_blocks_.size(); ++b) {
    const bool fits = free_blocks_[b].size >= bytes;
    if (fits && (best == free_blocks_.size() || free_blocks_[b].size < free_blocks_[best].size)) {
      best = b;
    }
  }
  if (best == free_blocks_.size()) {
    const size_t offset = top_;
    top_ += bytes;
    peak_ = std::max(peak_, top_);
    return offset;
  }
  Block& block = free_blocks_[best];
  const size_t offset = block.offset;
  block.offset += bytes;
  block.size -= bytes;
  if (block.size == 0) free_blocks_.erase(free_blocks_.begin() + static_cast<std::ptrdiff_t>(best));
  return offset;
}

void GraphAllocator::release_block(size_t offset, size_t bytes) {
  if (bytes == 0) return;
  auto next = std::lower_bound(free_blocks_.begin(), free_blocks_.end(), offset,
                               [](const Block& b, size_t o) { return b.offset < o; });
  // Merge with the free neighbours so blocks do not fragment.
  if (next != free_blocks_.begin()) {
    auto previous = next - 1;
    if (previous->offset + previous->size == offset) {
      offset = previous->offset;
      bytes += previous->size;
      next = free_blocks_.erase(previous);
    }
  }
  if (next != free_blocks_.end() && offset + bytes == next->offset) {
    bytes += next->size;
    next = free_blocks_.erase(next);
  }
  if (offset + bytes == top_) {
    top_ = offset;  // the top shrinks instead of keeping a free block at the end
    return;
  }
  if (free_blocks_.size() == kMaxFreeBlocks) throw std::length_error("allocate: too fragmented");
  free_blocks_.insert(next, Block{offset, bytes});
}

}  // namespace peak::core
