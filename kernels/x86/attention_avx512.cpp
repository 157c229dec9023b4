// Attention's float kernels on 512-bit vectors: the weighted sum of F32, F16,
// Q8_0 and Q4_0 value rows (a tile of 4 output rows x 64 columns keeps 16
// accumulators in registers, one of 2 rows x 128 columns too; Q8_0 rows in
// integer products, below), the
// softmax numerators and their maximum, the SwiGLU and GeGLU gates and
// soft-capping.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>

#include "kernels/blocks.h"
#include "kernels/kernel_table.h"
#include "kernels/softmax_exp.inc"
#include "kernels/glu.inc"
#include "kernels/softcap.inc"
#include "kernels/weighted_sum.inc"
#include "kernels/f32_tiles.inc"
#include "kernels/x86/float_traits_avx512.inc"
#include "kernels/x86/stream_prefetch.inc"

namespace peak::kernels {
namespace {

// The weighted sum of Q8_0 rows in integer products. The float kernel
// converts every int8 value to float and multiplies it by its block scale
// before the multiply-adds: for 32 values of two keys, 12 vector instructions
// plus 4 per output row, and a decode step at depth spent longer on that than
// on reading the rows. Instead, per output row r and column block b, the
// products w[r][j] * d[j][b] of the weights and the rows' block scales are
// rounded to int16 on a common scale S[r][b] = max_j |w[r][j] d[j][b]| / 32767,
// and vpdpwssd multiplies pairs of keys' int8 values (sign-extended,
// interleaved) by them into int32: 6 instructions plus 2 per output row.
// The int32 sums of a chunk of kInt16Keys keys (|sum| <= 128 * 32767 * 128 <
// 2^31) are scaled back to floats and added to the output. Each rounding
// moves a product by at most S[r][b] / 2, so an output by at most
// S[r][b] / 2 * sum_j |q[j][i]| (tests/kernels/test_weighted_sum.cpp asserts
// it): relative to the largest product, 2^-16 per key. A chunk with a
// non-finite product, or one so small that its scale would underflow, takes
// the float kernel, which keeps NaN and infinity as they are.
constexpr int64_t kInt16Keys = 128;
constexpr int kInt16MaxBlocks = 16;      // rows of up to 512 values; longer ones take the float kernel
constexpr float kInt16Max = 32767.0f;
constexpr float kInt16SmallestMax = 1e-30f;  // below: the float kernel

struct Int16Weights {
  alignas(64) int16_t w[4][kInt16MaxBlocks][kInt16Keys];  // [output row][column block][key]
  float scale[4][kInt16MaxBlocks];
};

// d[b][j]: the scale of block b of the chunk's row j, zero past the m rows up
// to a multiple of 16. Scalar loads: vpgatherdd took most of this kernel's
// time. These are each row's first loads, so they also ask for the rows
// ahead (DecodeRowsPrefetch, `prefetch` steps a row at a time).
void load_block_scales(const char* rows, size_t row_stride, int64_t m, int nb,
                       float (&d)[kInt16MaxBlocks][kInt16Keys], DecodeRowsPrefetch& prefetch) {
  for (int64_t j = 0; j < m; ++j) {
    prefetch.step(row_stride);
    const char* row = rows + static_cast<size_t>(j) * row_stride;
    for (int b = 0; b < nb; ++b) {
      uint16_t h;
      std::memcpy(&h, row + static_cast<size_t>(b) * sizeof(BlockQ8_0), sizeof h);
      d[b][j] = _cvtsh_ss(h);
    }
  }
  for (int b = 0; b < nb; ++b) {
    for (int64_t j = m; j % 16 != 0; ++j) d[b][j] = 0.0f;
  }
}

// Rounds rows [0, R) of weights w (stride w_stride) times d into q; false
// when some product is not finite or the largest is below kInt16SmallestMax
// without being 0.
template <int R>
bool round_weights(const float* w, size_t w_stride, int64_t m, int nb, const float (&d)[kInt16MaxBlocks][kInt16Keys],
                   Int16Weights& q) {
  const __m512 zero = _mm512_setzero_ps();
  for (int r = 0; r < R; ++r) {
    const float* row = w + static_cast<size_t>(r) * w_stride;
    for (int b = 0; b < nb; ++b) {
      // Products of keys [j, j + 16), zero past m; computed again for the
      // rounding rather than kept.
      const auto products = [&](int64_t j) {
        const __mmask16 valid = m - j >= 16 ? __mmask16(0xffff) : static_cast<__mmask16>((1u << (m - j)) - 1);
        return _mm512_mul_ps(_mm512_maskz_loadu_ps(valid, row + j), _mm512_loadu_ps(d[b] + j));
      };
      __m512 largest = zero, poison = zero;
      for (int64_t j = 0; j < m; j += 16) {
        const __m512 product = products(j);
        largest = _mm512_max_ps(largest, _mm512_abs_ps(product));
        poison = _mm512_add_ps(poison, _mm512_mul_ps(product, zero));  // NaN from any NaN or infinity
      }
      const float max = _mm512_reduce_max_ps(largest);
      if (std::isnan(_mm512_reduce_add_ps(poison)) || (max > 0.0f && max < kInt16SmallestMax)) return false;
      q.scale[r][b] = max / kInt16Max;
      const __m512 inverse = _mm512_set1_ps(max > 0.0f ? kInt16Max / max : 0.0f);
      for (int64_t j = 0; j < m; j += 16) {
        const __m512i rounded = _mm512_cvtps_epi32(_mm512_mul_ps(products(j), inverse));  // to nearest
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(q.w[r][b] + j), _mm512_cvtsepi32_epi16(rounded));
      }
    }
  }
  return true;
}

// out[r][32 b + i] += S[r][b] * sum_j q.w[r][b][j] * values of block b of row j,
// for R output rows and blocks [b0, b0 + B). The accumulators of a block hold
// its values 0-7 and 16-23 (lo) and 8-15 and 24-31 (hi), the order of the
// byte interleave within 128-bit lanes; the float results are put back in
// order once per chunk.
template <int R, int B>
void int16_tile(const char* rows, size_t row_stride, int64_t m, int b0, const Int16Weights& q, float* out,
                size_t out_stride) {
  __m512i lo[R][B], hi[R][B];
  for (int r = 0; r < R; ++r)
    for (int b = 0; b < B; ++b) lo[r][b] = hi[r][b] = _mm512_setzero_si512();
  const auto add_pair = [&](const char* a, const char* c, int64_t j, bool single) {
    for (int b = 0; b < B; ++b) {
      const size_t at = static_cast<size_t>(b0 + b) * sizeof(BlockQ8_0) + offsetof(BlockQ8_0, qs);
      const __m256i va = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + at));
      const __m256i vc = single ? _mm256_setzero_si256() : _mm256_loadu_si256(reinterpret_cast<const __m256i*>(c + at));
      const __m512i l = _mm512_cvtepi8_epi16(_mm256_unpacklo_epi8(va, vc));
      const __m512i h = _mm512_cvtepi8_epi16(_mm256_unpackhi_epi8(va, vc));
      for (int r = 0; r < R; ++r) {
        int32_t pair;  // keys j and j + 1 in the low and high halves
        if (single) {
          pair = static_cast<uint16_t>(q.w[r][b0 + b][j]);
        } else {
          std::memcpy(&pair, q.w[r][b0 + b] + j, sizeof pair);
        }
        const __m512i weights = _mm512_set1_epi32(pair);
        lo[r][b] = _mm512_dpwssd_epi32(lo[r][b], l, weights);
        hi[r][b] = _mm512_dpwssd_epi32(hi[r][b], h, weights);
      }
    }
  };
  int64_t j = 0;
  for (; j + 2 <= m; j += 2) {
    const char* a = rows + static_cast<size_t>(j) * row_stride;
    add_pair(a, a + row_stride, j, false);
  }
  if (j < m) add_pair(rows + static_cast<size_t>(j) * row_stride, nullptr, j, true);
  const __m512i first = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23);
  const __m512i second = _mm512_setr_epi32(8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31);
  for (int r = 0; r < R; ++r) {
    for (int b = 0; b < B; ++b) {
      const __m512 scale = _mm512_set1_ps(q.scale[r][b0 + b]);
      const __m512 fl = _mm512_cvtepi32_ps(lo[r][b]), fh = _mm512_cvtepi32_ps(hi[r][b]);
      float* o = out + static_cast<size_t>(r) * out_stride + static_cast<size_t>(b0 + b) * kQK;
      _mm512_storeu_ps(o, _mm512_fmadd_ps(_mm512_permutex2var_ps(fl, first, fh), scale, _mm512_loadu_ps(o)));
      _mm512_storeu_ps(o + 16, _mm512_fmadd_ps(_mm512_permutex2var_ps(fl, second, fh), scale, _mm512_loadu_ps(o + 16)));
    }
  }
}

// All nb blocks of R output rows: B blocks a pass (16 accumulators), then one.
template <int R>
void int16_rows(const char* rows, size_t row_stride, int64_t m, int nb, const Int16Weights& q, float* out,
                size_t out_stride) {
  constexpr int B = 8 / R;
  int b = 0;
  for (; b + B <= nb; b += B) int16_tile<R, B>(rows, row_stride, m, b, q, out, out_stride);
  for (; b < nb; ++b) int16_tile<R, 1>(rows, row_stride, m, b, q, out, out_stride);
}

template <int R>
void int16_chunk(int64_t n, const char* rows, size_t row_stride, int64_t m, const float* w, size_t w_stride,
                 const float (&d)[kInt16MaxBlocks][kInt16Keys], float* out, size_t out_stride, Int16Weights& q) {
  const int nb = static_cast<int>(n / kQK);
  if (round_weights<R>(w, w_stride, m, nb, d, q)) {
    int16_rows<R>(rows, row_stride, m, nb, q, out, out_stride);
  } else {
    weighted_sum<Vec512, Q8_0Row>(n, rows, row_stride, m, w, w_stride, R, out, out_stride);
  }
}

void weighted_sum_q8_0_int16(int64_t n, const void* rows, size_t row_stride, int64_t n_rows, const float* w,
                             size_t w_stride, int64_t n_out, float* out, size_t out_stride) {
  if (n > kInt16MaxBlocks * kQK) {
    weighted_sum<Vec512, Q8_0Row>(n, rows, row_stride, n_rows, w, w_stride, n_out, out, out_stride);
    return;
  }
  const char* bytes = static_cast<const char*>(rows);
  alignas(64) float d[kInt16MaxBlocks][kInt16Keys];
  Int16Weights q;
  DecodeRowsPrefetch prefetch(rows, static_cast<size_t>(n_rows) * row_stride);
  for (int64_t j0 = 0; j0 < n_rows; j0 += kInt16Keys) {
    const int64_t m = std::min(kInt16Keys, n_rows - j0);
    const char* chunk = bytes + static_cast<size_t>(j0) * row_stride;
    load_block_scales(chunk, row_stride, m, static_cast<int>(n / kQK), d, prefetch);
    size_t o = 0;
    const auto weights = [&](size_t row) { return w + row * w_stride + static_cast<size_t>(j0); };
    for (; o + 4 <= static_cast<size_t>(n_out); o += 4) {
      int16_chunk<4>(n, chunk, row_stride, m, weights(o), w_stride, d, out + o * out_stride, out_stride, q);
    }
    for (; o + 2 <= static_cast<size_t>(n_out); o += 2) {
      int16_chunk<2>(n, chunk, row_stride, m, weights(o), w_stride, d, out + o * out_stride, out_stride, q);
    }
    for (; o < static_cast<size_t>(n_out); ++o) {
      int16_chunk<1>(n, chunk, row_stride, m, weights(o), w_stride, d, out + o * out_stride, out_stride, q);
    }
  }
}

}  // namespace

void install_avx512_attention_kernels(KernelTable& table) {
  install_weighted_sums<Vec512>(table);
  table[GgmlType::Q8_0].weighted_sum = weighted_sum_q8_0_int16;
  table.floats.scale_max = scale_max<Vec512>;
  table.floats.exp_sum = exp_sum<Vec512>;
  table.floats.swiglu = swiglu<Vec512>;
  table.floats.geglu = geglu<Vec512>;
  table.floats.softcap = softcap<Vec512>;
  table.floats.f32_tiles = {transpose_f32_tiles<Vec512>, gemm_f32_tiles<Vec512>};
}

}  // namespace peak::kernels
