// Python's operators on Values, as Jinja2 evaluates them: arithmetic with
// int64 (overflow is an error, not a wrap) and double, string and list
// concatenation and repetition, comparison, `in`, indexing, slicing and
// iteration. Type errors throw TemplateError with Python's wording.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "jinja/value.h"

namespace peak::jinja {

class Interpreter;

// op: + - * / // % **
Value binary_operator(Interpreter& in, const std::string& op, const Value& a, const Value& b);
Value negate(const Value& v);
// op: == != < <= > >= in, not in
bool compare(const std::string& op, const Value& a, const Value& b);
// Python's a < b; throws for values without an order.
bool less(const Value& a, const Value& b);
bool contains(const Value& container, const Value& item);
// obj[key] as Jinja2's sandbox reads it: undefined when absent.
Value subscript(Interpreter& in, const Value& object, const Value& key);
Value slice(const Value& object, std::optional<int64_t> start, std::optional<int64_t> stop, std::optional<int64_t> step);
// What `for x in v` walks: list items, dict keys, string characters; nothing
// for undefined. Throws for values that are not iterable.
std::vector<Value> iterate(const Value& v);
// Throws TemplateError saying what is undefined.
[[noreturn]] void fail_undefined(const Value& v);

}  // namespace peak::jinja
