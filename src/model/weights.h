// The model's weights as tensor descriptors whose data points into the mapped
// GGUF file (no copies; Model::load may then repack some, model/weight_repack.h),
// bound by llama.cpp's tensor names and shape-checked.
#pragma once

#include <memory>
#include <vector>

#include "core/graph.h"
#include "gguf/gguf_reader.h"
#include "model/hparams.h"

namespace peak::model {

using core::Tensor;

// Shapes use ggml order (ne[0] first); d = head_dim, q = n_head*d, kv = n_head_kv*d.
struct LayerWeights {
  Tensor* attn_norm = nullptr;    // [n_embd]
  Tensor* wq = nullptr;           // [n_embd, q]
  Tensor* wk = nullptr;           // [n_embd, kv]
  Tensor* wv = nullptr;           // [n_embd, kv]
  Tensor* wo = nullptr;           // [q, n_embd]
  Tensor* bq = nullptr;           // [q]   qwen2 only
  Tensor* bk = nullptr;           // [kv]  qwen2 only
  Tensor* bv = nullptr;           // [kv]  qwen2 only
  Tensor* q_norm = nullptr;       // [d]   qwen3 only: RMS norm per head
  Tensor* k_norm = nullptr;       // [d]   qwen3 only
  Tensor* ffn_norm = nullptr;     // [n_embd]
  Tensor* ffn_gate = nullptr;     // [n_embd, n_ff]
  Tensor* ffn_up = nullptr;       // [n_embd, n_ff]
  Tensor* ffn_down = nullptr;     // [n_ff, n_embd]
};

struct ModelWeights {
  Tensor* token_embd = nullptr;   // [n_embd, n_vocab]
  Tensor* output_norm = nullptr;  // [n_embd]
  Tensor* output = nullptr;       // [n_embd, n_vocab]; token_embd when tied
  Tensor* rope_freqs = nullptr;   // [rope_dims / 2] Llama-3 frequency factors, optional
  std::vector<LayerWeights> layers;
  bool tied_output = false;
  std::unique_ptr<core::TensorArena> descriptors;  // owns the Tensor objects above
};

// Binds every tensor the architecture needs, with data pointing into `file`
// (which must outlive the result). Throws std::runtime_error naming a missing
// tensor, a wrong shape or a type no kernel can read.
ModelWeights bind_weights(const gguf::GgufFile& file, const HParams& hp);

}  // namespace peak::model
