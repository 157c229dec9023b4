// WeightedSumFn for F32 and F16 rows on 256-bit vectors (AVX2 + FMA + F16C):
// a tile of 4 output rows x 16 columns keeps 8 accumulators in registers.
#include <immintrin.h>

#include "kernels/float16.h"
#include "kernels/kernel_table.h"

namespace peak {
namespace {

struct Vec256 {
  using Reg = __m256;
  static constexpr int kWidth = 8;
  static constexpr int kTileCols = 2;
  static Reg splat(float x) { return _mm256_set1_ps(x); }
  static Reg load(const float* p) { return _mm256_loadu_ps(p); }
  static Reg load(const uint16_t* p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
  static void store(float* p, Reg v) { _mm256_storeu_ps(p, v); }
  static Reg fma(Reg a, Reg b, Reg acc) { return _mm256_fmadd_ps(a, b, acc); }
};

#include "kernels/weighted_sum.inc"

}  // namespace

void install_avx2_weighted_sums(KernelTable& table) { install_weighted_sums<Vec256>(table); }

}  // namespace peak
