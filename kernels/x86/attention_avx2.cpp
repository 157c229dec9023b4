// Attention's float kernels on 256-bit vectors (AVX2 + FMA + F16C): the
// weighted sum of F32, F16, Q8_0 and Q4_0 value rows (a tile of 4 output rows
// x 16 columns keeps 8 accumulators in registers, one of 2 rows x 32 columns
// too), the softmax numerators,
// the SwiGLU and GeGLU gates and soft-capping.
#include <immintrin.h>

#include "kernels/blocks.h"
#include "kernels/cpu_features.h"
#include "kernels/exp_poly.h"
#include "kernels/float16.h"
#include "kernels/kernel_table.h"
#include "kernels/softmax_exp.inc"
#include "kernels/glu.inc"
#include "kernels/softcap.inc"
#include "kernels/weighted_sum.inc"
#include "kernels/f32_tiles.inc"

namespace peak {
namespace {

struct Vec256 {
  using Reg = __m256;
  static constexpr int kWidth = 8;
  static constexpr int kTileCols = 2;
  // 2 rows x 4 accumulators, 4 loaded vectors and a weight: 13 of the 16 ymm.
  static constexpr int kPairTileCols = 4;
  static constexpr int kGemmRows = 6;
  static constexpr int kGemmCols = 2;
  static Reg splat(float x) { return _mm256_set1_ps(x); }
  static Reg add(Reg a, Reg b) { return _mm256_add_ps(a, b); }
  static Reg sub(Reg a, Reg b) { return _mm256_sub_ps(a, b); }
  static Reg mul(Reg a, Reg b) { return _mm256_mul_ps(a, b); }
  static Reg max(Reg a, Reg b) { return _mm256_max_ps(a, b); }
  // maxps returns its second operand when either is NaN.
  static Reg max_number(Reg x, Reg m) { return _mm256_max_ps(x, m); }
  static Reg div(Reg a, Reg b) { return _mm256_div_ps(a, b); }
  static Reg fma(Reg a, Reg b, Reg acc) { return _mm256_fmadd_ps(a, b, acc); }
  static Reg load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, Reg v) { _mm256_storeu_ps(p, v); }
  static Reg load(const uint16_t* p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
  static Reg load(const int8_t* p) {
    return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
  }
  static Reg load_nibbles(const uint8_t* p, int shift) {
    const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
    const __m128i nibbles = _mm_and_si128(_mm_srl_epi16(bytes, _mm_cvtsi32_si128(shift)), _mm_set1_epi8(0x0f));
    return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(nibbles));
  }
  static float half(uint16_t h) { return _cvtsh_ss(h); }
  static Reg pow2(Reg n) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23));
  }
  // maxps and minps return their second operand when either is NaN: x, then the clamped x.
  static Reg clamp(Reg x, float lo, float hi) {
    return _mm256_min_ps(_mm256_set1_ps(hi), _mm256_max_ps(_mm256_set1_ps(lo), x));
  }
  static Reg zero_below(Reg v, Reg x, float limit) {
    return _mm256_andnot_ps(_mm256_cmp_ps(x, _mm256_set1_ps(limit), _CMP_LT_OQ), v);
  }
  static float sum(Reg v) {
    const __m128 quad = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    const __m128 pair = _mm_add_ps(quad, _mm_movehl_ps(quad, quad));
    return _mm_cvtss_f32(_mm_add_ss(pair, _mm_movehdup_ps(pair)));
  }
  // 8 rows of 8: unpacks pair the rows' elements, shuffles gather four rows
  // per 128-bit lane, lane permutes put each column together.
  static void transpose_block(const float* src, size_t src_stride, float* dst, int64_t dst_cols) {
    __m256 r[8], a[8], b[8];
    for (int k = 0; k < 8; ++k) r[k] = _mm256_loadu_ps(src + static_cast<size_t>(k) * src_stride);
    for (int k = 0; k < 4; ++k) {
      a[2 * k] = _mm256_unpacklo_ps(r[2 * k], r[2 * k + 1]);
      a[2 * k + 1] = _mm256_unpackhi_ps(r[2 * k], r[2 * k + 1]);
    }
    // b[4k + m], 128-bit lane L: column 4L + m of rows 4k .. 4k + 3.
    for (int k = 0; k < 2; ++k) {
      b[4 * k + 0] = _mm256_shuffle_ps(a[4 * k], a[4 * k + 2], 0x44);
      b[4 * k + 1] = _mm256_shuffle_ps(a[4 * k], a[4 * k + 2], 0xee);
      b[4 * k + 2] = _mm256_shuffle_ps(a[4 * k + 1], a[4 * k + 3], 0x44);
      b[4 * k + 3] = _mm256_shuffle_ps(a[4 * k + 1], a[4 * k + 3], 0xee);
    }
    for (int m = 0; m < 4; ++m) {
      _mm256_storeu_ps(dst + m * dst_cols, _mm256_permute2f128_ps(b[m], b[4 + m], 0x20));
      _mm256_storeu_ps(dst + (4 + m) * dst_cols, _mm256_permute2f128_ps(b[m], b[4 + m], 0x31));
    }
  }
};

}  // namespace

void install_avx2_attention_kernels(KernelTable& table) {
  install_weighted_sums<Vec256>(table);
  table.floats.scale_max = scale_max<Vec256>;
  table.floats.exp_sum = exp_sum<Vec256>;
  table.floats.swiglu = swiglu<Vec256>;
  table.floats.geglu = geglu<Vec256>;
  table.floats.softcap = softcap<Vec256>;
  table.floats.prefetch_decode_rows = !cpu_features().amd;
  table.floats.f32_tiles = {transpose_f32_tiles<Vec256>, gemm_f32_tiles<Vec256>};
}

}  // namespace peak
