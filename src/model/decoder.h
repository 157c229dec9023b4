// The forward graph of the decoder-only transformers peak runs. Llama, Qwen2 and
// Qwen3 share one pre-norm block; they differ only in which weights exist (Q/K/V
// biases for Qwen2, per-head Q/K norms for Qwen3) and in hyper-parameters (rope
// mode, head size), so one builder serves all three and the architecture lives
// in hparams.cpp and weights.cpp.
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
// n_tokens), attending to cells [0, first_cell + n_tokens) causally.
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
  // kv: one entry per layer.
  DecoderBuilder(Graph& g, const HParams& hp, const ModelWeights& w, const std::vector<LayerKv>& kv,
                 const Batch& batch);

  Graph& g;
  const HParams& hp;
  const ModelWeights& w;
  const ForwardInputs& inputs() const { return inputs_; }

  Tensor* embed();                                  // [n_embd, n_tokens]
  Tensor* norm(Tensor* x, Tensor* weight);          // rms_norm(x) * weight
  // Projects x [n_embd, n_tokens] to heads [d, n_heads, n_tokens]: w · x (+ bias),
  // then, when the model has them, an RMS norm per head (Qwen3's q/k norms).
  Tensor* project_heads(Tensor* x, Tensor* weight, Tensor* bias, Tensor* head_norm, int64_t n_heads);
  Tensor* rope(Tensor* x);                          // at the batch's positions
  // Self-attention of one layer: x [n_embd, n_tokens] (normed) -> [n_embd, n_tokens].
  Tensor* self_attention(int64_t layer, Tensor* x);
  Tensor* swiglu_ffn(const LayerWeights& l, Tensor* x);  // w_down · (silu(w_gate · x) * (w_up · x))
  // Final norm and output projection: [n_vocab, n_tokens] or [n_vocab, 1].
  Tensor* logits(Tensor* x);

 private:
  Tensor* cache_cells(Tensor* cache, int64_t first, int64_t count);
  const std::vector<LayerKv>& kv_;
  Batch batch_;
  ForwardInputs inputs_;
};

// The whole forward pass; returns the logits tensor (marked as output).
Tensor* build_forward(DecoderBuilder& b);

}  // namespace peak::model
