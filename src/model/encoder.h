// The forward graph of the embedding models peak runs (HParams::embeds):
// post-norm encoders (bert, nomic-bert) whose attention and feed-forward are
// the decoders' (model/decoder.h) between LayerNorms, and the decoders'
// pre-norm layers run without a KV cache for gemma-embedding and decoders
// made embedding models (Qwen3-Embedding). A batch holds several sequences
// side by side; every token attends to the tokens of its own sequence only
// (all of them, or those up to itself when causal; on sliding layers those
// within the window), through the attention op's per-token key ranges, so no
// KV cache is needed. The last hidden states (after the final norm of
// pre-norm models) are pooled per sequence (mean, first or last token) by
// averaging a range of rows, or handed out per token; the dense layers, when
// the model has them, follow. Rank pooling passes the first token's state
// through the model's classification head (a cross-encoder's relevance
// scores); a decoder reranker's, the last token's through its answer rows.
#pragma once

#include <cstdint>

#include "core/graph.h"
#include "model/hparams.h"
#include "model/weights.h"

namespace peak::model {

// Rows [first, end) of a batch's hidden states.
struct RowRange {
  int32_t first = 0;
  int32_t end = 0;
};

// The rows whose mean is the pooled output of a sequence at rows `sequence`
// (non-empty): all of them (mean), the first (cls) or the last (last); rank
// reads the first in an encoder, the last (the only one that has seen the
// whole pair) in a decoder. Pooling::None has no pooled output; it gives
// `sequence`.
RowRange pooled_rows(const HParams& hp, Pooling pooling, RowRange sequence);

struct EncoderBatch {
  int64_t n_tokens = 1;
  // Pooled vectors: one per sequence; with Pooling::None no pooling happens
  // and the output holds every token's hidden state.
  int64_t n_sequences = 1;
  Pooling pooling = Pooling::None;
};

// The inputs the caller fills before each compute.
struct EncoderInputs {
  core::Tensor* tokens = nullptr;     // I32 [n_tokens]
  core::Tensor* positions = nullptr;  // I32 [n_tokens]: each token's position in its sequence, from 0
  // I32 [n_tokens]: each token's type (segment); null when the model has no token_types.
  core::Tensor* token_types = nullptr;
  core::Tensor* key_ranges = nullptr;  // I32 [2, n_tokens]: the rows of its own sequence each token attends to
  // I32 [2, n_tokens]: those rows within the sliding window
  // (HParams::sliding_window), for sliding layers; null when no layer slides.
  core::Tensor* sliding_key_ranges = nullptr;
  core::Tensor* pooled_rows = nullptr;  // I32 [2, n_sequences]: the rows each sequence's output averages
                                        // (pooled_rows()); null with Pooling::None
};

// Builds the whole forward pass; returns the output (marked as output):
// F32 [n_embd, n_sequences] pooled, [n_cls_out, n_sequences] with
// Pooling::Rank (the model must have the head; a decoder's are logits, not
// yet softmaxed), or [n_embd, n_tokens] with
// Pooling::None.
core::Tensor* build_encoder(core::Graph& g, const HParams& hp, const ModelWeights& w, const EncoderBatch& batch,
                            EncoderInputs& inputs);

}  // namespace peak::model
