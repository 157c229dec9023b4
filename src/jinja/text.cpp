#include "jinja/text.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace peak::jinja::text {
namespace {

constexpr char32_t kEscapedByte = 0xDC00;  // U+DC80..U+DCFF: one byte that is not UTF-8

// The length of the valid UTF-8 sequence at s[i], or 0.
size_t sequence_length(std::string_view s, size_t i, char32_t& cp) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  if (b0 < 0x80) {
    cp = b0;
    return 1;
  }
  size_t n = 0;
  char32_t min = 0;
  if ((b0 & 0xE0) == 0xC0) {
    n = 2, cp = b0 & 0x1F, min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    n = 3, cp = b0 & 0x0F, min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    n = 4, cp = b0 & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

bool is_cased(char32_t cp) { return to_upper(cp) != cp || to_lower(cp) != cp; }

// Python's str.isprintable, for the code points templates meet: controls,
// format characters and separators other than the space are escaped by repr.
bool is_printable(char32_t cp) {
  if (cp < 0x20 || (cp >= 0x7F && cp <= 0xA0) || cp == 0xAD) return false;
  if (cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200F) || (cp >= 0x2028 && cp <= 0x202F)) return false;
  if ((cp >= 0x205F && cp <= 0x206F) || cp == 0x3000 || cp == 0xFEFF) return false;
  if (cp >= 0xD800 && cp <= 0xDFFF) return false;
  return true;
}

std::vector<size_t> find_all(std::string_view s, std::string_view needle) {
  std::vector<size_t> at;
  for (size_t pos = s.find(needle); pos != std::string_view::npos; pos = s.find(needle, pos + needle.size())) {
    at.push_back(pos);
  }
  return at;
}

}  // namespace

std::vector<char32_t> decode(std::string_view s) {
  std::vector<char32_t> cps;
  cps.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    char32_t cp = 0;
    const size_t n = sequence_length(s, i, cp);
    if (n == 0) {
      cps.push_back(kEscapedByte | static_cast<unsigned char>(s[i]));
      ++i;
    } else {
      cps.push_back(cp);
      i += n;
    }
  }
  return cps;
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp >= (kEscapedByte | 0x80) && cp <= (kEscapedByte | 0xFF)) {
    out += static_cast<char>(cp & 0xFF);
  } else if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::string encode(const std::vector<char32_t>& cps, size_t begin, size_t end) {
  std::string out;
  out.reserve(end - begin);
  for (size_t i = begin; i < end; ++i) append_utf8(out, cps[i]);
  return out;
}

size_t length(std::string_view s) {
  size_t n = 0;
  for (size_t i = 0; i < s.size(); ++n) {
    char32_t cp = 0;
    const size_t len = sequence_length(s, i, cp);
    i += len == 0 ? 1 : len;
  }
  return n;
}

bool is_ascii(std::string_view s) {
  for (char c : s) {
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  }
  return true;
}

bool is_space(char32_t cp) {
  return (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x20) || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
         (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F ||
         cp == 0x3000;
}

bool is_alpha(char32_t cp) {
  if (cp < 0x80) return (cp | 0x20) >= 'a' && (cp | 0x20) <= 'z';
  return is_cased(cp) || (cp >= 0x3040 && cp <= 0x30FF) || (cp >= 0x4E00 && cp <= 0x9FFF) ||
         (cp >= 0xAC00 && cp <= 0xD7A3);
}

bool is_digit(char32_t cp) { return cp >= '0' && cp <= '9'; }

char32_t to_upper(char32_t cp) {
  if (cp >= 'a' && cp <= 'z') return cp - 32;
  if (cp < 0xB5) return cp;
  if (cp == 0xB5) return 0x39C;
  if ((cp >= 0xE0 && cp <= 0xFE && cp != 0xF7)) return cp - 32;
  if (cp == 0xFF) return 0x178;
  if (cp >= 0x100 && cp <= 0x17F && cp != 0x130 && cp != 0x131 && cp != 0x138 && cp != 0x149 && cp != 0x17F) {
    // Latin Extended-A pairs: even upper, odd lower, except 0x139..0x148 and 0x179..0x17E.
    const bool odd_upper = (cp >= 0x139 && cp <= 0x148) || (cp >= 0x179 && cp <= 0x17E);
    return ((cp & 1) == (odd_upper ? 0u : 1u)) ? cp - 1 : cp;
  }
  if (cp >= 0x3B1 && cp <= 0x3C9 && cp != 0x3C2) return cp - 32;
  if (cp == 0x3C2) return 0x3A3;
  if (cp >= 0x430 && cp <= 0x44F) return cp - 32;
  if (cp >= 0x450 && cp <= 0x45F) return cp - 80;
  return cp;
}

char32_t to_lower(char32_t cp) {
  if (cp >= 'A' && cp <= 'Z') return cp + 32;
  if (cp < 0xC0) return cp;
  if (cp <= 0xDE && cp != 0xD7) return cp + 32;
  if (cp == 0x178) return 0xFF;
  if (cp >= 0x100 && cp <= 0x17F && cp != 0x130 && cp != 0x131 && cp != 0x138 && cp != 0x149 && cp != 0x17F) {
    const bool odd_upper = (cp >= 0x139 && cp <= 0x148) || (cp >= 0x179 && cp <= 0x17E);
    return ((cp & 1) == (odd_upper ? 1u : 0u)) ? cp + 1 : cp;
  }
  if (cp >= 0x391 && cp <= 0x3A9 && cp != 0x3A2) return cp + 32;
  if (cp >= 0x410 && cp <= 0x42F) return cp + 32;
  if (cp >= 0x400 && cp <= 0x40F) return cp + 80;
  return cp;
}

std::string change_case(std::string_view s, Case to) {
  std::string out;
  out.reserve(s.size());
  bool previous_cased = false;
  bool first = true;
  for (char32_t cp : decode(s)) {
    char32_t mapped = cp;
    switch (to) {
      case Case::Upper: mapped = to_upper(cp); break;
      case Case::Lower: mapped = to_lower(cp); break;
      case Case::Capitalize: mapped = first ? to_upper(cp) : to_lower(cp); break;
      case Case::Title:
        // Python: a cased letter after an uncased character starts a word.
        mapped = previous_cased ? to_lower(cp) : to_upper(cp);
        previous_cased = is_cased(cp);
        break;
    }
    first = false;
    append_utf8(out, mapped);
  }
  return out;
}

std::string strip(std::string_view s, const std::string* chars, bool left, bool right) {
  const std::vector<char32_t> cps = decode(s);
  const std::vector<char32_t> set = chars ? decode(*chars) : std::vector<char32_t>{};
  auto strippable = [&](char32_t cp) {
    if (!chars) return is_space(cp);
    for (char32_t c : set) {
      if (c == cp) return true;
    }
    return false;
  };
  size_t begin = 0;
  size_t end = cps.size();
  if (left) {
    while (begin < end && strippable(cps[begin])) ++begin;
  }
  if (right) {
    while (end > begin && strippable(cps[end - 1])) --end;
  }
  return encode(cps, begin, end);
}

std::vector<std::string> split(std::string_view s, const std::string* sep, int64_t maxsplit, bool from_right) {
  std::vector<std::string> parts;
  if (sep) {
    std::vector<size_t> at = find_all(s, *sep);
    if (maxsplit >= 0 && static_cast<int64_t>(at.size()) > maxsplit) {
      // rsplit keeps the last separators; a non-overlapping scan from the right
      // finds the same ones as long as the separator does not overlap itself.
      if (from_right) {
        at.erase(at.begin(), at.end() - maxsplit);
      } else {
        at.resize(static_cast<size_t>(maxsplit));
      }
    }
    size_t begin = 0;
    for (size_t pos : at) {
      parts.emplace_back(s.substr(begin, pos - begin));
      begin = pos + sep->size();
    }
    parts.emplace_back(s.substr(begin));
    return parts;
  }
  // Runs of white space separate words; leading and trailing runs give nothing.
  const std::vector<char32_t> cps = decode(s);
  std::vector<std::pair<size_t, size_t>> words;
  for (size_t i = 0; i < cps.size();) {
    while (i < cps.size() && is_space(cps[i])) ++i;
    if (i == cps.size()) break;
    size_t j = i;
    while (j < cps.size() && !is_space(cps[j])) ++j;
    words.emplace_back(i, j);
    i = j;
  }
  if (maxsplit >= 0 && static_cast<int64_t>(words.size()) > maxsplit + 1) {
    // The remainder keeps its white space, up to the string's far end.
    const auto keep = static_cast<size_t>(maxsplit);
    if (from_right) {
      const size_t cut = words.size() - keep;
      std::pair<size_t, size_t> rest{0, words[cut - 1].second};
      words.erase(words.begin(), words.begin() + static_cast<std::ptrdiff_t>(cut));
      words.insert(words.begin(), rest);
    } else {
      std::pair<size_t, size_t> rest{words[keep].first, cps.size()};
      words.resize(keep);
      words.push_back(rest);
    }
  }
  for (const auto& w : words) parts.push_back(encode(cps, w.first, w.second));
  return parts;
}

std::vector<std::string> split_lines(std::string_view s) {
  std::vector<std::string> lines;
  const std::vector<char32_t> cps = decode(s);
  size_t begin = 0;
  for (size_t i = 0; i < cps.size(); ++i) {
    const char32_t c = cps[i];
    const bool end = c == '\n' || c == '\r' || c == '\v' || c == '\f' || (c >= 0x1C && c <= 0x1E) || c == 0x85 ||
                     c == 0x2028 || c == 0x2029;
    if (!end) continue;
    lines.push_back(encode(cps, begin, i));
    if (c == '\r' && i + 1 < cps.size() && cps[i + 1] == '\n') ++i;
    begin = i + 1;
  }
  if (begin < cps.size()) lines.push_back(encode(cps, begin, cps.size()));
  return lines;
}

std::string replace(std::string_view s, std::string_view from, std::string_view to, int64_t count) {
  std::string out;
  if (from.empty()) {
    // Python inserts `to` before every code point and at the end.
    const std::vector<char32_t> cps = decode(s);
    int64_t done = 0;
    for (char32_t cp : cps) {
      if (count < 0 || done < count) out += to, ++done;
      append_utf8(out, cp);
    }
    if (count < 0 || done < count) out += to;
    return out;
  }
  size_t begin = 0;
  int64_t done = 0;
  for (size_t pos = s.find(from); pos != std::string_view::npos && (count < 0 || done < count);
       pos = s.find(from, begin), ++done) {
    out.append(s.substr(begin, pos - begin));
    out.append(to);
    begin = pos + from.size();
  }
  out.append(s.substr(begin));
  return out;
}

std::string float_repr(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[40];
  // The fewest significant digits that read back exactly.
  int precision = 1;
  for (; precision < 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*e", precision - 1, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  std::snprintf(buf, sizeof buf, "%.*e", precision - 1, v);
  // buf: [-]d[.ddd]e(+|-)XX
  std::string s(buf);
  const size_t e = s.find('e');
  const int exponent = std::atoi(s.c_str() + e + 1);
  std::string digits;
  for (size_t i = 0; i < e; ++i) {
    if (s[i] >= '0' && s[i] <= '9') digits += s[i];
  }
  std::string out = v < 0 || (v == 0 && std::signbit(v)) ? "-" : "";
  if (exponent >= -4 && exponent < 16) {
    if (exponent < 0) {
      out += "0." + std::string(static_cast<size_t>(-exponent - 1), '0') + digits;
    } else if (static_cast<size_t>(exponent) + 1 >= digits.size()) {
      out += digits + std::string(static_cast<size_t>(exponent) + 1 - digits.size(), '0') + ".0";
    } else {
      out += digits.substr(0, static_cast<size_t>(exponent) + 1) + "." + digits.substr(static_cast<size_t>(exponent) + 1);
    }
    return out;
  }
  out += digits.substr(0, 1);
  if (digits.size() > 1) out += "." + digits.substr(1);
  char exp_text[16];
  std::snprintf(exp_text, sizeof exp_text, "e%c%02d", exponent < 0 ? '-' : '+', exponent < 0 ? -exponent : exponent);
  return out + exp_text;
}

std::string string_repr(std::string_view s) {
  const bool has_single = s.find('\'') != std::string_view::npos;
  const bool has_double = s.find('"') != std::string_view::npos;
  const char quote = has_single && !has_double ? '"' : '\'';
  std::string out(1, quote);
  for (char32_t cp : decode(s)) {
    if (cp == static_cast<char32_t>(quote) || cp == '\\') {
      out += '\\';
      out += static_cast<char>(cp);
    } else if (cp == '\n') {
      out += "\\n";
    } else if (cp == '\r') {
      out += "\\r";
    } else if (cp == '\t') {
      out += "\\t";
    } else if (!is_printable(cp)) {
      char buf[12];
      const auto code = static_cast<unsigned>(cp);
      if (code < 0x100) {
        std::snprintf(buf, sizeof buf, "\\x%02x", code);
      } else if (code < 0x10000) {
        std::snprintf(buf, sizeof buf, "\\u%04x", code);
      } else {
        std::snprintf(buf, sizeof buf, "\\U%08x", code);
      }
      out += buf;
    } else {
      append_utf8(out, cp);
    }
  }
  out += quote;
  return out;
}

}  // namespace peak::jinja::text
