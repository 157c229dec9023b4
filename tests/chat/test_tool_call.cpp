// Tool-call parsing against answers written as each family's models write them.
// Where each text comes from:
//  - hermes: Qwen2.5-7B-Instruct's and Qwen3-0.6B's chat templates (in
//    ../shared/fixtures/templates; tests/data/jinja_tool_renders.json shows their
//    renders of one and of two past calls), which also instruct the model to write
//    <tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>;
//  - llama3-json: Llama 3.1 and 3.2's templates ({"name": ..., "parameters": ...},
//    one call per answer, <|python_tag|> before built-in calls);
//  - mistral: Mistral-Nemo-Instruct-2407's template ([TOOL_CALLS][...] with ids of
//    9 letters and digits);
//  - phi4: Phi-4-mini's past calls as Ollama's phi4-mini template renders them;
//  - granite: granite-3.3-2B-Instruct's template's system prompt ("respond only
//    with <|tool_call|> followed by a JSON list of tools used");
//  - deepseek-r1: DeepSeek-R1-Distill-Qwen-32B's template;
//  - qwen3-xml: Qwen3.5-4B's template (its render of past calls, and the format
//    its system prompt teaches);
//  - minicpm-xml: MiniCPM5-1B's template (its render of past calls; values with
//    <, & or newlines in CDATA, as its system prompt says);
//  - lfm2: LFM2-1.2B-Tool's model card and Liquid AI's tool-use docs ("a Python
//    list between <|tool_call_start|> and <|tool_call_end|>", text may follow);
//  - generic: the shape tool_call.h defines.
// The expected messages are written by hand from those texts.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "chat/tool_call.h"
#include "tool_call_checks.h"

namespace peak::chat {
namespace {

using test::Call;
using test::Expected;

const std::string kWeather = R"({"name": "get_weather", "arguments": {"city": "Zürich", "n": 2}})";
const std::string kWeatherArgs = R"({"city": "Zürich", "n": 2})";
const std::string kTimeArgs = R"({"zone": "Asia/Tokyo"})";

// The cases every format with markers shares, around its text of the weather
// call (`weather`) and of the weather and time calls in one answer (`both`).
std::vector<Expected> shared_cases(const std::string& weather, const std::string& both) {
  return {
      {"single call", weather, "", "", {{"call_0", "get_weather", kWeatherArgs}}},
      {"two calls", both, "", "", {{"call_0", "get_weather", kWeatherArgs}, {"call_1", "get_time", kTimeArgs}}},
      {"after reasoning",
       "<think>\nThe user wants the weather.\n</think>\n\n" + weather,
       "",
       "The user wants the weather.",
       {{"call_0", "get_weather", kWeatherArgs}}},
      {"text before", "Let me check.\n" + weather, "Let me check.", "", {{"call_0", "get_weather", kWeatherArgs}}},
      {"reasoning and text before",
       "<think>\nhm\n</think>\n\nLet me check.\n\n" + weather,
       "Let me check.",
       "hm",
       {{"call_0", "get_weather", kWeatherArgs}}},
      {"no call", "It is 21 degrees in Zürich.\n", "It is 21 degrees in Zürich.\n", "", {}},
  };
}

TEST(ToolCallHermes, ParsesTheTextsModelsWrite) {
  const ToolCallFormat& hermes = tool_call_format("hermes");
  const std::string call = "<tool_call>\n" + kWeather + "\n</tool_call>";
  const std::string time_call = "<tool_call>\n{\"name\": \"get_time\", \"arguments\": " + kTimeArgs + "}\n</tool_call>";
  const std::string both = call + "\n" + time_call;
  const std::vector<Expected> cases = {
      {"text between and after",
       "First:\n" + call + "\nThen:\n" + time_call + "\nDone.",
       "First:Then:Done.",
       "",
       {{"call_0", "get_weather", kWeatherArgs}, {"call_1", "get_time", kTimeArgs}}},
      {"malformed JSON",
       "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Zürich\"}\n</tool_call>",
       "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Zürich\"}\n</tool_call>",
       "",
       {}},
      {"malformed, then a call",
       "<tool_call>\n{\"name\": get_time}\n</tool_call>\n" + call,
       "<tool_call>\n{\"name\": get_time}\n</tool_call>",
       "",
       {{"call_0", "get_weather", kWeatherArgs}}},
      {"arguments not an object",
       "<tool_call>\n{\"name\": \"f\", \"arguments\": \"{}\"}\n</tool_call>",
       "<tool_call>\n{\"name\": \"f\", \"arguments\": \"{}\"}\n</tool_call>",
       "",
       {}},
      {"truncated",
       "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"argu",
       "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"argu",
       "",
       {}},
      {"truncated marker", "Let me check.\n<tool_ca", "Let me check.\n<tool_ca", "", {}},
      {"unicode arguments",
       "<tool_call>\n{\"name\": \"translate\", \"arguments\": {\"text\": \"東京 ☃ 😀\", \"to\": "
       "\"\\u00fc\\ud83d\\ude00\"}}\n</tool_call>",
       "",
       "",
       {{"call_0", "translate", "{\"text\": \"東京 ☃ 😀\", \"to\": \"ü😀\"}"}}},
      {"no arguments", "<tool_call>\n{\"name\": \"now\"}\n</tool_call>", "", "", {{"call_0", "now", "{}"}}},
  };
  test::check_cases(hermes, shared_cases(call, both));
  test::check_cases(hermes, cases);
}

TEST(ToolCallLlama3Json, ParsesTheTextsModelsWrite) {
  const ToolCallFormat& llama = tool_call_format("llama3-json");
  const std::string call = R"({"name": "get_weather", "parameters": {"city": "Zürich", "n": 2}})";
  const std::vector<Expected> cases = {
      {"single call", call, "", "", {{"call_0", "get_weather", kWeatherArgs}}},
      {"after python_tag", "<|python_tag|>" + call, "", "", {{"call_0", "get_weather", kWeatherArgs}}},
      {"text before python_tag",
       "Let me look.\n<|python_tag|>" + call,
       "Let me look.",
       "",
       {{"call_0", "get_weather", kWeatherArgs}}},
      {"after reasoning",
       "<think>\nweather\n</think>\n\n" + call,
       "",
       "weather",
       {{"call_0", "get_weather", kWeatherArgs}}},
      // The template refuses more than one call per answer: a second object is text.
      {"a second object", call + "\n" + call, call, "", {{"call_0", "get_weather", kWeatherArgs}}},
      {"two python_tag calls",
       "<|python_tag|>" + call + "<|python_tag|>" + call,
       "",
       "",
       {{"call_0", "get_weather", kWeatherArgs}, {"call_1", "get_weather", kWeatherArgs}}},
      {"malformed JSON",
       R"({"name": "get_weather", "parameters": {"city": Zürich}})",
       R"({"name": "get_weather", "parameters": {"city": Zürich}})",
       "",
       {}},
      {"arguments key of another format", kWeather, kWeather, "", {}},
      {"truncated",
       R"({"name": "get_weather", "parameters": {"city": "Zür)",
       R"({"name": "get_weather", "parameters": {"city": "Zür)",
       "",
       {}},
      {"JSON that is no call", "  {\"answer\": 42}", "  {\"answer\": 42}", "", {}},
      {"built-in tool",
       "<|python_tag|>brave_search.call(query=\"weather in Zürich\")",
       "<|python_tag|>brave_search.call(query=\"weather in Zürich\")",
       "",
       {}},
      {"no call", "It is 21 degrees.", "It is 21 degrees.", "", {}},
      {"unicode arguments",
       R"({"name": "say", "parameters": {"text": "こんにちは \u2603"}})",
       "",
       "",
       {{"call_0", "say", R"({"text": "こんにちは ☃"})"}}},
  };
  test::check_cases(llama, cases);
}

TEST(ToolCallMistral, ParsesTheTextsModelsWrite) {
  const ToolCallFormat& mistral = tool_call_format("mistral");
  const std::string call =
      R"([TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Zürich", "n": 2}, "id": "call12345"}])";
  const std::vector<Expected> cases = {
      {"single call", call, "", "", {{"call12345", "get_weather", kWeatherArgs}}},
      {"two calls",
       R"([TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Zürich", "n": 2}, "id": "a1b2c3d4e"}, {"name": "get_time", "arguments": {"zone": "Asia/Tokyo"}, "id": "f5g6h7i8j"}])",
       "",
       "",
       {{"a1b2c3d4e", "get_weather", kWeatherArgs}, {"f5g6h7i8j", "get_time", kTimeArgs}}},
      {"after reasoning",
       "<think>\nweather\n</think>\n\n" + call,
       "",
       "weather",
       {{"call12345", "get_weather", kWeatherArgs}}},
      {"text before", "Let me check. " + call, "Let me check.", "", {{"call12345", "get_weather", kWeatherArgs}}},
      {"no id: generated",
       R"([TOOL_CALLS][{"name": "get_time", "arguments": {"zone": "Asia/Tokyo"}}])",
       "",
       "",
       {{"call_0", "get_time", kTimeArgs}}},
      {"malformed JSON",
       R"([TOOL_CALLS][{"name": "get_weather", "arguments": {"city": Zürich}}])",
       R"([TOOL_CALLS][{"name": "get_weather", "arguments": {"city": Zürich}}])",
       "",
       {}},
      {"unbalanced",
       R"([TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Zürich"}])",
       R"([TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Zürich"}])",
       "",
       {}},
      {"no JSON after the marker", "[TOOL_CALLS] none needed", "[TOOL_CALLS] none needed", "", {}},
      {"truncated",
       R"([TOOL_CALLS][{"name": "get_weather", "argum)",
       R"([TOOL_CALLS][{"name": "get_weather", "argum)",
       "",
       {}},
      {"no call", "It is [21] degrees.", "It is [21] degrees.", "", {}},
      {"unicode arguments",
       R"([TOOL_CALLS][{"name": "say", "arguments": {"text": "Grüße \"日本\" ]}"}, "id": "abcdefghi"}])",
       "",
       "",
       {{"abcdefghi", "say", R"({"text": "Grüße \"日本\" ]}"})"}}},
  };
  test::check_cases(mistral, cases);
}

TEST(ToolCallPhi4, ParsesTheTextsModelsWrite) {
  const ToolCallFormat& phi4 = tool_call_format("phi4");
  const std::string call = "<|tool_call|>[" + kWeather + "]<|/tool_call|>";
  const std::string both =
      "<|tool_call|>[" + kWeather + ", {\"name\": \"get_time\", \"arguments\": " + kTimeArgs + "}]<|/tool_call|>";
  const std::vector<Expected> cases = {
      {"malformed JSON",
       "<|tool_call|>[{\"name\": \"get_weather\", \"arguments\": }]<|/tool_call|>",
       "<|tool_call|>[{\"name\": \"get_weather\", \"arguments\": }]<|/tool_call|>",
       "",
       {}},
      {"truncated", "<|tool_call|>[" + kWeather, "<|tool_call|>[" + kWeather, "", {}},
      {"unicode arguments",
       "<|tool_call|>[{\"name\": \"say\", \"arguments\": {\"text\": \"Ελληνικά\"}}]<|/tool_call|>",
       "",
       "",
       {{"call_0", "say", R"({"text": "Ελληνικά"})"}}},
  };
  test::check_cases(phi4, shared_cases(call, both));
  test::check_cases(phi4, cases);
}

TEST(ToolCallGranite, ParsesTheTextsModelsWrite) {
  const ToolCallFormat& granite = tool_call_format("granite");
  const std::string call = "<|tool_call|>[" + kWeather + "]";
  const std::string both =
      "<|tool_call|>[" + kWeather + ", {\"name\": \"get_time\", \"arguments\": " + kTimeArgs + "}]";
  const std::vector<Expected> cases = {
      {"text after", call + "\nDone.", "Done.", "", {{"call_0", "get_weather", kWeatherArgs}}},
      {"space after the marker",
       "<|tool_call|> \n[" + kWeather + "]",
       "",
       "",
       {{"call_0", "get_weather", kWeatherArgs}}},
      {"malformed JSON",
       "<|tool_call|>[{\"name\": \"get_weather\" \"arguments\": {}}]",
       "<|tool_call|>[{\"name\": \"get_weather\" \"arguments\": {}}]",
       "",
       {}},
      {"truncated",
       "<|tool_call|>[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Zür",
       "<|tool_call|>[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Zür",
       "",
       {}},
      {"unicode arguments",
       "<|tool_call|>[{\"name\": \"say\", \"arguments\": {\"text\": \"עברית\"}}]",
       "",
       "",
       {{"call_0", "say", R"({"text": "עברית"})"}}},
  };
  test::check_cases(granite, shared_cases(call, both));
  test::check_cases(granite, cases);
}

TEST(ToolCallDeepSeekR1, ParsesTheTextsModelsWrite) {
  const ToolCallFormat& deepseek = tool_call_format("deepseek-r1");
  const std::string weather =
      "<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n" + kWeatherArgs + "\n```<｜tool▁call▁end｜>";
  const std::string time =
      "<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_time\n```json\n" + kTimeArgs + "\n```<｜tool▁call▁end｜>";
  const std::string begin = "<｜tool▁calls▁begin｜>";
  const std::string end = "<｜tool▁calls▁end｜>";
  const std::string both = begin + weather + "\n" + time + end;
  const std::vector<Expected> cases = {
      {"malformed JSON",
       begin + "<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"city\": }\n```<｜tool▁call▁end｜>" +
           end,
       begin + "<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"city\": }\n```<｜tool▁call▁end｜>" +
           end,
       "",
       {}},
      {"no fence",
       begin + "<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n{}<｜tool▁call▁end｜>" + end,
       begin + "<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n{}<｜tool▁call▁end｜>" + end,
       "",
       {}},
      {"truncated", begin + weather, begin + weather, "", {}},
      {"unicode arguments",
       begin +
           "<｜tool▁call▁begin｜>function<｜tool▁sep｜>say\n```json\n{\"text\": \"中文 ```\"}\n```<｜tool▁call▁end｜>" +
           end,
       "",
       "",
       {{"call_0", "say", R"({"text": "中文 ```"})"}}},
  };
  test::check_cases(deepseek, shared_cases(begin + weather + end, both));
  test::check_cases(deepseek, cases);
}

TEST(ToolCallQwen3Xml, ParsesTheTextsModelsWrite) {
  const ToolCallFormat& qwen = tool_call_format("qwen3-xml");
  const std::string weather =
      "<tool_call>\n<function=get_weather>\n<parameter=city>\nZürich\n</parameter>\n<parameter=n>\n2\n</parameter>\n"
      "</function>\n</tool_call>";
  const std::string time =
      "<tool_call>\n<function=get_time>\n<parameter=zone>\nAsia/Tokyo\n</parameter>\n</function>\n</tool_call>";
  const std::string both = weather + "\n" + time;
  const std::vector<Expected> cases = {
      {"multi-line and JSON values",
       "<tool_call>\n<function=write>\n<parameter=text>\nline 1\nline 2\n</parameter>\n<parameter=tags>\n[\"a\", "
       "\"b\"]\n</parameter>\n<parameter=force>\ntrue\n</parameter>\n</function>\n</tool_call>",
       "",
       "",
       {{"call_0", "write", R"({"text": "line 1\nline 2", "tags": ["a", "b"], "force": true})"}}},
      {"no parameters", "<tool_call>\n<function=now>\n</function>\n</tool_call>", "", "", {{"call_0", "now", "{}"}}},
      {"malformed: parameter not closed",
       "<tool_call>\n<function=get_weather>\n<parameter=city>\nZürich\n</function>\n</tool_call>",
       "<tool_call>\n<function=get_weather>\n<parameter=city>\nZürich\n</function>\n</tool_call>",
       "",
       {}},
      {"JSON inside: another format",
       "<tool_call>\n" + kWeather + "\n</tool_call>",
       "<tool_call>\n" + kWeather + "\n</tool_call>",
       "",
       {}},
      {"truncated",
       "<tool_call>\n<function=get_weather>\n<parameter=city>\nZür",
       "<tool_call>\n<function=get_weather>\n<parameter=city>\nZür",
       "",
       {}},
      {"unicode arguments",
       "<tool_call>\n<function=say>\n<parameter=text>\n日本語 😀\n</parameter>\n</function>\n</tool_call>",
       "",
       "",
       {{"call_0", "say", R"({"text": "日本語 😀"})"}}},
  };
  test::check_cases(qwen, shared_cases(weather, both));
  test::check_cases(qwen, cases);
}

TEST(ToolCallMiniCpmXml, ParsesTheTextsModelsWrite) {
  const ToolCallFormat& minicpm = tool_call_format("minicpm-xml");
  const std::string weather =
      R"(<function name="get_weather"><param name="city">Zürich</param><param name="n">2</param></function>)";
  const std::string time = R"(<function name="get_time"><param name="zone">Asia/Tokyo</param></function>)";
  const std::string both = weather + "\n" + time;
  const std::vector<Expected> cases = {
      {"CDATA value",
       R"(<function name="write"><param name="text"><![CDATA[a < b & c
d]]></param></function>)",
       "",
       "",
       {{"call_0", "write", R"({"text": "a < b & c\nd"})"}}},
      {"malformed",
       R"(<function name="get_weather"><param name="city">Zürich</function>)",
       R"(<function name="get_weather"><param name="city">Zürich</function>)",
       "",
       {}},
      {"truncated",
       R"(Let me check.
<function name="get_weather"><param name="ci)",
       R"(Let me check.
<function name="get_weather"><param name="ci)",
       "",
       {}},
      {"unicode arguments",
       R"(<function name="say"><param name="text">Ünïcödé ✓</param></function>)",
       "",
       "",
       {{"call_0", "say", R"({"text": "Ünïcödé ✓"})"}}},
  };
  test::check_cases(minicpm, shared_cases(weather, both));
  test::check_cases(minicpm, cases);
}

TEST(ToolCallXml, ToolSchemasKeepStringParametersStrings) {
  const std::string text =
      R"(<function name="lookup"><param name="zip">8001</param><param name="n">2</param></function>)";
  ToolParseOptions options;
  std::string error;
  ASSERT_TRUE(json::parse(R"([{"type": "function", "function": {"name": "lookup", "parameters": {"type": "object",
      "properties": {"zip": {"type": "string"}, "n": {"type": "integer"}}}}}])",
                          &options.tools, &error))
      << error;
  const ParsedResponse typed = parse_response(tool_call_format("minicpm-xml"), text, options);
  ASSERT_EQ(typed.tool_calls.size(), 1u);
  EXPECT_EQ(test::parsed_json(typed.tool_calls[0].arguments), test::parsed_json(R"({"zip": "8001", "n": 2})"));
  const ParsedResponse untyped = parse_response(tool_call_format("minicpm-xml"), text);
  ASSERT_EQ(untyped.tool_calls.size(), 1u);
  EXPECT_EQ(test::parsed_json(untyped.tool_calls[0].arguments), test::parsed_json(R"({"zip": 8001, "n": 2})"));
}

TEST(ToolCallLfm2, ParsesTheTextsModelsWrite) {
  const ToolCallFormat& lfm2 = tool_call_format("lfm2");
  const std::string weather = "<|tool_call_start|>[get_weather(city=\"Zürich\", n=2)]<|tool_call_end|>";
  const std::string deep =
      "<|tool_call_start|>[f(a=" + std::string(100, '[') + std::string(100, ']') + ")]<|tool_call_end|>";
  const std::string both =
      "<|tool_call_start|>[get_weather(city=\"Zürich\", n=2), get_time(zone='Asia/Tokyo')]<|tool_call_end|>";
  const std::vector<Expected> cases = {
      {"text before and after",
       "Let me see.\n" + weather + "Checking the weather in Zürich.",
       "Let me see.Checking the weather in Zürich.",
       "",
       {{"call_0", "get_weather", kWeatherArgs}}},
      {"Python values",
       "<|tool_call_start|>[f(a=True, b=None, c=[1, 'x'], d={'k': -1.5}, e=(2, 3))]<|tool_call_end|>",
       "",
       "",
       {{"call_0", "f", R"({"a": true, "b": null, "c": [1, "x"], "d": {"k": -1.5}, "e": [2, 3]})"}}},
      {"no arguments", "<|tool_call_start|>[now()]<|tool_call_end|>", "", "", {{"call_0", "now", "{}"}}},
      {"malformed: a bare word",
       "<|tool_call_start|>[get_weather(city=Zürich)]<|tool_call_end|>",
       "<|tool_call_start|>[get_weather(city=Zürich)]<|tool_call_end|>",
       "",
       {}},
      {"malformed: JSON inside",
       "<|tool_call_start|>[" + kWeather + "]<|tool_call_end|>",
       "<|tool_call_start|>[" + kWeather + "]<|tool_call_end|>",
       "",
       {}},
      {"nested too deep", deep, deep, "", {}},
      {"truncated", "<|tool_call_start|>[get_weather(city=\"Zür", "<|tool_call_start|>[get_weather(city=\"Zür", "", {}},
      {"unicode and escapes",
       "<|tool_call_start|>[say(text='It\\'s 日本\\n', path=\"C:\\d\")]<|tool_call_end|>",
       "",
       "",
       {{"call_0", "say", R"({"text": "It's 日本\n", "path": "C:\\d"})"}}},
  };
  test::check_cases(lfm2, shared_cases(weather, both));
  test::check_cases(lfm2, cases);
}

TEST(ToolCallGeneric, ParsesTheDefinedShape) {
  const ToolCallFormat& generic = tool_call_format("generic");
  const std::string calls =
      R"({"tool_calls": [{"name": "get_weather", "arguments": {"city": "Zürich", "n": 2}}, {"name": "get_time", "arguments": {"zone": "Asia/Tokyo"}}]})";
  const std::vector<Expected> cases = {
      {"single call", R"({"tool_calls": [)" + kWeather + "]}", "", "", {{"call_0", "get_weather", kWeatherArgs}}},
      {"two calls", calls, "", "", {{"call_0", "get_weather", kWeatherArgs}, {"call_1", "get_time", kTimeArgs}}},
      {"space around",
       " \n" + calls + "\n",
       "",
       "",
       {{"call_0", "get_weather", kWeatherArgs}, {"call_1", "get_time", kTimeArgs}}},
      {"after reasoning",
       "<think>\nweather\n</think>\n\n" + calls,
       "",
       "weather",
       {{"call_0", "get_weather", kWeatherArgs}, {"call_1", "get_time", kTimeArgs}}},
      {"response", "{\"response\": \"It is 21 degrees in Zürich.\\n\"}", "It is 21 degrees in Zürich.\n", "", {}},
      {"text before is text", "Sure: " + calls, "Sure: " + calls, "", {}},
      {"malformed JSON",
       R"({"tool_calls": [{"name": "get_weather", "arguments": {city: 1}}]})",
       R"({"tool_calls": [{"name": "get_weather", "arguments": {city: 1}}]})",
       "",
       {}},
      {"another shape", R"({"tool_calls": [], "response": "x"})", R"({"tool_calls": [], "response": "x"})", "", {}},
      {"truncated",
       R"({"tool_calls": [{"name": "get_weather", "argu)",
       R"({"tool_calls": [{"name": "get_weather", "argu)",
       "",
       {}},
      {"no call", "It is 21 degrees.", "It is 21 degrees.", "", {}},
      {"unicode arguments",
       R"({"tool_calls": [{"name": "say", "arguments": {"text": "हिन्दी"}}]})",
       "",
       "",
       {{"call_0", "say", R"({"text": "हिन्दी"})"}}},
  };
  test::check_cases(generic, cases);
}

TEST(ToolCallIds, GeneratedIdsUseThePrefixAndTheIndex) {
  ToolParseOptions options;
  options.id_prefix = "req7x";
  const std::string text = "<tool_call>\n" + kWeather + "\n</tool_call>\n<tool_call>\n" + kWeather + "\n</tool_call>";
  const ParsedResponse parsed = parse_response(tool_call_format("hermes"), text, options);
  ASSERT_EQ(parsed.tool_calls.size(), 2u);
  EXPECT_EQ(parsed.tool_calls[0].id, "call_req7x0");
  EXPECT_EQ(parsed.tool_calls[1].id, "call_req7x1");
}

TEST(ToolCallReasoning, OptionsChooseHowReasoningIsRead) {
  const std::string call = "<tool_call>\n" + kWeather + "\n</tool_call>";
  ToolParseOptions opened;
  opened.reasoning_opened = true;
  const ParsedResponse from_opened = parse_response(tool_call_format("hermes"), "hm\n</think>\n\n" + call, opened);
  EXPECT_EQ(from_opened.reasoning_content, "hm");
  EXPECT_EQ(from_opened.content, "");
  EXPECT_EQ(from_opened.tool_calls.size(), 1u);

  ToolParseOptions off;
  off.parse_reasoning = false;
  const ParsedResponse kept = parse_response(tool_call_format("hermes"), "<think>\nhm\n</think>\n\n" + call, off);
  EXPECT_EQ(kept.reasoning_content, "");
  EXPECT_EQ(kept.content, "<think>\nhm\n</think>");
  EXPECT_EQ(kept.tool_calls.size(), 1u);

  // A call written inside the reasoning is reasoning.
  const ParsedResponse inside = parse_response(tool_call_format("hermes"), "<think>\n" + call + "\n</think>\n\nNo.");
  EXPECT_EQ(inside.reasoning_content, call);
  EXPECT_EQ(inside.content, "No.");
  EXPECT_TRUE(inside.tool_calls.empty());
}

TEST(ToolCallStream, ContentBeforeACallStreamsBeforeTheCallCompletes) {
  ToolCallStreamParser parser(tool_call_format("hermes"));
  std::vector<ToolParseEvent> events;
  const auto record = [&](const ToolParseEvent& event) { events.push_back(event); };
  parser.feed("Let me check.\n<tool_c", record);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, ToolParseEvent::Kind::Content);
  EXPECT_EQ(events[0].text, "Let me check.");
  parser.feed("all>\n" + kWeather + "\n</tool_", record);
  EXPECT_EQ(events.size(), 1u);  // held until the section closes
  parser.feed("call>", record);
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[1].kind, ToolParseEvent::Kind::CallStart);
  EXPECT_EQ(events[1].index, 0u);
  EXPECT_EQ(events[1].id, "call_0");
  EXPECT_EQ(events[1].name, "get_weather");
  EXPECT_EQ(events[2].kind, ToolParseEvent::Kind::Arguments);
  EXPECT_EQ(events[3].kind, ToolParseEvent::Kind::CallEnd);
  parser.finish(record);
  EXPECT_EQ(events.size(), 4u);
}

// Untrusted text: work linear in its length, whole or streamed, and sections
// that never close (or nest past the JSON parser's depth) kept as content.
TEST(ToolCallBounds, LongAdversarialTextsStayContent) {
  std::string opens;
  for (int i = 0; i < 100000; ++i) opens += "<tool_call>{";
  std::string brackets = "[TOOL_CALLS]" + std::string(1000000, '[');
  const std::string deep = "[TOOL_CALLS]" + std::string(100, '[') + std::string(100, ']');
  std::string spaces(1000000, ' ');
  const struct {
    const char* format;
    std::string text;
  } texts[] = {{"hermes", opens}, {"mistral", brackets}, {"mistral", deep}, {"generic", spaces + "{" + spaces}};
  ToolParseOptions options;
  options.parse_reasoning = false;
  for (const auto& item : texts) {
    const ToolCallFormat& format = tool_call_format(item.format);
    EXPECT_EQ(parse_response(format, item.text, options).content, item.text);
    std::vector<std::string> pieces;
    for (size_t at = 0; at < item.text.size(); at += 7) pieces.push_back(item.text.substr(at, 7));
    const ParsedResponse streamed = test::streamed(format, pieces, options);
    EXPECT_EQ(streamed.content, item.text);
    EXPECT_TRUE(streamed.tool_calls.empty());
  }
}

TEST(ToolCallMessage, IsOpenAIsAssistantMessage) {
  ParsedResponse response;
  response.reasoning_content = "hm";
  response.tool_calls.push_back({"call_0", "get_weather", R"({"city":"Zürich"})"});
  json::Value expected;
  std::string error;
  ASSERT_TRUE(json::parse(R"({"role": "assistant", "content": null, "reasoning_content": "hm", "tool_calls": [
      {"id": "call_0", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Zürich\"}"}}]})",
                          &expected, &error))
      << error;
  EXPECT_EQ(to_openai_message(response), expected);

  const ParsedResponse plain{"Hi", "", {}};
  ASSERT_TRUE(json::parse(R"({"role": "assistant", "content": "Hi"})", &expected, &error)) << error;
  EXPECT_EQ(to_openai_message(plain), expected);
}

}  // namespace
}  // namespace peak::chat
