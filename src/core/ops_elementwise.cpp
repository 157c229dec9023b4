// Element-wise ops: add with broadcasting, scale, the gated units (swiglu,
// geglu), gelu, softcap. Sources may be strided views; results are dense. Work is
// split by rows, or by element ranges when every tensor is one flat array.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

#include "core/ops.h"
#include "kernels/kernels.h"

namespace peak::core {

using kernels::float_kernels;
using kernels::SoftcapFn;
using kernels::SwiGluFn;

namespace {

// The exact gelu, 0.5 x (1 + erf(x / sqrt 2)), in double for its accuracy (no kernel: a projector's few rows).
float gelu_erf(float x) {
  const double v = static_cast<double>(x);
  return static_cast<float>(0.5 * v * (1.0 + std::erf(v * 0.70710678118654752440)));
}

// The strided fallbacks' formulas (the kernels take dense rows); gelu's only one.
float silu(float x) { return x / (1.0f + std::exp(-x)); }
// 0.5 x (1 + tanh(u)) as x sigmoid(2u), u = sqrt(2/pi) (x + 0.044715 x^3):
// the same value without 1 + tanh(u) cancelling for negative x.
float gelu_tanh(float x) {
  const float two_u = x * (1.59576912f + 0.0713548163f * x * x);
  return x / (1.0f + std::exp(-two_u));
}

// The row of b that broadcasts onto row r of a tensor of b's shape repeated.
StridedRow repeated_row(const Tensor& b, const RowIndex& r) {
  return {b.row_ptr(r.i1 % b.ne[1], r.i2 % b.ne[2], r.i3 % b.ne[3]), b.nb[0]};
}

template <typename Fn>
void unary(const ComputeParams& params, Tensor& node, Fn&& fn) {
  const Tensor& a = *node.src[0];
  const int64_t n = node.ne[0];
  for_each_own_row(params, node, [&](float* out, const RowIndex& r) {
    const StridedRow x = source_row(a, r);
    for (int64_t i = 0; i < n; ++i) out[i] = fn(x[i]);
  });
}

template <typename Fn>
void binary(const ComputeParams& params, Tensor& node, Fn&& fn) {
  const Tensor& a = *node.src[0];
  const Tensor& b = *node.src[1];
  const int64_t n = node.ne[0];
  const int64_t nb0 = b.ne[0];
  for_each_own_row(params, node, [&](float* out, const RowIndex& r) {
    const StridedRow x = source_row(a, r);
    const StridedRow y = repeated_row(b, r);
    if (nb0 == n) {
      for (int64_t i = 0; i < n; ++i) out[i] = fn(x[i], y[i]);
    } else {
      for (int64_t i = 0; i < n; ++i) out[i] = fn(x[i], y[i % nb0]);
    }
  });
}

// The node and its sources are contiguous: flat arrays of the node's shape.
bool is_flat(const Tensor& node) {
  for (const Tensor* src : node.src) {
    if (src != nullptr && !src->is_contiguous()) return false;
  }
  return node.is_contiguous();
}

// Calls fn(out, a, b, n) over this thread's share of node = f(src0, src1)
// (src1 may be null), whose sources have node's shape and dense rows: one
// element range when all are flat arrays (so one long row, decode's gate or
// the logits, is split across threads too), else whole rows.
template <typename Fn>
void for_each_own_span(const ComputeParams& params, Tensor& node, Fn&& fn) {
  const Tensor& a = *node.src[0];
  const Tensor* b = node.src[1];
  if (is_flat(node)) {
    const Range share = thread_share(node.element_count(), params, kCacheLine / sizeof(float));
    if (share.begin == share.end) return;
    fn(static_cast<float*>(node.data) + share.begin, static_cast<const float*>(a.data) + share.begin,
       b != nullptr ? static_cast<const float*>(b->data) + share.begin : nullptr, share.end - share.begin);
    return;
  }
  for_each_own_row(params, node, [&](float* out, const RowIndex& r) {
    fn(out, f32_row(a, r), b != nullptr ? f32_row(*b, r) : nullptr, node.ne[0]);
  });
}

// activation(gate) * up with the vector kernel when the rows are dense (gate
// and up have the node's shape; the node may sit in place of either).
void gated(const ComputeParams& params, Tensor& node, SwiGluFn kernel, float (*activation)(float)) {
  const Tensor& gate = *node.src[0];
  const Tensor& up = *node.src[1];
  if (gate.nb[0] != sizeof(float) || up.nb[0] != sizeof(float)) {
    return binary(params, node, [activation](float g, float u) { return activation(g) * u; });
  }
  for_each_own_span(params, node, [kernel](float* out, const float* g, const float* u, int64_t n) {
    kernel(g, u, out, n);
  });
}

constexpr int64_t kGeluChunk = 64;

// gelu_tanh(x) through the GeGLU kernel with an up of ones, in chunks: the
// kernel is vectorised, the strided fallback is not.
void gelu(const ComputeParams& params, Tensor& node) {
  if (node.params.i[0] == 1) return unary(params, node, gelu_erf);  // Graph::gelu_erf
  if (node.src[0]->nb[0] != sizeof(float)) return unary(params, node, gelu_tanh);
  static const auto ones = [] {
    std::array<float, kGeluChunk> a{};
    a.fill(1.0f);
    return a;
  }();
  const kernels::GeGluFn kernel = float_kernels().geglu;
  for_each_own_span(params, node, [kernel](float* out, const float* x, const float*, int64_t n) {
    for (int64_t i = 0; i < n; i += kGeluChunk) kernel(x + i, ones.data(), out + i, std::min(kGeluChunk, n - i));
  });
}

void softcap(const ComputeParams& params, Tensor& node) {
  const float cap = node.params.f[0];
  if (node.src[0]->nb[0] != sizeof(float)) {
    return unary(params, node, [cap](float x) { return cap * std::tanh(x / cap); });
  }
  const SoftcapFn kernel = float_kernels().softcap;
  for_each_own_span(params, node, [kernel, cap](float* out, const float* x, const float*, int64_t n) {
    kernel(x, out, n, cap);
  });
}

}  // namespace

void compute_element_wise(const ComputeParams& params, Tensor& node) {
  switch (node.op) {
    case Op::Add: return binary(params, node, [](float x, float y) { return x + y; });
    case Op::SwiGlu: return gated(params, node, float_kernels().swiglu, silu);
    case Op::GeGlu: return gated(params, node, float_kernels().geglu, gelu_tanh);
    case Op::Gelu: return gelu(params, node);
    case Op::Softcap: return softcap(params, node);
    case Op::Scale: {
      const float s = node.params.f[0];
      return unary(params, node, [s](float x) { return x * s; });
    }
    default: return;
  }
}

}  // namespace peak::core
