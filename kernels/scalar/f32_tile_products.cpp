// The scalar twins of attention's fp32 tile kernels (F32TileKernels): the
// transposition, and each product summed in order of k. No path's table holds
// them: they are what the SIMD kernels are tested against.
#include "kernels/kernels.h"

namespace peak::kernels {
namespace {

void transpose_f32(const float* src, size_t src_stride, int64_t n_rows, int64_t n, float* dst, int64_t dst_cols) {
  for (int64_t j = 0; j < n_rows; ++j) {
    const float* row = src + static_cast<size_t>(j) * src_stride;
    for (int64_t i = 0; i < n; ++i) dst[i * dst_cols + j] = row[i];
  }
}

void gemm_f32(int64_t n, const float* a, size_t a_stride, int64_t n_rows, const float* b, int64_t n_cols, float* c,
              size_t c_stride, bool add) {
  for (int64_t r = 0; r < n_rows; ++r) {
    const float* a_row = a + static_cast<size_t>(r) * a_stride;
    float* c_row = c + static_cast<size_t>(r) * c_stride;
    for (int64_t j = 0; j < n_cols; ++j) {
      float sum = 0.0f;
      for (int64_t k = 0; k < n; ++k) sum += a_row[k] * b[k * n_cols + j];
      c_row[j] = add ? c_row[j] + sum : sum;
    }
  }
}

}  // namespace

const F32TileKernels& scalar_f32_tile_kernels() {
  static const F32TileKernels kernels{transpose_f32, gemm_f32};
  return kernels;
}

}  // namespace peak::kernels
