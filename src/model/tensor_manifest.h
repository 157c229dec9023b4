// The tensors of a model with given hyper-parameters: llama.cpp's names, the
// shapes, which ones a file may leave out, and where each is bound. Weight
// binding (model/weights.h) and synthetic files (model/synth.h) both follow
// it, so an architecture's tensors are listed once, from its ArchSpec row.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/hparams.h"
#include "model/weights.h"

namespace peak::model {

// How binding checks a tensor and a synthetic file fills it.
enum class TensorRole {
  Matrix,            // a product's weights or the embedding rows: a type with a dot product
  NormWeight,        // RMS-norm weights: finite
  Bias,              // added to a product: finite
  FrequencyFactors,  // per-pair rope divisors: F32, positive
};

// Whether a file must hold the tensor and, when it need not, why.
enum class Presence {
  Required,
  UntiedOutput,  // output.weight; without it the head reuses token_embd
  RopeFreqs,     // Llama 3's rope frequency factors
  LongRope,      // LongRoPE's long and short factors (ArchSpec::long_rope), both or neither
  FusedQkv,      // the layer's Q, K and V rows in one matrix (ArchSpec::fused_qkv)
  SeparateQkv,   // with ArchSpec::fused_qkv: Q, K or V, required when the layer has no FusedQkv matrix
  TokenTypes,    // token_types.weight (ArchSpec::token_types): llama.cpp adds it when present
};

struct ManifestTensor {
  std::string name;  // "blk.3.attn_q.weight"
  int64_t ne[4];     // ggml order; 1 past n_dims
  uint32_t n_dims;   // 1 or 2 (4: an image encoder's patch embedding)
  TensorRole role;
  Presence presence;
  int64_t layer;  // its block, or -1 for the model's own tensors
  // Where binding puts it: a field of ModelWeights (layer -1) or of the block's LayerWeights.
  Tensor* ModelWeights::*model_slot;
  Tensor* LayerWeights::*layer_slot;
};

// The model's tensors in file order: the model's own, then block by block.
std::vector<ManifestTensor> tensor_manifest(const HParams& hp);

}  // namespace peak::model
