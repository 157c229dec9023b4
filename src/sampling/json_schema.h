// JSON Schema -> GBNF: a grammar (llama.cpp's GBNF syntax, start rule "root",
// rules listed by name, only those root uses)
// whose strings are JSON texts that satisfy the schema, for sampling
// structured output. Its rules, whitespace and string forms are those of
// llama.cpp's json_schema_to_grammar, so the same schema constrains a model
// the same way:
//  - whitespace (rule `space`: nothing, one space, or one or two newlines and
//    up to 20 spaces or tabs) may follow "{", "[", ",", ":" and a declared
//    property's name, and come before "}" and "]"; none before the value or
//    after it;
//  - a string character (rule `char`) is any code point but '"', '\', DEL and
//    controls, or an escape \" \\ \b \f \n \r \t \uXXXX;
//  - integers and the integral part and exponent of numbers have at most 16
//    digits, fractions at most 16 (rules `integral-part`, `decimal-part`);
//  - an object's properties come in one order: the required ones in the order
//    of `properties` (then names `required` lists beyond them), then the
//    optional ones (each may be left out), then additional properties;
//  - `const` and `enum` values are written as their compact JSON text
//    (peak::json::write).
//
// What each keyword means (JSON Schema 2020-12, with these choices):
//  - `additionalProperties` absent: as llama.cpp, an object schema with
//    `properties` (its own or merged from `allOf`) allows no other
//    properties; one without allows any. Additional property names are never
//    written with escapes when names are declared.
//  - a schema without `type` allows every type, each keyword constraining only
//    its own type ({"minLength": 2} allows 7 and "ab"; llama.cpp would guess a
//    type instead);
//  - `oneOf` is taken as `anyOf`: a value that more than one branch accepts is
//    let through;
//  - `allOf` merges its branches into one schema: types intersected,
//    properties and required names joined (a property in several branches
//    merged in turn), enums intersected, the tighter of each bound; other
//    keywords must agree; `additionalProperties` of a branch may not meet a
//    property declared in another, and `anyOf`/`oneOf` in a branch are refused;
//  - `pattern` is an ECMA-262 regular expression matched anywhere in the string
//    (what ^ and $ do not anchor may be any text); supported: literals,
//    escapes, classes with \d \w \s, ".", groups (also (?:) and named),
//    alternation, * + ? {m} {m,} {m,n} (lazy forms too), ^ at the start and $ at
//    the end of the pattern or of its top-level alternatives. Refused:
//    backreferences, lookahead and lookbehind, word boundaries, anchors
//    elsewhere. Characters the pattern spells out are written as peak::json
//    writes them (control characters as \b \f \n \r \t \u00XX);
//  - `format`: date, time, date-time and uuid as llama.cpp defines them
//    (date YYYY-MM-DD with month 01-12 and day 01-31; time hh:mm:ss, an
//    optional .fff, then Z or +hh:mm/-hh:mm; uuid 8-4-4-4-12 hex digits);
//  - `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum` bound
//    integers exactly (non-integral bounds round inwards); on `number` they are
//    refused;
//  - `items` as an array (draft 2019 tuples) is `prefixItems`; a prefix item
//    may be left out as JSON Schema says unless `minItems` needs it; array
//    items past the prefix follow `items` (any value when absent);
//  - `minLength`/`maxLength` count code points (one per character or escape);
//  - `$ref`: "#" and JSON pointers "#/..." into the schema ($defs,
//    definitions, ...), recursion included; each target is one rule. A target
//    that reaches itself before any value starts (left recursion) is refused.
// Ignored (annotations): title, description, examples, default, deprecated,
// readOnly, writeOnly, $schema, $id, $comment, and $defs/definitions themselves.
// Any other keyword is refused by name, as are a keyword beside `$ref`, `anyOf`
// or `oneOf` (but annotations), beside `enum`/`const` (but `type`), and string
// keywords that would have to be combined (`pattern`, `format`, lengths).
//
// Schemas may come from untrusted clients: the bounds below are checked while
// converting, and exceeding one is an error naming it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "json/json.h"

namespace peak::sampling {

inline constexpr int kSchemaMaxDepth = 64;                         // subschemas inside subschemas
inline constexpr size_t kSchemaMaxSteps = size_t{1} << 15;         // subschemas visited and merged
inline constexpr size_t kSchemaMaxRules = 4096;                    // rules of the grammar
inline constexpr size_t kSchemaMaxGrammarBytes = size_t{1} << 18;  // its text
inline constexpr uint32_t kSchemaMaxRepetition = 1024;             // one count: maxItems, maxLength, {m,n}
inline constexpr uint64_t kSchemaMaxRepetitionTotal = 16384;       // the counts of the whole grammar added up
inline constexpr int kSchemaIntegerDigits = 16;                    // an integer's digits at most (llama.cpp's)

// A schema that cannot be converted: what() is "at POINTER: MESSAGE", POINTER
// the JSON pointer of the subschema ("the root" for the whole).
class JsonSchemaError : public std::runtime_error {
 public:
  JsonSchemaError(const std::string& pointer, const std::string& message);
  const std::string& pointer() const { return pointer_; }
  const std::string& message() const { return message_; }

 private:
  std::string pointer_;
  std::string message_;
};

// The GBNF text for `schema`. Throws JsonSchemaError.
std::string json_schema_to_gbnf(const json::Value& schema);
// The same for the schema's JSON text (parsed by peak::json; a parse error is
// a JsonSchemaError at the root).
std::string json_schema_to_gbnf(std::string_view schema_json);
inline std::string json_schema_to_gbnf(const std::string& schema_json) {
  return json_schema_to_gbnf(std::string_view(schema_json));
}
inline std::string json_schema_to_gbnf(const char* schema_json) {
  return json_schema_to_gbnf(std::string_view(schema_json));
}

// Any JSON object (the "json_object" response format): the grammar of
// {"type": "object"}.
std::string json_object_gbnf();

}  // namespace peak::sampling
