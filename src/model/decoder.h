// The forward graph of the decoder-only transformers peak runs. Every
// architecture shares one pre-norm block; they differ in which weights exist
// (Q/K/V biases for Qwen2, per-head Q/K norms for Qwen3 and Gemma 3, fused QKV
// and gate/up matrices for Phi-3, post-norms for Gemma) and in hyper-parameters
// (rope mode and dimensions, attention scale and soft-caps, the feed-forward
// gate, per-layer windows and rope settings), so one builder serves all and
// an architecture is its row of data (model/arch_spec.h), read through HParams.
#pragma once

#include <cstdint>
#include <vector>

#include "core/graph.h"
#include "model/hparams.h"
#include "model/lora_adapter.h"
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
  int64_t output_rows = 1;  // logits of the last output_rows tokens (n_tokens: every token's)
  // The batch's inputs are embedding rows (ForwardInputs::embeddings: an
  // image's tokens from its encoder), not token ids; they enter the layers as
  // they are (no embedding scale: llama.cpp scales only looked-up tokens).
  bool embeddings = false;
  // Its tokens also attend to each other both ways (an image's tokens in
  // Gemma 3): each sees every cell before the batch and the whole batch, on a
  // sliding layer those earlier cells within the window. One sequence only.
  bool bidirectional = false;
};

// One layer's key/value cache, owned by whoever runs the model: K and V of
// [head_dim, n_head_kv, n_cells] each, cell c at byte offset c * nb[2].
struct LayerKv {
  Tensor* k = nullptr;
  Tensor* v = nullptr;
};

// One sequence of a batch of several: the Batch `cells` of its own cache
// `kv` (one entry per layer). Its tokens follow those of the sequences before
// it in the batch, and so do its output rows in the logits.
struct BatchSequence {
  const std::vector<LayerKv>* kv = nullptr;
  Batch cells;
};

// The inputs the caller fills before each compute.
struct ForwardInputs {
  Tensor* tokens = nullptr;  // I32 [n_tokens]; unused with Batch::embeddings
  // I32 [n_tokens]; with multimodal rotary positions (RopeMode::Multi)
  // I32 [3 n_tokens]: every token's t, then its h, then its w (KvCache::rope_positions).
  Tensor* positions = nullptr;
  Tensor* embeddings = nullptr;  // Batch::embeddings only: F32 [n_embd, n_tokens]
  // Batch::bidirectional only: I32 [2, n_tokens], the cells [first, end) each
  // token sees (bidirectional_key_ranges()); on sliding layers
  // sliding_key_ranges (null when no layer slides).
  Tensor* key_ranges = nullptr;
  Tensor* sliding_key_ranges = nullptr;
  // Several sequences only: the batch rows whose logits come out, each
  // sequence's last output_rows in batch order (I32 [total output rows]).
  Tensor* output_rows = nullptr;
};

// What adapters add to the forward pass (runtime::Context builds it from the
// adapters in use): LoRA products on the projections each adapter has, and
// control vectors' sum added to the residual stream after a layer.
struct ScaledLora {
  const LoraAdapter* adapter = nullptr;
  float scale = 1.0f;  // the user's; never 0 (an adapter at 0 is left out)
};

struct DecoderAdapters {
  std::vector<ScaledLora> loras;
  std::vector<Tensor*> layer_offsets;  // empty, or per layer: F32 [n_embd] added to its output, or null
};

class DecoderBuilder {
 public:
  // kv: one entry per layer. rope_factors: the per-pair rope divisors the
  // context uses (rope_factors_for_context), or null. adapters: may be null.
  DecoderBuilder(Graph& g, const HParams& hp, const ModelWeights& w, const std::vector<LayerKv>& kv,
                 const Batch& batch, Tensor* rope_factors, const DecoderAdapters* adapters = nullptr);
  // Several sequences in one pass, each with its own cache (sequences[0,
  // n_sequences), kept by the caller while the builder lives): every
  // projection reads its weights once for all their tokens; each attends to
  // its own cells only. With more than one the caller fills
  // ForwardInputs::output_rows.
  DecoderBuilder(Graph& g, const HParams& hp, const ModelWeights& w, const BatchSequence* sequences,
                 int64_t n_sequences, Tensor* rope_factors, const DecoderAdapters* adapters = nullptr);
  // Without a KV cache, for an embedding model's pass (model/encoder.h):
  // n_tokens tokens of several sequences side by side, token t attending to
  // this batch's keys [key_ranges[2t], key_ranges[2t + 1]) (I32 [2, n_tokens];
  // null: to every token of the batch, one sequence), on sliding layers to
  // those of sliding_key_ranges (null when none slides). With
  // RopeMode::Vision the positions are I32 [2 n_tokens]: rows, then columns.
  DecoderBuilder(Graph& g, const HParams& hp, const ModelWeights& w, int64_t n_tokens, Tensor* key_ranges,
                 Tensor* sliding_key_ranges);

  Graph& g;
  const HParams& hp;
  const ModelWeights& w;
  const ForwardInputs& inputs() const { return inputs_; }

  Tensor* embed();                                  // [n_embd, n_tokens], times HParams::embedding_scale
  Tensor* norm(Tensor* x, Tensor* weight);          // rms_norm(x) * weight
  // Self-attention of one layer: x [n_embd, n_tokens] (normed in pre-norm
  // blocks) -> [n_embd, n_tokens], plus attn_output's bias when it has one.
  Tensor* self_attention(int64_t layer, Tensor* x);
  // w_down · (act(gate · x) * (up · x)), act silu or gelu_tanh
  // (HParams::ffn_activation); without a gate (ArchSpec::gated_ffn false)
  // w_down · gelu(up · x); plus ffn_up's and ffn_down's biases when the layer has them.
  Tensor* feed_forward(int64_t layer, Tensor* x);
  // Final norm and output projection (soft-capped when the model says so):
  // [n_vocab, n_tokens] or [n_vocab, 1].
  Tensor* logits(Tensor* x);
  // x [n_embd, n_tokens] plus the control vectors' offset for layer il, if any.
  Tensor* steer(Tensor* x, int64_t il);

 private:
  struct Heads {
    Tensor* q;  // [d, n_head, n_tokens]
    Tensor* k;  // [d, n_head_kv, n_tokens]
    Tensor* v;  // [d, n_head_kv, n_tokens]
  };
  // Q, K and V of x: one matrix product per projection, or one for a fused
  // QKV matrix whose result is split by views; then the per-head norms.
  Heads project_heads(int64_t layer, Tensor* x);
  // w · x (+ bias) as heads [d, n_heads, n_tokens].
  Tensor* project(Tensor* x, Tensor* weight, Tensor* bias, int64_t n_heads, int64_t layer, Projection p);
  // w · x, w being layer `layer`'s projection p, plus scale·B·(A·x) of every
  // adapter with a pair for it: x [n_in, n_tokens] -> [n_out, n_tokens]. The
  // scale goes on A·x, the narrowest product ([rank, n_tokens]), and B's product
  // adds itself to y: two nodes per adapter.
  Tensor* matmul(Tensor* w, Tensor* x, int64_t layer, Projection p);
  Tensor* add_bias(Tensor* y, Tensor* bias);  // y + bias, or y when bias is null
  // Rows [first, first + count) of every column of y [rows, n_tokens] as heads [d, count / d, n_tokens].
  Tensor* head_rows(Tensor* y, int64_t first, int64_t count);
  Tensor* rope(Tensor* x, int64_t layer);           // at the batch's positions, with the layer's settings
  Tensor* cache_cells(Tensor* cache, int64_t first, int64_t count);
  // Tokens [first, first + count) of x [a, b, n_tokens] as [a, b, count].
  Tensor* token_slice(Tensor* x, int64_t first, int64_t count);
  // Writes one sequence's keys and values [d, n_head_kv, n] into its cache and
  // returns its attention [d, n_head, n] over its visible cells.
  Tensor* cached_attention(int64_t layer, const BatchSequence& sequence, Tensor* q, Tensor* k, Tensor* v,
                           core::AttentionParams attention);
  Batch batch_;           // several sequences: n_tokens of all, the cells unused
  BatchSequence single_;  // the one sequence of a single-cache batch
  const BatchSequence* sequences_ = nullptr;
  int64_t n_sequences_ = 0;  // 0: no cache (key ranges instead)
  // Several sequences: their attention outputs side by side, F32 [d, n_head,
  // n_tokens]; one buffer serves every layer, as the layers run in order.
  Tensor* gathered_attention_ = nullptr;
  Tensor* key_ranges_ = nullptr;
  Tensor* sliding_key_ranges_ = nullptr;
  Tensor* rope_factors_;
  const DecoderAdapters* adapters_;
  ForwardInputs inputs_;
};

// The cells [first, end) token t of a bidirectional batch sees (I32 pairs,
// n_tokens of them, for ForwardInputs::key_ranges; with `window` > 0 those of
// a sliding layer): every cell up to the batch's end, from the first, or with
// a window from its own cell's window.
void bidirectional_key_ranges(const Batch& batch, int64_t window, int32_t* ranges);

// Every layer's pre-norm block over the embeddings: the last hidden states
// [n_embd, n_tokens], before the final norm.
Tensor* build_layers(DecoderBuilder& b);
// The whole forward pass; returns the logits tensor (marked as output).
Tensor* build_forward(DecoderBuilder& b);

}  // namespace peak::model
