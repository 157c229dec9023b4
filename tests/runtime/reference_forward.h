// A naive double-precision forward pass over a GGUF model's F32 weights, written
// straight from the maths (no graph, no kernels), to check the engine's llama,
// qwen2 and qwen3 graphs against.
#pragma once

#include <cstdint>
#include <vector>

#include "gguf/gguf_reader.h"
#include "model/hparams.h"

namespace peak::test {

class ReferenceForward {
 public:
  ReferenceForward(const gguf::GgufFile& file, const model::HParams& hp);
  // Feeds one token at the next position; returns its logits.
  std::vector<double> step(int32_t token);

 private:
  std::vector<double> matvec(const char* name, const std::vector<double>& x) const;
  std::vector<double> vec(const char* name) const;
  bool has(const char* name) const;

  const gguf::GgufFile& file_;
  const model::HParams& hp_;
  int32_t pos_ = 0;
  std::vector<std::vector<double>> k_cache_, v_cache_;  // per layer, [pos][n_embd_kv]
};

}  // namespace peak::test
