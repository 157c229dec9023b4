// GPT-2's byte-level alphabet: every byte stands for a printable code point, so BPE
// vocabularies can spell arbitrary bytes as text. Printable Latin-1 bytes (! .. ~,
// ¡ .. ¬, ® .. ÿ) stand for themselves; the other 68 take U+0100 onwards, in byte order.
#pragma once

#include <cstdint>

namespace peak::tokenizer {

uint32_t byte_to_codepoint(uint8_t byte);
// The byte a code point stands for, or -1 when it is not in the alphabet.
int codepoint_to_byte(uint32_t cpt);

}  // namespace peak::tokenizer
