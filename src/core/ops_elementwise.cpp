// Element-wise ops (add, mul with broadcasting, scale, silu, gelu, swiglu) and
// concat. Sources may be strided views; results are dense. Work is split by rows.
#include <cmath>
#include <cstring>

#include "core/ops.h"
#include "kernels/kernels.h"

namespace peak::core {

namespace {

float silu(float x) { return x / (1.0f + std::exp(-x)); }

float gelu(float x) {
  // The tanh approximation the models were trained with,
  // 0.5 x (1 + tanh(z)) with z = sqrt(2/pi) (x + 0.044715 x^3), written as
  // x * sigmoid(2z): the same value without the cancellation in 1 + tanh(z) < 0.
  constexpr float kTwoSqrt2OverPi = 1.5957691216057308f;
  return x / (1.0f + std::exp(-kTwoSqrt2OverPi * x * (1.0f + 0.044715f * x * x)));
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
    case Op::Mul: return binary(params, node, [](float x, float y) { return x * y; });
    case Op::SwiGlu: return swiglu(params, node);
    case Op::Scale: {
      const float s = node.params.f[0];
      return unary(params, node, [s](float x) { return x * s; });
    }
    case Op::Silu: return unary(params, node, silu);
    case Op::Gelu: return unary(params, node, gelu);
    default: return;
  }
}

void compute_concat(const ComputeParams& params, Tensor& node) {
  const Tensor& a = *node.src[0];
  const Tensor& b = *node.src[1];
  const int dim = node.params.i[0];
  const int64_t n = node.ne[0];
  for_each_own_row(params, node, [&](float* out, const RowIndex& r) {
    if (dim == 0) {
      const StridedRow x = source_row(a, r);
      const StridedRow y = source_row(b, r);
      for (int64_t i = 0; i < a.ne[0]; ++i) out[i] = x[i];
      for (int64_t i = 0; i < b.ne[0]; ++i) out[a.ne[0] + i] = y[i];
      return;
    }
    int64_t index[kMaxDims] = {0, r.i1, r.i2, r.i3};
    const bool from_a = index[dim] < a.ne[dim];
    if (!from_a) index[dim] -= a.ne[dim];
    const StridedRow x = source_row(from_a ? a : b, {index[1], index[2], index[3]});
    for (int64_t i = 0; i < n; ++i) out[i] = x[i];
  });
}

}  // namespace peak::core
