// Pythonic calls, as LFM2 writes them: a Python list of calls with keyword
// arguments whose values are Python literals,
//   [get_weather(city="Zürich", n=2), get_time(zone='Asia/Tokyo')]
// read into JSON: strings ('...' or "..." with backslash escapes), numbers,
// True, False, None, lists and dicts. Nesting is bounded as JSON's is.
#include <string>

#include "chat/tool_call_sections.h"

namespace peak::chat {
namespace {

constexpr size_t kMaxDepth = 64;

class PythonReader {
 public:
  explicit PythonReader(std::string_view text) : text_(text) {}

  bool calls(std::vector<SectionCall>* out) {
    if (!eat('[')) return false;
    if (eat(']')) return false;  // no calls
    do {
      out->emplace_back();
      if (!call(&out->back())) return false;
    } while (eat(','));
    return eat(']') && at_end();
  }

 private:
  bool call(SectionCall* out) {
    out->name = name();
    if (out->name.empty() || !eat('(')) return false;
    json::Value arguments = json::Value::object();
    if (!eat(')')) {
      do {
        if (peek() == ')') break;  // a trailing comma
        const std::string key = name();
        json::Value value;
        if (key.empty() || !eat('=') || !literal(0, &value)) return false;
        arguments.set(key, std::move(value));
      } while (eat(','));
      if (!eat(')')) return false;
    }
    out->arguments = json::write(arguments);
    return true;
  }

  // A function or argument name: letters, digits, '_', '.' and '-' (as tool names have them).
  std::string name() {
    skip_space();
    const size_t start = at_;
    while (at_ < text_.size() && (is_word(text_[at_]) || text_[at_] == '.' || text_[at_] == '-')) ++at_;
    return std::string(text_.substr(start, at_ - start));
  }

  bool literal(size_t depth, json::Value* out) {
    if (depth > kMaxDepth) return false;
    const char c = peek();
    if (c == '"' || c == '\'') return string(out);
    if (c == '[' || c == '(') return list(depth, out);
    if (c == '{') return dict(depth, out);
    const std::string word = token();
    if (word == "True" || word == "False") {
      *out = json::Value(word == "True");
      return true;
    }
    if (word == "None") {
      *out = json::Value();
      return true;
    }
    std::string error;
    return !word.empty() && json::parse(word, out, &error) && out->is_number();
  }

  bool list(size_t depth, json::Value* out) {
    const char close = peek() == '[' ? ']' : ')';
    ++at_;
    *out = json::Value::array();
    while (!eat(close)) {
      json::Value item;
      if (!literal(depth + 1, &item)) return false;
      out->push(std::move(item));
      if (!eat(',') && peek() != close) return false;
    }
    return true;
  }

  bool dict(size_t depth, json::Value* out) {
    ++at_;
    *out = json::Value::object();
    while (!eat('}')) {
      json::Value key, value;
      if (!string(&key) || !eat(':') || !literal(depth + 1, &value)) return false;
      out->set(key.as_string(), std::move(value));
      if (!eat(',') && peek() != '}') return false;
    }
    return true;
  }

  bool string(json::Value* out) {
    const char quote = peek();
    if (quote != '"' && quote != '\'') return false;
    std::string value;
    for (++at_; at_ < text_.size() && text_[at_] != quote; ++at_) {
      if (text_[at_] != '\\' || at_ + 1 == text_.size()) {
        value += text_[at_];
        continue;
      }
      const char next = text_[++at_];
      const char mapped = escaped(next);
      if (mapped == '\0') value += '\\';  // as Python keeps an unknown escape
      value += mapped == '\0' ? next : mapped;
    }
    if (at_ == text_.size() || !json::valid_utf8(value)) return false;
    ++at_;
    *out = json::Value(std::move(value));
    return true;
  }

  static char escaped(char c) {
    switch (c) {
      case 'n': return '\n';
      case 't': return '\t';
      case 'r': return '\r';
      case '\\':
      case '\'':
      case '"': return c;
      default: return '\0';
    }
  }

  // A bare word: a number or True, False, None.
  std::string token() {
    skip_space();
    const size_t start = at_;
    while (at_ < text_.size() && (is_word(text_[at_]) || text_[at_] == '.' || text_[at_] == '-' || text_[at_] == '+')) {
      ++at_;
    }
    return std::string(text_.substr(start, at_ - start));
  }

  static bool is_word(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  }
  void skip_space() {
    while (at_ < text_.size() &&
           (text_[at_] == ' ' || text_[at_] == '\n' || text_[at_] == '\t' || text_[at_] == '\r')) {
      ++at_;
    }
  }
  char peek() {
    skip_space();
    return at_ < text_.size() ? text_[at_] : '\0';
  }
  bool eat(char c) {
    if (peek() != c) return false;
    ++at_;
    return true;
  }
  bool at_end() { return peek() == '\0' && at_ == text_.size(); }

  std::string_view text_;
  size_t at_ = 0;
};

}  // namespace

bool read_python_calls(std::string_view body, std::vector<SectionCall>* calls) {
  return PythonReader(body).calls(calls);
}

}  // namespace peak::chat
