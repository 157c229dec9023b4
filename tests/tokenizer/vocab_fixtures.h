// Access to llama.cpp's vocabulary test vectors in shared/fixtures/vocab (SOURCE.txt
// there): ggml-vocab-<name>.gguf with .inp (strings separated by
// "\n__ggml_vocab_test__\n") and .out (the ids llama.cpp gives each, one line each,
// with add_special = false and parse_special = false).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace peak::tokenizer::testing_support {

struct VocabCase {
  std::string text;
  std::vector<int32_t> ids;
};

std::string vocab_path(const std::string& name);
std::vector<VocabCase> read_vocab_cases(const std::string& name);
// The ids llama.cpp gives `text` (one of the test strings).
std::vector<int32_t> llama_cpp_ids(const std::string& name, const std::string& text);
// Loaded once per process and shared (a Tokenizer is safe to share).
const Tokenizer& vocab_tokenizer(const std::string& name);

}  // namespace peak::tokenizer::testing_support
