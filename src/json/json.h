// peak's JSON value, with a strict RFC 8259 parser and a writer, using nothing
// but the standard library: the one bounded type for the parts of peak that read
// or write JSON, such as the requests and responses of `peak serve`. It holds no
// engine state, so it is the one part of the library that tools may use besides
// the C API (cmake/PeakLayerTable.cmake).
//
// Parsing accepts exactly the RFC's grammar (one value, surrounded by optional
// whitespace) and refuses with the byte offset of the first problem
// ("at byte 17: expected ':'"):
//  - text that is not valid UTF-8 (overlong forms, surrogates, code points past
//    U+10FFFF), inside strings and out;
//  - \u escapes that are not four hex digits, and lone surrogates: a high
//    surrogate must be followed by an escaped low one, which together give one
//    code point;
//  - numbers the grammar refuses (leading zeros, "+1", ".5", "1.", NaN) or that
//    do not fit a double (1e400); those that do are kept as a double, plus an
//    exact int64 when the value is integral and in range ("42", "-7", "1e3");
//  - nesting deeper than ParseLimits::max_depth, text longer than max_bytes.
// Duplicate keys in an object: the last one wins (as in JavaScript, Python and
// most parsers); the object keeps the key's first position.
//
// Writing never emits invalid JSON: control characters, '"' and '\' are
// escaped, bytes that are not valid UTF-8 become U+FFFD, non-finite numbers
// become null. Parsing what write() wrote gives an equal value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace peak::json {

enum class Type { Null, Bool, Number, String, Array, Object };

// The name of a type as an error message says it ("a string", "an object").
const char* type_name(Type type);

class Value {
 public:
  using Member = std::pair<std::string, Value>;

  Value() = default;  // null
  Value(std::nullptr_t) {}
  Value(bool b) : type_(Type::Bool), bool_(b) {}
  Value(double d);
  template <typename Int, typename = std::enable_if_t<std::is_integral_v<Int> && !std::is_same_v<Int, bool>>>
  Value(Int i) : Value(Value::integer(static_cast<int64_t>(i))) {}
  Value(std::string s) : type_(Type::String), string_(std::move(s)) {}
  Value(std::string_view s) : type_(Type::String), string_(s) {}
  Value(const char* s) : type_(Type::String), string_(s) {}

  static Value integer(int64_t i);
  static Value array() { return Value(Type::Array); }
  static Value object() { return Value(Type::Object); }

  Type type() const { return type_; }
  bool is_null() const { return type_ == Type::Null; }
  bool is_bool() const { return type_ == Type::Bool; }
  bool is_number() const { return type_ == Type::Number; }
  bool is_string() const { return type_ == Type::String; }
  bool is_array() const { return type_ == Type::Array; }
  bool is_object() const { return type_ == Type::Object; }
  // A number that is integral and fits an int64 exactly.
  bool is_integer() const { return type_ == Type::Number && is_int_; }

  bool as_bool() const { return bool_; }
  double as_double() const { return number_; }
  int64_t as_int() const { return int_; }  // valid when is_integer()
  const std::string& as_string() const { return string_; }
  const std::vector<Value>& items() const { return items_; }
  const std::vector<Member>& members() const { return members_; }

  // Object member `key`, or nullptr (also when this is not an object).
  const Value* find(std::string_view key) const;
  // Sets member `key` (replacing its value when present); returns *this to chain.
  Value& set(std::string_view key, Value value);
  // Appends to an array; returns *this to chain.
  Value& push(Value value);

  // Same type and value (numbers by their double and integer views, objects
  // member by member in order).
  bool operator==(const Value& other) const;
  bool operator!=(const Value& other) const { return !(*this == other); }

 private:
  explicit Value(Type t) : type_(t) {}
  friend class Parser;

  Type type_ = Type::Null;
  bool bool_ = false;
  bool is_int_ = false;
  double number_ = 0;
  int64_t int_ = 0;
  std::string string_;
  std::vector<Value> items_;
  std::vector<Member> members_;
};

struct ParseLimits {
  size_t max_depth = 64;                // arrays and objects nested in each other
  size_t max_bytes = 64 * 1024 * 1024;  // the whole text
};

// Parses `text` into *out. false with a message ("at byte N: ...") in *error.
bool parse(std::string_view text, Value* out, std::string* error, const ParseLimits& limits = {});

// The compact JSON text of `value`.
std::string write(const Value& value);
// Whether `text` is valid UTF-8 (what a string value may hold).
bool valid_utf8(std::string_view text);
// Appends `text` as a JSON string literal, quotes included.
void write_string(std::string& out, std::string_view text);

}  // namespace peak::json
