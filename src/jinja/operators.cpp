#include "jinja/operators.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "jinja/builtins.h"
#include "jinja/error.h"
#include "jinja/interpreter.h"
#include "jinja/text.h"

namespace peak::jinja {
namespace {

[[noreturn]] void unsupported(const std::string& op, const Value& a, const Value& b) {
  throw TemplateError("unsupported operand type(s) for " + op + ": '" + a.type_name() + "' and '" + b.type_name() + "'");
}

void check(bool overflow) {
  if (overflow) throw TemplateError("integer overflow");
}

// Python's float floor division and modulo (the result takes the divisor's sign).
double float_mod(double a, double b) {
  double mod = std::fmod(a, b);
  if (mod != 0) {
    if ((b < 0) != (mod < 0)) mod += b;
  } else {
    mod = std::copysign(0.0, b);
  }
  return mod;
}

double float_floor_div(double a, double b) {
  const double mod = std::fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0 && (b < 0) != (mod < 0)) div -= 1.0;
  if (div == 0) return std::copysign(0.0, a / b);
  double floor_div = std::floor(div);
  if (div - floor_div > 0.5) floor_div += 1.0;
  return floor_div;
}

Value int_power(int64_t base, int64_t exponent) {
  int64_t result = 1;
  while (exponent > 0) {
    if (exponent & 1) check(__builtin_mul_overflow(result, base, &result));
    exponent >>= 1;
    if (exponent > 0) check(__builtin_mul_overflow(base, base, &base));
  }
  return Value(result);
}

Value repeat(Interpreter& in, const Value& sequence, int64_t times) {
  if (times < 0) times = 0;
  if (sequence.is_string() ? sequence.as_string().empty() : sequence.items().empty()) times = 0;
  if (sequence.is_string()) {
    const std::string& s = sequence.as_string();
    if (!s.empty() && static_cast<uint64_t>(times) > SIZE_MAX / s.size()) throw TemplateError("string too long");
    in.reserve(s.size() * static_cast<size_t>(times));
    std::string out;
    out.reserve(s.size() * static_cast<size_t>(times));
    for (int64_t i = 0; i < times; ++i) out += s;
    return Value(std::move(out));
  }
  const auto& items = sequence.items();
  if (!items.empty() && static_cast<uint64_t>(times) > SIZE_MAX / sizeof(Value) / items.size()) {
    throw TemplateError("list too long");
  }
  in.reserve(items.size() * static_cast<size_t>(times) * sizeof(Value));
  std::vector<Value> out;
  for (int64_t i = 0; i < times; ++i) out.insert(out.end(), items.begin(), items.end());
  return sequence.is_tuple() ? Value::tuple(std::move(out)) : Value::list(std::move(out));
}

Value arithmetic(const std::string& op, const Value& a, const Value& b) {
  if (a.is_float() || b.is_float() || op == "/") {
    const double x = a.as_double();
    const double y = b.as_double();
    if (op == "+") return Value(x + y);
    if (op == "-") return Value(x - y);
    if (op == "*") return Value(x * y);
    if (op == "**") {
      if (x == 0 && y < 0) throw TemplateError("0.0 cannot be raised to a negative power");
      if (x < 0 && y != std::floor(y)) throw TemplateError("complex results are not supported");
      return Value(std::pow(x, y));
    }
    if (y == 0) throw TemplateError(op == "/" ? "division by zero" : "float modulo or division by zero");
    if (op == "/") return Value(x / y);
    if (op == "//") return Value(float_floor_div(x, y));
    return Value(float_mod(x, y));
  }
  const int64_t x = a.as_int();
  const int64_t y = b.as_int();
  int64_t r = 0;
  if (op == "+" || op == "-" || op == "*") {
    check(op == "+"   ? __builtin_add_overflow(x, y, &r)
          : op == "-" ? __builtin_sub_overflow(x, y, &r)
                      : __builtin_mul_overflow(x, y, &r));
    return Value(r);
  }
  if (op == "**") {
    if (y < 0) return Value(std::pow(static_cast<double>(x), static_cast<double>(y)));
    return int_power(x, y);
  }
  if (y == 0) throw TemplateError("integer division or modulo by zero");
  if (x == std::numeric_limits<int64_t>::min() && y == -1) throw TemplateError("integer overflow");
  int64_t quotient = x / y;
  int64_t remainder = x % y;
  if (remainder != 0 && ((remainder < 0) != (y < 0))) --quotient, remainder += y;
  return Value(op == "//" ? quotient : remainder);
}

}  // namespace

bool numeric_less(const Value& a, const Value& b) {
  if (!a.is_float() && !b.is_float()) return a.as_int() < b.as_int();
  return a.as_double() < b.as_double();
}

std::string quoted(const std::string& name) {
  constexpr size_t kShown = 64;
  return "'" + (name.size() <= kShown ? name : name.substr(0, kShown) + "...") + "'";
}

std::string describe(const Value& v) {
  if (v.is_string()) return quoted(v.as_string());
  if (v.is_list() || v.is_dict() || v.is_object()) return std::string("of type ") + v.type_name();
  return v.repr();
}

void fail_undefined(const Value& v) {
  const std::string& what = v.undefined_message();
  throw TemplateError(what.empty() ? "undefined value" : what);
}

Value binary_operator(Interpreter& in, const std::string& op, const Value& a, const Value& b) {
  if (a.is_undefined()) fail_undefined(a);
  if (b.is_undefined()) fail_undefined(b);
  if (a.is_number() && b.is_number()) return arithmetic(op, a, b);
  if (op == "+") {
    if (a.is_string() && b.is_string()) {
      in.reserve(a.as_string().size() + b.as_string().size());
      return Value(a.as_string() + b.as_string());
    }
    if (a.is_string()) throw TemplateError(std::string("can only concatenate str (not \"") + b.type_name() + "\") to str");
    if (a.is_list() && b.is_list() && a.is_tuple() == b.is_tuple()) {
      in.reserve((a.items().size() + b.items().size()) * sizeof(Value));
      std::vector<Value> items = a.items();
      items.insert(items.end(), b.items().begin(), b.items().end());
      return a.is_tuple() ? Value::tuple(std::move(items)) : Value::list(std::move(items));
    }
  }
  if (op == "*") {
    if ((a.is_string() || a.is_list()) && (b.is_int() || b.is_bool())) return repeat(in, a, b.as_int());
    if ((b.is_string() || b.is_list()) && (a.is_int() || a.is_bool())) return repeat(in, b, a.as_int());
  }
  if (op == "%" && a.is_string()) return printf_format(in, a.as_string(), b);
  unsupported(op, a, b);
}

Value negate(const Value& v) {
  if (v.is_undefined()) fail_undefined(v);
  if (v.is_float()) return Value(-v.as_double());
  if (!v.is_number()) throw TemplateError(std::string("bad operand type for unary -: '") + v.type_name() + "'");
  if (v.as_int() == std::numeric_limits<int64_t>::min()) throw TemplateError("integer overflow");
  return Value(-v.as_int());
}

bool equal(Interpreter& in, const Value& a, const Value& b) {
  in.step();
  if (a.is_string() && b.is_string()) {
    in.step(std::min(a.as_string().size(), b.as_string().size()) / 64);
    return a.as_string() == b.as_string();
  }
  if (a.is_list() && b.is_list()) {
    const auto& x = a.items();
    const auto& y = b.items();
    if (a.is_tuple() != b.is_tuple() || x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i) {
      if (!equal(in, x[i], y[i])) return false;
    }
    return true;
  }
  if (a.is_dict() && b.is_dict()) {
    const Dict& x = a.as_dict();
    const Dict& y = b.as_dict();
    if (x.size() != y.size()) return false;
    for (const auto& [key, value] : x.entries()) {
      const Value* other = y.find_key(key);
      if (!other || !equal(in, value, *other)) return false;
    }
    return true;
  }
  return a == b;  // scalars, objects and functions: constant work
}

bool less(Interpreter& in, const Value& a, const Value& b) {
  in.step();
  if (a.is_number() && b.is_number()) return numeric_less(a, b);
  if (a.is_string() && b.is_string()) {
    in.step(std::min(a.as_string().size(), b.as_string().size()) / 64);
    return a.as_string() < b.as_string();
  }
  if (a.is_list() && b.is_list() && a.is_tuple() == b.is_tuple()) {
    const auto& x = a.items();
    const auto& y = b.items();
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (!equal(in, x[i], y[i])) return less(in, x[i], y[i]);
    }
    return x.size() < y.size();
  }
  if (a.is_undefined()) fail_undefined(a);
  if (b.is_undefined()) fail_undefined(b);
  throw TemplateError(std::string("'<' not supported between instances of '") + a.type_name() + "' and '" + b.type_name() + "'");
}

bool compare(Interpreter& in, const std::string& op, const Value& a, const Value& b) {
  if (op == "==") return equal(in, a, b);
  if (op == "!=") return !equal(in, a, b);
  if (op == "<") return less(in, a, b);
  if (op == ">") return less(in, b, a);
  if (op == "<=") return !less(in, b, a);
  if (op == ">=") return !less(in, a, b);
  if (op == "in") return contains(in, b, a);
  return !contains(in, b, a);  // not in
}

bool contains(Interpreter& in, const Value& container, const Value& item) {
  switch (container.kind()) {
    case Value::Kind::Undefined: return false;
    case Value::Kind::String:
      if (!item.is_string()) {
        throw TemplateError(std::string("'in <string>' requires string as left operand, not ") + item.type_name());
      }
      in.step(container.as_string().size() / 64);
      return container.as_string().find(item.as_string()) != std::string::npos;
    case Value::Kind::List:
      for (const Value& v : container.items()) {
        if (equal(in, v, item)) return true;
      }
      return false;
    case Value::Kind::Dict:
      if (item.is_undefined()) return false;
      check_key(item);
      return container.as_dict().find_key(item) != nullptr;
    default: throw TemplateError(std::string("argument of type '") + container.type_name() + "' is not iterable");
  }
}

Value subscript(Interpreter& in, const Value& object, const Value& key) {
  if (object.is_undefined()) fail_undefined(object);
  if ((object.is_list() || object.is_string()) && (key.is_int() || key.is_bool())) {
    int64_t i = key.as_int();
    if (object.is_list()) {
      const auto size = static_cast<int64_t>(object.items().size());
      if (i < 0) i += size;
      if (i >= 0 && i < size) return object.items()[static_cast<size_t>(i)];
    } else {
      const std::string& s = object.as_string();
      in.touch(object);
      if (text::is_ascii(s)) {
        const auto size = static_cast<int64_t>(s.size());
        if (i < 0) i += size;
        if (i >= 0 && i < size) return Value(s.substr(static_cast<size_t>(i), 1));
      } else {
        const std::vector<char32_t> cps = text::decode(s);
        const auto size = static_cast<int64_t>(cps.size());
        if (i < 0) i += size;
        if (i >= 0 && i < size) return Value(text::encode(cps, static_cast<size_t>(i), static_cast<size_t>(i) + 1));
      }
    }
    return Value::undefined(std::string(object.type_name()) + " object has no element " + std::to_string(key.as_int()));
  }
  if (key.is_string()) {
    if (object.is_dict()) {
      if (const Value* v = object.as_dict().find(key.as_string())) return *v;
    }
    return in.attribute(object, key.as_string());  // Jinja2 falls back to the attribute
  }
  if (object.is_dict()) {
    if (const Value* v = object.as_dict().find_key(key)) return *v;
  }
  return Value::undefined(std::string(object.type_name()) + " object has no element " + describe(key));
}

Value slice(const Value& object, std::optional<int64_t> start, std::optional<int64_t> stop, std::optional<int64_t> step) {
  if (object.is_undefined()) fail_undefined(object);
  const int64_t by = step.value_or(1);
  if (by == 0) throw TemplateError("slice step cannot be zero");
  std::vector<char32_t> cps;
  if (object.is_string()) {
    cps = text::decode(object.as_string());
  } else if (!object.is_list()) {
    throw TemplateError(std::string("'") + object.type_name() + "' object is not subscriptable");
  }
  const auto size = static_cast<int64_t>(object.is_string() ? cps.size() : object.items().size());
  // Python's slice.indices: clamp into range, counting negatives from the end.
  auto bound = [&](std::optional<int64_t> v, int64_t fallback) {
    if (!v) return fallback;
    int64_t i = *v;
    if (i < 0) i = std::max<int64_t>(i + size, by < 0 ? -1 : 0);
    return std::min<int64_t>(i, by < 0 ? size - 1 : size);
  };
  const int64_t from = bound(start, by < 0 ? size - 1 : 0);
  const int64_t to = bound(stop, by < 0 ? -1 : size);
  // Counted rather than stepped, so a huge step cannot overflow the index.
  const uint64_t stride = by > 0 ? static_cast<uint64_t>(by) : 0 - static_cast<uint64_t>(by);
  const uint64_t span = by > 0 ? (from < to ? static_cast<uint64_t>(to - from) : 0) : (from > to ? static_cast<uint64_t>(from - to) : 0);
  const uint64_t count = span == 0 ? 0 : (span - 1) / stride + 1;
  std::vector<size_t> picked;
  for (uint64_t k = 0; k < count; ++k) {
    picked.push_back(static_cast<size_t>(by > 0 ? from + static_cast<int64_t>(k * stride) : from - static_cast<int64_t>(k * stride)));
  }
  if (object.is_string()) {
    std::string out;
    for (size_t i : picked) text::append_utf8(out, cps[i]);
    return Value(std::move(out));
  }
  std::vector<Value> items;
  items.reserve(picked.size());
  for (size_t i : picked) items.push_back(object.items()[i]);
  return object.is_tuple() ? Value::tuple(std::move(items)) : Value::list(std::move(items));
}

std::vector<Value> iterate(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::Undefined: return {};
    case Value::Kind::List: return v.items();
    case Value::Kind::Dict: {
      std::vector<Value> keys;
      keys.reserve(v.as_dict().size());
      for (const auto& entry : v.as_dict().entries()) keys.push_back(entry.first);
      return keys;
    }
    case Value::Kind::String: {
      std::vector<Value> chars;
      const std::vector<char32_t> cps = text::decode(v.as_string());
      for (size_t i = 0; i < cps.size(); ++i) chars.emplace_back(text::encode(cps, i, i + 1));
      return chars;
    }
    default: throw TemplateError(std::string("'") + v.type_name() + "' object is not iterable");
  }
}

}  // namespace peak::jinja
