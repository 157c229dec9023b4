// The cases of tests/data/json_schema_cases.txt (written from the JSON Schema
// specification) judged by the test validator and by the converter's grammars
// (a valid instance, written compactly or with the whitespace llama.cpp's
// grammars allow, is a complete string of its schema's grammar; an invalid one
// is not); and the validator itself on the specification's own default for
// additionalProperties.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>

#include "json/json.h"
#include "json_schema_cases.h"
#include "json_schema_validator.h"
#include "sampling/grammar.h"
#include "sampling/grammar_matcher.h"
#include "sampling/json_schema.h"

namespace peak::sampling::testing {
namespace {

const std::string kCases = std::string(PEAK_TEST_DATA_DIR) + "/json_schema_cases.txt";

json::Value parsed(const std::string& text) {
  json::Value value;
  std::string error;
  EXPECT_TRUE(json::parse(text, &value, &error)) << text << ": " << error;
  return value;
}

TEST(JsonSchemaCases, AreManyAndMixed) {
  const std::vector<JsonSchemaCase> cases = load_json_schema_cases(kCases);
  size_t valid = 0;
  for (const JsonSchemaCase& c : cases) valid += c.valid;
  EXPECT_GE(cases.size(), 120u);
  EXPECT_GE(valid, cases.size() / 3);
  EXPECT_GE(cases.size() - valid, cases.size() / 3);
}

TEST(JsonSchemaCases, TheValidatorGivesEachVerdict) {
  for (const JsonSchemaCase& c : load_json_schema_cases(kCases)) {
    std::string why;
    EXPECT_EQ(schema_accepts(parsed(c.schema), parsed(c.instance), &why), c.valid)
        << "line " << c.line << ": " << c.instance << " (" << why << ")";
  }
}

TEST(JsonSchemaCases, EverySchemaConverts) {
  for (const JsonSchemaCase& c : load_json_schema_cases(kCases)) {
    EXPECT_NO_THROW(json_schema_to_gbnf(parsed(c.schema))) << "line " << c.line << ": " << c.schema;
  }
}

// `value` with whitespace where llama.cpp's grammars allow it: after { [ , :
// and before } ]; `newlines` puts each member and item on a line of its own,
// indented by two spaces a level (at most 20, as the grammars allow).
std::string with_whitespace(const json::Value& value, bool newlines, int depth = 0) {
  const bool object = value.is_object();
  const size_t count = object ? value.members().size() : value.is_array() ? value.items().size() : 0;
  if (count == 0) return json::write(value);
  const std::string inner = newlines ? "\n" + std::string(std::min(2 * depth + 2, 20), ' ') : " ";
  const std::string outer = newlines ? "\n" + std::string(std::min(2 * depth, 20), ' ') : " ";
  std::string out = object ? "{" : "[";
  for (size_t i = 0; i < count; ++i) {
    out += (i ? "," : "") + inner;
    if (object) {
      json::write_string(out, value.members()[i].first);
      out += ": " + with_whitespace(value.members()[i].second, newlines, depth + 1);
    } else {
      out += with_whitespace(value.items()[i], newlines, depth + 1);
    }
  }
  return out + outer + (object ? "}" : "]");
}

TEST(JsonSchemaCases, TheGrammarTakesTheValidInstancesAndNoOther) {
  std::map<std::string, std::shared_ptr<const Grammar>> grammars;
  for (const JsonSchemaCase& c : load_json_schema_cases(kCases)) {
    std::shared_ptr<const Grammar>& grammar = grammars[c.schema];
    if (!grammar) grammar = Grammar::parse(json_schema_to_gbnf(parsed(c.schema)));
    const json::Value instance = parsed(c.instance);
    const std::string compact = json::write(instance);
    const GrammarVerdict verdict = grammar_verdict(grammar, compact);
    EXPECT_EQ(verdict == GrammarVerdict::kComplete, c.valid)
        << "line " << c.line << ": " << compact << " is " << to_string(verdict);
    // Literals of enum and const keep their compact text.
    const bool literal_values =
        c.schema.find("\"enum\"") != std::string::npos || c.schema.find("\"const\"") != std::string::npos;
    if (!c.valid || literal_values) continue;
    for (const bool newlines : {false, true}) {
      const std::string text = with_whitespace(instance, newlines);
      EXPECT_EQ(grammar_verdict(grammar, text), GrammarVerdict::kComplete) << "line " << c.line << ": " << text;
    }
  }
}

TEST(JsonSchemaValidator, FollowsTheSpecificationsDefaultWhenAsked) {
  const json::Value schema = parsed(R"({"properties": {"a": {"type": "integer"}}})");
  const json::Value extra = parsed(R"({"a": 1, "b": 2})");
  ValidatorOptions open;
  open.closed_objects = false;
  EXPECT_TRUE(schema_accepts(schema, extra, nullptr, open));
  EXPECT_FALSE(schema_accepts(schema, extra));
  EXPECT_FALSE(schema_accepts(schema, parsed(R"({"a": "1"})"), nullptr, open));
}

TEST(JsonSchemaValidator, OneOfWantsExactlyOneBranch) {
  const json::Value schema = parsed(R"({"oneOf": [{"type": "integer"}, {"minimum": 2}]})");
  EXPECT_TRUE(schema_accepts(schema, parsed("1")));
  EXPECT_TRUE(schema_accepts(schema, parsed("2.5")));
  EXPECT_FALSE(schema_accepts(schema, parsed("3")));
}

}  // namespace
}  // namespace peak::sampling::testing
