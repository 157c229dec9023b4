// Merging a LoRA adapter into its model: W' = W + s·B·A (s = scale·alpha/rank,
// or scale when alpha is 0) for every matrix the adapter adapts, written as a
// new plain model for those who want one file. The other tensors and the
// metadata are copied as they are.
#pragma once

#include <functional>
#include <string>

namespace peak::model {

struct LoraMergeOptions {
  float scale = 1.0f;
  // A ggml type name for the merged matrices ("F16", "Q8_0", ...); empty: each
  // keeps its base type (dequantized, merged, quantized again).
  std::string type;
  int n_threads = 0;  // 0: one per hardware thread
  // Fraction done (0..1) after each tensor; false cancels (throws LoadCancelled).
  std::function<bool(float)> progress;
};

// Checks the adapter against the model as LoraAdapter::load does and writes
// the merged model through a temporary file (io::AtomicFile). Throws
// std::invalid_argument (output naming an input, an unknown or unwritable
// type, a scale that is not finite), the errors of loading either file, and
// io::IoError.
void merge_lora(const std::string& base_path, const std::string& adapter_path, const std::string& output_path,
                const LoraMergeOptions& options);

}  // namespace peak::model
