// A naive double-precision forward pass over a GGUF model's F32 weights, written
// straight from the maths (no graph, no kernels), to check the engine's graphs
// against: llama, qwen2 and qwen3's pre-norm block; gemma's embedding scale,
// GeGLU, post-norms, soft-caps and local/global layers; phi3's fused matrices,
// partial rotation and LongRoPE; smollm3's layers without rotation.
#pragma once

#include <cstdint>
#include <vector>

#include "gguf/gguf_reader.h"
#include "model/hparams.h"

namespace peak::test {

class ReferenceForward {
 public:
  // n_ctx: the context size the engine runs with, which picks LongRoPE's
  // long (n_ctx > HParams::rope_original_context) or short factors.
  ReferenceForward(const gguf::GgufFile& file, const model::HParams& hp, int64_t n_ctx);
  // Feeds one token at the next position; returns its logits.
  std::vector<double> step(int32_t token);

 private:
  std::vector<double> matvec(const std::string& name, const std::vector<double>& x) const;
  std::vector<double> vec(const std::string& name) const;
  bool has(const std::string& name) const;
  // Rotates every head of v [n_heads * d] in place as layer il does at pos_.
  void rope(std::vector<double>& v, size_t n_heads, int64_t il) const;
  // Softmax attention of query head h over the cached positions of layer il.
  void attend(const std::vector<double>& q, size_t h, int64_t il, std::vector<double>& out) const;

  const gguf::GgufFile& file_;
  const model::HParams& hp_;
  std::vector<double> rope_factors_;  // per-pair divisors, empty for none
  int32_t pos_ = 0;
  std::vector<std::vector<double>> k_cache_, v_cache_;  // per layer, [pos][n_embd_kv]
};

}  // namespace peak::test
