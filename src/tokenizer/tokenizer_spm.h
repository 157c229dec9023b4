// SentencePiece-style tokenization of one fragment of text (llama.cpp's
// llm_tokenizer_spm): start from single characters, repeatedly join the adjacent pair
// that forms the highest-scoring token, then emit each piece as its token or, when it
// is none, as byte-fallback tokens.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/vocab.h"

namespace peak::tokenizer {

inline constexpr std::string_view kSpaceMarker = "\xE2\x96\x81";  // U+2581, SentencePiece's space

// `text` already has its spaces written as U+2581. Appends to `out`; appends to
// `unspelled` (unless null) each character that became the unknown token for want
// of byte tokens and is not there yet (add_character_once).
void tokenize_spm(const Vocab& vocab, std::string_view text, std::vector<int32_t>& out, std::string* unspelled);

}  // namespace peak::tokenizer
