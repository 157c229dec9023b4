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

Value& Value::set(std::string key, Value v) {
  if (is_object()) {
    if (holds_object(v)) throw TemplateError("a namespace cannot hold a namespace or loop object");
    as_object().attributes.set(std::move(key), std::move(v));
    return *this;
  }
  auto& dict = std::get<std::shared_ptr<Dict>>(storage_);
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
        out += text::string_repr(key) + ": ";
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
        const Value* found = b.find(key);
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

const Value* Dict::find(std::string_view key) const {
  if (entries_.size() < kIndexedFrom) {
    for (const auto& entry : entries_) {
      if (entry.first == key) return &entry.second;
    }
    return nullptr;
  }
  const auto it = index_.find(std::string(key));
  return it == index_.end() ? nullptr : &entries_[it->second].second;
}

Value* Dict::find(std::string_view key) { return const_cast<Value*>(static_cast<const Dict*>(this)->find(key)); }

void Dict::set(std::string key, Value value) {
  if (Value* existing = find(key)) {
    *existing = std::move(value);
    return;
  }
  entries_.emplace_back(std::move(key), std::move(value));
  if (entries_.size() == kIndexedFrom) {
    for (size_t i = 0; i < entries_.size(); ++i) index_.emplace(entries_[i].first, i);
  } else if (entries_.size() > kIndexedFrom) {
    index_.emplace(entries_.back().first, entries_.size() - 1);
  }
}

void Dict::clear() {
  entries_.clear();
  index_.clear();
}

}  // namespace peak::jinja
