// The grammars of tool calls (tool_call_grammar.h), judged on calls written as
// each family's chat template renders them (tool_call.h lists the sources):
// the grammar takes them whole, refuses what breaks the format or a tool's
// schema, and every text it takes parses (tool_call.h) into the call it spells.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "chat/tool_call.h"
#include "chat/tool_call_grammar.h"
#include "json/json.h"
#include "sampling/grammar_matcher.h"

namespace peak::chat {
namespace {

using sampling::GrammarVerdict;

json::Value parsed_json(std::string_view text) {
  json::Value value;
  std::string error;
  if (!json::parse(text, &value, &error)) ADD_FAILURE() << "not JSON: " << text << ": " << error;
  return value;
}

const char* const kTools = R"([
  {"type": "function", "function": {"name": "get_weather", "description": "Weather in a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"},
                   "unit": {"type": "string", "enum": ["c", "f"]}}, "required": ["city"]}}},
  {"type": "function", "function": {"name": "get_time"}}
])";

json::Value tools() { return parsed_json(kTools); }

ToolChoice required(bool parallel = true) { return {ToolChoice::Mode::Required, "", parallel}; }

GrammarVerdict verdict(const ToolCallGrammar& g, const std::string& text) {
  return sampling::grammar_verdict(g.grammar, text);
}

// The text is a whole string of the grammar and parses into `calls` (name,
// arguments as compact JSON) with nothing else.
void expect_calls(const ToolCallFormat& format, const ToolCallGrammar& g, const std::string& text,
                  const std::vector<std::pair<std::string, std::string>>& calls) {
  SCOPED_TRACE(text);
  EXPECT_EQ(verdict(g, text), GrammarVerdict::kComplete);
  const ParsedResponse parsed = parse_response(format, text);
  EXPECT_EQ(parsed.content, "");
  ASSERT_EQ(parsed.tool_calls.size(), calls.size());
  for (size_t i = 0; i < calls.size(); ++i) {
    EXPECT_EQ(parsed.tool_calls[i].name, calls[i].first);
    EXPECT_EQ(parsed_json(parsed.tool_calls[i].arguments), parsed_json(calls[i].second));
  }
}

const std::string kWeather = R"({"name": "get_weather", "arguments": {"city": "Zürich", "unit": "c"}})";
const std::string kTime = R"({"name": "get_time", "arguments": {}})";

TEST(ToolCallGrammar, HermesCallsInARow) {
  const ToolCallFormat& format = tool_call_format("hermes");
  const ToolCallGrammar g = tool_call_grammar(format, tools(), required());
  EXPECT_EQ(g.trigger, "");
  const std::string one = "<tool_call>\n" + kWeather + "\n</tool_call>";
  const std::string two = one + "\n<tool_call>\n" + kTime + "\n</tool_call>";
  expect_calls(format, g, one, {{"get_weather", R"({"city": "Zürich", "unit": "c"})"}});
  expect_calls(format, g, two, {{"get_weather", R"({"city": "Zürich", "unit": "c"})"}, {"get_time", "{}"}});
  EXPECT_EQ(verdict(g, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": "), GrammarVerdict::kPrefix);
  // Another tool, a missing or unknown argument, a value outside the enum, text first.
  EXPECT_EQ(verdict(g, "<tool_call>\n{\"name\": \"get_mail\""), GrammarVerdict::kRejected);
  EXPECT_EQ(verdict(g, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {}}"), GrammarVerdict::kRejected);
  EXPECT_EQ(verdict(g, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"town\""), GrammarVerdict::kRejected);
  EXPECT_EQ(verdict(g, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"a\", \"unit\": \"k\""),
            GrammarVerdict::kRejected);
  EXPECT_EQ(verdict(g, "Sure. <tool_call>"), GrammarVerdict::kRejected);

  ToolChoice two_at_most = required();
  two_at_most.max_calls = 2;
  const ToolCallGrammar bounded = tool_call_grammar(format, tools(), two_at_most);
  EXPECT_EQ(verdict(bounded, two), GrammarVerdict::kComplete);
  EXPECT_EQ(verdict(bounded, two + "\n"), GrammarVerdict::kRejected);
  EXPECT_EQ(verdict(bounded, one + "\n"), GrammarVerdict::kPrefix);
  const ToolCallGrammar single = tool_call_grammar(format, tools(), required(false));
  EXPECT_EQ(verdict(single, one), GrammarVerdict::kComplete);
  EXPECT_EQ(verdict(single, two), GrammarVerdict::kRejected);
  const ToolCallGrammar named = tool_call_grammar(format, tools(), {ToolChoice::Mode::Auto, "get_time", true});
  EXPECT_EQ(named.trigger, "");  // a named function is required
  EXPECT_EQ(verdict(named, one), GrammarVerdict::kRejected);
  EXPECT_EQ(verdict(named, "<tool_call>\n" + kTime + "\n</tool_call>"), GrammarVerdict::kComplete);
  // "auto": the grammar starts at the opening marker.
  const ToolCallGrammar automatic = tool_call_grammar(format, tools(), {});
  EXPECT_EQ(automatic.trigger, "<tool_call>");
  EXPECT_EQ(verdict(automatic, two), GrammarVerdict::kComplete);
}

TEST(ToolCallGrammar, JsonArraysAfterAMarker) {
  const std::string array = "[" + kWeather + ", " + kTime + "]";
  for (const char* name : {"phi4", "granite"}) {
    const ToolCallFormat& format = tool_call_format(name);
    const ToolCallGrammar g = tool_call_grammar(format, tools(), required());
    const std::string text = std::string(format.open) + array + std::string(format.close);
    expect_calls(format, g, text, {{"get_weather", R"({"city": "Zürich", "unit": "c"})"}, {"get_time", "{}"}});
    EXPECT_EQ(verdict(g, std::string(format.open) + "[]"), GrammarVerdict::kRejected);
    EXPECT_EQ(verdict(tool_call_grammar(format, tools(), required(false)), text), GrammarVerdict::kRejected);
    ToolChoice one_at_most = required();
    one_at_most.max_calls = 1;
    EXPECT_EQ(verdict(tool_call_grammar(format, tools(), one_at_most), text), GrammarVerdict::kRejected);
    EXPECT_EQ(tool_call_grammar(format, tools(), {}).trigger, "<|tool_call|>");
  }
  // Mistral's calls carry the model's ids: nine letters and digits.
  const ToolCallFormat& mistral = tool_call_format("mistral");
  const ToolCallGrammar g = tool_call_grammar(mistral, tools(), required());
  const std::string call = R"([TOOL_CALLS][{"name": "get_time", "arguments": {}, "id": "a1B2c3D4e"}])";
  expect_calls(mistral, g, call, {{"get_time", "{}"}});
  EXPECT_EQ(verdict(g, R"([TOOL_CALLS][{"name": "get_time", "arguments": {}, "id": "a1B2c3D4"}])"),
            GrammarVerdict::kRejected);
  EXPECT_EQ(verdict(g, R"([TOOL_CALLS][{"name": "get_time", "arguments": {}}])"), GrammarVerdict::kRejected);
}

TEST(ToolCallGrammar, DeepSeekCallsInFences) {
  const ToolCallFormat& format = tool_call_format("deepseek-r1");
  const ToolCallGrammar g = tool_call_grammar(format, tools(), required());
  const std::string weather =
      "<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"city\": \"Paris\"}\n```<｜tool▁call▁end｜>";
  const std::string time = "<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_time\n```json\n{}\n```<｜tool▁call▁end｜>";
  expect_calls(format, g, "<｜tool▁calls▁begin｜>" + weather + "\n" + time + "<｜tool▁calls▁end｜>",
               {{"get_weather", R"({"city": "Paris"})"}, {"get_time", "{}"}});
  EXPECT_EQ(verdict(g, "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{}"),
            GrammarVerdict::kRejected);
  EXPECT_EQ(tool_call_grammar(format, tools(), {}).trigger, "<｜tool▁calls▁begin｜>");
}

TEST(ToolCallGrammar, Llama3AnswersWithOneCallOrWithText) {
  const ToolCallFormat& format = tool_call_format("llama3-json");
  const std::string call = R"({"name": "get_weather", "parameters": {"city": "Paris"}})";
  const ToolCallGrammar g = tool_call_grammar(format, tools(), required());
  expect_calls(format, g, call, {{"get_weather", R"({"city": "Paris"})"}});
  EXPECT_EQ(verdict(g, "It is sunny."), GrammarVerdict::kRejected);
  EXPECT_EQ(verdict(g, call + call), GrammarVerdict::kRejected);  // one call per answer
  const ToolCallGrammar automatic = tool_call_grammar(format, tools(), {});
  EXPECT_EQ(automatic.trigger, "");  // the answer's first character decides
  EXPECT_EQ(verdict(automatic, "It is sunny."), GrammarVerdict::kComplete);
  EXPECT_EQ(verdict(automatic, "\n" + call), GrammarVerdict::kComplete);
  EXPECT_EQ(verdict(automatic, R"({"name": "get_mail")"), GrammarVerdict::kRejected);
  EXPECT_EQ(verdict(automatic, ""), GrammarVerdict::kComplete);
}

TEST(ToolCallGrammar, TheGenericEnvelope) {
  const ToolCallFormat& format = tool_call_format("generic");
  const std::string calls = R"({"tool_calls": [)" + kWeather + "]}";
  const std::string response = R"({"response": "It is sunny."})";
  const ToolCallGrammar g = tool_call_grammar(format, tools(), required());
  expect_calls(format, g, calls, {{"get_weather", R"({"city": "Zürich", "unit": "c"})"}});
  EXPECT_EQ(verdict(g, response), GrammarVerdict::kRejected);
  const ToolCallGrammar automatic = tool_call_grammar(format, tools(), {});
  EXPECT_EQ(automatic.trigger, "");
  EXPECT_EQ(verdict(automatic, response), GrammarVerdict::kComplete);
  EXPECT_EQ(parse_response(format, response).content, "It is sunny.");
  EXPECT_EQ(verdict(automatic, calls), GrammarVerdict::kComplete);
  EXPECT_EQ(verdict(automatic, "It is sunny."), GrammarVerdict::kRejected);
}

TEST(ToolCallGrammar, WhatCannotBeConstrainedIsNamed) {
  const auto message = [](const ToolCallFormat& format, const json::Value& list, const ToolChoice& choice) {
    try {
      tool_call_grammar(format, list, choice);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const ToolCallFormat& hermes = tool_call_format("hermes");
  EXPECT_NE(message(hermes, tools(), {ToolChoice::Mode::Required, "get_mail", true})
                .find("'get_mail', which is not among the tools (get_weather, get_time)"),
            std::string::npos);
  EXPECT_NE(message(hermes, parsed_json("[]"), required()).find("at least one tool"), std::string::npos);
  const json::Value unusable = parsed_json(
      R"([{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "patternProperties": {}}}}])");
  const std::string refused = message(hermes, unusable, required());
  EXPECT_NE(refused.find("tools[0].function.parameters (tool 'f')"), std::string::npos) << refused;
  EXPECT_NE(refused.find("patternProperties"), std::string::npos) << refused;
  ToolChoice too_many = required();
  too_many.max_calls = kMaxBoundedCalls + 1;
  EXPECT_NE(message(hermes, tools(), too_many).find("at most 64 calls"), std::string::npos);
  for (const char* name : {"qwen3-xml", "minicpm-xml", "lfm2"}) {
    EXPECT_NE(message(tool_call_format(name), tools(), required()).find("no grammar"), std::string::npos) << name;
  }
}

}  // namespace
}  // namespace peak::chat
