#include "jinja/lexer.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "jinja/error.h"
#include "jinja/text.h"

namespace peak::jinja {
namespace {

bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || (c >= '0' && c <= '9'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Python's white space, by code point, at s[i]: its length in bytes or 0.
size_t space_at(std::string_view s, size_t i) {
  const auto b = static_cast<unsigned char>(s[i]);
  if (b < 0x80) return text::is_space(b) ? 1 : 0;
  size_t n = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 1;
  if (i + n > s.size()) return 0;
  const std::vector<char32_t> cps = text::decode(s.substr(i, n));
  return cps.size() == 1 && text::is_space(cps[0]) ? n : 0;
}

std::string_view rstrip_space(std::string_view s) {
  // Scan forward: the end of the last non-space character.
  size_t keep = 0;
  for (size_t i = 0; i < s.size();) {
    const size_t n = space_at(s, i);
    if (n) {
      i += n;
    } else {
      ++i;
      while (i < s.size() && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) ++i;
      keep = i;
    }
  }
  return s.substr(0, keep);
}

bool all_space(std::string_view s) {
  if (s.empty()) return false;
  for (size_t i = 0; i < s.size();) {
    const size_t n = space_at(s, i);
    if (!n) return false;
    i += n;
  }
  return true;
}

// Python's str escapes ("unicode-escape"), which Jinja2 applies to literals.
std::string unescape(std::string_view body, int line, int column) {
  std::string out;
  for (size_t i = 0; i < body.size(); ++i) {
    const char c = body[i];
    if (c != '\\' || i + 1 == body.size()) {
      out += c;
      continue;
    }
    const char e = body[++i];
    auto hex = [&](size_t digits) {
      char32_t v = 0;
      for (size_t k = 1; k <= digits; ++k) {
        const char h = i + k < body.size() ? body[i + k] : '\0';
        int d = -1;
        if (h >= '0' && h <= '9') d = h - '0';
        else if (h >= 'a' && h <= 'f') d = h - 'a' + 10;
        else if (h >= 'A' && h <= 'F') d = h - 'A' + 10;
        if (d < 0) throw TemplateError("truncated \\" + std::string(1, e) + " escape in a string", line, column);
        v = v * 16 + static_cast<char32_t>(d);
      }
      i += digits;
      if (v > 0x10FFFF) throw TemplateError("escape beyond U+10FFFF in a string", line, column);
      if (v >= 0xD800 && v <= 0xDFFF) throw TemplateError("surrogate escape in a string", line, column);
      text::append_utf8(out, v);
    };
    switch (e) {
      case '\n': break;  // a line continuation
      case '\\': out += '\\'; break;
      case '\'': out += '\''; break;
      case '"': out += '"'; break;
      case 'a': out += '\a'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'v': out += '\v'; break;
      case 'x': hex(2); break;
      case 'u': hex(4); break;
      case 'U': hex(8); break;
      case 'N': throw TemplateError("\\N{...} escapes are not supported", line, column);
      default:
        if (e >= '0' && e <= '7') {
          char32_t v = static_cast<char32_t>(e - '0');
          for (int k = 0; k < 2 && i + 1 < body.size() && body[i + 1] >= '0' && body[i + 1] <= '7'; ++k) {
            v = v * 8 + static_cast<char32_t>(body[++i] - '0');
          }
          text::append_utf8(out, v);
        } else if (static_cast<unsigned char>(e) >= 0x80) {
          // Jinja2 escapes non-ASCII text before decoding: "\é" reads as "\xe9".
          size_t n = 1;
          while (i + n < body.size() && (static_cast<unsigned char>(body[i + n]) & 0xC0) == 0x80) ++n;
          const std::vector<char32_t> cps = text::decode(body.substr(i, n));
          char buf[16];
          const auto cp = static_cast<unsigned>(cps[0]);
          std::snprintf(buf, sizeof buf, cp < 0x100 ? "\\x%02x" : cp < 0x10000 ? "\\u%04x" : "\\U%08x", cp);
          out += buf;
          i += n - 1;
        } else {
          out += '\\';  // unknown escapes stay as written
          out += e;
        }
    }
  }
  return out;
}

class Lexer {
 public:
  explicit Lexer(std::string_view source) {
    // \r\n and \r become \n; one trailing newline is dropped (keep_trailing_newline off).
    src_.reserve(source.size());
    for (size_t i = 0; i < source.size(); ++i) {
      if (source[i] == '\r') {
        src_ += '\n';
        if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
      } else {
        src_ += source[i];
      }
    }
    if (!src_.empty() && src_.back() == '\n') src_.pop_back();
  }

  std::vector<Token> run() {
    bool line_starting = true;
    while (pos_ < src_.size()) {
      const size_t open = find_tag(pos_);
      std::string_view data(src_.data() + pos_, (open == std::string::npos ? src_.size() : open) - pos_);
      if (open == std::string::npos) {
        emit_data(data);
        pos_ = src_.size();
        break;
      }
      const char kind = src_[open + 1];
      const char sign = open + 2 < src_.size() ? src_[open + 2] : '\0';
      if (sign == '-') {
        data = rstrip_space(data);
      } else if (sign != '+' && kind != '{') {
        // lstrip_blocks: only white space between the line start and the tag.
        const size_t line_start = data.rfind('\n') == std::string_view::npos ? 0 : data.rfind('\n') + 1;
        if ((line_start > 0 || line_starting) && all_space(data.substr(line_start))) data = data.substr(0, line_start);
      }
      emit_data(data);
      pos_ = open + 2 + (sign == '-' || sign == '+' ? 1 : 0);
      if (kind == '#') {
        line_starting = comment(open);
      } else if (kind == '%' && raw_begin()) {
        line_starting = raw();
      } else {
        line_starting = tag(kind == '{', open);
      }
    }
    Token end;
    end.type = Token::Type::End;
    position(end, src_.size());
    tokens_.push_back(end);
    return std::move(tokens_);
  }

 private:
  [[noreturn]] void fail(const std::string& message, size_t at) const {
    Token t;
    position(t, at);
    throw TemplateError(message, t.line, t.column);
  }

  void position(Token& t, size_t at) const {
    // Lines are counted incrementally: tokens come in source order (an error may look back).
    if (at < line_pos_) line_pos_ = 0, line_begin_ = 0, line_ = 1;
    while (line_pos_ < at && line_pos_ < src_.size()) {
      if (src_[line_pos_] == '\n') ++line_, line_begin_ = line_pos_ + 1;
      ++line_pos_;
    }
    t.line = line_;
    t.column = static_cast<int>(at - line_begin_) + 1;
  }

  size_t find_tag(size_t from) const {
    for (size_t i = src_.find('{', from); i != std::string::npos && i + 1 < src_.size(); i = src_.find('{', i + 1)) {
      const char c = src_[i + 1];
      if (c == '{' || c == '%' || c == '#') return i;
    }
    return std::string::npos;
  }

  void emit_data(std::string_view data) {
    if (data.empty()) return;
    Token t;
    t.type = Token::Type::Data;
    t.text = std::string(data);
    position(t, static_cast<size_t>(data.data() - src_.data()));
    tokens_.push_back(std::move(t));
  }

  void push(Token::Type type, size_t at, std::string text = {}) {
    Token t;
    t.type = type;
    t.text = std::move(text);
    position(t, at);
    tokens_.push_back(std::move(t));
  }

  size_t skip_space(size_t i) const {
    while (i < src_.size()) {
      const size_t n = space_at(src_, i);
      if (!n) break;
      i += n;
    }
    return i;
  }

  // After "%}" or "#}": trim_blocks drops one newline; after "-%}" all white
  // space goes. Returns whether what was consumed ends a line.
  bool close(size_t end_of_marker, char sign) {
    size_t i = end_of_marker;
    if (sign == '-') {
      i = skip_space(i);
    } else if (sign != '+' && i < src_.size() && src_[i] == '\n') {
      ++i;
    }
    pos_ = i;
    return i > 0 && src_[i - 1] == '\n';
  }

  bool comment(size_t tag_start) {
    const size_t body = pos_;
    const size_t end = src_.find("#}", body);
    if (end == std::string::npos) fail("Missing end of comment tag", tag_start);
    const char sign = end > body ? src_[end - 1] : '\0';
    return close(end + 2, sign == '-' || sign == '+' ? sign : '\0');
  }

  // At "{% raw %}" (pos_ after "{%" and its sign)? Consumes it.
  bool raw_begin() {
    size_t i = skip_space(pos_);
    if (src_.compare(i, 3, "raw") != 0 || (i + 3 < src_.size() && is_name_char(src_[i + 3]))) return false;
    i = skip_space(i + 3);
    if (src_.compare(i, 3, "-%}") == 0) {
      pos_ = skip_space(i + 3);
    } else if (src_.compare(i, 2, "%}") == 0) {
      pos_ = i + 2;
    } else {
      return false;
    }
    return true;
  }

  bool raw() {
    const bool line_starting = pos_ > 0 && src_[pos_ - 1] == '\n';
    for (size_t open = src_.find("{%", pos_); open != std::string::npos; open = src_.find("{%", open + 1)) {
      const char sign = open + 2 < src_.size() ? src_[open + 2] : '\0';
      size_t i = skip_space(open + 2 + (sign == '-' || sign == '+' ? 1 : 0));
      if (src_.compare(i, 6, "endraw") != 0) continue;
      i = skip_space(i + 6);
      char end_sign = '\0';
      if (src_.compare(i, 3, "-%}") == 0 || src_.compare(i, 3, "+%}") == 0) {
        end_sign = src_[i];
        ++i;
      } else if (src_.compare(i, 2, "%}") != 0) {
        continue;
      }
      std::string_view data(src_.data() + pos_, open - pos_);
      if (sign == '-') {
        data = rstrip_space(data);
      } else if (sign != '+') {
        const size_t line_start = data.rfind('\n') == std::string_view::npos ? 0 : data.rfind('\n') + 1;
        if ((line_start > 0 || line_starting) && all_space(data.substr(line_start))) data = data.substr(0, line_start);
      }
      emit_data(data);
      return close(i + 2, end_sign);
    }
    fail("Missing end of raw directive", pos_);
  }

  // The inside of {{ ... }} or {% ... %}: expression tokens up to the closing
  // marker, which counts only where (), [] and {} are balanced.
  bool tag(bool variable, size_t open) {
    push(variable ? Token::Type::VarBegin : Token::Type::BlockBegin, open);
    std::vector<char> balance;
    while (true) {
      pos_ = skip_space(pos_);
      if (pos_ >= src_.size()) {
        fail(variable ? "unexpected end of template, expected '}}'" : "unexpected end of template, expected '%}'", open);
      }
      if (balance.empty()) {
        const char* marker = variable ? "}}" : "%}";
        const char c = src_[pos_];
        char sign = '\0';
        bool closing = src_.compare(pos_, 2, marker) == 0;
        if (!closing && (c == '-' || (!variable && c == '+')) && src_.compare(pos_ + 1, 2, marker) == 0) {
          closing = true;
          sign = c;
        }
        if (closing) {
          push(variable ? Token::Type::VarEnd : Token::Type::BlockEnd, pos_);
          const size_t end = pos_ + (sign ? 3 : 2);
          if (variable) {
            pos_ = sign == '-' ? skip_space(end) : end;
            return src_[pos_ - 1] == '\n';
          }
          return close(end, sign);
        }
      }
      expression_token(balance);
    }
  }

  void expression_token(std::vector<char>& balance) {
    const size_t start = pos_;
    const char c = src_[pos_];
    if (is_digit(c)) return number();
    if (is_name_start(c)) {
      while (pos_ < src_.size() && is_name_char(src_[pos_])) ++pos_;
      return push(Token::Type::Name, start, src_.substr(start, pos_ - start));
    }
    if (c == '\'' || c == '"') return string_literal();
    static const char* const kTwo[] = {"//", "**", "==", "!=", ">=", "<="};
    for (const char* op : kTwo) {
      if (src_.compare(pos_, 2, op) == 0) {
        pos_ += 2;
        return push(Token::Type::Operator, start, op);
      }
    }
    if (std::string_view("+-/*%~[](){}><=.:|,;").find(c) == std::string_view::npos) {
      fail(std::string("unexpected char '") + c + "'", start);
    }
    if (c == '(' || c == '[' || c == '{') {
      balance.push_back(c == '(' ? ')' : c == '[' ? ']' : '}');
    } else if (c == ')' || c == ']' || c == '}') {
      if (balance.empty()) fail(std::string("unexpected '") + c + "'", start);
      if (balance.back() != c) fail(std::string("unexpected '") + c + "', expected '" + balance.back() + "'", start);
      balance.pop_back();
    }
    ++pos_;
    push(Token::Type::Operator, start, std::string(1, c));
  }

  void string_literal() {
    const size_t start = pos_;
    const char quote = src_[pos_++];
    while (pos_ < src_.size() && src_[pos_] != quote) pos_ += src_[pos_] == '\\' ? 2 : 1;
    if (pos_ >= src_.size()) fail("unterminated string", start);
    ++pos_;
    Token t;
    position(t, start);
    t.type = Token::Type::String;
    t.text = unescape(std::string_view(src_).substr(start + 1, pos_ - start - 2), t.line, t.column);
    tokens_.push_back(std::move(t));
  }

  // Digits with single "_" between them, as Python writes them.
  size_t digits(size_t i, int base) const {
    auto ok = [&](char c) {
      if (base == 16) return is_digit(c) || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
      return c >= '0' && c < static_cast<char>('0' + base);
    };
    while (i < src_.size() && (ok(src_[i]) || (src_[i] == '_' && i + 1 < src_.size() && ok(src_[i + 1])))) ++i;
    return i;
  }

  void number() {
    const size_t start = pos_;
    Token t;
    position(t, start);
    auto clean = [&](size_t from, size_t to) {
      std::string s;
      for (size_t i = from; i < to; ++i) {
        if (src_[i] != '_') s += src_[i];
      }
      return s;
    };
    const char prefix = pos_ + 1 < src_.size() && src_[pos_] == '0' ? static_cast<char>(src_[pos_ + 1] | 0x20) : '\0';
    const int base = prefix == 'x' ? 16 : prefix == 'o' ? 8 : prefix == 'b' ? 2 : 10;
    if (base != 10 && pos_ + 2 < src_.size() && digits(pos_ + 2, base) > pos_ + 2) {
      pos_ = digits(pos_ + 2, base);
      return integer(t, clean(start + 2, pos_), base);
    }
    // A float needs a fraction or an exponent; otherwise an integer.
    size_t i = digits(pos_, 10);
    size_t end = i;
    bool is_float = false;
    if (i + 1 < src_.size() && src_[i] == '.' && is_digit(src_[i + 1])) end = digits(i + 1, 10), is_float = true;
    if (end < src_.size() && (src_[end] | 0x20) == 'e') {
      size_t e = end + 1;
      if (e < src_.size() && (src_[e] == '+' || src_[e] == '-')) ++e;
      if (e < src_.size() && is_digit(src_[e])) end = digits(e, 10), is_float = true;
    }
    if (is_float) {
      pos_ = end;
      t.type = Token::Type::Float;
      t.number = std::strtod(clean(start, end).c_str(), nullptr);
      tokens_.push_back(std::move(t));
      return;
    }
    // "0" followed by digits is "0" and then another number, as in Jinja2.
    pos_ = src_[start] == '0' ? start + 1 : i;
    while (src_[start] == '0' && pos_ + 1 < src_.size() && (src_[pos_] == '0' || (src_[pos_] == '_' && src_[pos_ + 1] == '0'))) ++pos_;
    integer(t, clean(start, pos_), 10);
  }

  void integer(Token& t, const std::string& digits_text, int base) {
    errno = 0;
    const unsigned long long v = std::strtoull(digits_text.c_str(), nullptr, base);
    if (errno == ERANGE || v > static_cast<unsigned long long>(INT64_MAX)) {
      throw TemplateError("integer literal too large", t.line, t.column);
    }
    t.type = Token::Type::Integer;
    t.integer = static_cast<int64_t>(v);
    tokens_.push_back(std::move(t));
  }

  std::string src_;
  size_t pos_ = 0;
  std::vector<Token> tokens_;
  mutable size_t line_pos_ = 0;
  mutable size_t line_begin_ = 0;
  mutable int line_ = 1;
};

}  // namespace

std::vector<Token> tokenize(std::string_view source) { return Lexer(source).run(); }

}  // namespace peak::jinja
