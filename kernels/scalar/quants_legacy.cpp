// Reference kernels of the 32-element legacy types. The quantizers reproduce
// ggml's reference quantizers bit for bit (same scale choice, same rounding:
// truncation of x * id + 8.5 for Q4_0, roundf for Q8_0 ...), so quantizing an F16
// model gives the bytes llama-quantize writes. Inputs must be finite.
//
// Dot partners: Q8_0 for Q4_0, Q5_0 and Q8_0; Q8_1 for Q4_1, Q5_1 (its stored
// s = d * sum(q) folds the weight's min into one multiply) and for Q8_1 itself.
#include <algorithm>
#include <cfloat>
#include <cmath>

#include "kernels/blocks.h"
#include "kernels/float16.h"
#include "kernels/scalar/block_kernels.h"
#include "kernels/scalar/scalar_install.h"

namespace peak::kernels {
namespace scalar {
namespace {

uint32_t load_qh(const uint8_t qh[4]) {
  return static_cast<uint32_t>(qh[0]) | static_cast<uint32_t>(qh[1]) << 8 |
         static_cast<uint32_t>(qh[2]) << 16 | static_cast<uint32_t>(qh[3]) << 24;
}
void store_qh(uint32_t v, uint8_t qh[4]) {
  for (int i = 0; i < 4; ++i) qh[i] = static_cast<uint8_t>(v >> (8 * i));
}

// Element j of a 32-element nibble block (low nibbles first, then high nibbles).
int nibble(const uint8_t* qs, int j) { return j < 16 ? qs[j] & 0xf : qs[j - 16] >> 4; }
int fifth_bit(uint32_t qh, int j) { return static_cast<int>((qh >> j) & 1u) << 4; }

// Value of largest magnitude (the first one on ties), sign kept.
float signed_absmax(const float* x, int n) {
  float amax = 0.0f, max = 0.0f;
  for (int j = 0; j < n; ++j) {
    if (amax < std::fabs(x[j])) {
      amax = std::fabs(x[j]);
      max = x[j];
    }
  }
  return max;
}

void min_max(const float* x, int n, float* min, float* max) {
  *min = FLT_MAX;
  *max = -FLT_MAX;
  for (int j = 0; j < n; ++j) {
    if (x[j] < *min) *min = x[j];
    if (x[j] > *max) *max = x[j];
  }
}

// ---------------------------------------------------------------- Q4_0
void q4_0_to_float(const void* src, float* dst, int64_t n) {
  const BlockQ4_0* b = static_cast<const BlockQ4_0*>(src);
  for (int64_t i = 0; i < n / kQK; ++i, dst += kQK) {
    const float d = fp16_to_fp32(b[i].d);
    for (int j = 0; j < kQK; ++j) dst[j] = static_cast<float>(nibble(b[i].qs, j) - 8) * d;
  }
}
void q4_0_from_float(const float* src, void* dst, int64_t n) {
  BlockQ4_0* b = static_cast<BlockQ4_0*>(dst);
  for (int64_t i = 0; i < n / kQK; ++i, src += kQK) {
    const float d = signed_absmax(src, kQK) / -8;  // the extreme value maps to q = 0
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    b[i].d = fp32_to_fp16(d);
    for (int j = 0; j < kQK / 2; ++j) {
      const float lo = src[j] * id, hi = src[j + 16] * id;
      const int q_lo = std::min(15, static_cast<int>(static_cast<int8_t>(lo + 8.5f)));
      const int q_hi = std::min(15, static_cast<int>(static_cast<int8_t>(hi + 8.5f)));
      b[i].qs[j] = static_cast<uint8_t>(q_lo | q_hi << 4);
    }
  }
}
float dot_q4_0_q8_0(const BlockQ4_0& x, const BlockQ8_0& y) {
  int sum = 0;
  for (int j = 0; j < kQK; ++j) sum += (nibble(x.qs, j) - 8) * y.qs[j];
  return static_cast<float>(sum) * fp16_to_fp32(x.d) * fp16_to_fp32(y.d);
}

// ---------------------------------------------------------------- Q4_1
void q4_1_to_float(const void* src, float* dst, int64_t n) {
  const BlockQ4_1* b = static_cast<const BlockQ4_1*>(src);
  for (int64_t i = 0; i < n / kQK; ++i, dst += kQK) {
    const float d = fp16_to_fp32(b[i].d), m = fp16_to_fp32(b[i].m);
    for (int j = 0; j < kQK; ++j) dst[j] = static_cast<float>(nibble(b[i].qs, j)) * d + m;
  }
}
void q4_1_from_float(const float* src, void* dst, int64_t n) {
  BlockQ4_1* b = static_cast<BlockQ4_1*>(dst);
  for (int64_t i = 0; i < n / kQK; ++i, src += kQK) {
    float min, max;
    min_max(src, kQK, &min, &max);
    const float d = (max - min) / 15;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    b[i].d = fp32_to_fp16(d);
    b[i].m = fp32_to_fp16(min);
    for (int j = 0; j < kQK / 2; ++j) {
      const float lo = (src[j] - min) * id, hi = (src[j + 16] - min) * id;
      const int q_lo = std::min(15, static_cast<int>(static_cast<int8_t>(lo + 0.5f)));
      const int q_hi = std::min(15, static_cast<int>(static_cast<int8_t>(hi + 0.5f)));
      b[i].qs[j] = static_cast<uint8_t>(q_lo | q_hi << 4);
    }
  }
}
float dot_q4_1_q8_1(const BlockQ4_1& x, const BlockQ8_1& y) {
  int sum = 0;
  for (int j = 0; j < kQK; ++j) sum += nibble(x.qs, j) * y.qs[j];
  return static_cast<float>(sum) * fp16_to_fp32(x.d) * fp16_to_fp32(y.d) +
         fp16_to_fp32(x.m) * fp16_to_fp32(y.s);
}

// ---------------------------------------------------------------- Q5_0
void q5_0_to_float(const void* src, float* dst, int64_t n) {
  const BlockQ5_0* b = static_cast<const BlockQ5_0*>(src);
  for (int64_t i = 0; i < n / kQK; ++i, dst += kQK) {
    const float d = fp16_to_fp32(b[i].d);
    const uint32_t qh = load_qh(b[i].qh);
    for (int j = 0; j < kQK; ++j) dst[j] = static_cast<float>((nibble(b[i].qs, j) | fifth_bit(qh, j)) - 16) * d;
  }
}
void q5_0_from_float(const float* src, void* dst, int64_t n) {
  BlockQ5_0* b = static_cast<BlockQ5_0*>(dst);
  for (int64_t i = 0; i < n / kQK; ++i, src += kQK) {
    const float d = signed_absmax(src, kQK) / -16;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    b[i].d = fp32_to_fp16(d);
    uint32_t qh = 0;
    for (int j = 0; j < kQK / 2; ++j) {
      const float lo = src[j] * id, hi = src[j + 16] * id;
      const int q_lo = std::min(31, static_cast<int>(static_cast<int8_t>(lo + 16.5f)));
      const int q_hi = std::min(31, static_cast<int>(static_cast<int8_t>(hi + 16.5f)));
      b[i].qs[j] = static_cast<uint8_t>((q_lo & 0xf) | (q_hi & 0xf) << 4);
      qh |= static_cast<uint32_t>(q_lo >> 4) << j | static_cast<uint32_t>(q_hi >> 4) << (j + 16);
    }
    store_qh(qh, b[i].qh);
  }
}
float dot_q5_0_q8_0(const BlockQ5_0& x, const BlockQ8_0& y) {
  const uint32_t qh = load_qh(x.qh);
  int sum = 0;
  for (int j = 0; j < kQK; ++j) sum += ((nibble(x.qs, j) | fifth_bit(qh, j)) - 16) * y.qs[j];
  return static_cast<float>(sum) * fp16_to_fp32(x.d) * fp16_to_fp32(y.d);
}

// ---------------------------------------------------------------- Q5_1
void q5_1_to_float(const void* src, float* dst, int64_t n) {
  const BlockQ5_1* b = static_cast<const BlockQ5_1*>(src);
  for (int64_t i = 0; i < n / kQK; ++i, dst += kQK) {
    const float d = fp16_to_fp32(b[i].d), m = fp16_to_fp32(b[i].m);
    const uint32_t qh = load_qh(b[i].qh);
    for (int j = 0; j < kQK; ++j) dst[j] = static_cast<float>(nibble(b[i].qs, j) | fifth_bit(qh, j)) * d + m;
  }
}
void q5_1_from_float(const float* src, void* dst, int64_t n) {
  BlockQ5_1* b = static_cast<BlockQ5_1*>(dst);
  for (int64_t i = 0; i < n / kQK; ++i, src += kQK) {
    float min, max;
    min_max(src, kQK, &min, &max);
    const float d = (max - min) / 31;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    b[i].d = fp32_to_fp16(d);
    b[i].m = fp32_to_fp16(min);
    uint32_t qh = 0;
    for (int j = 0; j < kQK / 2; ++j) {
      const float lo = (src[j] - min) * id, hi = (src[j + 16] - min) * id;
      // No clamp here (ggml has none either): (max - min) * id + 0.5 stays below 32.
      const int q_lo = static_cast<uint8_t>(lo + 0.5f);
      const int q_hi = static_cast<uint8_t>(hi + 0.5f);
      b[i].qs[j] = static_cast<uint8_t>((q_lo & 0xf) | (q_hi & 0xf) << 4);
      qh |= static_cast<uint32_t>((q_lo >> 4) & 1) << j | static_cast<uint32_t>((q_hi >> 4) & 1) << (j + 16);
    }
    store_qh(qh, b[i].qh);
  }
}
float dot_q5_1_q8_1(const BlockQ5_1& x, const BlockQ8_1& y) {
  const uint32_t qh = load_qh(x.qh);
  int sum = 0;
  for (int j = 0; j < kQK; ++j) sum += (nibble(x.qs, j) | fifth_bit(qh, j)) * y.qs[j];
  return static_cast<float>(sum) * fp16_to_fp32(x.d) * fp16_to_fp32(y.d) +
         fp16_to_fp32(x.m) * fp16_to_fp32(y.s);
}

// ---------------------------------------------------------------- Q8_0 / Q8_1
// Shared by both: d = amax / 127, q = roundf(x / d). Returns d.
float quantize_block_q8(const float* x, int8_t* qs) {
  float amax = 0.0f;
  for (int j = 0; j < kQK; ++j) amax = std::max(amax, std::fabs(x[j]));
  const float d = amax / 127;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  for (int j = 0; j < kQK; ++j) qs[j] = static_cast<int8_t>(std::roundf(x[j] * id));
  return d;
}

void q8_0_to_float(const void* src, float* dst, int64_t n) {
  const BlockQ8_0* b = static_cast<const BlockQ8_0*>(src);
  for (int64_t i = 0; i < n / kQK; ++i, dst += kQK) {
    const float d = fp16_to_fp32(b[i].d);
    for (int j = 0; j < kQK; ++j) dst[j] = static_cast<float>(b[i].qs[j]) * d;
  }
}
void q8_0_from_float(const float* src, void* dst, int64_t n) {
  BlockQ8_0* b = static_cast<BlockQ8_0*>(dst);
  for (int64_t i = 0; i < n / kQK; ++i, src += kQK) b[i].d = fp32_to_fp16(quantize_block_q8(src, b[i].qs));
}
float dot_q8_0_q8_0(const BlockQ8_0& x, const BlockQ8_0& y) {
  int sum = 0;
  for (int j = 0; j < kQK; ++j) sum += x.qs[j] * y.qs[j];
  return static_cast<float>(sum) * fp16_to_fp32(x.d) * fp16_to_fp32(y.d);
}

void q8_1_to_float(const void* src, float* dst, int64_t n) {
  const BlockQ8_1* b = static_cast<const BlockQ8_1*>(src);
  for (int64_t i = 0; i < n / kQK; ++i, dst += kQK) {
    const float d = fp16_to_fp32(b[i].d);
    for (int j = 0; j < kQK; ++j) dst[j] = static_cast<float>(b[i].qs[j]) * d;
  }
}
void q8_1_from_float(const float* src, void* dst, int64_t n) {
  BlockQ8_1* b = static_cast<BlockQ8_1*>(dst);
  for (int64_t i = 0; i < n / kQK; ++i, src += kQK) {
    const float d = quantize_block_q8(src, b[i].qs);
    int sum = 0;
    for (int j = 0; j < kQK; ++j) sum += b[i].qs[j];
    b[i].d = fp32_to_fp16(d);
    b[i].s = fp32_to_fp16(static_cast<float>(sum) * d);
  }
}
float dot_q8_1_q8_1(const BlockQ8_1& x, const BlockQ8_1& y) {
  int sum = 0;
  for (int j = 0; j < kQK; ++j) sum += x.qs[j] * y.qs[j];
  return static_cast<float>(sum) * fp16_to_fp32(x.d) * fp16_to_fp32(y.d);
}

template <typename BX, typename BY, float (*Dot)(const BX&, const BY&)>
TypeKernels legacy(RowToFloatFn to_float, RowFromFloatFn from_float, GgmlType partner) {
  return {to_float, from_float, partner, vec_dot_blocks<BX, BY, kQK, Dot>, gemm_blocks<BX, BY, kQK, Dot>};
}

}  // namespace

void install_legacy_quants(KernelTable& t) {
  t[GgmlType::Q4_0] = legacy<BlockQ4_0, BlockQ8_0, dot_q4_0_q8_0>(q4_0_to_float, q4_0_from_float, GgmlType::Q8_0);
  t[GgmlType::Q4_1] = legacy<BlockQ4_1, BlockQ8_1, dot_q4_1_q8_1>(q4_1_to_float, q4_1_from_float, GgmlType::Q8_1);
  t[GgmlType::Q5_0] = legacy<BlockQ5_0, BlockQ8_0, dot_q5_0_q8_0>(q5_0_to_float, q5_0_from_float, GgmlType::Q8_0);
  t[GgmlType::Q5_1] = legacy<BlockQ5_1, BlockQ8_1, dot_q5_1_q8_1>(q5_1_to_float, q5_1_from_float, GgmlType::Q8_1);
  t[GgmlType::Q8_0] = legacy<BlockQ8_0, BlockQ8_0, dot_q8_0_q8_0>(q8_0_to_float, q8_0_from_float, GgmlType::Q8_0);
  t[GgmlType::Q8_1] = legacy<BlockQ8_1, BlockQ8_1, dot_q8_1_q8_1>(q8_1_to_float, q8_1_from_float, GgmlType::Q8_1);
  // The KV cache types' weighted sums (attention's values).
  t[GgmlType::Q4_0].weighted_sum = weighted_sum_blocks<BlockQ4_0, kQK, q4_0_to_float>;
  t[GgmlType::Q8_0].weighted_sum = weighted_sum_blocks<BlockQ8_0, kQK, q8_0_to_float>;
}

}  // namespace scalar
}  // namespace peak::kernels
