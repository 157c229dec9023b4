#include "model/decoder.h"

#include <algorithm>
#include <stdexcept>

namespace peak::model {

using kernels::GgmlType;

DecoderBuilder::DecoderBuilder(Graph& graph, const HParams& h, const ModelWeights& weights,
                               const std::vector<LayerKv>& kv, const Batch& batch, Tensor* rope_factors,
                               const DecoderAdapters* adapters)
    : g(graph),
      hp(h),
      w(weights),
      batch_(batch),
      single_{&kv, batch},
      sequences_(&single_),
      n_sequences_(1),
      rope_factors_(rope_factors),
      adapters_(adapters) {
  inputs_.tokens = g.input(GgmlType::I32, {batch.n_tokens}, "tokens");
  inputs_.positions =
      g.input(GgmlType::I32, {core::rope_positions_per_token(h.rope.mode) * batch.n_tokens}, "positions");
  if (batch.embeddings) inputs_.embeddings = g.input(GgmlType::F32, {hp.n_embd, batch.n_tokens}, "embeddings");
  if (batch.bidirectional) {
    inputs_.key_ranges = g.input(GgmlType::I32, {2, batch.n_tokens}, "key_ranges");
    if (std::any_of(hp.layers.begin(), hp.layers.end(), [](const LayerAttention& l) { return l.sliding; })) {
      inputs_.sliding_key_ranges = g.input(GgmlType::I32, {2, batch.n_tokens}, "sliding_key_ranges");
    }
  }
}

DecoderBuilder::DecoderBuilder(Graph& graph, const HParams& h, const ModelWeights& weights,
                               const BatchSequence* sequences, int64_t n_sequences, Tensor* rope_factors,
                               const DecoderAdapters* adapters)
    : g(graph),
      hp(h),
      w(weights),
      sequences_(sequences),
      n_sequences_(n_sequences),
      rope_factors_(rope_factors),
      adapters_(adapters) {
  batch_.n_tokens = 0;
  batch_.output_rows = 0;
  for (int64_t s = 0; s < n_sequences; ++s) {
    if (sequences[s].cells.embeddings || sequences[s].cells.bidirectional) {
      throw std::invalid_argument("sequences side by side take token ids, attending causally");
    }
    batch_.n_tokens += sequences[s].cells.n_tokens;
    batch_.output_rows += sequences[s].cells.output_rows;
  }
  inputs_.tokens = g.input(GgmlType::I32, {batch_.n_tokens}, "tokens");
  inputs_.positions =
      g.input(GgmlType::I32, {core::rope_positions_per_token(h.rope.mode) * batch_.n_tokens}, "positions");
  if (n_sequences > 1) {
    inputs_.output_rows = g.input(GgmlType::I32, {batch_.output_rows}, "output rows");
    gathered_attention_ = g.input(GgmlType::F32, {hp.head_dim, hp.n_head, batch_.n_tokens}, "gathered attention");
  }
}

DecoderBuilder::DecoderBuilder(Graph& graph, const HParams& h, const ModelWeights& weights, int64_t n_tokens,
                               Tensor* key_ranges, Tensor* sliding_key_ranges)
    : g(graph),
      hp(h),
      w(weights),
      batch_{n_tokens, 0, true},
      key_ranges_(key_ranges),
      sliding_key_ranges_(sliding_key_ranges),
      rope_factors_(rope_factors_for_context(weights, h, h.n_ctx_train)),
      adapters_(nullptr) {
  inputs_.tokens = g.input(GgmlType::I32, {n_tokens}, "tokens");
  // 2D rotary positions: every token's row, then every token's column.
  const int64_t per_token = core::rope_positions_per_token(h.rope.mode);
  inputs_.positions = g.input(GgmlType::I32, {per_token * n_tokens}, "positions");
}

Tensor* DecoderBuilder::embed() {
  if (inputs_.embeddings != nullptr) return inputs_.embeddings;
  Tensor* x = g.get_rows(w.token_embd, inputs_.tokens);
  return hp.embedding_scale != 1.0f ? g.scale(x, hp.embedding_scale) : x;
}

Tensor* DecoderBuilder::norm(Tensor* x, Tensor* weight) { return g.rms_norm(x, hp.rms_eps, weight); }

Tensor* DecoderBuilder::matmul(Tensor* weight, Tensor* x, int64_t layer, Projection p) {
  // The first adapter of this matrix rides in its node; any more add theirs after it.
  Tensor* y = nullptr;
  if (adapters_) {
    for (const ScaledLora& lora : adapters_->loras) {
      const LoraPair* pair = lora.adapter->pair(layer, p);
      if (!pair) continue;
      const float scale = lora.scale * pair->alpha_scale;
      if (!y) {
        y = g.mul_mat_low_rank(weight, x, pair->a, pair->b, pair->b_rows, scale);
        continue;
      }
      Tensor* ax = g.mul_mat(pair->a, x, scale, nullptr);  // [rank, n_tokens]
      y = g.mul_mat(pair->b, ax, 1.0f, y);
    }
  }
  return y ? y : g.mul_mat(weight, x);
}

Tensor* DecoderBuilder::project(Tensor* x, Tensor* weight, Tensor* bias, int64_t n_heads, int64_t layer,
                                Projection p) {
  Tensor* y = add_bias(matmul(weight, x, layer, p), bias);  // [n_heads * d, n_tokens]
  return g.reshape(y, {hp.head_dim, n_heads, batch_.n_tokens});
}

Tensor* DecoderBuilder::head_rows(Tensor* y, int64_t first, int64_t count) {
  const size_t head_bytes = y->nb[0] * static_cast<size_t>(hp.head_dim);
  return g.view(y, {hp.head_dim, count / hp.head_dim, batch_.n_tokens}, {head_bytes, y->nb[1]},
                static_cast<size_t>(first) * y->nb[0]);
}

DecoderBuilder::Heads DecoderBuilder::project_heads(int64_t layer, Tensor* x) {
  const LayerWeights& l = w.layers[static_cast<size_t>(layer)];
  Heads h{};
  if (l.wqkv) {  // a fused_qkv architecture's file may hold separate matrices instead
    Tensor* qkv = matmul(l.wqkv, x, layer, Projection::Qkv);  // [q + 2kv, n_tokens]: Q rows, then K, then V
    h.q = head_rows(qkv, 0, hp.n_embd_q());
    h.k = head_rows(qkv, hp.n_embd_q(), hp.n_embd_kv());
    h.v = head_rows(qkv, hp.n_embd_q() + hp.n_embd_kv(), hp.n_embd_kv());
  } else {
    h.q = project(x, l.wq, l.bq, hp.n_head, layer, Projection::Q);
    h.k = project(x, l.wk, l.bk, hp.n_head_kv, layer, Projection::K);
    h.v = project(x, l.wv, l.bv, hp.n_head_kv, layer, Projection::V);
  }
  if (hp.spec().qk_norm) {
    h.q = norm(h.q, l.q_norm);
    h.k = norm(h.k, l.k_norm);
  }
  return h;
}

Tensor* DecoderBuilder::rope(Tensor* x, int64_t layer) {
  const LayerAttention& la = hp.layer(layer);
  return la.rope ? g.rope(x, inputs_.positions, la.rope_params, rope_factors_) : x;
}

Tensor* DecoderBuilder::cache_cells(Tensor* cache, int64_t first, int64_t count) {
  return g.view(cache, {hp.head_dim, hp.n_head_kv, count}, {cache->nb[1], cache->nb[2]},
                static_cast<size_t>(first) * cache->nb[2]);
}

Tensor* DecoderBuilder::token_slice(Tensor* x, int64_t first, int64_t count) {
  return g.view(x, {x->ne[0], x->ne[1], count}, {x->nb[1], x->nb[2]}, static_cast<size_t>(first) * x->nb[2]);
}

Tensor* DecoderBuilder::cached_attention(int64_t layer, const BatchSequence& sequence, Tensor* q, Tensor* k, Tensor* v,
                                         core::AttentionParams attention) {
  // Write the sequence's keys and values, then attend over every visible cell.
  const Batch& cells = sequence.cells;
  Tensor* k_cache = (*sequence.kv)[static_cast<size_t>(layer)].k;
  Tensor* v_cache = (*sequence.kv)[static_cast<size_t>(layer)].v;
  g.expand(g.copy(k, cache_cells(k_cache, cells.first_cell, cells.n_tokens)));
  g.expand(g.copy(v, cache_cells(v_cache, cells.first_cell, cells.n_tokens)));
  const int64_t n_kv = cells.first_cell + cells.n_tokens;
  if (cells.bidirectional) {
    // The ranges say which cells each token sees: later ones of the batch too.
    attention.causal = false;
    Tensor* ranges = hp.window(layer) > 0 ? inputs_.sliding_key_ranges : inputs_.key_ranges;
    return g.attention(q, cache_cells(k_cache, 0, n_kv), cache_cells(v_cache, 0, n_kv), attention, ranges);
  }
  // A sliding layer gets every cell too: the op reads only the window's (so
  // cells keep their positions) and skips the rest.
  attention.window = hp.window(layer);
  return g.attention(q, cache_cells(k_cache, 0, n_kv), cache_cells(v_cache, 0, n_kv), attention);  // causal
}

Tensor* DecoderBuilder::self_attention(int64_t layer, Tensor* x) {
  const Heads h = project_heads(layer, x);
  Tensor* q = rope(h.q, layer);  // [d, n_head, n_tokens]
  Tensor* k = rope(h.k, layer);  // [d, n_head_kv, n_tokens]
  core::AttentionParams attention;
  attention.scale = hp.attention_scale;
  attention.softcap = hp.attn_softcap;
  Tensor* out;  // [d, n_head, n_tokens]
  if (n_sequences_ == 0) {
    // Straight from this batch's keys and values; the ranges say which each
    // token sees, or without them every token sees all.
    attention.causal = false;
    Tensor* ranges = hp.window(layer) > 0 ? sliding_key_ranges_ : key_ranges_;
    out = ranges != nullptr ? g.attention(q, k, h.v, attention, ranges) : g.attention(q, k, h.v, attention);
  } else if (n_sequences_ == 1) {
    out = cached_attention(layer, sequences_[0], q, k, h.v, attention);
  } else {
    // Each sequence over its own cache, its output copied to its rows of the gathered buffer.
    int64_t first = 0;
    for (int64_t s = 0; s < n_sequences_; ++s) {
      const int64_t n = sequences_[s].cells.n_tokens;
      Tensor* own = cached_attention(layer, sequences_[s], token_slice(q, first, n), token_slice(k, first, n),
                                     token_slice(h.v, first, n), attention);
      g.expand(g.copy(own, token_slice(gathered_attention_, first, n)));
      first += n;
    }
    out = gathered_attention_;
  }
  const LayerWeights& l = w.layers[static_cast<size_t>(layer)];
  return add_bias(matmul(l.wo, g.reshape(out, {hp.n_embd_q(), batch_.n_tokens}), layer, Projection::AttnOutput), l.bo);
}

Tensor* DecoderBuilder::add_bias(Tensor* y, Tensor* bias) { return bias != nullptr ? g.add(y, bias) : y; }

Tensor* DecoderBuilder::feed_forward(int64_t layer, Tensor* x) {
  const LayerWeights& l = w.layers[static_cast<size_t>(layer)];
  Tensor* hidden;  // [n_ff, n_tokens]
  if (!hp.spec().gated_ffn) {
    hidden = g.gelu(add_bias(matmul(l.ffn_up, x, layer, Projection::FfnUp), l.ffn_up_bias));
  } else {
    Tensor* gate;
    Tensor* up;
    if (hp.spec().fused_gate_up) {
      // One product for the fused matrix: [2 n_ff, n_tokens], gate rows first.
      Tensor* gate_up = matmul(l.ffn_up, x, layer, Projection::FfnUp);
      gate = g.view(gate_up, {hp.n_ff, batch_.n_tokens}, {gate_up->nb[1]}, 0);
      up = g.view(gate_up, {hp.n_ff, batch_.n_tokens}, {gate_up->nb[1]}, static_cast<size_t>(hp.n_ff) * gate_up->nb[0]);
    } else {
      gate = add_bias(matmul(l.ffn_gate, x, layer, Projection::FfnGate), l.ffn_gate_bias);
      up = add_bias(matmul(l.ffn_up, x, layer, Projection::FfnUp), l.ffn_up_bias);
    }
    hidden = hp.ffn_activation == FfnActivation::GeluTanh ? g.geglu(gate, up) : g.swiglu(gate, up);
  }
  return add_bias(matmul(l.ffn_down, hidden, layer, Projection::FfnDown), l.ffn_down_bias);
}

Tensor* DecoderBuilder::steer(Tensor* x, int64_t il) {
  if (!adapters_ || adapters_->layer_offsets.empty()) return x;
  Tensor* offset = adapters_->layer_offsets[static_cast<size_t>(il)];
  return offset ? g.add(x, offset) : x;
}

Tensor* DecoderBuilder::logits(Tensor* x) {
  if (inputs_.output_rows != nullptr) {
    x = g.get_rows(x, inputs_.output_rows);  // each sequence's last rows
  } else if (batch_.output_rows < batch_.n_tokens) {
    // Only the last tokens' hidden states go through the head.
    x = g.view(x, {hp.n_embd, batch_.output_rows}, {x->nb[1]},
               static_cast<size_t>(batch_.n_tokens - batch_.output_rows) * x->nb[1]);
  }
  Tensor* out = g.mul_mat(w.output, norm(x, w.output_norm));
  if (hp.final_softcap > 0.0f) out = g.softcap(out, hp.final_softcap);
  g.output(out);
  return out;
}

void bidirectional_key_ranges(const Batch& batch, int64_t window, int32_t* ranges) {
  const int64_t end = batch.first_cell + batch.n_tokens;
  for (int64_t t = 0; t < batch.n_tokens; ++t) {
    const int64_t cell = batch.first_cell + t;
    ranges[2 * t] = static_cast<int32_t>(window > 0 ? std::max<int64_t>(0, cell + 1 - window) : 0);
    ranges[2 * t + 1] = static_cast<int32_t>(end);
  }
}

Tensor* build_layers(DecoderBuilder& b) {
  Graph& g = b.g;
  const bool post_norms = b.hp.spec().post_norms;
  Tensor* x = b.embed();  // [n_embd, n_tokens]
  for (int64_t il = 0; il < b.hp.n_layer; ++il) {
    const LayerWeights& l = b.w.layers[static_cast<size_t>(il)];
    Tensor* attention = b.self_attention(il, b.norm(x, l.attn_norm));
    if (post_norms) attention = b.norm(attention, l.attn_post_norm);
    x = g.add(x, attention);
    Tensor* ffn = b.feed_forward(il, b.norm(x, l.ffn_norm));
    if (post_norms) ffn = b.norm(ffn, l.ffn_post_norm);
    x = b.steer(g.add(x, ffn), il);
  }
  return x;
}

Tensor* build_forward(DecoderBuilder& b) { return b.logits(build_layers(b)); }

}  // namespace peak::model
