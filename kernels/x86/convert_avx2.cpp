// F16 rows to and from float with F16C, eight values per instruction: the KV
// cache's default type is written once per token and layer (from_float) and the
// queries of F16 attention are converted per tile. The conversions are exact /
// round to nearest even like the scalar reference, so bytes do not depend on
// the path. Q8_0 and Q4_0 rows to float (attention's bf16 tiles read quantized
// caches through them): one multiply per value like the scalar reference, so
// the floats are the same.
#include <immintrin.h>

#include "kernels/blocks.h"
#include "kernels/float16.h"
#include "kernels/kernel_table.h"

namespace peak::kernels {
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

// The low eight signed bytes as floats.
__m256 floats_of_bytes(__m128i bytes) { return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(bytes)); }

void q8_0_to_float(const void* src, float* dst, int64_t n) {
  const auto* blocks = static_cast<const BlockQ8_0*>(src);
  for (int64_t b = 0; b < n / kQK; ++b, dst += kQK) {
    const __m256 d = _mm256_set1_ps(fp16_to_fp32(blocks[b].d));
    for (int k = 0; k < kQK; k += 8) {
      const __m128i q = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(blocks[b].qs + k));
      _mm256_storeu_ps(dst + k, _mm256_mul_ps(floats_of_bytes(q), d));
    }
  }
}

// Element k < 16 is the low nibble of qs[k], element k >= 16 the high one of
// qs[k - 16]; value (nibble - 8) * d.
void q4_0_to_float(const void* src, float* dst, int64_t n) {
  const auto* blocks = static_cast<const BlockQ4_0*>(src);
  const __m128i low_nibbles = _mm_set1_epi8(0x0f), eight = _mm_set1_epi8(8);
  for (int64_t b = 0; b < n / kQK; ++b, dst += kQK) {
    const __m256 d = _mm256_set1_ps(fp16_to_fp32(blocks[b].d));
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blocks[b].qs));
    const __m128i halves[2] = {_mm_sub_epi8(_mm_and_si128(bytes, low_nibbles), eight),
                               _mm_sub_epi8(_mm_and_si128(_mm_srli_epi16(bytes, 4), low_nibbles), eight)};
    for (int h = 0; h < 2; ++h) {
      _mm256_storeu_ps(dst + 16 * h, _mm256_mul_ps(floats_of_bytes(halves[h]), d));
      _mm256_storeu_ps(dst + 16 * h + 8, _mm256_mul_ps(floats_of_bytes(_mm_srli_si128(halves[h], 8)), d));
    }
  }
}

}  // namespace

void install_avx2_conversions(KernelTable& table) {
  table[GgmlType::F16].to_float = f16_to_float;
  table[GgmlType::Q8_0].to_float = q8_0_to_float;
  table[GgmlType::Q4_0].to_float = q4_0_to_float;
  table.set_from_float(GgmlType::F16, f16_from_float);
}

}  // namespace peak::kernels
