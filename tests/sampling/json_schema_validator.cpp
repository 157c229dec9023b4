#include "json_schema_validator.h"

#include <cmath>
#include <cstdint>
#include <regex>
#include <set>
#include <stdexcept>
#include <vector>

namespace peak::sampling::testing {
namespace {

using json::Value;

// UTF-8 (valid, as peak::json guarantees) to code points.
std::wstring wide(const std::string& text) {
  std::wstring out;
  for (size_t i = 0; i < text.size();) {
    const auto lead = static_cast<unsigned char>(text[i]);
    const int extra = lead < 0x80 ? 0 : lead < 0xE0 ? 1 : lead < 0xF0 ? 2 : 3;
    uint32_t cp = extra == 0 ? lead : lead & (0x3F >> extra);
    for (int k = 1; k <= extra; ++k) cp = (cp << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3F);
    out += static_cast<wchar_t>(cp);
    i += 1 + extra;
  }
  return out;
}

bool digits(const std::string& s, size_t at, size_t count) {
  if (at + count > s.size()) return false;
  for (size_t i = at; i < at + count; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
  }
  return true;
}

int number_at(const std::string& s, size_t at) { return (s[at] - '0') * 10 + (s[at + 1] - '0'); }

// YYYY-MM-DD, month 01-12, day 01-31.
bool is_date(const std::string& s, size_t at, size_t* end) {
  if (!digits(s, at, 4) || at + 10 > s.size() || s[at + 4] != '-' || s[at + 7] != '-') return false;
  if (!digits(s, at + 5, 2) || !digits(s, at + 8, 2)) return false;
  const int month = number_at(s, at + 5);
  const int day = number_at(s, at + 8);
  *end = at + 10;
  return month >= 1 && month <= 12 && day >= 1 && day <= 31;
}

bool is_clock(const std::string& s, size_t at, int max_first) {
  return digits(s, at, 2) && number_at(s, at) <= max_first;
}

// hh:mm:ss, optional .fff, then Z or +hh:mm / -hh:mm; the whole rest of s.
bool is_time(const std::string& s, size_t at) {
  if (at + 8 > s.size() || !is_clock(s, at, 23) || s[at + 2] != ':' || !is_clock(s, at + 3, 59) || s[at + 5] != ':' ||
      !is_clock(s, at + 6, 59)) {
    return false;
  }
  size_t i = at + 8;
  if (i < s.size() && s[i] == '.') {
    if (!digits(s, i + 1, 3)) return false;
    i += 4;
  }
  if (i < s.size() && s[i] == 'Z') return i + 1 == s.size();
  if (i >= s.size() || (s[i] != '+' && s[i] != '-')) return false;
  return i + 6 == s.size() && is_clock(s, i + 1, 23) && s[i + 3] == ':' && is_clock(s, i + 4, 59);
}

bool is_uuid(const std::string& s) {
  if (s.size() != 36) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    const char c = s[i];
    const bool hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    if (dash ? c != '-' : !hex) return false;
  }
  return true;
}

bool has_format(const std::string& format, const std::string& s) {
  size_t end = 0;
  if (format == "date") return is_date(s, 0, &end) && end == s.size();
  if (format == "time") return is_time(s, 0);
  if (format == "date-time") return is_date(s, 0, &end) && end < s.size() && s[end] == 'T' && is_time(s, end + 1);
  if (format == "uuid") return is_uuid(s);
  return true;  // an annotation
}

bool is_integral(const Value& v) {
  return v.is_number() && std::isfinite(v.as_double()) && std::floor(v.as_double()) == v.as_double();
}

bool has_type(const Value& v, const std::string& type) {
  switch (v.type()) {
    case json::Type::Null: return type == "null";
    case json::Type::Bool: return type == "boolean";
    case json::Type::String: return type == "string";
    case json::Type::Array: return type == "array";
    case json::Type::Object: return type == "object";
    case json::Type::Number: return type == "number" || (type == "integer" && is_integral(v));
  }
  return false;
}

class Validator {
 public:
  Validator(const Value& root, const ValidatorOptions& options) : root_(root), options_(options) {}

  // in_all_of: the schema is a branch of an allOf, closed (or not) with its parent.
  bool accepts(const Value& schema, const Value& v, const std::string& where, bool in_all_of);
  std::string why;

 private:
  const Value& resolve(const std::string& ref) const;
  bool fails(const std::string& where, const std::string& what) {
    if (why.empty()) why = where + ": " + what;
    return false;
  }
  bool accepts_applicators(const Value& schema, const Value& v, const std::string& where, bool in_all_of);
  bool accepts_value(const Value& schema, const Value& v, const std::string& where);
  bool accepts_number(const Value& schema, const Value& v, const std::string& where);
  bool accepts_string(const Value& schema, const Value& v, const std::string& where);
  bool accepts_array(const Value& schema, const Value& v, const std::string& where);
  bool accepts_object(const Value& schema, const Value& v, const std::string& where, bool in_all_of);
  bool closed(const Value& schema, std::set<std::string>* declared, bool* has_properties);

  const Value& root_;
  const ValidatorOptions& options_;
};

const Value& Validator::resolve(const std::string& ref) const {
  const Value* at = &root_;
  size_t pos = 1;  // after '#'
  while (pos < ref.size()) {
    size_t end = ref.find('/', pos + 1);
    if (end == std::string::npos) end = ref.size();
    std::string token = ref.substr(pos + 1, end - pos - 1);
    for (size_t i = 0; (i = token.find('~', i)) != std::string::npos; ++i) {
      token.replace(i, 2, token[i + 1] == '1' ? "/" : "~");
    }
    at = at->is_array() ? &at->items().at(std::stoul(token)) : at->find(token);
    if (at == nullptr) throw std::runtime_error("no target for " + ref);
    pos = end;
  }
  return *at;
}

bool Validator::accepts(const Value& schema, const Value& v, const std::string& where, bool in_all_of) {
  if (schema.is_bool()) return schema.as_bool() || fails(where, "the schema false");
  return accepts_applicators(schema, v, where, in_all_of) && accepts_value(schema, v, where) &&
         accepts_number(schema, v, where) && accepts_string(schema, v, where) && accepts_array(schema, v, where) &&
         accepts_object(schema, v, where, in_all_of);
}

bool Validator::accepts_applicators(const Value& schema, const Value& v, const std::string& where, bool in_all_of) {
  if (const Value* ref = schema.find("$ref")) {
    if (!accepts(resolve(ref->as_string()), v, where, in_all_of)) return false;
  }
  if (const Value* all = schema.find("allOf")) {
    for (const Value& branch : all->items()) {
      if (!accepts(branch, v, where, true)) return false;
    }
  }
  const std::string saved = why;
  for (const char* keyword : {"anyOf", "oneOf"}) {
    const Value* branches = schema.find(keyword);
    if (branches == nullptr) continue;
    size_t matching = 0;
    for (const Value& branch : branches->items()) matching += accepts(branch, v, where, false);
    why = saved;
    if (matching == 0) return fails(where, std::string("no branch of ") + keyword + " accepts it");
    if (std::string(keyword) == "oneOf" && matching > 1) return fails(where, "several branches of oneOf accept it");
  }
  if (const Value* negated = schema.find("not")) {
    const bool inner = accepts(*negated, v, where, false);
    why = saved;
    if (inner) return fails(where, "'not' accepts it");
  }
  return true;
}

bool Validator::accepts_value(const Value& schema, const Value& v, const std::string& where) {
  if (const Value* type = schema.find("type")) {
    bool any = false;
    if (type->is_string()) any = has_type(v, type->as_string());
    for (const Value& t : type->items()) any = any || has_type(v, t.as_string());
    if (!any) return fails(where, "wrong type");
  }
  if (const Value* listed = schema.find("enum")) {
    bool found = false;
    for (const Value& item : listed->items()) found = found || item == v;
    if (!found) return fails(where, "not in enum");
  }
  if (const Value* constant = schema.find("const")) {
    if (!(*constant == v)) return fails(where, "not the const");
  }
  return true;
}

bool Validator::accepts_number(const Value& schema, const Value& v, const std::string& where) {
  if (!v.is_number()) return true;
  const double x = v.as_double();
  const Value* b = nullptr;
  if ((b = schema.find("minimum")) && x < b->as_double()) return fails(where, "below minimum");
  if ((b = schema.find("maximum")) && x > b->as_double()) return fails(where, "above maximum");
  if ((b = schema.find("exclusiveMinimum")) && x <= b->as_double()) return fails(where, "not above exclusiveMinimum");
  if ((b = schema.find("exclusiveMaximum")) && x >= b->as_double()) return fails(where, "not below exclusiveMaximum");
  if ((b = schema.find("multipleOf"))) {
    const double q = x / b->as_double();
    if (std::floor(q) != q) return fails(where, "not a multiple");
  }
  return true;
}

bool Validator::accepts_string(const Value& schema, const Value& v, const std::string& where) {
  if (!v.is_string()) return true;
  const std::wstring text = wide(v.as_string());
  const Value* n = nullptr;
  if ((n = schema.find("minLength")) && text.size() < static_cast<size_t>(n->as_int()))
    return fails(where, "too short");
  if ((n = schema.find("maxLength")) && text.size() > static_cast<size_t>(n->as_int())) return fails(where, "too long");
  if (const Value* pattern = schema.find("pattern")) {
    const std::wregex regex(wide(pattern->as_string()), std::regex::ECMAScript);
    if (!std::regex_search(text, regex)) return fails(where, "pattern does not match");
  }
  if (const Value* format = schema.find("format")) {
    if (!has_format(format->as_string(), v.as_string())) return fails(where, "not a " + format->as_string());
  }
  return true;
}

bool Validator::accepts_array(const Value& schema, const Value& v, const std::string& where) {
  if (!v.is_array()) return true;
  const std::vector<Value>& items = v.items();
  const Value* n = nullptr;
  if ((n = schema.find("minItems")) && items.size() < static_cast<size_t>(n->as_int()))
    return fails(where, "too few items");
  if ((n = schema.find("maxItems")) && items.size() > static_cast<size_t>(n->as_int()))
    return fails(where, "too many items");
  const Value* rest = schema.find("items");
  const Value* prefix = schema.find("prefixItems");
  if (rest && rest->is_array()) {
    prefix = rest;
    rest = nullptr;
  }
  const size_t prefix_size = prefix ? prefix->items().size() : 0;
  for (size_t i = 0; i < items.size(); ++i) {
    const Value* item_schema = i < prefix_size ? &prefix->items()[i] : rest;
    if (item_schema && !accepts(*item_schema, items[i], where + "/" + std::to_string(i), false)) return false;
  }
  if (const Value* unique = schema.find("uniqueItems"); unique && unique->as_bool()) {
    for (size_t i = 0; i < items.size(); ++i) {
      for (size_t j = i + 1; j < items.size(); ++j) {
        if (items[i] == items[j]) return fails(where, "items not unique");
      }
    }
  }
  return true;
}

// Whether llama.cpp's default closes the object: `properties` given (here or in
// allOf branches) and no additionalProperties among them. Collects the names.
bool Validator::closed(const Value& schema, std::set<std::string>* declared, bool* has_properties) {
  if (!schema.is_object()) return true;
  bool open = schema.find("additionalProperties") != nullptr;
  if (const Value* properties = schema.find("properties")) {
    *has_properties = true;
    for (const Value::Member& m : properties->members()) declared->insert(m.first);
  }
  if (const Value* ref = schema.find("$ref"))
    open = !closed(resolve(ref->as_string()), declared, has_properties) || open;
  if (const Value* all = schema.find("allOf")) {
    for (const Value& branch : all->items()) open = !closed(branch, declared, has_properties) || open;
  }
  return !open;
}

bool Validator::accepts_object(const Value& schema, const Value& v, const std::string& where, bool in_all_of) {
  if (!v.is_object()) return true;
  if (const Value* required = schema.find("required")) {
    for (const Value& name : required->items()) {
      if (!v.find(name.as_string())) return fails(where, "no " + name.as_string());
    }
  }
  const Value* properties = schema.find("properties");
  const Value* additional = schema.find("additionalProperties");
  std::set<std::string> declared;
  bool has_properties = false;
  const bool closed_by_default =
      options_.closed_objects && !in_all_of && closed(schema, &declared, &has_properties) && has_properties;
  for (const Value::Member& m : v.members()) {
    const std::string at = where + "/" + m.first;
    const Value* own = properties ? properties->find(m.first) : nullptr;
    if (own && !accepts(*own, m.second, at, false)) return false;
    if (!own && additional && !accepts(*additional, m.second, at, false)) return false;
    if (closed_by_default && declared.count(m.first) == 0) return fails(at, "not a declared property");
  }
  return true;
}

}  // namespace

bool schema_accepts(const Value& schema, const Value& instance, std::string* why, const ValidatorOptions& options) {
  Validator validator(schema, options);
  const bool ok = validator.accepts(schema, instance, "", false);
  if (why) *why = validator.why;
  return ok;
}

}  // namespace peak::sampling::testing
