// Jinja2's filters and tests.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "jinja/builtins.h"
#include "jinja/error.h"
#include "jinja/interpreter.h"
#include "jinja/json.h"
#include "jinja/operators.h"
#include "jinja/text.h"

namespace peak::jinja {
namespace {

Value text_value(Interpreter& in, std::string s) {
  in.reserve(s.size());
  return Value(std::move(s));
}

const std::string* optional_string(const Value& v) { return v.is_string() ? &v.as_string() : nullptr; }

// Jinja2's sort key: strings compare without case unless case_sensitive.
Value sort_key(const Value& v, bool case_sensitive) {
  if (!case_sensitive && v.is_string()) return Value(text::change_case(v.as_string(), text::Case::Lower));
  return v;
}

// "a.b.0": the attribute path of Jinja2's attribute= arguments.
Value attribute_path(Interpreter& in, Value v, const std::string& path) {
  size_t begin = 0;
  while (begin <= path.size()) {
    const size_t dot = std::min(path.find('.', begin), path.size());
    const std::string part = path.substr(begin, dot - begin);
    const bool numeric = !part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
    v = subscript(in, v, numeric ? Value(std::strtoll(part.c_str(), nullptr, 10)) : Value(part));
    if (v.is_undefined()) return v;
    begin = dot + 1;
  }
  return v;
}

std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&#34;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

// Python's int(str) and float(str): surrounding white space, a sign, "_" between digits.
bool parse_int(const std::string& s, int64_t base, int64_t& out) {
  std::string t = text::strip(s, nullptr, true, true);
  std::string digits;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i] == '_' && i > 0 && i + 1 < t.size() && t[i - 1] != '_' && t[i - 1] != '-' && t[i - 1] != '+') continue;
    digits += t[i];
  }
  if (digits.empty() || base < 2 || base > 36) return false;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(digits.c_str(), &end, static_cast<int>(base));
  if (errno || end != digits.c_str() + digits.size() || std::isspace(static_cast<unsigned char>(digits[0]))) return false;
  out = v;
  return true;
}

bool parse_float(const std::string& s, double& out) {
  std::string t = text::strip(s, nullptr, true, true);
  if (t.empty() || t.find_first_of("xXpP") != std::string::npos) return false;
  char* end = nullptr;
  out = std::strtod(t.c_str(), &end);
  return end == t.c_str() + t.size();
}

Value to_int(const Value& v, const Value& fallback, int64_t base) {
  if (v.is_int() || v.is_bool()) return Value(v.as_int());
  if (v.is_float()) {
    const double f = v.as_double();
    if (!std::isfinite(f) || std::fabs(f) >= 9.2e18) return fallback;
    return Value(static_cast<int64_t>(f));
  }
  if (v.is_string()) {
    int64_t i = 0;
    if (parse_int(v.as_string(), base, i)) return Value(i);
    double f = 0;
    if (parse_float(v.as_string(), f) && std::isfinite(f) && std::fabs(f) < 9.2e18) return Value(static_cast<int64_t>(f));
  }
  return fallback;
}

Value round_value(const Value& v, int64_t precision, const std::string& method) {
  if (!v.is_number()) throw TemplateError(std::string("round: expected a number, got ") + v.type_name());
  const double x = v.as_double();
  if (method == "common") {
    if (!v.is_float()) return Value(v.as_int());
    if (!std::isfinite(x) || precision > 300 || precision < -300) return Value(x);
    if (precision < 0) {
      const double scale = std::pow(10.0, static_cast<double>(-precision));
      return Value(std::nearbyint(x / scale) * scale);
    }
    // printf rounds the exact binary value, ties to even, as Python's round() does.
    char buf[400];
    std::snprintf(buf, sizeof buf, "%.*f", static_cast<int>(precision), x);
    return Value(std::strtod(buf, nullptr));
  }
  if (method != "floor" && method != "ceil") throw TemplateError("round: method must be 'common', 'ceil' or 'floor'");
  const double scale = std::pow(10.0, static_cast<double>(precision));
  return Value((method == "floor" ? std::floor(x * scale) : std::ceil(x * scale)) / scale);
}

// Jinja2's title: each run after "-", white space or an opening bracket starts a word.
std::string jinja_title(const std::string& s) {
  std::string out;
  bool word_start = true;
  for (char32_t cp : text::decode(s)) {
    const bool boundary = cp == '-' || text::is_space(cp) || cp == '(' || cp == '{' || cp == '[' || cp == '<';
    text::append_utf8(out, boundary ? cp : word_start ? text::to_upper(cp) : text::to_lower(cp));
    word_start = boundary;
  }
  return out;
}

std::vector<Value> sorted(Interpreter& in, std::vector<Value> items, bool reverse, bool case_sensitive,
                          const Value& attribute) {
  std::vector<std::pair<Value, Value>> keyed;
  for (Value& v : items) {
    Value key = attribute.is_string() ? attribute_path(in, v, attribute.as_string()) : v;
    keyed.emplace_back(sort_key(key, case_sensitive), std::move(v));
  }
  std::stable_sort(keyed.begin(), keyed.end(), [&](const auto& a, const auto& b) {
    return reverse ? less(in, b.first, a.first) : less(in, a.first, b.first);
  });
  std::vector<Value> out;
  for (auto& kv : keyed) out.push_back(std::move(kv.second));
  return out;
}

// select / reject / selectattr / rejectattr. `args` after the test name go to the test.
// As in Jinja2, a false subject (none, undefined, 0, '', []) selects nothing
// before the arguments are even looked at.
Value select(Interpreter& in, const Value& subject, const CallArgs& args, bool by_attribute, bool keep) {
  if (!subject.truthy()) return Value::list();
  size_t first = 0;
  std::string attribute;
  if (by_attribute) {
    if (args.positional.empty() || !args.positional[0].is_string()) throw TemplateError("selectattr: expected an attribute name");
    attribute = args.positional[0].as_string();
    first = 1;
  }
  std::string test;
  CallArgs test_args;
  if (args.positional.size() > first) {
    test = args.positional[first].str();
    test_args.positional.assign(args.positional.begin() + static_cast<std::ptrdiff_t>(first) + 1, args.positional.end());
    test_args.keywords = args.keywords;
  }
  std::vector<Value> out;
  for (const Value& item : iterate(subject)) {
    in.step();
    const Value probe = by_attribute ? attribute_path(in, item, attribute) : item;
    const bool passed = test.empty() ? probe.truthy() : apply_test(in, test, probe, test_args);
    if (passed == keep) out.push_back(item);
  }
  return Value::list(std::move(out));
}

// Like select, a false subject maps to nothing whatever the arguments.
Value map(Interpreter& in, const Value& subject, const CallArgs& args) {
  if (!subject.truthy()) return Value::list();
  std::vector<Value> out;
  for (const auto& [key, value] : args.keywords) {
    if (key != "attribute" && key != "default") throw TemplateError("map: unexpected keyword argument '" + key + "'");
  }
  const CallArgs keywords{{}, args.keywords};
  const Arguments named("map", keywords, {"attribute", "default"});
  if (named.has(0)) {
    for (const Value& item : iterate(subject)) {
      in.step();
      Value v = attribute_path(in, item, named.get(0).str());
      out.push_back(v.is_undefined() && named.has(1) ? named.get(1) : v);
    }
    return Value::list(std::move(out));
  }
  if (args.positional.empty()) throw TemplateError("map: expected a filter name or attribute=");
  const std::string filter = args.positional[0].str();
  const CallArgs rest{{args.positional.begin() + 1, args.positional.end()}, args.keywords};
  for (const Value& item : iterate(subject)) {
    in.step();
    out.push_back(apply_filter(in, filter, item, rest));
  }
  return Value::list(std::move(out));
}

Value tojson(Interpreter& in, const Value& subject, const CallArgs& args) {
  const Arguments a("tojson", args, {"ensure_ascii", "indent", "separators", "sort_keys"});
  JsonFormat format;
  format.ensure_ascii = a.get(0, Value(false)).truthy();
  const Value& indent = a.get(1, Value::none());
  if (indent.is_string()) {
    format.indent = indent.as_string();
  } else if (indent.is_int()) {
    in.reserve(static_cast<size_t>(std::max<int64_t>(0, std::min<int64_t>(indent.as_int(), INT32_MAX))));
    format.indent = std::string(static_cast<size_t>(std::max<int64_t>(0, indent.as_int())), ' ');
  } else if (!indent.is_none()) {
    throw TemplateError("tojson: indent must be an integer or a string");
  }
  const Value& separators = a.get(2, Value::none());
  if (separators.is_list()) {
    if (separators.items().size() != 2) throw TemplateError("tojson: separators must be a pair");
    format.item_separator = separators.items()[0].as_string();
    format.key_separator = separators.items()[1].as_string();
  }
  format.sort_keys = a.get(3, Value(false)).truthy();
  std::string json = to_json(subject, format, in.max_bytes());
  return text_value(in, std::move(json));
}

}  // namespace

Value apply_filter(Interpreter& in, const std::string& name, const Value& subject, const CallArgs& args) {
  in.touch(subject);
  auto text_of = [&] { return subject.str(in.max_bytes()); };
  if (name == "tojson") return tojson(in, subject, args);
  if (name == "trim") {
    const Arguments a(name, args, {"chars"});
    return text_value(in, text::strip(text_of(), optional_string(a.get(0)), true, true));
  }
  if (name == "length" || name == "count") {
    Arguments(name, args, {});
    if (subject.is_string()) return Value(static_cast<int64_t>(text::length(subject.as_string())));
    if (subject.is_list()) return Value(static_cast<int64_t>(subject.items().size()));
    if (subject.is_dict()) return Value(static_cast<int64_t>(subject.as_dict().size()));
    if (subject.is_undefined()) return Value(0);
    throw TemplateError(std::string("object of type '") + subject.type_name() + "' has no len()");
  }
  if (name == "default" || name == "d") {
    const Arguments a(name, args, {"default_value", "boolean"});
    const bool use_default = subject.is_undefined() || (a.get(1, Value(false)).truthy() && !subject.truthy());
    return use_default ? a.get(0, Value("")) : subject;
  }
  if (name == "items") {
    Arguments(name, args, {});
    if (subject.is_undefined()) return Value::list();
    if (!subject.is_dict()) throw TemplateError("Can only get item pairs from a mapping.");
    std::vector<Value> pairs;
    for (const auto& [key, value] : subject.as_dict().entries()) pairs.push_back(Value::tuple({key, value}));
    return Value::list(std::move(pairs));
  }
  if (name == "dictsort") {
    const Arguments a(name, args, {"case_sensitive", "by", "reverse"});
    if (!subject.is_dict()) throw TemplateError("You can only sort by either \"key\" or \"value\" of a mapping");
    const bool by_value = a.get(1, Value("key")).str() == "value";
    const bool case_sensitive = a.get(0, Value(false)).truthy();
    std::vector<Value> pairs;
    for (const auto& [key, value] : subject.as_dict().entries()) pairs.push_back(Value::tuple({key, value}));
    std::stable_sort(pairs.begin(), pairs.end(), [&](const Value& x, const Value& y) {
      const size_t i = by_value ? 1 : 0;
      return less(in, sort_key(x.items()[i], case_sensitive), sort_key(y.items()[i], case_sensitive));
    });
    if (a.get(2, Value(false)).truthy()) std::reverse(pairs.begin(), pairs.end());
    return Value::list(std::move(pairs));
  }
  if (name == "selectattr" || name == "rejectattr") return select(in, subject, args, true, name == "selectattr");
  if (name == "select" || name == "reject") return select(in, subject, args, false, name == "select");
  if (name == "map") return map(in, subject, args);
  if (name == "join") {
    const Arguments a(name, args, {"d", "attribute"});
    const std::string separator = a.get(0, Value("")).str();
    std::string out;
    bool first = true;
    for (const Value& item : iterate(subject)) {
      in.step();
      if (!first) out += separator;
      first = false;
      out += (a.has(1) ? attribute_path(in, item, a.get(1).str()) : item).str(in.max_bytes());
      in.reserve(out.size());
    }
    return Value(std::move(out));
  }
  if (name == "upper" || name == "lower" || name == "capitalize") {
    Arguments(name, args, {});
    const auto to = name == "upper" ? text::Case::Upper : name == "lower" ? text::Case::Lower : text::Case::Capitalize;
    return text_value(in, text::change_case(text_of(), to));
  }
  if (name == "title") {
    Arguments(name, args, {});
    return text_value(in, jinja_title(text_of()));
  }
  if (name == "replace") {
    const Arguments a(name, args, {"old", "new", "count"});
    const std::string s = text_of();
    const std::string from = a.get(0).str();
    const std::string to = a.get(1).str();
    const int64_t count = a.has(2) ? a.get(2).as_int() : -1;
    // The result's length before building it: the limit must hold first.
    const size_t hits = from.empty() ? text::length(s) + 1 : text::split(s, &from, count, false).size() - 1;
    in.reserve(s.size() + hits * to.size());
    return Value(text::replace(s, from, to, count));
  }
  if (name == "first" || name == "last") {
    Arguments(name, args, {});
    const std::vector<Value> items = iterate(subject);
    if (items.empty()) return Value::undefined("No " + name + " item, sequence was empty.");
    return name == "first" ? items.front() : items.back();
  }
  if (name == "list") {
    Arguments(name, args, {});
    if (subject.is_string()) in.reserve(subject.as_string().size() * sizeof(Value));
    return Value::list(iterate(subject));
  }
  if (name == "string") {
    Arguments(name, args, {});
    return text_value(in, text_of());
  }
  if (name == "safe") {
    Arguments(name, args, {});
    return text_value(in, text_of());
  }
  if (name == "e" || name == "escape") {
    Arguments(name, args, {});
    in.reserve(text_of().size() * 5);
    return Value(html_escape(text_of()));
  }
  if (name == "int") {
    const Arguments a(name, args, {"default", "base"});
    return to_int(subject, a.get(0, Value(0)), a.get(1, Value(10)).as_int());
  }
  if (name == "float") {
    const Arguments a(name, args, {"default"});
    if (subject.is_number()) return Value(subject.as_double());
    double f = 0;
    if (subject.is_string() && parse_float(subject.as_string(), f)) return Value(f);
    return a.get(0, Value(0.0));
  }
  if (name == "abs") {
    Arguments(name, args, {});
    if (subject.is_float()) return Value(std::fabs(subject.as_double()));
    if (!subject.is_number()) throw TemplateError(std::string("bad operand type for abs(): '") + subject.type_name() + "'");
    return subject.as_int() < 0 ? negate(Value(subject.as_int())) : Value(subject.as_int());
  }
  if (name == "round") {
    const Arguments a(name, args, {"precision", "method"});
    return round_value(subject, a.get(0, Value(0)).as_int(), a.get(1, Value("common")).str());
  }
  if (name == "reverse") {
    Arguments(name, args, {});
    if (subject.is_string()) {
      std::vector<char32_t> cps = text::decode(subject.as_string());
      std::reverse(cps.begin(), cps.end());
      return Value(text::encode(cps, 0, cps.size()));
    }
    std::vector<Value> items = iterate(subject);
    std::reverse(items.begin(), items.end());
    return Value::list(std::move(items));
  }
  if (name == "sort") {
    const Arguments a(name, args, {"reverse", "case_sensitive", "attribute"});
    return Value::list(sorted(in, iterate(subject), a.get(0, Value(false)).truthy(), a.get(1, Value(false)).truthy(), a.get(2)));
  }
  if (name == "unique") {
    const Arguments a(name, args, {"case_sensitive", "attribute"});
    std::vector<Value> out;
    std::vector<Value> seen;
    for (const Value& item : iterate(subject)) {
      Value key = sort_key(a.has(1) ? attribute_path(in, item, a.get(1).str()) : item, a.get(0, Value(false)).truthy());
      if (std::any_of(seen.begin(), seen.end(), [&](const Value& s) { return equal(in, s, key); })) continue;
      seen.push_back(std::move(key));
      out.push_back(item);
    }
    return Value::list(std::move(out));
  }
  if (name == "min" || name == "max") {
    const Arguments a(name, args, {"case_sensitive", "attribute"});
    const std::vector<Value> items = sorted(in, iterate(subject), false, a.get(0, Value(false)).truthy(), a.get(1));
    if (items.empty()) return Value::undefined("No aggregated item, sequence was empty.");
    return name == "min" ? items.front() : items.back();
  }
  if (name == "sum") {
    const Arguments a(name, args, {"attribute", "start"});
    Value total = a.get(1, Value(0));
    for (const Value& item : iterate(subject)) {
      in.step();
      total = binary_operator(in, "+", total, a.has(0) ? attribute_path(in, item, a.get(0).str()) : item);
    }
    return total;
  }
  if (name == "indent") {
    const Arguments a(name, args, {"width", "first", "blank"});
    const Value& width = a.get(0, Value(4));
    std::string indention;
    if (width.is_string()) {
      indention = width.as_string();
    } else {
      const int64_t n = width.as_int();
      in.reserve(static_cast<size_t>(std::max<int64_t>(0, std::min<int64_t>(n, INT32_MAX))));
      indention.assign(static_cast<size_t>(std::max<int64_t>(0, n)), ' ');
    }
    const std::vector<std::string> lines = text::split_lines(text_of() + "\n");
    in.reserve(text_of().size() + lines.size() * indention.size());
    std::string out;
    for (size_t i = 0; i < lines.size(); ++i) {
      if (i) out += "\n";
      const bool indent_line = i == 0 ? a.get(1, Value(false)).truthy() : (!lines[i].empty() || a.get(2, Value(false)).truthy());
      if (indent_line) out += indention;
      out += lines[i];
    }
    return Value(std::move(out));
  }
  if (name == "wordcount") {
    Arguments(name, args, {});
    size_t words = 0;
    bool in_word = false;
    for (char32_t cp : text::decode(text_of())) {
      const bool word = text::is_alpha(cp) || text::is_digit(cp) || cp == '_';
      if (word && !in_word) ++words;
      in_word = word;
    }
    return Value(static_cast<int64_t>(words));
  }
  if (name == "center") {
    const Arguments a(name, args, {"width"});
    const std::string s = text_of();
    const int64_t width = a.get(0, Value(80)).as_int();
    const auto length = static_cast<int64_t>(text::length(s));
    if (width <= length) return Value(s);
    in.reserve(static_cast<size_t>(std::min<int64_t>(width, INT32_MAX)));
    // Python's str.center puts the odd space on the right when the padding is odd and the length even.
    const int64_t pad = width - length;
    const int64_t left = pad / 2 + (pad & width & 1);
    return Value(std::string(static_cast<size_t>(left), ' ') + s + std::string(static_cast<size_t>(pad - left), ' '));
  }
  if (name == "format") return printf_format(in, text_of(), args.keywords.empty() ? Value::tuple(args.positional) : [&] {
    Value d = Value::dict();
    for (const auto& [key, value] : args.keywords) d.set(key, value);
    return d;
  }());
  if (name == "attr") {
    // Jinja2's attr reads attributes only, never a dict's keys.
    const Arguments a(name, args, {"name"});
    return subject.is_dict() ? method(subject, a.get(0).str()) : in.attribute(subject, a.get(0).str());
  }
  throw TemplateError("no filter named '" + name + "'");
}

bool apply_test(Interpreter& in, const std::string& name, const Value& subject, const CallArgs& args) {
  if (name == "defined") return !subject.is_undefined();
  if (name == "undefined") return subject.is_undefined();
  if (name == "none") return subject.is_none();
  if (name == "boolean") return subject.is_bool();
  if (name == "true") return subject.is_bool() && subject.as_bool();
  if (name == "false") return subject.is_bool() && !subject.as_bool();
  if (name == "integer") return subject.is_int();
  if (name == "float") return subject.is_float();
  if (name == "number") return subject.is_number();
  if (name == "string") return subject.is_string();
  if (name == "mapping") return subject.is_dict();
  if (name == "iterable") return subject.is_undefined() || subject.is_string() || subject.is_list() || subject.is_dict();
  if (name == "sequence") return subject.is_undefined() || subject.is_string() || subject.is_list() || subject.is_dict();
  if (name == "callable") return subject.is_function();
  if (name == "escaped") return false;
  if (name == "lower" || name == "upper") {
    // str.islower / isupper: some cased character, and none of the other case.
    bool cased = false;
    in.touch(subject);
    for (char32_t cp : text::decode(subject.str(in.max_bytes()))) {
      if (name == "lower" ? text::to_lower(cp) != cp : text::to_upper(cp) != cp) return false;
      if (text::to_lower(cp) != cp || text::to_upper(cp) != cp) cased = true;
    }
    return cased;
  }
  if (name == "odd" || name == "even" || name == "divisibleby") {
    const Arguments a(name, args, {"num"});
    const Value divisor = name == "divisibleby" ? a.get(0) : Value(2);
    const Value rest = binary_operator(in, "%", subject, divisor);
    return name == "odd" ? rest == Value(1) : rest == Value(0);
  }
  static const std::pair<const char*, const char*> kComparisons[] = {
      {"eq", "=="}, {"equalto", "=="}, {"==", "=="}, {"ne", "!="}, {"!=", "!="}, {"lt", "<"}, {"lessthan", "<"},
      {"<", "<"}, {"le", "<="}, {"<=", "<="}, {"gt", ">"}, {"greaterthan", ">"}, {">", ">"}, {"ge", ">="},
      {">=", ">="}, {"in", "in"}, {"sameas", "=="}};
  for (const auto& [test, op] : kComparisons) {
    if (name == test) {
      const Arguments a(name, args, {"other"});
      if (!a.has(0)) throw TemplateError("test '" + name + "' needs an argument");
      if (name == "sameas" && subject.kind() != a.get(0).kind()) return false;
      return compare(in, op, subject, a.get(0));
    }
  }
  throw TemplateError("no test named '" + name + "'");
}

}  // namespace peak::jinja
