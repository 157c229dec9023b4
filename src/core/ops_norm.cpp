// Row normalisations: rms_norm, optionally times a weight row.
// Sums are taken in double: rows hold thousands of values.
#include <cmath>

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

}  // namespace peak::core
