#include "json/json.h"

#include <charconv>
#include <cmath>
#include <unordered_map>

namespace peak::json {

namespace {

// The length of the valid UTF-8 sequence starting at s[i] (1..4), or 0 when
// the bytes there are not one (RFC 3629: no overlong forms, no surrogates,
// nothing past U+10FFFF).
size_t utf8_sequence_length(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  if (c < 0x80) return 1;
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;  // overlong
    if (c == 0xED) hi = 0x9F;  // surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;  // overlong
    if (c == 0xF4) hi = 0x8F;  // past U+10FFFF
  } else {
    return 0;
  }
  if (s.size() - i < n) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k)
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  return n;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
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

bool is_int64_double(double d) {
  return std::isfinite(d) && d == std::floor(d) && d >= -9223372036854775808.0 && d < 9223372036854775808.0;
}

}  // namespace

const char* type_name(Type type) {
  switch (type) {
    case Type::Null: return "null";
    case Type::Bool: return "a boolean";
    case Type::Number: return "a number";
    case Type::String: return "a string";
    case Type::Array: return "an array";
    case Type::Object: return "an object";
  }
  return "?";
}

Value::Value(double d) : type_(Type::Number), number_(d) {
  if (is_int64_double(d)) {
    is_int_ = true;
    int_ = static_cast<int64_t>(d);
  }
}

Value Value::integer(int64_t i) {
  Value v(Type::Number);
  v.number_ = static_cast<double>(i);
  v.is_int_ = true;
  v.int_ = i;
  return v;
}

const Value* Value::find(std::string_view key) const {
  for (const Member& m : members_)
    if (m.first == key) return &m.second;
  return nullptr;
}

Value& Value::set(std::string_view key, Value value) {
  for (Member& m : members_) {
    if (m.first == key) {
      m.second = std::move(value);
      return *this;
    }
  }
  members_.emplace_back(std::string(key), std::move(value));
  return *this;
}

Value& Value::push(Value value) {
  items_.push_back(std::move(value));
  return *this;
}

bool Value::operator==(const Value& o) const {
  if (type_ != o.type_) return false;
  switch (type_) {
    case Type::Null: return true;
    case Type::Bool: return bool_ == o.bool_;
    case Type::Number:
      return is_int_ == o.is_int_ && (is_int_ ? int_ == o.int_ : true) &&
             std::signbit(number_) == std::signbit(o.number_) && number_ == o.number_;
    case Type::String: return string_ == o.string_;
    case Type::Array: return items_ == o.items_;
    case Type::Object: return members_ == o.members_;
  }
  return false;
}

// Recursive descent over the RFC 8259 grammar; pos_ is the byte offset errors name.
class Parser {
 public:
  Parser(std::string_view text, const ParseLimits& limits) : s_(text), limits_(limits) {}

  bool run(Value* out, std::string* error) {
    if (s_.size() > limits_.max_bytes) {
      fail("the text is " + std::to_string(s_.size()) + " bytes, more than the limit of " +
           std::to_string(limits_.max_bytes));
      pos_ = 0;
    } else {
      skip_space();
      if (value(*out, 0)) {
        skip_space();
        if (pos_ < s_.size()) fail("unexpected text after the value");
      }
    }
    if (error_.empty()) return true;
    if (error) *error = "at byte " + std::to_string(pos_) + ": " + error_;
    return false;
  }

 private:
  bool fail(std::string message) {
    if (error_.empty()) error_ = std::move(message);
    return false;
  }
  bool at_end() const { return pos_ >= s_.size(); }
  char peek() const { return s_[pos_]; }

  void skip_space() {
    while (!at_end() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r')) ++pos_;
  }

  bool literal(std::string_view word) {
    if (s_.substr(pos_, word.size()) != word) return fail("invalid literal (expected '" + std::string(word) + "')");
    pos_ += word.size();
    return true;
  }

  bool value(Value& out, size_t depth) {
    if (at_end()) return fail("unexpected end of text, expected a value");
    switch (peek()) {
      case '{': return object(out, depth + 1);
      case '[': return array(out, depth + 1);
      case '"': out = Value(Type::String); return string(out.string_);
      case 't': out = Value(true); return literal("true");
      case 'f': out = Value(false); return literal("false");
      case 'n': out = Value(); return literal("null");
      default:
        if (peek() == '-' || (peek() >= '0' && peek() <= '9')) return number(out);
        return fail("unexpected character, expected a value");
    }
  }

  bool enter(size_t depth) {
    if (depth > limits_.max_depth) return fail("nesting deeper than " + std::to_string(limits_.max_depth) + " levels");
    return true;
  }

  bool array(Value& out, size_t depth) {
    if (!enter(depth)) return false;
    out = Value(Type::Array);
    ++pos_;  // '['
    skip_space();
    if (!at_end() && peek() == ']') {
      ++pos_;
      return true;
    }
    for (;;) {
      skip_space();
      out.items_.emplace_back();
      if (!value(out.items_.back(), depth)) return false;
      skip_space();
      if (at_end()) return fail("unexpected end of text, expected ',' or ']'");
      if (peek() == ']') {
        ++pos_;
        return true;
      }
      if (peek() != ',') return fail("expected ',' or ']'");
      ++pos_;
    }
  }

  bool object(Value& out, size_t depth) {
    if (!enter(depth)) return false;
    out = Value(Type::Object);
    ++pos_;  // '{'
    skip_space();
    if (!at_end() && peek() == '}') {
      ++pos_;
      return true;
    }
    // Key -> member index, so that duplicates stay linear in large objects.
    std::unordered_map<std::string, size_t> index;
    for (;;) {
      skip_space();
      if (at_end() || peek() != '"')
        return fail(at_end() ? "unexpected end of text, expected a key" : "expected a string key");
      std::string key;
      if (!string(key)) return false;
      skip_space();
      if (at_end() || peek() != ':') return fail("expected ':'");
      ++pos_;
      skip_space();
      Value member;
      if (!value(member, depth)) return false;
      const auto [it, inserted] = index.emplace(key, out.members_.size());
      if (inserted) {
        out.members_.emplace_back(std::move(key), std::move(member));
      } else {
        out.members_[it->second].second = std::move(member);  // the last duplicate wins
      }
      skip_space();
      if (at_end()) return fail("unexpected end of text, expected ',' or '}'");
      if (peek() == '}') {
        ++pos_;
        return true;
      }
      if (peek() != ',') return fail("expected ',' or '}'");
      ++pos_;
    }
  }

  bool hex4(uint32_t* out) {
    if (s_.size() - pos_ < 4) return fail("a \\u escape needs four hex digits");
    uint32_t v = 0;
    for (size_t k = 0; k < 4; ++k) {
      const char c = s_[pos_ + k];
      v <<= 4;
      if (c >= '0' && c <= '9')
        v |= static_cast<uint32_t>(c - '0');
      else if (c >= 'a' && c <= 'f')
        v |= static_cast<uint32_t>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        v |= static_cast<uint32_t>(c - 'A' + 10);
      else
        return fail("a \\u escape needs four hex digits");
    }
    pos_ += 4;
    *out = v;
    return true;
  }

  bool string(std::string& out) {
    ++pos_;  // '"'
    for (;;) {
      if (at_end()) return fail("unterminated string");
      const unsigned char c = static_cast<unsigned char>(peek());
      if (c == '"') {
        ++pos_;
        return true;
      }
      if (c < 0x20) return fail("control character in a string (it must be escaped)");
      if (c == '\\') {
        if (!escape(out)) return false;
        continue;
      }
      const size_t n = utf8_sequence_length(s_, pos_);
      if (n == 0) return fail("invalid UTF-8");
      out.append(s_.data() + pos_, n);
      pos_ += n;
    }
  }

  bool escape(std::string& out) {
    ++pos_;  // '\'
    if (at_end()) return fail("unterminated string");
    const char c = peek();
    ++pos_;
    switch (c) {
      case '"': out += '"'; return true;
      case '\\': out += '\\'; return true;
      case '/': out += '/'; return true;
      case 'b': out += '\b'; return true;
      case 'f': out += '\f'; return true;
      case 'n': out += '\n'; return true;
      case 'r': out += '\r'; return true;
      case 't': out += '\t'; return true;
      case 'u': break;
      default: --pos_; return fail("invalid escape");
    }
    uint32_t cp = 0;
    if (!hex4(&cp)) return false;
    if (cp >= 0xDC00 && cp <= 0xDFFF) return fail("lone low surrogate in a \\u escape");
    if (cp >= 0xD800 && cp <= 0xDBFF) {
      if (s_.substr(pos_, 2) != "\\u") return fail("high surrogate not followed by a low one");
      pos_ += 2;
      uint32_t low = 0;
      if (!hex4(&low)) return false;
      if (low < 0xDC00 || low > 0xDFFF) return fail("high surrogate not followed by a low one");
      cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
    }
    append_utf8(out, cp);
    return true;
  }

  bool digits() {
    const size_t start = pos_;
    while (!at_end() && peek() >= '0' && peek() <= '9') ++pos_;
    return pos_ > start;
  }

  bool number(Value& out) {
    const size_t start = pos_;
    bool integral = true;
    if (peek() == '-') ++pos_;
    if (at_end() || peek() < '0' || peek() > '9') return fail("expected a digit");
    if (peek() == '0') {
      ++pos_;
      if (!at_end() && peek() >= '0' && peek() <= '9') return fail("leading zero in a number");
    } else {
      digits();
    }
    if (!at_end() && peek() == '.') {
      ++pos_;
      integral = false;
      if (!digits()) return fail("expected a digit after '.'");
    }
    if (!at_end() && (peek() == 'e' || peek() == 'E')) {
      ++pos_;
      integral = false;
      if (!at_end() && (peek() == '+' || peek() == '-')) ++pos_;
      if (!digits()) return fail("expected a digit in the exponent");
    }
    const char* first = s_.data() + start;
    const char* last = s_.data() + pos_;
    double d = 0;
    const auto [end, ec] = std::from_chars(first, last, d);
    if (ec == std::errc::result_out_of_range) {
      // Underflow rounds to zero (as every parser does); overflow is refused.
      bool nonzero_mantissa = false;
      for (const char* p = first; p < last && *p != 'e' && *p != 'E'; ++p) nonzero_mantissa |= (*p >= '1' && *p <= '9');
      const char* e = first;
      while (e < last && *e != 'e' && *e != 'E') ++e;
      const bool negative_exponent = e + 1 < last && e[1] == '-';
      if (nonzero_mantissa && !negative_exponent) {
        pos_ = start;
        return fail("number out of range");
      }
      d = *first == '-' ? -0.0 : 0.0;
    } else if (ec != std::errc() || end != last) {
      pos_ = start;
      return fail("invalid number");
    }
    out = Value(d);
    if (integral) {
      // The exact integer when it fits (2^53 + 1 is not a double); else the
      // double's view stays (-2^63 - 1 rounds to -2^63, an int64).
      int64_t i = 0;
      const auto [iend, iec] = std::from_chars(first, last, i);
      if (iec == std::errc() && iend == last) {
        out.is_int_ = true;
        out.int_ = i;
      }
    }
    return true;
  }

  std::string_view s_;
  const ParseLimits& limits_;
  size_t pos_ = 0;
  std::string error_;
};

bool parse(std::string_view text, Value* out, std::string* error, const ParseLimits& limits) {
  Value v;
  if (!Parser(text, limits).run(&v, error)) return false;
  *out = std::move(v);
  return true;
}

bool valid_utf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const size_t n = utf8_sequence_length(text, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

void write_string(std::string& out, std::string_view text) {
  static const char kHex[] = "0123456789abcdef";
  out += '"';
  size_t i = 0;
  while (i < text.size()) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
      ++i;
    } else if (c < 0x20) {
      switch (c) {
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        default:
          out += "\\u00";
          out += kHex[c >> 4];
          out += kHex[c & 0xF];
      }
      ++i;
    } else {
      const size_t n = utf8_sequence_length(text, i);
      if (n == 0) {
        out += "\xEF\xBF\xBD";  // U+FFFD for a byte that starts no valid sequence
        ++i;
      } else {
        out.append(text.data() + i, n);
        i += n;
      }
    }
  }
  out += '"';
}

namespace {

void write_value(std::string& out, const Value& v) {
  switch (v.type()) {
    case Type::Null: out += "null"; return;
    case Type::Bool: out += v.as_bool() ? "true" : "false"; return;
    case Type::Number: {
      if (v.is_integer()) {
        if (v.as_int() == 0 && std::signbit(v.as_double())) {
          out += "-0";
        } else {
          out += std::to_string(v.as_int());
        }
        return;
      }
      if (!std::isfinite(v.as_double())) {
        out += "null";
        return;
      }
      char buf[32];  // the shortest text that reads back as the same double
      const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v.as_double());
      out.append(buf, ec == std::errc() ? static_cast<size_t>(end - buf) : 0);
      return;
    }
    case Type::String: write_string(out, v.as_string()); return;
    case Type::Array: {
      out += '[';
      bool first = true;
      for (const Value& item : v.items()) {
        if (!first) out += ',';
        first = false;
        write_value(out, item);
      }
      out += ']';
      return;
    }
    case Type::Object: {
      out += '{';
      bool first = true;
      for (const Value::Member& m : v.members()) {
        if (!first) out += ',';
        first = false;
        write_string(out, m.first);
        out += ':';
        write_value(out, m.second);
      }
      out += '}';
      return;
    }
  }
}

}  // namespace

std::string write(const Value& value) {
  std::string out;
  write_value(out, value);
  return out;
}

}  // namespace peak::json
