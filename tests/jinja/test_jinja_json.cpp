// parse_json against RFC 8259 and Python's json module; to_json against what
// Python's json.dumps writes (the reference for Hugging Face's tojson).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "jinja/error.h"
#include "jinja/json.h"

namespace {

using peak::jinja::JsonError;
using peak::jinja::JsonFormat;
using peak::jinja::parse_json;
using peak::jinja::to_json;
using peak::jinja::Value;

TEST(JinjaJson, ParsesEveryKind) {
  const Value v = parse_json(R"( {"s": "a\"\\\/\b\f\n\r\t\u00e9\ud83c\udf89", "i": -12, "f": 2.5e3, "z": 0,
                                  "t": true, "n": null, "l": [1, [], {}], "e": {}} )");
  const auto& d = v.as_dict();
  EXPECT_EQ(d.find("s")->as_string(), "a\"\\/\b\f\n\r\t\xc3\xa9\xf0\x9f\x8e\x89");
  EXPECT_TRUE(d.find("i")->is_int());
  EXPECT_EQ(d.find("i")->as_int(), -12);
  EXPECT_TRUE(d.find("f")->is_float());
  EXPECT_EQ(d.find("f")->as_double(), 2500.0);
  EXPECT_EQ(d.find("z")->as_int(), 0);
  EXPECT_TRUE(d.find("t")->as_bool());
  EXPECT_TRUE(d.find("n")->is_none());
  EXPECT_EQ(d.find("l")->items().size(), 3u);
  EXPECT_TRUE(d.find("e")->as_dict().empty());
  // Keys keep their order of first appearance; a repeated key keeps its last value (Python: {'a': 3, 'b': 2}).
  const Value repeated = parse_json(R"({"a": 1, "b": 2, "a": 3})");
  ASSERT_EQ(repeated.as_dict().size(), 2u);
  EXPECT_EQ(repeated.as_dict().entries()[0].first, "a");
  EXPECT_EQ(repeated.as_dict().entries()[0].second.as_int(), 3);
}

TEST(JinjaJson, RefusesWhatIsNotJson) {
  // Offsets as Python's json.loads reports them (JSONDecodeError.pos).
  const std::pair<const char*, size_t> bad[] = {
      {"[1,]", 3}, {"{'a': 1}", 1}, {"[1 2]", 3}, {"\"abc", 0}, {"\"a\x01\"", 2}, {"\"\\x41\"", 1}, {"01", 1},
      {"1.", 1},   {"-", 0},        {"nul", 0},   {"[1] x", 4},  {"", 0},           {"{\"a\" 1}", 5},
  };
  for (const auto& [text, offset] : bad) {
    SCOPED_TRACE(text);
    try {
      parse_json(text);
      ADD_FAILURE() << "parsed";
    } catch (const JsonError& e) {
      EXPECT_EQ(e.offset(), offset) << e.what();
    }
  }
  EXPECT_THROW(parse_json("\"\xff\""), JsonError);  // not UTF-8
  // Python keeps a lone surrogate or an integer beyond int64; neither fits a Value.
  EXPECT_THROW(parse_json("\"\\ud800\""), JsonError);
  EXPECT_THROW(parse_json("99999999999999999999"), JsonError);
}

TEST(JinjaJson, NestingIsBounded) {
  const int max = peak::jinja::kMaxJsonDepth;
  EXPECT_NO_THROW(parse_json(std::string(max, '[') + std::string(max, ']')));
  EXPECT_THROW(parse_json(std::string(max + 1, '[') + std::string(max + 1, ']')), JsonError);
  // A hostile depth fails fast, at the limit, without recursing further.
  EXPECT_THROW(parse_json(std::string(1 << 20, '[')), JsonError);
}

TEST(JinjaJson, DumpsLikePython) {
  const Value v = parse_json(R"({"a": [1, 2.5, null, true, "\u00e9\u2028\u007f"], "b": {}})");
  // json.dumps(v, ensure_ascii=False) and json.dumps(v)
  EXPECT_EQ(to_json(v), "{\"a\": [1, 2.5, null, true, \"\xc3\xa9\xe2\x80\xa8\x7f\"], \"b\": {}}");
  JsonFormat ascii;
  ascii.ensure_ascii = true;
  EXPECT_EQ(to_json(v, ascii), R"({"a": [1, 2.5, null, true, "\u00e9\u2028\u007f"], "b": {}})");
  // json.dumps({'k': [1, [2, {}]]}, indent=0)
  JsonFormat indent0;
  indent0.indent = "";
  EXPECT_EQ(to_json(parse_json(R"({"k": [1, [2, {}]]})"), indent0), "{\n\"k\": [\n1,\n[\n2,\n{}\n]\n]\n}");
  // json.dumps('a\x00\x1fb"\\/', ensure_ascii=True)
  EXPECT_EQ(to_json(Value(std::string("a\0\x1f" "b\"\\/", 7)), ascii), R"("a\u0000\u001fb\"\\/")");
  // json.dumps([nan, inf, -inf, 1e100, 0.1, -0.0, 10**18])
  const double inf = std::numeric_limits<double>::infinity();
  const Value numbers = Value::list({Value(std::nan("")), Value(inf), Value(-inf), Value(1e100), Value(0.1), Value(-0.0),
                                     Value(int64_t{1000000000000000000})});
  EXPECT_EQ(to_json(numbers), "[NaN, Infinity, -Infinity, 1e+100, 0.1, -0.0, 1000000000000000000]");
  EXPECT_THROW(to_json(Value::undefined("x")), peak::jinja::TemplateError);
}

TEST(JinjaJson, DumpsKeysThatAreNotStrings) {
  const double inf = std::numeric_limits<double>::infinity();
  // json.dumps({1: 'a', 2.5: 'b', None: 'c', True: 'd', inf: 'e', -inf: 'f'}): True is the key 1
  const Value keys =
      Value::dict().set(1, "a").set(2.5, "b").set(nullptr, "c").set(true, "d").set(inf, "e").set(-inf, "f");
  EXPECT_EQ(to_json(keys), R"({"1": "d", "2.5": "b", "null": "c", "Infinity": "e", "-Infinity": "f"})");
  // n = float('nan'); d = {}; d[n] = 1; d[n] = 2; json.dumps(d)
  const double nan = std::nan("");
  EXPECT_EQ(to_json(Value::dict().set(nan, 1).set(nan, 2)), R"({"NaN": 2})");
  // json.dumps({10: 'b', 9: 'a', 0.5: 'c'}, sort_keys=True): numbers sort as numbers
  JsonFormat sorted;
  sorted.sort_keys = true;
  EXPECT_EQ(to_json(Value::dict().set(10, "b").set(9, "a").set(0.5, "c"), sorted),
            R"({"0.5": "c", "9": "a", "10": "b"})");
  // json.dumps raises "'<' not supported between instances of 'str' and 'int'",
  // "... 'int' and 'NoneType'" and "keys must be str, int, float, bool or None, not tuple"
  auto error_of = [](const Value& v, const JsonFormat& format) {
    try {
      to_json(v, format);
    } catch (const peak::jinja::TemplateError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error_of(Value::dict().set(1, "a").set("b", 2), sorted),
            "'<' not supported between instances of 'str' and 'int'");
  EXPECT_EQ(error_of(Value::dict().set(nullptr, "a").set(2, 2), sorted),
            "'<' not supported between instances of 'int' and 'NoneType'");
  EXPECT_EQ(error_of(Value::dict().set(Value::tuple({1, 2}), "a"), {}),
            "keys must be str, int, float, bool or None, not tuple");
}

}  // namespace
