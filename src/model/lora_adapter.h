// A LoRA adapter as llama.cpp's convert_lora_to_gguf.py writes it, checked
// against the model it adapts and applied at run time without merging:
//
//   y = W·x + s·B·(A·x),   s = scale·alpha/rank (scale alone when alpha is 0)
//
// File: general.type = "adapter", adapter.type = "lora", general.architecture
// the base model's, adapter.lora.alpha (float; absent reads as 0). For a base
// matrix W "blk.N.<proj>.weight" of ggml shape [n_in, n_out] the pair
// "blk.N.<proj>.weight.lora_a" [n_in, rank] and ".lora_b" [rank, n_out], so A·x
// and B·(A·x) are the engine's ordinary mul_mat. <proj> is any attention or
// feed-forward projection the model has (attn_q, attn_k, attn_v, attn_qkv,
// attn_output, ffn_gate, ffn_up, ffn_down). Norm-weight tensors ("*_norm.weight")
// are ignored, as llama.cpp ignores them; any other tensor is refused.
//
// Immutable once loaded, and independent of the model afterwards (its tensors
// point into its own mapped file), so contexts on any threads may share one.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/graph.h"
#include "gguf/gguf_reader.h"
#include "model/model.h"

namespace peak::model {

// The matrices of a layer an adapter can target, in LayerWeights' order.
enum class Projection : uint8_t { Q, K, V, Qkv, AttnOutput, FfnGate, FfnUp, FfnDown };
constexpr size_t kProjectionCount = 8;

// "attn_q", "attn_k", ... as the tensor names spell them.
const char* projection_name(Projection p);
// The layer's matrix for `p` (null when the model has none there, e.g. attn_q
// of a fused-QKV phi3 file).
core::Tensor* projection_weight(const LayerWeights& l, Projection p);

struct LoraTarget {
  int64_t layer = 0;
  Projection projection = Projection::Q;
};
// "blk.N.<proj>.weight" -> its layer and projection; nullopt for any other name.
std::optional<LoraTarget> parse_lora_target(std::string_view name);

struct LoraPair {
  core::Tensor* a = nullptr;  // [n_in, rank]
  core::Tensor* b = nullptr;  // [rank, n_out]
  // B transposed, [n_out, rank] (F16 when B is F16 or Q8_0 within F16's range,
  // else F32): decode adds the weighted sum of its rank rows by A·x
  // (core::Graph::mul_mat_low_rank).
  core::Tensor* b_rows = nullptr;
  int64_t rank = 0;
  // alpha / rank, or 1 when alpha is 0: the user's scale times this multiplies B·(A·x).
  float alpha_scale = 1.0f;
};

class LoraAdapter {
 public:
  // Opens `path` and checks it against `base`: metadata, architecture, that
  // every tensor is one half of a pair whose target the model has, shapes,
  // types the kernels compute with, finite values. Throws InvalidModel naming
  // the key or tensor at fault (UnsupportedModel for a valid adapter of
  // something peak does not adapt), gguf::GgufError or io::IoError.
  static std::shared_ptr<const LoraAdapter> load(const Model& base, const std::string& path,
                                                 const io::MapOptions& options = {});

  // The pair for layer `layer`'s projection `p`, or null.
  const LoraPair* pair(int64_t layer, Projection p) const {
    const LoraPair& lp = layers_[static_cast<size_t>(layer)][static_cast<size_t>(p)];
    return lp.a ? &lp : nullptr;
  }
  // The model the adapter was checked against (identity only; never read).
  const Model* base() const { return base_; }
  float alpha() const { return alpha_; }
  size_t n_pairs() const { return n_pairs_; }
  int64_t min_rank() const { return min_rank_; }
  int64_t max_rank() const { return max_rank_; }
  // Bytes of the A and B matrices: what one token reads besides the model.
  uint64_t tensor_bytes() const { return tensor_bytes_; }
  const gguf::GgufFile& file() const { return *file_; }

 private:
  LoraAdapter() = default;
  const Model* base_ = nullptr;
  std::unique_ptr<gguf::GgufFile> file_;
  std::unique_ptr<core::TensorArena> descriptors_;
  std::vector<std::vector<uint8_t>> b_rows_;                    // the pairs' b_rows data
  std::vector<std::array<LoraPair, kProjectionCount>> layers_;  // n_layer entries
  float alpha_ = 0.0f;
  size_t n_pairs_ = 0;
  int64_t min_rank_ = 0;
  int64_t max_rank_ = 0;
  uint64_t tensor_bytes_ = 0;
};

}  // namespace peak::model
