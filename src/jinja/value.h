// The dynamic value templates compute with, modelled on the Python objects
// Jinja2 sees: undefined, none, bool, integer (int64), float (double), string
// (UTF-8), list (and tuple), dict (insertion-ordered; keys none, bool, int,
// float, str or tuples of them, 1 == 1.0 == True as in Python), objects
// with attributes (namespace(), the loop variable) and functions.
//
// Lists and dicts built in C++ have value semantics: push_back and set copy a
// shared payload before changing it. Templates cannot change lists or dicts
// (Hugging Face renders in Jinja2's immutable sandbox); only objects (namespace)
// are shared and changed in place, as in Jinja2.
//
// So that printing, comparing, serialising and freeing a value can recurse
// without running out of stack, lists and dicts nest at most kMaxNesting deep
// (building a deeper one throws TemplateError) and an object's attributes never
// hold objects (which also rules out reference cycles).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

namespace peak::jinja {

class Interpreter;
class Value;
class Dict;
struct Object;

constexpr int kMaxNesting = 256;

// The arguments of a call from a template: positional, then keyword.
struct CallArgs {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keywords;
};

struct Function {
  std::string name;
  std::function<Value(Interpreter&, CallArgs&)> call;
};

class Value {
 public:
  // In the order of the alternatives of Storage.
  enum class Kind : uint8_t { Undefined, None, Bool, Int, Float, String, List, Dict, Object, Function };

  Value() = default;  // undefined
  Value(std::nullptr_t) : storage_(nullptr) {}
  Value(bool b) : storage_(b) {}
  template <typename T, typename = std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>>>
  Value(T i) : storage_(static_cast<int64_t>(i)) {}
  Value(double f) : storage_(f) {}
  Value(std::string s) : storage_(std::make_shared<const std::string>(std::move(s))) {}
  Value(std::string_view s) : Value(std::string(s)) {}
  Value(const char* s) : Value(std::string(s)) {}

  static Value none() { return Value(nullptr); }
  // `message`: what an error about using it says, e.g. "'x' is undefined".
  static Value undefined(std::string message);
  static Value list(std::vector<Value> items = {});
  static Value tuple(std::vector<Value> items);
  static Value dict();
  static Value object(std::string type_name);  // e.g. "Namespace": attributes can be set
  static Value function(std::string name, std::function<Value(Interpreter&, CallArgs&)> call);

  Kind kind() const { return static_cast<Kind>(storage_.index()); }
  bool is_undefined() const { return kind() == Kind::Undefined; }
  bool is_none() const { return kind() == Kind::None; }
  bool is_bool() const { return kind() == Kind::Bool; }
  bool is_int() const { return kind() == Kind::Int; }
  bool is_float() const { return kind() == Kind::Float; }
  bool is_number() const { return is_int() || is_float() || is_bool(); }
  bool is_string() const { return kind() == Kind::String; }
  bool is_list() const { return kind() == Kind::List; }
  bool is_tuple() const { return is_list() && tuple_; }
  bool is_dict() const { return kind() == Kind::Dict; }
  bool is_object() const { return kind() == Kind::Object; }
  bool is_function() const { return kind() == Kind::Function; }

  // Each throws TemplateError when the value is of another kind.
  bool as_bool() const;
  int64_t as_int() const;    // bool counts as 0 / 1, as in Python
  double as_double() const;  // int, float or bool
  const std::string& as_string() const;
  const std::vector<Value>& items() const;  // list or tuple
  const Dict& as_dict() const;
  Object& as_object() const;
  const Function& as_function() const;
  const std::string& undefined_message() const;

  // Builders: value semantics (a shared payload is copied first). push_back on
  // a list, set on a dict or an object; both return *this for chaining. Setting
  // an object's attribute to a value that is or holds an object, or a dict key
  // that cannot be one (see Dict::set), throws.
  Value& push_back(Value v);
  Value& set(Value key, Value v);

  // Python semantics. str() and repr() throw TemplateError rather than build
  // more than max_bytes (a list can hold the same big list many times over).
  bool truthy() const;
  std::string str(size_t max_bytes = SIZE_MAX) const;   // str(): what {{ v }} prints
  std::string repr(size_t max_bytes = SIZE_MAX) const;  // repr(): how a value prints inside a list or dict
  // Python's ==, for values built in C++; the interpreter compares with
  // equal() (operators.h), which counts its work.
  bool operator==(const Value& other) const;
  bool operator!=(const Value& other) const { return !(*this == other); }
  const char* type_name() const;  // Python's name of the type, for messages

 private:
  struct UndefinedMessage {
    std::shared_ptr<const std::string> message;
  };
  using Storage = std::variant<UndefinedMessage, std::nullptr_t, bool, int64_t, double, std::shared_ptr<const std::string>,
                               std::shared_ptr<std::vector<Value>>, std::shared_ptr<Dict>, std::shared_ptr<Object>,
                               std::shared_ptr<const Function>>;
  void nest(const Value& child);  // counts child in depth_ and holds_object_, throws beyond kMaxNesting
  void repr_into(std::string& out, size_t max_bytes) const;
  friend bool holds_object(const Value& v);

  Storage storage_;
  bool tuple_ = false;
  bool holds_object_ = false;  // lists and dicts: an object is inside
  uint16_t depth_ = 0;         // lists and dicts: 1 + the deepest list or dict inside
};

// Whether v is or holds (in a list or dict) an object.
bool holds_object(const Value& v);

// Throws TemplateError unless `key` can be a dict key: none, bool, int, float,
// str, or a tuple of those (Python's "unhashable type: 'list'"; undefined, a
// namespace or a function is refused, though Jinja2 would take them).
void check_key(const Value& key);

// Insertion-ordered map from keys to values; setting an existing key (an equal
// one: 1, 1.0 and True are the same key, and so are NaNs) keeps its place and
// first spelling, as Python's dict does. Small dicts (most messages, every
// scope) are searched in order; larger ones get a hash index.
class Dict {
 public:
  // find: a string key; find_key: any key (none when it cannot be one).
  const Value* find(std::string_view key) const;
  Value* find(std::string_view key);
  const Value* find_key(const Value& key) const;
  void set(Value key, Value value);  // check_key(key) first
  void clear();
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  const std::vector<std::pair<Value, Value>>& entries() const { return entries_; }

 private:
  static constexpr size_t kIndexedFrom = 9;
  // The value of the first key `matches` accepts; `hash` gives the key's
  // key_hash, asked only of an indexed dict.
  template <typename Matches, typename Hash>
  const Value* lookup(Matches matches, Hash hash) const;

  std::vector<std::pair<Value, Value>> entries_;
  std::unordered_multimap<size_t, size_t> index_;  // key_hash -> entry, from kIndexedFrom entries on
};

// An object whose attributes a template reads with `.name`; a namespace's can
// also be set with {% set ns.name = ... %}.
struct Object {
  std::string type_name;
  Dict attributes;
};

}  // namespace peak::jinja
