// The repacked layouts (kernels.h, TypeKernels::repack): each path reads one,
// and each has a scalar repack and a scalar twin of its gemm here, built on
// every platform so any build's tests prove them against the scalar kernels of
// their type.
//
// ---- Row lanes (x86)
//
// The layout the x86 gemms read without transposing: AVX-512 a whole group per zmm,
// AVX2 and AVX-VNNI each group as two tiles of 8 lanes. Sixteen consecutive rows
// form a group; a group of rows with nb blocks each is nb * 288 bytes, exactly
// the bytes of its 16 rows as stored, so row r of a repacked matrix (r a
// multiple of 16) still starts at r * row bytes:
//
//   codes: nb * 256 bytes; block b at 256 * b: dword k (0..3) of lane l at
//          64 * k + 4 * l holds bytes qs[4k .. 4k+3] of row q4_0_lane_row(l)'s block b
//   scales: nb * 32 bytes after the codes; block b at 32 * b: the fp16 d of row
//          q4_0_lane_row(l) at 2 * l
//
// The lane order (lane l holds row 4 * (l % 4) + l / 4) is the one a 4x4 dword
// transpose within each 128-bit lane produces, which is what the same gemm
// produces from rows as stored: both layouts then share one multiply and one
// store, and give bit-identical results.
#pragma once

#include <cstddef>
#include <cstdint>

namespace peak::kernels {

constexpr int kQ4_0LaneRows = 16;
// The row lane l holds; the order is its own inverse, so it also gives the lane
// that holds row l.
constexpr int q4_0_lane_row(int lane) { return 4 * (lane % 4) + lane / 4; }

// Bytes of one block's codes (4 x 64) and scales (16 x fp16) in a group.
constexpr size_t kQ4_0LaneCodeBytes = kQ4_0LaneRows * 16;
constexpr size_t kQ4_0LaneScaleBytes = kQ4_0LaneRows * 2;
// Where block b's codes and scales start inside a group of nb blocks.
constexpr size_t q4_0_lane_codes_at(int64_t b) { return static_cast<size_t>(b) * kQ4_0LaneCodeBytes; }
constexpr size_t q4_0_lane_scales_at(int64_t nb, int64_t b) {
  return static_cast<size_t>(nb) * kQ4_0LaneCodeBytes + static_cast<size_t>(b) * kQ4_0LaneScaleBytes;
}

// Rewrites n_rows rows (a multiple of 16) of n elements (a multiple of 32) of
// Q4_0, stored contiguously at src, into the lane layout at dst (same size;
// src and dst must not overlap).
void repack_q4_0_lanes(const void* src, void* dst, int64_t n, int64_t n_rows);

// The scalar twin of the SIMD gemm over the lane layout (a GemmFn): x is a
// repacked matrix at a group start, n_rows_x a multiple of 16, y Q8_0 rows.
// Adds each row's blocks in order, as the scalar Q4_0 kernels do, so it equals
// their result bit for bit.
void gemm_q4_0_lanes_scalar(int64_t n, const void* x, size_t x_stride, int64_t n_rows_x, const void* y,
                            size_t y_stride, int64_t n_rows_y, float* out, size_t out_stride);

// ---- Q8_0 key lanes (the KV cache's Q8_0 keys, runtime/kv_cache.h)
//
// Keys stored so that the x86 lane gemm reads sixteen of them as whole vectors
// at every decode step instead of transposing them (which took as long as the
// rest of a decode step's attention at depth). Sixteen consecutive rows (cells)
// form a group; a group with nb blocks per row is nb records of 544 bytes, the
// bytes of its 16 rows as stored, so row r (a multiple of 16) still starts at
// r * row bytes; record b at 544 * b:
//
//   codes:  512 bytes: dword k (0..7) of lane l at 64 * k + 4 * l holds
//           qs[4k .. 4k+3] of row l's block b
//   scales: 32 bytes at 512: the fp16 d of row l's block b at 2 * l
//
// Unlike the weights' lanes, lane l holds row l: a cache writes and reads one
// row at a time, and scores of a group come out in key order.
constexpr int kQ8_0KeyLaneRows = 16;
constexpr size_t kQ8_0KeyLaneCodeBytes = 512;
constexpr size_t kQ8_0KeyLaneRecordBytes = kQ8_0KeyLaneCodeBytes + 2 * kQ8_0KeyLaneRows;
// Rows of keys in lanes have at most this many blocks (heads of up to 512
// values): whoever reads one out keeps it on the stack.
constexpr int64_t kQ8_0KeyLaneMaxBlocks = 16;

// Writes one row of nb Q8_0 blocks (src) into lane `lane` of the group at
// `group`, and reads it back (dst).
void put_q8_0_key_lane(void* group, int lane, const void* src, int64_t nb);
void get_q8_0_key_lane(const void* group, int lane, void* dst, int64_t nb);
// The scalar twin of TypeKernels::move_key_lanes: row by row, through the two above.
void move_q8_0_key_lanes_scalar(void* groups, int64_t from, int64_t to, int64_t n, int64_t nb);

// ---- Row quads (arm64: the NEON, dotprod and i8mm paths), Q4_0 and Q8_0
//
// Built for 128-bit registers. With c code bytes per row and block (Q4_0 16,
// Q8_0 32), a group of 16 rows with nb blocks each is nb records of 32 + 16 c
// bytes (16 blocks' bytes: row r of a repacked matrix, r a multiple of 16,
// still starts at r * row bytes); the record of block b starts at b times that:
//
//   scales: 32 bytes: the fp16 d of row r at 2 * r
//   codes:  from 32: quad s (rows 4s .. 4s+3) at 32 + 4 c s; its vector k
//           (0 .. c/4 - 1) at 16 k holds, in dword i, code bytes 4k .. 4k+3 of
//           row 4s + i's block (Q4_0: qs, each XOR 0x88; Q8_0: qs)
//
// One vector is thus four rows by 4 bytes: an SDOT by lane multiplies all four by
// 4 broadcast activation bytes. Q4_0's XOR turns each nibble q into the 4-bit
// two's complement of q - 8, so `shl #4` (low nibbles: elements 4k .. 4k+3) and
// `and #0xf0` (high nibbles: elements 16+4k ..) give 16 (q - 8) as int8 in one
// op each; the factor 16 leaves the int32 dot exact and comes off exactly in the
// int-to-float conversion. Zipping the dwords of vectors k and k+1 (k even)
// gives the 2x8 SMMLA operands of rows (4s, 4s+1) and (4s+2, 4s+3).
constexpr int kQuadRows = 16;
constexpr size_t kQuadScaleBytes = kQuadRows * 2;
constexpr size_t kQ4_0QuadCodeBytes = 16;
constexpr size_t kQ8_0QuadCodeBytes = 32;
constexpr uint8_t kQ4_0QuadFlip = 0x88;
constexpr size_t quad_record_bytes(size_t code_bytes) { return kQuadScaleBytes + kQuadRows * code_bytes; }
// Where code byte j of row r's block b lies in its group's bytes.
constexpr size_t quad_code_at(size_t code_bytes, int64_t b, int r, int j) {
  return static_cast<size_t>(b) * quad_record_bytes(code_bytes) + kQuadScaleBytes + 4 * code_bytes * static_cast<size_t>(r / 4) +
         16 * static_cast<size_t>(j / 4) + 4 * static_cast<size_t>(r % 4) + static_cast<size_t>(j % 4);
}
constexpr size_t quad_scale_at(size_t code_bytes, int64_t b, int r) {
  return static_cast<size_t>(b) * quad_record_bytes(code_bytes) + 2 * static_cast<size_t>(r);
}

// Rewrites n_rows rows (a multiple of 16) of n elements (a multiple of 32) of
// Q4_0 or Q8_0, stored contiguously at src, into the quad layout at dst (same
// size; src and dst must not overlap).
void repack_q4_0_quads(const void* src, void* dst, int64_t n, int64_t n_rows);
void repack_q8_0_quads(const void* src, void* dst, int64_t n, int64_t n_rows);

// The scalar twins of the arm64 gemms over the quad layouts (GemmFns): x is a
// repacked matrix at a group start, n_rows_x a multiple of 16, y Q8_0 rows.
// Per row, per block in order, sum += float(dot) * d_x * d_y, as the scalar
// Q4_0 and Q8_0 kernels do, so each equals their result bit for bit.
void gemm_q4_0_quads_scalar(int64_t n, const void* x, size_t x_stride, int64_t n_rows_x, const void* y,
                            size_t y_stride, int64_t n_rows_y, float* out, size_t out_stride);
void gemm_q8_0_quads_scalar(int64_t n, const void* x, size_t x_stride, int64_t n_rows_x, const void* y,
                            size_t y_stride, int64_t n_rows_y, float* out, size_t out_stride);

}  // namespace peak::kernels
