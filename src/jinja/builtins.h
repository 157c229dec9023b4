// What templates can call: Jinja2's filters and tests, the methods of str,
// list and dict that chat templates use, and the global functions (range,
// namespace, dict, raise_exception, strftime_now). Each follows Jinja2 3.1 and
// Python; anything not here is refused with TemplateError naming it.
#pragma once

#include <initializer_list>
#include <string>

#include "jinja/value.h"

namespace peak::jinja {

class Interpreter;

// Binds call arguments to parameter names, as Python does: positionals first,
// then keywords; too many, unknown or repeated ones throw TemplateError.
class Arguments {
 public:
  Arguments(const std::string& function, const CallArgs& args, std::initializer_list<const char*> names);
  // The argument bound to parameter i, or `fallback` when the call left it out.
  Value get(size_t i, const Value& fallback = Value()) const;
  bool has(size_t i) const { return bound_[i] != nullptr; }

 private:
  std::vector<const Value*> bound_;
};

Value apply_filter(Interpreter& in, const std::string& name, const Value& subject, const CallArgs& args);
bool apply_test(Interpreter& in, const std::string& name, const Value& subject, const CallArgs& args);
// The method `name` of a string, list or dict bound to it, or undefined.
Value method(const Value& receiver, const std::string& name);
Dict make_globals();
// Python's "text % values" with %s %r %d %i %f %x and %%, widths and precisions.
Value printf_format(Interpreter& in, const std::string& format, const Value& values);

}  // namespace peak::jinja
