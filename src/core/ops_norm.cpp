// Row normalisations (rms_norm optionally times a weight row, layer_norm
// times a weight and plus a bias row) and the mean of ranges of rows.
// Sums are taken in double: rows hold thousands of values.
#include <cmath>

#include "core/ops.h"

namespace peak::core {

namespace {

// The sum of term(i) for i < n in double over eight interleaved partial sums:
// one chain of dependent double adds made the decode norms (one thread, on the
// critical path) cost about 4 cycles per element. Over a plain pointer (dense
// rows) the compiler packs the partial sums into vectors.
template <class Term>
double sum_of_terms(int64_t n, const Term& term) {
  constexpr int kPartials = 8;
  double partial[kPartials] = {};
  int64_t i = 0;
  for (; i + kPartials <= n; i += kPartials) {
    for (int k = 0; k < kPartials; ++k) partial[k] += term(i + k);
  }
  for (; i < n; ++i) partial[0] += term(i);
  double sum = 0.0;
  for (double p : partial) sum += p;
  return sum;
}

template <class Row>
double sum_of_squares(const Row& x, int64_t n) {
  return sum_of_terms(n, [&x](int64_t i) { return static_cast<double>(x[i]) * x[i]; });
}

template <class Row>
double sum_of(const Row& x, int64_t n) {
  return sum_of_terms(n, [&x](int64_t i) { return static_cast<double>(x[i]); });
}

// Sum of (x[i] - mean)^2: the variance's numerator, from the centred values
// (the difference of two large sums would cancel).
template <class Row>
double centred_sum_of_squares(const Row& x, int64_t n, double mean) {
  return sum_of_terms(n, [&x, mean](int64_t i) {
    const double c = x[i] - mean;
    return c * c;
  });
}

const float* optional_row(const Tensor* t) { return t != nullptr ? static_cast<const float*>(t->data) : nullptr; }

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

// src1 weight and src2 bias: F32 [ne[0]] or null; params.f[0]: eps.
void compute_layer_norm(const ComputeParams& params, Tensor& node) {
  const Tensor& a = *node.src[0];
  const float eps = node.params.f[0];
  const float* weight = optional_row(node.src[1]);
  const float* bias = optional_row(node.src[2]);
  const int64_t n = node.ne[0];
  for_each_own_row(params, node, [&](float* out, const RowIndex& r) {
    with_row_reader(source_row(a, r), [&](const auto& x) {
      const double mean = sum_of(x, n) / static_cast<double>(n);
      const double variance = centred_sum_of_squares(x, n, mean) / static_cast<double>(n);
      const auto inverse_deviation = static_cast<float>(1.0 / std::sqrt(variance + eps));
      const auto centre = static_cast<float>(mean);
      for (int64_t i = 0; i < n; ++i) {
        float y = (x[i] - centre) * inverse_deviation;
        if (weight != nullptr) y *= weight[i];
        if (bias != nullptr) y += bias[i];
        out[i] = y;
      }
    });
  });
}

// src0 F32 [n, rows] (dense rows), src1 I32 [2, m]: [first, end) per column.
void compute_mean_rows(const ComputeParams& params, Tensor& node) {
  const Tensor& a = *node.src[0];
  const auto* ranges = static_cast<const int32_t*>(node.src[1]->data);
  const int64_t n = node.ne[0];
  for_each_own_row(params, node, [&](float* out, const RowIndex& r) {
    const int64_t first = ranges[2 * r.i1], end = ranges[2 * r.i1 + 1];  // checked by the caller (Graph::mean_rows)
    const double inverse_count = 1.0 / static_cast<double>(end - first);
    for (int64_t i = 0; i < n; ++i) {
      double sum = 0.0;
      for (int64_t row = first; row < end; ++row) sum += reinterpret_cast<const float*>(a.row_ptr(row))[i];
      out[i] = static_cast<float>(sum * inverse_count);
    }
  });
}

}  // namespace peak::core
