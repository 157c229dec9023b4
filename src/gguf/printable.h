// Text from a file, made safe to put in a message: what a GGUF holds (names,
// architecture, tokenizer names ...) is untrusted, and an error message that
// quotes it is printed on a terminal, where an ESC sequence would clear the
// screen or retitle the window, and passed through C strings, where an
// embedded NUL would cut it short.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace peak::gguf {

// `bytes` with every control character escaped as \xNN (C0 including newline
// and tab, DEL, ESC, and C1 U+0080..U+009F), each byte of invalid UTF-8 as
// \xNN and a backslash as "\\"; other UTF-8 is kept. At most `max_bytes` input
// bytes are shown, then "...".
std::string printable(std::string_view bytes, size_t max_bytes = 80);

}  // namespace peak::gguf
