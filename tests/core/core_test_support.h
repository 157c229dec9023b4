// Shared helpers of the core tests: leaf tensors with random contents, dense
// double-precision copies of any tensor for the reference ops, NMSE, and a runner
// that builds, allocates and computes a one-output graph at 1..4 threads.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <random>
#include <vector>

#include "core/executor.h"
#include "core/graph.h"
#include "core/graph_allocator.h"
#include "core/thread_pool.h"

namespace peak::core::testing {

constexpr int kMaxTestThreads = 4;

// The pool every core test shares (creating threads per test would dominate).
ThreadPool& test_pool();

// A tensor's logical contents in double precision, dense in ggml order.
struct Dense {
  int64_t ne[kMaxDims] = {1, 1, 1, 1};
  std::vector<double> values;

  explicit Dense(const int64_t (&shape)[kMaxDims]);
  double& at(int64_t i0, int64_t i1 = 0, int64_t i2 = 0, int64_t i3 = 0) {
    return values[static_cast<size_t>(((i3 * ne[2] + i2) * ne[1] + i1) * ne[0] + i0)];
  }
  double at(int64_t i0, int64_t i1 = 0, int64_t i2 = 0, int64_t i3 = 0) const {
    return values[static_cast<size_t>(((i3 * ne[2] + i2) * ne[1] + i1) * ne[0] + i0)];
  }
};

// Reads any tensor (F32 with any strides, or any type with dense rows, which is
// dequantized through the kernels) into a Dense.
Dense read_dense(const Tensor& t);

// `d` with two axes exchanged: what a permuted view of its tensor reads.
Dense swap_axes(const Dense& d, int axis_a, int axis_b);

// Normalised mean squared error of `actual` against `expected`.
double nmse(const Dense& expected, const Dense& actual);

// NMSE bounds of ops that convert activations to a weight or cache type's dot
// partner (mul_mat, attention): the partner's rounding error.
constexpr double kF16Partner = 1e-5;
constexpr double kQ8Partner = 2e-3;
double partner_bound(kernels::GgmlType type);

// Leaf tensors (weights, inputs, caches) whose memory the test owns.
class Leaves {
 public:
  explicit Leaves(uint32_t seed = 1234) : rng_(seed) {}

  // Uniform random values in [lo, hi), stored in `type` (converted by the kernels).
  Tensor* random(kernels::GgmlType type, std::initializer_list<int64_t> ne, float lo = -1.0f, float hi = 1.0f);
  Tensor* zeros(kernels::GgmlType type, std::initializer_list<int64_t> ne);
  // A descriptor without memory: enough to build and plan graphs, not to compute.
  Tensor* shape_only(kernels::GgmlType type, std::initializer_list<int64_t> ne);
  Tensor* ids(const std::vector<int32_t>& values);  // I32 vector

  std::mt19937& rng() { return rng_; }

 private:
  Tensor* with_memory(kernels::GgmlType type, std::initializer_list<int64_t> ne);

  TensorArena arena_{512};
  std::vector<std::unique_ptr<AlignedBuffer>> memory_;
  std::mt19937 rng_;
};

// Builds the graph with `build` (which returns the result), allocates and computes
// it with 1..kMaxTestThreads threads, and checks each result against `expected`.
void expect_graph_matches(const std::function<Tensor*(Graph&)>& build, const Dense& expected,
                          double max_nmse);

// Builds, allocates and computes once with `n_threads` of `pool`; returns the result.
Dense compute_once(const std::function<Tensor*(Graph&)>& build, int n_threads, ThreadPool& pool = test_pool());

}  // namespace peak::core::testing
