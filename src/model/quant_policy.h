// Which type each tensor of a model gets when quantizing to a file type, with
// llama.cpp's rules (llama-quantize), so peak's files match its choices:
// 1-D tensors and BERT's position and token-type embeddings stay F32; the output matrix (or the token embedding of a
// model without one) gets Q6_K; the _M presets give attn_v and ffn_down of some layers Q6_K; matrices whose rows are
// not whole 256-blocks fall back to a 32-block type.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/ggml_type.h"

namespace peak::model {

struct FileType {
  std::string name;        // "Q4_K_M"
  kernels::GgmlType base;  // the type most matrices get
  uint32_t llama_ftype;    // value of general.file_type (llama.cpp's LLAMA_FTYPE_*)
};

// Throws std::invalid_argument listing the known names.
FileType parse_file_type(const std::string& name);
std::vector<std::string> file_type_names();

// What the policy needs to know about the model.
struct ModelLayout {
  int64_t n_layer = 0;
  int64_t n_head = 0;
  int64_t n_head_kv = 0;
  bool has_output = true;  // false: the output reuses token_embd
};

class QuantPolicy {
 public:
  // `pure`: every matrix gets the base type (llama-quantize --pure).
  QuantPolicy(const FileType& type, const ModelLayout& layout, bool pure);
  // The stored type of tensor `name` with `n_dims` dimensions and rows of `row_length`.
  kernels::GgmlType type_for(const std::string& name, uint32_t n_dims, int64_t row_length) const;
  // Tensors llama-quantize never quantizes, whatever the type or --pure:
  // BERT's position and token-type embeddings. type_for gives them F32; a
  // float file being quantized keeps their type.
  static bool stays_float(const std::string& name);

 private:
  kernels::GgmlType file_base_or_fallback(kernels::GgmlType wanted, int64_t row_length) const;
  FileType type_;
  ModelLayout layout_;
  bool pure_;
};

}  // namespace peak::model
