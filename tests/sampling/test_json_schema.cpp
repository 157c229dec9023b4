// The converter's GBNF for small schemas, derived by hand from the rules that
// src/sampling/json_schema.h states (llama.cpp's primitives and whitespace,
// required members first, rules named after their place, listed by name, only
// those root uses), and
// its refusals: each names the keyword and the place.
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "sampling/gbnf_integer_range.h"
#include "sampling/gbnf_text.h"
#include "sampling/grammar.h"
#include "sampling/grammar_matcher.h"
#include "sampling/json_schema.h"

namespace peak::sampling {
namespace {

// llama.cpp's primitive rules, as the header describes them.
const std::string kSpace = "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n";
const std::string kChar = "char ::= [^\"\\\\\\x7F\\x00-\\x1F] | [\\\\] ([\"\\\\bfnrt] | \"u\" [0-9a-fA-F]{4})\n";
const std::string kString = "string ::= \"\\\"\" char* \"\\\"\"\n";
const std::string kIntegralPart = "integral-part ::= [0] | [1-9] [0-9]{0,15}\n";
const std::string kInteger = "integer ::= \"-\"? integral-part\n";
const std::string kBoolean = "boolean ::= \"true\" | \"false\"\n";
const std::string kNull = "null ::= \"null\"\n";

std::string error_of(const std::string& schema) {
  try {
    json_schema_to_gbnf(schema);
  } catch (const JsonSchemaError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(JsonSchemaToGbnf, APrimitiveTypeIsItsRule) {
  EXPECT_EQ(json_schema_to_gbnf(R"({"type": "boolean"})"), kBoolean + "root ::= boolean\n");
  EXPECT_EQ(json_schema_to_gbnf(R"({"type": "string", "title": "ignored", "description": "also"})"),
            kChar + "root ::= string\n" + kString);
}

TEST(JsonSchemaToGbnf, IntegerRangesAreExactAlternatives) {
  EXPECT_EQ(json_schema_to_gbnf(R"({"type": "integer", "minimum": 1, "maximum": 100})"),
            "root ::= [1-9] | [1-9] [0-9] | \"100\"\n");
  EXPECT_EQ(json_schema_to_gbnf(R"({"type": "integer", "minimum": -5, "maximum": 5})"),
            "root ::= \"-\" [1-5] | [0-5]\n");
  EXPECT_EQ(json_schema_to_gbnf(R"({"type": "integer", "exclusiveMinimum": -101, "exclusiveMaximum": -9})"),
            "root ::= \"-\" ([1-9] [0-9] | \"100\")\n");
  // Up to the 16 digits of llama.cpp's integers.
  EXPECT_EQ(json_schema_to_gbnf(R"({"type": "integer", "minimum": 0})"), "root ::= [0-9] | [1-9] [0-9]{1,15}\n");
}

TEST(JsonSchemaToGbnf, IntegerRangeTextFollowsTheDigits) {
  EXPECT_EQ(gbnf_integer_range(7, 7), "\"7\"");
  EXPECT_EQ(gbnf_integer_range(23, 57), "[2] [3-9] | [3-4] [0-9] | [5] [0-7]");
  EXPECT_EQ(gbnf_integer_range(100, 150), "\"1\" ([0-4] [0-9] | [5] \"0\")");
  EXPECT_EQ(gbnf_integer_range(-3, -1), "\"-\" [1-3]");
}

TEST(JsonSchemaToGbnf, StringLengthsRepeatTheCharRule) {
  EXPECT_EQ(json_schema_to_gbnf(R"({"type": "string", "minLength": 1, "maxLength": 3})"),
            kChar + "root ::= \"\\\"\" char{1,3} \"\\\"\"\n");
  EXPECT_EQ(json_schema_to_gbnf(R"({"type": "string", "minLength": 2})"),
            kChar + "root ::= \"\\\"\" char{2,} \"\\\"\"\n");
}

TEST(JsonSchemaToGbnf, RequiredMembersComeFirstAndOptionalOnesMayBeLeftOut) {
  const std::string schema = R"({"type": "object", "properties": {"a": {"type": "string"},
      "b": {"type": "boolean"}, "c": {"type": "null"}}, "required": ["b"]})";
  const std::string expected =
      "a-kv ::= \"\\\"a\\\"\" space \":\" space string\n"
      "a-rest ::= (\",\" space c-kv)?\n"
      "b-kv ::= \"\\\"b\\\"\" space \":\" space boolean\n" +
      kBoolean + "c-kv ::= \"\\\"c\\\"\" space \":\" space null\n" + kChar + kNull +
      "root ::= \"{\" space b-kv (\",\" space (a-kv a-rest | c-kv))? space \"}\"\n" + kSpace + kString;
  EXPECT_EQ(json_schema_to_gbnf(schema), expected);
}

TEST(JsonSchemaToGbnf, AdditionalPropertiesTakeKeysOtherThanTheDeclaredOnes) {
  const std::string schema =
      R"({"type": "object", "properties": {"ab": {"type": "integer"}}, "additionalProperties": {"type": "null"}})";
  // Keys: not starting with "a"; ""; "a" then not "b"; "a"; "ab" then anything.
  const std::string plain_but = "[^\\x00-\\x1F\\\"\\\\";
  const std::string expected =
      "ab-kv ::= \"\\\"ab\\\"\" space \":\" space integer\n"
      "ab-rest ::= (\",\" space additional-kv)*\n"
      "additional-k ::= \"\\\"\" (" +
      plain_but + "a\\x7F] char* | \"\" | \"a\" " + plain_but + "b\\x7F] char* | \"a\" | \"ab\" " + plain_but +
      "\\x7F] char*) \"\\\"\"\n"
      "additional-kv ::= additional-k \":\" space null\n" +
      kChar + kInteger + kIntegralPart + kNull +
      "root ::= \"{\" space (ab-kv ab-rest | additional-kv (\",\" space additional-kv)*)? space \"}\"\n" + kSpace;
  EXPECT_EQ(json_schema_to_gbnf(schema), expected);
}

TEST(JsonSchemaToGbnf, DeclaredPropertiesCloseTheObjectAsInLlamaCpp) {
  EXPECT_EQ(json_schema_to_gbnf(R"({"type": "object", "properties": {}})"), "root ::= \"{\" space \"}\"\n" + kSpace);
  EXPECT_EQ(json_schema_to_gbnf(R"({"type": "object", "additionalProperties": false})"),
            "root ::= \"{\" space \"}\"\n" + kSpace);
}

TEST(JsonSchemaToGbnf, ArraysRepeatTheirItemWithCommas) {
  EXPECT_EQ(
      json_schema_to_gbnf(R"({"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 4})"),
      kInteger + kIntegralPart + "root ::= \"[\" space integer (\",\" space integer){1,3} space \"]\"\n" + kSpace);
  EXPECT_EQ(json_schema_to_gbnf(R"({"type": "array", "items": {"type": "null"}})"),
            kNull + "root ::= \"[\" space (null (\",\" space null)*)? space \"]\"\n" + kSpace);
}

TEST(JsonSchemaToGbnf, PrefixItemsPastMinItemsMayBeLeftOut) {
  const std::string schema =
      R"({"type": "array", "prefixItems": [{"type": "string"}, {"type": "null"}], "items": false, "minItems": 1})";
  EXPECT_EQ(json_schema_to_gbnf(schema), kChar + kNull + "root ::= \"[\" space string tail-1 space \"]\"\n" + kSpace +
                                             kString + "tail-1 ::= (\",\" space null)?\n");
}

TEST(JsonSchemaToGbnf, EnumAndConstAreTheirCompactJsonText) {
  EXPECT_EQ(json_schema_to_gbnf(R"({"enum": ["a", 1, null, "\u00e9\"x"]})"),
            "root ::= \"\\\"a\\\"\" | \"1\" | \"null\" | \"\\\"\u00e9\\\\\\\"x\\\"\"\n");
  EXPECT_EQ(json_schema_to_gbnf(R"({"const": {"k": [true, 2.5]}})"), "root ::= \"{\\\"k\\\":[true,2.5]}\"\n");
  EXPECT_EQ(json_schema_to_gbnf(R"({"type": "string", "enum": ["a", 1]})"), "root ::= \"\\\"a\\\"\"\n");
}

TEST(JsonSchemaToGbnf, AlternativesAndTypeListsJoinTheirBranches) {
  EXPECT_EQ(json_schema_to_gbnf(R"({"anyOf": [{"type": "string"}, {"type": "null"}]})"),
            kChar + kNull + "root ::= string | null\n" + kString);
  EXPECT_EQ(json_schema_to_gbnf(R"({"type": ["boolean", "null"]})"), kBoolean + kNull + "root ::= boolean | null\n");
}

TEST(JsonSchemaToGbnf, BranchesThatNoValueSatisfiesLeaveNoRules) {
  // "x" is required but the declared properties close the object.
  const std::string schema = R"({"oneOf": [{"type": "null"}, {"type": "object",
      "properties": {"a": {"type": "integer"}}, "required": ["x"]}]})";
  EXPECT_EQ(json_schema_to_gbnf(schema), kNull + "root ::= null\n");
}

TEST(JsonSchemaToGbnf, EachRefIsOneRule) {
  const std::string schema = R"({"$defs": {"n": {"type": "integer"}}, "type": "array",
      "items": {"$ref": "#/$defs/n"}, "maxItems": 2})";
  EXPECT_EQ(json_schema_to_gbnf(schema),
            kInteger + kIntegralPart +
                "ref-defs-n ::= integer\n"
                "root ::= \"[\" space (ref-defs-n (\",\" space ref-defs-n)?)? space \"]\"\n" +
                kSpace);
  // A recursive list: the ref's rule refers to itself inside an object.
  const std::string list = R"({"$defs": {"l": {"type": "object", "properties": {"next": {"$ref": "#/$defs/l"}}}},
      "$ref": "#/$defs/l"})";
  EXPECT_EQ(json_schema_to_gbnf(list),
            "ref-defs-l ::= \"{\" space (ref-defs-l-next-kv)? space \"}\"\n"
            "ref-defs-l-next-kv ::= \"\\\"next\\\"\" space \":\" space ref-defs-l\n"
            "root ::= ref-defs-l\n" +
                kSpace);
}

TEST(JsonSchemaToGbnf, PatternsBecomeSequencesOfTheirPieces) {
  EXPECT_EQ(json_schema_to_gbnf(R"({"type": "string", "pattern": "^ab?[0-9]*$"})"),
            "root ::= \"\\\"\" \"a\" \"b\"? [0-9]* \"\\\"\"\n");
  // Unanchored sides take any text.
  EXPECT_EQ(json_schema_to_gbnf(R"({"type": "string", "pattern": "x|y$"})"),
            kChar + "root ::= \"\\\"\" (char* \"x\" char* | char* \"y\") \"\\\"\"\n");
  // A quote or backslash the pattern spells is written escaped, as in JSON.
  EXPECT_EQ(json_schema_to_gbnf(R"({"type": "string", "pattern": "^[\"a]\\\\$"})"),
            "root ::= \"\\\"\" ([a] | \"\\\\\\\"\") \"\\\\\\\\\" \"\\\"\"\n");
}

TEST(JsonSchemaToGbnf, FormatsAreLlamaCppsRules) {
  const std::string out = json_schema_to_gbnf(R"({"type": "string", "format": "uuid"})");
  EXPECT_EQ(out,
            "root ::= uuid\nuuid ::= \"\\\"\" [0-9a-fA-F]{8} \"-\" [0-9a-fA-F]{4} \"-\" [0-9a-fA-F]{4} \"-\" "
            "[0-9a-fA-F]{4} \"-\" [0-9a-fA-F]{12} \"\\\"\"\n");
  EXPECT_NE(json_schema_to_gbnf(R"({"type": "string", "format": "date-time"})").find("root ::= date-time-string\n"),
            std::string::npos);
}

TEST(JsonSchemaToGbnf, AllOfMergesObjectSchemas) {
  const std::string schema = R"({"allOf": [{"type": "object", "properties": {"a": {"type": "null"}}},
      {"properties": {"b": {"type": "null"}}, "required": ["b"]}]})";
  EXPECT_EQ(json_schema_to_gbnf(schema),
            "a-kv ::= \"\\\"a\\\"\" space \":\" space null\n"
            "b-kv ::= \"\\\"b\\\"\" space \":\" space null\n" +
                kNull + "root ::= \"{\" space b-kv (\",\" space (a-kv))? space \"}\"\n" + kSpace);
}

TEST(JsonSchemaToGbnf, JsonObjectModeIsAnyObject) {
  const std::string out = json_object_gbnf();
  EXPECT_EQ(out, json_schema_to_gbnf(R"({"type": "object"})"));
  EXPECT_NE(out.find("root ::= object\n"), std::string::npos);
  EXPECT_NE(out.find("object ::= \"{\" space ( string \":\" space value ( \",\" space string \":\" space value )* )? "
                     "space \"}\"\n"),
            std::string::npos);
}

TEST(JsonSchemaToGbnf, RefusalsNameTheKeywordAndThePlace) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"properties": {"age": {"type": "integer", "minimum": "x"}}})",
       "at /properties/age: 'minimum' must be a number"},
      {R"({"not": {}})", "at the root: 'not' is not supported"},
      {R"({"type": "object", "patternProperties": {}})", "'patternProperties' is not supported"},
      {R"({"type": "number", "multipleOf": 2})", "'multipleOf' is not supported"},
      {R"({"type": "array", "items": {"if": {}}})", "at /items: 'if' is not supported"},
      {R"({"type": "array", "uniqueItems": true})", "'uniqueItems' is not supported"},
      {R"({"type": "number", "minimum": 0})", "'minimum' is supported on integers only"},
      {R"({"type": "string", "format": "email"})", "'format' 'email' is not supported"},
      {R"({"type": "text"})", "'type' names no JSON Schema type: 'text'"},
      {R"({"type": "string", "pattern": "(a)\\1"})", "backreference '\\1' is not supported"},
      {R"j({"type": "string", "pattern": "a(?!b)"})j", "lookahead and lookbehind"},
      {R"({"type": "string", "pattern": "\\bword"})", "word boundary '\\b' is not supported"},
      {R"({"type": "string", "pattern": "a^b"})", "anchor '^' is supported only at the start"},
      {R"({"type": "string", "pattern": "^a", "maxLength": 3})", "'pattern', 'format' and 'minLength'"},
      {R"({"$ref": "other.json#/x"})", "'$ref' 'other.json#/x' is not supported"},
      {R"({"anyOf": [{"$ref": "#/$defs/missing"}]})", "at /anyOf/0: '$ref' '#/$defs/missing' points to nothing"},
      {R"({"$ref": "#/$defs/a", "minimum": 1, "$defs": {"a": {}}})", "'minimum' beside '$ref' is not supported"},
      {R"({"anyOf": [{}], "type": "string"})", "'type' beside 'anyOf' is not supported"},
      {R"({"enum": ["a"], "minLength": 1})", "'minLength' beside 'enum' is not supported"},
      {R"({"allOf": [{"pattern": "a"}, {"pattern": "b"}]})", "at /allOf/1: 'pattern' differs between the branches"},
      {R"({"allOf": [{"anyOf": [{}]}]})", "at /allOf/0: 'anyOf' and 'oneOf' inside 'allOf' are not supported"},
      {R"({"allOf": [{"properties": {"a": {}}, "additionalProperties": false}, {"properties": {"b": {}}}]})",
       "at /allOf/0: 'additionalProperties' here would also apply to 'b'"},
      {R"({"$defs": {"a": {"anyOf": [{"$ref": "#/$defs/a"}, {"type": "null"}]}}, "$ref": "#/$defs/a"})",
       "at /$defs/a: '$ref' reaches itself before any value starts (left recursion)"},
      {R"({"type": "integer", "minimum": 5, "maximum": 4})", "at the root: no JSON value satisfies the schema"},
      {R"({"type": "object", "properties": {"a\"b": {}}, "additionalProperties": true})",
       "which JSON writes with escapes, is not supported"},
      {R"({"type": "array", "minItems": -1})", "'minItems' must be a non-negative integer"},
      {R"([1])", "a schema must be an object or a boolean, not an array"},
      {R"({"type": )", "at the root: the schema is not JSON: at byte"},
  };
  for (const auto& [schema, expected] : cases) {
    EXPECT_NE(error_of(schema).find(expected), std::string::npos) << schema << "\n  gave: " << error_of(schema);
  }
}

TEST(JsonSchemaToGbnf, BoundsAreErrorsNamingThem) {
  EXPECT_NE(error_of(R"({"type": "array", "maxItems": 1000000})").find("kSchemaMaxRepetition"), std::string::npos);
  EXPECT_NE(error_of(R"({"type": "string", "maxLength": 5000})").find("'maxLength' asks for 5000"), std::string::npos);
  EXPECT_NE(error_of(R"({"type": "string", "pattern": "a{2000}"})").find("kSchemaMaxRepetition"), std::string::npos);
  std::string many = R"({"type": "object", "properties": {)";
  for (int i = 0; i < 20; ++i)
    many += (i ? "," : "") + std::string("\"p") + std::to_string(i) + R"(": {"type": "string", "maxLength": 1000})";
  EXPECT_NE(error_of(many + "}}").find("kSchemaMaxRepetitionTotal"), std::string::npos);
  std::string deep;
  for (int i = 0; i <= kSchemaMaxDepth; ++i) deep += R"({"type": "array", "items": )";
  deep += "{}" + std::string(kSchemaMaxDepth + 1, '}');
  EXPECT_NE(error_of(deep).find("kSchemaMaxDepth"), std::string::npos);
  std::string wide = R"({"type": "object", "properties": {)";
  for (size_t i = 0; i <= kSchemaMaxRules; ++i)
    wide += (i ? "," : "") + std::string("\"p") + std::to_string(i) + R"(": {})";
  EXPECT_NE(error_of(wide + "}}").find("kSchemaMaxRules"), std::string::npos);
  std::string long_enum = R"({"enum": [)";
  for (int i = 0; i < 300; ++i) long_enum += (i ? ",\"" : "\"") + std::string(1000, 'a') + std::to_string(i) + "\"";
  EXPECT_NE(error_of(long_enum + "]}").find("kSchemaMaxGrammarBytes"), std::string::npos);
  // Each level merges the next one twice: 2^30 merges unbounded.
  std::string doubling = R"({"$ref": "#/$defs/d0", "$defs": {)";
  for (int i = 0; i < 30; ++i) {
    const std::string next = "{\"$ref\": \"#/$defs/d" + std::to_string(i + 1) + "\"}";
    doubling += "\"d" + std::to_string(i) + "\": {\"allOf\": [" + next + ", " + next + "]},";
  }
  EXPECT_NE(error_of(doubling + R"("d30": {"type": "integer"}}})").find("kSchemaMaxSteps"), std::string::npos);
}

GrammarVerdict verdict(const std::string& schema, const std::string& text) {
  return grammar_verdict(Grammar::parse(json_schema_to_gbnf(schema)), text);
}

// Every integer near and inside each range, against the comparison itself.
TEST(JsonSchemaGrammar, IntegerRangesTakeExactlyTheirIntegers) {
  const std::pair<int64_t, int64_t> ranges[] = {{0, 0},     {5, 5},      {9, 10},      {-7, 93},   {-1234, -1},
                                                {99, 1001}, {123, 4567}, {-1000, 999}, {-50, -49}, {1, 100}};
  for (const auto& [low, high] : ranges) {
    const std::string schema =
        R"({"type": "integer", "minimum": )" + std::to_string(low) + R"(, "maximum": )" + std::to_string(high) + "}";
    const auto grammar = Grammar::parse(json_schema_to_gbnf(schema));
    for (int64_t n = low - 150; n <= high + 150; ++n) {
      const bool inside = n >= low && n <= high;
      EXPECT_EQ(grammar_verdict(grammar, std::to_string(n)) == GrammarVerdict::kComplete, inside)
          << schema << " on " << n;
    }
    EXPECT_NE(grammar_verdict(grammar, "-0"), GrammarVerdict::kComplete) << schema;
    EXPECT_NE(grammar_verdict(grammar, "0" + std::to_string(high)), GrammarVerdict::kComplete) << schema;
  }
}

TEST(JsonSchemaGrammar, OneSidedRangesReachTheDigitLimit) {
  const std::string at_least = R"({"type": "integer", "minimum": 995})";
  const std::string at_most = R"({"type": "integer", "exclusiveMaximum": -994})";
  for (int64_t n = 900; n <= 1100; ++n) {
    EXPECT_EQ(verdict(at_least, std::to_string(n)) == GrammarVerdict::kComplete, n >= 995) << n;
    EXPECT_EQ(verdict(at_most, std::to_string(-n)) == GrammarVerdict::kComplete, n >= 995) << -n;
  }
  EXPECT_EQ(verdict(at_least, "9999999999999999"), GrammarVerdict::kComplete);
  EXPECT_EQ(verdict(at_most, "-9999999999999999"), GrammarVerdict::kComplete);
  EXPECT_EQ(verdict(at_least, "10000000000000000"), GrammarVerdict::kRejected);  // 17 digits
}

TEST(JsonSchemaGrammar, WhitespaceIsLlamaCpps) {
  const std::string schema =
      R"({"type": "object", "properties": {"a": {"type": "array", "items": {"type": "integer"}}}})";
  EXPECT_EQ(verdict(schema, R"({"a":[1,2]})"), GrammarVerdict::kComplete);
  EXPECT_EQ(verdict(schema, "{ \"a\" : [ 1, 2 ] }"), GrammarVerdict::kComplete);
  EXPECT_EQ(verdict(schema, "{\n\n\t\"a\": [\n    1,\n    2\n  ]\n}"), GrammarVerdict::kComplete);
  EXPECT_EQ(verdict(schema, "{\"a\": [1 , 2]}"), GrammarVerdict::kRejected);   // not after a value
  EXPECT_EQ(verdict(schema, "{\n\n\n\"a\": []}"), GrammarVerdict::kRejected);  // three newlines
  EXPECT_EQ(verdict(schema, "{" + std::string(21, ' ') + "}"), GrammarVerdict::kRejected);
  EXPECT_EQ(verdict(schema, " {}"), GrammarVerdict::kRejected);  // none before the value
  EXPECT_EQ(verdict(schema, "{} "), GrammarVerdict::kRejected);  // nor after it
}

TEST(JsonSchemaGrammar, JsonObjectModeTakesObjectsOnly) {
  const auto grammar = Grammar::parse(json_object_gbnf());
  EXPECT_EQ(grammar_verdict(grammar, R"({"a": [1, {"b": null}], "c": "\u00e9"})"), GrammarVerdict::kComplete);
  EXPECT_EQ(grammar_verdict(grammar, "{}"), GrammarVerdict::kComplete);
  EXPECT_EQ(grammar_verdict(grammar, "[1]"), GrammarVerdict::kRejected);
  EXPECT_EQ(grammar_verdict(grammar, "\"{}\""), GrammarVerdict::kRejected);
}

TEST(JsonSchemaGrammar, PatternClassesHoldJsonEscapes) {
  const std::string schema = R"({"type": "string", "pattern": "^[^a]{2}$"})";
  EXPECT_EQ(verdict(schema, R"("\"\\")"), GrammarVerdict::kComplete);  // a quote and a backslash
  EXPECT_EQ(verdict(schema, R"("\n\u0001")"), GrammarVerdict::kComplete);
  EXPECT_EQ(verdict(schema, R"("xa")"), GrammarVerdict::kRejected);
  EXPECT_EQ(verdict(schema, "\"\t\""), GrammarVerdict::kRejected);  // a raw tab is no JSON
}

TEST(JsonSchemaGrammar, ABraceThatIsNoCountIsALiteral) {
  // ECMA-262 Annex B: '{' that does not begin {m}, {m,} or {m,n} is the
  // character itself, also right after an atom that could take a count.
  EXPECT_EQ(json_schema_to_gbnf(R"({"type": "string", "pattern": "^\\d{2(\\d+)?$"})"),
            "root ::= \"\\\"\" [0-9] \"{2\" ([0-9]+)? \"\\\"\"\n");
  EXPECT_EQ(json_schema_to_gbnf(R"({"type": "string", "pattern": "^a{,3}$"})"),
            "root ::= \"\\\"\" \"a{,3}\" \"\\\"\"\n");
  EXPECT_EQ(verdict(R"({"type": "string", "pattern": "^\\d{2(\\d+)?$"})", R"("5{234")"), GrammarVerdict::kComplete);
  EXPECT_EQ(verdict(R"({"type": "string", "pattern": "^\\d{2(\\d+)?$"})", R"("52")"), GrammarVerdict::kRejected);
}

TEST(JsonSchemaGrammar, ARepeatedRepeatIsParenthesized) {
  // GBNF takes one suffix per item, as the grammar engine's parser does.
  EXPECT_EQ(json_schema_to_gbnf(R"({"type": "string", "pattern": "^(a+)?(?:b{2}){3}$"})"),
            "root ::= \"\\\"\" (\"a\"+)? (\"b\"{2}){3} \"\\\"\"\n");
  EXPECT_EQ(verdict(R"({"type": "string", "pattern": "^(a+)?(?:b{2}){3}$"})", R"("aabbbbbb")"),
            GrammarVerdict::kComplete);
  EXPECT_EQ(verdict(R"({"type": "string", "pattern": "^(a+)?(?:b{2}){3}$"})", R"("abbbbb")"),
            GrammarVerdict::kRejected);
}

TEST(GbnfText, LiteralsClassesAndCountsAreEscaped) {
  EXPECT_EQ(gbnf_literal("a\"b\\c\nd\x01"), "\"a\\\"b\\\\c\\nd\\x01\"");
  EXPECT_EQ(gbnf_char_class(CodePointSet{{'a', 'z'}, {'-', '-'}}), "[\\-a-z]");
  EXPECT_EQ(gbnf_char_class(CodePointSet{{'^', '^'}, {0xE9, 0xE9}, {0x1F600, 0x1F600}}), "[\\x5E\\u00E9\\U0001F600]");
  EXPECT_EQ(gbnf_char_class(CodePointSet{{'a', 'a'}}.complement()), "[^a]");
  EXPECT_EQ(gbnf_repetition(0, kUnboundedCount), "*");
  EXPECT_EQ(gbnf_repetition(1, kUnboundedCount), "+");
  EXPECT_EQ(gbnf_repetition(0, 1), "?");
  EXPECT_EQ(gbnf_repetition(3, 3), "{3}");
  EXPECT_EQ(gbnf_repetition(2, kUnboundedCount), "{2,}");
  EXPECT_EQ(gbnf_repetition(2, 5), "{2,5}");
}

}  // namespace
}  // namespace peak::sampling
