// Attention's float kernels on 512-bit vectors: the weighted sum of F32, F16,
// Q8_0 and Q4_0 value rows (a tile of 4 output rows x 64 columns keeps 16
// accumulators in registers), the softmax numerators, the SwiGLU and GeGLU
// gates and soft-capping.
#include <immintrin.h>

#include "kernels/blocks.h"
#include "kernels/exp_poly.h"
#include "kernels/float16.h"
#include "kernels/kernel_table.h"
#include "kernels/softmax_exp.inc"
#include "kernels/glu.inc"
#include "kernels/softcap.inc"
#include "kernels/weighted_sum.inc"

namespace peak {
namespace {

struct Vec512 {
  using Reg = __m512;
  static constexpr int kWidth = 16;
  static constexpr int kTileCols = 4;
  static Reg splat(float x) { return _mm512_set1_ps(x); }
  static Reg add(Reg a, Reg b) { return _mm512_add_ps(a, b); }
  static Reg sub(Reg a, Reg b) { return _mm512_sub_ps(a, b); }
  static Reg mul(Reg a, Reg b) { return _mm512_mul_ps(a, b); }
  static Reg max(Reg a, Reg b) { return _mm512_max_ps(a, b); }
  // maxps returns its second operand when either is NaN.
  static Reg max_number(Reg x, Reg m) { return _mm512_max_ps(x, m); }
  static Reg div(Reg a, Reg b) { return _mm512_div_ps(a, b); }
  static Reg fma(Reg a, Reg b, Reg acc) { return _mm512_fmadd_ps(a, b, acc); }
  static Reg load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, Reg v) { _mm512_storeu_ps(p, v); }
  static Reg load(const uint16_t* p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  static Reg load(const int8_t* p) {
    return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
  }
  static Reg load_nibbles(const uint8_t* p, int shift) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m128i nibbles = _mm_and_si128(_mm_srl_epi16(bytes, _mm_cvtsi32_si128(shift)), _mm_set1_epi8(0x0f));
    return _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(nibbles));
  }
  static float half(uint16_t h) { return _cvtsh_ss(h); }
  static Reg pow2(Reg n) {
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23));
  }
  // Like maxps and minps, these return their second operand when either is NaN: x, then the clamped x.
  static Reg clamp(Reg x, float lo, float hi) {
    return _mm512_min_ps(_mm512_set1_ps(hi), _mm512_max_ps(_mm512_set1_ps(lo), x));
  }
  static Reg zero_below(Reg v, Reg x, float limit) {
    return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(x, _mm512_set1_ps(limit), _CMP_NLT_UQ), v);
  }
  static float sum(Reg v) { return _mm512_reduce_add_ps(v); }
};

}  // namespace

void install_avx512_attention_kernels(KernelTable& table) {
  install_weighted_sums<Vec512>(table);
  table.floats.scale_max = scale_max<Vec512>;
  table.floats.exp_sum = exp_sum<Vec512>;
  table.floats.swiglu = swiglu<Vec512>;
  table.floats.geglu = geglu<Vec512>;
  table.floats.softcap = softcap<Vec512>;
}

}  // namespace peak
