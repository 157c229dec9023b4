// UTF-8 decoding and encoding for the tokenizers, and a streaming decoder for
// detokenized output.
//
// Decoding is strict (no overlong forms, no surrogates, nothing above U+10FFFF). An
// ill-formed sequence decodes to U+FFFD and consumes its "maximal subpart" (Unicode
// §3.9, the practice WHATWG and Python follow): the longest prefix of a well-formed
// sequence, or one byte when the first byte cannot start one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace peak::tokenizer {

constexpr uint32_t kReplacementCharacter = 0xFFFD;

struct Utf8Char {
  enum class Status { Valid, Invalid, Truncated };
  Status status;
  uint32_t cpt;     // U+FFFD unless Valid
  size_t length;    // bytes consumed (>= 1)
};

// Decodes the character starting at text[pos] (pos < text.size()). Truncated means the
// bytes are a valid prefix that the end of `text` cuts short.
Utf8Char decode_utf8_char(std::string_view text, size_t pos);

// All code points of `text`, ill-formed sequences (truncated ones too) as U+FFFD.
std::vector<uint32_t> decode_utf8(std::string_view text);

// Appends the UTF-8 form of a code point (<= U+10FFFF).
void append_utf8(std::string& out, uint32_t cpt);

// Appends `character` (the bytes of one character, or of one ill-formed sequence)
// to `characters` unless they already hold it: a set kept in the order of adding.
void add_character_once(std::string& characters, std::string_view character);

// Turns a byte stream cut at arbitrary points (one detokenized piece after another)
// into text that never splits a character: bytes of an incomplete character are held
// until it completes; ill-formed sequences come out as U+FFFD, never dropped.
// Not thread-safe: one decoder per stream.
class Utf8StreamDecoder {
 public:
  // The text completed by `bytes` (valid UTF-8, possibly empty).
  std::string push(std::string_view bytes);
  // Ends the stream: held bytes of an unfinished character come out as U+FFFD.
  std::string finish();
  // Bytes held back, waiting for the rest of their character (0 to 3).
  size_t pending_bytes() const { return pending_.size(); }

 private:
  std::string pending_;
};

}  // namespace peak::tokenizer
