// F16 rows to and from float with F16C, eight values per instruction: the KV
// cache's default type is written once per token and layer (from_float) and the
// queries of F16 attention are converted per tile. The conversions are exact /
// round to nearest even like the scalar reference, so bytes do not depend on
// the path.
#include <immintrin.h>

#include "kernels/float16.h"
#include "kernels/kernel_table.h"

namespace peak {
namespace {

void f16_to_float(const void* src, float* dst, int64_t n) {
  const auto* h = static_cast<const uint16_t*>(src);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h + i))));
  }
  for (; i < n; ++i) dst[i] = fp16_to_fp32(h[i]);
}

void f16_from_float(const float* src, void* dst, int64_t n) {
  auto* h = static_cast<uint16_t*>(dst);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i halves = _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(h + i), halves);
  }
  for (; i < n; ++i) h[i] = fp32_to_fp16(src[i]);
}

}  // namespace

void install_avx2_conversions(KernelTable& table) {
  table[GgmlType::F16].to_float = f16_to_float;
  table.set_from_float(GgmlType::F16, f16_from_float);
}

}  // namespace peak
