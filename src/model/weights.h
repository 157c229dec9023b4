// The model's weights as tensor descriptors whose data points into the mapped
// GGUF file (no copies; Model::load may then repack some, model/weight_repack.h),
// bound by the tensor manifest's names (model/tensor_manifest.h) and shape-checked.
#pragma once

#include <memory>
#include <vector>

#include "core/graph.h"
#include "gguf/gguf_reader.h"
#include "model/hparams.h"

namespace peak::model {

using core::Tensor;

// Shapes use ggml order (ne[0] first); d = head_dim, q = n_head*d, kv = n_head_kv*d.
// Null where the architecture (ArchSpec) has no such tensor.
// Pre-norm blocks normalise each sub-block's input with attn_norm / ffn_norm;
// post-norm ones (ArchSpec::post_norm_block) their residual sums, with the
// tensors the file names attn_output_norm / layer_output_norm, bound to the
// same fields.
struct LayerWeights {
  Tensor* attn_norm = nullptr;       // [n_embd]
  Tensor* attn_norm_bias = nullptr;  // [n_embd] NormKind::Layer
  Tensor* wq = nullptr;              // [n_embd, q]   null when wqkv holds it
  Tensor* wk = nullptr;              // [n_embd, kv]  null when wqkv holds it
  Tensor* wv = nullptr;              // [n_embd, kv]  null when wqkv holds it
  Tensor* wqkv = nullptr;            // [n_embd, q + 2kv] fused_qkv: the rows of Q, then K, then V in one matrix
  Tensor* wo = nullptr;              // [q, n_embd]
  Tensor* bo = nullptr;              // [n_embd] output_biases
  Tensor* bq = nullptr;              // [q]   qkv_bias
  Tensor* bk = nullptr;              // [kv]  qkv_bias
  Tensor* bv = nullptr;              // [kv]  qkv_bias
  Tensor* q_norm = nullptr;          // [d]   qk_norm: RMS norm per head
  Tensor* k_norm = nullptr;          // [d]   qk_norm
  Tensor* attn_post_norm = nullptr;  // [n_embd] post_norms: normalises the attention output before the residual add
  Tensor* ffn_norm = nullptr;        // [n_embd]
  Tensor* ffn_norm_bias = nullptr;   // [n_embd] NormKind::Layer
  Tensor* ffn_gate = nullptr;        // [n_embd, n_ff]; null when ffn_up holds it (fused_gate_up) or ungated
  Tensor* ffn_up = nullptr;          // [n_embd, n_ff], or [n_embd, 2 n_ff] with the gate rows first (fused_gate_up)
  Tensor* ffn_gate_bias = nullptr;   // [n_ff] output_biases with a separate gate (Qwen2.5-VL's vision tower)
  Tensor* ffn_up_bias = nullptr;     // [n_ff] output_biases
  Tensor* ffn_down = nullptr;        // [n_ff, n_embd]
  Tensor* ffn_down_bias = nullptr;   // [n_embd] output_biases
  Tensor* ffn_post_norm = nullptr;   // [n_embd] post_norms: normalises the feed-forward output before the residual add
};

struct ModelWeights {
  Tensor* token_embd = nullptr;      // [n_embd, n_vocab]
  Tensor* token_types = nullptr;     // [n_embd, n_token_types] token_types; optional, as in llama.cpp
  Tensor* position_embd = nullptr;   // [n_embd, n_ctx_train] absolute_positions
  Tensor* embd_norm = nullptr;       // [n_embd] embedding_norm
  Tensor* embd_norm_bias = nullptr;  // [n_embd] embedding_norm
  Tensor* output_norm = nullptr;     // [n_embd]; null in a post-norm encoder (bert)
  Tensor* output = nullptr;          // [n_embd, n_vocab]; token_embd when tied; null in an encoder
  // Pooling::Rank's classification head (BertForSequenceClassification's
  // pooler dense and classifier); null with other poolings.
  Tensor* cls = nullptr;              // [n_embd, n_embd]
  Tensor* cls_bias = nullptr;         // [n_embd]
  Tensor* cls_output = nullptr;       // [n_embd, n_cls_out]
  Tensor* cls_output_bias = nullptr;  // [n_cls_out]
  // HParams::dense_features > 0 (gemma-embedding): the dense layers applied
  // after pooling, dense_3 · (dense_2 · pooled), no bias or activation.
  Tensor* dense_2 = nullptr;  // [n_embd, dense_features]
  Tensor* dense_3 = nullptr;  // [dense_features, n_embd]
  // Image encoders (ArchSpec::projector_type; p = patch size): the patch
  // embedding, a convolution of stride p, whose kernel [p, p, 3, n_embd] is
  // one matrix over a patch's 3 p p values (model/vision.h); the final norm's
  // bias (output_norm is its weight); the projector's norm and matrix.
  Tensor* patch_embd = nullptr;        // [p, p, 3, n_embd]
  Tensor* patch_embd_bias = nullptr;   // [n_embd]; null with two_frame_patches
  Tensor* patch_embd_1 = nullptr;      // [p, p, 3, n_embd] two_frame_patches: the second frame's kernel
  Tensor* output_norm_bias = nullptr;  // [n_embd]
  Tensor* projector_norm = nullptr;    // [n_embd] Gemma 3's soft_emb_norm, stored as 1 + w
  // [n_embd_out, n_embd] as the file stores it (the transpose of a product's
  // weights); [n_embd, n_embd_out] once model::Projector transposes it at load.
  Tensor* projector = nullptr;
  // VisionConnector::MergeMlp: projector is mm.0 [m m n_embd, m m n_embd] as
  // the product reads it (not transposed), then these.
  Tensor* projector_bias = nullptr;    // [m m n_embd]
  Tensor* projector_2 = nullptr;       // [m m n_embd, n_embd_out] mm.2
  Tensor* projector_2_bias = nullptr;  // [n_embd_out]
  Tensor* rope_freqs = nullptr;        // [rope_dims / 2] Llama-3 frequency factors, optional
  // [rope_dims / 2] LongRoPE (long_rope) frequency factors, both or neither: long
  // ones for contexts past HParams::rope_original_context, else short ones.
  Tensor* rope_factors_long = nullptr;
  Tensor* rope_factors_short = nullptr;
  std::vector<LayerWeights> layers;
  bool tied_output = false;
  std::unique_ptr<core::TensorArena> descriptors;  // owns the Tensor objects above
};

// Binds the tensors of the manifest (model/tensor_manifest.h), with data
// pointing into `file` (which must outlive the result). Throws std::runtime_error
// naming a missing required tensor, a wrong shape or a type no kernel can read. With `check_values`, also
// a vector (norm weights, biases) that holds a non-finite value and frequency
// factors that are not positive: the only tensor data binding reads.
ModelWeights bind_weights(const gguf::GgufFile& file, const HParams& hp, bool check_values = true);

// The per-pair rope frequency divisors a context of n_ctx cells uses: Llama 3's
// rope_freqs, or LongRoPE's long factors when n_ctx exceeds the original
// training context and its short ones otherwise (llama.cpp's choice); null
// when the model has none.
Tensor* rope_factors_for_context(const ModelWeights& w, const HParams& hp, int64_t n_ctx);

}  // namespace peak::model
