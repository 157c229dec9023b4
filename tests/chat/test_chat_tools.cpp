// Tools, tool calls and tool results through the chat layer: conversations as
// OpenAI's chat API writes them (messages_from_json, tools_from_json) rendered by
// ChatTemplate::format must equal Jinja2's renders of the same conversations as
// Hugging Face's apply_chat_template receives them (tests/data/README.md says
// how each file was made); where Jinja2 raised, format must throw its message.
// Then the JSON readers' errors, each naming its JSON path, and what the
// built-in families do with tools.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "chat/chat_messages_json.h"
#include "chat/chat_template.h"
#include "jinja/error.h"
#include "jinja/json.h"
#include "template_fixtures.h"

namespace peak::chat {
namespace {

using test::fixture_field;

jinja::Value read_renders(const char* file) {
  return jinja::parse_json(test::read_file(std::string(PEAK_TEST_DATA_DIR) + "/" + file));
}

// jinja_tool_renders.json gives Hugging Face's messages, whose arguments are
// dicts; OpenAI's API carries them as JSON text.
jinja::Value with_arguments_as_text(const jinja::Value& messages) {
  jinja::Value out = jinja::Value::list();
  for (const jinja::Value& m : messages.items()) {
    jinja::Value message = m;
    if (const jinja::Value* calls = m.as_dict().find("tool_calls")) {
      jinja::Value texts = jinja::Value::list();
      for (const jinja::Value& call : calls->items()) {
        jinja::Value function = fixture_field(call, "function");
        function.set("arguments", jinja::to_json(fixture_field(function, "arguments")));
        jinja::Value text_call = call;
        texts.push_back(text_call.set("function", function));
      }
      message.set("tool_calls", texts);
    }
    out.push_back(message);
  }
  return out;
}

// Renders `conversation` (OpenAI's messages) with the template of `result` and
// compares with Jinja2's output or error.
void expect_like_jinja2(const jinja::Value& conversation, const jinja::Value& result) {
  const std::vector<ChatMessage> messages = messages_from_json(jinja::to_json(fixture_field(conversation, "messages")));
  FormatOptions options;
  options.enable_thinking.reset();
  if (const jinja::Value* thinking = conversation.as_dict().find("enable_thinking")) {
    options.enable_thinking = thinking->as_bool();
  }
  if (const jinja::Value* tools = conversation.as_dict().find("tools")) {
    options.tools = tools_from_json(jinja::to_json(*tools));
  }
  options.strftime_now = [](const std::string&) { return std::string("22 Nov 2026"); };
  const ChatTemplate chat = ChatTemplate::from_jinja(
      test::fixture_template(fixture_field(result, "template").as_string()),
      fixture_field(conversation, "bos_token").as_string(), fixture_field(conversation, "eos_token").as_string());
  const bool generation_prompt = fixture_field(conversation, "add_generation_prompt").as_bool();
  const jinja::Value& error = fixture_field(result, "error");
  if (error.is_none()) {
    EXPECT_EQ(chat.format(messages, generation_prompt, options), fixture_field(result, "output").as_string());
    return;
  }
  try {
    chat.format(messages, generation_prompt, options);
    ADD_FAILURE() << "expected the error \"" << error.as_string() << "\"";
  } catch (const jinja::TemplateError& e) {
    EXPECT_EQ(e.message(), error.as_string());
  }
}

// Conversation 2 gives content as a list of parts, which ChatMessage (text) does
// not hold; conversation 1 passes `documents` and `controls`, which FormatOptions
// does not, so it is rendered only by the templates that read neither.
TEST(ChatTools, HuggingFaceConversationsRenderAsJinja2Does) {
  const jinja::Value data = read_renders("jinja_tool_renders.json");
  const auto& conversations = fixture_field(data, "conversations").items();
  int checked = 0;
  for (const jinja::Value& result : fixture_field(data, "results").items()) {
    const int64_t index = fixture_field(result, "conversation").as_int();
    const std::string name = fixture_field(result, "template").as_string();
    const std::string source = test::fixture_template(name);
    const bool reads_documents =
        source.find("documents") != std::string::npos || source.find("controls") != std::string::npos;
    if (index == 2 || (index == 1 && reads_documents)) continue;
    SCOPED_TRACE(name + " x conversation " + std::to_string(index));
    jinja::Value conversation = conversations.at(static_cast<size_t>(index));
    conversation.set("messages", with_arguments_as_text(fixture_field(conversation, "messages")));
    expect_like_jinja2(conversation, result);
    ++checked;
  }
  EXPECT_EQ(checked, 25);  // 13 templates x conversation 0, 12 x conversation 1 (Granite reads documents)
}

// Content null, a tool message's name, float numbers in tools and arguments,
// and arguments that are not a JSON object (given to the template as text).
TEST(ChatTools, OpenAIConversationsRenderAsJinja2Does) {
  const jinja::Value data = read_renders("chat_tool_renders.json");
  const auto& conversations = fixture_field(data, "conversations").items();
  int checked = 0;
  for (const jinja::Value& result : fixture_field(data, "results").items()) {
    const int64_t index = fixture_field(result, "conversation").as_int();
    SCOPED_TRACE(fixture_field(result, "template").as_string() + " x conversation " + std::to_string(index));
    jinja::Value conversation = conversations.at(static_cast<size_t>(index));
    conversation.set("bos_token", "<s>").set("eos_token", "</s>");
    expect_like_jinja2(conversation, result);
    ++checked;
  }
  EXPECT_EQ(checked, 26);
}

// The message of the std::invalid_argument `read` throws.
template <typename Read>
std::string error_of(Read read) {
  try {
    read();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no error)";
}

std::string messages_error(const std::string& json) {
  return error_of([&] { messages_from_json(json); });
}

std::string tools_error(const std::string& json) {
  return error_of([&] { tools_from_json(json); });
}

TEST(ChatTools, ReadsOpenAIMessages) {
  const std::vector<ChatMessage> messages = messages_from_json(
      R"([{"role": "user", "content": "Hi", "name": "ann"},
          {"role": "assistant", "content": null, "refusal": null, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}},
            {"function": {"name": "g", "arguments": "x"}}]},
          {"role": "tool", "content": "1", "tool_call_id": "c1"},
          {"role": "assistant", "tool_calls": []}])");
  ASSERT_EQ(messages.size(), 4u);
  EXPECT_EQ(messages[0].content, "Hi");
  EXPECT_EQ(messages[0].name, "ann");
  EXPECT_FALSE(messages[1].content.has_value());
  ASSERT_EQ(messages[1].tool_calls.size(), 2u);
  EXPECT_EQ(messages[1].tool_calls[0].id, "c1");
  EXPECT_EQ(messages[1].tool_calls[0].name, "f");
  EXPECT_EQ(messages[1].tool_calls[0].arguments, "{}");
  EXPECT_FALSE(messages[1].tool_calls[1].id.has_value());
  EXPECT_EQ(messages[1].tool_calls[1].arguments, "x");
  EXPECT_EQ(messages[2].role, "tool");
  EXPECT_EQ(messages[2].tool_call_id, "c1");
  EXPECT_FALSE(messages[2].name.has_value());
  EXPECT_TRUE(messages[3].tool_calls.empty());
  EXPECT_FALSE(messages[3].content.has_value());
}

struct JsonCase {
  std::string json;
  std::string error;  // what std::invalid_argument says
};

TEST(ChatTools, MessageErrorsNameTheJsonPath) {
  // peak::json's message after the root's name.
  EXPECT_EQ(messages_error("[{\"role\": \"user\", \"content\": \"a\"}").rfind("messages: at byte 33: ", 0), 0u);
  const std::string calls = R"([{"role": "user", "content": "a"}, {"role": "user", "content": "b"},
                              {"role": "assistant", "tool_calls": [)";
  const JsonCase cases[] = {
      {"{}", "messages: expected an array, not an object"},
      {"[1]", "messages[0]: expected an object, not a number"},
      {R"([{"content": "a"}])", "messages[0].role: missing (expected a string)"},
      {R"([{"role": "wizard", "content": "a"}])",
       "messages[0].role: unknown role 'wizard' (expected system, user, assistant or tool)"},
      {R"([{"role": "user", "content": null}])",
       "messages[0].content: missing (expected a string; only an assistant message may have none)"},
      {R"([{"role": "user", "content": [{"type": "text", "text": "a"}]}])",
       "messages[0].content: content parts (an array) are not supported; give the text"},
      {R"([{"role": "user", "content": 7}])", "messages[0].content: expected a string, not a number"},
      {R"([{"role": "user", "content": "a", "tool_calls": [{}]}])",
       "messages[0].tool_calls: only an assistant message calls tools"},
      {R"([{"role": "assistant", "tool_calls": {}}])", "messages[0].tool_calls: expected an array, not an object"},
      {calls + R"({"function": {"name": 5, "arguments": "{}"}}]}])",
       "messages[2].tool_calls[0].function.name: expected a string, not a number"},
      {calls + R"({"function": {"name": "f"}}]}])",
       "messages[2].tool_calls[0].function.arguments: missing (expected a string)"},
      {calls + R"({"function": {"name": "f", "arguments": {}}}]}])",
       "messages[2].tool_calls[0].function.arguments: expected a string, not an object"},
      {calls + R"({"type": "code", "function": {"name": "f", "arguments": ""}}]}])",
       "messages[2].tool_calls[0].type: 'code' is not a tool type (expected \"function\")"},
      {calls + R"({"id": 1, "function": {"name": "f", "arguments": ""}}]}])",
       "messages[2].tool_calls[0].id: expected a string, not a number"},
      {calls + R"({"name": "f"}]}])", "messages[2].tool_calls[0].function: missing (expected an object)"},
      {R"([{"role": "user", "content": "a", "tool_call_id": "c1"}])",
       "messages[0].tool_call_id: only a tool message answers a call"},
      {R"([{"role": "tool", "content": "a", "name": ["f"]}])", "messages[0].name: expected a string, not an array"},
  };
  for (const JsonCase& c : cases) EXPECT_EQ(messages_error(c.json), c.error) << c.json;
}

TEST(ChatTools, BoundsTheConversation) {
  std::string many = "[";
  for (size_t i = 0; i <= kMaxJsonMessages; ++i) many += i ? ",{}" : "{}";
  many += "]";
  EXPECT_EQ(messages_error(many), "messages: 65537 items, more than the 65536 taken");
  std::string deep(100, '[');
  EXPECT_NE(messages_error(deep + std::string(100, ']')).find("messages: at byte"), std::string::npos);
}

TEST(ChatTools, ToolErrorsNameTheJsonPath) {
  const std::string weather =
      R"({"type": "function", "function": {"name": "w", "description": "d", "parameters": {"type": "object"}}})";
  EXPECT_EQ(tools_from_json("[" + weather + "]"), "[" + weather + "]");
  EXPECT_EQ(tools_from_json(R"([{"type": "function", "function": {"name": "w"}}])"),
            R"([{"type": "function", "function": {"name": "w"}}])");
  EXPECT_EQ(tools_error("nope").rfind("tools: at byte 0: ", 0), 0u);
  const JsonCase cases[] = {
      {"{}", "tools: expected an array, not an object"},
      {R"([{"function": {"name": "w"}}])", "tools[0].type: missing (expected \"function\")"},
      {"[" + weather + R"(, {"type": "retrieval", "function": {"name": "w"}}])",
       "tools[1].type: 'retrieval' is not a tool type (expected \"function\")"},
      {R"([{"type": "function"}])", "tools[0].function: missing (expected an object)"},
      {R"([{"type": "function", "function": {"description": "d"}}])",
       "tools[0].function.name: missing (expected a string)"},
      {R"([{"type": "function", "function": {"name": "w", "description": 1}}])",
       "tools[0].function.description: expected a string, not a number"},
      {R"([{"type": "function", "function": {"name": "w", "parameters": []}}])",
       "tools[0].function.parameters: expected an object, not an array"},
  };
  for (const JsonCase& c : cases) EXPECT_EQ(tools_error(c.json), c.error) << c.json;
}

// llama.cpp's ChatML writes a tool result as a turn of role "tool"; no built-in
// family has a prompt for tools or tool calls.
TEST(ChatTools, BuiltInFamiliesRenderToolResultsOnlyInChatML) {
  const std::vector<ChatMessage> result = {{"user", "Weather?"}, {"tool", "sunny"}};
  EXPECT_EQ(ChatTemplate(ChatTemplateFamily::ChatML).format(result, true),
            "<|im_start|>user\nWeather?<|im_end|>\n<|im_start|>tool\nsunny<|im_end|>\n<|im_start|>assistant\n");
  ChatMessage call{"assistant", std::nullopt};
  call.tool_calls.push_back({"c1", "get_weather", "{}"});
  FormatOptions tools;
  tools.tools = R"([{"type": "function", "function": {"name": "get_weather"}}])";
  for (const std::string_view name : ChatTemplate::known_names()) {
    SCOPED_TRACE(std::string(name));
    const ChatTemplate chat = ChatTemplate::from_name(name);
    const std::string tools_error = error_of([&] { chat.format({{"user", "Weather?"}}, true, tools); });
    EXPECT_NE(tools_error.find("chat template " + std::string(name) + ": tools cannot be rendered"), std::string::npos)
        << tools_error;
    EXPECT_NE(tools_error.find("use the model's own chat template"), std::string::npos) << tools_error;
    EXPECT_NE(error_of([&] {
                chat.format({{"user", "Weather?"}, call}, true);
              }).find("with tool_calls"),
              std::string::npos);
    if (name != "chatml") {
      EXPECT_NE(error_of([&] { chat.format(result, true); }).find("a tool message cannot be rendered"),
                std::string::npos);
    }
  }
  EXPECT_NE(error_of([&] {
              ChatTemplate::from_name("chatml").format({{"developer", "x"}}, true);
            }).find("unknown role 'developer' (expected system, user, assistant or tool)"),
            std::string::npos);
}

TEST(ChatTools, ToolsThatAreNotJsonAreAnInvalidArgument) {
  const ChatTemplate qwen = ChatTemplate::from_jinja(test::fixture_template("Qwen-Qwen3-0.6B"), "", "<|im_end|>");
  FormatOptions options;
  options.tools = "[";
  EXPECT_NE(error_of([&] { qwen.format({{"user", "Hi"}}, true, options); }).find("tools: "), std::string::npos);
}

}  // namespace
}  // namespace peak::chat
