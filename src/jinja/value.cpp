#include "jinja/value.h"

#include <cmath>

#include "jinja/error.h"
#include "jinja/text.h"

namespace peak::jinja {
namespace {

// int == float as Python compares them: exactly, not through a rounded double.
bool int_equals_float(int64_t i, double f) {
  if (!std::isfinite(f) || f != std::floor(f) || f < -9.3e18 || f > 9.3e18) return false;
  return static_cast<double>(i) == f && static_cast<int64_t>(f) == i;
}

[[noreturn]] void wrong_kind(const Value& v, const char* wanted) {
  throw TemplateError(std::string("expected ") + wanted + ", got " + v.type_name());
}

// Whether two keys are one dict key: Python's ==, except that NaN is NaN (in
// Python a NaN finds only itself, by identity). Without that, keys that never
// match would pile up in one hash bucket.
bool same_key(const Value& a, const Value& b) {
  if (a.is_float() && b.is_float() && std::isnan(a.as_double()) && std::isnan(b.as_double())) return true;
  if (a.is_tuple() && b.is_tuple()) {
    const auto& x = a.items();
    const auto& y = b.items();
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i) {
      if (!same_key(x[i], y[i])) return false;
    }
    return true;
  }
  return a == b;
}

// std::hash of an integer is the integer itself: mixed (splitmix64's
// finalizer) so that keys such as multiples of the bucket count spread out.
size_t mix(uint64_t h) {
  h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
  h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
  return static_cast<size_t>(h ^ (h >> 31));
}

// Python's hash of a dict key: keys same_key finds equal (1, 1.0 and True;
// a string and its string_view) hash alike.
size_t key_hash(const Value& key) {
  switch (key.kind()) {
    case Value::Kind::None: return 0x6e6f6e65;
    case Value::Kind::Bool:
    case Value::Kind::Int: return mix(static_cast<uint64_t>(key.as_int()));
    case Value::Kind::Float: {
      // A whole float hashes as the int it equals.
      const double f = key.as_double();
      if (f == std::floor(f) && f >= -9223372036854775808.0 && f < 9223372036854775808.0) {
        return mix(static_cast<uint64_t>(static_cast<int64_t>(f)));
      }
      return std::isnan(f) ? 0x6e616e : std::hash<double>{}(f);
    }
    case Value::Kind::String: return std::hash<std::string_view>{}(key.as_string());
    case Value::Kind::List: {
      size_t h = 0x7475706c;
      for (const Value& item : key.items()) h = h * 1000003 ^ key_hash(item);
      return h;
    }
    default: return 0;
  }
}

// Why `key` cannot be a dict key, or "" when it can.
std::string unhashable(const Value& key) {
  switch (key.kind()) {
    case Value::Kind::None:
    case Value::Kind::Bool:
    case Value::Kind::Int:
    case Value::Kind::Float:
    case Value::Kind::String: return "";
    case Value::Kind::List:
      if (key.is_tuple()) {
        for (const Value& item : key.items()) {
          std::string why = unhashable(item);
          if (!why.empty()) return why;
        }
        return "";
      }
      return "unhashable type: 'list'";
    case Value::Kind::Dict: return "unhashable type: 'dict'";
    case Value::Kind::Undefined: {
      const std::string& what = key.undefined_message();
      return "a dict key cannot be undefined" + (what.empty() ? "" : " (" + what + ")");
    }
    default: return std::string("a dict key cannot be of type '") + key.type_name() + "'";
  }
}

}  // namespace

Value Value::undefined(std::string message) {
  Value v;
  v.storage_ = UndefinedMessage{std::make_shared<const std::string>(std::move(message))};
  return v;
}

Value Value::list(std::vector<Value> items) {
  Value v;
  v.depth_ = 1;
  for (const Value& item : items) v.nest(item);
  v.storage_ = std::make_shared<std::vector<Value>>(std::move(items));
  return v;
}

Value Value::tuple(std::vector<Value> items) {
  Value v = list(std::move(items));
  v.tuple_ = true;
  return v;
}

Value Value::dict() {
  Value v;
  v.depth_ = 1;
  v.storage_ = std::make_shared<Dict>();
  return v;
}

void Value::nest(const Value& child) {
  holds_object_ = holds_object_ || holds_object(child);
  if (child.depth_ + 1 > depth_) {
    if (child.depth_ + 1 > kMaxNesting) {
      throw TemplateError("lists and dicts nested deeper than " + std::to_string(kMaxNesting));
    }
    depth_ = static_cast<uint16_t>(child.depth_ + 1);
  }
}

bool holds_object(const Value& v) { return v.is_object() || v.holds_object_; }

Value Value::object(std::string type_name) {
  Value v;
  v.storage_ = std::make_shared<Object>(Object{std::move(type_name), {}});
  return v;
}

Value Value::function(std::string name, std::function<Value(Interpreter&, CallArgs&)> call) {
  Value v;
  v.storage_ = std::make_shared<const Function>(Function{std::move(name), std::move(call)});
  return v;
}

bool Value::as_bool() const {
  if (!is_bool()) wrong_kind(*this, "a boolean");
  return std::get<bool>(storage_);
}

int64_t Value::as_int() const {
  if (is_bool()) return std::get<bool>(storage_) ? 1 : 0;
  if (!is_int()) wrong_kind(*this, "an integer");
  return std::get<int64_t>(storage_);
}

double Value::as_double() const {
  if (is_float()) return std::get<double>(storage_);
  if (!is_number()) wrong_kind(*this, "a number");
  return static_cast<double>(as_int());
}

const std::string& Value::as_string() const {
  if (!is_string()) wrong_kind(*this, "a string");
  return *std::get<std::shared_ptr<const std::string>>(storage_);
}

const std::vector<Value>& Value::items() const {
  if (!is_list()) wrong_kind(*this, "a list");
  return *std::get<std::shared_ptr<std::vector<Value>>>(storage_);
}

const Dict& Value::as_dict() const {
  if (!is_dict()) wrong_kind(*this, "a dict");
  return *std::get<std::shared_ptr<Dict>>(storage_);
}

Object& Value::as_object() const {
  if (!is_object()) wrong_kind(*this, "an object");
  return *std::get<std::shared_ptr<Object>>(storage_);
}

const Function& Value::as_function() const {
  if (!is_function()) wrong_kind(*this, "a function");
  return *std::get<std::shared_ptr<const Function>>(storage_);
}

const std::string& Value::undefined_message() const {
  static const std::string none;
  if (!is_undefined()) return none;
  const auto& message = std::get<UndefinedMessage>(storage_).message;
  return message ? *message : none;
}

Value& Value::push_back(Value v) {
  auto& list = std::get<std::shared_ptr<std::vector<Value>>>(storage_);  // throws bad_variant_access on misuse
  nest(v);
  if (list.use_count() > 1) list = std::make_shared<std::vector<Value>>(*list);
  list->push_back(std::move(v));
  return *this;
}

Value& Value::set(Value key, Value v) {
  if (is_object()) {
    if (holds_object(v)) throw TemplateError("a namespace cannot hold a namespace or loop object");
    as_object().attributes.set(std::move(key), std::move(v));
    return *this;
  }
  auto& dict = std::get<std::shared_ptr<Dict>>(storage_);
  check_key(key);
  nest(v);
  if (dict.use_count() > 1) dict = std::make_shared<Dict>(*dict);
  dict->set(std::move(key), std::move(v));
  return *this;
}

bool Value::truthy() const {
  switch (kind()) {
    case Kind::Undefined:
    case Kind::None: return false;
    case Kind::Bool: return std::get<bool>(storage_);
    case Kind::Int: return std::get<int64_t>(storage_) != 0;
    case Kind::Float: return std::get<double>(storage_) != 0.0;
    case Kind::String: return !as_string().empty();
    case Kind::List: return !items().empty();
    case Kind::Dict: return !as_dict().empty();
    case Kind::Object:
    case Kind::Function: return true;
  }
  return false;
}

std::string Value::str(size_t max_bytes) const {
  if (is_undefined()) return "";
  if (is_string()) return as_string();
  return repr(max_bytes);
}

std::string Value::repr(size_t max_bytes) const {
  std::string out;
  repr_into(out, max_bytes);
  return out;
}

void Value::repr_into(std::string& out, size_t max_bytes) const {
  if (out.size() > max_bytes) {
    throw TemplateError("printing a value of more than " + std::to_string(max_bytes) + " bytes");
  }
  switch (kind()) {
    case Kind::Undefined: return;
    case Kind::None: out += "None"; return;
    case Kind::Bool: out += std::get<bool>(storage_) ? "True" : "False"; return;
    case Kind::Int: out += std::to_string(std::get<int64_t>(storage_)); return;
    case Kind::Float: out += text::float_repr(std::get<double>(storage_)); return;
    case Kind::String: out += text::string_repr(as_string()); return;
    case Kind::List: {
      out += tuple_ ? "(" : "[";
      const auto& list = items();
      for (size_t i = 0; i < list.size(); ++i) {
        if (i) out += ", ";
        list[i].repr_into(out, max_bytes);
      }
      if (tuple_ && list.size() == 1) out += ",";
      out += tuple_ ? ")" : "]";
      return;
    }
    case Kind::Dict:
    case Kind::Object: {
      const Dict& d = is_dict() ? as_dict() : as_object().attributes;
      if (is_object()) {
        if (as_object().type_name != "Namespace") {
          out += "<" + as_object().type_name + ">";
          return;
        }
        out += "<Namespace ";
      }
      out += "{";
      bool first = true;
      for (const auto& [key, value] : d.entries()) {
        if (!first) out += ", ";
        first = false;
        key.repr_into(out, max_bytes);
        out += ": ";
        value.repr_into(out, max_bytes);
      }
      out += is_object() ? "}>" : "}";
      return;
    }
    case Kind::Function: out += "<function " + as_function().name + ">"; return;
  }
}

bool Value::operator==(const Value& other) const {
  if (is_number() && other.is_number()) {
    if (is_float() && other.is_float()) return as_double() == other.as_double();
    if (is_float()) return int_equals_float(other.as_int(), as_double());
    if (other.is_float()) return int_equals_float(as_int(), other.as_double());
    return as_int() == other.as_int();
  }
  if (kind() != other.kind()) return false;
  switch (kind()) {
    case Kind::Undefined:
    case Kind::None: return true;
    case Kind::String: return as_string() == other.as_string();
    case Kind::List: {
      if (tuple_ != other.tuple_) return false;
      const auto& a = items();
      const auto& b = other.items();
      if (a.size() != b.size()) return false;
      for (size_t i = 0; i < a.size(); ++i) {
        if (a[i] != b[i]) return false;
      }
      return true;
    }
    case Kind::Dict: {
      const Dict& a = as_dict();
      const Dict& b = other.as_dict();
      if (a.size() != b.size()) return false;
      for (const auto& [key, value] : a.entries()) {
        const Value* found = b.find_key(key);
        if (!found || *found != value) return false;
      }
      return true;
    }
    case Kind::Object: return &as_object() == &other.as_object();
    case Kind::Function: return &as_function() == &other.as_function();
    default: return false;
  }
}

const char* Value::type_name() const {
  switch (kind()) {
    case Kind::Undefined: return "Undefined";
    case Kind::None: return "NoneType";
    case Kind::Bool: return "bool";
    case Kind::Int: return "int";
    case Kind::Float: return "float";
    case Kind::String: return "str";
    case Kind::List: return tuple_ ? "tuple" : "list";
    case Kind::Dict: return "dict";
    case Kind::Object: return "object";
    case Kind::Function: return "function";
  }
  return "?";
}

void check_key(const Value& key) {
  const std::string why = unhashable(key);
  if (!why.empty()) throw TemplateError(why);
}

template <typename Matches, typename Hash>
const Value* Dict::lookup(Matches matches, Hash hash) const {
  if (entries_.size() < kIndexedFrom) {
    for (const auto& entry : entries_) {
      if (matches(entry.first)) return &entry.second;
    }
    return nullptr;
  }
  const auto [first, last] = index_.equal_range(hash());
  for (auto it = first; it != last; ++it) {
    if (matches(entries_[it->second].first)) return &entries_[it->second].second;
  }
  return nullptr;
}

const Value* Dict::find(std::string_view key) const {
  return lookup([key](const Value& k) { return k.is_string() && k.as_string() == key; },
                [key] { return std::hash<std::string_view>{}(key); });
}

Value* Dict::find(std::string_view key) { return const_cast<Value*>(static_cast<const Dict*>(this)->find(key)); }

const Value* Dict::find_key(const Value& key) const {
  if (key.is_string()) return find(key.as_string());
  if (!unhashable(key).empty()) return nullptr;
  return lookup([&key](const Value& k) { return same_key(k, key); }, [&key] { return key_hash(key); });
}

void Dict::set(Value key, Value value) {
  check_key(key);
  if (const Value* existing = find_key(key)) {
    *const_cast<Value*>(existing) = std::move(value);
    return;
  }
  entries_.emplace_back(std::move(key), std::move(value));
  if (entries_.size() == kIndexedFrom) {
    for (size_t i = 0; i < entries_.size(); ++i) index_.emplace(key_hash(entries_[i].first), i);
  } else if (entries_.size() > kIndexedFrom) {
    index_.emplace(key_hash(entries_.back().first), entries_.size() - 1);
  }
}

void Dict::clear() {
  entries_.clear();
  index_.clear();
}

}  // namespace peak::jinja
