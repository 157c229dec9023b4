// Internal: the loops shared by the SIMD block kernels of every ISA. A block
// kernel K provides
//   K::XBlock, K::YBlock, K::kElems   block types, elements per block
//   K::X K::load(const XBlock&)       weight block unpacked into registers
//   K::Acc                            accumulator with a finish(const Acc&) -> float
//   K::accumulate(Acc&, const X&, const YBlock&)
// and gets vec_dot_blocks<K> (VecDotFn) and gemm_blocks<K> (GemmFn) from here.
//
// Everything sits in an anonymous namespace on purpose: each per-ISA source
// includes this header and must get its own copy, compiled with its own
// instruction set, never one the linker merged from another path's object.
#pragma once

#include <cstddef>
#include <cstdint>

namespace peak::kernels {
namespace {

template <typename T>
const T* row_at(const void* base, size_t stride, int64_t row) {
  return reinterpret_cast<const T*>(static_cast<const uint8_t*>(base) + static_cast<size_t>(row) * stride);
}

template <class K>
void vec_dot_blocks(int64_t n, float* out, const void* xv, const void* yv) {
  const auto* x = static_cast<const typename K::XBlock*>(xv);
  const auto* y = static_cast<const typename K::YBlock*>(yv);
  const int64_t nb = n / K::kElems;
  typename K::Acc a0, a1;  // two chains hide the FMA latency
  int64_t b = 0;
  for (; b + 1 < nb; b += 2) {
    K::accumulate(a0, K::load(x[b]), y[b]);
    K::accumulate(a1, K::load(x[b + 1]), y[b + 1]);
  }
  if (b < nb) K::accumulate(a0, K::load(x[b]), y[b]);
  *out = finish(a0) + finish(a1);
}

// One weight row against kTileY activation rows: each weight block is unpacked
// once and used kTileY times.
template <class K, int kTileY>
void gemm_tile(int64_t nb, const typename K::XBlock* x_row, const typename K::YBlock* const* y_rows, float* out,
               size_t out_stride) {
  typename K::Acc acc[kTileY];
  for (int64_t b = 0; b < nb; ++b) {
    const typename K::X xb = K::load(x_row[b]);
    for (int j = 0; j < kTileY; ++j) K::accumulate(acc[j], xb, y_rows[j][b]);
  }
  for (int j = 0; j < kTileY; ++j) out[static_cast<size_t>(j) * out_stride] = finish(acc[j]);
}

template <class K>
void gemm_blocks(int64_t n, const void* x, size_t x_stride, int64_t n_rows_x, const void* y, size_t y_stride,
                 int64_t n_rows_y, float* out, size_t out_stride) {
  constexpr int kTileY = 4;
  using YB = typename K::YBlock;
  const int64_t nb = n / K::kElems;
  for (int64_t ry0 = 0; ry0 < n_rows_y; ry0 += kTileY) {
    const int64_t tile = n_rows_y - ry0 < kTileY ? n_rows_y - ry0 : kTileY;
    const YB* y_rows[kTileY];
    for (int64_t j = 0; j < tile; ++j) y_rows[j] = row_at<YB>(y, y_stride, ry0 + j);
    float* out_tile = out + static_cast<size_t>(ry0) * out_stride;
    for (int64_t rx = 0; rx < n_rows_x; ++rx) {
      const auto* x_row = row_at<typename K::XBlock>(x, x_stride, rx);
      float* o = out_tile + rx;
      switch (tile) {
        case 4: gemm_tile<K, 4>(nb, x_row, y_rows, o, out_stride); break;
        case 3: gemm_tile<K, 3>(nb, x_row, y_rows, o, out_stride); break;
        case 2: gemm_tile<K, 2>(nb, x_row, y_rows, o, out_stride); break;
        default: gemm_tile<K, 1>(nb, x_row, y_rows, o, out_stride); break;
      }
    }
  }
}

}  // namespace
}  // namespace peak::kernels
