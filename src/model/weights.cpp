#include "model/weights.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "kernels/kernels.h"
#include "model/model_error.h"
#include "model/tensor_check.h"

namespace peak::model {
namespace {

std::string shape_text(const int64_t* ne, size_t n) {
  std::string s = "[";
  for (size_t i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(ne[i]);
  return s + "]";
}

class Binder {
 public:
  Binder(const gguf::GgufFile& file, const HParams& hp, core::TensorArena& arena, bool check_values)
      : file_(file), hp_(hp), arena_(arena), check_values_(check_values) {}

  Tensor* require(const std::string& name, std::initializer_list<int64_t> shape) {
    Tensor* t = optional(name, shape);
    if (!t) throw InvalidModel("model lacks tensor '" + name + "' (" + arch_name(hp_.arch) + ")");
    return t;
  }

  Tensor* optional(const std::string& name, std::initializer_list<int64_t> shape) {
    const gguf::TensorInfo* info = file_.find_tensor(name);
    if (!info) return nullptr;
    int64_t expected[core::kMaxDims] = {1, 1, 1, 1};
    size_t i = 0;
    for (int64_t d : shape) expected[i++] = d;
    for (int d = 0; d < core::kMaxDims; ++d) {
      if (info->ne[d] != expected[d]) {
        throw InvalidModel("tensor '" + name + "' has shape " + shape_text(info->ne, info->n_dims) +
                                 ", expected " + shape_text(expected, shape.size()));
      }
    }
    const TypeKernels& k = kernels_for(info->type);
    if (!k.to_float || (shape.size() > 1 && !k.vec_dot)) {
      throw UnsupportedModel("tensor '" + name + "' has type " + ggml_type_name(static_cast<uint32_t>(info->type)) +
                               ", which peak cannot compute with");
    }
    // Vectors (norm weights, biases) are small enough to read at every load.
    if (check_values_ && shape.size() == 1) require_finite(*info);
    Tensor* t = arena_.new_tensor(info->type, expected);
    t->data = const_cast<uint8_t*>(info->data);  // weights are read-only; the mapping is PROT_READ
    t->set_name("%s", name.c_str());
    return t;
  }

  // Optional per-pair rope frequency divisors [n_dims / 2]: F32, each positive
  // and finite (a zero would turn every angle into infinity).
  Tensor* frequency_factors(const std::string& name) {
    Tensor* t = optional(name, {hp_.rope.n_dims / 2});
    if (!t) return nullptr;
    if (t->type != GgmlType::F32) throw InvalidModel("tensor '" + name + "' must be F32");
    if (!check_values_) return t;
    const auto* factors = static_cast<const float*>(t->data);
    for (int64_t i = 0; i < t->ne[0]; ++i) {
      if (!(factors[i] > 0.0f) || !std::isfinite(factors[i])) {
        throw InvalidModel("tensor '" + name + "' holds " + std::to_string(factors[i]) + " at " + std::to_string(i) +
                           "; frequency factors must be positive");
      }
    }
    return t;
  }

 private:
  const gguf::GgufFile& file_;
  const HParams& hp_;
  core::TensorArena& arena_;
  bool check_values_;
};

}  // namespace

ModelWeights bind_weights(const gguf::GgufFile& file, const HParams& hp, bool check_values) {
  ModelWeights w;
  w.descriptors = std::make_unique<core::TensorArena>(file.n_tensors() + 1);
  Binder b(file, hp, *w.descriptors, check_values);
  const int64_t e = hp.n_embd, q = hp.n_embd_q(), kv = hp.n_embd_kv(), d = hp.head_dim, ff = hp.n_ff;

  w.token_embd = b.require("token_embd.weight", {e, hp.n_vocab});
  w.output_norm = b.require("output_norm.weight", {e});
  w.output = b.optional("output.weight", {e, hp.n_vocab});
  w.tied_output = w.output == nullptr;
  if (w.tied_output) w.output = w.token_embd;
  w.rope_freqs = b.frequency_factors("rope_freqs.weight");
  if (hp.arch == Arch::Phi3) {
    w.rope_factors_long = b.frequency_factors("rope_factors_long.weight");
    w.rope_factors_short = b.frequency_factors("rope_factors_short.weight");
    if ((w.rope_factors_long == nullptr) != (w.rope_factors_short == nullptr)) {
      throw InvalidModel("LongRoPE needs both 'rope_factors_long.weight' and 'rope_factors_short.weight'");
    }
  }
  // Gemma's RMS norms scale by (1 + w); llama.cpp's converter stores 1 + w, so
  // its norm weights apply as everyone else's: rms_norm(x) * w.
  const bool gemma = hp.arch == Arch::Gemma2 || hp.arch == Arch::Gemma3;

  w.layers.resize(static_cast<size_t>(hp.n_layer));
  for (int64_t i = 0; i < hp.n_layer; ++i) {
    LayerWeights& l = w.layers[static_cast<size_t>(i)];
    const std::string p = "blk." + std::to_string(i) + ".";
    l.attn_norm = b.require(p + "attn_norm.weight", {e});
    // Phi-3 files hold Q, K and V in one matrix (separate ones are accepted too).
    if (hp.arch == Arch::Phi3) l.wqkv = b.optional(p + "attn_qkv.weight", {e, q + 2 * kv});
    if (!l.wqkv) {
      l.wq = b.require(p + "attn_q.weight", {e, q});
      l.wk = b.require(p + "attn_k.weight", {e, kv});
      l.wv = b.require(p + "attn_v.weight", {e, kv});
    }
    l.wo = b.require(p + "attn_output.weight", {q, e});
    if (hp.arch == Arch::Qwen2) {
      l.bq = b.require(p + "attn_q.bias", {q});
      l.bk = b.require(p + "attn_k.bias", {kv});
      l.bv = b.require(p + "attn_v.bias", {kv});
    }
    if (hp.arch == Arch::Qwen3 || hp.arch == Arch::Gemma3) {
      l.q_norm = b.require(p + "attn_q_norm.weight", {d});
      l.k_norm = b.require(p + "attn_k_norm.weight", {d});
    }
    if (gemma) l.attn_post_norm = b.require(p + "post_attention_norm.weight", {e});
    l.ffn_norm = b.require(p + "ffn_norm.weight", {e});
    if (hp.arch == Arch::Phi3) {
      l.ffn_up = b.require(p + "ffn_up.weight", {e, 2 * ff});  // gate rows, then up rows
    } else {
      l.ffn_gate = b.require(p + "ffn_gate.weight", {e, ff});
      l.ffn_up = b.require(p + "ffn_up.weight", {e, ff});
    }
    l.ffn_down = b.require(p + "ffn_down.weight", {ff, e});
    if (gemma) l.ffn_post_norm = b.require(p + "post_ffw_norm.weight", {e});
  }
  return w;
}

Tensor* rope_factors_for_context(const ModelWeights& w, const HParams& hp, int64_t n_ctx) {
  if (w.rope_factors_long != nullptr) {
    return n_ctx > hp.rope_original_context ? w.rope_factors_long : w.rope_factors_short;
  }
  return w.rope_freqs;
}

}  // namespace peak::model
