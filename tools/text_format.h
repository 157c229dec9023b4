// Text helpers shared by sub-commands: escaping untrusted bytes for a terminal
// or for JSON, and human-readable sizes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

// Control bytes become \n, \t or \xNN (ESC and the C1 controls U+0080..U+009F
// too, which terminals act on); invalid UTF-8 bytes become \xNN. At most
// `max_bytes` input bytes are shown, then "..." and the total length.
std::string escape_for_terminal(std::string_view s, size_t max_bytes);
// Text of many lines shown as laid out (a prompt, a summary): the same with
// newlines and tabs kept, and no length limit.
std::string escape_keeping_lines(std::string_view s);
// Text from a model file (its name, its chat template's name ...) as the
// commands print it: escape_for_terminal, up to 256 bytes. Generated text is the
// product's output and is printed as the model wrote it.
std::string shown(std::string_view file_text);
// Characters (UTF-8, each once) quoted one by one and escaped as
// escape_for_terminal does: "'h', ' ', '\\x1b'"; the first 16, then how many more.
std::string quoted_characters(std::string_view characters);
// A JSON string literal with quotes; invalid UTF-8 becomes U+FFFD.
std::string json_string(std::string_view s);
// A JSON number with 10 significant digits; NaN and infinities, which JSON
// cannot write, become null.
std::string json_number(double v);
// llama.cpp's escape sequences in text given on the command line, as its tools
// read them: \n, \r, \t, \', \", \\ and \xHH become the character; any other
// backslash stays as it is.
std::string process_escapes(std::string_view s);
// 1536 -> "1.50 KiB".
std::string human_bytes(uint64_t bytes);
// Length of the valid UTF-8 sequence starting at s[i], or 0 if it is invalid.
size_t utf8_sequence_length(std::string_view s, size_t i);
