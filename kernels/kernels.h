// The kernels interface the compute core calls: per weight type, how to turn rows
// into floats and back, and how to take dot products against activations that were
// converted to the type's dot partner. Implementations are chosen once at start-up
// from the CPU's features (see kernels/dispatch.h).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/ggml_type.h"

namespace peak::kernels {

// Dequantize `n` elements (a multiple of the block size) of `src` into `dst`.
using RowToFloatFn = void (*)(const void* src, float* dst, int64_t n);
// Quantize `n` floats (a multiple of the block size) into blocks at `dst`.
using RowFromFloatFn = void (*)(const float* src, void* dst, int64_t n);
// *out = sum_i x[i] * y[i] over `n` elements; x is a weight row in the weight
// type, y an activation row already converted to the weight type's dot partner.
using VecDotFn = void (*)(int64_t n, float* out, const void* x, const void* y);
// Tile product for prefill: for each of `n_rows_x` weight rows (stride x_stride
// bytes) and each of `n_rows_y` activation rows (stride y_stride bytes, partner
// type), out[r_y * out_stride + r_x] = dot(x_row, y_row). Implementations reuse
// each loaded weight block across the activation rows.
// Decode should call this with n_rows_y = 1 rather than vec_dot per row: the
// Q4_0/Q8_0 kernels then read 8 or 16 weight rows per step (one activation
// broadcast serves them all), which is markedly faster than row-by-row.
// A decode step of several sequences (or drafted tokens) should call it once
// with all its rows: up to 8 the x86 kernels read each weight block once for
// all of them (kernels/README.md, "Decode steps of several rows").
// No allocation; stack use stays under 32 KB. Rows may be split across threads
// by calling gemm on disjoint x row ranges (or y row ranges).
using GemmFn = void (*)(int64_t n, const void* x, size_t x_stride, int64_t n_rows_x,
                        const void* y, size_t y_stride, int64_t n_rows_y,
                        float* out, size_t out_stride);

// Weighted sum of rows, the second product of attention (softmax weights times
// the value rows): for each of `n_out` weight rows w (stride w_stride floats),
// out[o * out_stride + i] += sum_j w[o * w_stride + j] * row_j[i] over the
// `n_rows` rows (stride row_stride bytes, `n` elements each, any n). Each loaded
// row element serves several output rows from registers.
using WeightedSumFn = void (*)(int64_t n, const void* rows, size_t row_stride, int64_t n_rows,
                               const float* w, size_t w_stride, int64_t n_out, float* out, size_t out_stride);

// Softmax numerators in place: x[i] = e^(x[i] - max) for n values with
// x[i] <= max (or -inf, which gives 0; a NaN gives NaN, and so does the sum);
// returns the sum of the results.
using ExpSumFn = float (*)(float* x, int64_t n, float max);

// Attention scores scaled in place, x[i] *= scale, for n values; returns the
// largest result, passing over NaN (-inf when n is 0 or every value is NaN or
// -inf): the row maximum ExpSumFn takes.
using ScaleMaxFn = float (*)(float* x, int64_t n, float scale);

// The SwiGLU gate: out[i] = silu(gate[i]) * up[i] = gate[i] / (1 + e^-gate[i]) * up[i]
// for n finite values; out may be gate or up.
using SwiGluFn = void (*)(const float* gate, const float* up, float* out, int64_t n);

// The GeGLU gate (Gemma's gelu_pytorch_tanh): out[i] = gelu_tanh(gate[i]) * up[i]
// with gelu_tanh(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), for n
// finite values; out may be gate or up.
using GeGluFn = void (*)(const float* gate, const float* up, float* out, int64_t n);

// Soft-capping (gemma2's logits): out[i] = cap * tanh(x[i] / cap) for n finite
// values and cap > 0; out may be x.
using SoftcapFn = void (*)(const float* x, float* out, int64_t n, float cap);

// Rewrites `n_rows` rows (a multiple of kRepackRows) of `n` elements, stored
// contiguously at src, into a path's own layout at dst: the same bytes in total,
// so row r (a multiple of kRepackRows) still starts at r times the row size.
// Each group of kRepackRows rows is written from its own rows alone, so the
// groups of one matrix may be repacked separately (threads split it there).
using RepackFn = void (*)(const void* src, void* dst, int64_t n, int64_t n_rows);
// Moves rows [from, from + n) of Q8_0 keys in lanes (kernels/repack.h), rows of
// nb blocks counted from the group at `groups`, to rows [to, to + n), as
// memmove moves rows as stored: the ranges may overlap, and the other rows keep
// their bytes.
using KeyLaneMoveFn = void (*)(void* groups, int64_t from, int64_t to, int64_t n, int64_t nb);
constexpr int64_t kRepackRows = 16;

// Preconditions of every kernel: n is a multiple of the type's block size (the
// caller validated tensor shapes), pointers cover the rows they describe, and
// partner rows were produced by the partner type's from_float (Q8 codes in
// [-127, 127]). Quantizers expect finite inputs.
struct TypeKernels {
  RowToFloatFn to_float = nullptr;     // null: type cannot be read yet
  RowFromFloatFn from_float = nullptr; // null: type cannot be written yet
  GgmlType dot_partner = GgmlType::F32;  // activations are converted to this type
  VecDotFn vec_dot = nullptr;
  GemmFn gemm = nullptr;               // null: fall back to vec_dot per pair
  WeightedSumFn weighted_sum = nullptr;  // the KV cache types: F32, F16, Q8_0, Q4_0
  // F16 only: gemm against F32 rows. Attention keeps its queries in float for
  // F16 keys: rounded to half, a query component that moves by one float ulp
  // (another batch size sums the projections in another order) can jump a whole
  // half ulp, which moved logits by up to 1e-2 between batch sizes.
  GemmFn gemm_f32 = nullptr;
  // Weights only ever multiplied (never read by row) may be repacked once at load
  // time into a layout that gemm_repacked reads faster (see kernels/repack.h):
  // x then starts at a multiple of kRepackRows rows and n_rows_x is one too.
  // Null on paths that read the type as stored.
  RepackFn repack = nullptr;
  GemmFn gemm_repacked = nullptr;
  // Q8_0 only: gemm against rows in the key lane layout (kernels/repack.h), as
  // the KV cache keeps its Q8_0 keys on paths that have it: x at a group
  // start, x_stride the bytes of one row, any n_rows_x (the lanes past it in
  // the last group are read but not stored). Null on the other paths, whose
  // caches keep Q8_0 keys as rows.
  GemmFn gemm_key_lanes = nullptr;
  KeyLaneMoveFn move_key_lanes = nullptr;  // set with gemm_key_lanes
};

// Kernels of the best path for `type` on this CPU (or the PEAK_ISA override);
// never null, but its members are null for types without kernels.
const TypeKernels& kernels_for(GgmlType type);

// Attention's bfloat16 products for tiles of many query rows (prefill): both
// operands rounded to bf16 (round to nearest even, an 8-bit significand), the
// products and sums in fp32, two terms per fp32 lane (AVX512_BF16's vdpbf16ps).
// The B operand is packed by pairs along the summed index: element (k, c) of
// B [K][N] sits at b[(k / 2) * 2 * n_cols + 2 * c + k % 2], so one 32-bit lane
// holds the two terms a column needs from one pair of A's elements.
//
// Rounds n floats to bf16.
using Bf16RoundFn = void (*)(const float* src, uint16_t* dst, int64_t n);
// Packs `n_rows` (even) float rows of n elements (a multiple of 16; row stride
// src_stride floats) as B with k = row, c = element: attention's values [keys]
// [head_dim] for P x V. Row pair p goes to dst + p * 2 * n.
using Bf16PackRowsFn = void (*)(const float* src, size_t src_stride, int64_t n_rows, int64_t n, uint16_t* dst);
// Packs `n_rows` float rows of n elements (even; row stride src_stride floats)
// as B with k = element, c = row: attention's keys [keys][head_dim] for Q x K^T.
// Row j is column j of dst, whose pairs are dst_cols columns apart.
using Bf16PackColumnsFn = void (*)(const float* src, size_t src_stride, int64_t n_rows, int64_t n,
                                   uint16_t* dst, int64_t dst_cols);
// c[r * c_stride + j] (+)= sum_k a[r * a_stride + k] * B[k][j] for r < n_rows,
// j < n_cols (a multiple of 16), k < 2 * n_pairs; A in bf16, B packed as above
// (pair p at b + p * 2 * n_cols); `add` adds to c, else overwrites it.
using Bf16GemmFn = void (*)(int64_t n_pairs, const uint16_t* a, size_t a_stride, int64_t n_rows,
                            const uint16_t* b, int64_t n_cols, float* c, size_t c_stride, bool add);

struct Bf16Kernels {
  Bf16RoundFn round = nullptr;
  Bf16PackRowsFn pack_rows = nullptr;
  Bf16PackColumnsFn pack_columns = nullptr;
  Bf16GemmFn gemm = nullptr;
};

// Attention's fp32 products for tiles of many query rows on paths without
// bf16 ones: the K and V rows of a block converted to float once per tile,
// then a register-tiled product in which each loaded vector of B serves
// several rows of A (the gemm of F16 rows converts each K row again for every
// pair of query rows and reduces every dot product horizontally).
//
// Writes `n_rows` float rows of n elements (row stride src_stride floats)
// transposed: element i of row j goes to dst[i * dst_cols + j]. Attention's
// keys [keys][head_dim] become B [head_dim][keys] for Q x K^T.
using F32TransposeFn = void (*)(const float* src, size_t src_stride, int64_t n_rows, int64_t n, float* dst,
                                int64_t dst_cols);
// c[r * c_stride + j] (+)= sum_k a[r * a_stride + k] * b[k * n_cols + j] for
// r < n_rows, j < n_cols (a multiple of 16), k < n; `add` adds to c, else
// overwrites it. B is row-major: the transposed keys, or the values
// [keys][head_dim] as they are.
using F32GemmFn = void (*)(int64_t n, const float* a, size_t a_stride, int64_t n_rows, const float* b,
                           int64_t n_cols, float* c, size_t c_stride, bool add);

struct F32TileKernels {
  F32TransposeFn transpose = nullptr;
  F32GemmFn gemm = nullptr;
};

// Float kernels that belong to no weight type (attention's softmax, the
// feed-forward gates, soft-capping); every member is set on every path but
// bf16, which only paths with bf16 dot products set (the others keep
// attention in fp32), and f32_tiles, which the x86 vector paths set.
struct FloatKernels {
  ExpSumFn exp_sum = nullptr;
  ScaleMaxFn scale_max = nullptr;
  SwiGluFn swiglu = nullptr;
  GeGluFn geglu = nullptr;
  SoftcapFn softcap = nullptr;
  Bf16Kernels bf16;
  F32TileKernels f32_tiles;  // null on the paths that keep the per-row kernels for every tile
};
const FloatKernels& float_kernels();

// How a path's kernels, and the core's loops around them, adapt to the CPU
// beyond the instructions it has: choices of speed, never of results. Chosen
// once per path from the CPU's vendor (dispatch.cpp), beside the path's
// kernels, whose tables hold only functions.
struct KernelTuning {
  // Whether a decode step's attention asks for its K and V rows ahead in
  // software. Not on AMD cores (x86 paths): there the requests (into L1, a
  // step's rows at a time) hold L1 miss buffers that the L2's stream
  // prefetcher, which keeps more misses in flight, would otherwise fill
  // ahead, and a decode step at depth ran faster without them (Zen 4);
  // instead the AVX-512 kernels of a Q8_0 decode step ask for them into L2,
  // farther ahead and spread over their reads (prefetch_into_l2). Intel
  // cores stalled on the K rows without them.
  bool prefetch_decode_rows = true;
  // x86 paths on AMD cores: the decode GEMVs' prefetches go to L2
  // (prefetcht1) rather than L1, and attention's decode kernels ask for their
  // rows ahead into L2 (x86/stream_prefetch.inc: StreamPrefetch,
  // DecodeRowsPrefetch).
  bool prefetch_into_l2 = false;
};
const KernelTuning& kernel_tuning();

// The scalar twins of the bf16 kernels, which no path's table holds (scalar
// attention stays fp32): what tests compare the SIMD kernels against.
const Bf16Kernels& scalar_bf16_kernels();

// The scalar twins of the fp32 tile kernels: each sum in order of k.
const F32TileKernels& scalar_f32_tile_kernels();

}  // namespace peak::kernels
