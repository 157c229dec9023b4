#include "gguf/printable.h"

#include <cstdint>

namespace peak::gguf {
namespace {

// The length of the valid UTF-8 sequence at s[i] and its code point, or 0.
size_t utf8_at(std::string_view s, size_t i, uint32_t* cp) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  size_t n;
  uint32_t min_cp;
  if (b0 < 0x80) {
    *cp = b0;
    return 1;
  }
  if ((b0 & 0xe0) == 0xc0) { n = 2; min_cp = 0x80; }
  else if ((b0 & 0xf0) == 0xe0) { n = 3; min_cp = 0x800; }
  else if ((b0 & 0xf8) == 0xf0) { n = 4; min_cp = 0x10000; }
  else return 0;
  if (i + n > s.size()) return 0;
  uint32_t c = b0 & (0x7fu >> n);
  for (size_t k = 1; k < n; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xc0) != 0x80) return 0;
    c = (c << 6) | (b & 0x3f);
  }
  if (c < min_cp || (c >= 0xd800 && c <= 0xdfff) || c > 0x10ffff) return 0;  // overlong, surrogate, too large
  *cp = c;
  return n;
}

void append_hex(std::string& out, unsigned char c) {
  static const char kHex[] = "0123456789abcdef";
  out += "\\x";
  out += kHex[c >> 4];
  out += kHex[c & 15];
}

}  // namespace

std::string printable(std::string_view bytes, size_t max_bytes) {
  std::string out;
  size_t i = 0;
  while (i < bytes.size() && i < max_bytes) {
    uint32_t cp = 0;
    const size_t n = utf8_at(bytes, i, &cp);
    if (n == 0 || cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f)) {
      for (size_t k = 0; k < (n ? n : 1); ++k) append_hex(out, static_cast<unsigned char>(bytes[i + k]));
      i += n ? n : 1;
    } else if (cp == '\\') {
      out += "\\\\";
      ++i;
    } else {
      out.append(bytes.substr(i, n));
      i += n;
    }
  }
  if (i < bytes.size()) out += "...";
  return out;
}

}  // namespace peak::gguf
