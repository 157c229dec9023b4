// Splits template source into tokens as Jinja2's lexer does with Hugging
// Face's settings: trim_blocks (the first newline after a block or comment tag
// is dropped), lstrip_blocks (white space from the start of a line up to a block
// or comment tag is dropped), "-" and "+" whitespace control, raw blocks, one
// trailing newline of the template dropped, \r\n and \r read as \n.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace peak::jinja {

struct Token {
  enum class Type : uint8_t {
    Data,        // text between tags
    VarBegin,    // {{
    VarEnd,      // }}
    BlockBegin,  // {%
    BlockEnd,    // %}
    Name,
    String,      // text: the value, escapes resolved
    Integer,
    Float,
    Operator,    // text: the operator, e.g. "//", "(", "|"
    End,
  };
  Type type = Type::End;
  std::string text;
  int64_t integer = 0;
  double number = 0;
  int line = 1;
  int column = 1;
};

// Throws TemplateError naming line and column.
std::vector<Token> tokenize(std::string_view source);

}  // namespace peak::jinja
