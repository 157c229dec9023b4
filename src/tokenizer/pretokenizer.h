// Pre-tokenizers of byte-level BPE vocabularies: they cut text into words before the
// BPE merges, each the hand-written equivalent of the regex list llama.cpp applies for
// a `tokenizer.ggml.pre` name (no std::regex: it is slow and knows no Unicode classes).
//
// As in llama.cpp, the regexes of a list are applied one after the other, each to every
// piece the previous ones left; text between two matches stays a piece of its own.
// \s means Unicode White_Space, \p{..} the Unicode general category (unicode.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace peak::tokenizer {

enum class PreTokenizer {
  Default,        // [\p{P}$+<=>^~|]+ ; gpt2 ; \p{N}+ ; [0-9][0-9][0-9]
  Gpt2,           // 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)
  Llama3,         // (?i:'s|..)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
  Qwen2,          // as Llama3 with \p{N} instead of \p{N}{1,3}
  Gpt4o,          // o200k: [^\r\n\p{L}\p{N}]?U*L+C?|[^\r\n\p{L}\p{N}]?U+L*C?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*
                  // |\s*[\r\n]+|\s+(?!\S)|\s+ with U, L the letters but a-z, A-Z; C (?i:'s|'t|..)
  Starcoder,      // \p{N} ; gpt2
  Falcon,         // [\p{P}$+<=>^~|`]+ ; gpt2 ; [0-9][0-9][0-9]
  DeepseekCoder,  // [\r\n] ; \s?\p{L}+ ; \s?\p{P}+ ; [一-龥ࠀ-一가-퟿]+ ; \p{N}
  Bloom,          //  ?[^(\s|.,!?…。，、।۔،)]+
  Viking,         // as Bloom, then \p{N}
  DeepseekLlm,    // [\r\n] ; \s?[cased letters]+ ; \s?[!-/:-~！-／：-～‘-‟　-。]+ ; \s+$ ; [一-龥ࠀ-一가-퟿]+ ; \p{N}+
};

struct PreTokenizerInfo {
  PreTokenizer kind;
  bool ignore_merges;  // a word that is a token as a whole is taken without merging
  bool add_bos;        // the default of tokenizer.ggml.add_bos_token
};

// What a `tokenizer.ggml.pre` name selects (an empty name is llama.cpp's "default");
// false when peak does not support the name.
bool pre_tokenizer_from_name(std::string_view name, PreTokenizerInfo& info);

// Cuts `cpts` into words; returns their lengths in code points, in order (they sum to
// cpts.size()).
std::vector<size_t> pre_tokenize(PreTokenizer kind, const std::vector<uint32_t>& cpts);

}  // namespace peak::tokenizer
