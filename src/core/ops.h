// The CPU implementations of the graph ops (internal to the core). Every op
// computes the share of its node that belongs to one thread; ops with two phases
// (convert, then multiply) meet at params.barrier() in between. Activations are
// F32; weights of any type go through the kernels interface (kernels/kernels.h).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "core/tensor.h"
#include "core/thread_pool.h"

namespace peak::core {

struct ComputeParams {
  int thread_index;
  int n_threads;
  void* work;  // scratch shared by all threads of the node, see op_work_size
  size_t work_size;
  ThreadPool* pool;

  void barrier() const { pool->barrier(); }
};

// Computes this thread's share of `node`.
void compute_op(const ComputeParams& params, Tensor& node);

// Bytes of scratch `node` needs when run with `n_threads` threads.
size_t op_work_size(const Tensor& node, int n_threads);

// ---- helpers shared by the op files --------------------------------------------

constexpr size_t kCacheLine = 64;

inline size_t round_up_to_cache_line(size_t bytes) {
  return (bytes + kCacheLine - 1) / kCacheLine * kCacheLine;
}

// The contiguous share [begin, end) of n items that belongs to one thread.
struct Range {
  int64_t begin;
  int64_t end;
};

// With `granule`, shares are multiples of it (except the last), e.g. so that
// kernels that process 16 weight rows per step never see a ragged middle.
inline Range thread_share(int64_t n, const ComputeParams& params, int64_t granule = 1) {
  const int64_t granules = (n + granule - 1) / granule;
  const int64_t per_thread = (granules + params.n_threads - 1) / params.n_threads * granule;
  const int64_t begin = std::min(n, per_thread * params.thread_index);
  return {begin, std::min(n, begin + per_thread)};
}

// Row index (i1, i2, i3) of flat row `row` of a tensor with ne[1..3].
struct RowIndex {
  int64_t i1, i2, i3;
};

inline RowIndex unflatten_row(const Tensor& t, int64_t row) {
  return {row % t.ne[1], (row / t.ne[1]) % t.ne[2], row / (t.ne[1] * t.ne[2])};
}

inline float* f32_row(const Tensor& t, const RowIndex& r) {
  return reinterpret_cast<float*>(t.row_ptr(r.i1, r.i2, r.i3));
}

// Reads element i of an F32 row whose elements lie `stride` bytes apart (views
// may stride dimension 0, e.g. a transpose).
struct StridedRow {
  const char* base;
  size_t stride;
  float operator[](int64_t i) const {
    return *reinterpret_cast<const float*>(base + static_cast<size_t>(i) * stride);
  }
};

inline StridedRow source_row(const Tensor& t, const RowIndex& r) {
  return {t.row_ptr(r.i1, r.i2, r.i3), t.nb[0]};
}

// Calls fn(row) with a plain float pointer when the row's elements are adjacent
// (the common case, whose loops the compiler can then vectorize), else with the
// StridedRow: a loop over row[i] is written once and serves both.
template <class Fn>
void with_row_reader(const StridedRow& x, Fn&& fn) {
  if (x.stride == sizeof(float)) {
    fn(reinterpret_cast<const float*>(x.base));
  } else {
    fn(x);
  }
}

// Calls fn(out_row, row_index) for this thread's share of the rows of `node`
// (an F32 result with dense rows).
template <typename Fn>
void for_each_own_row(const ComputeParams& params, const Tensor& node, Fn&& fn) {
  const Range rows = thread_share(node.row_count(), params);
  for (int64_t row = rows.begin; row < rows.end; ++row) {
    const RowIndex r = unflatten_row(node, row);
    fn(f32_row(node, r), r);
  }
}

// ---- op implementations (one file per family) ----------------------------------

void compute_get_rows(const ComputeParams& params, Tensor& node);     // ops_matmul.cpp
void compute_mul_mat(const ComputeParams& params, Tensor& node);      // ops_matmul.cpp
size_t mul_mat_work_size(const Tensor& node, int n_threads);
// A MulMat node's params.i[0]: 0 for w · x alone, else Graph::mul_mat's scale
// and addend (src[2]) or Graph::mul_mat_low_rank's update (a in src[2], b_rows
// in src[3]).
constexpr int32_t kMulMatScaledSum = 1;
constexpr int32_t kMulMatLowRank = 2;
// Up to this many activation rows (decode), every thread converts all of them
// into its own scratch: a few microseconds of duplicated work instead of a
// barrier between converting and multiplying.
constexpr int64_t kPrivateConversionRows = 4;
// Whether each thread converts the activations into its own scratch (no barrier
// inside the node, no scratch shared with other threads).
bool converts_privately(const Tensor& node);
void compute_element_wise(const ComputeParams& params, Tensor& node); // ops_elementwise.cpp
void compute_copy(const ComputeParams& params, Tensor& node);         // ops_copy.cpp
void compute_rms_norm(const ComputeParams& params, Tensor& node);     // ops_norm.cpp
void compute_layer_norm(const ComputeParams& params, Tensor& node);   // ops_norm.cpp
void compute_mean_rows(const ComputeParams& params, Tensor& node);    // ops_norm.cpp
void compute_rope(const ComputeParams& params, Tensor& node);         // ops_rope.cpp
size_t rope_work_size(const Tensor& node, int n_threads);
void compute_attention(const ComputeParams& params, Tensor& node);    // ops_attention.cpp
size_t attention_work_size(const Tensor& node, int n_threads);

}  // namespace peak::core
