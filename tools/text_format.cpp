#include "text_format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

size_t utf8_sequence_length(std::string_view s, size_t i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  size_t n;
  uint32_t min_cp;
  if (b0 < 0x80) return 1;
  if ((b0 & 0xe0) == 0xc0) { n = 2; min_cp = 0x80; }
  else if ((b0 & 0xf0) == 0xe0) { n = 3; min_cp = 0x800; }
  else if ((b0 & 0xf8) == 0xf0) { n = 4; min_cp = 0x10000; }
  else return 0;
  if (i + n > s.size()) return 0;
  uint32_t cp = b0 & (0x7fu >> n);
  for (size_t k = 1; k < n; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3f);
  }
  // Overlong forms, surrogates and values past U+10FFFF are invalid.
  if (cp < min_cp || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff) return 0;
  return n;
}

namespace {

void append_hex_byte(std::string& out, unsigned char c) {
  static const char kHex[] = "0123456789abcdef";
  out += "\\x";
  out += kHex[c >> 4];
  out += kHex[c & 15];
}

enum class LineBreaks { Escaped, Kept };

std::string escape(std::string_view s, size_t max_bytes, LineBreaks line_breaks) {
  std::string out;
  size_t i = 0;
  while (i < s.size() && i < max_bytes) {
    const auto c = static_cast<unsigned char>(s[i]);
    if ((c == '\n' || c == '\t') && line_breaks == LineBreaks::Kept) {
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    if (c == '\n') { out += "\\n"; ++i; continue; }
    if (c == '\t') { out += "\\t"; ++i; continue; }
    if (c == '\\') { out += "\\\\"; ++i; continue; }
    if (c < 0x20 || c == 0x7f) { append_hex_byte(out, c); ++i; continue; }
    const size_t n = utf8_sequence_length(s, i);
    if (n == 0) { append_hex_byte(out, c); ++i; continue; }
    if (c == 0xc2 && static_cast<unsigned char>(s[i + 1]) < 0xa0) {  // C1 control U+0080..U+009F
      append_hex_byte(out, c);
      append_hex_byte(out, static_cast<unsigned char>(s[i + 1]));
      i += 2;
      continue;
    }
    out.append(s.substr(i, n));
    i += n;
  }
  if (i < s.size()) out += "... (" + std::to_string(s.size()) + " bytes)";
  return out;
}

}  // namespace

std::string escape_for_terminal(std::string_view s, size_t max_bytes) {
  return escape(s, max_bytes, LineBreaks::Escaped);
}

std::string escape_keeping_lines(std::string_view s) { return escape(s, s.size(), LineBreaks::Kept); }

std::string shown(std::string_view file_text) { return escape_for_terminal(file_text, 256); }

std::string quoted_characters(std::string_view characters) {
  constexpr size_t kShown = 16;
  std::string quoted;
  size_t count = 0;
  for (size_t i = 0; i < characters.size(); ++count) {
    const size_t n = std::max<size_t>(1, utf8_sequence_length(characters, i));  // invalid bytes one at a time
    if (count < kShown) quoted += (count ? ", '" : "'") + escape_for_terminal(characters.substr(i, n), n) + "'";
    i += n;
  }
  if (count > kShown) quoted += " and " + std::to_string(count - kShown) + " more";
  return quoted;
}

std::string json_string(std::string_view s) {
  std::string out = "\"";
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '"': out += "\\\""; ++i; continue;
      case '\\': out += "\\\\"; ++i; continue;
      case '\n': out += "\\n"; ++i; continue;
      case '\r': out += "\\r"; ++i; continue;
      case '\t': out += "\\t"; ++i; continue;
      default: break;
    }
    if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
      ++i;
      continue;
    }
    const size_t n = utf8_sequence_length(s, i);
    if (n == 0) {
      out += "\\ufffd";
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  out += '"';
  return out;
}

namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string process_escapes(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\' || i + 1 == s.size()) {
      out += s[i];
      continue;
    }
    const char c = s[i + 1];
    const char* const kFrom = "nrt'\"\\";
    const char* const kTo = "\n\r\t'\"\\";
    if (const char* at = c != '\0' ? std::strchr(kFrom, c) : nullptr) {
      out += kTo[at - kFrom];
      ++i;
    } else if (c == 'x' && i + 3 < s.size() && hex_digit(s[i + 2]) >= 0 && hex_digit(s[i + 3]) >= 0) {
      out += static_cast<char>(hex_digit(s[i + 2]) * 16 + hex_digit(s[i + 3]));
      i += 3;
    } else {
      out += '\\';
    }
  }
  return out;
}

std::string json_number(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

std::string human_bytes(uint64_t bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int unit = 0;
  while (v >= 1024.0 && unit < 4) {
    v /= 1024.0;
    ++unit;
  }
  char buf[32];
  if (unit == 0) std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  else std::snprintf(buf, sizeof buf, "%.2f %s", v, kUnits[unit]);
  return buf;
}
