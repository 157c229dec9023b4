// Internal: vec_dot and gemm built from a per-block dot product, shared by the
// scalar reference kernels of every type. `Dot(x_block, y_block)` returns the
// float contribution of one weight block against one partner block; both
// kernels add the contributions in block order, so gemm gives exactly the
// vec_dot result for every pair.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace peak::kernels {
namespace scalar {

// WeightedSumFn from a block dequantizer: each block of each row is turned into
// floats once per output row and added, weighted. Precondition: n is a
// multiple of kBlockElems.
template <typename Block, int kBlockElems, void (*ToFloat)(const void*, float*, int64_t)>
void weighted_sum_blocks(int64_t n, const void* rows, size_t row_stride, int64_t n_rows, const float* w,
                         size_t w_stride, int64_t n_out, float* out, size_t out_stride) {
  float values[kBlockElems];
  for (int64_t o = 0; o < n_out; ++o) {
    float* dst = out + static_cast<size_t>(o) * out_stride;
    for (int64_t j = 0; j < n_rows; ++j) {
      const float weight = w[static_cast<size_t>(o) * w_stride + static_cast<size_t>(j)];
      const auto* blocks = reinterpret_cast<const Block*>(static_cast<const char*>(rows) + static_cast<size_t>(j) * row_stride);
      for (int64_t b = 0; b < n / kBlockElems; ++b) {
        ToFloat(&blocks[b], values, kBlockElems);
        for (int k = 0; k < kBlockElems; ++k) dst[b * kBlockElems + k] += weight * values[k];
      }
    }
  }
}

template <typename T>
const T* row_at(const void* base, size_t stride, int64_t row) {
  return reinterpret_cast<const T*>(static_cast<const uint8_t*>(base) + static_cast<size_t>(row) * stride);
}

// Precondition: n is a multiple of kBlockElems.
template <typename BX, typename BY, int kBlockElems, float (*Dot)(const BX&, const BY&)>
void vec_dot_blocks(int64_t n, float* out, const void* x, const void* y) {
  const BX* xb = static_cast<const BX*>(x);
  const BY* yb = static_cast<const BY*>(y);
  float sum = 0.0f;
  for (int64_t b = 0; b < n / kBlockElems; ++b) sum += Dot(xb[b], yb[b]);
  *out = sum;
}

// Tiles of one weight row x kTileY activation rows: each weight block is read
// once per tile and used against kTileY partner blocks.
template <typename BX, typename BY, int kBlockElems, float (*Dot)(const BX&, const BY&)>
void gemm_blocks(int64_t n, const void* x, size_t x_stride, int64_t n_rows_x, const void* y,
                 size_t y_stride, int64_t n_rows_y, float* out, size_t out_stride) {
  constexpr int kTileY = 4;
  const int64_t n_blocks = n / kBlockElems;
  for (int64_t ry0 = 0; ry0 < n_rows_y; ry0 += kTileY) {
    const int tile_y = static_cast<int>(std::min<int64_t>(kTileY, n_rows_y - ry0));
    const BY* y_rows[kTileY];
    for (int j = 0; j < tile_y; ++j) y_rows[j] = row_at<BY>(y, y_stride, ry0 + j);
    for (int64_t rx = 0; rx < n_rows_x; ++rx) {
      const BX* x_row = row_at<BX>(x, x_stride, rx);
      float sums[kTileY] = {};
      for (int64_t b = 0; b < n_blocks; ++b) {
        for (int j = 0; j < tile_y; ++j) sums[j] += Dot(x_row[b], y_rows[j][b]);
      }
      for (int j = 0; j < tile_y; ++j) out[static_cast<size_t>(ry0 + j) * out_stride + static_cast<size_t>(rx)] = sums[j];
    }
  }
}

}  // namespace scalar
}  // namespace peak::kernels
