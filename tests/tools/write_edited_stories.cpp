// Writes stories260K with one thing changed, for the `peak` tests of
// tests/tools/CMakeLists.txt:
//   no-byte-tokens: a byte-level BPE vocabulary of the model's 512 tokens that
//     spells only a, b, d, g, o and the space (no byte tokens for the rest);
//   odd-name: a general.name with a NUL and an ESC sequence inside.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "gguf/gguf_reader.h"
#include "gguf/gguf_writer.h"

namespace {

using peak::gguf::GgufWriter;

void use_vocabulary_without_byte_tokens(GgufWriter& w, size_t n_tokens) {
  // "Ġ" is the space in the byte-level alphabet.
  std::vector<std::string> tokens = {"a", "b", "d", "g", "o", "\xC4\xA0", "ab", "<|endoftext|>"};
  std::vector<int32_t> types = {1, 1, 1, 1, 1, 1, 1, 3};  // normal, then a control token
  while (tokens.size() < n_tokens) {
    tokens.push_back("<unused" + std::to_string(tokens.size()) + ">");
    types.push_back(5);  // unused
  }
  w.set_string("tokenizer.ggml.model", "gpt2");
  w.set_string("tokenizer.ggml.pre", "gpt-2");
  w.set_string_array("tokenizer.ggml.tokens", tokens);
  w.set_array("tokenizer.ggml.token_type", peak::gguf::ValueType::Int32, types.data(), types.size());
  w.set_string_array("tokenizer.ggml.merges", {"a b"});
  w.set_u32("tokenizer.ggml.eos_token_id", 7);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4 || (std::strcmp(argv[1], "no-byte-tokens") != 0 && std::strcmp(argv[1], "odd-name") != 0)) {
    std::fprintf(stderr, "usage: write_edited_stories no-byte-tokens|odd-name STORIES.gguf OUT.gguf\n");
    return 2;
  }
  try {
    const bool no_byte_tokens = std::strcmp(argv[1], "no-byte-tokens") == 0;
    const auto stories = peak::gguf::GgufFile::open(argv[2]);
    GgufWriter w;
    for (size_t i = 0; i < stories->n_kv(); ++i) {
      if (!no_byte_tokens || stories->key(i).rfind("tokenizer.", 0) != 0) w.copy_value(stories->value(i));
    }
    if (no_byte_tokens) {
      use_vocabulary_without_byte_tokens(w, stories->find("tokenizer.ggml.tokens")->array().size());
    } else {
      static const char kName[] = "Stories\0\x1b[2J260K";
      w.set_string("general.name", std::string_view(kName, sizeof kName - 1));
    }
    for (size_t i = 0; i < stories->n_tensors(); ++i) {
      const peak::gguf::TensorInfo& t = stories->tensor(i);
      w.add_tensor(t.name, t.type, t.n_dims, t.ne, t.data);
    }
    w.write_file(argv[3]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "write_edited_stories: %s\n", e.what());
    return 1;
  }
  return 0;
}
