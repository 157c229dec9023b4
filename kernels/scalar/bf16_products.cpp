// The scalar twins of attention's bf16 kernels (Bf16Kernels): the same
// roundings to bf16 and packed layouts, each pair of products added to an fp32
// sum one after the other (odd element first, as vdpbf16ps is specified). No
// path's table holds them: they are what the SIMD kernels are tested against.
#include "kernels/float16.h"
#include "kernels/kernels.h"

namespace peak::kernels {
namespace {

void round_bf16(const float* src, uint16_t* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = fp32_to_bf16(src[i]);
}

void pack_rows_bf16(const float* src, size_t src_stride, int64_t n_rows, int64_t n, uint16_t* dst) {
  for (int64_t j = 0; j < n_rows; ++j) {
    const float* row = src + static_cast<size_t>(j) * src_stride;
    uint16_t* pair = dst + (j / 2) * 2 * n + j % 2;
    for (int64_t i = 0; i < n; ++i) pair[2 * i] = fp32_to_bf16(row[i]);
  }
}

void pack_columns_bf16(const float* src, size_t src_stride, int64_t n_rows, int64_t n, uint16_t* dst,
                       int64_t dst_cols) {
  for (int64_t j = 0; j < n_rows; ++j) {
    const float* row = src + static_cast<size_t>(j) * src_stride;
    for (int64_t i = 0; i < n; ++i) dst[(i / 2) * 2 * dst_cols + 2 * j + i % 2] = fp32_to_bf16(row[i]);
  }
}

void gemm_bf16(int64_t n_pairs, const uint16_t* a, size_t a_stride, int64_t n_rows, const uint16_t* b,
               int64_t n_cols, float* c, size_t c_stride, bool add) {
  for (int64_t r = 0; r < n_rows; ++r) {
    const uint16_t* a_row = a + static_cast<size_t>(r) * a_stride;
    float* c_row = c + static_cast<size_t>(r) * c_stride;
    for (int64_t j = 0; j < n_cols; ++j) {
      float sum = add ? c_row[j] : 0.0f;
      // Element k ^ 1: odd, then even. Written as two statements per pair
      // (odd then even), GCC 12's loop vectorizer at -O3 summed them wrongly.
      for (int64_t k = 0; k < 2 * n_pairs; ++k) {
        const int64_t e = k ^ 1;
        sum += bf16_to_fp32(a_row[e]) * bf16_to_fp32(b[(e / 2) * 2 * n_cols + 2 * j + e % 2]);
      }
      c_row[j] = sum;
    }
  }
}

}  // namespace

const Bf16Kernels& scalar_bf16_kernels() {
  static const Bf16Kernels kernels{round_bf16, pack_rows_bf16, pack_columns_bf16, gemm_bf16};
  return kernels;
}

}  // namespace peak::kernels
