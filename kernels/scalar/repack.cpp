// The repacked layouts (kernels/repack.h), Q4_0 lanes, Q4_0 / Q8_0 quads and
// Q8_0 key lanes: the repacking itself and the scalar gemm that reads each.
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <type_traits>

#include "kernels/blocks.h"
#include "kernels/float16.h"
#include "kernels/kernels.h"
#include "kernels/repack.h"

namespace peak::kernels {

namespace {

int block_dot(const BlockQ4_0& x, const BlockQ8_0& y) {
  int dot = 0;
  for (int j = 0; j < kQK / 2; ++j) dot += ((x.qs[j] & 0xf) - 8) * y.qs[j] + ((x.qs[j] >> 4) - 8) * y.qs[j + 16];
  return dot;
}
int block_dot(const BlockQ8_0& x, const BlockQ8_0& y) {
  int dot = 0;
  for (int j = 0; j < kQK; ++j) dot += x.qs[j] * y.qs[j];
  return dot;
}

// The gemm over a layout of 16-row groups, given the function that reads row r's
// block b back out of its group of nb blocks: per row, per block in order,
// sum += float(dot) * d_x * d_y, as the scalar Q4_0 and Q8_0 kernels add.
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
        const auto xb = block_at(group, nb, b, r);
        sum += static_cast<float>(block_dot(xb, yb[b])) * fp16_to_fp32(xb.d) * fp16_to_fp32(yb[b].d);
      }
      out[static_cast<size_t>(ry) * out_stride + static_cast<size_t>(rx)] = sum;
    }
  }
}

// Calls write(group, r, b, block) with each block b of each row r (0..15) of
// every 16-row group, group pointing at the group's first byte in dst.
template <typename Block, class Write>
void for_each_block(const void* src, void* dst, int64_t n, int64_t n_rows, Write write) {
  const int64_t nb = n / kQK;
  const size_t row_bytes = static_cast<size_t>(nb) * sizeof(Block);
  const size_t group_bytes = row_bytes * kRepackRows;
  for (int64_t g = 0; g < n_rows / kRepackRows; ++g) {
    const auto* rows = static_cast<const uint8_t*>(src) + static_cast<size_t>(g) * group_bytes;
    auto* group = static_cast<uint8_t*>(dst) + static_cast<size_t>(g) * group_bytes;
    for (int r = 0; r < kRepackRows; ++r) {
      const auto* blocks = reinterpret_cast<const Block*>(rows + static_cast<size_t>(r) * row_bytes);
      for (int64_t b = 0; b < nb; ++b) write(group, r, b, blocks[b]);
    }
  }
}

// The quad layout of blocks with code bytes `qs`, each XOR flip: a row's block
// goes as whole dwords (4 consecutive code bytes stay together in the layout),
// one to each vector of its quad.
template <typename Block>
void repack_quads(const void* src, void* dst, int64_t n, int64_t n_rows, uint8_t flip) {
  for_each_block<Block>(src, dst, n, n_rows, [flip](uint8_t* group, int r, int64_t b, const Block& block) {
    constexpr int kCodeBytes = static_cast<int>(sizeof(Block::qs));
    const uint32_t flips = flip * 0x01010101u;
    std::memcpy(group + quad_scale_at(kCodeBytes, b, r), &block.d, 2);
    for (int j = 0; j < kCodeBytes; j += 4) {
      uint32_t dword;
      std::memcpy(&dword, block.qs + j, 4);
      dword ^= flips;
      std::memcpy(group + quad_code_at(kCodeBytes, b, r, j), &dword, 4);
    }
  });
}

// Row r's block b read back out of a quad group.
template <typename Block>
Block quad_block(const uint8_t* group, int64_t b, int r, uint8_t flip) {
  using Code = std::remove_extent_t<decltype(Block::qs)>;
  constexpr size_t kCodeBytes = sizeof(Block::qs);
  Block block;
  for (int j = 0; j < static_cast<int>(kCodeBytes); ++j) {
    block.qs[j] = static_cast<Code>(group[quad_code_at(kCodeBytes, b, r, j)] ^ flip);
  }
  std::memcpy(&block.d, group + quad_scale_at(kCodeBytes, b, r), 2);
  return block;
}

// Blocks of a group's 16 rows copied together: 16 x 64 x 18 bytes = 18 KiB of
// stack, read as 16 sequential runs. Gathering a block's 16 rows straight from
// memory instead reads 16 streams at once, about half as fast when the weights
// are not in the caches (as at load time).
constexpr int64_t kStagedBlocks = 64;

// Writes the codes of `block` (one block of the group's 16 rows, row r at
// r * row_bytes) to `codes`. Lanes 4q .. 4q + 3 hold rows q, q + 4, q + 8,
// q + 12, so their dwords k are the 16 bytes at 64 * k + 16 * q: a 4 x 4
// transpose of dwords per four rows, done on the dword pairs of two 8-byte
// halves (little-endian, as GGUF and every host peak supports).
void transpose_codes(const uint8_t* block, size_t row_bytes, uint8_t* codes) {
  constexpr uint64_t kLow = 0xffffffffu;
  for (int q = 0; q < 4; ++q) {
    uint64_t lo[4], hi[4];  // dwords 0-1 and 2-3 of the rows of lanes 4q .. 4q + 3
    for (int i = 0; i < 4; ++i) {
      const uint8_t* qs = block + static_cast<size_t>(q4_0_lane_row(4 * q + i)) * row_bytes + offsetof(BlockQ4_0, qs);
      std::memcpy(&lo[i], qs, 8);
      std::memcpy(&hi[i], qs + 8, 8);
    }
    const uint64_t pieces[4][2] = {
        {(lo[0] & kLow) | (lo[1] << 32), (lo[2] & kLow) | (lo[3] << 32)},
        {(lo[0] >> 32) | (lo[1] & ~kLow), (lo[2] >> 32) | (lo[3] & ~kLow)},
        {(hi[0] & kLow) | (hi[1] << 32), (hi[2] & kLow) | (hi[3] << 32)},
        {(hi[0] >> 32) | (hi[1] & ~kLow), (hi[2] >> 32) | (hi[3] & ~kLow)},
    };
    for (int k = 0; k < 4; ++k) std::memcpy(codes + 64 * k + 16 * q, pieces[k], 16);
  }
}

}  // namespace

void repack_q4_0_lanes(const void* src, void* dst, int64_t n, int64_t n_rows) {
  const int64_t nb = n / kQK;
  const size_t row_bytes = static_cast<size_t>(nb) * sizeof(BlockQ4_0);
  const size_t group_bytes = row_bytes * kQ4_0LaneRows;
  uint8_t staged[kQ4_0LaneRows * kStagedBlocks * sizeof(BlockQ4_0)];
  for (int64_t g = 0; g < n_rows / kQ4_0LaneRows; ++g) {
    const auto* rows = static_cast<const uint8_t*>(src) + static_cast<size_t>(g) * group_bytes;
    auto* group = static_cast<uint8_t*>(dst) + static_cast<size_t>(g) * group_bytes;
    for (int64_t b0 = 0; b0 < nb; b0 += kStagedBlocks) {
      const int64_t n_staged = std::min(kStagedBlocks, nb - b0);
      const size_t staged_row = static_cast<size_t>(n_staged) * sizeof(BlockQ4_0);
      for (int r = 0; r < kQ4_0LaneRows; ++r) {
        const uint8_t* run = rows + r * row_bytes + static_cast<size_t>(b0) * sizeof(BlockQ4_0);
        std::memcpy(staged + r * staged_row, run, staged_row);
      }
      for (int64_t i = 0; i < n_staged; ++i) {
        const uint8_t* block = staged + static_cast<size_t>(i) * sizeof(BlockQ4_0);
        transpose_codes(block, staged_row, group + q4_0_lane_codes_at(b0 + i));
        uint16_t scales[kQ4_0LaneRows];
        for (int lane = 0; lane < kQ4_0LaneRows; ++lane) {
          std::memcpy(&scales[lane], block + static_cast<size_t>(q4_0_lane_row(lane)) * staged_row, sizeof(uint16_t));
        }
        std::memcpy(group + q4_0_lane_scales_at(nb, b0 + i), scales, sizeof(scales));
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
  repack_quads<BlockQ4_0>(src, dst, n, n_rows, kQ4_0QuadFlip);
}
void repack_q8_0_quads(const void* src, void* dst, int64_t n, int64_t n_rows) {
  repack_quads<BlockQ8_0>(src, dst, n, n_rows, 0);
}

void gemm_q4_0_quads_scalar(int64_t n, const void* x, size_t x_stride, int64_t n_rows_x, const void* y,
                            size_t y_stride, int64_t n_rows_y, float* out, size_t out_stride) {
  gemm_scalar(n, x, x_stride, n_rows_x, y, y_stride, n_rows_y, out, out_stride,
              [](const uint8_t* group, int64_t, int64_t b, int r) { return quad_block<BlockQ4_0>(group, b, r, kQ4_0QuadFlip); });
}
void gemm_q8_0_quads_scalar(int64_t n, const void* x, size_t x_stride, int64_t n_rows_x, const void* y,
                            size_t y_stride, int64_t n_rows_y, float* out, size_t out_stride) {
  gemm_scalar(n, x, x_stride, n_rows_x, y, y_stride, n_rows_y, out, out_stride,
              [](const uint8_t* group, int64_t, int64_t b, int r) { return quad_block<BlockQ8_0>(group, b, r, 0); });
}

void put_q8_0_key_lane(void* group, int lane, const void* src, int64_t nb) {
  auto* g = static_cast<uint8_t*>(group);
  const auto* blocks = static_cast<const BlockQ8_0*>(src);
  for (int64_t b = 0; b < nb; ++b) {
    uint8_t* record = g + static_cast<size_t>(b) * kQ8_0KeyLaneRecordBytes;
    for (int k = 0; k < kQK / 4; ++k) std::memcpy(record + 64 * k + 4 * lane, blocks[b].qs + 4 * k, 4);
    std::memcpy(record + kQ8_0KeyLaneCodeBytes + 2 * lane, &blocks[b].d, 2);
  }
}

void move_q8_0_key_lanes_scalar(void* groups, int64_t from, int64_t to, int64_t n, int64_t nb) {
  auto* base = static_cast<uint8_t*>(groups);
  const size_t group_bytes = static_cast<size_t>(nb) * kQ8_0KeyLaneRecordBytes;
  const auto group_of = [&](int64_t row) { return base + static_cast<size_t>(row / kQ8_0KeyLaneRows) * group_bytes; };
  BlockQ8_0 row[kQ8_0KeyLaneMaxBlocks];
  // In the order that reads each row before it is overwritten.
  for (int64_t i = 0; i < n; ++i) {
    const int64_t j = to < from ? i : n - 1 - i;
    get_q8_0_key_lane(group_of(from + j), static_cast<int>((from + j) % kQ8_0KeyLaneRows), row, nb);
    put_q8_0_key_lane(group_of(to + j), static_cast<int>((to + j) % kQ8_0KeyLaneRows), row, nb);
  }
}

void get_q8_0_key_lane(const void* group, int lane, void* dst, int64_t nb) {
  const auto* g = static_cast<const uint8_t*>(group);
  auto* blocks = static_cast<BlockQ8_0*>(dst);
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* record = g + static_cast<size_t>(b) * kQ8_0KeyLaneRecordBytes;
    for (int k = 0; k < kQK / 4; ++k) std::memcpy(blocks[b].qs + 4 * k, record + 64 * k + 4 * lane, 4);
    std::memcpy(&blocks[b].d, record + kQ8_0KeyLaneCodeBytes + 2 * lane, 2);
  }
}

}  // namespace peak::kernels
