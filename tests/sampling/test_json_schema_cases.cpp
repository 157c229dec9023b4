// The cases of tests/data/json_schema_cases.txt (written from the JSON Schema
// specification) judged by the test validator, which the converter's grammars
// are held to; and the validator itself on the specification's own default for
// additionalProperties.
#include <gtest/gtest.h>

#include <string>

#include "json/json.h"
#include "json_schema_cases.h"
#include "json_schema_validator.h"
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
