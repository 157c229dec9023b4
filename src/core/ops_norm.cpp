// Row normalisations: rms_norm, layer norm and the scaled, masked softmax.
// Sums are taken in double: rows hold thousands of values.
#include <cmath>
#include <limits>

#include "core/ops.h"

namespace peak::core {

namespace {

// Sum of x[i]^2 in double over eight interleaved partial sums: one chain of
// dependent double adds made the decode norms (one thread, on the critical
// path) cost about 4 cycles per element. Over a plain pointer (dense rows) the
// compiler packs the partial sums into vectors.
template <class Row>
double sum_of_squares(const Row& x, int64_t n) {
  constexpr int kPartials = 8;
  double partial[kPartials] = {};
  int64_t i = 0;
  for (; i + kPartials <= n; i += kPartials) {
    for (int k = 0; k < kPartials; ++k) partial[k] += static_cast<double>(x[i + k]) * x[i + k];
  }
  for (; i < n; ++i) partial[0] += static_cast<double>(x[i]) * x[i];
  double sum = 0.0;
  for (double p : partial) sum += p;
  return sum;
}

}  // namespace

void compute_rms_norm(const ComputeParams& params, Tensor& node) {
  const Tensor& a = *node.src[0];
  const float eps = node.params.f[0];
  const auto* weight = node.src[1] != nullptr ? reinterpret_cast<const float*>(node.src[1]->data) : nullptr;
  const int64_t n = node.ne[0];
  for_each_own_row(params, node, [&](float* out, const RowIndex& r) {
    with_row_reader(source_row(a, r), [&](const auto& x) {
      const auto inverse_rms =
          static_cast<float>(1.0 / std::sqrt(sum_of_squares(x, n) / static_cast<double>(n) + eps));
      if (weight == nullptr) {
        for (int64_t i = 0; i < n; ++i) out[i] = x[i] * inverse_rms;
      } else {
        for (int64_t i = 0; i < n; ++i) out[i] = x[i] * inverse_rms * weight[i];
      }
    });
  });
}

void compute_norm(const ComputeParams& params, Tensor& node) {
  const Tensor& a = *node.src[0];
  const double eps = node.params.f[0];
  const int64_t n = node.ne[0];
  for_each_own_row(params, node, [&](float* out, const RowIndex& r) {
    const StridedRow x = source_row(a, r);
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) sum += x[i];
    const double mean = sum / static_cast<double>(n);
    double sum_of_squares = 0.0;
    for (int64_t i = 0; i < n; ++i) sum_of_squares += (x[i] - mean) * (x[i] - mean);
    const double inverse_deviation = 1.0 / std::sqrt(sum_of_squares / static_cast<double>(n) + eps);
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>((x[i] - mean) * inverse_deviation);
  });
}

// out = softmax(a * scale + mask) per row; a [n_kv, n_tokens, n_head, ...], the
// mask row is picked by the token index and shared by every head.
void compute_soft_max(const ComputeParams& params, Tensor& node) {
  const Tensor& a = *node.src[0];
  const Tensor* mask = node.src[1];
  const float scale = node.params.f[0];
  const int64_t n = node.ne[0];
  for_each_own_row(params, node, [&](float* out, const RowIndex& r) {
    const StridedRow x = source_row(a, r);
    const StridedRow m = mask != nullptr ? source_row(*mask, {r.i1, 0, 0}) : StridedRow{nullptr, 0};
    float max = -std::numeric_limits<float>::infinity();
    for (int64_t i = 0; i < n; ++i) {
      float v = x[i] * scale;
      if (m.base != nullptr) v += m[i];
      out[i] = v;
      max = std::max(max, v);
    }
    if (max == -std::numeric_limits<float>::infinity()) {
      for (int64_t i = 0; i < n; ++i) out[i] = 0.0f;  // everything masked: attend to nothing
      return;
    }
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      out[i] = std::exp(out[i] - max);
      sum += out[i];
    }
    const auto inverse_sum = static_cast<float>(1.0 / sum);
    for (int64_t i = 0; i < n; ++i) out[i] *= inverse_sum;
  });
}

}  // namespace peak::core
