// The Q4_0 lane and quad layouts (kernels/repack.h): the repacking itself and
// the scalar gemm that reads each.
#include <cstring>

#include "kernels/blocks.h"
#include "kernels/float16.h"
#include "kernels/kernels.h"
#include "kernels/repack.h"

namespace peak {

namespace {

// The gemm over a layout of 16-row groups, given the function that reads row r's
// block b back out of its group of nb blocks: per row, per block in order,
// sum += float(dot) * d_x * d_y, as the scalar Q4_0 kernels add.
template <class BlockAt>
void gemm_scalar(int64_t n, const void* x, size_t x_stride, int64_t n_rows_x, const void* y, size_t y_stride,
                 int64_t n_rows_y, float* out, size_t out_stride, BlockAt block_at) {
  const int64_t nb = n / kQK;
  const size_t group_bytes = x_stride * kRepackRows;
  for (int64_t rx = 0; rx < n_rows_x; ++rx) {
    const auto* group = static_cast<const uint8_t*>(x) + static_cast<size_t>(rx / kRepackRows) * group_bytes;
    const int r = static_cast<int>(rx % kRepackRows);
    for (int64_t ry = 0; ry < n_rows_y; ++ry) {
      const auto* yb = reinterpret_cast<const BlockQ8_0*>(static_cast<const uint8_t*>(y) + static_cast<size_t>(ry) * y_stride);
      float sum = 0.0f;
      for (int64_t b = 0; b < nb; ++b) {
        const BlockQ4_0 xb = block_at(group, nb, b, r);
        int dot = 0;
        for (int j = 0; j < kQK / 2; ++j) dot += ((xb.qs[j] & 0xf) - 8) * yb[b].qs[j] + ((xb.qs[j] >> 4) - 8) * yb[b].qs[j + 16];
        sum += static_cast<float>(dot) * fp16_to_fp32(xb.d) * fp16_to_fp32(yb[b].d);
      }
      out[static_cast<size_t>(ry) * out_stride + static_cast<size_t>(rx)] = sum;
    }
  }
}

}  // namespace

void repack_q4_0_lanes(const void* src, void* dst, int64_t n, int64_t n_rows) {
  const int64_t nb = n / kQK;
  const size_t row_bytes = static_cast<size_t>(nb) * sizeof(BlockQ4_0);
  const size_t group_bytes = row_bytes * kQ4_0LaneRows;
  for (int64_t g = 0; g < n_rows / kQ4_0LaneRows; ++g) {
    const auto* rows = static_cast<const uint8_t*>(src) + static_cast<size_t>(g) * group_bytes;
    auto* group = static_cast<uint8_t*>(dst) + static_cast<size_t>(g) * group_bytes;
    for (int lane = 0; lane < kQ4_0LaneRows; ++lane) {
      const auto* blocks = reinterpret_cast<const BlockQ4_0*>(rows + static_cast<size_t>(q4_0_lane_row(lane)) * row_bytes);
      for (int64_t b = 0; b < nb; ++b) {
        for (int k = 0; k < 4; ++k) std::memcpy(group + q4_0_lane_codes_at(b) + 64 * k + 4 * lane, blocks[b].qs + 4 * k, 4);
        std::memcpy(group + q4_0_lane_scales_at(nb, b) + 2 * lane, &blocks[b].d, 2);
      }
    }
  }
}

void gemm_q4_0_lanes_scalar(int64_t n, const void* x, size_t x_stride, int64_t n_rows_x, const void* y,
                            size_t y_stride, int64_t n_rows_y, float* out, size_t out_stride) {
  gemm_scalar(n, x, x_stride, n_rows_x, y, y_stride, n_rows_y, out, out_stride,
              [](const uint8_t* group, int64_t nb, int64_t b, int r) {
                const int lane = q4_0_lane_row(r);  // the order is its own inverse
                BlockQ4_0 block;
                // Byte j of the block's qs is byte j % 4 of dword j / 4.
                for (int j = 0; j < kQK / 2; ++j) block.qs[j] = group[q4_0_lane_codes_at(b) + 64 * (j / 4) + 4 * lane + j % 4];
                std::memcpy(&block.d, group + q4_0_lane_scales_at(nb, b) + 2 * lane, 2);
                return block;
              });
}

void repack_q4_0_quads(const void* src, void* dst, int64_t n, int64_t n_rows) {
  const int64_t nb = n / kQK;
  const size_t row_bytes = static_cast<size_t>(nb) * sizeof(BlockQ4_0);
  const size_t group_bytes = row_bytes * kQ4_0QuadRows;
  for (int64_t g = 0; g < n_rows / kQ4_0QuadRows; ++g) {
    const auto* rows = static_cast<const uint8_t*>(src) + static_cast<size_t>(g) * group_bytes;
    auto* group = static_cast<uint8_t*>(dst) + static_cast<size_t>(g) * group_bytes;
    for (int r = 0; r < kQ4_0QuadRows; ++r) {
      const auto* blocks = reinterpret_cast<const BlockQ4_0*>(rows + static_cast<size_t>(r) * row_bytes);
      for (int64_t b = 0; b < nb; ++b) {
        std::memcpy(group + q4_0_quad_scale_at(b, r), &blocks[b].d, 2);
        for (int j = 0; j < kQK / 2; ++j) group[q4_0_quad_code_at(b, r, j)] = blocks[b].qs[j] ^ kQ4_0QuadFlip;
      }
    }
  }
}

void gemm_q4_0_quads_scalar(int64_t n, const void* x, size_t x_stride, int64_t n_rows_x, const void* y,
                            size_t y_stride, int64_t n_rows_y, float* out, size_t out_stride) {
  gemm_scalar(n, x, x_stride, n_rows_x, y, y_stride, n_rows_y, out, out_stride,
              [](const uint8_t* group, int64_t, int64_t b, int r) {
                BlockQ4_0 block;
                for (int j = 0; j < kQK / 2; ++j) block.qs[j] = group[q4_0_quad_code_at(b, r, j)] ^ kQ4_0QuadFlip;
                std::memcpy(&block.d, group + q4_0_quad_scale_at(b, r), 2);
                return block;
              });
}

}  // namespace peak
