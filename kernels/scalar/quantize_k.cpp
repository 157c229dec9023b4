// K-type quantizers. Each super-block is fitted in two steps: a float scale (and
// min) per sub-block by the searches of quant_fit.h, then those scales are
// themselves quantized against one super-block scale, and the elements are
// re-coded with the scales as stored, so the codes match what dequantization sees.
#include "kernels/scalar/quantize_k.h"

#include <algorithm>
#include <cmath>

#include "kernels/blocks.h"
#include "kernels/float16.h"
#include "kernels/scalar/k_codes.h"
#include "kernels/scalar/quant_fit.h"

namespace peak::kernels {
namespace scalar {
namespace {

// Quantizes non-negative per-sub-block values against one fp16 super scale with
// `levels` steps: returns the stored super scale, writes the codes.
uint16_t quantize_positive_scales(const float* values, int count, int levels, uint8_t* codes) {
  float max = 0.0f;
  for (int i = 0; i < count; ++i) max = std::max(max, values[i]);
  if (max <= 0.0f) {
    for (int i = 0; i < count; ++i) codes[i] = 0;
    return fp32_to_fp16(0.0f);
  }
  const float inv = static_cast<float>(levels) / max;
  for (int i = 0; i < count; ++i) codes[i] = static_cast<uint8_t>(std::clamp(round_to_int(inv * values[i]), 0, levels));
  return fp32_to_fp16(max / static_cast<float>(levels));
}

// Re-codes `x` (len elements) for value = scale * q - neg_min, q in [0, nmax].
void recode_affine(const float* x, int len, float scale, float neg_min, int nmax, uint8_t* q) {
  const float inv = scale != 0.0f ? 1.0f / scale : 0.0f;
  for (int i = 0; i < len; ++i) q[i] = static_cast<uint8_t>(std::clamp(round_to_int((x[i] + neg_min) * inv), 0, nmax));
}

// Re-codes `x` for value = scale * (q - bias), q in [0, 2 * bias - 1].
void recode_symmetric(const float* x, int len, float scale, int bias, uint8_t* q) {
  const float inv = scale != 0.0f ? 1.0f / scale : 0.0f;
  for (int i = 0; i < len; ++i) q[i] = static_cast<uint8_t>(std::clamp(round_to_int(x[i] * inv), -bias, bias - 1) + bias);
}

// Signed per-sub-block scales against one super scale: codes in [-half, half - 1]
// with the largest magnitude on -half (the format's extra negative step).
// Returns the float super scale (the caller stores it).
float quantize_signed_scales(const float* values, int count, int half, int* codes) {
  float amax = 0.0f, max = 0.0f;
  for (int i = 0; i < count; ++i) {
    if (std::fabs(values[i]) > amax) {
      amax = std::fabs(values[i]);
      max = values[i];
    }
  }
  if (amax == 0.0f) {
    for (int i = 0; i < count; ++i) codes[i] = 0;
    return 0.0f;
  }
  const float iscale = -static_cast<float>(half) / max;
  for (int i = 0; i < count; ++i) codes[i] = std::clamp(round_to_int(iscale * values[i]), -half, half - 1);
  return 1.0f / iscale;
}

// Q4_K and Q5_K: 8 sub-blocks of 32, 6-bit scales and mins.
void quantize_affine_k(const float* x, int nmax, uint16_t* d, uint16_t* dmin, uint8_t packed_scales[12],
                       uint8_t q[kQKK]) {
  float scales[8], mins[8];
  for (int s = 0; s < 8; ++s) scales[s] = fit_affine(x + 32 * s, 32, nmax, q + 32 * s, &mins[s]);
  uint8_t sc[8], m[8];
  *d = quantize_positive_scales(scales, 8, 63, sc);
  *dmin = quantize_positive_scales(mins, 8, 63, m);
  pack_q4_k_scales(sc, m, packed_scales);
  const float dd = fp16_to_fp32(*d), dm = fp16_to_fp32(*dmin);
  for (int s = 0; s < 8; ++s) {
    recode_affine(x + 32 * s, 32, dd * static_cast<float>(sc[s]), dm * static_cast<float>(m[s]), nmax, q + 32 * s);
  }
}

// Q3_K and Q6_K: 16 sub-blocks of 16, codes q - nmax in [-nmax, nmax - 1],
// signed sub-scales in [-scale_half, scale_half - 1]. Returns the stored super
// scale; writes the sub-scale codes and the element codes (biased by nmax).
uint16_t quantize_symmetric_k(const float* x, int nmax, int scale_half, int sc[16], uint8_t q[kQKK]) {
  int8_t codes[16];
  float scales[16];
  for (int s = 0; s < 16; ++s) scales[s] = fit_symmetric(x + 16 * s, 16, nmax, codes);
  const uint16_t d = fp32_to_fp16(quantize_signed_scales(scales, 16, scale_half, sc));
  const float dd = fp16_to_fp32(d);
  for (int s = 0; s < 16; ++s) recode_symmetric(x + 16 * s, 16, dd * static_cast<float>(sc[s]), nmax, q + 16 * s);
  return d;
}

}  // namespace

void quantize_row_q2_k(const float* src, void* dst, int64_t n) {
  BlockQ2_K* b = static_cast<BlockQ2_K*>(dst);
  for (int64_t i = 0; i < n / kQKK; ++i, src += kQKK) {
    uint8_t q[kQKK], sc[16], m[16];
    float scales[16], mins[16];
    for (int s = 0; s < 16; ++s) scales[s] = fit_affine(src + 16 * s, 16, 3, q + 16 * s, &mins[s]);
    b[i].d = quantize_positive_scales(scales, 16, 15, sc);
    b[i].dmin = quantize_positive_scales(mins, 16, 15, m);
    const float d = fp16_to_fp32(b[i].d), dmin = fp16_to_fp32(b[i].dmin);
    for (int s = 0; s < 16; ++s) {
      b[i].scales[s] = static_cast<uint8_t>(sc[s] | m[s] << 4);
      recode_affine(src + 16 * s, 16, d * static_cast<float>(sc[s]), dmin * static_cast<float>(m[s]), 3, q + 16 * s);
    }
    pack_q2_k(q, b[i]);
  }
}

void quantize_row_q3_k(const float* src, void* dst, int64_t n) {
  BlockQ3_K* b = static_cast<BlockQ3_K*>(dst);
  for (int64_t i = 0; i < n / kQKK; ++i, src += kQKK) {
    int sc[16];
    uint8_t q[kQKK], stored[16];
    b[i].d = quantize_symmetric_k(src, 4, 32, sc, q);
    for (int s = 0; s < 16; ++s) stored[s] = static_cast<uint8_t>(sc[s] + 32);
    pack_q3_k_scales(stored, b[i].scales);
    pack_q3_k(q, b[i]);
  }
}

void quantize_row_q4_k(const float* src, void* dst, int64_t n) {
  BlockQ4_K* b = static_cast<BlockQ4_K*>(dst);
  for (int64_t i = 0; i < n / kQKK; ++i, src += kQKK) {
    uint8_t q[kQKK];
    quantize_affine_k(src, 15, &b[i].d, &b[i].dmin, b[i].scales, q);
    pack_nibbles_k(q, b[i].qs);
  }
}

void quantize_row_q5_k(const float* src, void* dst, int64_t n) {
  BlockQ5_K* b = static_cast<BlockQ5_K*>(dst);
  for (int64_t i = 0; i < n / kQKK; ++i, src += kQKK) {
    uint8_t q[kQKK];
    quantize_affine_k(src, 31, &b[i].d, &b[i].dmin, b[i].scales, q);
    pack_q5_k(q, b[i]);
  }
}

void quantize_row_q6_k(const float* src, void* dst, int64_t n) {
  BlockQ6_K* b = static_cast<BlockQ6_K*>(dst);
  for (int64_t i = 0; i < n / kQKK; ++i, src += kQKK) {
    int sc[16];
    uint8_t q[kQKK];
    b[i].d = quantize_symmetric_k(src, 32, 128, sc, q);
    for (int s = 0; s < 16; ++s) b[i].scales[s] = static_cast<int8_t>(sc[s]);
    pack_q6_k(q, b[i]);
  }
}

void quantize_row_q8_k(const float* src, void* dst, int64_t n) {
  BlockQ8_K* b = static_cast<BlockQ8_K*>(dst);
  for (int64_t i = 0; i < n / kQKK; ++i, src += kQKK) {
    float amax = 0.0f;
    for (int e = 0; e < kQKK; ++e) amax = std::max(amax, std::fabs(src[e]));
    const float d = amax / 127;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    b[i].d = d;
    for (int e = 0; e < kQKK; ++e) b[i].qs[e] = static_cast<int8_t>(round_to_int(src[e] * id));
    for (int s = 0; s < 16; ++s) {
      int sum = 0;
      for (int e = 16 * s; e < 16 * s + 16; ++e) sum += b[i].qs[e];
      b[i].bsums[s] = static_cast<int16_t>(sum);
    }
  }
}

}  // namespace scalar
}  // namespace peak::kernels
