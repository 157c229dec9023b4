#include "jinja/json.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "jinja/error.h"
#include "jinja/operators.h"
#include "jinja/text.h"

namespace peak::jinja {
namespace {

class JsonParser {
 public:
  explicit JsonParser(std::string_view text) : text_(text) {}

  Value document() {
    Value v = value(0);
    skip_space();
    if (pos_ != text_.size()) fail("unexpected text after the value");
    return v;
  }

 private:
  // Offsets are those Python's json module reports for the same text.
  [[noreturn]] void fail(const std::string& message) const { throw JsonError(message, pos_); }
  [[noreturn]] void fail_at(const std::string& message, size_t at) const { throw JsonError(message, at); }

  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }

  bool consume(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  void expect_word(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) fail("invalid literal");
    pos_ += word.size();
  }

  Value value(int depth) {
    skip_space();
    if (pos_ == text_.size()) fail("unexpected end of the text");
    const char c = text_[pos_];
    if (c == '{' || c == '[') {
      if (depth >= kMaxJsonDepth) fail("nesting deeper than " + std::to_string(kMaxJsonDepth));
      return c == '{' ? object(depth + 1) : array(depth + 1);
    }
    if (c == '"') return Value(string());
    if (c == 't') return expect_word("true"), Value(true);
    if (c == 'f') return expect_word("false"), Value(false);
    if (c == 'n') return expect_word("null"), Value::none();
    const bool digit_next = pos_ + 1 < text_.size() && text_[pos_ + 1] >= '0' && text_[pos_ + 1] <= '9';
    if ((c == '-' && digit_next) || (c >= '0' && c <= '9')) return number();
    fail("expecting a value");
  }

  Value object(int depth) {
    ++pos_;
    Value v = Value::dict();
    if (consume('}')) return v;
    do {
      skip_space();
      if (pos_ == text_.size() || text_[pos_] != '"') fail("expected a string key");
      std::string key = string();
      if (!consume(':')) fail("expected ':'");
      Value item = value(depth);
      v.set(std::move(key), std::move(item));
    } while (consume(','));
    if (!consume('}')) fail("expected ',' or '}'");
    return v;
  }

  Value array(int depth) {
    ++pos_;
    std::vector<Value> items;
    if (consume(']')) return Value::list();
    do {
      items.push_back(value(depth));
    } while (consume(','));
    if (!consume(']')) fail("expected ',' or ']'");
    return Value::list(std::move(items));
  }

  unsigned hex4() {
    if (pos_ + 4 > text_.size()) fail("truncated \\u escape");
    unsigned v = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = text_[pos_++];
      v <<= 4;
      if (c >= '0' && c <= '9') v |= static_cast<unsigned>(c - '0');
      else if (c >= 'a' && c <= 'f') v |= static_cast<unsigned>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') v |= static_cast<unsigned>(c - 'A' + 10);
      else fail("invalid \\u escape");
    }
    return v;
  }

  std::string string() {
    const size_t start = pos_++;  // the opening quote
    std::string out;
    while (true) {
      if (pos_ >= text_.size()) fail_at("unterminated string", start);
      const auto c = static_cast<unsigned char>(text_[pos_]);
      if (c == '"') break;
      if (c < 0x20) fail("control character in a string");
      if (c != '\\') {
        out += static_cast<char>(c);
        ++pos_;
        continue;
      }
      const size_t escape = pos_;
      if (++pos_ >= text_.size()) fail_at("unterminated string", start);
      const char e = text_[pos_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          char32_t cp = hex4();
          // A lone surrogate cannot be UTF-8 (Python keeps it; this refuses it).
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (text_.substr(pos_, 2) != "\\u") fail_at("unpaired surrogate", escape);
            pos_ += 2;
            const unsigned low = hex4();
            if (low < 0xDC00 || low > 0xDFFF) fail_at("unpaired surrogate", escape);
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            fail_at("unpaired surrogate", escape);
          }
          text::append_utf8(out, cp);
          break;
        }
        default: fail_at("invalid escape", escape);
      }
    }
    ++pos_;  // the closing quote
    // The text between the quotes must be UTF-8: a decoded escaped byte means it was not.
    for (char32_t cp : text::decode(out)) {
      if (cp >= 0xDC80 && cp <= 0xDCFF) throw JsonError("invalid UTF-8 in a string", start);
    }
    return out;
  }

  Value number() {
    const size_t start = pos_;
    if (text_[pos_] == '-') ++pos_;
    auto digits = [&] {
      const size_t from = pos_;
      while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') ++pos_;
      if (pos_ == from) fail("expected a digit");
    };
    if (pos_ < text_.size() && text_[pos_] == '0') {
      ++pos_;
    } else {
      digits();
    }
    bool integral = true;
    // A fraction or exponent without digits is not part of the number (then extra text).
    auto digit_at = [&](size_t i) { return i < text_.size() && text_[i] >= '0' && text_[i] <= '9'; };
    if (pos_ < text_.size() && text_[pos_] == '.' && digit_at(pos_ + 1)) {
      ++pos_, integral = false;
      digits();
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      const size_t sign = pos_ + 1 < text_.size() && (text_[pos_ + 1] == '+' || text_[pos_ + 1] == '-') ? 1 : 0;
      if (digit_at(pos_ + 1 + sign)) {
        pos_ += 1 + sign, integral = false;
        digits();
      }
    }
    const std::string literal(text_.substr(start, pos_ - start));
    if (integral) {
      errno = 0;
      const long long v = std::strtoll(literal.c_str(), nullptr, 10);
      if (errno == ERANGE) throw JsonError("integer out of range", start);
      return Value(static_cast<int64_t>(v));
    }
    return Value(std::strtod(literal.c_str(), nullptr));
  }

  std::string_view text_;
  size_t pos_ = 0;
};

class JsonWriter {
 public:
  JsonWriter(const JsonFormat& format, size_t max_bytes) : format_(format), max_bytes_(max_bytes) {
    item_separator_ = format.item_separator ? *format.item_separator : (format.indent ? "," : ", ");
  }

  void write(const Value& v, size_t level) {
    if (out.size() > max_bytes_) throw TemplateError("tojson: the text exceeds the output limit");
    switch (v.kind()) {
      case Value::Kind::None:
      case Value::Kind::Bool:
      case Value::Kind::Int:
      case Value::Kind::Float: out += scalar(v); break;
      case Value::Kind::String: string(v.as_string()); break;
      case Value::Kind::List: {
        const auto& items = v.items();
        if (items.empty()) {
          out += "[]";
          break;
        }
        out += '[';
        for (size_t i = 0; i < items.size(); ++i) {
          if (i) out += item_separator_;
          newline(level + 1);
          write(items[i], level + 1);
        }
        newline(level);
        out += ']';
        break;
      }
      case Value::Kind::Dict: {
        const auto& entries = v.as_dict().entries();
        if (entries.empty()) {
          out += "{}";
          break;
        }
        std::vector<const std::pair<Value, Value>*> order;
        for (const auto& entry : entries) order.push_back(&entry);
        if (format_.sort_keys) sort_by_key(order);
        out += '{';
        for (size_t i = 0; i < order.size(); ++i) {
          if (i) out += item_separator_;
          newline(level + 1);
          string(key_text(order[i]->first));
          out += format_.key_separator;
          write(order[i]->second, level + 1);
        }
        newline(level);
        out += '}';
        break;
      }
      default: {
        const std::string type = v.is_object() ? v.as_object().type_name : v.type_name();
        throw TemplateError("Object of type " + type + " is not JSON serializable");
      }
    }
  }

  std::string out;

 private:
  // null, true, false, an int, or a float (NaN and Infinity as Python writes them).
  static std::string scalar(const Value& v) {
    if (v.is_none()) return "null";
    if (v.is_bool()) return v.as_bool() ? "true" : "false";
    if (v.is_int()) return std::to_string(v.as_int());
    const double f = v.as_double();
    return std::isnan(f) ? "NaN" : std::isinf(f) ? (f < 0 ? "-Infinity" : "Infinity") : text::float_repr(f);
  }

  // json.dumps writes a key that is not a string as the JSON text of its value:
  // {1: 'a'} becomes {"1": "a"}, {None: 1} {"null": 1}.
  static std::string key_text(const Value& key) {
    if (key.is_string()) return key.as_string();
    if (key.is_none() || key.is_number()) return scalar(key);
    throw TemplateError(std::string("keys must be str, int, float, bool or None, not ") + key.type_name());
  }

  // sorted(d.items()), as sort_keys=True sorts: strings or numbers in Python's
  // order; a mix (or None beside another key) has no order.
  static void sort_by_key(std::vector<const std::pair<Value, Value>*>& order) {
    const Value& first = order.front()->first;
    for (const auto* entry : order) {
      const Value& key = entry->first;
      key_text(key);  // a key json.dumps refuses is the error, as the sort comes to it
      const bool comparable = (key.is_string() && first.is_string()) || (key.is_number() && first.is_number());
      if (!comparable && &key != &first) {
        throw TemplateError(std::string("'<' not supported between instances of '") + key.type_name() + "' and '" +
                            first.type_name() + "'");
      }
    }
    std::stable_sort(order.begin(), order.end(), [](const auto* a, const auto* b) {
      return a->first.is_string() ? a->first.as_string() < b->first.as_string() : numeric_less(a->first, b->first);
    });
  }

  void newline(size_t level) {
    if (!format_.indent) return;
    out += '\n';
    for (size_t i = 0; i < level; ++i) out += *format_.indent;
  }

  void string(const std::string& s) {
    out += '"';
    for (char32_t cp : text::decode(s)) {
      switch (cp) {
        case '"': out += "\\\""; continue;
        case '\\': out += "\\\\"; continue;
        case '\n': out += "\\n"; continue;
        case '\r': out += "\\r"; continue;
        case '\t': out += "\\t"; continue;
        case '\b': out += "\\b"; continue;
        case '\f': out += "\\f"; continue;
        default: break;
      }
      if (cp < 0x20 || (format_.ensure_ascii && cp >= 0x7F)) {
        // Python escapes DEL only with ensure_ascii; above U+FFFF as a surrogate pair.
        char buf[16];
        if (cp >= 0x10000) {
          const char32_t v = cp - 0x10000;
          std::snprintf(buf, sizeof buf, "\\u%04x\\u%04x", static_cast<unsigned>(0xD800 + (v >> 10)),
                        static_cast<unsigned>(0xDC00 + (v & 0x3FF)));
        } else {
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(cp));
        }
        out += buf;
      } else {
        text::append_utf8(out, cp);
      }
    }
    out += '"';
  }

  const JsonFormat& format_;
  size_t max_bytes_;
  std::string item_separator_;
};

}  // namespace

Value parse_json(std::string_view text) { return JsonParser(text).document(); }

std::string to_json(const Value& v, const JsonFormat& format, size_t max_bytes) {
  JsonWriter writer(format, max_bytes);
  writer.write(v, 0);
  if (writer.out.size() > max_bytes) throw TemplateError("tojson: the text exceeds the output limit");
  return std::move(writer.out);
}

}  // namespace peak::jinja
