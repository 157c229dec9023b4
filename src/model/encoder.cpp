#include "model/encoder.h"

#include <algorithm>

#include "model/decoder.h"

namespace peak::model {

using core::Graph;
using core::Tensor;
using kernels::GgmlType;

namespace {

// Post-norm models' norms are LayerNorms (their rows must say NormKind::Layer; model/arch_spec.cpp checks).
Tensor* layer_norm(Graph& g, const HParams& hp, Tensor* x, Tensor* weight, Tensor* bias) {
  return g.layer_norm(x, hp.layer_norm_eps, weight, bias);
}

// The summed embeddings of post-norm models: token rows plus each token
// type's row and (bert) each position's row, normalised: [n_embd, n_tokens].
Tensor* embed(Graph& g, const HParams& hp, const ModelWeights& w, const EncoderInputs& in) {
  Tensor* x = g.get_rows(w.token_embd, in.tokens);
  if (w.token_types != nullptr) x = g.add(x, g.get_rows(w.token_types, in.token_types));
  if (w.position_embd != nullptr) x = g.add(x, g.get_rows(w.position_embd, in.positions));
  return w.embd_norm != nullptr ? layer_norm(g, hp, x, w.embd_norm, w.embd_norm_bias) : x;
}

}  // namespace

RowRange pooled_rows(const HParams& hp, Pooling pooling, RowRange sequence) {
  switch (pooling) {
    case Pooling::Rank: return pooled_rows(hp, hp.spec().encoder ? Pooling::Cls : Pooling::Last, sequence);
    case Pooling::Cls: return {sequence.first, sequence.first + 1};
    case Pooling::Last: return {sequence.end - 1, sequence.end};
    case Pooling::None:
    case Pooling::Mean: break;
  }
  return sequence;
}

namespace {

// Pooling::Rank's head on the pooled states x [n_embd, n_sequences], to
// [n_cls_out, n_sequences] (llama.cpp's rank pooling): an encoder's
// cls_output · tanh(cls · x + b) + b_out (HF's BertPooler, then the
// classifier); a decoder's cls_output · x (the answer tokens' logits).
Tensor* classify(Graph& g, const ModelWeights& w, Tensor* x) {
  if (w.cls == nullptr) return g.mul_mat(w.cls_output, x);
  Tensor* pooled = g.softcap(g.add(g.mul_mat(w.cls, x), w.cls_bias), 1.0f);  // a cap of 1 is tanh itself
  return g.add(g.mul_mat(w.cls_output, pooled), w.cls_output_bias);
}

// Post-norm blocks (bert, nomic-bert): x = norm(x + attention(x)); x =
// norm(x + ffn(x)), attention and feed-forward the decoders' (cache-less,
// through the key ranges; rotated when the model has no position table).
Tensor* post_norm_layers(Graph& g, const HParams& hp, const ModelWeights& w, const EncoderBatch& batch,
                         EncoderInputs& inputs) {
  inputs.key_ranges = g.input(GgmlType::I32, {2, batch.n_tokens}, "key_ranges");
  DecoderBuilder b(g, hp, w, batch.n_tokens, inputs.key_ranges, nullptr);
  inputs.tokens = b.inputs().tokens;
  inputs.positions = b.inputs().positions;
  if (w.token_types != nullptr) inputs.token_types = g.input(GgmlType::I32, {batch.n_tokens}, "token_types");
  Tensor* x = embed(g, hp, w, inputs);
  for (int64_t il = 0; il < hp.n_layer; ++il) {
    const LayerWeights& l = w.layers[static_cast<size_t>(il)];
    x = layer_norm(g, hp, g.add(x, b.self_attention(il, x)), l.attn_norm, l.attn_norm_bias);
    x = layer_norm(g, hp, g.add(x, b.feed_forward(il, x)), l.ffn_norm, l.ffn_norm_bias);
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
