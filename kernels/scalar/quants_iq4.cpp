// Reference kernels of the non-linear 4-bit types. IQ4_NL (32-element blocks)
// dots against Q8_0, IQ4_XS (256-element super-blocks with 6-bit sub-scales)
// against Q8_K. Both use the 16-entry code book kIq4Values.
#include <algorithm>
#include <cmath>

#include "kernels/blocks.h"
#include "kernels/float16.h"
#include "kernels/scalar/block_kernels.h"
#include "kernels/scalar/k_codes.h"
#include "kernels/scalar/quant_fit.h"
#include "kernels/scalar/scalar_install.h"

namespace peak::kernels {
namespace scalar {
namespace {

int iq4_value(const uint8_t* qs, int j) { return kIq4Values[j < 16 ? qs[j] & 0xf : qs[j - 16] >> 4]; }

void pack_iq4_nibbles(const uint8_t q[kQK], uint8_t qs[kQK / 2]) {
  for (int j = 0; j < kQK / 2; ++j) qs[j] = static_cast<uint8_t>(q[j] | q[j + 16] << 4);
}

// ---------------------------------------------------------------- IQ4_NL
void iq4_nl_to_float(const void* src, float* dst, int64_t n) {
  const BlockIQ4_NL* b = static_cast<const BlockIQ4_NL*>(src);
  for (int64_t i = 0; i < n / kQK; ++i, dst += kQK) {
    const float d = fp16_to_fp32(b[i].d);
    for (int j = 0; j < kQK; ++j) dst[j] = d * static_cast<float>(iq4_value(b[i].qs, j));
  }
}
void iq4_nl_from_float(const float* src, void* dst, int64_t n) {
  BlockIQ4_NL* b = static_cast<BlockIQ4_NL*>(dst);
  for (int64_t i = 0; i < n / kQK; ++i, src += kQK) {
    uint8_t q[kQK];
    b[i].d = fp32_to_fp16(fit_iq4(src, kQK, q));
    // Re-code against the scale as stored.
    const float d = fp16_to_fp32(b[i].d);
    const float inv = d != 0.0f ? 1.0f / d : 0.0f;
    for (int j = 0; j < kQK; ++j) q[j] = nearest_iq4_index(src[j] * inv);
    pack_iq4_nibbles(q, b[i].qs);
  }
}
float dot_iq4_nl_q8_0(const BlockIQ4_NL& x, const BlockQ8_0& y) {
  int sum = 0;
  for (int j = 0; j < kQK; ++j) sum += iq4_value(x.qs, j) * y.qs[j];
  return static_cast<float>(sum) * fp16_to_fp32(x.d) * fp16_to_fp32(y.d);
}

// ---------------------------------------------------------------- IQ4_XS
void iq4_xs_to_float(const void* src, float* dst, int64_t n) {
  const BlockIQ4_XS* b = static_cast<const BlockIQ4_XS*>(src);
  for (int64_t i = 0; i < n / kQKK; ++i) {
    const float d = fp16_to_fp32(b[i].d);
    for (int s = 0; s < 8; ++s, dst += kQK) {
      const float ds = d * static_cast<float>(iq4_xs_scale(b[i], s) - 32);
      for (int j = 0; j < kQK; ++j) dst[j] = ds * static_cast<float>(iq4_value(b[i].qs + 16 * s, j));
    }
  }
}
void iq4_xs_from_float(const float* src, void* dst, int64_t n) {
  BlockIQ4_XS* b = static_cast<BlockIQ4_XS*>(dst);
  for (int64_t i = 0; i < n / kQKK; ++i, src += kQKK) {
    float scales[8], amax = 0.0f, max = 0.0f;
    uint8_t q[kQK];
    for (int s = 0; s < 8; ++s) {
      scales[s] = fit_iq4(src + kQK * s, kQK, q);
      if (std::fabs(scales[s]) > amax) {
        amax = std::fabs(scales[s]);
        max = scales[s];
      }
    }
    // Sub-scales in [-32, 31] with the largest magnitude on -32.
    const float d = max / -32;
    b[i].d = fp32_to_fp16(d);
    const float dd = fp16_to_fp32(b[i].d);
    const float inv_d = dd != 0.0f ? 1.0f / dd : 0.0f;
    b[i].scales_h = 0;
    for (int s = 0; s < 8; ++s) {
      const int ls = std::clamp(round_to_int(scales[s] * inv_d), -32, 31) + 32;
      if (s % 2 == 0) b[i].scales_l[s / 2] = 0;
      b[i].scales_l[s / 2] = static_cast<uint8_t>(b[i].scales_l[s / 2] | (ls & 0xf) << (4 * (s % 2)));
      b[i].scales_h = static_cast<uint16_t>(b[i].scales_h | (ls >> 4) << (2 * s));
      const float ds = dd * static_cast<float>(ls - 32);
      const float inv = ds != 0.0f ? 1.0f / ds : 0.0f;
      for (int j = 0; j < kQK; ++j) q[j] = nearest_iq4_index(src[kQK * s + j] * inv);
      pack_iq4_nibbles(q, b[i].qs + 16 * s);
    }
  }
}
float dot_iq4_xs_q8_k(const BlockIQ4_XS& x, const BlockQ8_K& y) {
  int sum = 0;
  for (int s = 0; s < 8; ++s) {
    int sub = 0;
    for (int j = 0; j < kQK; ++j) sub += iq4_value(x.qs + 16 * s, j) * y.qs[kQK * s + j];
    sum += (iq4_xs_scale(x, s) - 32) * sub;
  }
  return y.d * fp16_to_fp32(x.d) * static_cast<float>(sum);
}

}  // namespace

void install_iq4_quants(KernelTable& t) {
  t[GgmlType::IQ4_NL] = {iq4_nl_to_float, iq4_nl_from_float, GgmlType::Q8_0,
                         vec_dot_blocks<BlockIQ4_NL, BlockQ8_0, kQK, dot_iq4_nl_q8_0>,
                         gemm_blocks<BlockIQ4_NL, BlockQ8_0, kQK, dot_iq4_nl_q8_0>};
  t[GgmlType::IQ4_XS] = {iq4_xs_to_float, iq4_xs_from_float, GgmlType::Q8_K,
                         vec_dot_blocks<BlockIQ4_XS, BlockQ8_K, kQKK, dot_iq4_xs_q8_k>,
                         gemm_blocks<BlockIQ4_XS, BlockQ8_K, kQKK, dot_iq4_xs_q8_k>};
}

}  // namespace scalar
}  // namespace peak::kernels
