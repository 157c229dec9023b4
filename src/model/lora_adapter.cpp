#include "model/lora_adapter.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string_view>

#include "kernels/kernels.h"
#include "model/adapter_file.h"
#include "model/model_error.h"
#include "model/tensor_check.h"

namespace peak::model {

using kernels::ggml_type_name;
using kernels::kernels_for;
using kernels::TypeKernels;

namespace {

constexpr std::string_view kSuffixA = ".lora_a";
constexpr std::string_view kSuffixB = ".lora_b";

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

std::optional<LoraTarget> parse_lora_target(std::string_view name) {
  constexpr std::string_view kBlock = "blk.", kWeight = ".weight";
  if (name.substr(0, kBlock.size()) != kBlock || !ends_with(name, kWeight)) return std::nullopt;
  name.remove_prefix(kBlock.size());
  name.remove_suffix(kWeight.size());
  const size_t dot = name.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  const std::optional<int64_t> layer = parse_layer_index(name.substr(0, dot));
  if (!layer) return std::nullopt;
  const std::string_view proj = name.substr(dot + 1);
  for (size_t p = 0; p < kProjectionCount; ++p) {
    if (proj == projection_name(static_cast<Projection>(p))) return LoraTarget{*layer, static_cast<Projection>(p)};
  }
  return std::nullopt;
}

namespace {

std::string shape_text(const gguf::TensorInfo& t) {
  std::string s = "[";
  for (uint32_t i = 0; i < t.n_dims; ++i) s += (i ? ", " : "") + std::to_string(t.ne[i]);
  return s + "]";
}

// A matrix of the kernels' types: 2-D, readable and multipliable.
void require_matrix(const gguf::TensorInfo& t) {
  if (t.ne[2] != 1 || t.ne[3] != 1) {
    throw InvalidModel("adapter tensor '" + std::string(t.name) + "' has shape " + shape_text(t) + "; it must be 2-D");
  }
  const TypeKernels& k = kernels_for(t.type);
  if (!k.to_float || !k.vec_dot) {
    throw UnsupportedModel("adapter tensor '" + std::string(t.name) + "' has type " +
                           ggml_type_name(static_cast<uint32_t>(t.type)) + ", which peak cannot compute with");
  }
}

core::Tensor* describe(core::TensorArena& arena, const gguf::TensorInfo& t) {
  core::Tensor* d = arena.new_tensor(t.type, {t.ne[0], t.ne[1]});
  d->data = const_cast<uint8_t*>(t.data);  // read-only, like the model's weights
  d->set_name("%.*s", static_cast<int>(t.name.size()), t.name.data());
  return d;
}

// b [rank, n_out] as rows of n_out, one per rank, into `storage`: F16 when b
// is F16, or Q8_0 whose values all fit F16's range; else F32 (BF16's range and
// small values are F32's).
core::Tensor* transposed(core::TensorArena& arena, const core::Tensor& b, std::vector<uint8_t>& storage) {
  const int64_t rank = b.ne[0];
  const int64_t n_out = b.ne[1];
  std::vector<float> b_row(static_cast<size_t>(rank));
  std::vector<float> columns(static_cast<size_t>(rank * n_out));  // [n_out, rank] as floats
  float largest = 0.0f;
  const kernels::RowToFloatFn to_float = kernels::kernels_for(b.type).to_float;
  for (int64_t r = 0; r < n_out; ++r) {
    to_float(b.row_ptr(r), b_row.data(), rank);
    for (int64_t j = 0; j < rank; ++j) {
      const float v = b_row[static_cast<size_t>(j)];
      columns[static_cast<size_t>(j * n_out + r)] = v;
      largest = std::max(largest, std::fabs(v));
    }
  }
  constexpr float kHalfMax = 65504.0f;
  const bool half = (b.type == kernels::GgmlType::F16 || b.type == kernels::GgmlType::Q8_0) && largest <= kHalfMax;
  const kernels::GgmlType type = half ? kernels::GgmlType::F16 : kernels::GgmlType::F32;
  core::Tensor* t = arena.new_tensor(type, {n_out, rank});
  storage.resize(t->byte_size());
  t->data = storage.data();
  t->set_name("%s.rows", b.name);
  const kernels::RowFromFloatFn from_float = kernels::kernels_for(type).from_float;
  for (int64_t j = 0; j < rank; ++j) from_float(columns.data() + j * n_out, t->row_ptr(j), n_out);
  return t;
}

}  // namespace

const char* projection_name(Projection p) {
  switch (p) {
    case Projection::Q: return "attn_q";
    case Projection::K: return "attn_k";
    case Projection::V: return "attn_v";
    case Projection::Qkv: return "attn_qkv";
    case Projection::AttnOutput: return "attn_output";
    case Projection::FfnGate: return "ffn_gate";
    case Projection::FfnUp: return "ffn_up";
    case Projection::FfnDown: return "ffn_down";
  }
  return "?";
}

core::Tensor* projection_weight(const LayerWeights& l, Projection p) {
  switch (p) {
    case Projection::Q: return l.wq;
    case Projection::K: return l.wk;
    case Projection::V: return l.wv;
    case Projection::Qkv: return l.wqkv;
    case Projection::AttnOutput: return l.wo;
    case Projection::FfnGate: return l.ffn_gate;
    case Projection::FfnUp: return l.ffn_up;
    case Projection::FfnDown: return l.ffn_down;
  }
  return nullptr;
}

std::shared_ptr<const LoraAdapter> LoraAdapter::load(const Model& base, const std::string& path,
                                                     const io::MapOptions& options) {
  std::shared_ptr<LoraAdapter> a(new LoraAdapter());
  a->base_ = &base;
  a->file_ = gguf::GgufFile::open(path, options);
  const gguf::GgufFile& f = *a->file_;
  require_string_key(f, "general.type", "adapter", "is not a LoRA adapter");
  require_string_key(f, "adapter.type", "lora", "is an adapter of another kind than LoRA");
  require_architecture(f, "general.architecture", base, /*optional=*/false);
  if (const auto alpha = f.find("adapter.lora.alpha")) {
    a->alpha_ = static_cast<float>(alpha->as_float());
    if (!std::isfinite(a->alpha_)) {
      throw InvalidModel("adapter.lora.alpha is " + std::to_string(alpha->as_float()) + "; it must be a finite number");
    }
  }

  // Pair the halves by the name of the matrix they adapt.
  struct Halves {
    const gguf::TensorInfo* a = nullptr;
    const gguf::TensorInfo* b = nullptr;
  };
  std::map<std::string_view, Halves> pairs;
  for (size_t i = 0; i < f.n_tensors(); ++i) {
    const gguf::TensorInfo& t = f.tensor(i);
    if (ends_with(t.name, kSuffixA)) {
      pairs[t.name.substr(0, t.name.size() - kSuffixA.size())].a = &t;
    } else if (ends_with(t.name, kSuffixB)) {
      pairs[t.name.substr(0, t.name.size() - kSuffixB.size())].b = &t;
    } else if (!ends_with(t.name, "_norm.weight")) {
      throw InvalidModel("adapter tensor '" + std::string(t.name) + "' is neither a '.lora_a' nor a '.lora_b' matrix");
    }
  }
  if (pairs.empty()) throw InvalidModel("'" + path + "' holds no LoRA matrices (tensors '<name>.lora_a' / '.lora_b')");

  const HParams& hp = base.hparams();
  a->layers_.resize(static_cast<size_t>(hp.n_layer));
  a->descriptors_ = std::make_unique<core::TensorArena>(3 * pairs.size());
  a->b_rows_.reserve(pairs.size());
  for (const auto& [name, halves] : pairs) {
    const std::string target(name);
    if (!halves.a || !halves.b) {
      throw InvalidModel("adapter has '" + target + (halves.a ? ".lora_a' but no '" : ".lora_b' but no '") + target +
                         (halves.a ? ".lora_b'" : ".lora_a'"));
    }
    const std::optional<LoraTarget> where = parse_lora_target(name);
    if (!where) {
      throw UnsupportedModel("adapter targets '" + target +
                             "': peak applies adapters to the attention and feed-forward projections "
                             "(blk.N.attn_q/attn_k/attn_v/attn_qkv/attn_output/ffn_gate/ffn_up/ffn_down.weight)");
    }
    core::Tensor* w = where->layer < hp.n_layer
                          ? projection_weight(base.weights().layers[static_cast<size_t>(where->layer)], where->projection)
                          : nullptr;
    if (!w) throw InvalidModel("adapter targets '" + target + "', which the model does not have");
    const gguf::TensorInfo& ta = *halves.a;
    const gguf::TensorInfo& tb = *halves.b;
    require_matrix(ta);
    require_matrix(tb);
    const int64_t rank = ta.ne[1];
    if (rank < 1) throw InvalidModel("adapter tensor '" + std::string(ta.name) + "' has rank 0");
    if (ta.ne[0] != w->ne[0]) {
      throw InvalidModel("adapter tensor '" + std::string(ta.name) + "' has shape " + shape_text(ta) + ", expected [" +
                         std::to_string(w->ne[0]) + ", rank] for '" + target + "' of shape [" +
                         std::to_string(w->ne[0]) + ", " + std::to_string(w->ne[1]) + "]");
    }
    if (tb.ne[0] != rank || tb.ne[1] != w->ne[1]) {
      throw InvalidModel("adapter tensor '" + std::string(tb.name) + "' has shape " + shape_text(tb) + ", expected [" +
                         std::to_string(rank) + ", " + std::to_string(w->ne[1]) + "] (rank " + std::to_string(rank) +
                         " of '" + std::string(ta.name) + "')");
    }
    require_finite(ta);
    require_finite(tb);
    LoraPair& p = a->layers_[static_cast<size_t>(where->layer)][static_cast<size_t>(where->projection)];
    p.a = describe(*a->descriptors_, ta);
    p.b = describe(*a->descriptors_, tb);
    a->b_rows_.emplace_back();
    p.b_rows = transposed(*a->descriptors_, *p.b, a->b_rows_.back());
    p.rank = rank;
    // llama.cpp's rule: the user's scale alone when the file gives no alpha.
    p.alpha_scale = a->alpha_ != 0.0f ? a->alpha_ / static_cast<float>(rank) : 1.0f;
    a->min_rank_ = a->n_pairs_ == 0 ? rank : std::min(a->min_rank_, rank);
    a->max_rank_ = std::max(a->max_rank_, rank);
    a->tensor_bytes_ += ta.n_bytes + tb.n_bytes;
    ++a->n_pairs_;
  }
  return a;
}

}  // namespace peak::model
