#include "sampling/json_schema.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "sampling/gbnf_integer_range.h"
#include "sampling/gbnf_text.h"
#include "sampling/json_schema_pattern.h"
#include "tokenizer/utf8.h"

namespace peak::sampling {

JsonSchemaError::JsonSchemaError(const std::string& pointer, const std::string& message)
    : std::runtime_error("at " + (pointer.empty() ? std::string("the root") : pointer) + ": " + message),
      pointer_(pointer),
      message_(message) {}

namespace {

using json::Value;

struct Primitive {
  std::string name;
  std::string body;
  std::vector<std::string> needs;  // the rules it uses
};

// llama.cpp's rules for JSON values, whitespace and string formats (see the header).
const std::vector<Primitive>& primitives() {
  static const std::string max_more_digits = std::to_string(kSchemaIntegerDigits - 1);
  static const std::string max_digits = std::to_string(kSchemaIntegerDigits);
  static const std::vector<Primitive> table = {
      {"space", R"(| " " | "\n"{1,2} [ \t]{0,20})", {}},
      {"boolean", R"("true" | "false")", {}},
      {"null", R"("null")", {}},
      {"integral-part", "[0] | [1-9] [0-9]{0," + max_more_digits + "}", {}},
      {"decimal-part", "[0-9]{1," + max_digits + "}", {}},
      {"integer", R"("-"? integral-part)", {"integral-part"}},
      {"number",
       R"("-"? integral-part ("." decimal-part)? ([eE] [-+]? integral-part)?)",
       {"integral-part", "decimal-part"}},
      {"char", R"([^"\\\x7F\x00-\x1F] | [\\] (["\\bfnrt] | "u" [0-9a-fA-F]{4}))", {}},
      {"string", R"("\"" char* "\"")", {"char"}},
      {"value",
       "object | array | string | number | boolean | null",
       {"object", "array", "string", "number", "boolean", "null"}},
      {"object",
       R"("{" space ( string ":" space value ( "," space string ":" space value )* )? space "}")",
       {"space", "string", "value"}},
      {"array", R"("[" space ( value ( "," space value )* )? space "]")", {"space", "value"}},
      {"date", R"([0-9]{4} "-" ( "0" [1-9] | "1" [0-2] ) "-" ( "0" [1-9] | [1-2] [0-9] | "3" [0-1] ))", {}},
      {"time",
       R"(( [01] [0-9] | "2" [0-3] ) ":" [0-5] [0-9] ":" [0-5] [0-9] ( "." [0-9]{3} )? )"
       R"(( "Z" | ( "+" | "-" ) ( [01] [0-9] | "2" [0-3] ) ":" [0-5] [0-9] ))",
       {}},
      {"date-time", R"(date "T" time)", {"date", "time"}},
      {"date-string", R"("\"" date "\"")", {"date"}},
      {"time-string", R"("\"" time "\"")", {"time"}},
      {"date-time-string", R"("\"" date-time "\"")", {"date-time"}},
      {"uuid",
       R"("\"" [0-9a-fA-F]{8} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{12} "\"")",
       {}},
  };
  return table;
}

const Primitive* find_primitive(const std::string& name) {
  for (const Primitive& primitive : primitives()) {
    if (primitive.name == name) return &primitive;
  }
  return nullptr;
}

bool is_one_of(const std::string& word, std::initializer_list<const char*> words) {
  return std::any_of(words.begin(), words.end(), [&](const char* w) { return word == w; });
}

bool is_annotation(const std::string& keyword) {
  return is_one_of(keyword, {"title", "description", "examples", "default", "deprecated", "readOnly", "writeOnly",
                             "$schema", "$id", "$comment", "$defs", "definitions"});
}
bool is_object_keyword(const std::string& k) {
  return is_one_of(k, {"properties", "required", "additionalProperties"});
}
bool is_array_keyword(const std::string& k) {
  return is_one_of(k, {"items", "prefixItems", "minItems", "maxItems", "uniqueItems"});
}
bool is_string_keyword(const std::string& k) { return is_one_of(k, {"minLength", "maxLength", "pattern", "format"}); }
bool is_bound_keyword(const std::string& k) {
  return is_one_of(k, {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"});
}
bool is_count_keyword(const std::string& k) { return is_one_of(k, {"minItems", "maxItems", "minLength", "maxLength"}); }
bool is_type_name(const std::string& t) {
  return is_one_of(t, {"object", "array", "string", "number", "integer", "boolean", "null"});
}
bool is_format(const std::string& f) { return is_one_of(f, {"date", "time", "date-time", "uuid"}); }

std::string quoted(const std::string& word) { return "'" + word + "'"; }

// A JSON pointer token: ~ and / escaped.
std::string pointer_token(const std::string& key) {
  std::string out;
  for (const char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

// A rule-name part: runs of characters other than [a-zA-Z0-9-] become '-'.
std::string name_part(const std::string& text) {
  constexpr size_t kMaxPart = 32;
  std::string out;
  for (const char c : text) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
    if (keep) {
      out += c;
    } else if (out.empty() || out.back() != '-') {
      out += '-';
    }
    if (out.size() == kMaxPart) break;
  }
  return out.empty() ? "x" : out;
}

// The text peak::json writes for `text` inside a string's quotes.
std::string json_string_text(const std::string& text) {
  std::string quoted_text;
  json::write_string(quoted_text, text);
  return quoted_text.substr(1, quoted_text.size() - 2);
}

std::vector<std::string> type_names(const Value& type) {
  if (type.is_string()) return {type.as_string()};
  std::vector<std::string> out;
  for (const Value& t : type.items()) out.push_back(t.as_string());
  return out;
}

bool value_has_type(const Value& value, const std::string& type) {
  switch (value.type()) {
    case json::Type::Null: return type == "null";
    case json::Type::Bool: return type == "boolean";
    case json::Type::String: return type == "string";
    case json::Type::Array: return type == "array";
    case json::Type::Object: return type == "object";
    case json::Type::Number:
      return type == "number" || (type == "integer" && std::isfinite(value.as_double()) &&
                                  std::floor(value.as_double()) == value.as_double());
  }
  return false;
}

// What one subschema contributes: GBNF to use as (part of) a rule's body.
struct Expr {
  std::string text;
  bool atomic = false;  // one rule name or literal: usable inside a sequence as it is
};
using Maybe = std::optional<Expr>;  // nullopt: no value satisfies the subschema

struct Site {
  std::string pointer;  // JSON pointer of the subschema
  std::string name;     // stem of the names of its rules ("" at the root)
};

Site child(const Site& site, const std::string& pointer_suffix, const std::string& part) {
  constexpr size_t kMaxName = 64;
  std::string name = site.name.empty() ? name_part(part) : site.name + "-" + name_part(part);
  if (name.size() > kMaxName) name = name.substr(name.size() - kMaxName);
  return {site.pointer + pointer_suffix, name};
}

// An object's optional member (or the run of additional ones): as the first
// member written, and as one that may follow.
struct OptionalMember {
  std::string name;
  std::string first;
  std::string next;
};

// allOf merged into one schema.
struct Merge {
  Value schema = Value::object();
  bool unsatisfiable = false;
  // Branches with their own additionalProperties (not true): their property names.
  std::vector<std::pair<Site, std::set<std::string>>> closed;
  std::set<std::string> refs;  // being merged, to refuse a ref that merges itself
};

class Converter {
 public:
  explicit Converter(const Value& root) : root_(root) {}
  std::string run();

 private:
  [[noreturn]] void fail(const Site& site, const std::string& message) const {
    throw JsonSchemaError(site.pointer, message);
  }
  void step(const Site& site, size_t cost, int depth);
  void check_keywords(const Value& schema, const Site& site) const;
  void check_form(const std::string& keyword, const Value& value, const Site& site) const;
  void check_company(const Value& schema, const Site& site) const;

  Maybe visit(const Value& schema, const Site& site, int depth);
  Maybe visit_ref(const Value& schema, const Site& site, int depth);
  std::string generate_ref(const std::string& ref, const Site& site, int depth);
  const Value& resolve(const std::string& ref, const Site& site) const;
  Maybe visit_alternatives(const Value& schema, const Site& site, int depth);
  Maybe visit_enum(const Value& schema) const;
  Maybe visit_types(const Value& schema, const Site& site, int depth);
  Maybe type_expression(const std::string& type, const Value& schema, const Site& site, int depth);
  Maybe number_expression(const Value& schema, const Site& site);
  Maybe integer_expression(const Value& schema, const Site& site);
  Maybe string_expression(const Value& schema, const Site& site);
  Maybe length_expression(const Value& schema, const Site& site);
  Maybe array_expression(const Value& schema, const Site& site, int depth);
  std::string rest_items(const std::string& item, uint32_t written, uint32_t min, uint32_t max, const Site& site);
  Maybe object_expression(const Value& schema, const Site& site, int depth);
  std::optional<std::string> member_rule(const std::string& key, const Value& schema, const Site& site, int depth);
  std::optional<OptionalMember> additional_members(const Value& additional, const std::vector<std::string>& names,
                                                   const Site& site, int depth);
  std::string other_key_rule(const std::vector<std::string>& names, const Site& site);
  std::string optional_members(const std::vector<OptionalMember>& members, const Site& site);

  Value merge_all_of(const Value& schema, const Site& site, int depth);
  void merge_branch(Merge& merge, const Value& branch, const Site& site, int depth);
  void merge_keyword(Merge& merge, const std::string& keyword, const Value& value, const Site& site);
  void merge_type(Merge& merge, const Value& type);
  void check_closed(const Merge& merge) const;

  std::string atom(const Site& site, const Expr& expr) { return expr.atomic ? expr.text : add_rule(site, expr.text); }
  std::string add_rule(const Site& site, const std::string& body);
  void set_rule(const Site& site, const std::string& name, const std::string& body);
  std::string primitive(const std::string& name);
  void count_repetition(const Site& site, const std::string& keyword, uint32_t min, uint32_t max);
  void check_left_recursion() const;

  const Value& root_;
  std::map<std::string, std::string> rules_;  // name -> body ("" while a ref's is being made)
  std::map<std::string, std::string> ref_rules_;
  std::map<std::string, std::string> ref_pointers_;  // ref rule -> its pointer
  // (rule, ref rule) where the ref rule starts a value of the rule.
  std::vector<std::pair<std::string, std::string>> start_refs_;
  std::string current_rule_ = "root";
  bool at_value_start_ = true;
  size_t steps_ = 0;
  size_t grammar_bytes_ = 0;
  uint64_t repetition_ = 0;
};

// Inside a member or an item: no longer at the start of the rule's value.
class InsideValue {
 public:
  explicit InsideValue(bool& at_start) : at_start_(at_start), saved_(at_start) { at_start_ = false; }
  ~InsideValue() { at_start_ = saved_; }
  InsideValue(const InsideValue&) = delete;
  InsideValue& operator=(const InsideValue&) = delete;

 private:
  bool& at_start_;
  bool saved_;
};

// ---- checks ----

void Converter::step(const Site& site, size_t cost, int depth) {
  if (depth > kSchemaMaxDepth) {
    fail(site, "the schema nests deeper than " + std::to_string(kSchemaMaxDepth) + " (kSchemaMaxDepth)");
  }
  steps_ += cost;
  if (steps_ > kSchemaMaxSteps) {
    fail(site, "more than " + std::to_string(kSchemaMaxSteps) + " subschemas to visit and merge (kSchemaMaxSteps)");
  }
}

void Converter::check_keywords(const Value& schema, const Site& site) const {
  for (const Value::Member& member : schema.members()) {
    const std::string& k = member.first;
    if (is_annotation(k)) continue;
    const bool known = is_object_keyword(k) || is_array_keyword(k) || is_string_keyword(k) || is_bound_keyword(k) ||
                       is_one_of(k, {"type", "enum", "const", "anyOf", "oneOf", "allOf", "$ref"});
    if (!known) fail(site, quoted(k) + " is not supported");
    check_form(k, member.second, site);
  }
  check_company(schema, site);
}

void Converter::check_form(const std::string& k, const Value& v, const Site& site) const {
  const bool schema_like = v.is_object() || v.is_bool();
  if (k == "type") {
    const bool list = v.is_array() && !v.items().empty() &&
                      std::all_of(v.items().begin(), v.items().end(), [](const Value& t) { return t.is_string(); });
    if (!v.is_string() && !list) fail(site, "'type' must be a type name or a non-empty list of them");
    for (const std::string& name : type_names(v)) {
      if (!is_type_name(name)) fail(site, "'type' names no JSON Schema type: " + quoted(name));
    }
  } else if (is_one_of(k, {"anyOf", "oneOf", "allOf"}) && (!v.is_array() || v.items().empty())) {
    fail(site, quoted(k) + " must be a non-empty array of schemas");
  } else if ((k == "enum" || k == "prefixItems") && !v.is_array()) {
    fail(site, quoted(k) + " must be an array");
  } else if ((k == "$ref" || k == "pattern" || k == "format") && !v.is_string()) {
    fail(site, quoted(k) + " must be a string");
  } else if (k == "properties" && !v.is_object()) {
    fail(site, "'properties' must be an object");
  } else if (k == "required" && (!v.is_array() || !std::all_of(v.items().begin(), v.items().end(),
                                                               [](const Value& n) { return n.is_string(); }))) {
    fail(site, "'required' must be an array of strings");
  } else if ((k == "additionalProperties" && !schema_like) || (k == "items" && !schema_like && !v.is_array())) {
    fail(site, quoted(k) + " must be a schema");
  } else if (is_count_keyword(k) && (!v.is_integer() || v.as_int() < 0)) {
    fail(site, quoted(k) + " must be a non-negative integer");
  } else if (is_bound_keyword(k) && !v.is_number()) {
    fail(site, quoted(k) + " must be a number");
  } else if (k == "uniqueItems" && (!v.is_bool() || v.as_bool())) {
    fail(site, "'uniqueItems' is not supported (but false)");
  } else if (k == "format" && !is_format(v.as_string())) {
    fail(site, "'format' " + quoted(v.as_string()) + " is not supported (date, time, date-time and uuid are)");
  }
}

// Keywords that may not stand together.
void Converter::check_company(const Value& schema, const Site& site) const {
  const char* alone = schema.find("$ref")    ? "$ref"
                      : schema.find("anyOf") ? "anyOf"
                      : schema.find("oneOf") ? "oneOf"
                      : schema.find("enum")  ? "enum"
                      : schema.find("const") ? "const"
                                             : nullptr;
  const int string_kinds = (schema.find("pattern") ? 1 : 0) + (schema.find("format") ? 1 : 0) +
                           (schema.find("minLength") || schema.find("maxLength") ? 1 : 0);
  if (string_kinds > 1) fail(site, "'pattern', 'format' and 'minLength'/'maxLength' together are not supported");
  if (alone == nullptr) return;
  const bool values = std::string(alone) == "enum" || std::string(alone) == "const";
  for (const Value::Member& member : schema.members()) {
    const std::string& k = member.first;
    if (k == alone || is_annotation(k) || (values && is_one_of(k, {"type", "enum", "const"}))) continue;
    fail(site, quoted(k) + " beside " + quoted(alone) + " is not supported");
  }
}

// ---- rules ----

std::string Converter::add_rule(const Site& site, const std::string& body) {
  const std::string stem = site.name.empty() ? "root" : site.name;
  const bool reserved = !site.name.empty() && (stem == "root" || find_primitive(stem) != nullptr);
  for (size_t i = 0;; ++i) {
    if (i == 0 && reserved) continue;
    const std::string name = i == 0 ? stem : stem + std::to_string(i);
    const auto found = rules_.find(name);
    if (found != rules_.end() && found->second == body) return name;
    if (found != rules_.end()) continue;
    set_rule(site, name, body);
    return name;
  }
}

void Converter::set_rule(const Site& site, const std::string& name, const std::string& body) {
  rules_[name] = body;
  if (rules_.size() > kSchemaMaxRules) {
    fail(site, "the grammar would have more than " + std::to_string(kSchemaMaxRules) + " rules (kSchemaMaxRules)");
  }
  grammar_bytes_ += name.size() + body.size() + 6;
  if (grammar_bytes_ > kSchemaMaxGrammarBytes) {
    fail(site, "the grammar would be longer than " + std::to_string(kSchemaMaxGrammarBytes) +
                   " bytes (kSchemaMaxGrammarBytes)");
  }
}

std::string Converter::primitive(const std::string& name) {
  if (rules_.count(name)) return name;
  const Primitive* p = find_primitive(name);
  rules_[name] = p->body;
  grammar_bytes_ += name.size() + p->body.size() + 6;
  for (const std::string& need : p->needs) primitive(need);
  return name;
}

void Converter::count_repetition(const Site& site, const std::string& keyword, uint32_t min, uint32_t max) {
  const uint32_t count = max == kUnboundedCount ? min : max;
  if (count > kSchemaMaxRepetition) {
    fail(site, quoted(keyword) + " asks for " + std::to_string(count) + " repetitions: more than " +
                   std::to_string(kSchemaMaxRepetition) + " (kSchemaMaxRepetition)");
  }
  repetition_ += count;
  if (repetition_ > kSchemaMaxRepetitionTotal) {
    fail(site, "the repetition counts of the grammar add up to more than " + std::to_string(kSchemaMaxRepetitionTotal) +
                   " (kSchemaMaxRepetitionTotal)");
  }
}

// ---- subschemas ----

Maybe Converter::visit(const Value& schema, const Site& site, int depth) {
  step(site, 1, depth);
  if (schema.is_bool()) return schema.as_bool() ? Maybe(Expr{primitive("value"), true}) : std::nullopt;
  if (!schema.is_object()) {
    fail(site, std::string("a schema must be an object or a boolean, not ") + json::type_name(schema.type()));
  }
  check_keywords(schema, site);
  if (schema.find("$ref")) return visit_ref(schema, site, depth);
  if (schema.find("allOf")) return visit(merge_all_of(schema, site, depth), site, depth + 1);
  if (schema.find("anyOf") || schema.find("oneOf")) return visit_alternatives(schema, site, depth);
  if (schema.find("enum") || schema.find("const")) return visit_enum(schema);
  return visit_types(schema, site, depth);
}

Maybe Converter::visit_ref(const Value& schema, const Site& site, int depth) {
  const std::string& ref = schema.find("$ref")->as_string();
  const auto found = ref_rules_.find(ref);
  const std::string name = found != ref_rules_.end() ? found->second : generate_ref(ref, site, depth);
  if (at_value_start_) start_refs_.emplace_back(current_rule_, name);
  return Expr{name, true};
}

// The rule of a ref's target, named before its body is made so that the
// target may refer to itself.
std::string Converter::generate_ref(const std::string& ref, const Site& site, int depth) {
  const Value& target = resolve(ref, site);
  const Site target_site{ref.substr(1), "ref" + (ref.size() > 1 ? name_part(ref.substr(1)) : "")};
  std::string name = target_site.name;
  for (size_t i = 1; rules_.count(name) || find_primitive(name); ++i) name = target_site.name + std::to_string(i);
  rules_[name] = "";
  ref_rules_[ref] = name;
  ref_pointers_[name] = target_site.pointer;
  const std::string saved_rule = current_rule_;
  const bool saved_start = at_value_start_;
  current_rule_ = name;
  at_value_start_ = true;
  const Maybe expr = visit(target, {target_site.pointer, name}, depth + 1);
  current_rule_ = saved_rule;
  at_value_start_ = saved_start;
  if (!expr) fail(site, "'$ref' " + quoted(ref) + " points to a schema that no value satisfies");
  set_rule(site, name, expr->text);
  return name;
}

const Value& Converter::resolve(const std::string& ref, const Site& site) const {
  if (ref.empty() || ref[0] != '#' || (ref.size() > 1 && ref[1] != '/')) {
    fail(site, "'$ref' " + quoted(ref) + " is not supported: only \"#\" and pointers \"#/...\" into this schema are");
  }
  const Value* at = &root_;
  size_t pos = 1;
  while (pos < ref.size()) {
    const size_t end = std::min(ref.find('/', pos + 1), ref.size());
    std::string token;
    for (size_t i = pos + 1; i < end; ++i) {
      const bool escape = ref[i] == '~' && i + 1 < end && (ref[i + 1] == '0' || ref[i + 1] == '1');
      token += escape ? (ref[++i] == '0' ? '~' : '/') : ref[i];
    }
    const bool index = at->is_array() && !token.empty() && token.size() < 10 &&
                       std::all_of(token.begin(), token.end(), [](char c) { return c >= '0' && c <= '9'; });
    const size_t i = index ? std::stoul(token) : 0;
    at = index ? (i < at->items().size() ? &at->items()[i] : nullptr) : at->find(token);
    if (at == nullptr) fail(site, "'$ref' " + quoted(ref) + " points to nothing in the schema");
    pos = end;
  }
  return *at;
}

Maybe Converter::visit_alternatives(const Value& schema, const Site& site, int depth) {
  const std::string keyword = schema.find("anyOf") ? "anyOf" : "oneOf";
  const std::vector<Value>& branches = schema.find(keyword)->items();
  std::vector<Expr> found;
  for (size_t i = 0; i < branches.size(); ++i) {
    const std::string part = site.name.empty() ? "alternative-" + std::to_string(i) : std::to_string(i);
    const Maybe expr = visit(branches[i], child(site, "/" + keyword + "/" + std::to_string(i), part), depth + 1);
    if (expr) found.push_back(*expr);
  }
  if (found.empty()) return std::nullopt;
  if (found.size() == 1) return found[0];
  std::string text;
  for (const Expr& expr : found) text += (text.empty() ? "" : " | ") + expr.text;
  return Expr{text, false};
}

// enum and const (together: the enum's values equal to the const), of `type`.
Maybe Converter::visit_enum(const Value& schema) const {
  std::vector<Value> values;
  const Value* const_value = schema.find("const");
  if (const Value* listed = schema.find("enum")) {
    for (const Value& v : listed->items()) {
      if (const_value == nullptr || v == *const_value) values.push_back(v);
    }
  } else {
    values.push_back(*const_value);
  }
  std::vector<std::string> literals;
  const Value* type = schema.find("type");
  const std::vector<std::string> types = type ? type_names(*type) : std::vector<std::string>{};
  for (const Value& v : values) {
    const bool typed = type == nullptr || std::any_of(types.begin(), types.end(),
                                                      [&](const std::string& t) { return value_has_type(v, t); });
    const std::string literal = gbnf_literal(json::write(v));
    if (typed && std::find(literals.begin(), literals.end(), literal) == literals.end()) literals.push_back(literal);
  }
  if (literals.empty()) return std::nullopt;
  std::string text;
  for (const std::string& literal : literals) text += (text.empty() ? "" : " | ") + literal;
  return Expr{text, literals.size() == 1};
}

Maybe Converter::visit_types(const Value& schema, const Site& site, int depth) {
  std::vector<std::string> types;
  if (const Value* type = schema.find("type")) {
    types = type_names(*type);
  } else {
    const bool constrained = std::any_of(schema.members().begin(), schema.members().end(), [](const Value::Member& m) {
      return is_object_keyword(m.first) || is_array_keyword(m.first) || is_string_keyword(m.first) ||
             is_bound_keyword(m.first);
    });
    if (!constrained) return Expr{primitive("value"), true};
    types = {"object", "array", "string", "number", "boolean", "null"};
  }
  const bool with_number = std::find(types.begin(), types.end(), "number") != types.end();
  std::vector<Expr> found;
  std::set<std::string> seen;
  for (const std::string& type : types) {
    if ((type == "integer" && with_number) || !seen.insert(type).second) continue;
    if (Maybe expr = type_expression(type, schema, site, depth)) found.push_back(*expr);
  }
  if (found.empty()) return std::nullopt;
  if (found.size() == 1) return found[0];
  std::string text;
  for (const Expr& expr : found) text += (text.empty() ? "" : " | ") + expr.text;
  return Expr{text, false};
}

Maybe Converter::type_expression(const std::string& type, const Value& schema, const Site& site, int depth) {
  if (type == "null" || type == "boolean") return Expr{primitive(type), true};
  if (type == "number") return number_expression(schema, site);
  if (type == "integer") return integer_expression(schema, site);
  if (type == "string") return string_expression(schema, site);
  if (type == "array") return array_expression(schema, site, depth);
  return object_expression(schema, site, depth);
}

Maybe Converter::number_expression(const Value& schema, const Site& site) {
  for (const Value::Member& member : schema.members()) {
    if (is_bound_keyword(member.first)) {
      fail(site, quoted(member.first) +
                     " is supported on integers only: bounds on 'number' are not (use \"type\": \"integer\")");
    }
  }
  return Expr{primitive("number"), true};
}

// ---- integers ----

constexpr int64_t kLargestInteger = 9999999999999999;  // kSchemaIntegerDigits nines
constexpr double kBeyondLargest = 1e16;                // kLargestInteger + 1, exact as a double
static_assert(kSchemaIntegerDigits == 16, "kLargestInteger has kSchemaIntegerDigits digits");

// The least integer >= value (exclusive: > value), clamped to one past the digits.
int64_t integer_from(const Value& bound, bool exclusive) {
  if (bound.is_integer())
    return std::clamp<int64_t>(bound.as_int(), -kLargestInteger - 1, kLargestInteger + 1) + exclusive;
  const double v = bound.as_double();
  const double least = exclusive ? std::floor(v) + 1 : std::ceil(v);
  return static_cast<int64_t>(std::clamp(least, -kBeyondLargest, kBeyondLargest));
}

// The greatest integer <= value (exclusive: < value), clamped likewise.
int64_t integer_to(const Value& bound, bool exclusive) {
  if (bound.is_integer())
    return std::clamp<int64_t>(bound.as_int(), -kLargestInteger - 1, kLargestInteger + 1) - exclusive;
  const double v = bound.as_double();
  const double greatest = exclusive ? std::ceil(v) - 1 : std::floor(v);
  return static_cast<int64_t>(std::clamp(greatest, -kBeyondLargest, kBeyondLargest));
}

Maybe Converter::integer_expression(const Value& schema, const Site&) {
  const Value* minimum = schema.find("minimum");
  const Value* maximum = schema.find("maximum");
  const Value* exclusive_minimum = schema.find("exclusiveMinimum");
  const Value* exclusive_maximum = schema.find("exclusiveMaximum");
  if (!minimum && !maximum && !exclusive_minimum && !exclusive_maximum) return Expr{primitive("integer"), true};
  int64_t low = -kLargestInteger;
  int64_t high = kLargestInteger;
  if (minimum) low = std::max(low, integer_from(*minimum, false));
  if (exclusive_minimum) low = std::max(low, integer_from(*exclusive_minimum, true));
  if (maximum) high = std::min(high, integer_to(*maximum, false));
  if (exclusive_maximum) high = std::min(high, integer_to(*exclusive_maximum, true));
  if (low > high) return std::nullopt;
  return Expr{gbnf_integer_range(low, high), false};
}

// ---- strings ----

Maybe Converter::string_expression(const Value& schema, const Site& site) {
  if (const Value* pattern = schema.find("pattern")) {
    PatternGrammar grammar;
    try {
      grammar = pattern_to_gbnf(pattern->as_string(), primitive("char"));
    } catch (const PatternError& e) {
      fail(site, "'pattern' " + quoted(pattern->as_string()) + ": " + e.what());
    }
    repetition_ += grammar.repetition;
    count_repetition(site, "pattern", 0, 0);
    return Expr{grammar.expression, false};
  }
  if (const Value* format = schema.find("format")) {
    const std::string& name = format->as_string();
    return Expr{primitive(name == "uuid" ? name : name + "-string"), true};
  }
  if (schema.find("minLength") || schema.find("maxLength")) return length_expression(schema, site);
  return Expr{primitive("string"), true};
}

Maybe Converter::length_expression(const Value& schema, const Site& site) {
  const Value* min_length = schema.find("minLength");
  const Value* max_length = schema.find("maxLength");
  const int64_t min = min_length ? min_length->as_int() : 0;
  const int64_t max = max_length ? max_length->as_int() : -1;
  if (max >= 0 && min > max) return std::nullopt;
  const std::string quote = gbnf_literal("\"");
  if (max == 0) return Expr{gbnf_literal("\"\""), true};
  const auto count = [](int64_t n) { return static_cast<uint32_t>(std::min<int64_t>(n, UINT32_MAX - 1)); };
  const uint32_t low = count(min);
  const uint32_t high = max < 0 ? kUnboundedCount : count(max);
  count_repetition(site, max_length && max >= min ? "maxLength" : "minLength", low, high);
  return Expr{quote + " " + primitive("char") + gbnf_repetition(low, high) + " " + quote, false};
}

// ---- arrays ----

uint32_t count_of(const Value* keyword, uint32_t otherwise) {
  if (keyword == nullptr) return otherwise;
  return static_cast<uint32_t>(std::min<int64_t>(keyword->as_int(), UINT32_MAX - 1));
}

Maybe Converter::array_expression(const Value& schema, const Site& site, int depth) {
  const Value* items = schema.find("items");
  const Value* prefix = schema.find("prefixItems");
  if (!items && !prefix && !schema.find("minItems") && !schema.find("maxItems")) return Expr{primitive("array"), true};
  const InsideValue inside(at_value_start_);
  primitive("space");
  const bool tuple = items && items->is_array();  // draft 2019's form of prefixItems
  const std::vector<Value> no_prefix;
  const std::vector<Value>& prefix_schemas = tuple ? items->items() : prefix ? prefix->items() : no_prefix;
  const std::string prefix_keyword = tuple ? "/items/" : "/prefixItems/";
  const uint32_t min = count_of(schema.find("minItems"), 0);
  uint32_t max = count_of(schema.find("maxItems"), kUnboundedCount);
  std::vector<std::string> prefix_rules;
  for (size_t i = 0; i < prefix_schemas.size() && prefix_rules.size() < max; ++i) {
    const Site item_site = child(site, prefix_keyword + std::to_string(i), "prefix-" + std::to_string(i));
    const Maybe expr = visit(prefix_schemas[i], item_site, depth + 1);
    if (!expr) break;  // no array holds an item here
    prefix_rules.push_back(atom(item_site, *expr));
  }
  const auto written = static_cast<uint32_t>(prefix_rules.size());
  if (written < prefix_schemas.size()) max = std::min(max, written);
  std::string rest;
  if (max > written) {
    const Site item_site = child(site, "/items", "item");
    const Maybe expr = tuple || !items ? Maybe(Expr{primitive("value"), true}) : visit(*items, item_site, depth + 1);
    if (expr) rest = rest_items(atom(item_site, *expr), written, min, max, site);
    if (!expr) max = written;
  }
  if (min > max) return std::nullopt;
  // Prefix items from the last: those past minItems may be left out, with all after them.
  std::string tail = rest;
  for (size_t j = prefix_rules.size(); j-- > 0;) {
    std::string item = (j ? "\",\" space " : "") + prefix_rules[j] + (tail.empty() ? "" : " " + tail);
    tail = j < min ? item : add_rule(child(site, "", "tail-" + std::to_string(j)), "(" + item + ")?");
  }
  primitive("space");
  if (tail.empty()) return Expr{"\"[\" space \"]\"", false};
  return Expr{"\"[\" space " + tail + " space \"]\"", false};
}

// The items after `written` prefix items (item: one item's rule).
std::string Converter::rest_items(const std::string& item, uint32_t written, uint32_t min, uint32_t max,
                                  const Site& site) {
  const uint32_t low = min > written ? min - written : 0;
  const uint32_t high = max == kUnboundedCount ? max : max - written;
  count_repetition(site, max == kUnboundedCount ? "minItems" : "maxItems", low, high);
  primitive("space");
  const std::string more = "(\",\" space " + item + ")";
  if (written > 0) return more + gbnf_repetition(low, high);
  const uint32_t more_high = high == kUnboundedCount ? high : high - 1;
  const std::string first = item + (more_high == 0 ? "" : " " + more + gbnf_repetition(low ? low - 1 : 0, more_high));
  return low == 0 ? "(" + first + ")?" : first;
}

// ---- objects ----

Maybe Converter::object_expression(const Value& schema, const Site& site, int depth) {
  const Value* properties = schema.find("properties");
  const Value* required = schema.find("required");
  const Value* additional = schema.find("additionalProperties");
  const bool any_member = !additional || (additional->is_bool() && additional->as_bool());
  if (!properties && !required && any_member) return Expr{primitive("object"), true};
  const InsideValue inside(at_value_start_);
  primitive("space");
  // llama.cpp's default: declared properties close the object.
  const Value open = Value(!properties);
  const Value& extra = additional ? *additional : open;
  std::vector<std::pair<std::string, const Value*>> members;
  if (properties) {
    for (const Value::Member& m : properties->members()) members.emplace_back(m.first, &m.second);
  }
  std::vector<std::string> names;
  for (const auto& member : members) names.push_back(member.first);
  std::set<std::string> must;
  if (required) {
    for (const Value& name : required->items()) {
      must.insert(name.as_string());
      if (std::find(names.begin(), names.end(), name.as_string()) != names.end()) continue;
      names.push_back(name.as_string());
      members.emplace_back(name.as_string(), &extra);
    }
  }
  std::vector<std::string> required_rules;
  std::vector<OptionalMember> optional;
  for (const auto& [key, member_schema] : members) {
    const bool is_required = must.count(key) > 0;
    const Site member_site =
        child(site, member_schema == &extra ? "/additionalProperties" : "/properties/" + pointer_token(key), key);
    const std::optional<std::string> rule = member_rule(key, *member_schema, member_site, depth);
    if (!rule && is_required) return std::nullopt;
    if (!rule) continue;
    if (is_required) required_rules.push_back(*rule);
    if (!is_required) optional.push_back({key, *rule, "(\",\" space " + *rule + ")?"});
  }
  if (std::optional<OptionalMember> more = additional_members(extra, names, site, depth)) optional.push_back(*more);
  primitive("space");
  std::string body = "\"{\" space ";
  for (size_t i = 0; i < required_rules.size(); ++i) body += (i ? " \",\" space " : "") + required_rules[i];
  if (!optional.empty()) {
    const std::string choice = optional_members(optional, site);
    body += required_rules.empty() ? "(" + choice + ")?" : " (\",\" space (" + choice + "))?";
  }
  if (required_rules.empty() && optional.empty()) return Expr{"\"{\" space \"}\"", false};
  return Expr{body + " space \"}\"", false};
}

// `"key" space ":" space value` as a rule; nullopt when no value fits.
std::optional<std::string> Converter::member_rule(const std::string& key, const Value& schema, const Site& site,
                                                  int depth) {
  const Maybe value = visit(schema, site, depth + 1);
  if (!value) return std::nullopt;
  std::string quoted_key;
  json::write_string(quoted_key, key);
  const std::string body = gbnf_literal(quoted_key) + " space \":\" space " + atom(site, *value);
  return add_rule(child(site, "", "kv"), body);
}

std::optional<OptionalMember> Converter::additional_members(const Value& additional,
                                                            const std::vector<std::string>& names, const Site& site,
                                                            int depth) {
  if (additional.is_bool() && !additional.as_bool()) return std::nullopt;
  const Site value_site = child(site, "/additionalProperties", "additional-value");
  const Maybe value = visit(additional, value_site, depth + 1);
  if (!value) return std::nullopt;
  const std::string key = names.empty() ? primitive("string") : other_key_rule(names, site);
  const std::string kv = add_rule(child(site, "", "additional-kv"), key + " \":\" space " + atom(value_site, *value));
  return OptionalMember{"additional", kv + " (\",\" space " + kv + ")*", "(\",\" space " + kv + ")*"};
}

// A string key other than `names`, written without escapes: for each prefix w
// of a name, w then a character that no name continues w with, then anything;
// and w itself when it is no name.
std::string Converter::other_key_rule(const std::vector<std::string>& names, const Site& site) {
  struct Node {
    CodePointSet next;
    bool is_name = false;
  };
  std::map<std::u32string, Node> prefixes;
  size_t size = 0;
  for (const std::string& name : names) {
    if (json_string_text(name) != name) {
      fail(site, "'additionalProperties' beside the property name " + quoted(name) +
                     ", which JSON writes with escapes, is not supported");
    }
    const std::vector<uint32_t> cps = tokenizer::decode_utf8(name);
    size += (cps.size() + 1) * (name.size() + 40);
    if (size > kSchemaMaxGrammarBytes)
      fail(site, "the property names are too long to exclude from 'additionalProperties' (kSchemaMaxGrammarBytes)");
    std::u32string prefix;
    for (const uint32_t cp : cps) {
      prefixes[prefix].next.add(cp, cp);
      prefix += static_cast<char32_t>(cp);
    }
    prefixes[prefix].is_name = true;
  }
  const CodePointSet plain = CodePointSet{{0x00, 0x1F}, {'"', '"'}, {'\\', '\\'}, {0x7F, 0x7F}}.complement();
  std::string body;
  for (const auto& [prefix, node] : prefixes) {
    std::string text;
    for (const char32_t cp : prefix) tokenizer::append_utf8(text, static_cast<uint32_t>(cp));
    const std::string written = text.empty() ? "" : gbnf_literal(text) + " ";
    const CodePointSet other = plain.intersect(node.next.complement());
    body += (body.empty() ? "" : " | ") + written + gbnf_char_class(other) + " " + primitive("char") + "*";
    if (!node.is_name) body += " | " + (text.empty() ? "\"\"" : gbnf_literal(text));
  }
  const std::string quote = gbnf_literal("\"");
  return add_rule(child(site, "", "additional-k"), quote + " (" + body + ") " + quote);
}

// The optional members, each of which may be left out, in their order: the
// first one written, then a rule for what may follow it.
std::string Converter::optional_members(const std::vector<OptionalMember>& members, const Site& site) {
  std::vector<std::string> after(members.size());  // after[i]: what may follow members[i]
  for (size_t i = members.size() - 1; i-- > 0;) {
    const std::string body = members[i + 1].next + (after[i + 1].empty() ? "" : " " + after[i + 1]);
    after[i] = add_rule(child(site, "", members[i].name + "-rest"), body);
  }
  std::string choice;
  for (size_t i = 0; i < members.size(); ++i) {
    choice += (i ? " | " : "") + members[i].first + (after[i].empty() ? "" : " " + after[i]);
  }
  return choice;
}

// ---- allOf ----

Value Converter::merge_all_of(const Value& schema, const Site& site, int depth) {
  Merge merge;
  Value siblings = Value::object();
  for (const Value::Member& member : schema.members()) {
    if (member.first != "allOf") siblings.set(member.first, member.second);
  }
  merge_branch(merge, siblings, site, depth);
  const std::vector<Value>& branches = schema.find("allOf")->items();
  for (size_t i = 0; i < branches.size(); ++i) {
    merge_branch(merge, branches[i], child(site, "/allOf/" + std::to_string(i), std::to_string(i)), depth + 1);
  }
  if (merge.unsatisfiable) return Value(false);
  check_closed(merge);
  return merge.schema;
}

void Converter::merge_branch(Merge& merge, const Value& branch, const Site& site, int depth) {
  step(site, 1 + branch.members().size(), depth);
  if (branch.is_bool()) {
    merge.unsatisfiable |= !branch.as_bool();
    return;
  }
  if (!branch.is_object())
    fail(site, std::string("a schema must be an object or a boolean, not ") + json::type_name(branch.type()));
  check_keywords(branch, site);
  if (const Value* ref = branch.find("$ref")) {
    if (!merge.refs.insert(ref->as_string()).second)
      fail(site, "'$ref' " + quoted(ref->as_string()) + " merges itself into 'allOf'");
    merge_branch(merge, resolve(ref->as_string(), site), {ref->as_string().substr(1), site.name}, depth + 1);
    merge.refs.erase(ref->as_string());
    return;
  }
  if (branch.find("anyOf") || branch.find("oneOf")) fail(site, "'anyOf' and 'oneOf' inside 'allOf' are not supported");
  if (const Value* all_of = branch.find("allOf")) {
    for (size_t i = 0; i < all_of->items().size(); ++i) {
      merge_branch(merge, all_of->items()[i], child(site, "/allOf/" + std::to_string(i), std::to_string(i)), depth + 1);
    }
  }
  for (const Value::Member& member : branch.members()) {
    if (member.first != "allOf" && !is_annotation(member.first))
      merge_keyword(merge, member.first, member.second, site);
  }
  const Value* additional = branch.find("additionalProperties");
  if (additional && !(additional->is_bool() && additional->as_bool())) {
    std::set<std::string> names;
    if (const Value* properties = branch.find("properties")) {
      for (const Value::Member& m : properties->members()) names.insert(m.first);
    }
    merge.closed.emplace_back(site, names);
  }
}

void Converter::merge_keyword(Merge& merge, const std::string& k, const Value& v, const Site& site) {
  const Value* old = merge.schema.find(k);
  if (old == nullptr) {
    merge.schema.set(k, v);
  } else if (k == "type") {
    merge_type(merge, v);
  } else if (k == "properties") {
    Value properties = *old;
    for (const Value::Member& m : v.members()) {
      const Value* both = properties.find(m.first);
      properties.set(m.first,
                     both ? Value::object().set("allOf", Value::array().push(*both).push(m.second)) : m.second);
    }
    merge.schema.set(k, properties);
  } else if (k == "required" || k == "enum") {
    Value list = Value::array();
    const std::vector<Value>& mine = old->items();
    const std::vector<Value>& theirs = v.items();
    for (const Value& item : mine) {
      if (k == "enum" && std::find(theirs.begin(), theirs.end(), item) == theirs.end()) continue;
      list.push(item);
    }
    for (const Value& item : theirs) {
      if (k == "required" && std::find(mine.begin(), mine.end(), item) == mine.end()) list.push(item);
    }
    merge.schema.set(k, list);
  } else if (is_one_of(k, {"minimum", "exclusiveMinimum", "minItems", "minLength"})) {
    if (v.as_double() > old->as_double()) merge.schema.set(k, v);
  } else if (is_one_of(k, {"maximum", "exclusiveMaximum", "maxItems", "maxLength"})) {
    if (v.as_double() < old->as_double()) merge.schema.set(k, v);
  } else if (k == "const") {
    merge.unsatisfiable |= *old != v;
  } else if (*old != v) {
    fail(site, quoted(k) + " differs between the branches of 'allOf': they cannot be merged");
  }
}

void Converter::merge_type(Merge& merge, const Value& type) {
  const std::vector<std::string> mine = type_names(*merge.schema.find("type"));
  const std::vector<std::string> theirs = type_names(type);
  const auto has = [](const std::vector<std::string>& list, const char* t) {
    return std::find(list.begin(), list.end(), t) != list.end();
  };
  Value both = Value::array();
  for (const std::string& t : mine) {
    const bool shared = has(theirs, t.c_str()) || (t == "integer" && has(theirs, "number"));
    if (shared) both.push(t);
  }
  if (has(mine, "number") && has(theirs, "integer") && !has(mine, "integer")) both.push("integer");
  merge.unsatisfiable |= both.items().empty();
  merge.schema.set("type", both.items().empty() ? Value(type) : both);
}

// additionalProperties of a branch would also judge the properties that the
// other branches declare: refused rather than merged wrongly.
void Converter::check_closed(const Merge& merge) const {
  const Value* properties = merge.schema.find("properties");
  if (properties == nullptr) return;
  for (const auto& [site, names] : merge.closed) {
    for (const Value::Member& m : properties->members()) {
      if (names.count(m.first) == 0) {
        fail(site, "'additionalProperties' here would also apply to " + quoted(m.first) +
                       " of another branch of 'allOf': not supported");
      }
    }
  }
}

// ---- the grammar ----

// A ref rule that can reach itself before any character is left recursion,
// which no grammar of this kind can run.
void Converter::check_left_recursion() const {
  std::map<std::string, std::vector<std::string>> edges;
  for (const auto& [from, to] : start_refs_) edges[from].push_back(to);
  std::map<std::string, int> state;  // 1: on the path, 2: done
  std::vector<std::pair<std::string, size_t>> path;
  for (const auto& start : edges) {
    if (state[start.first]) continue;
    path.emplace_back(start.first, 0);
    state[start.first] = 1;
    while (!path.empty()) {
      auto& [rule, next] = path.back();
      const std::vector<std::string>& out = edges[rule];
      if (next == out.size()) {
        state[rule] = 2;
        path.pop_back();
        continue;
      }
      const std::string& to = out[next++];
      if (state[to] == 1) {
        fail({ref_pointers_.at(to), to}, "'$ref' reaches itself before any value starts (left recursion)");
      }
      if (state[to] == 0) {
        state[to] = 1;
        path.emplace_back(to, 0);
      }
    }
  }
}

// The rule names a body uses (outside its literals and classes).
std::vector<std::string> names_used(const std::string& body) {
  std::vector<std::string> names;
  for (size_t i = 0; i < body.size();) {
    const char c = body[i];
    if (c == '"' || c == '[') {
      const char close = c == '"' ? '"' : ']';
      for (++i; i < body.size() && body[i] != close; ++i) i += body[i] == '\\';
      ++i;
    } else if (std::isalnum(static_cast<unsigned char>(c)) || c == '-') {
      const size_t begin = i;
      while (i < body.size() && (std::isalnum(static_cast<unsigned char>(body[i])) || body[i] == '-')) ++i;
      names.push_back(body.substr(begin, i - begin));
    } else {
      ++i;
    }
  }
  return names;
}

std::string Converter::run() {
  const Site top{"", ""};
  const Maybe expr = visit(root_, top, 0);
  if (!expr) fail(top, "no JSON value satisfies the schema");
  set_rule(top, "root", expr->text);
  check_left_recursion();
  // Only the rules root reaches: branches that turned out empty leave theirs.
  std::set<std::string> reached = {"root"};
  std::vector<std::string> pending = {"root"};
  while (!pending.empty()) {
    const std::string rule = pending.back();
    pending.pop_back();
    for (const std::string& name : names_used(rules_.at(rule))) {
      if (rules_.count(name) && reached.insert(name).second) pending.push_back(name);
    }
  }
  std::string out;
  for (const std::string& name : reached) out += name + " ::= " + rules_.at(name) + "\n";
  return out;
}

}  // namespace

std::string json_schema_to_gbnf(const json::Value& schema) { return Converter(schema).run(); }

std::string json_schema_to_gbnf(std::string_view schema_json) {
  json::Value schema;
  std::string error;
  json::ParseLimits limits;
  limits.max_depth = 2 * kSchemaMaxDepth;
  if (!json::parse(schema_json, &schema, &error, limits)) throw JsonSchemaError("", "the schema is not JSON: " + error);
  return json_schema_to_gbnf(schema);
}

std::string json_object_gbnf() { return json_schema_to_gbnf(Value::object().set("type", "object")); }

}  // namespace peak::sampling
