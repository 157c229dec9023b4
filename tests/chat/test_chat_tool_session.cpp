// Sessions with tools on the scripted Qwen3 model (scripted_qwen3.h), whose
// template renders tools, Hermes calls and tool results: the calls an answer
// makes are held to the tools' schemas by the grammar of Qwen3's format, read
// out of the answer, kept in the log and rendered into later prompts as the
// template renders the same conversation.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "chat/chat_messages_json.h"
#include "chat/chat_session.h"
#include "json/json.h"
#include "model/model.h"
#include "sampling/grammar.h"
#include "scripted_qwen3.h"
#include "scripted_qwen3_session.h"
#include "session_file_edit.h"

namespace peak::chat {
namespace {

using test::Qwen3Script;

const model::Model& scripted(Qwen3Script script) {
  static std::map<Qwen3Script, std::unique_ptr<model::Model>> models;
  std::unique_ptr<model::Model>& m = models[script];
  if (!m) {
    // Tests run as parallel processes: each writes its own file.
    const std::string path = ::testing::TempDir() + "qwen3_tools_" + std::to_string(static_cast<int>(script)) + "_" +
                             ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".gguf";
    test::write_scripted_qwen3(path, script);
    m = model::Model::load(path);
  }
  return *m;
}

// Every argument is an enum and no other property is allowed, so the grammar
// leaves a call one way to end.
const char* const kTools = R"([
{"type": "function", "function": {"name": "get_weather", "description": "The weather in a city.",
 "parameters": {"type": "object", "properties": {"city": {"type": "string", "enum": ["Paris", "Oslo"]}},
                "required": ["city"], "additionalProperties": false}}},
{"type": "function", "function": {"name": "get_time", "description": "The time in a zone.",
 "parameters": {"type": "object", "properties": {"zone": {"type": "string", "enum": ["UTC"]}},
                "required": ["zone"], "additionalProperties": false}}}
])";

SessionSettings settings(ToolChoiceMode choice, bool thinking = false) {
  SessionSettings s = test::scripted_qwen3_settings(thinking, 1024, 256);
  s.tools = kTools;
  s.tool_choice = choice;
  return s;
}

using Streamed = test::StreamedTurn;

constexpr int32_t kMaxTokens = 200;  // ties spell a call out in about 60 tokens

runtime::GenerateOptions streaming(Streamed& streamed) { return test::streaming_options(streamed, kMaxTokens); }

TurnResult turn(ChatSession& session, const std::string& text, Streamed& streamed) {
  return test::streamed_turn(session, text, streamed, kMaxTokens);
}

// The conversation as Qwen3's template renders it with the tools, followed by
// a user message and the header of its answer: what the session's next prompt
// must be.
std::string template_render(const ChatSession& session, std::vector<ChatMessage> messages, bool thinking = false) {
  messages.push_back({"user", "Thanks."});
  FormatOptions options;
  options.enable_thinking = thinking;
  options.tools = kTools;
  return session.chat_template().format(messages, true, options);
}

ChatMessage assistant_message(const TurnResult& result) { return {"assistant", result.answer, result.tool_calls}; }

ChatMessage tool_message(const std::string& id, const std::string& name, const std::string& content) {
  ChatMessage m{"tool", content};
  m.tool_call_id = id;
  m.name = name;
  return m;
}

std::vector<ChatMessage> logged_messages(const ChatSession& session) {
  std::vector<ChatMessage> out;
  for (const LoggedMessage& m : session.log()) {
    ChatMessage c{m.role, m.content, m.tool_calls};
    if (m.role == "tool") {
      c.tool_call_id = m.tool_call_id;
      c.name = m.name;
    }
    out.push_back(c);
  }
  return out;
}

json::Value parsed(const std::string& text) {
  json::Value value;
  std::string error;
  EXPECT_TRUE(json::parse(text, &value, &error)) << text << ": " << error;
  return value;
}

// A call of one of kTools whose arguments its schema allows.
void expect_valid_call(const ToolCall& call, const std::string& name = "") {
  if (!name.empty()) {
    EXPECT_EQ(call.name, name);
  }
  const json::Value arguments = parsed(call.arguments);
  ASSERT_TRUE(arguments.is_object()) << call.arguments;
  ASSERT_EQ(arguments.members().size(), 1u) << call.arguments;
  if (call.name == "get_weather") {
    const json::Value* city = arguments.find("city");
    ASSERT_NE(city, nullptr) << call.arguments;
    EXPECT_TRUE(city->as_string() == "Paris" || city->as_string() == "Oslo") << call.arguments;
  } else {
    EXPECT_EQ(call.name, "get_time");
    const json::Value* zone = arguments.find("zone");
    ASSERT_NE(zone, nullptr) << call.arguments;
    EXPECT_EQ(zone->as_string(), "UTC");
  }
  ASSERT_TRUE(call.id.has_value());
  EXPECT_EQ(call.id->rfind("call_", 0), 0u) << *call.id;
}

// Required: the answer is calls from its start, though the model would write
// "Blue."; it ends where the grammar does, and the next prompt holds the call
// as the template renders it.
TEST(ChatToolSession, RequiredCallsWhereTheModelWouldAnswer) {
  SessionSettings s = settings(ToolChoiceMode::Required);
  s.parallel_tool_calls = false;
  ChatSession session(scripted(Qwen3Script::Answer), s);
  Streamed streamed;
  const TurnResult result = turn(session, "Weather in Paris?", streamed);
  EXPECT_EQ(result.generation.reason, runtime::StopReason::GrammarEnd);
  ASSERT_EQ(result.tool_calls.size(), 1u);
  expect_valid_call(result.tool_calls[0]);
  EXPECT_EQ(result.answer, "");
  EXPECT_EQ(streamed.answer, "");  // no markup of a call reaches the text
  ASSERT_EQ(session.log().size(), 2u);
  EXPECT_EQ(session.log()[1].tool_calls.size(), 1u);
  EXPECT_EQ(session.log()[1].content, "");
  EXPECT_EQ(session.preview_prompt("Thanks."),
            template_render(session, {{"user", "Weather in Paris?"}, assistant_message(result)}));
  EXPECT_EQ(session.context().kv().used() + session.unsettled_tokens(),
            static_cast<int64_t>(session.cached_tokens().size()));
}

TEST(ChatToolSession, ANamedFunctionIsTheOneCalled) {
  SessionSettings s = settings(ToolChoiceMode::Function);
  s.tool_function = "get_weather";
  ChatSession session(scripted(Qwen3Script::Answer), s);
  Streamed streamed;
  const TurnResult result = turn(session, "Weather in Paris?", streamed);
  ASSERT_EQ(result.tool_calls.size(), 1u);
  expect_valid_call(result.tool_calls[0], "get_weather");
  EXPECT_EQ(streamed.answer, "");
}

// Auto: the grammar waits for "<tool_call>"; an answer without one is free text.
TEST(ChatToolSession, AutoLeavesAnAnswerOfText) {
  ChatSession session(scripted(Qwen3Script::Answer), settings(ToolChoiceMode::Auto));
  Streamed streamed;
  const TurnResult result = turn(session, "Name a colour.", streamed);
  EXPECT_EQ(result.answer, "Blue.");
  EXPECT_EQ(streamed.answer, "Blue.");
  EXPECT_TRUE(result.tool_calls.empty());
  EXPECT_EQ(result.generation.reason, runtime::StopReason::EndOfGeneration);
}

TEST(ChatToolSession, AutoHoldsACallTheModelOpensToTheTools) {
  ChatSession session(scripted(Qwen3Script::Call), settings(ToolChoiceMode::Auto));
  Streamed streamed;
  const TurnResult result = turn(session, "Weather in Paris?", streamed);
  ASSERT_EQ(result.tool_calls.size(), 1u);
  expect_valid_call(result.tool_calls[0]);
  EXPECT_EQ(result.answer, "");
  EXPECT_EQ(streamed.answer, "");
}

TEST(ChatToolSession, AutoStreamsTheTextBeforeACall) {
  ChatSession session(scripted(Qwen3Script::TextThenCall), settings(ToolChoiceMode::Auto));
  Streamed streamed;
  const TurnResult result = turn(session, "Weather in Paris?", streamed);
  EXPECT_EQ(result.answer, "Blue.");
  EXPECT_EQ(streamed.answer, "Blue.");
  ASSERT_EQ(result.tool_calls.size(), 1u);
  expect_valid_call(result.tool_calls[0]);
  EXPECT_EQ(session.preview_prompt("Thanks."),
            template_render(session, {{"user", "Weather in Paris?"}, assistant_message(result)}));
}

// The model goes on after a call (a newline): parallel_tool_calls lets the
// grammar take a second call, or ends the answer after the first.
TEST(ChatToolSession, ParallelToolCallsFalseEndsAfterOneCall) {
  SessionSettings s = settings(ToolChoiceMode::Auto);
  s.parallel_tool_calls = false;
  ChatSession one(scripted(Qwen3Script::CallAgain), s);
  Streamed streamed;
  const TurnResult single = turn(one, "Weather in Paris?", streamed);
  EXPECT_EQ(single.generation.reason, runtime::StopReason::GrammarEnd);
  ASSERT_EQ(single.tool_calls.size(), 1u);
  expect_valid_call(single.tool_calls[0]);

  s.parallel_tool_calls = true;
  ChatSession many(scripted(Qwen3Script::CallAgain), s);
  const TurnResult several = turn(many, "Weather in Paris?", streamed);
  ASSERT_GE(several.tool_calls.size(), 2u);
  for (const ToolCall& call : several.tool_calls) expect_valid_call(call);
  EXPECT_NE(several.tool_calls[0].id, several.tool_calls[1].id);
}

// user -> assistant (call) -> tool -> assistant: the result is rendered as the
// template renders it, and the answer after it comes without a user message.
TEST(ChatToolSession, AToolResultIsAnsweredByContinuingTheTurn) {
  for (const ToolChoiceMode next : {ToolChoiceMode::Auto, ToolChoiceMode::None}) {
    ChatSession session(scripted(Qwen3Script::Answer), settings(ToolChoiceMode::Required));
    Streamed streamed;
    const TurnResult call = turn(session, "Weather in Paris?", streamed);
    ASSERT_EQ(call.tool_calls.size(), 1u);
    const ToolCall& made = call.tool_calls[0];
    session.append_tool_result(*made.id, "Sunny, 21 C");
    EXPECT_TRUE(session.tool_results_waiting());
    ASSERT_EQ(session.log().size(), 3u);
    EXPECT_EQ(session.log()[2].role, "tool");
    EXPECT_EQ(session.log()[2].name, made.name);
    EXPECT_EQ(session.log()[2].tool_call_id, *made.id);
    EXPECT_EQ(session.message(2).state, MessageState::InContext);
    session.set_tool_choice(next, "", true);
    const TurnResult final_answer = session.continue_turn(streaming(streamed));
    EXPECT_EQ(final_answer.answer, "Blue.");
    EXPECT_TRUE(final_answer.tool_calls.empty());
    EXPECT_FALSE(session.tool_results_waiting());
    ASSERT_EQ(session.log().size(), 4u);
    EXPECT_EQ(session.log()[3].content, "Blue.");
    EXPECT_EQ(session.stats().turns, 2);
    EXPECT_EQ(session.preview_prompt("Thanks."),
              template_render(session, {{"user", "Weather in Paris?"},
                                        assistant_message(call),
                                        tool_message(*made.id, made.name, "Sunny, 21 C"),
                                        {"assistant", "Blue."}}));
    EXPECT_EQ(session.context().kv().used() + session.unsettled_tokens(),
              static_cast<int64_t>(session.cached_tokens().size()));
  }
}

// Several results follow one answer: Qwen3 renders them in one user turn.
TEST(ChatToolSession, SeveralResultsAreRenderedTogether) {
  ChatSession session(scripted(Qwen3Script::CallAgain), settings(ToolChoiceMode::Auto));
  Streamed streamed;
  const TurnResult calls = turn(session, "Weather in Paris?", streamed);
  ASSERT_GE(calls.tool_calls.size(), 2u);
  session.append_tool_result(*calls.tool_calls[1].id, "second");
  session.append_tool_result(*calls.tool_calls[0].id, "first");
  session.set_tool_choice(ToolChoiceMode::None, "", true);
  runtime::GenerateOptions o = streaming(streamed);
  o.max_tokens = 4;
  const TurnResult next = session.continue_turn(o);
  EXPECT_EQ(session.preview_prompt("Thanks."),
            template_render(session, {{"user", "Weather in Paris?"},
                                      assistant_message(calls),
                                      tool_message(*calls.tool_calls[1].id, calls.tool_calls[1].name, "second"),
                                      tool_message(*calls.tool_calls[0].id, calls.tool_calls[0].name, "first"),
                                      assistant_message(next)}));
}

// A turn with calls, and the answer to their results, are taken back and
// written again; new calls get new ids.
TEST(ChatToolSession, TurnsWithCallsAreAnsweredAgain) {
  ChatSession session(scripted(Qwen3Script::Answer), settings(ToolChoiceMode::Required));
  Streamed streamed;
  const TurnResult first = turn(session, "Weather in Paris?", streamed);
  ASSERT_EQ(first.tool_calls.size(), 1u);
  const TurnResult again = session.regenerate(streaming(streamed));
  ASSERT_EQ(again.tool_calls.size(), 1u);
  EXPECT_EQ(again.tool_calls[0].name, first.tool_calls[0].name);
  EXPECT_EQ(again.tool_calls[0].arguments, first.tool_calls[0].arguments);  // greedy, from the same cache
  EXPECT_NE(again.tool_calls[0].id, first.tool_calls[0].id);
  ASSERT_EQ(session.log().size(), 2u);
  EXPECT_THROW(session.append_tool_result(*first.tool_calls[0].id, "old"), std::invalid_argument);
  session.append_tool_result(*again.tool_calls[0].id, "Sunny");
  session.set_tool_choice(ToolChoiceMode::Auto, "", true);
  EXPECT_EQ(session.continue_turn(streaming(streamed)).answer, "Blue.");
  const std::vector<int32_t> cells = session.cached_tokens();
  // The answer to the result, written again: exactly (the turn's undo), then
  // from the messages (once the undo is gone).
  EXPECT_EQ(session.regenerate(streaming(streamed)).answer, "Blue.");
  EXPECT_EQ(session.cached_tokens(), cells);
  EXPECT_THROW(session.edit_last("Weather in Oslo?", streaming(streamed)), std::invalid_argument);
  ASSERT_EQ(session.log().size(), 4u);
  EXPECT_EQ(session.log()[2].role, "tool");
  EXPECT_EQ(session.stats().turns, 2);
  const std::string expected =
      template_render(session, {{"user", "Weather in Paris?"},
                                assistant_message(again),
                                tool_message(*again.tool_calls[0].id, again.tool_calls[0].name, "Sunny"),
                                {"assistant", "Blue."}});
  EXPECT_EQ(session.preview_prompt("Thanks."), expected);
  // Results waiting are answered by regenerate too.
  ChatSession waiting(scripted(Qwen3Script::Answer), settings(ToolChoiceMode::Required));
  const TurnResult call = turn(waiting, "Weather in Paris?", streamed);
  waiting.append_tool_result(*call.tool_calls[0].id, "Sunny");
  waiting.set_tool_choice(ToolChoiceMode::Auto, "", true);
  EXPECT_EQ(waiting.regenerate(streaming(streamed)).answer, "Blue.");
  EXPECT_EQ(waiting.log().size(), 4u);
}

// A failing continuation leaves the results waiting, as they were.
TEST(ChatToolSession, AFailedContinuationChangesNothing) {
  ChatSession session(scripted(Qwen3Script::Answer), settings(ToolChoiceMode::Required));
  Streamed streamed;
  const TurnResult call = turn(session, "Weather in Paris?", streamed);
  session.append_tool_result(*call.tool_calls[0].id, "Sunny");
  session.set_tool_choice(ToolChoiceMode::Auto, "", true);
  const std::vector<int32_t> cells = session.cached_tokens();
  runtime::GenerateOptions o;
  o.on_text = [](const std::string&) -> bool { throw std::runtime_error("the reader went away"); };
  EXPECT_THROW(session.continue_turn(o), std::runtime_error);
  EXPECT_TRUE(session.tool_results_waiting());
  EXPECT_EQ(session.log().size(), 3u);
  EXPECT_EQ(session.cached_tokens(), cells);
  EXPECT_EQ(session.continue_turn(streaming(streamed)).answer, "Blue.");
}

TEST(ChatToolSession, ThinkingComesBeforeTheCalls) {
  for (const auto& [script, choice] :
       {std::pair{Qwen3Script::Call, ToolChoiceMode::Auto}, std::pair{Qwen3Script::Answer, ToolChoiceMode::Required}}) {
    ChatSession session(scripted(script), settings(choice, /*thinking=*/true));
    Streamed streamed;
    const TurnResult result = turn(session, "Weather in Paris?", streamed);
    EXPECT_EQ(result.reasoning, "Reason");
    EXPECT_EQ(streamed.reasoning, "Reason");
    ASSERT_EQ(result.tool_calls.size(), 1u);
    expect_valid_call(result.tool_calls[0]);
    EXPECT_EQ(streamed.answer, "");
    EXPECT_EQ(session.preview_prompt("Thanks."),
              template_render(session, {{"user", "Weather in Paris?"}, assistant_message(result)}, true));
  }
}

// The answer to a result reasons first too, and keeps only its answer.
TEST(ChatToolSession, TheAnswerToAResultReasonsFirst) {
  ChatSession session(scripted(Qwen3Script::Answer), settings(ToolChoiceMode::Required, /*thinking=*/true));
  Streamed streamed;
  const TurnResult call = turn(session, "Weather in Paris?", streamed);
  ASSERT_EQ(call.tool_calls.size(), 1u);
  session.append_tool_result(*call.tool_calls[0].id, "Sunny");
  session.set_tool_choice(ToolChoiceMode::Auto, "", true);
  Streamed next;
  const TurnResult answer = session.continue_turn(streaming(next), [&](const std::string& piece) {
    next.reasoning += piece;
    return true;
  });
  EXPECT_EQ(answer.reasoning, "Reason");
  EXPECT_EQ(next.reasoning, "Reason");
  EXPECT_EQ(answer.answer, "Blue.");
  EXPECT_EQ(session.preview_prompt("Thanks."), template_render(session, logged_messages(session), true));
}

// tool_choice none: no tools in the prompt, and a call the model writes is text.
TEST(ChatToolSession, ToolChoiceNoneLeavesTheToolsOut) {
  ChatSession session(scripted(Qwen3Script::Call), settings(ToolChoiceMode::None));
  EXPECT_EQ(session.preview_prompt("x").find("# Tools"), std::string::npos);
  Streamed streamed;
  runtime::GenerateOptions o = streaming(streamed);
  o.max_tokens = 4;
  const TurnResult result = session.chat("Weather in Paris?", o);
  EXPECT_TRUE(result.tool_calls.empty());
  EXPECT_EQ(result.answer.rfind("<tool_call>", 0), 0u) << result.answer;
  EXPECT_THROW(session.set_tool_choice(ToolChoiceMode::Auto, "", true), std::invalid_argument);
}

void expect_refused(const std::function<void()>& action, const std::vector<std::string>& words) {
  try {
    action();
    ADD_FAILURE() << "not refused";
  } catch (const std::invalid_argument& e) {
    for (const std::string& word : words) EXPECT_NE(std::string(e.what()).find(word), std::string::npos) << e.what();
  }
}

TEST(ChatToolSession, BadToolSettingsAreRefusedByName) {
  const model::Model& model = scripted(Qwen3Script::Answer);
  SessionSettings s = settings(ToolChoiceMode::Auto);
  s.tools = R"([{"type": "function", "function": {"name": 3}}])";
  expect_refused([&] { ChatSession session(model, s); }, {"tools[0].function.name"});
  s = settings(ToolChoiceMode::Auto);
  s.sampler.grammar = sampling::Grammar::parse("root ::= \"Red.\"\n");
  expect_refused([&] { ChatSession session(model, s); }, {"grammar", "tool_choice"});
  s = settings(ToolChoiceMode::None);
  s.sampler.grammar = sampling::Grammar::parse("root ::= \"Red.\"\n");
  EXPECT_NO_THROW(ChatSession(model, s));
  s = settings(ToolChoiceMode::Function);
  s.tool_function = "get_news";
  expect_refused([&] { ChatSession session(model, s); }, {"get_news"});
  s = settings(ToolChoiceMode::Auto);
  s.tool_call_format = "smoke-signals";
  expect_refused([&] { ChatSession session(model, s); }, {"smoke-signals", "hermes"});
  s = settings(ToolChoiceMode::Auto);
  s.template_name = "raw";
  expect_refused([&] { ChatSession session(model, s); }, {"raw"});
  ChatSession session(model, settings(ToolChoiceMode::Auto));
  sampling::SamplerParams params = session.settings().sampler;
  params.grammar = sampling::Grammar::parse("root ::= \"Red.\"\n");
  expect_refused([&] { session.set_sampler(params); }, {"grammar", "tool_choice"});
}

TEST(ChatToolSession, ToolResultsFollowTheirCalls) {
  ChatSession session(scripted(Qwen3Script::Answer), settings(ToolChoiceMode::Auto));
  Streamed streamed;
  expect_refused([&] { session.append_tool_result("call_1", "x"); }, {"no message"});
  expect_refused([&] { session.continue_turn(streaming(streamed)); }, {"no tool result"});
  turn(session, "Name a colour.", streamed);  // "Blue.": no call
  expect_refused([&] { session.append_tool_result("call_1", "x"); }, {"called no tool"});
  session.set_tool_choice(ToolChoiceMode::Required, "", false);
  const TurnResult call = turn(session, "Weather in Paris?", streamed);
  const std::string id = *call.tool_calls[0].id;
  expect_refused([&] { session.chat("Hello?", streaming(streamed)); }, {"called tools", id});
  expect_refused([&] { session.append("user", "Hello?"); }, {"called tools"});
  expect_refused([&] { session.continue_turn(streaming(streamed)); }, {"no results yet"});
  expect_refused([&] { session.append_tool_result("call_x", "x"); }, {"call_x", id});
  session.append_tool_result(id, "Sunny");
  expect_refused([&] { session.append_tool_result(id, "again"); }, {id, "already"});
  expect_refused([&] { session.chat("Hello?", streaming(streamed)); }, {"continue_turn"});
  expect_refused([&] { session.append("assistant", "Sunny."); }, {"continue_turn"});
  EXPECT_EQ(session.log().size(), 5u);  // the refusals changed nothing
}

// A session of tool_choice required: a call to "Weather in Paris?", its
// result "Sunny, 21 C", and under auto the answer to it ("Blue."). Returns the
// turn of the call.
TurnResult call_answered(ChatSession& session, Streamed& streamed) {
  const TurnResult call = turn(session, "Weather in Paris?", streamed);
  session.append_tool_result(*call.tool_calls.at(0).id, "Sunny, 21 C");
  session.set_tool_choice(ToolChoiceMode::Auto, "", true);
  session.continue_turn(streaming(streamed));
  return call;
}

// Dropped from Recent, an answer's calls and a tool's result reach the
// summarizer's text by the function's name and the result's content.
TEST(ChatToolSession, DroppedCallsAndResultsReachTheSummarizer) {
  SessionSettings s = settings(ToolChoiceMode::Required);
  s.recent_max = 300;  // the Prefix is apart; a call is ~30 tokens, the turns below ~100
  ChatSession session(scripted(Qwen3Script::Answer), s);
  Streamed streamed;
  const TurnResult call = call_answered(session, streamed);
  for (int i = 0; session.message(2).state == MessageState::InContext && i < 20; ++i) {
    turn(session, "Another colour, please, and then one more after that.", streamed);
  }
  ASSERT_NE(session.message(2).state, MessageState::InContext);
  const std::string& dropped = session.dropped_text();
  EXPECT_NE(dropped.find(call.tool_calls[0].name), std::string::npos) << dropped;
  EXPECT_NE(dropped.find("Sunny, 21 C"), std::string::npos) << dropped;
}

// Recent never holds a result without its call: they leave it together.
TEST(ChatToolSession, ACallAndItsResultsAreDroppedTogether) {
  SessionSettings s = settings(ToolChoiceMode::Required);
  s.recent_max = 300;
  ChatSession session(scripted(Qwen3Script::Answer), s);
  Streamed streamed;
  call_answered(session, streamed);
  for (int i = 0; session.message(1).state == MessageState::InContext && i < 20; ++i) {
    turn(session, "A colour?", streamed);
    EXPECT_EQ(session.message(2).state, session.message(1).state) << "after turn " << i;
  }
  EXPECT_NE(session.message(1).state, MessageState::InContext);
  EXPECT_NE(session.cached_tokens().size(), 0u);
  const std::string cells = scripted(Qwen3Script::Answer).tokenizer().detokenize(session.cached_tokens(), false, true);
  EXPECT_EQ(cells.find("tool_response"), std::string::npos) << cells;
}

uint32_t file_version(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  uint8_t header[8] = {};
  const size_t n = f ? std::fread(header, 1, sizeof header, f) : 0;
  if (f) std::fclose(f);
  EXPECT_EQ(n, sizeof header);
  return static_cast<uint32_t>(header[4] | header[5] << 8 | header[6] << 16 | header[7] << 24);
}

// Calls, results and results waiting survive a session file, which the
// session then answers and renders as the template does.
TEST(ChatToolSession, SessionFilesKeepCallsAndResults) {
  const std::string path = ::testing::TempDir() + "tool_session.peaksession";
  Streamed streamed;
  ChatSession saved(scripted(Qwen3Script::Answer), settings(ToolChoiceMode::Required));
  const TurnResult call = turn(saved, "Weather in Paris?", streamed);
  saved.append_tool_result(*call.tool_calls[0].id, "Sunny, 21 C");
  saved.save(path, /*include_kv=*/false);
  EXPECT_EQ(file_version(path), 3u);

  ChatSession restored(scripted(Qwen3Script::Answer), settings(ToolChoiceMode::Auto));
  restored.restore(path);
  ASSERT_EQ(restored.log().size(), 3u);
  EXPECT_TRUE(restored.tool_results_waiting());
  ASSERT_EQ(restored.log()[1].tool_calls.size(), 1u);
  EXPECT_EQ(restored.log()[1].tool_calls[0].id, call.tool_calls[0].id);
  EXPECT_EQ(restored.log()[1].tool_calls[0].arguments, call.tool_calls[0].arguments);
  EXPECT_EQ(restored.log()[2].tool_call_id, *call.tool_calls[0].id);
  EXPECT_EQ(restored.log()[2].name, call.tool_calls[0].name);
  EXPECT_EQ(restored.cached_tokens(), saved.cached_tokens());
  EXPECT_EQ(restored.continue_turn(streaming(streamed)).answer, "Blue.");
  EXPECT_EQ(restored.preview_prompt("Thanks."), template_render(restored, logged_messages(restored)));

  // Saved with its cells after the answer, restored again; a new call gets a new id.
  restored.save(path, /*include_kv=*/true);
  ChatSession again(scripted(Qwen3Script::Answer), settings(ToolChoiceMode::Required));
  again.restore(path);
  EXPECT_EQ(again.cached_tokens(), restored.cached_tokens());
  EXPECT_FALSE(again.tool_results_waiting());
  const TurnResult next = turn(again, "And in Oslo?", streamed);
  ASSERT_EQ(next.tool_calls.size(), 1u);
  EXPECT_NE(next.tool_calls[0].id, call.tool_calls[0].id);

  // Rendered otherwise (another system prompt), the calls are refused by name.
  SessionSettings other = settings(ToolChoiceMode::Auto);
  other.system_prompt = "Be brief.";
  ChatSession elsewhere(scripted(Qwen3Script::Answer), other);
  try {
    elsewhere.restore(path);
    ADD_FAILURE() << "restored";
  } catch (const SessionMismatch& e) {
    EXPECT_NE(std::string(e.what()).find("tool calls"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(elsewhere.log().empty());
}

// A file whose result answers a call its answer did not make is refused, and
// the session kept as it was.
TEST(ChatToolSession, AResultWithoutItsCallIsRefused) {
  const std::string path = ::testing::TempDir() + "tool_session_bad.peaksession";
  Streamed streamed;
  ChatSession saved(scripted(Qwen3Script::Answer), settings(ToolChoiceMode::Required));
  const TurnResult call = turn(saved, "Weather in Paris?", streamed);
  const std::string id = *call.tool_calls[0].id;
  saved.append_tool_result(id, "Sunny");
  saved.save(path, /*include_kv=*/false);
  // The payload (after the 16-byte header, before the 8-byte checksum): the
  // result's tool_call_id is the id's last occurrence.
  const std::vector<uint8_t> bytes = testing::read_bytes(path);
  std::vector<uint8_t> payload(bytes.begin() + 16, bytes.end() - 8);
  const std::string text(payload.begin(), payload.end());
  const size_t at = text.rfind(id);
  ASSERT_NE(at, std::string::npos);
  payload[at + id.size() - 1] = payload[at + id.size() - 1] == '9' ? '8' : '9';
  testing::write_bytes(path, testing::frame_session_payload(payload, 3));
  ChatSession session(scripted(Qwen3Script::Answer), settings(ToolChoiceMode::Auto));
  try {
    session.restore(path);
    ADD_FAILURE() << "restored";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("did not make"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(session.log().empty());
}

// The trigger is found however the answer's text is cut, once.
TEST(TriggerWatch, FindsATextSplitAcrossPieces) {
  TriggerWatch watch("<tool_call>");
  EXPECT_EQ(watch.feed("Let me check. <to"), std::string::npos);
  EXPECT_EQ(watch.feed("ol_ca"), std::string::npos);
  EXPECT_EQ(watch.feed("ll>\n{\"name\""), 3u);
  EXPECT_TRUE(watch.found());
  EXPECT_EQ(watch.feed("<tool_call>"), std::string::npos);
  // A false start that overlaps the real one.
  TriggerWatch overlapping("aab");
  EXPECT_EQ(overlapping.feed("a"), std::string::npos);
  EXPECT_EQ(overlapping.feed("aa"), std::string::npos);
  EXPECT_EQ(overlapping.feed("bc"), 1u);
  TriggerWatch never("[TOOL_CALLS]");
  EXPECT_EQ(never.feed("[TOOL_CALL] [TOOL_CALLS"), std::string::npos);
  EXPECT_FALSE(never.found());
}

}  // namespace
}  // namespace peak::chat
