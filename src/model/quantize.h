// Model quantization: F32/F16/BF16 GGUF -> a file type (Q4_0, Q4_K_M ...), tensor
// by tensor, with llama.cpp's per-tensor choices (quant_policy.h). The output is
// written through a temporary file, one tensor in memory at a time.
#pragma once

#include <functional>
#include <string>

namespace peak::model {

struct QuantizeOptions {
  std::string type = "Q4_K_M";  // a file type name (quant_policy.h)
  bool pure = false;            // every matrix in the base type
  int n_threads = 0;            // 0: one per hardware thread
  // Fraction done (0..1) after each tensor; false cancels (throws LoadCancelled).
  std::function<bool(float)> progress;
};

// Throws std::invalid_argument (bad type, output == input, already-quantized
// input), the GGUF and model errors for a bad input (InvalidModel naming the
// tensor for a NaN or Inf in one it converts), io::IoError for I/O.
void quantize_model(const std::string& input_path, const std::string& output_path, const QuantizeOptions& options);

// Whether two paths name one file (the same path, or the same device and
// inode): a writer refuses to overwrite its input.
bool same_file(const std::string& a, const std::string& b);

}  // namespace peak::model
