#include "core/graph.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

#include "core/ops.h"
#include "kernels/kernels.h"

namespace peak::core {

using kernels::GgmlType;
using kernels::kernels_for;
using kernels::kRepackRows;
using kernels::TypeKernels;

namespace {

void require(bool condition, const char* what) {
  if (!condition) throw std::invalid_argument(what);
}

void copy_dims(std::initializer_list<int64_t> from, int64_t (&to)[kMaxDims]) {
  require(from.size() >= 1 && from.size() <= kMaxDims, "a tensor has 1 to 4 dimensions");
  int d = 0;
  for (int64_t n : from) to[d++] = n;
  for (; d < kMaxDims; ++d) to[d] = 1;
}

bool is_f32(const Tensor* t) { return t->type == GgmlType::F32; }

// b can be repeated to fill a: every dimension of a is a multiple of b's.
bool can_repeat(const Tensor* b, const Tensor* a) {
  for (int d = 0; d < kMaxDims; ++d) {
    if (b->ne[d] == 0 || a->ne[d] % b->ne[d] != 0) return false;
  }
  return true;
}

// vec_dot for the type, and a way to convert activations to its dot partner.
bool has_dot_kernels(GgmlType type) {
  const TypeKernels& kernels = kernels_for(type);
  return kernels.vec_dot != nullptr && kernels_for(kernels.dot_partner).from_float != nullptr;
}

size_t mix_pointer(const Tensor* t) {
  auto bits = reinterpret_cast<uintptr_t>(t);
  bits ^= bits >> 17;
  bits *= 0x9e3779b97f4a7c15ull & UINTPTR_MAX;
  return static_cast<size_t>(bits ^ (bits >> 29));
}

}  // namespace

// ---- TensorArena -------------------------------------------------------------

TensorArena::TensorArena(size_t capacity) : tensors_(capacity) {}

Tensor* TensorArena::new_tensor(GgmlType type, std::initializer_list<int64_t> ne) {
  int64_t dims[kMaxDims];
  copy_dims(ne, dims);
  return new_tensor(type, dims);
}

Tensor* TensorArena::new_tensor(GgmlType type, const int64_t (&ne)[kMaxDims]) {
  if (used_ == tensors_.size()) throw std::length_error("tensor arena is full");
  Tensor* t = &tensors_[used_];
  *t = Tensor{};
  set_dense_layout(*t, type, ne);
  ++used_;
  return t;
}

// ---- Graph: leaves and views ---------------------------------------------------

Graph::Graph(size_t max_tensors) : arena_(max_tensors) {
  nodes_.reserve(max_tensors);
  leafs_.reserve(max_tensors);
  // Four slots per arena tensor leave room for the external leaves (weights) and
  // keep the set at most half full, so probes stay short.
  size_t slots = 16;
  while (slots < 4 * max_tensors) slots *= 2;
  visited_.assign(slots, VisitSlot{});
}

void Graph::reset() {
  arena_.reset();
  nodes_.clear();
  leafs_.clear();
  if (++build_ == 0) {  // the stamp wrapped: old stamps could look current again
    visited_.assign(visited_.size(), VisitSlot{});
    build_ = 1;
  }
}

Tensor* Graph::new_tensor(GgmlType type, const int64_t (&ne)[kMaxDims]) {
  Tensor* t = arena_.new_tensor(type, ne);
  t->arena_index = static_cast<int32_t>(arena_.size() - 1);
  return t;
}

Tensor* Graph::input(GgmlType type, std::initializer_list<int64_t> ne, const char* name) {
  int64_t dims[kMaxDims];
  copy_dims(ne, dims);
  Tensor* t = new_tensor(type, dims);
  t->is_input = true;
  t->set_name("%s", name);
  return t;
}

Tensor* Graph::new_view(Tensor* a, const int64_t (&ne)[kMaxDims], const size_t (&nb)[kMaxDims],
                        size_t offset) {
  require(a->repacked_data == nullptr, "a repacked weight cannot be viewed: only mul_mat reads it");
  Tensor* t = new_tensor(a->type, ne);
  for (int d = 0; d < kMaxDims; ++d) t->nb[d] = nb[d];
  t->op = Op::View;
  t->key_lanes = a->key_lanes;
  t->src[0] = a;
  t->view_src = a->view_src != nullptr ? a->view_src : a;
  t->view_offset = (a->view_src != nullptr ? a->view_offset : 0) + offset;
  t->set_name("%s (view)", a->name);
  return t;
}

Tensor* Graph::view(Tensor* a, std::initializer_list<int64_t> ne, std::initializer_list<size_t> nb,
                    size_t offset) {
  int64_t dims[kMaxDims];
  copy_dims(ne, dims);
  require(nb.size() + 1 == ne.size(), "view: give one stride per dimension after the first");
  size_t strides[kMaxDims] = {a->nb[0], 0, 0, 0};
  int d = 1;
  for (size_t stride : nb) strides[d++] = stride;
  for (; d < kMaxDims; ++d) strides[d] = strides[d - 1] * static_cast<size_t>(dims[d - 1]);
  Tensor probe;
  probe.type = a->type;
  std::memcpy(probe.ne, dims, sizeof(dims));
  std::memcpy(probe.nb, strides, sizeof(strides));
  require(offset + probe.byte_size() <= a->byte_size(), "view: reaches past the end of its source");
  return new_view(a, dims, strides, offset);
}

Tensor* Graph::reshape(Tensor* a, std::initializer_list<int64_t> ne) {
  require(a->is_contiguous(), "reshape: source must be contiguous");
  int64_t dims[kMaxDims];
  copy_dims(ne, dims);
  require(dims[0] * dims[1] * dims[2] * dims[3] == a->element_count(),
          "reshape: element count changes");
  Tensor dense;
  set_dense_layout(dense, a->type, dims);
  return new_view(a, dims, dense.nb, 0);
}

Tensor* Graph::permute(Tensor* a, int axis0, int axis1, int axis2, int axis3) {
  const int axes[kMaxDims] = {axis0, axis1, axis2, axis3};
  bool seen[kMaxDims] = {false, false, false, false};
  int64_t ne[kMaxDims];
  size_t nb[kMaxDims];
  for (int d = 0; d < kMaxDims; ++d) {
    require(axes[d] >= 0 && axes[d] < kMaxDims && !seen[axes[d]], "permute: axes must be a permutation");
    seen[axes[d]] = true;
    ne[axes[d]] = a->ne[d];
    nb[axes[d]] = a->nb[d];
  }
  return new_view(a, ne, nb, 0);
}

Tensor* Graph::transpose(Tensor* a) { return permute(a, 1, 0, 2, 3); }

// ---- Graph: ops ----------------------------------------------------------------

Tensor* Graph::new_node(Op op, GgmlType type, const int64_t (&ne)[kMaxDims],
                        std::initializer_list<Tensor*> sources) {
  Tensor* t = new_tensor(type, ne);
  t->op = op;
  int s = 0;
  for (Tensor* source : sources) {
    // Repacked weights (kernels.h, TypeKernels::repack) have no readable rows.
    require(source == nullptr || source->repacked_data == nullptr || (op == Op::MulMat && s == 0),
            "a repacked weight can only be the first source of mul_mat");
    // Keys in lanes (Tensor::key_lanes) have no rows as stored.
    require(source == nullptr || !source->key_lanes || (op == Op::GetRows && s == 0) ||
                (op == Op::Attention && s == 1),
            "keys in lanes can only be read by get_rows and attention");
    t->src[s++] = source;
  }
  t->set_name("%s", op_name(op));
  return t;
}

Tensor* Graph::get_rows(Tensor* table, Tensor* ids) {
  require(ids->type == GgmlType::I32 && ids->ne[1] == 1 && ids->ne[2] == 1 && ids->ne[3] == 1 &&
              ids->is_contiguous(),
          "get_rows: ids must be a dense vector of I32");
  require(table->ne[2] == 1 && table->ne[3] == 1 && table->has_dense_rows(),
          "get_rows: table must be a matrix with dense rows");
  require(kernels_for(table->type).to_float != nullptr, "get_rows: no kernels for the table's type");
  return new_node(Op::GetRows, GgmlType::F32, {table->ne[0], ids->ne[0], 1, 1}, {table, ids});
}

Tensor* Graph::mul_mat(Tensor* w, Tensor* x) {
  require(is_f32(x) && x->nb[0] == sizeof(float), "mul_mat: activations must be F32 with dense rows");
  require(w->has_dense_rows(), "mul_mat: weight rows must be dense");
  require(w->ne[0] == x->ne[0], "mul_mat: inner dimensions differ");
  require(has_dot_kernels(w->type), "mul_mat: no kernels for the weight type");
  require(w->repacked_data == nullptr ||
              (kernels_for(w->type).gemm_repacked != nullptr && w->ne[1] % kRepackRows == 0),
          "mul_mat: the repacked weight has no kernels on this path or a partial row group");
  require(x->ne[2] % w->ne[2] == 0 && x->ne[3] % w->ne[3] == 0,
          "mul_mat: weight batches must divide activation batches");
  return new_node(Op::MulMat, GgmlType::F32, {w->ne[1], x->ne[1], x->ne[2], x->ne[3]}, {w, x});
}

Tensor* Graph::mul_mat(Tensor* w, Tensor* x, float scale, Tensor* addend) {
  Tensor* t = mul_mat(w, x);
  require(addend == nullptr || (is_f32(addend) && addend->same_shape(*t) && addend->nb[0] == sizeof(float)),
          "mul_mat: the addend must be F32 of the result's shape with dense rows");
  t->src[2] = addend;
  t->params.i[0] = kMulMatScaledSum;
  t->params.f[0] = scale;
  return t;
}

Tensor* Graph::mul_mat_low_rank(Tensor* w, Tensor* x, Tensor* a, Tensor* b, Tensor* b_rows, float scale) {
  require(a->ne[0] == w->ne[0] && b->ne[0] == a->ne[1] && b->ne[1] == w->ne[1] && b_rows->ne[0] == b->ne[1] &&
              b_rows->ne[1] == b->ne[0],
          "mul_mat_low_rank: a must be [k, rank], b [rank, n] and b_rows [n, rank] for w [k, n]");
  const bool two_d = w->ne[2] == 1 && w->ne[3] == 1 && x->ne[2] == 1 && x->ne[3] == 1 && a->ne[2] == 1 &&
                     a->ne[3] == 1 && b_rows->ne[2] == 1 && b_rows->ne[3] == 1;
  if (!two_d || x->ne[1] > kPrivateConversionRows || a->repacked_data != nullptr) {
    Tensor* y = mul_mat(w, x);
    return mul_mat(b, mul_mat(a, x, scale, nullptr), 1.0f, y);
  }
  require(a->has_dense_rows() && b_rows->has_dense_rows() && b_rows->nb[0] == type_block_bytes(b_rows->type),
          "mul_mat_low_rank: a's and b_rows' rows must be dense");
  require(has_dot_kernels(a->type), "mul_mat_low_rank: no kernels for a's type");
  require(type_block_elements(b_rows->type) == 1 && kernels_for(b_rows->type).weighted_sum != nullptr,
          "mul_mat_low_rank: b_rows must be F32 or F16");
  Tensor* t = mul_mat(w, x);
  t->src[2] = a;
  t->src[3] = b_rows;
  t->params.i[0] = kMulMatLowRank;
  t->params.f[0] = scale;
  return t;
}

Tensor* Graph::element_wise(Op op, Tensor* a, Tensor* b) {
  require(is_f32(a) && (b == nullptr || is_f32(b)), "element-wise ops take F32 tensors");
  return new_node(op, GgmlType::F32, a->ne, {a, b});
}

Tensor* Graph::add(Tensor* a, Tensor* b) {
  require(can_repeat(b, a), "add: b cannot be repeated to a's shape");
  return element_wise(Op::Add, a, b);
}

Tensor* Graph::scale(Tensor* a, float s) {
  Tensor* t = element_wise(Op::Scale, a, nullptr);
  t->params.f[0] = s;
  return t;
}

Tensor* Graph::rms_norm(Tensor* a, float eps, Tensor* weight) {
  require(weight == nullptr || (weight->ne[0] == a->ne[0] && weight->row_count() == 1 && weight->nb[0] == sizeof(float)),
          "rms_norm: weight must be one contiguous row as long as a's rows");
  Tensor* t = element_wise(Op::RmsNorm, a, weight);
  t->params.f[0] = eps;
  return t;
}

Tensor* Graph::layer_norm(Tensor* a, float eps, Tensor* weight, Tensor* bias) {
  for (const Tensor* row : {weight, bias}) {
    require(row == nullptr ||
                (is_f32(row) && row->ne[0] == a->ne[0] && row->row_count() == 1 && row->nb[0] == sizeof(float)),
            "layer_norm: weight and bias must be F32 contiguous rows as long as a's rows");
  }
  require(eps >= 0.0f && std::isfinite(eps), "layer_norm: eps must be finite and not negative");
  Tensor* t = element_wise(Op::LayerNorm, a, weight);
  t->src[2] = bias;
  t->params.f[0] = eps;
  return t;
}

Tensor* Graph::rope(Tensor* a, Tensor* positions, const RopeParams& rope, Tensor* freq_factors) {
  const int64_t n_dims = rope.n_dims == 0 ? a->ne[0] : rope.n_dims;
  require(n_dims % 2 == 0 && n_dims <= a->ne[0], "rope: n_dims must be even and at most head_dim");
  const int64_t per_token = rope_positions_per_token(rope.mode);
  require(positions->type == GgmlType::I32 && positions->ne[0] == per_token * a->ne[2] &&
              positions->element_count() == positions->ne[0] && positions->is_contiguous(),
          "rope: one I32 position per token (dimension 2; two, y then x, in vision mode; three, t, h and w, in "
          "multimodal mode), dense");
  require(rope.mode == RopeMode::Normal || rope.mode == RopeMode::Neox || rope.mode == RopeMode::Vision ||
              rope.mode == RopeMode::Multi,
          "rope: unknown mode");
  require(rope.mode != RopeMode::Vision || (n_dims % 4 == 0 && freq_factors == nullptr),
          "rope: vision mode needs n_dims a multiple of 4 and no freq_factors");
  require(rope.mode != RopeMode::Multi ||
              (rope.sections[0] >= 0 && rope.sections[1] >= 0 && rope.sections[0] + rope.sections[1] <= n_dims / 2),
          "rope: multimodal sections must be non-negative and at most n_dims / 2 together");
  require(rope.attn_factor > 0.0f && std::isfinite(rope.attn_factor), "rope: attn_factor must be positive and finite");
  require(freq_factors == nullptr || (is_f32(freq_factors) && freq_factors->is_contiguous() &&
                                      freq_factors->element_count() == n_dims / 2),
          "rope: freq_factors must be F32 [n_dims / 2]");
  Tensor* t = element_wise(Op::Rope, a, nullptr);
  t->src[1] = positions;
  t->src[2] = freq_factors;
  t->params.i[0] = static_cast<int32_t>(n_dims);
  t->params.i[1] = static_cast<int32_t>(rope.mode);
  t->params.f[0] = rope.freq_base;
  t->params.f[1] = rope.freq_scale;
  t->params.f[2] = rope.attn_factor;
  t->params.i[2] = rope.sections[0];
  t->params.i[3] = rope.sections[1];
  return t;
}

Tensor* Graph::swiglu(Tensor* gate, Tensor* up) {
  require(gate->same_shape(*up), "swiglu: gate and up must have the same shape");
  return element_wise(Op::SwiGlu, gate, up);
}

Tensor* Graph::geglu(Tensor* gate, Tensor* up) {
  require(gate->same_shape(*up), "geglu: gate and up must have the same shape");
  return element_wise(Op::GeGlu, gate, up);
}

Tensor* Graph::gelu(Tensor* a) {
  Tensor* t = element_wise(Op::Gelu, a, nullptr);
  t->params.i[0] = 0;
  return t;
}

Tensor* Graph::gelu_erf(Tensor* a) {
  Tensor* t = element_wise(Op::Gelu, a, nullptr);
  t->params.i[0] = 1;  // erf, not the tanh approximation
  return t;
}

Tensor* Graph::softcap(Tensor* a, float cap) {
  require(cap > 0.0f && std::isfinite(cap), "softcap: cap must be positive and finite");
  Tensor* t = element_wise(Op::Softcap, a, nullptr);
  t->params.f[0] = cap;
  return t;
}

Tensor* Graph::copy(Tensor* src, Tensor* dst) {
  require(is_f32(src) && src->nb[0] == sizeof(float), "copy: source must be F32 with dense rows");
  require(kernels_for(dst->type).from_float != nullptr, "copy: no kernels to write the destination type");
  require(src->element_count() == dst->element_count() && src->ne[0] == dst->ne[0],
          "copy: source and destination differ in rows or element count");
  require(dst->has_dense_rows(), "copy: destination rows must be dense");
  int64_t ne[kMaxDims];
  std::memcpy(ne, dst->ne, sizeof(ne));
  Tensor* t = new_view(dst, ne, dst->nb, 0);
  t->op = Op::Copy;
  t->src[0] = src;
  t->src[1] = dst;
  t->set_name("copy of %s", src->name);
  return t;
}

Tensor* Graph::attention(Tensor* q, Tensor* k, Tensor* v, const AttentionParams& params) {
  const int64_t head_dim = q->ne[0];
  const int64_t n_head = q->ne[1];
  const int64_t n_tokens = q->ne[2];
  const int64_t n_head_kv = k->ne[1];
  const int64_t n_kv = k->ne[2];
  require(is_f32(q) && q->nb[0] == sizeof(float) && q->ne[3] == 1,
          "attention: q must be F32 [head_dim, n_head, n_tokens]");
  require(k->ne[0] == head_dim && v->same_shape(*k) && k->ne[3] == 1,
          "attention: k and v must be [head_dim, n_head_kv, n_kv]");
  require(k->has_dense_rows() && v->has_dense_rows(), "attention: k and v rows must be dense");
  require(has_dot_kernels(k->type), "attention: no kernels for the k type");
  require(kernels_for(v->type).weighted_sum != nullptr && head_dim % type_block_elements(v->type) == 0,
          "attention: v must be F32, F16, Q8_0 or Q4_0 with whole blocks per row");
  require(head_dim % type_block_elements(kernels_for(k->type).dot_partner) == 0,
          "attention: head_dim must be a multiple of the block size of k's dot partner");
  require(n_head_kv > 0 && n_head % n_head_kv == 0, "attention: n_head must be a multiple of n_head_kv");
  require(!params.causal || n_kv >= n_tokens, "attention: causal needs n_kv >= n_tokens");
  require(std::isfinite(params.scale), "attention: scale must be finite");
  require(params.window >= 0, "attention: window must not be negative");
  require(params.window == 0 || params.causal, "attention: a sliding window needs causal attention");
  require(params.softcap >= 0.0f && std::isfinite(params.softcap), "attention: softcap must be 0 or positive and finite");
  // A window of n_kv cells or more hides nothing: stored as none, so what is
  // stored fits params.i whenever n_kv does.
  const int64_t window = params.window < n_kv ? params.window : 0;
  require(window <= std::numeric_limits<int32_t>::max(), "attention: window too large");
  require(!k->key_lanes || (k->type == GgmlType::Q8_0 && kernels_for(GgmlType::Q8_0).gemm_key_lanes != nullptr),
          "attention: keys in lanes need Q8_0 and a path that scores them");
  Tensor* t = new_node(Op::Attention, GgmlType::F32, {head_dim, n_head, n_tokens, 1}, {q, k, v});
  t->params.f[0] = params.scale;
  t->params.f[1] = params.softcap;
  t->params.i[0] = params.causal ? 1 : 0;
  t->params.i[1] = static_cast<int32_t>(window);
  return t;
}

Tensor* Graph::attention(Tensor* q, Tensor* k, Tensor* v, const AttentionParams& params, Tensor* key_ranges) {
  require(!params.causal && params.window == 0, "attention: key ranges take the place of causal masks and windows");
  require(key_ranges->type == GgmlType::I32 && key_ranges->ne[0] == 2 && key_ranges->ne[1] == q->ne[2] &&
              key_ranges->ne[2] == 1 && key_ranges->ne[3] == 1 && key_ranges->is_contiguous(),
          "attention: key_ranges must be a dense I32 [2, n_tokens]");
  Tensor* t = attention(q, k, v, params);
  t->src[3] = key_ranges;
  return t;
}

Tensor* Graph::mean_rows(Tensor* a, Tensor* row_ranges) {
  require(is_f32(a) && a->nb[0] == sizeof(float) && a->ne[2] == 1 && a->ne[3] == 1,
          "mean_rows: a must be an F32 matrix with dense rows");
  require(row_ranges->type == GgmlType::I32 && row_ranges->ne[0] == 2 && row_ranges->ne[2] == 1 &&
              row_ranges->ne[3] == 1 && row_ranges->is_contiguous(),
          "mean_rows: row_ranges must be a dense I32 [2, m]");
  return new_node(Op::MeanRows, GgmlType::F32, {a->ne[0], row_ranges->ne[1], 1, 1}, {a, row_ranges});
}

// ---- Graph: ordering -----------------------------------------------------------

bool Graph::mark_visited(const Tensor* t) {
  const size_t mask = visited_.size() - 1;
  for (size_t slot = mix_pointer(t) & mask;; slot = (slot + 1) & mask) {
    VisitSlot& entry = visited_[slot];
    if (entry.build != build_) {
      entry = VisitSlot{t, build_};
      return true;
    }
    if (entry.tensor == t) return false;
  }
}

void Graph::visit(Tensor* t) {
  if (!mark_visited(t)) return;
  if (nodes_.size() + leafs_.size() >= visited_.size() / 2) {
    throw std::length_error("graph: too many tensors for its visited set");
  }
  for (Tensor* source : t->src) {
    if (source != nullptr) visit(source);
  }
  if (t->op == Op::None) {
    if (leafs_.size() == leafs_.capacity()) throw std::length_error("graph: too many leaves");
    leafs_.push_back(t);
  } else {
    if (nodes_.size() == nodes_.capacity()) throw std::length_error("graph: too many nodes");
    nodes_.push_back(t);
  }
}

void Graph::expand(Tensor* t) { visit(t); }

void Graph::output(Tensor* t) {
  t->is_output = true;
  expand(t);
}

}  // namespace peak::core
