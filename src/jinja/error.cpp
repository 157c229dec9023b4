#include "jinja/error.h"

namespace peak::jinja {
namespace {

std::string with_position(const std::string& message, int line, int column) {
  if (line <= 0) return message;
  std::string where = "line " + std::to_string(line);
  if (column > 0) where += ", column " + std::to_string(column);
  return where + ": " + message;
}

}  // namespace

TemplateError::TemplateError(const std::string& message, int line, int column)
    : std::runtime_error(with_position(message, line, column)), message_(message), line_(line), column_(column) {}

TemplateError::TemplateError(const std::string& what, const std::string& message, int line)
    : std::runtime_error(what), message_(message), line_(line), column_(0) {}

TemplateError TemplateError::in_context(const std::string& context) const {
  TemplateError error(context + what(), message_, line_);
  error.column_ = column_;
  return error;
}

TemplateRaised::TemplateRaised(const std::string& message, int line) : TemplateError(message, message, line) {}

JsonError::JsonError(const std::string& message, size_t offset)
    : std::runtime_error("JSON: " + message + " at byte " + std::to_string(offset)), offset_(offset) {}

}  // namespace peak::jinja
