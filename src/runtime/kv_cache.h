// The key/value cache of one sequence: per layer, K and V tensors of
// [head_dim, n_head_kv, n_ctx] in the chosen types (F32, F16, Q8_0 or Q4_0),
// allocated once at creation and never grown.
//
// Memory is head-major: each kv head's rows of all cells sit together (nb[2]
// is one row, nb[1] a head's n_ctx rows), so attention over one head streams
// one contiguous run of rows instead of short rows n_head_kv rows apart.
// Graphs see the usual [head_dim, n_head_kv, cells] views through the strides;
// snapshots keep the cell-major byte order (all heads of a cell together).
// Q8_0 keys are kept in lanes (core::Tensor::key_lanes, kernels/repack.h) on
// the paths whose kernels score them there (TypeKernels::gemm_key_lanes):
// groups of 16 cells whose codes attention's score gemm reads as whole vectors,
// each head's cells rounded up to whole groups. Snapshots hold them as rows.
//
// Cells are kept contiguous: cell i holds the i-th token of the cached sequence,
// cells [0, used) are filled, and positions increase with the cell index.
// Removing a range moves the later cells down (their positions are unchanged),
// so attention always reads one dense prefix of the cache.
//
// A model with multimodal rotary positions (RopeMode::Multi, Qwen2-VL) also
// keeps each cell's place in its picture (PicturePlace): a picture's tokens
// share one position, so positions then only never decrease.
#pragma once

#include <algorithm>
#include <climits>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "core/tensor.h"
#include "io/page_memory.h"
#include "model/decoder.h"
#include "model/hparams.h"

namespace peak::runtime {

// The sequence does not fit in the cache any more.
class ContextFull : public std::length_error {
 public:
  using std::length_error::length_error;
};

// The cache type asked for, or F16 when its blocks do not divide the model's
// head size (Q8_0 and Q4_0 need a multiple of 32; F32 and F16 fit any).
kernels::GgmlType kv_type_fitting(const model::HParams& hp, kernels::GgmlType wanted);

// The largest position a cell may hold. Positions are int32_t, and the one
// after the last (next_position) must be one too.
constexpr int32_t kMaxPosition = INT32_MAX - 1;

// Where a cell's token lies among its picture's tokens, for multimodal rotary
// positions: its row and column; 0, 0 for a text token. A cell at position t
// rotates by t, t + row and t + col (core::RopeMode::Multi), and the token
// after it comes at t + reach() + 1 (Qwen2-VL: one past the largest of the
// three).
struct PicturePlace {
  int32_t row = 0;
  int32_t col = 0;
  int32_t reach() const { return std::max(row, col); }
};

struct KvCacheParams {
  int64_t n_ctx = 0;                  // cells
  kernels::GgmlType type_k = kernels::GgmlType::F16;
  kernels::GgmlType type_v = kernels::GgmlType::F16;
};

class KvCache {
 public:
  // Throws std::invalid_argument for a type that cannot hold this model's rows
  // (block types need head_dim to be a multiple of their block size).
  KvCache(const model::HParams& hp, const KvCacheParams& params);
  KvCache(const KvCache&) = delete;  // layers() points into this object's tensors
  // The memory such a cache holds (every layer's K and V, the positions), without
  // allocating it: what a context of n_ctx cells costs beyond its batch buffers.
  static size_t bytes_needed(const model::HParams& hp, const KvCacheParams& params);
  // Every layer's K and V (K of layer l at 2l, V at 2l + 1) laid out as in
  // such a cache but without memory (data null): to plan the graphs of
  // contexts with caches of this size (runtime::PassGroup).
  static std::vector<core::Tensor> layout(const model::HParams& hp, const KvCacheParams& params);
  KvCache& operator=(const KvCache&) = delete;

  int64_t size() const { return n_ctx_; }
  int64_t used() const { return static_cast<int64_t>(positions_.size()); }
  int64_t free_cells() const { return n_ctx_ - used(); }
  kernels::GgmlType type_k() const { return k_[0].type; }
  kernels::GgmlType type_v() const { return v_[0].type; }
  size_t bytes() const { return buffer_.size(); }
  // Everything the cache holds: bytes() plus the cells' positions and places.
  size_t bytes_held() const {
    return bytes() + positions_.capacity() * sizeof(int32_t) + places_.capacity() * sizeof(PicturePlace);
  }

  core::Tensor* k(int64_t layer) { return &k_[static_cast<size_t>(layer)]; }
  // K is head-major, a row every nb[2] bytes: head h's cells start at row
  // h * key_cells_per_head() (n_ctx, rounded up to whole groups when keys are
  // in lanes; the same in every layer).
  int64_t key_cells_per_head() const { return static_cast<int64_t>(k_[0].nb[1] / k_[0].nb[2]); }
  core::Tensor* v(int64_t layer) { return &v_[static_cast<size_t>(layer)]; }
  // Every layer's K and V, as the decoder graph takes them.
  const std::vector<model::LayerKv>& layers() const { return layers_; }
  // Position of each used cell, in cell order.
  const std::vector<int32_t>& positions() const { return positions_; }
  // Whether cells keep their places in pictures (the model's rope is multimodal).
  bool keeps_places() const { return keeps_places_; }
  // The place of each used cell in cell order; empty unless keeps_places().
  const std::vector<PicturePlace>& places() const { return places_; }
  // The position of the token after cell `cell` (its position + 1, past a
  // picture's token its PicturePlace::reach() more).
  int32_t position_after(int64_t cell) const {
    const auto c = static_cast<size_t>(cell);
    return positions_[c] + (keeps_places_ ? places_[c].reach() : 0) + 1;
  }
  // How far cell `cell` sits past the position the token before it leaves
  // for it (position_after(cell - 1), 0 for the first cell): what a shift
  // closes after cells before it were removed.
  int32_t gap_before(int64_t cell) const {
    return positions_[static_cast<size_t>(cell)] - (cell == 0 ? 0 : position_after(cell - 1));
  }
  // The position after the last cached token (0 when empty).
  int32_t next_position() const { return positions_.empty() ? 0 : position_after(used() - 1); }
  // The rope positions of cells [first, first + n) as the decoder takes them
  // (model::ForwardInputs::positions): one each at out[i], with multimodal
  // rotary positions also t + row at out[stride + i] and t + col at
  // out[2 stride + i].
  void rope_positions(int64_t first, int64_t n, int32_t* out, int64_t stride) const;

  // Throws ContextFull, saying how full the cache is, unless `n` more cells fit.
  void require_free(int64_t n) const;
  // Claims the next `n` cells for tokens at `first_position`, +1, ...; the caller
  // then writes their K and V. Throws ContextFull when they do not fit (in
  // cells, or because their positions would pass kMaxPosition).
  int64_t append(int64_t n, int32_t first_position);
  // Claims the next `n` cells for tokens [first_token, first_token + n) of a
  // picture `cols` tokens across, row by row, all at `position`; token i's
  // place is (i / cols, i % cols). Needs keeps_places(), else
  // std::logic_error; throws ContextFull as append does (a place's reach
  // counts as positions).
  int64_t append_picture(int64_t n, int32_t position, int64_t first_token, int64_t cols);
  // Gives back the last `n` cells (e.g. after a failed evaluation).
  void drop_last(int64_t n);
  void clear();
  // Removes cells [first, first + n) and moves the later cells down.
  void remove(int64_t first, int64_t n);
  // Adds `delta` to the positions of cells [first, first + n). K must be
  // re-rotated by the caller (the context does both, see Context::shift).
  // Throws std::out_of_range, changing nothing, when a position would leave
  // [0, kMaxPosition] (check_shift).
  void add_to_positions(int64_t first, int64_t n, int32_t delta);
  // The check add_to_positions makes, for callers that must refuse a shift
  // before they act on it.
  void check_shift(int64_t first, int64_t n, int32_t delta) const;
  // Opens `n` cells before cell `at` (cells from `at` on move up, keeping their
  // positions); the new cells get positions first_position, +1, ... and must be
  // filled by Context::eval_into. Throws ContextFull when they do not fit (as
  // append).
  void insert(int64_t at, int64_t n, int32_t first_position);
  // Copies the whole content of `other`, which must have the same shape and types.
  void copy_from(const KvCache& other);

  // The used cells' K and V bytes, layer by layer (K then V), each cell-major
  // (cell 0's rows of heads 0, 1, ..., then cell 1's), for saving.
  std::vector<uint8_t> snapshot() const { return snapshot_cells(0, used()); }
  // The same for the first `n` used cells only, as restore() takes them (a kept
  // Prefix copied into another cache). Throws std::out_of_range past used().
  std::vector<uint8_t> snapshot_first(int64_t n) const { return snapshot_cells(0, n); }
  // The same for used cells [first, first + n), as put_back() takes them.
  std::vector<uint8_t> snapshot_cells(int64_t first, int64_t n) const;
  // Replaces the content with a snapshot of `positions.size()` cells taken from a
  // cache of the same shape and types, at those places (one per cell; empty:
  // text). Throws std::invalid_argument (leaving the cache as it was) when the
  // sizes do not match.
  void restore(const std::vector<uint8_t>& bytes, const std::vector<int32_t>& positions,
               const std::vector<PicturePlace>& places = {});
  // Undoes remove(at, n) exactly, given snapshot_cells(at, n) and those cells'
  // positions from before it: cells from `at` on move up and the removed ones
  // come back with their bytes and positions. Throws (changing nothing)
  // std::invalid_argument when the sizes do not match or a position is out of
  // range, ContextFull when they do not fit.
  void put_back(int64_t at, const std::vector<uint8_t>& bytes, const std::vector<int32_t>& positions,
                const std::vector<PicturePlace>& places = {});

  // Bytes of one cell of one layer's K (or V): a row per kv head.
  size_t cell_bytes_k() const { return k_[0].nb[2] * static_cast<size_t>(k_[0].ne[1]); }
  size_t cell_bytes_v() const { return v_[0].nb[2] * static_cast<size_t>(v_[0].ne[1]); }

 private:
  // Moves cells [from, from + n) of every layer's K and V to start at cell `to`
  // (the ranges may overlap).
  void move_cells(int64_t from, int64_t to, int64_t n);
  // Copies snapshot bytes of `n` cells (cell-major per layer, as snapshot_cells
  // writes them) into cells [first, first + n).
  void write_cells(int64_t first, int64_t n, const uint8_t* bytes);
  size_t snapshot_bytes(int64_t n) const { return static_cast<size_t>(n) * (cell_bytes_k() + cell_bytes_v()) * k_.size(); }

  int64_t n_ctx_;
  std::vector<core::Tensor> k_;  // per layer
  std::vector<core::Tensor> v_;
  std::vector<model::LayerKv> layers_;  // &k_[l], &v_[l]
  // Places given for `n` cells (empty: text), checked to be n and within
  // positions: std::invalid_argument.
  void check_places(const std::vector<PicturePlace>& places, const std::vector<int32_t>& positions) const;
  std::vector<int32_t> positions_;  // capacity n_ctx, reserved once
  bool keeps_places_;
  std::vector<PicturePlace> places_;  // keeps_places_: capacity n_ctx, reserved once
  io::PageMemory buffer_;  // every layer's K and V, in huge pages where the system has them
};

}  // namespace peak::runtime
