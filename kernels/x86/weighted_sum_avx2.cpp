// WeightedSumFn for F32, F16, Q8_0 and Q4_0 rows on 256-bit vectors (AVX2 + FMA + F16C):
// a tile of 4 output rows x 16 columns keeps 8 accumulators in registers.
#include <immintrin.h>

#include "kernels/blocks.h"
#include "kernels/float16.h"
#include "kernels/kernel_table.h"

namespace peak {
namespace {

struct Vec256 {
  using Reg = __m256;
  static constexpr int kWidth = 8;
  static constexpr int kTileCols = 2;
  static Reg splat(float x) { return _mm256_set1_ps(x); }
  static Reg mul(Reg a, Reg b) { return _mm256_mul_ps(a, b); }
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
};

#include "kernels/weighted_sum.inc"

}  // namespace

void install_avx2_weighted_sums(KernelTable& table) { install_weighted_sums<Vec256>(table); }

}  // namespace peak
