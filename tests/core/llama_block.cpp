#include "llama_block.h"

#include <cmath>

namespace peak::core::testing {

using kernels::GgmlType;

LlamaBlock::LlamaBlock(Leaves& leaves, const LlamaShape& s, Contents contents) : shape(s) {
  const bool random = contents == Contents::Random;
  auto weight = [&](GgmlType type, std::initializer_list<int64_t> ne, float lo, float hi) {
    return random ? leaves.random(type, ne, lo, hi) : leaves.shape_only(type, ne);
  };
  auto cache = [&](std::initializer_list<int64_t> ne) {
    return random ? leaves.zeros(GgmlType::Q8_0, ne) : leaves.shape_only(GgmlType::Q8_0, ne);
  };
  const int64_t n_embd_kv = s.head_dim() * s.n_head_kv;
  attn_norm = weight(GgmlType::F32, {s.n_embd}, 0.5f, 1.5f);
  wq = weight(GgmlType::F16, {s.n_embd, s.n_embd}, -0.1f, 0.1f);
  wk = weight(GgmlType::F16, {s.n_embd, n_embd_kv}, -0.1f, 0.1f);
  wv = weight(GgmlType::F16, {s.n_embd, n_embd_kv}, -0.1f, 0.1f);
  wo = weight(GgmlType::F16, {s.n_embd, s.n_embd}, -0.1f, 0.1f);
  ffn_norm = weight(GgmlType::F32, {s.n_embd}, 0.5f, 1.5f);
  w_gate = weight(GgmlType::F16, {s.n_embd, s.n_ff}, -0.1f, 0.1f);
  w_up = weight(GgmlType::F16, {s.n_embd, s.n_ff}, -0.1f, 0.1f);
  w_down = weight(GgmlType::F16, {s.n_ff, s.n_embd}, -0.1f, 0.1f);
  k_cache = cache({s.head_dim(), s.n_head_kv, s.n_ctx});
  v_cache = cache({s.head_dim(), s.n_head_kv, s.n_ctx});
}

Tensor* LlamaBlock::build(Graph& g, int64_t n_tokens, int64_t n_past) const {
  const int64_t d = shape.head_dim();
  const int64_t n_kv = n_past + n_tokens;
  Tensor* x = g.input(GgmlType::F32, {shape.n_embd, n_tokens}, "embeddings");
  Tensor* positions = g.input(GgmlType::I32, {n_tokens}, "positions");
  const RopeParams rope{static_cast<int32_t>(d), RopeMode::Normal, 10000.0f, 1.0f};

  // Attention: [n_embd, n_tokens] -> per-head [d, heads, n_tokens].
  Tensor* cur = g.rms_norm(x, 1e-5f, attn_norm);
  Tensor* q = g.rope(g.reshape(g.mul_mat(wq, cur), {d, shape.n_head, n_tokens}), positions, rope);
  Tensor* k = g.rope(g.reshape(g.mul_mat(wk, cur), {d, shape.n_head_kv, n_tokens}), positions, rope);
  Tensor* v = g.reshape(g.mul_mat(wv, cur), {d, shape.n_head_kv, n_tokens});
  // Store this batch's keys and values at positions n_past.. of the cache.
  auto cache_slots = [&](Tensor* cache, int64_t first, int64_t count) {
    return g.view(cache, {d, shape.n_head_kv, count}, {cache->nb[1], cache->nb[2]},
                  static_cast<size_t>(first) * cache->nb[2]);
  };
  g.expand(g.copy(k, cache_slots(k_cache, n_past, n_tokens)));
  g.expand(g.copy(v, cache_slots(v_cache, n_past, n_tokens)));
  AttentionParams attention;  // causal
  attention.scale = 1.0f / std::sqrt(static_cast<float>(d));
  attention.window = shape.window;
  attention.softcap = shape.softcap;
  Tensor* attn = g.attention(q, cache_slots(k_cache, 0, n_kv), cache_slots(v_cache, 0, n_kv), attention);
  x = g.add(x, g.mul_mat(wo, g.reshape(attn, {shape.n_embd, n_tokens})));

  // Feed-forward: [n_embd, n_tokens] -> [n_ff, n_tokens] -> [n_embd, n_tokens].
  cur = g.rms_norm(x, 1e-5f, ffn_norm);
  cur = g.mul_mat(w_down, g.swiglu(g.mul_mat(w_gate, cur), g.mul_mat(w_up, cur)));
  Tensor* out = g.add(x, cur);
  g.output(out);
  return out;
}

void LlamaBlock::fill_inputs(const Graph& g, int64_t n_past) {
  for (Tensor* leaf : g.leafs()) {
    if (!leaf->is_input) continue;
    if (leaf->type == GgmlType::I32) {
      auto* positions = static_cast<int32_t*>(leaf->data);
      for (int64_t i = 0; i < leaf->ne[0]; ++i) positions[i] = static_cast<int32_t>(n_past + i);
    } else {
      auto* values = static_cast<float*>(leaf->data);
      for (int64_t i = 0; i < leaf->element_count(); ++i) {
        values[i] = std::sin(0.37f * static_cast<float>(i + n_past));
      }
    }
  }
}

}  // namespace peak::core::testing
