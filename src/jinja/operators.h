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
// Comparisons count a step per element they visit (and per 64 bytes of
// string), so comparing big or deeply shared lists cannot run unbounded.
// op: == != < <= > >= in, not in
bool compare(Interpreter& in, const std::string& op, const Value& a, const Value& b);
bool equal(Interpreter& in, const Value& a, const Value& b);
// Python's a < b; throws for values without an order.
bool less(Interpreter& in, const Value& a, const Value& b);
// Python's a < b for two numbers (bool, int or float).
bool numeric_less(const Value& a, const Value& b);
bool contains(Interpreter& in, const Value& container, const Value& item);
// obj[key] as Jinja2's sandbox reads it: undefined when absent.
Value subscript(Interpreter& in, const Value& object, const Value& key);
Value slice(const Value& object, std::optional<int64_t> start, std::optional<int64_t> stop, std::optional<int64_t> step);
// What `for x in v` walks: list items, dict keys, string characters; nothing
// for undefined. Throws for values that are not iterable.
std::vector<Value> iterate(const Value& v);
// 'name' for a message, cut short when long: messages stay small whatever a
// template looks up.
std::string quoted(const std::string& name);
// A short description of a value for a message: its repr if it is a short
// scalar, else its type.
std::string describe(const Value& v);
// Throws TemplateError saying what is undefined.
[[noreturn]] void fail_undefined(const Value& v);

}  // namespace peak::jinja
