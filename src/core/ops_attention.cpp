// Fused attention: out = softmax(Q K^T * scale) V, causal or not, optionally
// within a sliding window and with soft-capped scores, with an online softmax
// over blocks of keys, so the [n_kv, n_tokens, n_head] score matrix is never
// stored and K and V are read straight from the cache in F32, F16, Q8_0 or Q4_0.
//
// Work is tiled like a matrix product, because attention over a long prompt is
// two of them. A tile is a few query tokens times the query heads that share one
// kv head (grouped-query attention): its R query rows meet every block of keys
// together, so each K and V row is read and converted once per tile instead of
// once per query row.
// - Scores: the tile's query rows are converted once to K's dot partner (Q8_0
//   for Q8_0/Q4_0 keys; F16 and F32 keys take float queries, see
//   TypeKernels::gemm_f32) and one call of the kernels' gemm gives the [R][keys]
//   scores of a block: integer dots on the best SIMD path, each K row reused
//   across the R queries.
// - Values: the kernels' weighted sum adds P [R][keys] x V [keys][head_dim] to
//   the tile's accumulators straight from the cache rows (F32, F16, Q8_0 or
//   Q4_0), each V element loaded and converted once per 4 query rows.
// - bf16 (paths with bf16 dot products, kernels' Bf16Kernels): a tile of more
//   than kStreamingRows rows (prefill) packs each block of V rows, and of F16
//   or F32 K rows, to bf16 once and multiplies them with its bf16 softmax
//   weights and queries, two products per fp32 lane: twice the fp32 rate.
//   Such tiles hold up to 256 rows, not 32: an eighth of the conversions per row,
//   and ask for their K and V rows ahead (kBf16PrefetchRows).
//   Q8_0/Q4_0 keys keep their integer scores. The rounding to bf16 (8-bit
//   significand, relative error <= 2^-8 per operand) moves a score by at
//   most 2^-7 * scale * sum_i |q_i k_i| and an output by at most 2^-7 of the
//   largest |v| plus the change of the weights (tests/core/test_attention.cpp
//   asserts that bound); measured against the double-precision reference:
//   see the same test. Decode tiles stay fp32, and so do sequences side by
//   side (bf16_kernels says why).
// - fp32 tiles (paths without bf16 products but with kernels' F32TileKernels):
//   a prefill tile converts each block of F16 /
//   F32 K rows to floats once and transposes it (head_dim x keys), and each
//   block of V rows (any cache type) to float rows, then multiplies both in
//   register tiles: no conversion per query row and no horizontal sums.
//   Q8_0/Q4_0 keys keep their integer scores. Tiles hold up to 256 rows, as
//   bf16 ones do.
//   Heads of any size take them: values in whole vectors of 16 columns, a
//   head of another size (SigLIP's 72) has its value rows and accumulators
//   padded with zeros (value_width).
// - Softmax: per query row a running max and sum; a block rescales the row's
//   accumulator once when its maximum grows; the scaling and block maximum,
//   the exponentials (and the soft-cap's tanh) come from the kernels'
//   vectorised float kernels.
// - Masks: a tile reads only the keys some row of it sees, from its first
//   token's first visible key (0 without a window) to its last token's last;
//   keys outside a row's own range inside those blocks get weight 0. With a
//   sliding window a decode step over a long cache thus reads only the window,
//   and a prefill costs O(n_tokens x window).
// Memory: the KV cache is head-major (runtime/kv_cache.h), so a tile's K and
// V rows are each one contiguous stream (nb[2] = one row); a decode tile asks
// for them ahead in small steps where that helps (score_streaming). Q8_0 keys
// sit in the key lane layout (Tensor::key_lanes, kernels/repack.h): groups of
// 16 keys whose codes the score gemm reads as whole vectors; blocks of keys and
// chunks (below) therefore end at multiples of 16 keys.
// Threads: tasks are (tile, kv head) pairs dealt out round-robin, which balances
// the causal triangle (later tiles see more keys). When there are fewer tasks
// than threads (decode with few kv heads) each tile's key range is split into
// chunks too; each chunk leaves a partial (max, sum, unnormalised output) and
// the partials are merged after a barrier. A row may see no key of a chunk
// (the early rows of a causal tile); its partial then has max -inf and sum 0.
#include <cmath>
#include <cstring>
#include <limits>

#include "core/ops.h"
#include "kernels/kernels.h"
#include "kernels/repack.h"

namespace peak::core {

using kernels::Bf16Kernels;
using kernels::ExpSumFn;
using kernels::F32TileKernels;
using kernels::float_kernels;
using kernels::GemmFn;
using kernels::GgmlType;
using kernels::kernel_tuning;
using kernels::kernels_for;
using kernels::kQ8_0KeyLaneRows;
using kernels::RowFromFloatFn;
using kernels::RowToFloatFn;
using kernels::ScaleMaxFn;
using kernels::SoftcapFn;
using kernels::TypeKernels;
using kernels::WeightedSumFn;

namespace {

constexpr int64_t kMinKeysPerChunk = 64;
constexpr int64_t kMaxKeyChunks = 64;
// Keys scored and summed per step: 256 in a tile of more than kStreamingRows
// rows, whose scores, weights and packed block sit in L2 beside the tile's
// state (kPackedTileRows); measured faster than 128 at depth 4096
// (qwen3-0.6b), by a little with F16 caches and more with Q8_0.
// 512 in a decode step that leaves its rows to the hardware prefetchers
// (KernelTuning::prefetch_decode_rows), whose few rows need little room;
// measured faster than 128 and 256 with 2 rows of 128 values: a block's fixed
// costs and the switches between the K and V streams come a quarter as
// often. A decode step that asks for its V rows while scoring keeps 128
// (longer blocks unmeasured there): after a longer block's keys those rows
// would have left L1. All end at multiples of 16 keys (whole groups of keys
// in lanes).
constexpr int64_t kKeysPerBlock = 256;
constexpr int64_t kPrefetchingKeysPerBlock = 128;
constexpr int64_t kStreamingKeysPerBlock = 512;
// A tile of at most this many query rows (a decode step: one token's group of
// query heads) reads its K and V rows as streams (score_streaming).
constexpr int64_t kStreamingRows = 8;
constexpr int64_t kTileRows = 32;       // wanted query rows per tile
// With bf16 or fp32 tile products a block of K and V is converted and packed
// once per tile, and every tile streams its kv head's cache: 8 times the rows
// cut both to an eighth per row. Measured faster than 64 and than 128 rows at
// depth 4096, where the two threads' tiles also share the last-level cache's
// bandwidth. A tile's queries, scores, weights, packed block and state (about
// 650 KB per thread at head_dim 128 with blocks of 256 keys) still fit a 1 MB
// L2.
constexpr int64_t kPackedTileRows = 256;
constexpr float kMinusInfinity = -std::numeric_limits<float>::infinity();

// A pass of at most this many tokens (a token with the tokens drafted after
// it) attends token by token, each exactly as its own one-token step would:
// the same per-row fp32 kernels, blocks and key chunks, so the same bits. A
// token verified with its draft must get the logits its own step gives: one
// float ulp of difference in an attention output can move a Q8 code of the
// next projection's activations, and that moved logits by about 3e-2 and
// flipped near ties (greedy with drafts wrote another text than without).
// A token's own keys then come from L1 or L2 for the next token of the pass.
constexpr int64_t kFewTokens = 8;
bool few_tokens(const Tensor& node) { return node.src[0]->ne[2] <= kFewTokens; }

// The bf16 kernels when this path has them, the head fits their 32-element
// packing, the pass is not a few tokens' and its sequences are not side by
// side; null otherwise (fp32 attention). Sequences side by side (key ranges: the texts of an embedding or
// rerank pass) must each get what they get alone, but whether a tile packs
// depends on its row count, which the batch-mates set: bf16 rounding would
// move a text's vector by about 1e-3 with the texts beside it, fp32 products
// (packed tiles or streams) by the order of float sums only.
const Bf16Kernels* bf16_kernels(const Tensor& node) {
  const Bf16Kernels& k = float_kernels().bf16;
  const bool side_by_side = node.src[3] != nullptr;
  return k.gemm != nullptr && node.src[0]->ne[0] % 32 == 0 && !side_by_side && !few_tokens(node) ? &k : nullptr;
}

// The fp32 tile kernels when this path has them, has no bf16 ones for this
// node and the pass is not a few tokens'; null otherwise (per-row kernels).
const F32TileKernels* f32_tile_kernels(const Tensor& node) {
  const F32TileKernels& k = float_kernels().f32_tiles;
  return k.gemm != nullptr && bf16_kernels(node) == nullptr && !few_tokens(node) ? &k : nullptr;
}

// Whether prefill tiles convert each block of K and V once and multiply it
// with a packed product (bf16 or fp32).
bool packed_tiles(const Tensor& node) { return bf16_kernels(node) != nullptr || f32_tile_kernels(node) != nullptr; }

// The packed products take values in whole vectors of 16 columns: a head of
// another size (fp32 tiles only) has its value rows and output accumulators
// padded with zero columns to the next multiple of 16, which no output row
// reads.
int64_t value_width(const Tensor& node) {
  const int64_t d = node.src[0]->ne[0];
  return packed_tiles(node) ? (d + 15) / 16 * 16 : d;
}

struct AttentionShape {
  int64_t head_dim, n_head, n_tokens, n_head_kv, n_kv, group;
  int64_t value_width;  // head_dim, or the padded width of packed tiles' values and accumulators (value_width())
  int64_t window;       // > 0: sliding window (params.i[1])
  bool token_steps;     // a few tokens' pass: each token a tile, attending as its own step (kFewTokens)
  int64_t tile_tokens;  // query tokens per tile
  int64_t tile_rows;    // tile_tokens * group
  int64_t keys_per_block;

  explicit AttentionShape(const Tensor& node) : AttentionShape(node, node.src[0]->ne[2]) {}

  // The node's attention for n_tokens query tokens.
  AttentionShape(const Tensor& node, int64_t query_tokens)
      : head_dim(node.src[0]->ne[0]),
        n_head(node.src[0]->ne[1]),
        n_tokens(query_tokens),
        n_head_kv(node.src[1]->ne[1]),
        n_kv(node.src[1]->ne[2]),
        group(n_head / n_head_kv),
        value_width(core::value_width(node)),
        window(node.params.i[1]),
        token_steps(few_tokens(node)),
        tile_tokens(
            token_steps
                ? 1
                : std::max<int64_t>(1, std::min(n_tokens, (packed_tiles(node) ? kPackedTileRows : kTileRows) / group))),
        tile_rows(tile_tokens * group),
        keys_per_block(tile_rows > kStreamingRows             ? kKeysPerBlock
                       : kernel_tuning().prefetch_decode_rows ? kPrefetchingKeysPerBlock
                                                              : kStreamingKeysPerBlock) {}

  int64_t tiles() const { return (n_tokens + tile_tokens - 1) / tile_tokens; }
  int64_t units() const { return tiles() * n_head_kv; }  // (tile, kv head) pairs
  // A unit's kv head and its tile's first token. Token steps go through a kv
  // head's tokens one after the other, so the next token finds the head's K
  // and V rows in L2; tiles go through a tile's heads.
  int64_t unit_kv_head(int64_t unit) const { return token_steps ? unit / tiles() : unit % n_head_kv; }
  int64_t unit_first_token(int64_t unit) const {
    return (token_steps ? unit % tiles() : unit / n_head_kv) * tile_tokens;
  }

  // The most keys a tile reads: every cell, or its first token's window and
  // one more cell per further token.
  int64_t tile_key_span() const { return window > 0 ? std::min(n_kv, window + tile_tokens - 1) : n_kv; }

  // Key chunks per unit so that every thread has work, keeping chunks long
  // enough that merging them stays cheap. With token steps: the most any
  // token's step takes (token_chunks of the longest span), as the units of
  // one token's step.
  int64_t key_chunks(int n_threads) const { return chunks_over(n_threads, tile_key_span()); }
  // With token steps: the chunks of the step of a token that sees `span` keys.
  int64_t token_chunks(int n_threads, int64_t span) const { return chunks_over(n_threads, span); }

 private:
  int64_t chunks_over(int n_threads, int64_t span) const {
    const int64_t units_sharing = token_steps ? n_head_kv : units();
    if (units_sharing >= n_threads) return 1;
    const int64_t wanted = (n_threads + units_sharing - 1) / units_sharing;
    return std::max<int64_t>(1, std::min({wanted, span / kMinKeysPerChunk, kMaxKeyChunks}));
  }
};

// Running softmax state of a tile's query rows: unnormalised outputs
// [rows][value_width], then the running max [rows] and sum [rows].
struct TileState {
  float* outputs;
  float* max;
  float* sum;
};

size_t tile_state_bytes(const AttentionShape& s) {
  return round_up_to_cache_line(static_cast<size_t>(s.tile_rows * (s.value_width + 2)) * sizeof(float));
}

TileState tile_state_at(char* memory, const AttentionShape& s) {
  auto* outputs = reinterpret_cast<float*>(memory);
  const int64_t values = s.tile_rows * s.value_width;
  return {outputs, outputs + values, outputs + values + s.tile_rows};
}

// Work memory per thread: [queries in the score kernel's query type, R rows]
// [P: R x block floats][row rescale factors][a tile state], and for packed
// tiles [kBf16Rows dequantized K or V rows][a packed block of K or V], bf16
// tiles then [P in bf16: R x block]; then, when keys are split, one tile
// state per (unit, chunk) for the merge.
struct AttentionWork {
  size_t query_row_bytes;
  size_t weights_offset;
  size_t rescale_offset;
  size_t state_offset;
  size_t bf16_rows_offset;
  size_t bf16_packed_offset;
  size_t bf16_weights_offset;
  size_t lane_scores_offset;  // keys in lanes: scores from a group's first key [R][lane_score_stride]
  size_t per_thread_bytes;
  size_t partials_offset;
  size_t total_bytes;
};

// K's score gemm and the type the queries take for it: float rows when K's
// kernels can multiply them, else K's dot partner.
struct ScoreKernel {
  GgmlType query_type;
  GemmFn gemm;
};
ScoreKernel score_kernel(const TypeKernels& k_kernels) {
  if (k_kernels.gemm_f32 != nullptr) return {GgmlType::F32, k_kernels.gemm_f32};
  return {k_kernels.dot_partner, k_kernels.gemm};
}

// K and V rows are dequantized and packed to bf16 this many at a time.
constexpr int64_t kBf16Rows = 16;

// Keys in lanes (Tensor::key_lanes) are scored a group of 16 at a time; a
// block whose first key is not a group's first is scored from that group's
// first into scratch rows of this stride.
constexpr int64_t kLaneGroup = kQ8_0KeyLaneRows;
int64_t lane_score_stride(const AttentionShape& s) { return s.keys_per_block + kLaneGroup; }

AttentionWork attention_work(const Tensor& node, const AttentionShape& s, int n_threads) {
  const GgmlType partner = score_kernel(kernels_for(node.src[1]->type)).query_type;
  const auto floats = [](int64_t n) { return round_up_to_cache_line(static_cast<size_t>(n) * sizeof(float)); };
  AttentionWork w{};
  w.query_row_bytes = round_up_to_cache_line(
      static_cast<size_t>(s.head_dim / type_block_elements(partner)) * type_block_bytes(partner));
  w.weights_offset = w.query_row_bytes * static_cast<size_t>(s.tile_rows);
  w.rescale_offset = w.weights_offset + floats(s.tile_rows * s.keys_per_block);
  w.state_offset = w.rescale_offset + floats(s.tile_rows);
  w.bf16_rows_offset = w.state_offset + tile_state_bytes(s);
  w.bf16_packed_offset = w.bf16_rows_offset;
  w.bf16_weights_offset = w.bf16_rows_offset;
  w.per_thread_bytes = w.bf16_rows_offset;
  const bool packs = s.tile_rows > kStreamingRows;  // decode steps never pack
  if (packs && bf16_kernels(node) != nullptr) {
    const auto halves = [](int64_t n) { return round_up_to_cache_line(static_cast<size_t>(n) * sizeof(uint16_t)); };
    w.bf16_packed_offset = w.bf16_rows_offset + floats(kBf16Rows * s.value_width);
    w.bf16_weights_offset = w.bf16_packed_offset + halves(s.keys_per_block * s.value_width);
    w.per_thread_bytes = w.bf16_weights_offset + halves(s.tile_rows * s.keys_per_block);
  } else if (packs && f32_tile_kernels(node) != nullptr) {
    w.bf16_packed_offset = w.bf16_rows_offset + floats(kBf16Rows * s.value_width);
    w.per_thread_bytes = w.bf16_packed_offset + floats(s.keys_per_block * s.value_width);
  }
  w.lane_scores_offset = w.per_thread_bytes;
  if (node.src[1]->key_lanes) w.per_thread_bytes += floats(s.tile_rows * lane_score_stride(s));
  w.partials_offset = w.per_thread_bytes * static_cast<size_t>(n_threads);
  const int64_t chunks = s.key_chunks(n_threads);
  const size_t partials = chunks > 1 ? static_cast<size_t>(s.units() * chunks) * tile_state_bytes(s) : 0;
  w.total_bytes = w.partials_offset + partials;
  return w;
}

bool has_nan(const float* x, int64_t n) {
  for (int64_t j = 0; j < n; ++j) {
    if (std::isnan(x[j])) return true;
  }
  return false;
}

// The inputs of one attention node and the kernels that read them.
struct Attention {
  const Tensor& q;
  const Tensor& k;
  const Tensor& v;
  float scale;
  float softcap;  // > 0: scores become softcap * tanh(scores / softcap)
  bool causal;
  const int32_t* key_ranges;  // [first, end) per query token (Graph::attention's key_ranges), or null
  const AttentionShape& s;
  GemmFn score_gemm;  // K rows against query rows in the score kernel's query type
  RowFromFloatFn query_to_partner;
  WeightedSumFn value_sum;
  ExpSumFn exp_sum;
  ScaleMaxFn scale_max;
  SoftcapFn softcap_scores;
  const AttentionWork& layout;
  const Bf16Kernels* bf16;  // null: fp32 attention
  const F32TileKernels* f32_tiles;  // null: per-row kernels for every tile (or bf16)
  bool float_keys;         // F16 / F32 keys: scores from float queries (else K's integer gemm)
  bool prefetch_decode_rows;  // KernelTuning::prefetch_decode_rows
  GemmFn key_lanes_gemm;   // Q8_0 keys in lanes (Tensor::key_lanes): their gemm; else null
  RowToFloatFn key_to_float;
  RowToFloatFn value_to_float;

  // Query token `token` sees keys [first_visible(token), visible(token)).
  int64_t visible(int64_t token) const {
    if (key_ranges != nullptr) return key_ranges[2 * token + 1];
    return causal ? s.n_kv - s.n_tokens + token + 1 : s.n_kv;
  }
  int64_t first_visible(int64_t token) const {
    if (key_ranges != nullptr) return key_ranges[2 * token];
    return s.window > 0 ? std::max<int64_t>(0, visible(token) - s.window) : 0;
  }
};

struct Scratch {
  char* queries;      // [R] rows in the score kernel's query type (bf16 in a bf16 tile with float keys),
                      // query_row_bytes apart
  float* weights;     // [R][keys_per_block]: scores, then softmax weights
  float* rescale;     // [R]
  float* bf16_rows;   // [kBf16Rows][head_dim] K or [kBf16Rows][value_width] V rows as floats
  uint16_t* bf16_packed;   // a block of K [head_dim / 2][keys][2] or V [keys / 2][value_width][2]
  float* f32_packed;       // the same place in fp32 tiles: K [head_dim][keys] or V [keys][value_width]
  uint16_t* bf16_weights;  // [R][keys_per_block]
  float* lane_scores;      // [R][lane_score_stride]

  Scratch(char* base, const AttentionWork& w)
      : queries(base), weights(reinterpret_cast<float*>(base + w.weights_offset)),
        rescale(reinterpret_cast<float*>(base + w.rescale_offset)),
        bf16_rows(reinterpret_cast<float*>(base + w.bf16_rows_offset)),
        bf16_packed(reinterpret_cast<uint16_t*>(base + w.bf16_packed_offset)),
        f32_packed(reinterpret_cast<float*>(base + w.bf16_packed_offset)),
        bf16_weights(reinterpret_cast<uint16_t*>(base + w.bf16_weights_offset)),
        lane_scores(reinterpret_cast<float*>(base + w.lane_scores_offset)) {}
};

// Whether a tile of this many rows takes the bf16 products (defined below).
bool bf16_tile(const Attention& a, int64_t rows);

// Converts the query rows of tile [first_token, first_token + rows / group) and
// kv head `kv_head` to the score kernel's query type; row r is token
// first_token + r / group, query head kv_head * group + r % group.
void load_queries(const Attention& a, int64_t first_token, int64_t rows, int64_t kv_head, const Scratch& sc) {
  const bool bf16 = bf16_tile(a, rows) && a.float_keys;
  for (int64_t r = 0; r < rows; ++r) {
    const auto* query = reinterpret_cast<const float*>(
        a.q.row_ptr(kv_head * a.s.group + r % a.s.group, first_token + r / a.s.group));
    char* dst = sc.queries + static_cast<size_t>(r) * a.layout.query_row_bytes;
    if (bf16) {
      a.bf16->round(query, reinterpret_cast<uint16_t*>(dst), a.s.head_dim);
    } else {
      a.query_to_partner(query, dst, a.s.head_dim);
    }
  }
}

// Scores of the tile's `rows` query rows against keys [first_key, first_key +
// n_keys) of kv head `kv_head` (n_keys <= keys_per_block) into out
// [rows][keys_per_block], with K's integer gemm.
void score_keys(const Attention& a, int64_t kv_head, int64_t first_key, int64_t n_keys, int64_t rows, float* out,
                const Scratch& sc) {
  const int64_t d = a.s.head_dim;
  const int64_t block = a.s.keys_per_block;
  const size_t row_bytes = a.k.nb[2];
  const char* keys = a.k.row_ptr(kv_head, first_key);
  if (a.key_lanes_gemm == nullptr) {
    a.score_gemm(d, keys, row_bytes, n_keys, sc.queries, a.layout.query_row_bytes, rows, out, block);
    return;
  }
  const KeyLane at = key_lane_at(a.k, keys);
  if (at.lane == 0) {
    a.key_lanes_gemm(d, at.group, row_bytes, n_keys, sc.queries, a.layout.query_row_bytes, rows, out, block);
  } else {
    // From the group's first key; the keys before first_key are dropped.
    a.key_lanes_gemm(d, at.group, row_bytes, at.lane + n_keys, sc.queries, a.layout.query_row_bytes, rows,
                     sc.lane_scores, lane_score_stride(a.s));
    for (int64_t r = 0; r < rows; ++r) {
      std::memcpy(out + r * block, sc.lane_scores + r * lane_score_stride(a.s) + at.lane,
                  static_cast<size_t>(n_keys) * sizeof(float));
    }
  }
}

// Asks for `bytes` contiguous bytes (head-major cache rows) ahead of their use.
void prefetch_bytes(const char* first, size_t bytes) {
  for (size_t offset = 0; offset < bytes; offset += kCacheLine) __builtin_prefetch(first + offset);
}

// A bf16 tile asks for each K or V row this many rows ahead of its
// conversion: every tile streams its kv head's whole cache (2 MB per head at
// depth 4096 with F16 rows), which no cache level keeps between tiles, and
// the conversions stalled on those loads.
constexpr int64_t kBf16PrefetchRows = 32;

// Rows [first, first + count) of a block (row stride `stride` bytes) as
// floats in dst [padded][width], d values a row, then zeros (the columns past
// d, the rows past count). `end` bounds the rows worth asking for ahead (the
// tile's last key, relative to the block).
void dequantize_rows(const char* rows, size_t stride, int64_t first, int64_t count, int64_t padded, int64_t end,
                     RowToFloatFn to_float, int64_t d, int64_t width, float* dst) {
  for (int64_t j = 0; j < count; ++j) {
    const int64_t row = first + j;
    if (row + kBf16PrefetchRows < end) prefetch_bytes(rows + static_cast<size_t>(row + kBf16PrefetchRows) * stride, stride);
    to_float(rows + static_cast<size_t>(row) * stride, dst + j * width, d);
    if (width > d) std::memset(dst + j * width + d, 0, static_cast<size_t>(width - d) * sizeof(float));
  }
  std::memset(dst + count * width, 0, static_cast<size_t>((padded - count) * width) * sizeof(float));
}

// Keys [0, n_keys) of a block as floats in sc.bf16_rows, kBf16Rows at a
// time (zero keys up to cols, a multiple of 16), each group handed to
// pack(first key of the group).
template <class Pack>
void convert_keys(const Attention& a, const char* keys, int64_t n_keys, int64_t cols, int64_t end, const Scratch& sc,
                  Pack pack) {
  for (int64_t first = 0; first < cols; first += kBf16Rows) {
    dequantize_rows(keys, a.k.nb[2], first, std::min(kBf16Rows, n_keys - first), kBf16Rows, end, a.key_to_float,
                    a.s.head_dim, a.s.head_dim, sc.bf16_rows);
    pack(first);
  }
}

// Scores of a bf16 tile against F16 / F32 keys [0, n_keys) of a block: the
// keys packed transposed (head_dim pairs x keys, zero keys up to a multiple of
// 16), times the bf16 queries.
void score_bf16(const Attention& a, const char* keys, int64_t n_keys, int64_t end, int64_t rows, const Scratch& sc) {
  const int64_t d = a.s.head_dim;
  const int64_t cols = (n_keys + 15) / 16 * 16;
  convert_keys(a, keys, n_keys, cols, end, sc, [&](int64_t first) {
    a.bf16->pack_columns(sc.bf16_rows, static_cast<size_t>(d), kBf16Rows, d, sc.bf16_packed + 2 * first, cols);
  });
  a.bf16->gemm(d / 2, reinterpret_cast<const uint16_t*>(sc.queries), a.layout.query_row_bytes / sizeof(uint16_t),
               rows, sc.bf16_packed, cols, sc.weights, a.s.keys_per_block, false);
}

// outputs[r] += sum_j weights[r][j] * V[j] for the block's values [0, n_keys)
// in bf16: V packed by key pairs, the weights rounded (an odd count padded
// with a zero key).
void sum_values_bf16(const Attention& a, const char* values, int64_t n_keys, int64_t end, int64_t rows,
                     const Scratch& sc, const TileState& state) {
  const int64_t d = a.s.value_width;
  const int64_t even = (n_keys + 1) / 2 * 2;
  for (int64_t first = 0; first < n_keys; first += kBf16Rows) {
    const int64_t count = std::min(kBf16Rows, n_keys - first);
    const int64_t padded = (count + 1) / 2 * 2;
    dequantize_rows(values, a.v.nb[2], first, count, padded, end, a.value_to_float, a.s.head_dim, d, sc.bf16_rows);
    a.bf16->pack_rows(sc.bf16_rows, static_cast<size_t>(d), padded, d, sc.bf16_packed + first * d);
  }
  for (int64_t r = 0; r < rows; ++r) {
    uint16_t* w = sc.bf16_weights + r * a.s.keys_per_block;
    a.bf16->round(sc.weights + r * a.s.keys_per_block, w, n_keys);
    if (even > n_keys) w[n_keys] = 0;
  }
  a.bf16->gemm(even / 2, sc.bf16_weights, a.s.keys_per_block, rows, sc.bf16_packed, d, state.outputs,
               static_cast<size_t>(d), true);
}

// Scores of an fp32 tile against F16 / F32 keys [0, n_keys) of a block: the
// keys as floats transposed (head_dim x keys, zero keys up to a multiple of
// 16), times the float queries.
void score_f32(const Attention& a, const char* keys, int64_t n_keys, int64_t end, int64_t rows, const Scratch& sc) {
  const int64_t d = a.s.head_dim;
  const int64_t cols = (n_keys + 15) / 16 * 16;
  convert_keys(a, keys, n_keys, cols, end, sc, [&](int64_t first) {
    a.f32_tiles->transpose(sc.bf16_rows, static_cast<size_t>(d), kBf16Rows, d, sc.f32_packed + first, cols);
  });
  a.f32_tiles->gemm(d, reinterpret_cast<const float*>(sc.queries), a.layout.query_row_bytes / sizeof(float), rows,
                    sc.f32_packed, cols, sc.weights, a.s.keys_per_block, false);
}

// outputs[r] += sum_j weights[r][j] * V[j] for the block's values [0, n_keys)
// in fp32: V as float rows [keys][value_width].
void sum_values_f32(const Attention& a, const char* values, int64_t n_keys, int64_t end, int64_t rows,
                    const Scratch& sc, const TileState& state) {
  const int64_t d = a.s.value_width;
  dequantize_rows(values, a.v.nb[2], 0, n_keys, n_keys, end, a.value_to_float, a.s.head_dim, d, sc.f32_packed);
  a.f32_tiles->gemm(n_keys, sc.weights, a.s.keys_per_block, rows, sc.f32_packed, d, state.outputs,
                    static_cast<size_t>(d), true);
}

// Turns row r's scores of keys [first_key, first_key + n_keys) into softmax
// weights against the row's running maximum, updating its max and sum and
// recording in rescale[r] how much its accumulator must shrink.
void softmax_block(const Attention& a, int64_t token, int64_t first_key, int64_t n_keys, float* weights,
                   const TileState& state, int64_t r, float* rescale) {
  // The row sees the block's keys [from, to).
  const int64_t from = std::min(n_keys, std::max<int64_t>(0, a.first_visible(token) - first_key));
  const int64_t to = std::min(n_keys, std::max(from, a.visible(token) - first_key));
  for (int64_t j = 0; j < from; ++j) weights[j] = kMinusInfinity;
  for (int64_t j = to; j < n_keys; ++j) weights[j] = kMinusInfinity;
  // scale_max passes over NaN scores, but exp_sum turns each into a NaN weight
  // and sum, so a NaN score poisons the row's output instead of reading as a
  // masked key; only a block without any finite score needs a look for them.
  float block_max = a.scale_max(weights + from, to - from, a.scale);
  if (a.softcap > 0.0f) {
    a.softcap_scores(weights + from, weights + from, to - from, a.softcap);
    block_max = a.scale_max(weights + from, to - from, 1.0f);
  }
  if (block_max == kMinusInfinity) {  // every key of the block masked for this row, or NaN
    if (has_nan(weights + from, to - from)) {
      state.max[r] = std::numeric_limits<float>::quiet_NaN();
      state.sum[r] = state.max[r];
    }
    std::memset(weights, 0, static_cast<size_t>(n_keys) * sizeof(float));
    rescale[r] = 1.0f;
    return;
  }
  const float new_max = std::max(state.max[r], block_max);  // NaN once the row has seen one
  rescale[r] = std::exp(state.max[r] - new_max);  // 0 for the first visible block
  state.sum[r] = state.sum[r] * rescale[r] + a.exp_sum(weights, n_keys, new_max);
  state.max[r] = new_max;
}

// A tile of at most kStreamingRows query rows does too little arithmetic per
// K and V byte to hide the loads, and the hardware prefetchers alone fall
// behind on the score gemm's K rows (half of a decode step at depth 4096
// stalled on them). Such a tile scores a block in steps of kScoreKeys keys,
// each step first asking for the K rows kPrefetchKeys ahead and for its own
// keys' V rows: requests spread over the block, not one burst per block
// (which stalled on the requests themselves). Where the hardware prefetchers
// do better alone (KernelTuning::prefetch_decode_rows), a decode step scores
// its block in one call, as larger tiles (compute-bound) always do: each call
// of the few-row key kernel computes its query rows' block terms again.
constexpr int64_t kScoreKeys = 16;
constexpr int64_t kPrefetchKeys = 64;

// Tiles of more rows than a decode step (prefill) are compute-bound: they take
// the bf16 products when the path has them, else its fp32 tile products.
bool bf16_tile(const Attention& a, int64_t rows) { return a.bf16 != nullptr && rows > kStreamingRows; }
bool f32_tile(const Attention& a, int64_t rows) { return a.f32_tiles != nullptr && rows > kStreamingRows; }

// Scores keys [first_key, first_key + n_keys) of kv head `kv_head` for a few
// query rows into sc.weights, prefetching as above; `end` bounds the keys the
// tile reads. Steps end at multiples of kScoreKeys: a group of keys in lanes.
static_assert(kScoreKeys == kLaneGroup, "a decode step scores one group of keys in lanes");
void score_streaming(const Attention& a, int64_t kv_head, int64_t first_key, int64_t n_keys, int64_t end, int64_t rows,
                     const Scratch& sc) {
  if (!a.prefetch_decode_rows) {
    score_keys(a, kv_head, first_key, n_keys, rows, sc.weights, sc);
    return;
  }
  const char* keys = a.k.row_ptr(kv_head, first_key);
  const char* values = a.v.row_ptr(kv_head, first_key);
  const size_t k_row = a.k.nb[2];
  const size_t v_row = a.v.nb[2];
  for (int64_t key = 0; key < n_keys;) {
    const int64_t step = std::min(kScoreKeys - (first_key + key) % kScoreKeys, n_keys - key);
    const int64_t ahead = std::min(step, end - (first_key + key + kPrefetchKeys));
    if (ahead > 0) {
      prefetch_bytes(keys + static_cast<size_t>(key + kPrefetchKeys) * k_row, static_cast<size_t>(ahead) * k_row);
    }
    prefetch_bytes(values + static_cast<size_t>(key) * v_row, static_cast<size_t>(step) * v_row);
    score_keys(a, kv_head, first_key + key, step, rows, sc.weights + key, sc);
    key += step;
  }
}

// Folds keys [begin, end) of kv head `kv_head` into the state of the tile whose
// first query token is `first_token`; the tile's queries are in sc.queries.
void attend(const Attention& a, int64_t first_token, int64_t rows, int64_t kv_head, int64_t begin,
            int64_t end, const Scratch& sc, const TileState& state) {
  const AttentionShape& s = a.s;
  const int64_t d = s.value_width;  // the accumulators' row stride
  const bool bf16 = bf16_tile(a, rows);
  const bool f32 = f32_tile(a, rows);
  for (int64_t r = 0; r < rows; ++r) {
    state.max[r] = kMinusInfinity;
    state.sum[r] = 0.0f;
  }
  std::memset(state.outputs, 0, static_cast<size_t>(rows * d) * sizeof(float));

  // Blocks end at multiples of keys_per_block (whole groups of keys in lanes).
  const int64_t block = s.keys_per_block;
  for (int64_t first_key = begin, n_keys = 0; first_key < end; first_key += n_keys) {
    n_keys = std::min(block - first_key % block, end - first_key);
    const char* keys = a.k.row_ptr(kv_head, first_key);
    const char* values = a.v.row_ptr(kv_head, first_key);
    if (bf16 && a.float_keys) {
      score_bf16(a, keys, n_keys, end - first_key, rows, sc);
    } else if (f32 && a.float_keys) {
      score_f32(a, keys, n_keys, end - first_key, rows, sc);
    } else if (rows > kStreamingRows) {
      score_keys(a, kv_head, first_key, n_keys, rows, sc.weights, sc);
    } else {
      score_streaming(a, kv_head, first_key, n_keys, end, rows, sc);
    }
    for (int64_t r = 0; r < rows; ++r) {
      softmax_block(a, first_token + r / s.group, first_key, n_keys, sc.weights + r * block, state, r,
                    sc.rescale);
    }
    for (int64_t r = 0; r < rows; ++r) {
      const float shrink = sc.rescale[r];
      if (shrink == 1.0f) continue;
      float* out = state.outputs + r * d;
      for (int64_t i = 0; i < d; ++i) out[i] *= shrink;
    }
    // outputs[r] += sum_j weights[r][j] * V[first_key + j]
    if (bf16) {
      sum_values_bf16(a, values, n_keys, end - first_key, rows, sc, state);
    } else if (f32) {
      sum_values_f32(a, values, n_keys, end - first_key, rows, sc, state);
    } else {
      a.value_sum(s.head_dim, values, a.v.nb[2], n_keys, sc.weights, block, rows, state.outputs,
                  static_cast<size_t>(d));
    }
  }
}

// Writes row r of the merged states (one per key chunk; outputs `width`
// floats apart) to `out`, d values.
void merge_into(const TileState* states, int64_t n_states, int64_t r, int64_t d, int64_t width, float* out) {
  // A chunk whose row met a NaN score has max NaN: the merged row is NaN.
  float max = kMinusInfinity;
  for (int64_t c = 0; c < n_states; ++c) {
    if (std::isnan(states[c].max[r]) || states[c].max[r] > max) max = states[c].max[r];
    if (std::isnan(max)) break;
  }
  float sum = 0.0f;
  for (int64_t i = 0; i < d; ++i) out[i] = std::isnan(max) ? max : 0.0f;
  if (max == kMinusInfinity || std::isnan(max)) return;  // every key masked: attend to nothing
  for (int64_t c = 0; c < n_states; ++c) {
    if (states[c].max[r] == kMinusInfinity) continue;  // the row sees no key of chunk c
    const float weight = std::exp(states[c].max[r] - max);
    sum += states[c].sum[r] * weight;
    const float* partial = states[c].outputs + r * width;
    for (int64_t i = 0; i < d; ++i) out[i] += weight * partial[i];
  }
  const float inverse_sum = 1.0f / sum;
  for (int64_t i = 0; i < d; ++i) out[i] *= inverse_sum;
}

// The output row of tile row r.
float* output_row(const Tensor& node, const AttentionShape& s, int64_t first_token, int64_t kv_head, int64_t r) {
  return f32_row(node, {kv_head * s.group + r % s.group, first_token + r / s.group, 0});
}

}  // namespace

// Covers the node's decode steps too: a graph reserved for a full batch also
// runs them over the same cache, and their longer blocks of keys can need
// more than the batch's tiles.
size_t attention_work_size(const Tensor& node, int n_threads) {
  const AttentionShape s(node);
  const int64_t step_tokens = std::min(s.n_tokens, std::max<int64_t>(1, kStreamingRows / s.group));
  return std::max(attention_work(node, s, n_threads).total_bytes,
                  attention_work(node, AttentionShape(node, step_tokens), n_threads).total_bytes);
}

// node F32 [head_dim, n_head, n_tokens]; src0 Q F32 [head_dim, n_head, n_tokens];
// src1 K, src2 V [head_dim, n_head_kv, n_kv]; src3 I32 [2, n_tokens] each
// token's key range, or null; params.f[0]: scale, f[1]: softcap (0: none),
// i[0]: causal, i[1]: window (0: none).
void compute_attention(const ComputeParams& params, Tensor& node) {
  const AttentionShape s(node);
  const AttentionWork layout = attention_work(node, s, params.n_threads);
  const ScoreKernel scores = score_kernel(kernels_for(node.src[1]->type));
  const Attention a{*node.src[0],
                    *node.src[1],
                    *node.src[2],
                    node.params.f[0],
                    node.params.f[1],
                    node.params.i[0] != 0,
                    node.src[3] != nullptr ? static_cast<const int32_t*>(node.src[3]->data) : nullptr,
                    s,
                    scores.gemm,
                    kernels_for(scores.query_type).from_float,
                    kernels_for(node.src[2]->type).weighted_sum,
                    float_kernels().exp_sum,
                    float_kernels().scale_max,
                    float_kernels().softcap,
                    layout,
                    bf16_kernels(node),
                    f32_tile_kernels(node),
                    scores.query_type == GgmlType::F32,
                    kernel_tuning().prefetch_decode_rows,
                    node.src[1]->key_lanes ? kernels_for(GgmlType::Q8_0).gemm_key_lanes : nullptr,
                    kernels_for(node.src[1]->type).to_float,
                    kernels_for(node.src[2]->type).to_float};
  char* work = static_cast<char*>(params.work);
  char* own = work + layout.per_thread_bytes * static_cast<size_t>(params.thread_index);
  const Scratch sc(own, layout);
  // Chunks per unit: the partials' stride; a token step may take fewer.
  const int64_t chunks = s.key_chunks(params.n_threads);
  // The keys some row of the tile of `first_token` sees: from its first
  // token's first to its last token's last (with key ranges, the least first
  // and greatest end of its tokens').
  const auto tile_keys = [&](int64_t first_token, int64_t tokens) {
    int64_t tile_begin = a.first_visible(first_token);
    int64_t tile_end = a.visible(first_token + tokens - 1);
    if (a.key_ranges != nullptr) {
      for (int64_t t = first_token; t < first_token + tokens; ++t) {
        tile_begin = std::min(tile_begin, a.first_visible(t));
        tile_end = std::max(tile_end, a.visible(t));
      }
    }
    return std::make_pair(tile_begin, tile_end);
  };
  // The chunks a tile's keys [tile_begin, tile_end) are split into.
  const auto unit_chunks = [&](int64_t tile_begin, int64_t tile_end) {
    return s.token_steps ? s.token_chunks(params.n_threads, tile_end - tile_begin) : chunks;
  };

  // Round-robin over (tile, kv head, chunk): neighbouring tasks cost about the
  // same, so every thread gets a fair share of the causal triangle.
  for (int64_t task = params.thread_index; task < s.units() * chunks; task += params.n_threads) {
    const int64_t unit = task / chunks;
    const int64_t chunk = task % chunks;
    const int64_t kv_head = s.unit_kv_head(unit);
    const int64_t first_token = s.unit_first_token(unit);
    const int64_t tokens = std::min(s.tile_tokens, s.n_tokens - first_token);
    const int64_t rows = tokens * s.group;
    const auto [tile_begin, tile_end] = tile_keys(first_token, tokens);
    const int64_t own_chunks = unit_chunks(tile_begin, tile_end);
    if (chunk >= own_chunks) continue;
    // The chunks share the tile's keys out. Chunks but the first start at
    // multiples of kLaneGroup (whole groups of keys in lanes), counted from
    // the group of the first key.
    const int64_t aligned_begin = tile_begin - tile_begin % kLaneGroup;
    const int64_t keys_per_chunk =
        ((tile_end - aligned_begin + own_chunks - 1) / own_chunks + kLaneGroup - 1) / kLaneGroup * kLaneGroup;
    const int64_t begin = std::min(tile_end, std::max(tile_begin, aligned_begin + chunk * keys_per_chunk));
    const int64_t end = std::min(tile_end, aligned_begin + (chunk + 1) * keys_per_chunk);

    load_queries(a, first_token, rows, kv_head, sc);
    const TileState state =
        own_chunks == 1
            ? tile_state_at(own + layout.state_offset, s)
            : tile_state_at(work + layout.partials_offset + static_cast<size_t>(task) * tile_state_bytes(s), s);
    attend(a, first_token, rows, kv_head, begin, end, sc, state);
    if (own_chunks == 1) {
      for (int64_t r = 0; r < rows; ++r) {
        merge_into(&state, 1, r, s.head_dim, s.value_width, output_row(node, s, first_token, kv_head, r));
      }
    }
  }
  if (chunks == 1) return;

  // Merge the chunks of each unit; one row of one unit per step.
  params.barrier();
  TileState states[kMaxKeyChunks];
  const Range items = thread_share(s.units() * s.tile_rows, params);
  for (int64_t item = items.begin; item < items.end; ++item) {
    const int64_t unit = item / s.tile_rows;
    const int64_t r = item % s.tile_rows;
    const int64_t kv_head = s.unit_kv_head(unit);
    const int64_t first_token = s.unit_first_token(unit);
    if (first_token + r / s.group >= s.n_tokens) continue;  // past the last, partial tile
    const int64_t tokens = std::min(s.tile_tokens, s.n_tokens - first_token);
    const auto [tile_begin, tile_end] = tile_keys(first_token, tokens);
    const int64_t own_chunks = unit_chunks(tile_begin, tile_end);
    if (own_chunks == 1) continue;  // written by its task
    for (int64_t c = 0; c < own_chunks; ++c) {
      states[c] = tile_state_at(
          work + layout.partials_offset + static_cast<size_t>(unit * chunks + c) * tile_state_bytes(s), s);
    }
    merge_into(states, own_chunks, r, s.head_dim, s.value_width, output_row(node, s, first_token, kv_head, r));
  }
}

}  // namespace peak::core
