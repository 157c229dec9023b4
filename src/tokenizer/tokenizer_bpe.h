// Byte-level BPE tokenization of one fragment of text (llama.cpp's
// llm_tokenizer_bpe): pre-tokenize into words, spell each word's bytes in the
// byte-level alphabet, then repeatedly apply the lowest-ranked merge among adjacent
// pairs.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/vocab.h"

namespace peak::tokenizer {

// Appends to `out`; appends to `unspelled` (unless null) each character the
// vocabulary lacks a byte token for and that is not there yet (add_character_once).
void tokenize_bpe(const Vocab& vocab, std::string_view text, std::vector<int32_t>& out, std::string* unspelled);

}  // namespace peak::tokenizer
