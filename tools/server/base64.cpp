#include "base64.h"

#include <cstdint>
#include <cstdio>

namespace peak_server {

namespace {

const char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// The 6-bit value of a base64 character, or -1.
int sextet(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

// A character for a message: itself in quotes when printable ASCII, else its
// byte (a line break, or a byte of a UTF-8 sequence).
std::string shown(char c) {
  const auto byte = static_cast<unsigned char>(c);
  if (byte >= 0x20 && byte < 0x7f) return std::string("'") + c + "'";
  char buf[16];
  std::snprintf(buf, sizeof buf, "byte 0x%02X", byte);
  return buf;
}

size_t trailing_padding(std::string_view text) {
  size_t pad = 0;
  while (pad < text.size() && text[text.size() - 1 - pad] == '=') ++pad;
  return pad;
}

}  // namespace

std::string base64_encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    const size_t left = bytes.size() - i;
    uint32_t group = static_cast<uint32_t>(static_cast<unsigned char>(bytes[i])) << 16;
    if (left > 1) group |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8;
    if (left > 2) group |= static_cast<unsigned char>(bytes[i + 2]);
    out.push_back(kAlphabet[(group >> 18) & 63]);
    out.push_back(kAlphabet[(group >> 12) & 63]);
    out.push_back(left > 1 ? kAlphabet[(group >> 6) & 63] : '=');
    out.push_back(left > 2 ? kAlphabet[group & 63] : '=');
  }
  return out;
}

size_t base64_decoded_size(std::string_view text) { return (text.size() - trailing_padding(text)) * 3 / 4; }

bool base64_decode(std::string_view text, std::string* bytes, std::string* error) {
  const size_t pad = trailing_padding(text);
  const size_t n = text.size() - pad;  // the data characters
  for (size_t i = 0; i < n; ++i) {
    if (text[i] == '=') {
      *error = "'=' at offset " + std::to_string(i) + " is padding before the end of the data";
      return false;
    }
    if (sextet(text[i]) < 0) {
      *error = "the character " + shown(text[i]) + " at offset " + std::to_string(i) +
               " is not base64 (A-Z, a-z, 0-9, '+' and '/', then '=' padding at the end)";
      return false;
    }
  }
  // A group's 4 characters hold 3 bytes; a last group of 2 or 3 holds 1 or 2.
  if (n % 4 == 1) {
    *error = std::to_string(n) + " characters of data leave one over after whole 4-character groups, which is " +
             "no byte: the data is cut short or has one character too many";
    return false;
  }
  if (pad > 0 && (pad > 2 || text.size() % 4 != 0)) {
    *error = "the padding at offset " + std::to_string(n) + " (" + std::to_string(pad) +
             " '=') does not complete the last 4-character group, which has " + std::to_string(n % 4) +
             " characters of data";
    return false;
  }
  const int spare_bits = n % 4 == 2 ? 4 : n % 4 == 3 ? 2 : 0;
  if (spare_bits && (sextet(text[n - 1]) & ((1 << spare_bits) - 1)) != 0) {
    *error = "the last character " + shown(text[n - 1]) + " at offset " + std::to_string(n - 1) +
             " sets bits past the last byte (not canonical base64, RFC 4648 section 3.5)";
    return false;
  }
  bytes->clear();
  bytes->reserve(n * 3 / 4);
  uint32_t bits = 0;
  int n_bits = 0;
  for (size_t i = 0; i < n; ++i) {
    bits = (bits << 6) | static_cast<uint32_t>(sextet(text[i]));
    n_bits += 6;
    if (n_bits >= 8) {
      n_bits -= 8;
      bytes->push_back(static_cast<char>((bits >> n_bits) & 0xff));
    }
  }
  return true;
}

}  // namespace peak_server
