#include "model/decoder.h"

#include <cmath>

namespace peak::model {

DecoderBuilder::DecoderBuilder(Graph& graph, const HParams& h, const ModelWeights& weights,
                               const std::vector<LayerKv>& kv, const Batch& batch)
    : g(graph), hp(h), w(weights), kv_(kv), batch_(batch) {
  inputs_.tokens = g.input(GgmlType::I32, {batch.n_tokens}, "tokens");
  inputs_.positions = g.input(GgmlType::I32, {batch.n_tokens}, "positions");
}

Tensor* DecoderBuilder::embed() { return g.get_rows(w.token_embd, inputs_.tokens); }

Tensor* DecoderBuilder::norm(Tensor* x, Tensor* weight) { return g.rms_norm(x, hp.rms_eps, weight); }

Tensor* DecoderBuilder::project_heads(Tensor* x, Tensor* weight, Tensor* bias, Tensor* head_norm, int64_t n_heads) {
  Tensor* y = g.mul_mat(weight, x);  // [n_heads * d, n_tokens]
  if (bias) y = g.add(y, bias);
  y = g.reshape(y, {hp.head_dim, n_heads, batch_.n_tokens});
  return head_norm ? norm(y, head_norm) : y;
}

Tensor* DecoderBuilder::rope(Tensor* x) { return g.rope(x, inputs_.positions, hp.rope, w.rope_freqs); }

Tensor* DecoderBuilder::cache_cells(Tensor* cache, int64_t first, int64_t count) {
  return g.view(cache, {hp.head_dim, hp.n_head_kv, count}, {cache->nb[1], cache->nb[2]},
                static_cast<size_t>(first) * cache->nb[2]);
}

Tensor* DecoderBuilder::self_attention(int64_t layer, Tensor* x) {
  const LayerWeights& l = w.layers[static_cast<size_t>(layer)];
  Tensor* q = rope(project_heads(x, l.wq, l.bq, l.q_norm, hp.n_head));     // [d, n_head, n_tokens]
  Tensor* k = rope(project_heads(x, l.wk, l.bk, l.k_norm, hp.n_head_kv));  // [d, n_head_kv, n_tokens]
  Tensor* v = project_heads(x, l.wv, l.bv, nullptr, hp.n_head_kv);         // [d, n_head_kv, n_tokens]

  // Write this batch's keys and values, then attend over every visible cell.
  Tensor* k_cache = kv_[static_cast<size_t>(layer)].k;
  Tensor* v_cache = kv_[static_cast<size_t>(layer)].v;
  g.expand(g.copy(k, cache_cells(k_cache, batch_.first_cell, batch_.n_tokens)));
  g.expand(g.copy(v, cache_cells(v_cache, batch_.first_cell, batch_.n_tokens)));
  const int64_t n_kv = batch_.first_cell + batch_.n_tokens;
  core::AttentionParams attention;
  attention.scale = 1.0f / std::sqrt(static_cast<float>(hp.head_dim));
  Tensor* out = g.attention(q, cache_cells(k_cache, 0, n_kv), cache_cells(v_cache, 0, n_kv),
                            attention);  // causal, [d, n_head, n_tokens]
  return g.mul_mat(l.wo, g.reshape(out, {hp.n_embd_q(), batch_.n_tokens}));
}

Tensor* DecoderBuilder::swiglu_ffn(const LayerWeights& l, Tensor* x) {
  return g.mul_mat(l.ffn_down, g.swiglu(g.mul_mat(l.ffn_gate, x), g.mul_mat(l.ffn_up, x)));
}

Tensor* DecoderBuilder::logits(Tensor* x) {
  if (!batch_.all_logits && batch_.n_tokens > 1) {
    // Only the last token's hidden state goes through the head.
    x = g.view(x, {hp.n_embd, 1}, {x->nb[1]}, static_cast<size_t>(batch_.n_tokens - 1) * x->nb[1]);
  }
  Tensor* out = g.mul_mat(w.output, norm(x, w.output_norm));
  g.output(out);
  return out;
}

Tensor* build_forward(DecoderBuilder& b) {
  Graph& g = b.g;
  Tensor* x = b.embed();  // [n_embd, n_tokens]
  for (int64_t il = 0; il < b.hp.n_layer; ++il) {
    const LayerWeights& l = b.w.layers[static_cast<size_t>(il)];
    x = g.add(x, b.self_attention(il, b.norm(x, l.attn_norm)));
    x = g.add(x, b.swiglu_ffn(l, b.norm(x, l.ffn_norm)));
  }
  return b.logits(x);
}

}  // namespace peak::model
