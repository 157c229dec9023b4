// Synthetic LoRA adapters: random A and B matrices for a model's projections,
// in the layout llama.cpp's converter writes (model/lora_adapter.h), so that
// adapters can be tested and their cost measured without a training run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gguf/gguf_reader.h"
#include "kernels/ggml_type.h"

namespace peak::model {

struct SynthLoraSpec {
  int64_t rank = 16;
  float alpha = 0.0f;                 // adapter.lora.alpha (0: scales apply as given)
  kernels::GgmlType type = kernels::GgmlType::F16;  // of A and B: F32, F16 or Q8_0 (then rank a multiple of 32)
  uint64_t seed = 1;
  // Projections to adapt ("attn_q", "ffn_down", ...); empty: every one the model has.
  std::vector<std::string> targets;
};

// Writes an adapter for the model in `base` to `path`: for each adapted
// matrix W [n_in, n_out], A [n_in, rank] ~ N(0, 1/n_in), so that A·x of a
// normalised x has unit scale, and B [rank, n_out] ~ N(0, 0.02²), the scale of
// synthetic weights. Throws std::invalid_argument for a spec the base cannot
// take (a target it lacks, a rank Q8_0 cannot hold) or a `path` that is the
// base's own file (by any name), and io::IoError.
void write_synth_lora(const gguf::GgufFile& base, const SynthLoraSpec& spec, const std::string& path);

}  // namespace peak::model
