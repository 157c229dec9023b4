// SentencePiece-style tokenization of one fragment of text (llama.cpp's
// llm_tokenizer_spm): start from single characters, repeatedly join the adjacent pair
// that forms the highest-scoring token, then emit each piece as its token or, when it
// is none, as byte-fallback tokens.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "tokenizer/vocab.h"

namespace peak::tokenizer {

// `text` already has its spaces written as U+2581. Appends to `out`.
void tokenize_spm(const Vocab& vocab, std::string_view text, std::vector<int32_t>& out);

}  // namespace peak::tokenizer
