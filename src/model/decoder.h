// The forward graph of the decoder-only transformers peak runs. Every
// architecture shares one pre-norm block; they differ in which weights exist
// (Q/K/V biases for Qwen2, per-head Q/K norms for Qwen3 and Gemma 3, fused QKV
// and gate/up matrices for Phi-3, post-norms for Gemma) and in hyper-parameters
// (rope mode and dimensions, attention scale and soft-caps, the feed-forward
// gate, per-layer windows and rope settings), so one builder serves all and
// the architecture lives in hparams.cpp and weights.cpp.
#pragma once

#include <cstdint>
#include <vector>

#include "core/graph.h"
#include "model/hparams.h"
#include "model/weights.h"

namespace peak::model {

using core::Graph;
using core::Tensor;

// One batch: n_tokens new tokens written to cache cells [first_cell, first_cell +
// n_tokens), attending to cells [0, first_cell + n_tokens) causally (a sliding
// layer to the last HParams::sliding_window of them).
struct Batch {
  int64_t n_tokens = 1;
  int64_t first_cell = 0;
  bool all_logits = false;  // logits for every token, else for the last one only
};

// One layer's key/value cache, owned by whoever runs the model: K and V of
// [head_dim, n_head_kv, n_cells] each, cell c at byte offset c * nb[2].
struct LayerKv {
  Tensor* k = nullptr;
  Tensor* v = nullptr;
};

// The inputs the caller fills before each compute.
struct ForwardInputs {
  Tensor* tokens = nullptr;     // I32 [n_tokens]
  Tensor* positions = nullptr;  // I32 [n_tokens]
};

class DecoderBuilder {
 public:
  // kv: one entry per layer. rope_factors: the per-pair rope divisors the
  // context uses (rope_factors_for_context), or null.
  DecoderBuilder(Graph& g, const HParams& hp, const ModelWeights& w, const std::vector<LayerKv>& kv,
                 const Batch& batch, Tensor* rope_factors);

  Graph& g;
  const HParams& hp;
  const ModelWeights& w;
  const ForwardInputs& inputs() const { return inputs_; }

  Tensor* embed();                                  // [n_embd, n_tokens], times HParams::embedding_scale
  Tensor* norm(Tensor* x, Tensor* weight);          // rms_norm(x) * weight
  // Self-attention of one layer: x [n_embd, n_tokens] (normed) -> [n_embd, n_tokens].
  Tensor* self_attention(int64_t layer, Tensor* x);
  // w_down · (act(gate · x) * (up · x)), act silu or gelu_tanh (HParams::ffn_activation).
  Tensor* feed_forward(const LayerWeights& l, Tensor* x);
  // Final norm and output projection (soft-capped when the model says so):
  // [n_vocab, n_tokens] or [n_vocab, 1].
  Tensor* logits(Tensor* x);

 private:
  struct Heads {
    Tensor* q;  // [d, n_head, n_tokens]
    Tensor* k;  // [d, n_head_kv, n_tokens]
    Tensor* v;  // [d, n_head_kv, n_tokens]
  };
  // Q, K and V of x: one matrix product per projection, or one for a fused
  // QKV matrix whose result is split by views; then the per-head norms.
  Heads project_heads(const LayerWeights& l, Tensor* x);
  // w · x (+ bias) as heads [d, n_heads, n_tokens].
  Tensor* project(Tensor* x, Tensor* weight, Tensor* bias, int64_t n_heads);
  // Rows [first, first + count) of every column of y [rows, n_tokens] as heads [d, count / d, n_tokens].
  Tensor* head_rows(Tensor* y, int64_t first, int64_t count);
  Tensor* rope(Tensor* x, int64_t layer);           // at the batch's positions, with the layer's settings
  Tensor* cache_cells(Tensor* cache, int64_t first, int64_t count);
  const std::vector<LayerKv>& kv_;
  Batch batch_;
  Tensor* rope_factors_;
  ForwardInputs inputs_;
};

// The whole forward pass; returns the logits tensor (marked as output).
Tensor* build_forward(DecoderBuilder& b);

}  // namespace peak::model
