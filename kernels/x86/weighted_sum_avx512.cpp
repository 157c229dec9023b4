// WeightedSumFn for F32 and F16 rows on 512-bit vectors: a tile of 4 output
// rows x 64 columns keeps 16 accumulators in registers.
#include <immintrin.h>

#include "kernels/float16.h"
#include "kernels/kernel_table.h"

namespace peak {
namespace {

struct Vec512 {
  using Reg = __m512;
  static constexpr int kWidth = 16;
  static constexpr int kTileCols = 4;
  static Reg splat(float x) { return _mm512_set1_ps(x); }
  static Reg load(const float* p) { return _mm512_loadu_ps(p); }
  static Reg load(const uint16_t* p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  static void store(float* p, Reg v) { _mm512_storeu_ps(p, v); }
  static Reg fma(Reg a, Reg b, Reg acc) { return _mm512_fmadd_ps(a, b, acc); }
};

#include "kernels/weighted_sum.inc"

}  // namespace

void install_avx512_weighted_sums(KernelTable& table) { install_weighted_sums<Vec512>(table); }

}  // namespace peak
