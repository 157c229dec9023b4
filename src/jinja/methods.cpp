// The methods of str, list and dict, the global functions, and Python's two
// string formatting operations.
#include <cmath>
#include <cstdio>

#include "jinja/builtins.h"
#include "jinja/error.h"
#include "jinja/interpreter.h"
#include "jinja/operators.h"
#include "jinja/text.h"

namespace peak::jinja {
namespace {

// Jinja2's sandbox refuses the methods that change a list or dict.
bool mutates(const Value& receiver, const std::string& name) {
  static const char* const kList[] = {"append", "extend", "insert", "pop", "remove", "reverse", "sort", "clear"};
  static const char* const kDict[] = {"clear", "pop", "popitem", "setdefault", "update"};
  if (receiver.is_list()) {
    for (const char* m : kList) {
      if (name == m) return true;
    }
  }
  if (receiver.is_dict()) {
    for (const char* m : kDict) {
      if (name == m) return true;
    }
  }
  return false;
}

bool starts_or_ends(const std::string& s, const Value& affix, bool start) {
  if (affix.is_list()) {
    for (const Value& a : affix.items()) {
      if (starts_or_ends(s, a, start)) return true;
    }
    return false;
  }
  if (!affix.is_string()) throw TemplateError("startswith/endswith: expected a string or a tuple of strings");
  const std::string& a = affix.as_string();
  if (a.size() > s.size()) return false;
  return start ? s.compare(0, a.size(), a) == 0 : s.compare(s.size() - a.size(), a.size(), a) == 0;
}

// The index in code points of byte offset `at` of s.
int64_t code_point_index(const std::string& s, size_t at) {
  return static_cast<int64_t>(text::length(std::string_view(s).substr(0, at)));
}

// Python's str.format for "{}", "{0}" and "{name}" fields; format specs and
// conversions are refused.
Value str_format(Interpreter& in, const std::string& format, const CallArgs& args) {
  std::string out;
  size_t next = 0;
  for (size_t i = 0; i < format.size(); ++i) {
    const char c = format[i];
    if ((c == '{' || c == '}') && i + 1 < format.size() && format[i + 1] == c) {
      out += c;
      ++i;
      continue;
    }
    if (c == '}') throw TemplateError("Single '}' encountered in format string");
    if (c != '{') {
      out += c;
      continue;
    }
    const size_t close = format.find('}', i);
    if (close == std::string::npos) throw TemplateError("Single '{' encountered in format string");
    const std::string field = format.substr(i + 1, close - i - 1);
    if (field.find_first_of(":!.[") != std::string::npos) throw TemplateError("format specs in str.format are not supported");
    const Value* v = nullptr;
    if (field.empty() || (field.find_first_not_of("0123456789") == std::string::npos)) {
      const size_t index = field.empty() ? next++ : static_cast<size_t>(std::strtoull(field.c_str(), nullptr, 10));
      if (index >= args.positional.size()) throw TemplateError("Replacement index " + std::to_string(index) + " out of range");
      v = &args.positional[index];
    } else {
      for (const auto& kw : args.keywords) {
        if (kw.first == field) v = &kw.second;
      }
      if (!v) throw TemplateError("format: no argument named '" + field + "'");
    }
    out += v->str(in.max_bytes());
    in.reserve(out.size());
    i = close;
  }
  return Value(std::move(out));
}

Value string_method(Interpreter& in, const std::string& s, const std::string& name, const CallArgs& args) {
  in.step(s.size() / 64);
  if (name == "strip" || name == "lstrip" || name == "rstrip") {
    const Arguments a(name, args, {"chars"});
    const Value chars = a.get(0);
    return Value(text::strip(s, chars.is_string() ? &chars.as_string() : nullptr, name != "rstrip", name != "lstrip"));
  }
  if (name == "split" || name == "rsplit") {
    const Arguments a(name, args, {"sep", "maxsplit"});
    const Value separator = a.get(0);
    const std::string* sep = separator.is_string() ? &separator.as_string() : nullptr;
    if (sep && sep->empty()) throw TemplateError("empty separator");
    std::vector<Value> parts;
    for (std::string& part : text::split(s, sep, a.get(1, Value(-1)).as_int(), name == "rsplit")) {
      parts.emplace_back(std::move(part));
    }
    in.reserve(parts.size() * sizeof(Value));
    return Value::list(std::move(parts));
  }
  if (name == "startswith" || name == "endswith") {
    const Arguments a(name, args, {"prefix"});
    return Value(starts_or_ends(s, a.get(0), name == "startswith"));
  }
  if (name == "upper" || name == "lower" || name == "title" || name == "capitalize") {
    Arguments(name, args, {});
    const auto to = name == "upper"   ? text::Case::Upper
                    : name == "lower" ? text::Case::Lower
                    : name == "title" ? text::Case::Title
                                      : text::Case::Capitalize;
    return Value(text::change_case(s, to));
  }
  if (name == "replace") {
    const Arguments a(name, args, {"old", "new", "count"});
    const std::string from = a.get(0).as_string();
    const std::string to = a.get(1).as_string();
    const int64_t count = a.get(2, Value(-1)).as_int();
    const size_t hits = from.empty() ? text::length(s) + 1 : text::split(s, &from, count, false).size() - 1;
    in.reserve(s.size() + hits * to.size());
    return Value(text::replace(s, from, to, count));
  }
  if (name == "find" || name == "rfind" || name == "index" || name == "rindex" || name == "count") {
    const Arguments a(name, args, {"sub"});
    const std::string sub = a.get(0).as_string();
    if (name == "count") {
      if (sub.empty()) return Value(static_cast<int64_t>(text::length(s) + 1));
      return Value(static_cast<int64_t>(text::split(s, &sub, -1, false).size() - 1));
    }
    const size_t at = name[0] == 'r' ? s.rfind(sub) : s.find(sub);
    if (at == std::string::npos) {
      if (name == "index" || name == "rindex") throw TemplateError("substring not found");
      return Value(-1);
    }
    return Value(code_point_index(s, at));
  }
  if (name == "join") {
    const Arguments a(name, args, {"iterable"});
    std::string out;
    bool first = true;
    for (const Value& item : iterate(a.get(0))) {
      in.step();
      if (!item.is_string()) throw TemplateError(std::string("sequence item: expected str instance, ") + item.type_name() + " found");
      if (!first) out += s;
      first = false;
      out += item.as_string();
      in.reserve(out.size());
    }
    return Value(std::move(out));
  }
  if (name == "format") return str_format(in, s, args);
  if (name == "splitlines") {
    Arguments(name, args, {});
    std::vector<Value> lines;
    for (std::string& line : text::split_lines(s)) lines.emplace_back(std::move(line));
    return Value::list(std::move(lines));
  }
  if (name == "isdigit" || name == "isalpha" || name == "isalnum" || name == "isspace" || name == "islower" ||
      name == "isupper") {
    Arguments(name, args, {});
    if (name == "islower" || name == "isupper") return Value(apply_test(in, name.substr(2), Value(s), {}));
    const std::vector<char32_t> cps = text::decode(s);
    if (cps.empty()) return Value(false);
    for (char32_t cp : cps) {
      const bool ok = name == "isdigit"   ? text::is_digit(cp)
                      : name == "isalpha" ? text::is_alpha(cp)
                      : name == "isspace" ? text::is_space(cp)
                                          : text::is_alpha(cp) || text::is_digit(cp);
      if (!ok) return Value(false);
    }
    return Value(true);
  }
  return Value::undefined("'str object' has no attribute " + quoted(name));
}

Value dict_method(Interpreter& in, const Value& d, const std::string& name, const CallArgs& args) {
  if (name == "get") {
    const Arguments a(name, args, {"key", "default"});
    const Value key = a.get(0);
    if (!key.is_undefined()) check_key(key);
    const Value* v = d.as_dict().find_key(key);
    return v ? *v : a.get(1, Value::none());
  }
  Arguments(name, args, {});
  if (name == "copy") return d;
  in.touch(d);
  std::vector<Value> out;
  for (const auto& [key, value] : d.as_dict().entries()) {
    if (name == "keys") out.push_back(key);
    if (name == "values") out.push_back(value);
    if (name == "items") out.push_back(Value::tuple({key, value}));
  }
  return Value::list(std::move(out));
}

Value list_method(Interpreter& in, const Value& list, const std::string& name, const CallArgs& args) {
  const Arguments a(name, args, name == "copy" ? std::initializer_list<const char*>{} : std::initializer_list<const char*>{"value"});
  if (name == "copy") return list;
  int64_t count = 0;
  for (size_t i = 0; i < list.items().size(); ++i) {
    if (!equal(in, list.items()[i], a.get(0))) continue;
    if (name == "index") return Value(static_cast<int64_t>(i));
    ++count;
  }
  if (name == "index") throw TemplateError(describe(a.get(0)) + " is not in list");
  return Value(count);
}

Value make_namespace(const CallArgs& args) {
  Value ns = Value::object("Namespace");
  auto add = [&](const Value& key, const Value& value) {
    if (holds_object(value)) throw TemplateError("a namespace cannot hold a namespace or loop object");
    ns.as_object().attributes.set(key, value);
  };
  if (args.positional.size() > 1) throw TemplateError("namespace() takes at most one positional argument");
  if (!args.positional.empty()) {
    if (!args.positional[0].is_dict()) throw TemplateError("namespace(): the positional argument must be a dict");
    for (const auto& [key, value] : args.positional[0].as_dict().entries()) add(key, value);
  }
  for (const auto& [key, value] : args.keywords) add(key, value);
  return ns;
}

}  // namespace

Arguments::Arguments(const std::string& function, const CallArgs& args, std::initializer_list<const char*> names)
    : bound_(names.size(), nullptr) {
  if (args.positional.size() > names.size()) {
    throw TemplateError(function + "() takes at most " + std::to_string(names.size()) + " argument(s) (" +
                        std::to_string(args.positional.size()) + " given)");
  }
  for (size_t i = 0; i < args.positional.size(); ++i) bound_[i] = &args.positional[i];
  for (const auto& [key, value] : args.keywords) {
    size_t i = 0;
    for (const char* n : names) {
      if (key == n) break;
      ++i;
    }
    if (i == names.size()) throw TemplateError(function + "() got an unexpected keyword argument '" + key + "'");
    if (bound_[i]) throw TemplateError(function + "() got multiple values for argument '" + key + "'");
    bound_[i] = &value;
  }
}

Value Arguments::get(size_t i, const Value& fallback) const { return bound_[i] ? *bound_[i] : fallback; }

Value method(const Value& receiver, const std::string& name) {
  if (mutates(receiver, name)) {
    const std::string message =
        "access to attribute '" + name + "' of '" + receiver.type_name() + "' object is unsafe.";
    return Value::function(name, [message](Interpreter&, CallArgs&) -> Value { throw TemplateError(message); });
  }
  static const char* const kString[] = {"strip", "lstrip", "rstrip", "split", "rsplit", "startswith", "endswith",
                                        "upper", "lower", "title", "capitalize", "replace", "find", "rfind",
                                        "index", "rindex", "count", "join", "format", "splitlines", "isdigit",
                                        "isalpha", "isalnum", "isspace", "islower", "isupper"};
  static const char* const kDict[] = {"get", "keys", "values", "items", "copy"};
  static const char* const kList[] = {"index", "count", "copy"};
  auto known = [&](const auto& names) {
    for (const char* n : names) {
      if (name == n) return true;
    }
    return false;
  };
  if (receiver.is_string() && known(kString)) {
    return Value::function(name, [receiver, name](Interpreter& i, CallArgs& args) {
      return string_method(i, receiver.as_string(), name, args);
    });
  }
  if (receiver.is_dict() && known(kDict)) {
    return Value::function(name, [receiver, name](Interpreter& i, CallArgs& args) { return dict_method(i, receiver, name, args); });
  }
  if (receiver.is_list() && known(kList)) {
    return Value::function(name, [receiver, name](Interpreter& i, CallArgs& args) { return list_method(i, receiver, name, args); });
  }
  return Value::undefined(std::string("'") + receiver.type_name() + " object' has no attribute " + quoted(name));
}

Dict make_globals() {
  Dict globals;
  globals.set("range", Value::function("range", [](Interpreter& in, CallArgs& args) {
    const Arguments a("range", args, {"start", "stop", "step"});
    int64_t start = 0, stop = 0, step = 1;
    if (a.has(1)) {
      start = a.get(0).as_int(), stop = a.get(1).as_int(), step = a.get(2, Value(1)).as_int();
    } else {
      stop = a.get(0).as_int();
    }
    if (step == 0) throw TemplateError("range() arg 3 must not be zero");
    // Jinja2's sandbox refuses ranges of more than 100000 items.
    // In unsigned arithmetic: the span of a range may not fit int64.
    const bool up = step > 0;
    const uint64_t span = up ? (start < stop ? static_cast<uint64_t>(stop) - static_cast<uint64_t>(start) : 0)
                             : (start > stop ? static_cast<uint64_t>(start) - static_cast<uint64_t>(stop) : 0);
    const uint64_t stride = up ? static_cast<uint64_t>(step) : 0 - static_cast<uint64_t>(step);
    const uint64_t n = span / stride + (span % stride != 0);
    if (n > 100000) throw TemplateError("Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).");
    in.reserve(static_cast<size_t>(n) * sizeof(Value));
    std::vector<Value> items;
    for (uint64_t k = 0; k < n; ++k) {
      items.emplace_back(static_cast<int64_t>(static_cast<uint64_t>(start) + k * static_cast<uint64_t>(step)));
    }
    return Value::list(std::move(items));
  }));
  globals.set("namespace", Value::function("namespace", [](Interpreter&, CallArgs& args) { return make_namespace(args); }));
  globals.set("dict", Value::function("dict", [](Interpreter&, CallArgs& args) {
    if (!args.positional.empty()) throw TemplateError("dict() takes keyword arguments only");
    Value d = Value::dict();
    for (const auto& [key, value] : args.keywords) d.set(key, value);
    return d;
  }));
  globals.set("raise_exception", Value::function("raise_exception", [](Interpreter&, CallArgs& args) -> Value {
    const Arguments a("raise_exception", args, {"message"});
    throw TemplateRaised(a.get(0).str(), 0);
  }));
  globals.set("strftime_now", Value::function("strftime_now", [](Interpreter& in, CallArgs& args) {
    const Arguments a("strftime_now", args, {"format"});
    return Value(in.strftime_now(a.get(0).str()));
  }));
  return globals;
}

Value printf_format(Interpreter& in, const std::string& format, const Value& values) {
  const std::vector<Value> args = values.is_tuple() ? values.items() : std::vector<Value>{values};
  size_t next = 0;
  std::string out;
  auto number = [&](size_t& i) {
    int n = 0;
    while (i < format.size() && format[i] >= '0' && format[i] <= '9') {
      n = n * 10 + (format[i++] - '0');
      if (n > 1000) throw TemplateError("format width or precision above 1000");
    }
    return n;
  };
  for (size_t i = 0; i < format.size(); ++i) {
    if (format[i] != '%') {
      out += format[i];
      continue;
    }
    if (++i < format.size() && format[i] == '%') {
      out += '%';
      continue;
    }
    std::string key;
    if (i < format.size() && format[i] == '(') {
      const size_t close = format.find(')', i);
      if (close == std::string::npos) throw TemplateError("incomplete format key");
      key = format.substr(i + 1, close - i - 1);
      i = close + 1;
    }
    std::string flags;
    while (i < format.size() && std::string_view("-+ 0#").find(format[i]) != std::string_view::npos) flags += format[i++];
    const int width = number(i);
    int precision = -1;
    if (i < format.size() && format[i] == '.') precision = number(++i);
    if (i >= format.size()) throw TemplateError("incomplete format");
    const char conversion = format[i];
    const Value* v = nullptr;
    if (!key.empty()) {
      v = values.is_dict() ? values.as_dict().find(key) : nullptr;
      if (!v) throw TemplateError("format requires a mapping with key '" + key + "'");
    } else {
      if (next >= args.size()) throw TemplateError("not enough arguments for format string");
      v = &args[next++];
    }
    std::string piece;
    if (conversion == 's' || conversion == 'r') {
      piece = conversion == 's' ? v->str(in.max_bytes()) : v->repr(in.max_bytes());
      if (precision >= 0) {
        const std::vector<char32_t> cps = text::decode(piece);
        piece = text::encode(cps, 0, std::min(cps.size(), static_cast<size_t>(precision)));
      }
      const size_t length = text::length(piece);
      if (length < static_cast<size_t>(width)) {
        const std::string pad(static_cast<size_t>(width) - length, ' ');
        piece = flags.find('-') != std::string::npos ? piece + pad : pad + piece;
      }
    } else if (std::string_view("dixXofFeEgG").find(conversion) != std::string_view::npos) {
      if (!v->is_number()) throw TemplateError(std::string("%") + conversion + " format: a real number is required, not " + v->type_name());
      std::string spec = "%" + flags + std::to_string(width);
      if (precision >= 0) spec += "." + std::to_string(precision);
      char buf[2200];
      // The spec is built above from checked flags, digits and one conversion.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
      if (std::string_view("dixXo").find(conversion) != std::string_view::npos) {
        spec += conversion == 'i' ? std::string("lld") : std::string("ll") + conversion;
        if (v->is_float() && !(std::fabs(v->as_double()) < 9.2e18)) throw TemplateError("%d format: number out of range");
        const auto n = static_cast<long long>(v->is_float() ? static_cast<int64_t>(v->as_double()) : v->as_int());
        std::snprintf(buf, sizeof buf, spec.c_str(), n);
      } else {
        spec += conversion;
        std::snprintf(buf, sizeof buf, spec.c_str(), v->as_double());
      }
#pragma GCC diagnostic pop
      piece = buf;
    } else {
      throw TemplateError(std::string("unsupported format character '") + conversion + "'");
    }
    in.reserve(out.size() + piece.size());
    out += piece;
  }
  if (!values.is_dict() && next < args.size()) throw TemplateError("not all arguments converted during string formatting");
  return Value(std::move(out));
}

}  // namespace peak::jinja
