// Reference kernels of the 256-element K types: dequantize and dot against
// Q8_K (the dot partner of every K type; its bsums carry the 16-element sums
// that fold the mins of Q2_K / Q4_K / Q5_K into one multiply per sub-block).
#include "kernels/blocks.h"
#include "kernels/float16.h"
#include "kernels/scalar/block_kernels.h"
#include "kernels/scalar/k_codes.h"
#include "kernels/scalar/quantize_k.h"
#include "kernels/scalar/scalar_install.h"

namespace peak::kernels {
namespace scalar {
namespace {

// Sum of code * y over elements [begin, begin + len), with codes offset by `bias`.
int int_dot(const uint8_t* q, const int8_t* y, int begin, int len, int bias) {
  int sum = 0;
  for (int i = begin; i < begin + len; ++i) sum += (q[i] - bias) * y[i];
  return sum;
}

// ---------------------------------------------------------------- Q2_K
void q2_k_to_float(const void* src, float* dst, int64_t n) {
  const BlockQ2_K* b = static_cast<const BlockQ2_K*>(src);
  for (int64_t i = 0; i < n / kQKK; ++i, dst += kQKK) {
    uint8_t q[kQKK];
    unpack_q2_k(b[i], q);
    const float d = fp16_to_fp32(b[i].d), dmin = fp16_to_fp32(b[i].dmin);
    for (int e = 0; e < kQKK; ++e) {
      const int sc = b[i].scales[e / 16];
      dst[e] = d * static_cast<float>(sc & 0xf) * static_cast<float>(q[e]) - dmin * static_cast<float>(sc >> 4);
    }
  }
}
float dot_q2_k(const BlockQ2_K& x, const BlockQ8_K& y) {
  uint8_t q[kQKK];
  unpack_q2_k(x, q);
  int scaled = 0, mins = 0;
  for (int s = 0; s < 16; ++s) {
    scaled += (x.scales[s] & 0xf) * int_dot(q, y.qs, 16 * s, 16, 0);
    mins += (x.scales[s] >> 4) * y.bsums[s];
  }
  return y.d * (fp16_to_fp32(x.d) * static_cast<float>(scaled) - fp16_to_fp32(x.dmin) * static_cast<float>(mins));
}

// ---------------------------------------------------------------- Q3_K
void q3_k_to_float(const void* src, float* dst, int64_t n) {
  const BlockQ3_K* b = static_cast<const BlockQ3_K*>(src);
  for (int64_t i = 0; i < n / kQKK; ++i, dst += kQKK) {
    uint8_t q[kQKK];
    int8_t scales[16];
    unpack_q3_k(b[i], q);
    unpack_q3_k_scales(b[i].scales, scales);
    const float d = fp16_to_fp32(b[i].d);
    for (int e = 0; e < kQKK; ++e) dst[e] = d * static_cast<float>(scales[e / 16] * (q[e] - 4));
  }
}
float dot_q3_k(const BlockQ3_K& x, const BlockQ8_K& y) {
  uint8_t q[kQKK];
  int8_t scales[16];
  unpack_q3_k(x, q);
  unpack_q3_k_scales(x.scales, scales);
  int sum = 0;
  for (int s = 0; s < 16; ++s) sum += scales[s] * int_dot(q, y.qs, 16 * s, 16, 4);
  return y.d * fp16_to_fp32(x.d) * static_cast<float>(sum);
}

// ---------------------------------------------------------------- Q4_K / Q5_K
// Shared once the codes are unpacked: 8 sub-blocks of 32, value d*sc*q - dmin*m.
void affine_k_to_float(const uint8_t q[kQKK], const uint8_t packed_scales[12], uint16_t d16, uint16_t dmin16,
                       float* dst) {
  const float d = fp16_to_fp32(d16), dmin = fp16_to_fp32(dmin16);
  for (int s = 0; s < 8; ++s) {
    uint8_t sc, m;
    unpack_q4_k_scale_min(s, packed_scales, &sc, &m);
    for (int e = 32 * s; e < 32 * s + 32; ++e) dst[e] = d * static_cast<float>(sc * q[e]) - dmin * static_cast<float>(m);
  }
}
float affine_k_dot(const uint8_t q[kQKK], const uint8_t packed_scales[12], uint16_t d16, uint16_t dmin16,
                   const BlockQ8_K& y) {
  int scaled = 0, mins = 0;
  for (int s = 0; s < 8; ++s) {
    uint8_t sc, m;
    unpack_q4_k_scale_min(s, packed_scales, &sc, &m);
    scaled += sc * int_dot(q, y.qs, 32 * s, 32, 0);
    mins += m * (y.bsums[2 * s] + y.bsums[2 * s + 1]);
  }
  return y.d * (fp16_to_fp32(d16) * static_cast<float>(scaled) - fp16_to_fp32(dmin16) * static_cast<float>(mins));
}

void q4_k_to_float(const void* src, float* dst, int64_t n) {
  const BlockQ4_K* b = static_cast<const BlockQ4_K*>(src);
  for (int64_t i = 0; i < n / kQKK; ++i, dst += kQKK) {
    uint8_t q[kQKK];
    unpack_q4_k(b[i], q);
    affine_k_to_float(q, b[i].scales, b[i].d, b[i].dmin, dst);
  }
}
float dot_q4_k(const BlockQ4_K& x, const BlockQ8_K& y) {
  uint8_t q[kQKK];
  unpack_q4_k(x, q);
  return affine_k_dot(q, x.scales, x.d, x.dmin, y);
}

void q5_k_to_float(const void* src, float* dst, int64_t n) {
  const BlockQ5_K* b = static_cast<const BlockQ5_K*>(src);
  for (int64_t i = 0; i < n / kQKK; ++i, dst += kQKK) {
    uint8_t q[kQKK];
    unpack_q5_k(b[i], q);
    affine_k_to_float(q, b[i].scales, b[i].d, b[i].dmin, dst);
  }
}
float dot_q5_k(const BlockQ5_K& x, const BlockQ8_K& y) {
  uint8_t q[kQKK];
  unpack_q5_k(x, q);
  return affine_k_dot(q, x.scales, x.d, x.dmin, y);
}

// ---------------------------------------------------------------- Q6_K
void q6_k_to_float(const void* src, float* dst, int64_t n) {
  const BlockQ6_K* b = static_cast<const BlockQ6_K*>(src);
  for (int64_t i = 0; i < n / kQKK; ++i, dst += kQKK) {
    uint8_t q[kQKK];
    unpack_q6_k(b[i], q);
    const float d = fp16_to_fp32(b[i].d);
    for (int e = 0; e < kQKK; ++e) dst[e] = d * static_cast<float>(b[i].scales[e / 16] * (q[e] - 32));
  }
}
float dot_q6_k(const BlockQ6_K& x, const BlockQ8_K& y) {
  uint8_t q[kQKK];
  unpack_q6_k(x, q);
  int sum = 0;
  for (int s = 0; s < 16; ++s) sum += x.scales[s] * int_dot(q, y.qs, 16 * s, 16, 32);
  return y.d * fp16_to_fp32(x.d) * static_cast<float>(sum);
}

// ---------------------------------------------------------------- Q8_K
void q8_k_to_float(const void* src, float* dst, int64_t n) {
  const BlockQ8_K* b = static_cast<const BlockQ8_K*>(src);
  for (int64_t i = 0; i < n / kQKK; ++i, dst += kQKK) {
    for (int e = 0; e < kQKK; ++e) dst[e] = b[i].d * static_cast<float>(b[i].qs[e]);
  }
}
float dot_q8_k(const BlockQ8_K& x, const BlockQ8_K& y) {
  int sum = 0;
  for (int e = 0; e < kQKK; ++e) sum += x.qs[e] * y.qs[e];
  return x.d * y.d * static_cast<float>(sum);
}

template <typename BX, float (*Dot)(const BX&, const BlockQ8_K&)>
TypeKernels k_type(RowToFloatFn to_float, RowFromFloatFn from_float) {
  return {to_float, from_float, GgmlType::Q8_K, vec_dot_blocks<BX, BlockQ8_K, kQKK, Dot>,
          gemm_blocks<BX, BlockQ8_K, kQKK, Dot>};
}

}  // namespace

void install_k_quants(KernelTable& t) {
  t[GgmlType::Q2_K] = k_type<BlockQ2_K, dot_q2_k>(q2_k_to_float, quantize_row_q2_k);
  t[GgmlType::Q3_K] = k_type<BlockQ3_K, dot_q3_k>(q3_k_to_float, quantize_row_q3_k);
  t[GgmlType::Q4_K] = k_type<BlockQ4_K, dot_q4_k>(q4_k_to_float, quantize_row_q4_k);
  t[GgmlType::Q5_K] = k_type<BlockQ5_K, dot_q5_k>(q5_k_to_float, quantize_row_q5_k);
  t[GgmlType::Q6_K] = k_type<BlockQ6_K, dot_q6_k>(q6_k_to_float, quantize_row_q6_k);
  t[GgmlType::Q8_K] = k_type<BlockQ8_K, dot_q8_k>(q8_k_to_float, quantize_row_q8_k);
}

}  // namespace scalar
}  // namespace peak::kernels
