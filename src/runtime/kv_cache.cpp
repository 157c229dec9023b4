#include "runtime/kv_cache.h"

#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

#include "kernels/blocks.h"
#include "kernels/kernels.h"
#include "kernels/repack.h"

namespace peak::runtime {

using kernels::ggml_type_name;
using kernels::GgmlType;
using kernels::kernels_for;
using kernels::kQ8_0KeyLaneMaxBlocks;
using kernels::kQ8_0KeyLaneRows;
using kernels::kQK;

namespace {

bool kv_type_supported(GgmlType t) {
  return t == GgmlType::F32 || t == GgmlType::F16 || t == GgmlType::Q8_0 || t == GgmlType::Q4_0;
}

// Throws ContextFull unless positions first_position .. first_position + n - 1
// all lie in [0, kMaxPosition].
void require_positions(int32_t first_position, int64_t n) {
  if (n > 0 && (first_position < 0 || static_cast<int64_t>(first_position) + n - 1 > kMaxPosition)) {
    throw ContextFull("positions " + std::to_string(first_position) + " .. " +
                      std::to_string(static_cast<int64_t>(first_position) + n - 1) + " leave the range 0 .. " +
                      std::to_string(kMaxPosition));
  }
}

// Whether keys of this type and head size are kept in lanes (kernels/repack.h):
// Q8_0 on the paths whose kernels score them there.
bool keys_in_lanes(GgmlType type, int64_t head_dim) {
  return type == GgmlType::Q8_0 && head_dim / kQK <= kQ8_0KeyLaneMaxBlocks &&
         kernels_for(GgmlType::Q8_0).gemm_key_lanes != nullptr;
}

// Dense [head_dim, n_head_kv, n_ctx] bytes laid out head-major: row (head h,
// cell c) at h * nb[1] + c * nb[2]. Keys in lanes round each head's cells up to
// whole groups.
void set_head_major_layout(core::Tensor& t, GgmlType type, const int64_t (&shape)[core::kMaxDims], bool lanes) {
  core::set_dense_layout(t, type, shape);
  const size_t row = t.nb[1];
  const int64_t cells = lanes ? (shape[2] + kQ8_0KeyLaneRows - 1) / kQ8_0KeyLaneRows * kQ8_0KeyLaneRows : shape[2];
  t.nb[2] = row;
  t.nb[1] = row * static_cast<size_t>(cells);
  t.key_lanes = lanes;
}

// Bytes the tensor's memory spans: every head's cells, the padding of keys in
// lanes included.
size_t head_major_bytes(const core::Tensor& t) { return t.nb[1] * static_cast<size_t>(t.ne[1]); }

// One layer's K and V layouts, [head_dim, n_head_kv, n_ctx] each (no data).
void set_layer_layouts(core::Tensor& k, core::Tensor& v, const model::HParams& hp, const KvCacheParams& params) {
  const int64_t shape[core::kMaxDims] = {hp.head_dim, hp.n_head_kv, params.n_ctx, 1};
  set_head_major_layout(k, params.type_k, shape, keys_in_lanes(params.type_k, hp.head_dim));
  set_head_major_layout(v, params.type_v, shape, false);
}

// Bytes of every layer's K and V.
size_t layers_bytes(const model::HParams& hp, const KvCacheParams& params) {
  core::Tensor k, v;
  set_layer_layouts(k, v, hp, params);
  return static_cast<size_t>(hp.n_layer) * (head_major_bytes(k) + head_major_bytes(v));
}

// Throws std::invalid_argument for a cache these parameters cannot describe;
// else the bytes of its K and V.
size_t checked_layers_bytes(const model::HParams& hp, const KvCacheParams& params) {
  if (params.n_ctx <= 0) {
    throw std::invalid_argument("n_ctx is " + std::to_string(params.n_ctx) + "; it must be at least 1");
  }
  const std::pair<const char*, GgmlType> types[] = {{"type_k", params.type_k}, {"type_v", params.type_v}};
  for (const auto& [field, t] : types) {
    const auto id = static_cast<uint32_t>(t);
    if (!kv_type_supported(t)) {
      throw std::invalid_argument(std::string(field) + " " + ggml_type_name(id) +
                                  " is not a KV cache type (F32, F16, Q8_0, Q4_0)");
    }
    if (hp.head_dim % core::type_block_elements(t) != 0) {
      throw std::invalid_argument(std::string(field) + " " + ggml_type_name(id) +
                                  " needs a head size that is a multiple of " +
                                  std::to_string(core::type_block_elements(t)) + "; this model's is " +
                                  std::to_string(hp.head_dim) + " (use F16)");
    }
  }
  return layers_bytes(hp, params);
}

// Row (head h, cell c) of t as stored rows (dst), and back (src).
void read_row(const core::Tensor& t, int64_t h, int64_t c, uint8_t* dst) {
  if (t.key_lanes) {
    core::get_key_lane_row(t, t.row_ptr(h, c), dst);
  } else {
    std::memcpy(dst, t.row_ptr(h, c), t.nb[2]);
  }
}
void write_row(core::Tensor& t, int64_t h, int64_t c, const uint8_t* src) {
  if (t.key_lanes) {
    core::put_key_lane_row(t, t.row_ptr(h, c), src);
  } else {
    std::memcpy(t.row_ptr(h, c), src, t.nb[2]);
  }
}

}  // namespace

GgmlType kv_type_fitting(const model::HParams& hp, GgmlType wanted) {
  return hp.head_dim % core::type_block_elements(wanted) == 0 ? wanted : GgmlType::F16;
}

size_t KvCache::bytes_needed(const model::HParams& hp, const KvCacheParams& params) {
  const size_t per_cell = sizeof(int32_t) + (hp.rope.mode == core::RopeMode::Multi ? sizeof(PicturePlace) : 0);
  return layers_bytes(hp, params) + static_cast<size_t>(params.n_ctx) * per_cell;
}

KvCache::KvCache(const model::HParams& hp, const KvCacheParams& params)
    : n_ctx_(params.n_ctx),
      keeps_places_(hp.rope.mode == core::RopeMode::Multi),
      buffer_(checked_layers_bytes(hp, params), io::PageMemory::Pages::Huge) {
  k_.resize(static_cast<size_t>(hp.n_layer));
  v_.resize(static_cast<size_t>(hp.n_layer));
  std::memset(buffer_.data(), 0, buffer_.size());  // heap memory where the system has no anonymous mappings
  uint8_t* p = buffer_.data();
  for (size_t l = 0; l < k_.size(); ++l) {
    set_layer_layouts(k_[l], v_[l], hp, params);
    k_[l].data = p;
    k_[l].set_name("k_cache.%zu", l);
    p += head_major_bytes(k_[l]);
    v_[l].data = p;
    v_[l].set_name("v_cache.%zu", l);
    p += head_major_bytes(v_[l]);
    layers_.push_back({&k_[l], &v_[l]});
  }
  positions_.reserve(static_cast<size_t>(n_ctx_));
  if (keeps_places_) places_.reserve(static_cast<size_t>(n_ctx_));
}

std::vector<core::Tensor> KvCache::layout(const model::HParams& hp, const KvCacheParams& params) {
  std::vector<core::Tensor> layers(static_cast<size_t>(2 * hp.n_layer));
  for (size_t l = 0; l < layers.size(); l += 2) set_layer_layouts(layers[l], layers[l + 1], hp, params);
  return layers;
}

void KvCache::require_free(int64_t n) const {
  if (n < 0 || n > free_cells()) {
    throw ContextFull("the context is full: " + std::to_string(used()) + " of " + std::to_string(n_ctx_) +
                      " cells used, " + std::to_string(n) + " more needed");
  }
}

int64_t KvCache::append(int64_t n, int32_t first_position) {
  require_free(n);
  require_positions(first_position, n);
  const int64_t first = used();
  for (int64_t i = 0; i < n; ++i) positions_.push_back(first_position + static_cast<int32_t>(i));
  if (keeps_places_) places_.resize(positions_.size());
  return first;
}

int64_t KvCache::append_picture(int64_t n, int32_t position, int64_t first_token, int64_t cols) {
  if (!keeps_places_) throw std::logic_error("append_picture: this model's cache keeps no places in pictures");
  if (n < 0 || first_token < 0 || cols < 1 || first_token > INT32_MAX - n) {
    throw std::invalid_argument("append_picture: tokens [" + std::to_string(first_token) + ", +" + std::to_string(n) +
                                ") of a picture " + std::to_string(cols) + " across");
  }
  require_free(n);
  const int64_t last = first_token + n - 1;
  // The largest reach is the last token's (its row) or the first row's last column.
  const int64_t reach = n == 0 ? 0 : std::max(last / cols, std::min(last, cols - 1));
  require_positions(position, reach + 1);
  const int64_t first = used();
  for (int64_t i = first_token; i < first_token + n; ++i) {
    positions_.push_back(position);
    places_.push_back({static_cast<int32_t>(i / cols), static_cast<int32_t>(i % cols)});
  }
  return first;
}

void KvCache::rope_positions(int64_t first, int64_t n, int32_t* out, int64_t stride) const {
  std::memcpy(out, positions_.data() + first, static_cast<size_t>(n) * sizeof(int32_t));
  if (!keeps_places_) return;
  for (int64_t i = 0; i < n; ++i) {
    const PicturePlace& p = places_[static_cast<size_t>(first + i)];
    out[stride + i] = out[i] + p.row;
    out[2 * stride + i] = out[i] + p.col;
  }
}

void KvCache::drop_last(int64_t n) {
  if (n < 0 || n > used()) throw std::out_of_range("drop_last: more cells than are used");
  positions_.resize(positions_.size() - static_cast<size_t>(n));
  if (keeps_places_) places_.resize(positions_.size());
}

void KvCache::clear() {
  positions_.clear();
  places_.clear();
}

void KvCache::remove(int64_t first, int64_t n) {
  if (first < 0 || n < 0 || first + n > used()) {
    throw std::out_of_range("KV cache remove [" + std::to_string(first) + ", +" + std::to_string(n) +
                            ") is outside the " + std::to_string(used()) + " used cells");
  }
  move_cells(first + n, first, used() - first - n);
  positions_.erase(positions_.begin() + first, positions_.begin() + first + n);
  if (keeps_places_) places_.erase(places_.begin() + first, places_.begin() + first + n);
}

void KvCache::check_shift(int64_t first, int64_t n, int32_t delta) const {
  if (first < 0 || n < 0 || first > used() - n) throw std::out_of_range("KV cache position shift outside used cells");
  for (int64_t i = first; i < first + n; ++i) {
    const int64_t shifted = static_cast<int64_t>(positions_[static_cast<size_t>(i)]) + delta;
    const int64_t reach = keeps_places_ ? places_[static_cast<size_t>(i)].reach() : 0;
    if (shifted < 0 || shifted + reach > kMaxPosition) {
      throw std::out_of_range("KV cache shift by " + std::to_string(delta) + " would move cell " + std::to_string(i) +
                              " from position " + std::to_string(positions_[static_cast<size_t>(i)]) + " to " +
                              std::to_string(shifted) + ", outside 0 .. " + std::to_string(kMaxPosition));
    }
  }
}

void KvCache::add_to_positions(int64_t first, int64_t n, int32_t delta) {
  check_shift(first, n, delta);
  for (int64_t i = first; i < first + n; ++i) positions_[static_cast<size_t>(i)] += delta;
}

void KvCache::insert(int64_t at, int64_t n, int32_t first_position) {
  if (at < 0 || at > used() || n < 0) throw std::out_of_range("KV cache insert outside the used cells");
  require_free(n);
  require_positions(first_position, n);
  move_cells(at, at + n, used() - at);
  positions_.insert(positions_.begin() + at, static_cast<size_t>(n), 0);  // within the reserved capacity
  for (int64_t i = 0; i < n; ++i) positions_[static_cast<size_t>(at + i)] = first_position + static_cast<int32_t>(i);
  if (keeps_places_) places_.insert(places_.begin() + at, static_cast<size_t>(n), PicturePlace{});
}

void KvCache::move_cells(int64_t from, int64_t to, int64_t n) {
  for (size_t l = 0; l < k_.size(); ++l) {
    for (core::Tensor* t : {&k_[l], &v_[l]}) {
      for (int64_t h = 0; h < t->ne[1]; ++h) {
        if (t->key_lanes) {
          kernels_for(GgmlType::Q8_0).move_key_lanes(t->row_ptr(h, 0), from, to, n, t->ne[0] / kQK);
        } else {
          std::memmove(t->row_ptr(h, to), t->row_ptr(h, from), static_cast<size_t>(n) * t->nb[2]);
        }
      }
    }
  }
}

std::vector<uint8_t> KvCache::snapshot_cells(int64_t first, int64_t n) const {
  if (first < 0 || n < 0 || first > used() - n) {
    throw std::out_of_range("KV snapshot of cells [" + std::to_string(first) + ", +" + std::to_string(n) + "), " +
                            std::to_string(used()) + " used");
  }
  std::vector<uint8_t> out(snapshot_bytes(n));
  uint8_t* p = out.data();
  for (size_t l = 0; l < k_.size(); ++l) {
    for (const core::Tensor* t : {&k_[l], &v_[l]}) {
      for (int64_t c = first; c < first + n; ++c) {
        for (int64_t h = 0; h < t->ne[1]; ++h, p += t->nb[2]) read_row(*t, h, c, p);
      }
    }
  }
  return out;
}

void KvCache::write_cells(int64_t first, int64_t n, const uint8_t* bytes) {
  for (size_t l = 0; l < k_.size(); ++l) {
    for (core::Tensor* t : {&k_[l], &v_[l]}) {
      for (int64_t c = first; c < first + n; ++c) {
        for (int64_t h = 0; h < t->ne[1]; ++h, bytes += t->nb[2]) write_row(*t, h, c, bytes);
      }
    }
  }
}

void KvCache::check_places(const std::vector<PicturePlace>& places, const std::vector<int32_t>& positions) const {
  if (places.empty()) return;
  if (!keeps_places_ || places.size() != positions.size()) {
    throw std::invalid_argument("KV cells of " + std::to_string(positions.size()) + " positions given " +
                                std::to_string(places.size()) + " places in pictures" +
                                (keeps_places_ ? "" : ", which this model's cache does not keep"));
  }
  for (size_t i = 0; i < places.size(); ++i) {
    const PicturePlace& p = places[i];
    if (p.row < 0 || p.col < 0 || static_cast<int64_t>(positions[i]) + p.reach() > kMaxPosition) {
      throw std::invalid_argument("KV cell at position " + std::to_string(positions[i]) + " given the place (" +
                                  std::to_string(p.row) + ", " + std::to_string(p.col) + ") in a picture");
    }
  }
}

void KvCache::restore(const std::vector<uint8_t>& bytes, const std::vector<int32_t>& positions,
                      const std::vector<PicturePlace>& places) {
  const auto n = static_cast<int64_t>(positions.size());
  if (n > n_ctx_ || bytes.size() != snapshot_bytes(n)) {
    throw std::invalid_argument("KV snapshot of " + std::to_string(bytes.size()) + " bytes for " + std::to_string(n) +
                                " cells does not fit this cache (" + std::to_string(snapshot_bytes(n)) +
                                " bytes expected)");
  }
  check_places(places, positions);
  write_cells(0, n, bytes.data());
  positions_.assign(positions.begin(), positions.end());
  if (keeps_places_) {
    places_.assign(static_cast<size_t>(n), PicturePlace{});
    std::copy(places.begin(), places.end(), places_.begin());
  }
}

void KvCache::put_back(int64_t at, const std::vector<uint8_t>& bytes, const std::vector<int32_t>& positions,
                       const std::vector<PicturePlace>& places) {
  const auto n = static_cast<int64_t>(positions.size());
  if (at < 0 || at > used()) throw std::out_of_range("KV cache put_back outside the used cells");
  if (bytes.size() != snapshot_bytes(n)) {
    throw std::invalid_argument("KV cells of " + std::to_string(bytes.size()) + " bytes put back as " +
                                std::to_string(n) + " cells (" + std::to_string(snapshot_bytes(n)) + " bytes expected)");
  }
  for (int32_t position : positions) {
    if (position < 0 || position > kMaxPosition) {
      throw std::invalid_argument("KV cell put back at position " + std::to_string(position) + ", outside 0 .. " +
                                  std::to_string(kMaxPosition));
    }
  }
  check_places(places, positions);
  require_free(n);
  move_cells(at, at + n, used() - at);
  positions_.insert(positions_.begin() + at, positions.begin(), positions.end());  // within the reserved capacity
  if (keeps_places_) {
    places_.insert(places_.begin() + at, static_cast<size_t>(n), PicturePlace{});
    std::copy(places.begin(), places.end(), places_.begin() + at);
  }
  write_cells(at, n, bytes.data());
}

void KvCache::copy_from(const KvCache& other) {
  if (other.n_ctx_ != n_ctx_ || other.k_.size() != k_.size() || other.type_k() != type_k() ||
      other.type_v() != type_v() || other.bytes() != bytes()) {
    throw std::invalid_argument("KV cache copy needs caches of the same shape and types");
  }
  std::memcpy(buffer_.data(), other.buffer_.data(), bytes());
  positions_ = other.positions_;  // fits the reserved capacity: no allocation
  places_ = other.places_;
}

}  // namespace peak::runtime
