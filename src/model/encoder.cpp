#include "model/encoder.h"

#include <algorithm>

#include "model/decoder.h"

namespace peak::model {

using core::Graph;
using core::Tensor;
using kernels::GgmlType;

namespace {

class EncoderGraph {
 public:
  EncoderGraph(Graph& graph, const HParams& h, const ModelWeights& weights, const EncoderBatch& batch,
               EncoderInputs& inputs)
      : g(graph), hp(h), w(weights), n_tokens_(batch.n_tokens), in_(inputs) {}

  // Token rows plus each token type's row and each position's row, normalised:
  // [n_embd, n_tokens].
  Tensor* embed() {
    Tensor* x = g.get_rows(w.token_embd, in_.tokens);
    if (w.token_types != nullptr) x = g.add(x, g.get_rows(w.token_types, in_.token_types));
    if (w.position_embd != nullptr) x = g.add(x, g.get_rows(w.position_embd, in_.positions));
    return w.embd_norm != nullptr ? norm(x, w.embd_norm, w.embd_norm_bias) : x;
  }

  Tensor* norm(Tensor* x, Tensor* weight, Tensor* bias) {
    return hp.spec().norm == NormKind::Layer ? g.layer_norm(x, hp.layer_norm_eps, weight, bias)
                                             : g.rms_norm(x, hp.rms_eps, weight);
  }

  // w · x + bias (bias may be null): [n_out, n_tokens].
  Tensor* linear(Tensor* weight, Tensor* bias, Tensor* x) {
    Tensor* y = g.mul_mat(weight, x);
    return bias != nullptr ? g.add(y, bias) : y;
  }

  // x [n_embd, n_tokens] -> [n_embd, n_tokens]: every head attends over the
  // keys of its token's sequence (key_ranges), straight from this batch's K
  // and V [head_dim, n_head_kv, n_tokens].
  Tensor* self_attention(const LayerWeights& l, Tensor* x) {
    Tensor* q = g.reshape(linear(l.wq, l.bq, x), {hp.head_dim, hp.n_head, n_tokens_});
    Tensor* k = g.reshape(linear(l.wk, l.bk, x), {hp.head_dim, hp.n_head_kv, n_tokens_});
    Tensor* v = g.reshape(linear(l.wv, l.bv, x), {hp.head_dim, hp.n_head_kv, n_tokens_});
    core::AttentionParams attention;
    attention.scale = hp.attention_scale;
    attention.causal = false;                                       // the key ranges say what each token sees
    Tensor* out = g.attention(q, k, v, attention, in_.key_ranges);  // [d, n_head, n_tokens]
    return linear(l.wo, l.bo, g.reshape(out, {hp.n_embd_q(), n_tokens_}));
  }

  // w_down · act(w_up · x + b_up) + b_down.
  Tensor* feed_forward(const LayerWeights& l, Tensor* x) {
    Tensor* up = linear(l.ffn_up, l.ffn_up_bias, x);  // [n_ff, n_tokens]
    return linear(l.ffn_down, l.ffn_down_bias, g.gelu(up));
  }

  Graph& g;
  const HParams& hp;
  const ModelWeights& w;

 private:
  int64_t n_tokens_;
  EncoderInputs& in_;
};

}  // namespace

RowRange pooled_rows(Pooling pooling, RowRange sequence) {
  switch (pooling) {
    case Pooling::Cls:
    case Pooling::Rank: return {sequence.first, sequence.first + 1};
    case Pooling::Last: return {sequence.end - 1, sequence.end};
    case Pooling::None:
    case Pooling::Mean: break;
  }
  return sequence;
}

namespace {

// Pooling::Rank's head on the [CLS] states x [n_embd, n_sequences]:
// cls_output · tanh(cls · x + b) + b_out, [n_cls_out, n_sequences]
// (llama.cpp's rank pooling; HF's BertPooler then classifier).
Tensor* classify(Graph& g, const ModelWeights& w, Tensor* x) {
  Tensor* pooled = g.softcap(g.add(g.mul_mat(w.cls, x), w.cls_bias), 1.0f);  // a cap of 1 is tanh itself
  return g.add(g.mul_mat(w.cls_output, pooled), w.cls_output_bias);
}

// Post-norm blocks (bert): x = norm(x + attention(x)); x = norm(x + ffn(x)).
Tensor* post_norm_layers(Graph& g, const HParams& hp, const ModelWeights& w, const EncoderBatch& batch,
                         EncoderInputs& inputs) {
  inputs.tokens = g.input(GgmlType::I32, {batch.n_tokens}, "tokens");
  inputs.positions = g.input(GgmlType::I32, {batch.n_tokens}, "positions");
  if (w.token_types != nullptr) inputs.token_types = g.input(GgmlType::I32, {batch.n_tokens}, "token_types");
  inputs.key_ranges = g.input(GgmlType::I32, {2, batch.n_tokens}, "key_ranges");
  EncoderGraph e(g, hp, w, batch, inputs);
  Tensor* x = e.embed();
  for (const LayerWeights& l : w.layers) {
    x = e.norm(g.add(x, e.self_attention(l, x)), l.attn_norm, l.attn_norm_bias);
    x = e.norm(g.add(x, e.feed_forward(l, x)), l.ffn_norm, l.ffn_norm_bias);
  }
  return x;
}

// The decoders' pre-norm layers without a KV cache, then the final norm.
Tensor* pre_norm_layers(Graph& g, const HParams& hp, const ModelWeights& w, const EncoderBatch& batch,
                        EncoderInputs& inputs) {
  inputs.key_ranges = g.input(GgmlType::I32, {2, batch.n_tokens}, "key_ranges");
  const bool slides = hp.sliding_window > 0 && std::any_of(hp.layers.begin(), hp.layers.end(),
                                                           [](const LayerAttention& l) { return l.sliding; });
  if (slides) inputs.sliding_key_ranges = g.input(GgmlType::I32, {2, batch.n_tokens}, "sliding_key_ranges");
  DecoderBuilder b(g, hp, w, batch.n_tokens, inputs.key_ranges, inputs.sliding_key_ranges);
  inputs.tokens = b.inputs().tokens;
  inputs.positions = b.inputs().positions;
  return b.norm(build_layers(b), w.output_norm);
}

}  // namespace

Tensor* build_encoder(Graph& g, const HParams& hp, const ModelWeights& w, const EncoderBatch& batch,
                      EncoderInputs& inputs) {
  inputs = EncoderInputs{};
  Tensor* x = hp.spec().post_norm_block ? post_norm_layers(g, hp, w, batch, inputs)
                                        : pre_norm_layers(g, hp, w, batch, inputs);  // [n_embd, n_tokens]
  if (batch.pooling != Pooling::None) {
    inputs.pooled_rows = g.input(GgmlType::I32, {2, batch.n_sequences}, "pooled_rows");
    x = g.mean_rows(x, inputs.pooled_rows);  // [n_embd, n_sequences]
    if (batch.pooling == Pooling::Rank) x = classify(g, w, x);
  }
  // The dense layers after pooling (or on every token without), as llama.cpp applies them.
  if (w.dense_2 != nullptr) x = g.mul_mat(w.dense_3, g.mul_mat(w.dense_2, x));
  g.output(x);
  return x;
}

}  // namespace peak::model
