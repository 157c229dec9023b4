// Element-wise ops: add with broadcasting, scale, swiglu. Sources may be strided
// views; results are dense. Work is split by rows.
#include <cmath>
#include <cstring>

#include "core/ops.h"
#include "kernels/kernels.h"

namespace peak::core {

namespace {

float silu(float x) { return x / (1.0f + std::exp(-x)); }

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

// silu(gate) * up with the vector kernel when the rows are dense (gate and up
// have the node's shape; the node may sit in place of either).
void swiglu(const ComputeParams& params, Tensor& node) {
  const Tensor& gate = *node.src[0];
  const Tensor& up = *node.src[1];
  if (gate.nb[0] != sizeof(float) || up.nb[0] != sizeof(float)) {
    return binary(params, node, [](float g, float u) { return silu(g) * u; });
  }
  const SwiGluFn kernel = float_kernels().swiglu;
  for_each_own_row(params, node, [&](float* out, const RowIndex& r) {
    kernel(f32_row(gate, r), f32_row(up, r), out, node.ne[0]);
  });
}

}  // namespace

void compute_element_wise(const ComputeParams& params, Tensor& node) {
  switch (node.op) {
    case Op::Add: return binary(params, node, [](float x, float y) { return x + y; });
    case Op::SwiGlu: return swiglu(params, node);
    case Op::Scale: {
      const float s = node.params.f[0];
      return unary(params, node, [s](float x) { return x * s; });
    }
    default: return;
  }
}

}  // namespace peak::core
