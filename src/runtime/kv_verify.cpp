#include "runtime/kv_verify.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "kernels/kernels.h"

namespace peak::runtime {

namespace {

using kernels::GgmlType;

// How far apart two values that differ by a hair may be once stored, relative
// to their row's largest magnitude (kv_verify.h).
double storage_step(GgmlType type) {
  constexpr double kHalf = 1.0 / 2048;  // F16's rounding, and the F16 scale of Q8_0 and Q4_0 blocks
  if (type == GgmlType::F32) return 0;
  if (type == GgmlType::F16) return kHalf;
  if (type == GgmlType::Q8_0) return 1.0 / 127 + kHalf;
  return 1.0 / 8 + kHalf;  // Q4_0, the last type a cache holds (KvCache refuses others)
}

}  // namespace

std::optional<KvRowDifference> first_kv_difference(const KvCache& kv, const std::vector<uint8_t>& recomputed,
                                                   int64_t n) {
  const std::vector<uint8_t> loaded = kv.snapshot_first(n);
  if (recomputed.size() != loaded.size()) {
    throw std::invalid_argument("KV verification: the recomputed cells are " + std::to_string(recomputed.size()) +
                                " bytes, " + std::to_string(n) + " cells of this cache are " +
                                std::to_string(loaded.size()));
  }
  // One row of each side as floats: head_dim values.
  std::vector<float> a, b;
  size_t at = 0;  // snapshot layout: layer by layer, K then V, each [n cells][n_head_kv rows]
  for (size_t l = 0; l < kv.layers().size(); ++l) {
    for (const bool value : {false, true}) {
      const core::Tensor& t = value ? *kv.layers()[l].v : *kv.layers()[l].k;
      const kernels::TypeKernels& k = kernels::kernels_for(t.type);
      const double allowance = storage_step(t.type) + kKvArithmeticAllowance;
      const size_t row_bytes = t.nb[2];
      a.resize(static_cast<size_t>(t.ne[0]));
      b.resize(a.size());
      for (int64_t c = 0; c < n; ++c) {
        for (int64_t h = 0; h < t.ne[1]; ++h, at += row_bytes) {
          k.to_float(loaded.data() + at, a.data(), t.ne[0]);
          k.to_float(recomputed.data() + at, b.data(), t.ne[0]);
          double scale = 0, difference = 0;
          for (size_t i = 0; i < a.size(); ++i) {
            scale = std::max(scale, static_cast<double>(std::abs(b[i])));
            difference = std::max(difference, static_cast<double>(std::abs(a[i] - b[i])));
          }
          const double allowed = allowance * scale;
          if (!(difference <= allowed))
            return KvRowDifference{static_cast<int64_t>(l), value, c, h, difference, allowed};
        }
      }
    }
  }
  return std::nullopt;
}

}  // namespace peak::runtime
