// The errors the Jinja layer throws. A template that cannot be parsed or fails
// while rendering throws TemplateError naming the line (and column when known);
// raise_exception(msg) in a template throws TemplateRaised whose what() is the
// template's own message, so a caller can show it as the model author wrote it.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace peak::jinja {

class TemplateError : public std::runtime_error {
 public:
  // line 0: not known yet (the interpreter adds it on the way out).
  explicit TemplateError(const std::string& message, int line = 0, int column = 0);
  const std::string& message() const { return message_; }  // without the position
  int line() const { return line_; }
  int column() const { return column_; }
  // The same error, its text led by `context` (what a caller knows of the
  // template: "the chat template: line 3: ...").
  TemplateError in_context(const std::string& context) const;

 protected:
  TemplateError(const std::string& what, const std::string& message, int line);

 private:
  std::string message_;
  int line_;
  int column_;
};

class TemplateRaised : public TemplateError {
 public:
  TemplateRaised(const std::string& message, int line);
};

// JSON text that is not valid JSON (or nests deeper than allowed).
class JsonError : public std::runtime_error {
 public:
  JsonError(const std::string& message, size_t offset);
  size_t offset() const { return offset_; }

 private:
  size_t offset_;
};

}  // namespace peak::jinja
