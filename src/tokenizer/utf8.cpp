#include "tokenizer/utf8.h"

namespace peak::tokenizer {

namespace {

bool in_range(uint8_t byte, uint8_t lo, uint8_t hi) { return byte >= lo && byte <= hi; }

}  // namespace

Utf8Char decode_utf8_char(std::string_view text, size_t pos) {
  const auto lead = static_cast<uint8_t>(text[pos]);
  if (lead < 0x80) {
    return {Utf8Char::Status::Valid, lead, 1};
  }
  // Table 3-7 of the Unicode standard: the length of the sequence, the bits the lead
  // contributes and the range its second byte must fall in (later bytes: 80..BF).
  size_t length = 0;
  uint32_t cpt = 0;
  uint8_t second_lo = 0x80, second_hi = 0xBF;
  if (in_range(lead, 0xC2, 0xDF)) {
    length = 2, cpt = lead & 0x1Fu;
  } else if (in_range(lead, 0xE0, 0xEF)) {
    length = 3, cpt = lead & 0x0Fu;
    if (lead == 0xE0) second_lo = 0xA0;  // no overlong forms
    if (lead == 0xED) second_hi = 0x9F;  // no surrogates
  } else if (in_range(lead, 0xF0, 0xF4)) {
    length = 4, cpt = lead & 0x07u;
    if (lead == 0xF0) second_lo = 0x90;  // no overlong forms
    if (lead == 0xF4) second_hi = 0x8F;  // nothing above U+10FFFF
  } else {
    return {Utf8Char::Status::Invalid, kReplacementCharacter, 1};
  }
  for (size_t i = 1; i < length; ++i) {
    if (pos + i >= text.size()) {
      return {Utf8Char::Status::Truncated, kReplacementCharacter, i};
    }
    const auto byte = static_cast<uint8_t>(text[pos + i]);
    const bool ok = i == 1 ? in_range(byte, second_lo, second_hi) : in_range(byte, 0x80, 0xBF);
    if (!ok) {
      return {Utf8Char::Status::Invalid, kReplacementCharacter, i};
    }
    cpt = (cpt << 6) | (byte & 0x3Fu);
  }
  return {Utf8Char::Status::Valid, cpt, length};
}

std::vector<uint32_t> decode_utf8(std::string_view text) {
  std::vector<uint32_t> cpts;
  cpts.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) {
    const Utf8Char ch = decode_utf8_char(text, pos);
    cpts.push_back(ch.cpt);
    pos += ch.length;
  }
  return cpts;
}

void add_character_once(std::string& characters, std::string_view character) {
  // Compared a character at a time: a byte search could find an ill-formed
  // sequence inside a whole character.
  for (size_t pos = 0; pos < characters.size();) {
    const size_t length = decode_utf8_char(characters, pos).length;
    if (std::string_view(characters).substr(pos, length) == character) return;
    pos += length;
  }
  characters.append(character);
}

void append_utf8(std::string& out, uint32_t cpt) {
  if (cpt < 0x80) {
    out.push_back(static_cast<char>(cpt));
  } else if (cpt < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cpt >> 6)));
    out.push_back(static_cast<char>(0x80 | (cpt & 0x3F)));
  } else if (cpt < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cpt >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cpt >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cpt & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cpt >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cpt >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cpt >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cpt & 0x3F)));
  }
}

std::string Utf8StreamDecoder::push(std::string_view bytes) {
  pending_.append(bytes);
  std::string out;
  size_t pos = 0;
  while (pos < pending_.size()) {
    const Utf8Char ch = decode_utf8_char(pending_, pos);
    if (ch.status == Utf8Char::Status::Truncated) {
      break;  // wait for the rest of this character
    }
    if (ch.status == Utf8Char::Status::Valid) {
      out.append(pending_, pos, ch.length);
    } else {
      append_utf8(out, kReplacementCharacter);
    }
    pos += ch.length;
  }
  pending_.erase(0, pos);
  return out;
}

std::string Utf8StreamDecoder::finish() {
  std::string out;
  if (!pending_.empty()) {
    append_utf8(out, kReplacementCharacter);  // one maximal subpart, cut short by the end
    pending_.clear();
  }
  return out;
}

}  // namespace peak::tokenizer
