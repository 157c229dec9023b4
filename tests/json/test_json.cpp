// peak::json against RFC 8259: texts the grammar accepts and texts it refuses
// (in the manner of Seriot's JSONTestSuite y_/n_ cases), the positions errors
// name, the limits, and a writer whose output parses back.
#include <gtest/gtest.h>

#include <string>

#include "json/json.h"

namespace {

using peak::json::parse;
using peak::json::ParseLimits;
using peak::json::Type;
using peak::json::Value;
using peak::json::write;

Value parsed(const std::string& text) {
  Value v;
  std::string error;
  EXPECT_TRUE(parse(text, &v, &error)) << text << ": " << error;
  return v;
}

std::string error_of(const std::string& text, const ParseLimits& limits = {}) {
  Value v;
  std::string error;
  EXPECT_FALSE(parse(text, &v, &error, limits)) << text;
  return error;
}

TEST(Json, AcceptsWhatTheGrammarAllows) {
  const char* accepted[] = {
      // literals and numbers
      "null", "true", "false", "0", "-0", "1", "-1", "123", "1.5", "-1.5e3", "1E+2", "1e-2", "0.0", "0e0", "1e308",
      "1e-400",
      // arrays, objects and whitespace
      "[]", "{}", " [ ] ", "\t\n\r 1 \r\n\t", "[1,2,3]", "[[],[[]]]", "{\"a\":1}", "{\"a\":{\"b\":[null,true,false]}}",
      // strings, escapes and UTF-8
      "\"\"", "\"a\"", "\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"", "\"\\u0000\"", "\"\\uD834\\uDD1E\"", "\"\xE2\x82\xAC\"",
      "\"\xF0\x9D\x84\x9E\"", "\"\x7F\""};
  for (const char* text : accepted) parsed(text);
}

TEST(Json, RefusesWhatTheGrammarDoesNot) {
  const char* refused[] = {
      // no value, literals and numbers
      "", " ", "nul", "True", "NaN", "Infinity", "-", "+1", "01", "-01", ".5", "1.", "1.e3", "1e", "1e+", "0x10",
      "1e400", "-1e400", "[1e400]",
      // arrays and objects
      "[1,]", "[,1]", "[1 2]", "{\"a\"}", "{\"a\":}", "{\"a\":1,}", "{a:1}", "{'a':1}", "{\"a\" 1}", "[", "]", "{",
      // strings and escapes
      "\"abc", "\"\\x\"", "\"\\u12\"", "\"\\u12G4\"", "\"\\uDD1E\"", "\"\\uD834\"", "\"\\uD834\\u0041\"",
      "\"\\uD834x\"", "\"a\tb\"", "\"a\nb\"",
      // bytes that are not UTF-8, a byte order mark
      "\"\x80\"", "\"\xC0\xAF\"", "\"\xED\xA0\x80\"", "\"\xF4\x90\x80\x80\"", "\"\xE2\x82\"", "\"\xFF\"",
      "\xEF\xBB\xBF{}",
      // text after the value, comments
      "1 2", "[] x", "{}{}", "/* */ 1"};
  for (const char* text : refused) error_of(text);
}

TEST(Json, ErrorsNameTheByte) {
  EXPECT_EQ(error_of("{\"model\" \"x\"}"), "at byte 9: expected ':'");
  EXPECT_EQ(error_of("[1,2,]"), "at byte 5: unexpected character, expected a value");
  EXPECT_EQ(error_of("{\"a\":1} x"), "at byte 8: unexpected text after the value");
  EXPECT_EQ(error_of("\"\\uD834\""), "at byte 7: high surrogate not followed by a low one");
  EXPECT_EQ(error_of("\"ab\xC3\""), "at byte 3: invalid UTF-8");
  EXPECT_EQ(error_of("012"), "at byte 1: leading zero in a number");
}

TEST(Json, Values) {
  const Value v = parsed(R"({"s":"x\u00e9\ud83d\ude00","i":42,"n":-7,"d":0.25,"e":1e3,"big":9007199254740993,)"
                         R"("huge":18446744073709551616,"a":[true,null],"o":{}})");
  ASSERT_TRUE(v.is_object());
  EXPECT_EQ(v.find("s")->as_string(), "x\xC3\xA9\xF0\x9F\x98\x80");
  EXPECT_TRUE(v.find("i")->is_integer());
  EXPECT_EQ(v.find("i")->as_int(), 42);
  EXPECT_EQ(v.find("n")->as_int(), -7);
  EXPECT_FALSE(v.find("d")->is_integer());
  EXPECT_EQ(v.find("d")->as_double(), 0.25);
  EXPECT_TRUE(v.find("e")->is_integer());
  EXPECT_EQ(v.find("e")->as_int(), 1000);
  EXPECT_EQ(v.find("big")->as_int(), 9007199254740993);  // exact, though no double is
  EXPECT_FALSE(v.find("huge")->is_integer());
  EXPECT_EQ(v.find("huge")->as_double(), 18446744073709551616.0);
  EXPECT_EQ(v.find("a")->items().size(), 2u);
  EXPECT_TRUE(v.find("o")->is_object());
  EXPECT_EQ(v.find("missing"), nullptr);
  EXPECT_EQ(parsed("\"\\u0000\"").as_string(), std::string(1, '\0'));
}

TEST(Json, TheLastDuplicateKeyWins) {
  const Value v = parsed(R"({"a":1,"b":2,"a":3})");
  ASSERT_EQ(v.members().size(), 2u);
  EXPECT_EQ(v.members()[0].first, "a");
  EXPECT_EQ(v.find("a")->as_int(), 3);
}

TEST(Json, Limits) {
  std::string deep(64, '[');
  deep += std::string(64, ']');
  parsed(deep);
  std::string deeper(65, '[');
  deeper += std::string(65, ']');
  EXPECT_EQ(error_of(deeper), "at byte 64: nesting deeper than 64 levels");
  // Very deep input is refused, not a stack overflow.
  error_of(std::string(1000000, '['));
  ParseLimits small;
  small.max_bytes = 4;
  EXPECT_EQ(error_of("12345", small), "at byte 0: the text is 5 bytes, more than the limit of 4");
}

TEST(Json, WriterEscapes) {
  EXPECT_EQ(write(Value(std::string("a\"b\\c\n\x01\x1f\x7f/"))), "\"a\\\"b\\\\c\\n\\u0001\\u001f\x7f/\"");
  // Invalid UTF-8 never reaches the output: each bad byte is U+FFFD.
  EXPECT_EQ(write(Value(std::string("x\xFF\xC3"))), "\"x\xEF\xBF\xBD\xEF\xBF\xBD\"");
  EXPECT_EQ(write(Value(std::string("\xED\xA0\x80"))), "\"\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\"");
  EXPECT_EQ(write(Value(1.0 / 0.0)), "null");
  Value o = Value::object();
  o.set("n", 3).set("d", 0.5).set("b", false).set("z", nullptr).set("a", Value::array().push("x").push(-1));
  EXPECT_EQ(write(o), R"({"n":3,"d":0.5,"b":false,"z":null,"a":["x",-1]})");
}

TEST(Json, WhatIsWrittenParsesBack) {
  const char* texts[] = {"-0",
                         "0.1",
                         "1e-300",
                         "5e-324",
                         "1.7976931348623157e308",
                         "9007199254740993",
                         "-9223372036854775808",
                         "-9223372036854775809",
                         "9223372036854775808",
                         R"({"a":[1,{"b":"\u0001\"\\"}],"c":1.25e-5})",
                         "\"\\uDBFF\\uDFFF\""};
  for (const char* text : texts) {
    const Value v = parsed(text);
    EXPECT_EQ(parsed(write(v)), v) << text << " -> " << write(v);
  }
}

}  // namespace
