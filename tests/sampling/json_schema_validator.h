// A JSON Schema validator for the tests, written from the JSON Schema 2020-12
// Validation specification alone: it shares no code with the converter
// (src/sampling/json_schema.h) whose grammars it judges. Patterns run on
// std::wregex (ECMAScript), instances are peak::json values.
//
// Keywords: type, enum, const, anyOf, oneOf (exactly one), allOf, not, $ref
// ("#" and "#/..." pointers), properties, required, additionalProperties,
// items (also draft 2019's array form), prefixItems, minItems, maxItems,
// uniqueItems, minLength, maxLength (code points), pattern, format (date, time,
// date-time, uuid), minimum, maximum, exclusiveMinimum, exclusiveMaximum,
// multipleOf. Other keywords are annotations to it.
//
// llama.cpp's reading of an absent additionalProperties is an option: with
// closed_objects, an object schema whose `properties` (its own and those of
// its allOf branches, $ref followed) are given and that has no
// additionalProperties anywhere among them accepts no other property; its
// allOf branches are not closed by themselves.
#pragma once

#include <string>

#include "json/json.h"

namespace peak::sampling::testing {

struct ValidatorOptions {
  bool closed_objects = true;
};

// Whether `instance` satisfies `schema`; when not, *why (if given) says where.
bool schema_accepts(const json::Value& schema, const json::Value& instance, std::string* why = nullptr,
                    const ValidatorOptions& options = {});

}  // namespace peak::sampling::testing
