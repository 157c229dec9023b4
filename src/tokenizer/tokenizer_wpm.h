// WordPiece tokenization of one fragment of text (BERT; llama.cpp's
// llm_tokenizer_wpm): normalise (accents stripped, lower case, control characters
// dropped), split at whitespace and around punctuation and CJK ideographs, then cut
// each word, spelled with a leading U+2581, greedily into the longest tokens.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "tokenizer/vocab.h"

namespace peak::tokenizer {

// Appends to `out`.
void tokenize_wpm(const Vocab& vocab, std::string_view text, std::vector<int32_t>& out);

}  // namespace peak::tokenizer
