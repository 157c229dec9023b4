// The Q4_0 lane layout (kernels/repack.h): the repacking itself and the scalar
// gemm that reads it.
#include <cstring>

#include "kernels/blocks.h"
#include "kernels/float16.h"
#include "kernels/repack.h"

namespace peak {

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
  const int64_t nb = n / kQK;
  const size_t group_bytes = x_stride * kQ4_0LaneRows;
  for (int64_t r = 0; r < n_rows_x; ++r) {
    const auto* group = static_cast<const uint8_t*>(x) + static_cast<size_t>(r / kQ4_0LaneRows) * group_bytes;
    const int lane = q4_0_lane_row(static_cast<int>(r % kQ4_0LaneRows));  // the order is its own inverse
    for (int64_t ry = 0; ry < n_rows_y; ++ry) {
      const auto* yb = reinterpret_cast<const BlockQ8_0*>(static_cast<const uint8_t*>(y) + static_cast<size_t>(ry) * y_stride);
      float sum = 0.0f;
      for (int64_t b = 0; b < nb; ++b) {
        // Byte j of the block's qs is byte j % 4 of dword j / 4; it holds
        // element j (low nibble) and element j + 16 (high nibble).
        const uint8_t* codes = group + q4_0_lane_codes_at(b) + 4 * lane;
        int dot = 0;
        for (int j = 0; j < kQK / 2; ++j) {
          const uint8_t byte = codes[64 * (j / 4) + j % 4];
          dot += ((byte & 0xf) - 8) * yb[b].qs[j] + ((byte >> 4) - 8) * yb[b].qs[j + 16];
        }
        uint16_t d;
        std::memcpy(&d, group + q4_0_lane_scales_at(nb, b) + 2 * lane, 2);
        sum += static_cast<float>(dot) * fp16_to_fp32(d) * fp16_to_fp32(yb[b].d);
      }
      out[static_cast<size_t>(ry) * out_stride + static_cast<size_t>(r)] = sum;
    }
  }
}

}  // namespace peak
