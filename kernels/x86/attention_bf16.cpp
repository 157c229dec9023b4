// Attention's bf16 kernels (Bf16Kernels) on AVX512_BF16: vcvtneps2bf16 rounds
// to nearest even, vdpbf16ps adds two exact bf16 products per fp32 lane. The
// packed B operand puts the two terms of one output column in one 32-bit
// lane, so a 512-bit load holds 16 columns and one broadcast 32-bit pair of
// A serves them all: a register tile of 4 rows x 64 columns takes 4 loads and
// 4 broadcasts for 16 vdpbf16ps (32 multiply-adds per lane) per pair.
#include <immintrin.h>

#include <cstring>

#include "kernels/float16.h"
#include "kernels/kernel_table.h"
#include "kernels/x86/transpose16.inc"

namespace peak::kernels {
namespace {

// 16 floats as 16 bf16 widened to 32-bit lanes (the value in the low half).
__m512i widened_bf16(const float* p) {
  return _mm512_cvtepu16_epi32(reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(_mm512_loadu_ps(p))));
}

void round_bf16(const float* src, uint16_t* dst, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i),
                        reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(_mm512_loadu_ps(src + i))));
  }
  for (; i < n; ++i) dst[i] = fp32_to_bf16(src[i]);
}

void pack_rows_bf16(const float* src, size_t src_stride, int64_t n_rows, int64_t n, uint16_t* dst) {
  for (int64_t j = 0; j + 1 < n_rows; j += 2) {
    const float* even = src + static_cast<size_t>(j) * src_stride;
    const float* odd = even + src_stride;
    uint16_t* pair = dst + j * n;
    for (int64_t i = 0; i < n; i += 16) {
      const __m512i words = _mm512_or_si512(widened_bf16(even + i), _mm512_slli_epi32(widened_bf16(odd + i), 16));
      _mm512_storeu_si512(pair + 2 * i, words);
    }
  }
}

// Groups of 16 rows and 32 elements: each row's 16 element pairs become one
// dword vector, the transpose turns them into 16 pairs of 16 rows, one 64-byte
// store each. Other rows and elements take the scalar route.
void pack_columns_bf16(const float* src, size_t src_stride, int64_t n_rows, int64_t n, uint16_t* dst,
                       int64_t dst_cols) {
  int64_t j = 0;
  for (; j + 16 <= n_rows; j += 16) {
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
      __m512i r[16];
      for (int k = 0; k < 16; ++k) {
        const float* row = src + static_cast<size_t>(j + k) * src_stride + i;
        r[k] = reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(_mm512_loadu_ps(row + 16), _mm512_loadu_ps(row)));
      }
      transpose16(r);
      for (int w = 0; w < 16; ++w) _mm512_storeu_si512(dst + (i / 2 + w) * 2 * dst_cols + 2 * j, r[w]);
    }
    for (; i < n; ++i) {
      for (int64_t k = j; k < j + 16; ++k) {
        dst[(i / 2) * 2 * dst_cols + 2 * k + i % 2] = fp32_to_bf16(src[static_cast<size_t>(k) * src_stride + i]);
      }
    }
  }
  for (; j < n_rows; ++j) {
    for (int64_t i = 0; i < n; ++i) {
      dst[(i / 2) * 2 * dst_cols + 2 * j + i % 2] = fp32_to_bf16(src[static_cast<size_t>(j) * src_stride + i]);
    }
  }
}

__m512bh broadcast_pair(const uint16_t* p) {
  int32_t pair;
  std::memcpy(&pair, p, sizeof(pair));
  return reinterpret_cast<__m512bh>(_mm512_set1_epi32(pair));
}

// kRows rows x kCols vectors of 16 columns.
template <int kRows, int kCols>
void gemm_tile(int64_t n_pairs, const uint16_t* a, size_t a_stride, const uint16_t* b, int64_t n_cols, float* c,
               size_t c_stride, bool add) {
  __m512 acc[kRows][kCols];
  for (int r = 0; r < kRows; ++r)
    for (int k = 0; k < kCols; ++k) acc[r][k] = add ? _mm512_loadu_ps(c + r * c_stride + 16 * k) : _mm512_setzero_ps();
  for (int64_t p = 0; p < n_pairs; ++p) {
    const uint16_t* b_pair = b + p * 2 * n_cols;
    __m512bh bv[kCols];
    for (int k = 0; k < kCols; ++k) bv[k] = reinterpret_cast<__m512bh>(_mm512_loadu_si512(b_pair + 32 * k));
    for (int r = 0; r < kRows; ++r) {
      const __m512bh av = broadcast_pair(a + r * a_stride + 2 * p);
      for (int k = 0; k < kCols; ++k) acc[r][k] = _mm512_dpbf16_ps(acc[r][k], av, bv[k]);
    }
  }
  for (int r = 0; r < kRows; ++r)
    for (int k = 0; k < kCols; ++k) _mm512_storeu_ps(c + r * c_stride + 16 * k, acc[r][k]);
}

template <int kCols>
void gemm_rows(int64_t n_pairs, const uint16_t* a, size_t a_stride, int64_t n_rows, const uint16_t* b,
               int64_t n_cols, float* c, size_t c_stride, bool add) {
  int64_t r = 0;
  for (; r + 4 <= n_rows; r += 4) gemm_tile<4, kCols>(n_pairs, a + r * a_stride, a_stride, b, n_cols, c + r * c_stride, c_stride, add);
  const int64_t rest = n_rows - r;
  a += r * a_stride;
  c += r * c_stride;
  if (rest == 3) gemm_tile<3, kCols>(n_pairs, a, a_stride, b, n_cols, c, c_stride, add);
  if (rest == 2) gemm_tile<2, kCols>(n_pairs, a, a_stride, b, n_cols, c, c_stride, add);
  if (rest == 1) gemm_tile<1, kCols>(n_pairs, a, a_stride, b, n_cols, c, c_stride, add);
}

// Panels of 64 columns (a 16 KB slice of B for 64 pairs stays in L1 while
// every row tile passes), then the last 16, 32 or 48.
void gemm_bf16(int64_t n_pairs, const uint16_t* a, size_t a_stride, int64_t n_rows, const uint16_t* b,
               int64_t n_cols, float* c, size_t c_stride, bool add) {
  int64_t j = 0;
  for (; j + 64 <= n_cols; j += 64) gemm_rows<4>(n_pairs, a, a_stride, n_rows, b + 2 * j, n_cols, c + j, c_stride, add);
  const int64_t rest = (n_cols - j) / 16;
  if (rest == 3) gemm_rows<3>(n_pairs, a, a_stride, n_rows, b + 2 * j, n_cols, c + j, c_stride, add);
  if (rest == 2) gemm_rows<2>(n_pairs, a, a_stride, n_rows, b + 2 * j, n_cols, c + j, c_stride, add);
  if (rest == 1) gemm_rows<1>(n_pairs, a, a_stride, n_rows, b + 2 * j, n_cols, c + j, c_stride, add);
}

}  // namespace

void install_avx512bf16_attention_kernels(KernelTable& table) {
  table.floats.bf16 = {round_bf16, pack_rows_bf16, pack_columns_bf16, gemm_bf16};
}

}  // namespace peak::kernels
