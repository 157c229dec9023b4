// The routes of `peak serve` driven without sockets: requests handed to
// Server::handle with a fake HttpResponder, on the real stories260K model.
// Greedy answers are checked against a reference computed here through the C
// API alone (peak_chat_apply_template + peak_generate at temperature 0), and
// /v1/embeddings, on the tiny bert model tests/runtime writes, against
// peak_embed's vectors for the same texts, and /v1/rerank, on its tiny bert
// reranker, against peak_rerank's scores. Chat with pictures, on the tiny
// Gemma 3 image encoder tests/runtime writes, against a session given the
// picture's rows through the C API.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base64.h"
#include "conversation_store.h"
#include "json/json.h"
#include "test_pictures.h"
#include "openai_response.h"
#include "routes.h"
#include "web_page.h"

namespace {

using peak::json::Value;
using peak_server::ChatSlot;
using peak_server::ConversationStore;
using peak_server::HttpHeader;
using peak_server::HttpRequest;
using peak_server::HttpResponder;
using peak_server::Server;
using peak_server::ServerOptions;
using peak_server::SlotSettings;

const std::string kStories = std::string(PEAK_SHARED_DIR) + "/models/stories260K.gguf";

const peak_model* stories() {
  static peak_model* model = [] {
    peak_model* m = nullptr;
    EXPECT_EQ(peak_model_load(kStories.c_str(), nullptr, &m), PEAK_OK) << peak_last_error();
    return m;
  }();
  return model;
}

// Records what a handler answers; can fail writes, report the client gone,
// or hold a write until released.
class FakeResponder : public HttpResponder {
 public:
  bool respond(int s, std::string_view type, std::string_view b, const std::vector<HttpHeader>& extra) override {
    EXPECT_EQ(status, 0) << "answered twice";
    status = s;
    content_type = type;
    body = b;
    headers = extra;
    return true;
  }
  bool start_stream(int s, std::string_view type, const std::vector<HttpHeader>& extra) override {
    EXPECT_EQ(status, 0) << "answered twice";
    status = s;
    content_type = type;
    headers = extra;
    streamed = true;
    return true;
  }
  bool write(std::string_view bytes) override {
    if (before_write) before_write();
    if (writes >= fail_after_writes) return false;
    ++writes;
    body += bytes;
    return true;
  }
  bool client_gone() override { return writes >= fail_after_writes || gone->load(); }

  const std::string* header(const std::string& name) const {
    for (const HttpHeader& h : headers)
      if (h.name == name) return &h.value;
    return nullptr;
  }
  Value json() const {
    Value v;
    std::string error;
    EXPECT_TRUE(peak::json::parse(body, &v, &error)) << error << ": " << body;
    return v;
  }
  // The data of each server-sent event, "[DONE]" included.
  std::vector<std::string> events() const {
    std::vector<std::string> out;
    size_t pos = 0;
    while (pos < body.size()) {
      const size_t end = body.find("\n\n", pos);
      EXPECT_NE(end, std::string::npos) << "an unterminated event";
      if (end == std::string::npos) break;
      const std::string event = body.substr(pos, end - pos);
      EXPECT_EQ(event.rfind("data: ", 0), 0u) << event;
      out.push_back(event.substr(6));
      pos = end + 2;
    }
    return out;
  }

  int status = 0;
  std::string content_type, body;
  std::vector<HttpHeader> headers;
  bool streamed = false;
  size_t writes = 0;
  size_t fail_after_writes = SIZE_MAX;
  std::shared_ptr<std::atomic<bool>> gone = std::make_shared<std::atomic<bool>>(false);  // set by another thread
  std::function<void()> before_write;
};

HttpRequest request(const std::string& method, const std::string& path, const std::string& body = "",
                    std::vector<HttpHeader> headers = {}) {
  HttpRequest r;
  r.method = method;
  r.path = path;
  r.body = body;
  r.headers = std::move(headers);
  r.peer = "127.0.0.1:1";
  return r;
}

SlotSettings settings() {
  SlotSettings s;
  s.model = stories();
  s.session.chat_template = "chatml";
  s.session.n_threads = 1;
  s.session.recent_max = 2048;
  s.session.summary_max = 64;
  s.session.headroom = 64;
  s.session.summary_n_ctx = 256;
  s.session.summary_max_new_tokens = 32;
  s.context.n_threads = 1;
  s.context.type_k = s.context.type_v = PEAK_TYPE_Q8_0;  // as peak serve asks (stories260K's head size then gets F16)
  return s;
}

ServerOptions options(size_t parallel = 1, size_t queue = 4) {
  ServerOptions o;
  o.model_id = "stories260K.gguf";
  o.parallel = parallel;
  o.max_queue = queue;
  o.default_max_tokens = 16;
  return o;
}

struct Msg {
  const char* role;
  std::string content;
};

std::string chat_body(const std::vector<Msg>& messages, const std::string& extra = "", int temperature = 0) {
  Value list = Value::array();
  for (const Msg& m : messages) list.push(Value::object().set("role", m.role).set("content", m.content));
  Value body = Value::object().set("model", "x").set("messages", list).set("temperature", temperature);
  std::string text = peak::json::write(body);
  if (!extra.empty()) text.insert(text.size() - 1, "," + extra);
  return text;
}

FakeResponder call(Server& server, const HttpRequest& r) {
  FakeResponder out;
  server.handle(r, out);
  return out;
}

// A conversation as the ChatML template renders it (peak_chat_apply_template).
std::string rendered(const std::vector<Msg>& messages, bool generation_prompt) {
  std::vector<peak_chat_message> list;
  for (const Msg& m : messages) list.push_back({m.role, m.content.c_str()});
  peak_chat_template_params tp = peak_chat_template_default_params();
  tp.template_name = "chatml";
  tp.add_generation_prompt = generation_prompt;
  size_t n = 0;
  peak_chat_apply_template(stories(), &tp, list.data(), list.size(), nullptr, 0, &n);
  std::string text(n + 1, '\0');
  EXPECT_EQ(peak_chat_apply_template(stories(), &tp, list.data(), list.size(), text.data(), text.size(), &n), PEAK_OK);
  text.resize(n);
  return text;
}

// `prompt` continued greedily in a fresh context (peak_generate).
std::string greedy_continuation(const std::string& prompt, size_t max_tokens, peak_type kv_type = PEAK_TYPE_F16) {
  peak_context_params cp = peak_context_default_params();
  cp.n_threads = 1;
  cp.type_k = cp.type_v = kv_type;
  peak_context* ctx = nullptr;
  EXPECT_EQ(peak_context_create(stories(), &cp, &ctx), PEAK_OK);
  peak_sampler_params sp = peak_sampler_default_params();
  sp.temperature = 0;
  peak_sampler* sampler = nullptr;
  EXPECT_EQ(peak_sampler_create(stories(), &sp, &sampler), PEAK_OK);
  std::string out;
  peak_generate_params gp = peak_generate_default_params();
  gp.max_tokens = max_tokens;
  gp.user_data = &out;
  gp.on_text = [](const char* t, size_t len, void* self) {
    static_cast<std::string*>(self)->append(t, len);
    return 1;
  };
  EXPECT_EQ(peak_generate(ctx, sampler, prompt.data(), prompt.size(), &gp, nullptr), PEAK_OK) << peak_last_error();
  peak_sampler_free(sampler);
  peak_context_free(ctx);
  return out;
}

// The reference answer: the conversation rendered with the generation prompt, continued greedily.
std::string reference_answer(const std::vector<Msg>& messages, size_t max_tokens) {
  return greedy_continuation(rendered(messages, true), max_tokens);
}

size_t count_tokens(const std::string& text) {
  size_t n = 0;
  peak_tokenize(stories(), text.data(), text.size(), 1, 1, nullptr, 0, &n);
  return n;
}

void expect_error(const FakeResponder& out, int status, const std::string& message_part, const std::string& param = "") {
  EXPECT_EQ(out.status, status) << out.body;
  EXPECT_EQ(out.content_type, "application/json");
  const Value v = out.json();
  const Value* e = v.find("error");
  ASSERT_NE(e, nullptr) << out.body;
  ASSERT_TRUE(e->find("message") && e->find("message")->is_string());
  EXPECT_NE(e->find("message")->as_string().find(message_part), std::string::npos) << e->find("message")->as_string();
  ASSERT_NE(e->find("type"), nullptr);
  ASSERT_NE(e->find("code"), nullptr);
  EXPECT_EQ(e->find("code")->as_int(), status);
  if (!param.empty()) {
    ASSERT_TRUE(e->find("param") && e->find("param")->is_string()) << out.body;
    EXPECT_EQ(e->find("param")->as_string(), param);
  }
}

const std::string& content_of(const Value& response) {
  return response.find("choices")->items()[0].find("message")->find("content")->as_string();
}

// A chat answer's content and finish_reason, whole or gathered from its stream.
struct ChatAnswer {
  std::string content, finish;
};

ChatAnswer chat_answer(const FakeResponder& out) {
  ChatAnswer a;
  if (!out.streamed) {
    const Value v = out.json();
    a.content = content_of(v);
    a.finish = v.find("choices")->items()[0].find("finish_reason")->as_string();
    return a;
  }
  for (const std::string& e : out.events()) {
    if (e == "[DONE]") continue;
    Value chunk;
    if (!peak::json::parse(e, &chunk, nullptr)) {
      ADD_FAILURE() << "not JSON: " << e;
      continue;
    }
    const Value& choice = chunk.find("choices")->items()[0];
    if (const Value* c = choice.find("delta")->find("content")) a.content += c->as_string();
    if (choice.find("finish_reason")->is_string()) a.finish = choice.find("finish_reason")->as_string();
  }
  return a;
}

TEST(ServerRoutes, RequestErrors) {
  Server server(settings(), options());
  const auto post = [&](const std::string& body) { return call(server, request("POST", "/v1/chat/completions", body)); };
  expect_error(post("{\"messages\": ["), 400, "not valid JSON: at byte 14");
  expect_error(post("[1]"), 400, "must be a JSON object");
  expect_error(post("{}"), 400, "'messages' is required", "messages");
  expect_error(post("{\"messages\": \"hi\"}"), 400, "'messages' must be an array, not a string", "messages");
  expect_error(post("{\"messages\": []}"), 400, "must not be empty", "messages");
  expect_error(post(chat_body({{"user", "Hi"}}, "\"temperature\": \"hot\"")), 400, "'temperature' must be a number",
               "temperature");
  expect_error(post(chat_body({{"user", "Hi"}}, "\"max_tokens\": 1.5")), 400, "'max_tokens' must be an integer",
               "max_tokens");
  expect_error(post(chat_body({{"user", "Hi"}}, "\"top_p\": 2")), 400, "'top_p' must be between 0 and 1", "top_p");
  expect_error(post(chat_body({{"user", "Hi"}}, "\"stop\": [1]")), 400, "'stop[0]' must be a string", "stop[0]");
  expect_error(post(chat_body({{"user", "Hi"}}, "\"n\": 2")), 400, "'n' must be between 1 and 1", "n");
  expect_error(post(chat_body({{"user", "Hi"}, {"assistant", "Hello"}})), 400, "the last message must be a user message",
               "messages");
  expect_error(post(chat_body({{"user", "Hi"}, {"user", "Again"}})), 400, "must alternate", "messages[1].role");
  expect_error(post(chat_body({{"user", "Hi"}, {"system", "Late"}, {"user", "x"}})), 400, "may only come first",
               "messages[1].role");
  expect_error(post(chat_body({{"function", "Hi"}, {"user", "x"}})), 400, "unsupported role 'function'",
               "messages[0].role");
  expect_error(post(chat_body({{"tool", "Hi"}, {"user", "x"}})), 400, "'messages[0].tool_call_id' is required",
               "messages[0].tool_call_id");
  expect_error(post("{\"messages\": [{\"role\": \"user\"}]}"), 400, "'messages[0].content' is required",
               "messages[0].content");
  expect_error(post("{\"messages\": [{\"role\": \"user\", \"content\": [{\"type\": \"file\"}]}]}"), 400,
               "must be \"text\" or \"image_url\", not \"file\"", "messages[0].content[0].type");
  expect_error(call(server, request("GET", "/v1/nothing")), 404, "no route GET /v1/nothing");
  expect_error(call(server, request("GET", "/v1/chat/completions")), 405, "use POST");
  expect_error(call(server, request("POST", "/v1/completions", "{\"prompt\": 5}")), 400, "'prompt' must be a string",
               "prompt");
  expect_error(call(server, request("POST", "/detokenize", "{\"tokens\": [1, 100000]}")), 400,
               "'tokens[1]' is 100000, not a token id (0 to 511)", "tokens[1]");
  // Nothing of this reached a slot.
  EXPECT_EQ(server.counters().prompt_tokens_evaluated, 0u);
}

// A picture the request reads, with no projector to see it: a 400 naming
// the message and --mmproj, before any slot (streamed or not).
TEST(ServerRoutes, AnImageNeedsAVisionProjector) {
  Server server(settings(), options());
  // A PNG's signature and a zero byte: as much as the request checks.
  const std::string parts = R"([{"type": "text", "text": "What is it?"},
    {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgoA"}}])";
  for (const char* stream : {"false", "true"}) {
    const FakeResponder out =
        call(server, request("POST", "/v1/chat/completions",
                             R"({"messages": [{"role": "system", "content": "Look."}, {"role": "user", "content": "Hi"},
                           {"role": "assistant", "content": "Hello"}, {"role": "user", "content": )" +
                                 parts + R"(}], "stream": )" + stream + "}"));
    EXPECT_FALSE(out.streamed);
    expect_error(out, 400,
                 "'messages[3].content' holds an image, and this server has no vision projector: start peak serve "
                 "with --mmproj FILE beside the model",
                 "messages[3].content");
  }
  EXPECT_EQ(server.counters().prompt_tokens_evaluated, 0u);
}

TEST(ServerRoutes, ApiKey) {
  ServerOptions o = options();
  o.api_key = "s3cret";
  Server server(settings(), o);
  expect_error(call(server, request("GET", "/v1/models")), 401, "an API key is needed");
  const FakeResponder wrong = call(server, request("GET", "/v1/models", "", {{"authorization", "Bearer nope"}}));
  expect_error(wrong, 401, "invalid API key");
  ASSERT_NE(wrong.header("WWW-Authenticate"), nullptr);
  expect_error(call(server, request("GET", "/v1/models", "", {{"authorization", "Bearer s3cret2"}})), 401, "invalid");
  expect_error(call(server, request("GET", "/nowhere")), 401, "an API key is needed");  // no route probing without it
  EXPECT_EQ(call(server, request("GET", "/v1/models", "", {{"authorization", "Bearer s3cret"}})).status, 200);
  EXPECT_EQ(call(server, request("GET", "/health")).status, 200);
  EXPECT_EQ(call(server, request("GET", "/")).status, 200);
}

TEST(ServerRoutes, ModelsHealthPageTokens) {
  Server server(settings(), options(2));
  const Value models = call(server, request("GET", "/v1/models")).json();
  EXPECT_EQ(models.find("object")->as_string(), "list");
  ASSERT_EQ(models.find("data")->items().size(), 1u);
  EXPECT_EQ(models.find("data")->items()[0].find("id")->as_string(), "stories260K.gguf");
  EXPECT_EQ(models.find("data")->items()[0].find("object")->as_string(), "model");
  // No vision projector: chat messages may hold no pictures.
  ASSERT_TRUE(models.find("data")->items()[0].find("vision")->is_bool());
  EXPECT_FALSE(models.find("data")->items()[0].find("vision")->as_bool());

  const Value health = call(server, request("GET", "/health")).json();
  EXPECT_EQ(health.find("status")->as_string(), "ok");
  EXPECT_EQ(health.find("slots_idle")->as_int(), 2);
  EXPECT_EQ(health.find("slots_processing")->as_int(), 0);

  const FakeResponder page = call(server, request("GET", "/"));
  EXPECT_EQ(page.content_type, "text/html; charset=utf-8");
  EXPECT_EQ(page.body, std::string(peak_server::web_page_html()));

  // /tokenize against peak_tokenize (BOS only with add_special), /detokenize back.
  const std::string text = "Once upon a time";
  std::vector<int32_t> ids(32);
  size_t n = 0;
  ASSERT_EQ(peak_tokenize(stories(), text.data(), text.size(), 0, 1, ids.data(), ids.size(), &n), PEAK_OK);
  ids.resize(n);
  const Value tokens = call(server, request("POST", "/tokenize", "{\"content\": \"Once upon a time\"}")).json();
  ASSERT_EQ(tokens.find("tokens")->items().size(), ids.size());
  for (size_t i = 0; i < ids.size(); ++i) EXPECT_EQ(tokens.find("tokens")->items()[i].as_int(), ids[i]);
  const Value with_bos =
      call(server, request("POST", "/tokenize", "{\"content\": \"Once upon a time\", \"add_special\": true}")).json();
  EXPECT_EQ(with_bos.find("tokens")->items().size(), ids.size() + 1);
  const Value pieces =
      call(server, request("POST", "/tokenize", "{\"content\": \"Once\", \"with_pieces\": true}")).json();
  EXPECT_EQ(pieces.find("tokens")->items()[0].find("piece")->as_string(), " Once");
  std::string ids_json = "{\"tokens\": [";
  for (size_t i = 0; i < ids.size(); ++i) ids_json += (i ? "," : "") + std::to_string(ids[i]);
  ids_json += "]}";
  const Value back = call(server, request("POST", "/detokenize", ids_json)).json();
  // As llama.cpp detokenizes SentencePiece: the space the tokenizer put before the first word is dropped.
  EXPECT_EQ(back.find("content")->as_string(), "Once upon a time");
}

TEST(ServerRoutes, GreedyChatEqualsTheReference) {
  Server server(settings(), options());
  const std::vector<Msg> messages = {{"system", "You tell stories."}, {"user", "Once upon a time"}};
  const FakeResponder out = call(server, request("POST", "/v1/chat/completions", chat_body(messages, "\"max_tokens\": 24")));
  ASSERT_EQ(out.status, 200) << out.body;
  const Value v = out.json();
  const std::string expected = reference_answer(messages, 24);
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(content_of(v), expected);
  EXPECT_EQ(v.find("object")->as_string(), "chat.completion");
  EXPECT_EQ(v.find("model")->as_string(), "stories260K.gguf");
  EXPECT_EQ(v.find("choices")->items()[0].find("message")->find("role")->as_string(), "assistant");
  const Value* usage = v.find("usage");
  ASSERT_NE(usage, nullptr);
  EXPECT_LE(usage->find("completion_tokens")->as_int(), 24);
  EXPECT_EQ(usage->find("prompt_tokens")->as_int(), static_cast<int64_t>(count_tokens(rendered(messages, true))));
  EXPECT_EQ(usage->find("total_tokens")->as_int(),
            usage->find("prompt_tokens")->as_int() + usage->find("completion_tokens")->as_int());
  const Value* peak = v.find("peak");
  ASSERT_NE(peak, nullptr);
  EXPECT_EQ(peak->find("slot")->as_int(), 0);
  EXPECT_EQ(peak->find("summarized_messages")->as_int(), 0);
}

TEST(ServerRoutes, StreamingFollowsOpenAi) {
  Server server(settings(), options());
  const std::vector<Msg> messages = {{"user", "Once upon a time"}};
  FakeResponder out = call(server, request("POST", "/v1/chat/completions",
                                           chat_body(messages, "\"max_tokens\": 20, \"stream\": true, "
                                                               "\"stream_options\": {\"include_usage\": true}")));
  ASSERT_EQ(out.status, 200);
  EXPECT_TRUE(out.streamed);
  EXPECT_EQ(out.content_type, "text/event-stream");
  const std::vector<std::string> events = out.events();
  ASSERT_GE(events.size(), 4u);
  EXPECT_EQ(events.back(), "[DONE]");
  std::string content;
  std::string id;
  for (size_t i = 0; i + 1 < events.size(); ++i) {
    Value chunk;
    ASSERT_TRUE(peak::json::parse(events[i], &chunk, nullptr)) << events[i];
    EXPECT_EQ(chunk.find("object")->as_string(), "chat.completion.chunk");
    if (id.empty()) id = chunk.find("id")->as_string();
    EXPECT_EQ(chunk.find("id")->as_string(), id);
    const auto& choices = chunk.find("choices")->items();
    if (i + 2 == events.size()) {  // the usage chunk: no choices
      EXPECT_TRUE(choices.empty());
      EXPECT_GT(chunk.find("usage")->find("completion_tokens")->as_int(), 0);
      continue;
    }
    ASSERT_EQ(choices.size(), 1u);
    const Value& delta = *choices[0].find("delta");
    if (i == 0) {
      EXPECT_EQ(delta.find("role")->as_string(), "assistant");
    }
    if (const Value* c = delta.find("content")) content += c->as_string();
    EXPECT_EQ(delta.find("reasoning_content"), nullptr);
    const Value& finish = *choices[0].find("finish_reason");
    if (i + 3 == events.size()) {
      EXPECT_TRUE(finish.is_string());
    } else {
      EXPECT_TRUE(finish.is_null());
    }
  }
  EXPECT_EQ(content, reference_answer(messages, 20));
}

TEST(ServerRoutes, StopStringsCutTheAnswer) {
  const std::vector<Msg> messages = {{"user", "Once upon a time"}};
  const std::string full = reference_answer(messages, 32);
  ASSERT_GT(full.size(), 12u);
  // A stop string from the middle of the answer: what comes before it, and
  // finish_reason "stop", whether streamed or not.
  const std::string stop = full.substr(full.size() / 2, 3);
  const std::string expected = full.substr(0, full.find(stop));
  Value stops = Value::array().push("never appears here").push(stop);
  const std::string extra = "\"max_tokens\": 32, \"stop\": " + peak::json::write(stops);
  for (const bool stream : {false, true}) {
    Server server(settings(), options());
    FakeResponder out = call(server, request("POST", "/v1/chat/completions",
                                             chat_body(messages, extra + (stream ? ", \"stream\": true" : ""))));
    ASSERT_EQ(out.status, 200);
    const ChatAnswer answer = chat_answer(out);
    EXPECT_EQ(answer.content, expected) << "stream " << stream;
    EXPECT_EQ(answer.finish, "stop");
  }
}

// A front-end sends the whole history every turn: each turn must prefill only
// what is new (the new user message as the template frames it).
TEST(ServerRoutes, TwentyTurnReplayPrefillsOnlyTheNewMessages) {
  Server server(settings(), options());
  std::vector<Msg> history = {{"system", "You tell stories."}};
  const char* lines[] = {"Lily went to the park.", "She saw a big dog.", "The dog was happy.", "They played ball.",
                         "Then it rained."};
  size_t evaluated = 0, new_tokens = 0, full_prefill = 0;
  for (int turn = 0; turn < 20; ++turn) {
    const std::vector<Msg> before = history;
    history.push_back({"user", lines[turn % 5]});
    const FakeResponder out =
        call(server, request("POST", "/v1/chat/completions", chat_body(history, "\"max_tokens\": 8")));
    ASSERT_EQ(out.status, 200) << out.body;
    const Value v = out.json();
    evaluated += static_cast<size_t>(v.find("peak")->find("prompt_tokens_evaluated")->as_int());
    // Independently: the tokens the new message adds to the rendered conversation.
    const size_t with = count_tokens(rendered(history, true));
    const size_t without = turn == 0 ? count_tokens(rendered({history[0]}, false)) : count_tokens(rendered(before, false));
    new_tokens += with - without + (turn == 0 ? without : 0);
    full_prefill += with;
    history.push_back({"assistant", content_of(v)});
  }
  std::printf("20-turn replay: %zu tokens prefilled, new messages %zu tokens, full history each turn %zu tokens\n",
              evaluated, new_tokens, full_prefill);
  EXPECT_LE(static_cast<double>(evaluated), 1.2 * static_cast<double>(new_tokens));
  EXPECT_EQ(server.counters().prompt_tokens_evaluated, evaluated);
}

TEST(ServerRoutes, ALongConversationIsSummarizedNotRefused) {
  SlotSettings s = settings();
  s.session.recent_max = 128;
  s.session.summary_max = 64;
  s.session.trigger_discard = 40;
  s.session.headroom = 32;
  s.session.background_summary = 0;
  Server server(s, options());
  std::vector<Msg> history;
  int64_t summarized = 0, summary_tokens = 0;
  for (int turn = 0; turn < 12; ++turn) {
    history.push_back({"user", "Once upon a time there was a dog named Max. He liked to run in the sun."});
    const FakeResponder out =
        call(server, request("POST", "/v1/chat/completions", chat_body(history, "\"max_tokens\": 12")));
    ASSERT_EQ(out.status, 200) << "turn " << turn << ": " << out.body;
    const Value v = out.json();
    summarized = v.find("peak")->find("summarized_messages")->as_int();
    summary_tokens = v.find("peak")->find("summary_tokens")->as_int();
    history.push_back({"assistant", content_of(v)});
  }
  EXPECT_GT(summarized, 0);
  EXPECT_GT(summary_tokens, 0);
  // A fresh server given the whole long history at once fits it as well.
  Server fresh(s, options());
  history.push_back({"user", "What happened?"});
  const FakeResponder out = call(fresh, request("POST", "/v1/chat/completions", chat_body(history, "\"max_tokens\": 8")));
  ASSERT_EQ(out.status, 200) << out.body;
  EXPECT_GT(out.json().find("peak")->find("summarized_messages")->as_int(), 0);
}

TEST(ServerRoutes, ADisconnectMidStreamFreesTheSlot) {
  Server server(settings(), options());
  FakeResponder out;
  out.fail_after_writes = 3;  // the role chunk and two pieces, then the client is gone
  server.handle(request("POST", "/v1/chat/completions",
                        chat_body({{"user", "Once upon a time"}}, "\"max_tokens\": 60, \"stream\": true")),
                out);
  EXPECT_EQ(out.writes, 3u);
  EXPECT_EQ(server.busy_slots(), 0u);
  EXPECT_EQ(server.counters().cancelled, 1u);
  EXPECT_LE(server.counters().completion_tokens, 4u);  // stopped at the next token
  // The slot serves the next request.
  EXPECT_EQ(call(server, request("POST", "/v1/chat/completions", chat_body({{"user", "Hi"}}))).status, 200);
}

// One slot, a queue of one: a request that holds the slot (its stream blocked
// in a write), one waiting, and the next answered 503 with Retry-After; a
// waiting client that leaves takes its place back.
TEST(ServerRoutes, AFullQueueAnswers503) {
  Server server(settings(), options(1, 1));
  std::mutex m;
  std::condition_variable cv;
  bool open = false;
  FakeResponder holder;
  holder.before_write = [&] {
    std::unique_lock<std::mutex> lock(m);
    cv.wait(lock, [&] { return open; });
  };
  const std::string body = chat_body({{"user", "Once upon a time"}}, "\"max_tokens\": 4, \"stream\": true");
  std::thread a([&] { server.handle(request("POST", "/v1/chat/completions", body), holder); });
  const auto wait_until = [](const std::function<bool()>& f) {
    for (int i = 0; i < 2000 && !f(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return f();
  };
  ASSERT_TRUE(wait_until([&] { return server.busy_slots() == 1; }));
  FakeResponder waiting;
  std::thread b([&] { server.handle(request("POST", "/v1/chat/completions", chat_body({{"user", "Hi"}})), waiting); });
  ASSERT_TRUE(wait_until([&] { return server.queued() == 1; }));

  const FakeResponder busy = call(server, request("POST", "/v1/chat/completions", chat_body({{"user", "Hi"}})));
  expect_error(busy, 503, "queue is full");
  ASSERT_NE(busy.header("Retry-After"), nullptr);
  EXPECT_EQ(server.counters().rejected_busy, 1u);

  // A queued client that leaves gives its place back: the next one queues.
  *waiting.gone = true;
  ASSERT_TRUE(wait_until([&] { return server.queued() == 0; }));
  b.join();
  EXPECT_EQ(waiting.status, 0);  // nothing is answered to a client that left
  FakeResponder next;
  std::thread c([&] { server.handle(request("POST", "/v1/chat/completions", chat_body({{"user", "Hi"}})), next); });
  ASSERT_TRUE(wait_until([&] { return server.queued() == 1; }));
  {
    std::lock_guard<std::mutex> lock(m);
    open = true;
  }
  cv.notify_all();
  a.join();
  c.join();
  EXPECT_EQ(holder.status, 200);
  EXPECT_EQ(holder.events().back(), "[DONE]");
  EXPECT_EQ(next.status, 200);
  EXPECT_EQ(server.busy_slots(), 0u);
  EXPECT_EQ(server.queued(), 0u);
}

TEST(ServerRoutes, CompletionsReuseTheCommonPrefix) {
  Server server(settings(), options());
  const std::string prompt = "Once upon a time, there was a little girl named Lily.";
  const std::string body =
      "{\"prompt\": " + peak::json::write(Value(prompt)) + ", \"max_tokens\": 16, \"temperature\": 0}";
  const FakeResponder first = call(server, request("POST", "/v1/completions", body));
  ASSERT_EQ(first.status, 200) << first.body;
  const Value v = first.json();
  EXPECT_EQ(v.find("object")->as_string(), "text_completion");
  // Reference: the prompt continued greedily in a fresh context (no chat template).
  const std::string expected = greedy_continuation(prompt, 16);
  EXPECT_EQ(v.find("choices")->items()[0].find("text")->as_string(), expected);
  const size_t prompt_tokens = count_tokens(prompt);
  EXPECT_EQ(v.find("usage")->find("prompt_tokens")->as_int(), static_cast<int64_t>(prompt_tokens));
  EXPECT_EQ(v.find("peak")->find("prompt_tokens_evaluated")->as_int(), static_cast<int64_t>(prompt_tokens));

  // The same prompt and a longer one: only the new tokens (and the last one again) evaluate.
  const FakeResponder again = call(server, request("POST", "/v1/completions", body));
  EXPECT_EQ(again.json().find("peak")->find("prompt_tokens_evaluated")->as_int(), 1);
  EXPECT_EQ(again.json().find("choices")->items()[0].find("text")->as_string(), expected);
  const std::string longer = prompt + " She liked to play.";
  const FakeResponder more = call(
      server, request("POST", "/v1/completions",
                      "{\"prompt\": " + peak::json::write(Value(longer)) + ", \"max_tokens\": 4, \"temperature\": 0}"));
  EXPECT_EQ(more.json().find("peak")->find("prompt_tokens_evaluated")->as_int(),
            static_cast<int64_t>(count_tokens(longer) - prompt_tokens));
}

// --lookup: chat and completions draft by prompt lookup and write what the
// same requests write without it (a server without drafts, and for
// completions a fresh context), with the drafts counted in the peak member.
// F32 caches: an F16 value computed in a batch of drafts may round to the
// neighbouring half of the one computed alone, enough to flip a near tie.
// 40 greedy tokens after `prompt` from /v1/completions, which must be the
// continuation without drafts.
FakeResponder greedy_completion_as_plain(Server& server, const std::string& prompt) {
  FakeResponder completion = call(server, request("POST", "/v1/completions",
                                                  "{\"prompt\": " + peak::json::write(Value(prompt)) +
                                                      ", \"max_tokens\": 40, \"temperature\": 0}"));
  EXPECT_EQ(completion.status, 200) << completion.body;
  if (completion.status == 200) {
    EXPECT_EQ(completion.json().find("choices")->items()[0].find("text")->as_string(),
              greedy_continuation(prompt, 40, PEAK_TYPE_F32));
  }
  return completion;
}

// Slots whose contexts and sessions hand out the 5 rows a token and 4 drafted
// ones take, with F32 caches (see below).
SlotSettings drafting_settings() {
  SlotSettings s = settings();
  s.session.type_k = s.session.type_v = PEAK_TYPE_F32;
  s.context.type_k = s.context.type_v = PEAK_TYPE_F32;
  s.session.max_logit_rows = 5;
  s.context.max_logit_rows = 5;
  return s;
}

TEST(ServerRoutes, PromptLookupWritesTheSameTextAndCountsItsDrafts) {
  const SlotSettings s = drafting_settings();
  ServerOptions o = options();
  Server plain(s, o);
  o.lookup_ngram = 3;
  o.draft_max = 4;
  Server drafting(s, o);
  const std::string story = "Lily saw a big red ball in the park. She ran to the ball and kicked it.";
  const std::string chat_request = chat_body({{"user", story + " " + story}}, "\"max_tokens\": 40");
  const FakeResponder chat = call(drafting, request("POST", "/v1/chat/completions", chat_request));
  ASSERT_EQ(chat.status, 200) << chat.body;
  EXPECT_EQ(content_of(chat.json()),
            content_of(call(plain, request("POST", "/v1/chat/completions", chat_request)).json()));
  const std::string prompt = story + " Lily saw a big red ball";
  const FakeResponder completion = greedy_completion_as_plain(drafting, prompt);
  int64_t drafted = 0, accepted = 0;
  for (const FakeResponder* out : {&chat, &completion}) {
    const Value body = out->json();
    const Value* peak = body.find("peak");
    ASSERT_NE(peak, nullptr);
    EXPECT_GT(peak->find("drafted_tokens")->as_int(), 0) << out->body;
    EXPECT_LE(peak->find("accepted_tokens")->as_int(), peak->find("drafted_tokens")->as_int());
    drafted += peak->find("drafted_tokens")->as_int();
    accepted += peak->find("accepted_tokens")->as_int();
  }
  const Value metrics = call(drafting, request("GET", "/metrics")).json();
  EXPECT_EQ(metrics.find("drafted_tokens")->as_int(), drafted);
  EXPECT_EQ(metrics.find("accepted_tokens")->as_int(), accepted);
}

// A draft model (the target itself here: one vocabulary, drafts mostly kept):
// each slot drafts with its own, the drafting contexts of two slots step in
// passes of their own, and the greedy answers are those without drafts.
TEST(ServerRoutes, ADraftModelWritesTheSameTextAndCountsItsDrafts) {
  SlotSettings s = drafting_settings();
  Server plain(s, options(1));
  s.draft_model = stories();
  ServerOptions o = options(2);
  o.draft_max = 4;
  o.draft_p_min = 0.0f;
  Server drafting(s, o);
  const std::vector<std::string> bodies = {
      chat_body({{"user", "Lily saw a big red ball in the park."}}, "\"max_tokens\": 40"),
      chat_body({{"user", "Tom had a little dog named Max. One day"}}, "\"max_tokens\": 40")};
  std::vector<FakeResponder> answers(bodies.size());
  std::vector<std::thread> clients;
  for (size_t i = 0; i < bodies.size(); ++i) {
    clients.emplace_back([&, i] { answers[i] = call(drafting, request("POST", "/v1/chat/completions", bodies[i])); });
  }
  for (std::thread& t : clients) t.join();
  int64_t drafted = 0;
  for (size_t i = 0; i < bodies.size(); ++i) {
    ASSERT_EQ(answers[i].status, 200) << answers[i].body;
    EXPECT_EQ(content_of(answers[i].json()),
              content_of(call(plain, request("POST", "/v1/chat/completions", bodies[i])).json()));
    const Value body = answers[i].json();
    const Value* peak = body.find("peak");
    ASSERT_NE(peak, nullptr);
    EXPECT_GT(peak->find("accepted_tokens")->as_int(), 0) << answers[i].body;
    drafted += peak->find("drafted_tokens")->as_int();
  }
  const std::string prompt = "Lily saw a big red ball";
  const FakeResponder completion = greedy_completion_as_plain(drafting, prompt);
  ASSERT_EQ(completion.status, 200);
  drafted += completion.json().find("peak")->find("drafted_tokens")->as_int();
  EXPECT_EQ(call(drafting, request("GET", "/metrics")).json().find("drafted_tokens")->as_int(), drafted);
}

// Continuous batching: with two slots, concurrent requests step in shared
// passes (each weight read once for both) and each answer is the one a server
// with one slot gives; /metrics counts the passes by how many sequences they took.
TEST(ServerRoutes, ConcurrentStreamsSharePassesAndAnswerAsAlone) {
  Server batched(settings(), options(2));
  Server single(settings(), options(1));
  const std::vector<std::string> bodies = {
      chat_body({{"user", "Lily saw a big red ball in the park."}}, "\"max_tokens\": 48"),
      chat_body({{"user", "Tom had a little dog named Max. One day"}}, "\"max_tokens\": 48")};
  std::vector<std::string> expected;
  for (const std::string& body : bodies) {
    expected.push_back(content_of(call(single, request("POST", "/v1/chat/completions", body)).json()));
  }
  for (int round = 0; round < 3; ++round) {
    std::vector<FakeResponder> answers(bodies.size());
    std::vector<std::thread> clients;
    for (size_t i = 0; i < bodies.size(); ++i) {
      clients.emplace_back([&, i] { answers[i] = call(batched, request("POST", "/v1/chat/completions", bodies[i])); });
    }
    for (std::thread& t : clients) t.join();
    for (size_t i = 0; i < bodies.size(); ++i) {
      ASSERT_EQ(answers[i].status, 200) << answers[i].body;
      EXPECT_EQ(content_of(answers[i].json()), expected[i]) << "request " << i << ", round " << round;
    }
  }
  const Value metrics = call(batched, request("GET", "/metrics")).json();
  const Value* passes = metrics.find("passes");
  ASSERT_NE(passes, nullptr);
  ASSERT_EQ(passes->find("by_sequences")->items().size(), 2u);
  EXPECT_GT(passes->find("by_sequences")->items()[1].as_int(), 0) << peak::json::write(metrics);
  EXPECT_GT(passes->find("count")->as_int(), 0);
  // Without a second slot there is nothing to share.
  EXPECT_TRUE(call(single, request("GET", "/metrics")).json().find("passes")->is_null());
}

// The `conversation` extension: only the new message each turn; with one slot
// shared by two conversations, each is saved away and restored in turn, and
// the answers are those of the whole history sent each time.
TEST(ServerRoutes, ConversationsKeepTheirSessions) {
  Server server(settings(), options(1));
  Server replay(settings(), options(1));
  const char* lines[] = {"Lily went to the park.", "She saw a big dog.", "They played ball."};
  std::vector<Msg> history[2];
  for (int turn = 0; turn < 3; ++turn) {
    for (int c = 0; c < 2; ++c) {
      const std::string id = c == 0 ? "alpha" : "beta";
      const FakeResponder out = call(
          server, request("POST", "/v1/chat/completions",
                          chat_body({{"user", lines[turn]}}, "\"max_tokens\": 8, \"conversation\": \"" + id + "\"")));
      ASSERT_EQ(out.status, 200) << out.body;
      history[c].push_back({"user", lines[turn]});
      const FakeResponder full =
          call(replay, request("POST", "/v1/chat/completions", chat_body(history[c], "\"max_tokens\": 8")));
      const std::string answer = content_of(out.json());
      EXPECT_EQ(answer, content_of(full.json())) << id << " turn " << turn;
      EXPECT_EQ(out.json().find("peak")->find("conversation")->as_string(), id);
      history[c].push_back({"assistant", content_of(full.json())});
    }
  }
}

// A conversation whose saved file no longer restores is refused (never 200),
// each time, and the slot that failed to restore it does not pass for it: its
// file is not overwritten with what the slot held (the other conversation's
// turns), the other conversation goes on as if nothing happened, and a later
// request for it is refused again, not left waiting for that slot.
TEST(ServerRoutes, AConversationThatCannotBeRestoredIsRefusedAndTakesNothingElse) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(::testing::TempDir()) / "peak_serve_conversations";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const char* old_tmpdir = std::getenv("TMPDIR");
  const std::string saved_tmpdir = old_tmpdir ? old_tmpdir : "";
  ::setenv("TMPDIR", dir.c_str(), 1);
  {
    Server server(settings(), options(1));
    Server replay(settings(), options(1));
    const auto send = [&](const std::string& id, const char* line) {
      return call(server, request("POST", "/v1/chat/completions",
                                  chat_body({{"user", line}}, "\"max_tokens\": 8, \"conversation\": \"" + id + "\"")));
    };
    ASSERT_EQ(send("alpha", "Lily went to the park.").status, 200);
    const FakeResponder beta_first = send("beta", "Tom had a red ball.");  // alpha is saved away
    ASSERT_EQ(beta_first.status, 200) << beta_first.body;

    std::vector<fs::path> files;
    for (const auto& entry : fs::recursive_directory_iterator(dir))
      if (entry.path().extension() == ".pkss") files.push_back(entry.path());
    ASSERT_EQ(files.size(), 1u) << "alpha's saved session";
    const std::string garbage = "not a session file";
    std::ofstream(files[0], std::ios::binary | std::ios::trunc) << garbage;

    for (int attempt = 0; attempt < 2; ++attempt) {
      const FakeResponder refused = send("alpha", "She saw a big dog.");
      EXPECT_GE(refused.status, 400) << "attempt " << attempt << ": " << refused.body;
      std::string bytes(static_cast<size_t>(fs::file_size(files[0])), '\0');
      std::ifstream(files[0], std::ios::binary).read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
      EXPECT_EQ(bytes, garbage) << "attempt " << attempt << ": alpha's file was overwritten";
    }

    const FakeResponder beta = send("beta", "They played ball.");
    ASSERT_EQ(beta.status, 200) << beta.body;
    const FakeResponder full = call(
        replay, request("POST", "/v1/chat/completions",
                        chat_body({{"user", "Tom had a red ball."}, {"assistant", content_of(beta_first.json())},
                                   {"user", "They played ball."}},
                                  "\"max_tokens\": 8")));
    EXPECT_EQ(content_of(beta.json()), content_of(full.json()));
    // And alpha, asked again once beta holds the slot, is refused again rather
    // than left waiting for a slot that no longer holds it.
    EXPECT_GE(send("alpha", "She saw a big dog.").status, 400);
  }
  if (old_tmpdir) {
    ::setenv("TMPDIR", saved_tmpdir.c_str(), 1);
  } else {
    ::unsetenv("TMPDIR");
  }
  fs::remove_all(dir);
}

// The scripted Qwen3 models of tests/chat ("answer": it answers "Blue."; "call":
// it opens a Hermes call of its own accord), or nullptr when not built.
peak_model* scripted_qwen3(const std::string& path) {
  peak_model* m = nullptr;
  if (path.empty() || peak_model_load(path.c_str(), nullptr, &m) != PEAK_OK) return nullptr;
  return m;
}

SlotSettings qwen3_settings(const peak_model* model) {
  SlotSettings s;
  s.model = model;
  s.session.n_threads = 1;
  s.session.recent_max = 1024;
  s.session.summary_n_ctx = 256;
  s.session.summary_max_new_tokens = 32;
  s.session.headroom = 256;
  return s;
}

// A thinking model (the scripted Qwen3 of tests/chat, which reasons "Reason"
// and answers "Blue."): the reasoning is reasoning_content, never content.
TEST(ServerRoutes, ReasoningIsApartFromTheAnswer) {
  peak_model* qwen = scripted_qwen3(PEAK_SCRIPTED_QWEN3);
  if (!qwen) GTEST_SKIP() << "the scripted Qwen3 model is not built (" << PEAK_SCRIPTED_QWEN3 << ")";
  {
    SlotSettings s = qwen3_settings(qwen);
    s.session.enable_thinking = 1;
    Server server(s, options());
    const std::string body = chat_body({{"user", "Name a colour."}}, "\"max_tokens\": 32");
    const Value v = call(server, request("POST", "/v1/chat/completions", body)).json();
    const Value& message = *v.find("choices")->items()[0].find("message");
    EXPECT_EQ(message.find("content")->as_string(), "Blue.");
    ASSERT_NE(message.find("reasoning_content"), nullptr) << peak::json::write(v);
    EXPECT_EQ(message.find("reasoning_content")->as_string(), "Reason");
    // Streamed: reasoning deltas first, then content deltas; neither holds the other.
    const FakeResponder out = call(server, request("POST", "/v1/chat/completions",
                                                   chat_body({{"user", "Name a colour."}}, "\"max_tokens\": 32, \"stream\": true")));
    std::string content, reasoning;
    for (const std::string& e : out.events()) {
      if (e == "[DONE]") continue;
      Value chunk;
      ASSERT_TRUE(peak::json::parse(e, &chunk, nullptr));
      const Value& delta = *chunk.find("choices")->items()[0].find("delta");
      if (const Value* c = delta.find("content")) content += c->as_string();
      if (const Value* r = delta.find("reasoning_content")) {
        EXPECT_TRUE(content.empty()) << "reasoning after the answer began";
        reasoning += r->as_string();
      }
    }
    EXPECT_EQ(content, "Blue.");
    EXPECT_EQ(reasoning, "Reason");
  }
  peak_model_free(qwen);
}

const char* kWeatherTools = R"("tools": [{"type": "function", "function": {"name": "get_weather",
    "parameters": {"type": "object", "properties": {"city": {"type": "string", "enum": ["Paris", "Oslo"]}},
    "required": ["city"], "additionalProperties": false}}}])";

std::string tools_body(const std::string& messages, const std::string& extra = "") {
  return R"({"model": "x", "temperature": 0, "max_tokens": 200, "messages": [)" + messages + "], " + kWeatherTools +
         extra + "}";
}

const char* kWeatherQuestion = R"({"role": "user", "content": "Weather in Paris?"})";

// The history after the answer `answer` (a whole response) made its call: the
// question, the assistant's message as the response gave it, the call's result.
std::string with_result(const Value& answer) {
  const Value& message = *answer.find("choices")->items()[0].find("message");
  const std::string id = message.find("tool_calls")->items()[0].find("id")->as_string();
  return std::string(kWeatherQuestion) + ", " + peak::json::write(message) + R"(, {"role": "tool", "tool_call_id": ")" +
         id + R"(", "content": "Sunny, 21 C"})";
}

// A response whose answer is one call of get_weather for Paris or Oslo.
void expect_weather_call(const Value& v) {
  const Value& choice = v.find("choices")->items()[0];
  EXPECT_EQ(choice.find("finish_reason")->as_string(), "tool_calls") << peak::json::write(v);
  const Value& message = *choice.find("message");
  ASSERT_NE(message.find("content"), nullptr);
  EXPECT_TRUE(message.find("content")->is_null()) << peak::json::write(v);
  const Value* calls = message.find("tool_calls");
  ASSERT_TRUE(calls && calls->is_array() && calls->items().size() == 1u) << peak::json::write(v);
  const Value& call = calls->items()[0];
  EXPECT_FALSE(call.find("id")->as_string().empty());
  EXPECT_EQ(call.find("type")->as_string(), "function");
  EXPECT_EQ(call.find("function")->find("name")->as_string(), "get_weather");
  Value arguments;
  ASSERT_TRUE(peak::json::parse(call.find("function")->find("arguments")->as_string(), &arguments, nullptr));
  const Value* city = arguments.find("city");
  ASSERT_TRUE(city && city->is_string()) << peak::json::write(arguments);
  EXPECT_TRUE(city->as_string() == "Paris" || city->as_string() == "Oslo") << city->as_string();
}

size_t evaluated_of(const Value& v) {
  return static_cast<size_t>(v.find("peak")->find("prompt_tokens_evaluated")->as_int());
}

// tools -> tool_calls and finish_reason "tool_calls" -> the result sent back
// -> the final answer; on the slot that made the call (which holds it: only
// the result is new) and on a fresh server (the history replayed).
TEST(ServerRoutes, ToolCallsRoundTrip) {
  peak_model* qwen = scripted_qwen3(PEAK_SCRIPTED_QWEN3);
  if (!qwen) GTEST_SKIP() << "the scripted Qwen3 model is not built";
  {
    Server server(qwen3_settings(qwen), options());
    const auto post = [&](const std::string& body) {
      return call(server, request("POST", "/v1/chat/completions", body)).json();
    };
    const Value first = post(tools_body(kWeatherQuestion, R"(, "tool_choice": "required")"));
    expect_weather_call(first);
    const std::string second_body = tools_body(with_result(first));
    const Value second = post(second_body);
    const Value& message = *second.find("choices")->items()[0].find("message");
    EXPECT_EQ(message.find("content")->as_string(), "Blue.") << peak::json::write(second);
    EXPECT_EQ(message.find("tool_calls"), nullptr);
    EXPECT_EQ(second.find("choices")->items()[0].find("finish_reason")->as_string(), "stop");

    Server fresh(qwen3_settings(qwen), options());
    const Value replayed = call(fresh, request("POST", "/v1/chat/completions", second_body)).json();
    EXPECT_EQ(content_of(replayed), "Blue.");
    // The slot that made the call evaluated only the result (and the prompt after it).
    EXPECT_LT(evaluated_of(second), evaluated_of(replayed));
    EXPECT_LT(evaluated_of(second), evaluated_of(first));

    // Other tools: a session of its own, answering as a fresh one would.
    const std::string other = R"({"model": "x", "temperature": 0, "max_tokens": 16, "messages": [)" +
                              std::string(kWeatherQuestion) +
                              R"(], "tools": [{"type": "function", "function": {"name": "get_time"}}],
                                  "tool_choice": "none"})";
    EXPECT_EQ(content_of(post(other)), "Blue.");
    EXPECT_EQ(content_of(post(chat_body({{"user", "Weather in Paris?"}}, "\"max_tokens\": 16"))), "Blue.");
    // A parameters schema the session cannot use: a 400 naming it.
    expect_error(call(server, request("POST", "/v1/chat/completions",
                                      R"({"messages": [{"role": "user", "content": "x"}], "tools": [{"type": "function",
                                          "function": {"name": "f", "parameters": {"type": "no-such-type"}}}]})")),
                 400, "no-such-type", "tools[0].function.parameters");
  }
  peak_model_free(qwen);
}

// A call streams as OpenAI's delta.tool_calls[0]: a chunk with its index, id,
// type, name and arguments "", then its arguments; no markup in the content.
TEST(ServerRoutes, ToolCallsStream) {
  peak_model* qwen = scripted_qwen3(PEAK_SCRIPTED_QWEN3);
  if (!qwen) GTEST_SKIP() << "the scripted Qwen3 model is not built";
  {
    Server server(qwen3_settings(qwen), options());
    const Value whole = call(server, request("POST", "/v1/chat/completions",
                                             tools_body(kWeatherQuestion, R"(, "tool_choice": "required")")))
                            .json();
    const Value& whole_call = whole.find("choices")->items()[0].find("message")->find("tool_calls")->items()[0];
    const FakeResponder out = call(
        server, request("POST", "/v1/chat/completions", tools_body(kWeatherQuestion, R"(, "tool_choice": "required",
                                                                                    "stream": true)")));
    const std::vector<std::string> events = out.events();
    ASSERT_GE(events.size(), 5u) << out.body;
    EXPECT_EQ(events.back(), "[DONE]");
    std::string content, arguments, finish;
    int openings = 0;
    for (const std::string& e : events) {
      if (e == "[DONE]") continue;
      Value chunk;
      ASSERT_TRUE(peak::json::parse(e, &chunk, nullptr)) << e;
      EXPECT_EQ(chunk.find("object")->as_string(), "chat.completion.chunk");
      const Value& choice = chunk.find("choices")->items()[0];
      if (choice.find("finish_reason")->is_string()) finish = choice.find("finish_reason")->as_string();
      const Value& delta = *choice.find("delta");
      if (const Value* c = delta.find("content")) content += c->as_string();
      const Value* calls = delta.find("tool_calls");
      if (!calls) continue;
      ASSERT_EQ(calls->items().size(), 1u) << e;
      const Value& entry = calls->items()[0];
      EXPECT_EQ(entry.find("index")->as_int(), 0);
      EXPECT_TRUE(finish.empty()) << "a call after the finish_reason";
      if (const Value* id = entry.find("id")) {
        ++openings;
        EXPECT_TRUE(arguments.empty()) << "arguments before the call opened";
        EXPECT_FALSE(id->as_string().empty());
        EXPECT_EQ(entry.find("type")->as_string(), "function");
        EXPECT_EQ(entry.find("function")->find("name")->as_string(), "get_weather");
        EXPECT_EQ(entry.find("function")->find("arguments")->as_string(), "");
        continue;
      }
      EXPECT_EQ(openings, 1) << "arguments before the call opened";
      arguments += entry.find("function")->find("arguments")->as_string();
    }
    EXPECT_EQ(openings, 1);
    EXPECT_EQ(arguments, whole_call.find("function")->find("arguments")->as_string());
    EXPECT_EQ(content, "");
    EXPECT_EQ(finish, "tool_calls");
  }
  peak_model_free(qwen);
}

// tool_choice auto: the model opens a call of its own accord (the "call" script).
TEST(ServerRoutes, AModelsOwnCallIsAToolCall) {
  peak_model* qwen = scripted_qwen3(PEAK_SCRIPTED_QWEN3_CALL);
  if (!qwen) GTEST_SKIP() << "the scripted Qwen3 call model is not built";
  {
    Server server(qwen3_settings(qwen), options());
    expect_weather_call(call(server, request("POST", "/v1/chat/completions", tools_body(kWeatherQuestion))).json());
  }
  peak_model_free(qwen);
}

// A small bounded schema (an enum, a short integer range, a short string) that
// stories260K completes within a few dozen tokens.
const char* kPetSchema = R"({"type": "object", "properties": {
    "mood": {"enum": ["happy", "sad"]}, "age": {"type": "integer", "minimum": 1, "maximum": 9},
    "name": {"type": "string", "maxLength": 6}},
  "required": ["mood", "age", "name"], "additionalProperties": false})";

// `text` is a whole string of `schema`'s grammar (peak_grammar_check), and JSON holding its fields.
void expect_pet(const std::string& text) {
  peak_grammar* grammar = nullptr;
  ASSERT_EQ(peak_grammar_from_json_schema(kPetSchema, &grammar), PEAK_OK) << peak_last_error();
  peak_grammar_verdict verdict = PEAK_GRAMMAR_REJECTED;
  EXPECT_EQ(peak_grammar_check(grammar, text.data(), text.size(), &verdict), PEAK_OK);
  peak_grammar_free(grammar);
  EXPECT_EQ(verdict, PEAK_GRAMMAR_COMPLETE) << text;
  Value v;
  ASSERT_TRUE(peak::json::parse(text, &v, nullptr)) << text;
  ASSERT_TRUE(v.is_object()) << text;
  EXPECT_EQ(v.members().size(), 3u) << text;
  const Value* mood = v.find("mood");
  ASSERT_TRUE(mood && mood->is_string()) << text;
  EXPECT_TRUE(mood->as_string() == "happy" || mood->as_string() == "sad") << text;
  const Value* age = v.find("age");
  ASSERT_TRUE(age && age->is_integer()) << text;
  EXPECT_TRUE(age->as_int() >= 1 && age->as_int() <= 9) << text;
  const Value* name = v.find("name");
  ASSERT_TRUE(name && name->is_string()) << text;
  EXPECT_LE(name->as_string().size(), 6u) << text;
}

// response_format json_schema (and llama.cpp's json_schema and grammar): the
// answer is a whole string of the schema, ended by it ("stop"); the next
// request on the slot samples freely again.
TEST(ServerRoutes, AnswersFollowTheRequestedSchema) {
  Server server(settings(), options());
  const std::vector<Msg> messages = {{"user", "Tell me about a pet."}};
  const std::string format = std::string(R"("response_format": {"type": "json_schema", "json_schema": {"name": "pet",
      "strict": true, "schema": )") +
                             kPetSchema + "}}, \"max_tokens\": 64";
  for (const bool stream : {false, true}) {
    const FakeResponder out =
        call(server, request("POST", "/v1/chat/completions",
                             chat_body(messages, format + ", \"stream\": " + (stream ? "true" : "false"))));
    ASSERT_EQ(out.status, 200) << out.body;
    EXPECT_EQ(out.streamed, stream);
    const ChatAnswer answer = chat_answer(out);
    expect_pet(answer.content);
    EXPECT_EQ(answer.finish, "stop") << answer.content;
  }
  // No grammar left behind in the slot's session: the answer a fresh server gives.
  const std::string free_body = chat_body(messages, "\"max_tokens\": 24");
  Server fresh(settings(), options());
  const FakeResponder expected = call(fresh, request("POST", "/v1/chat/completions", free_body));
  ASSERT_EQ(expected.status, 200) << expected.body;
  const FakeResponder free_answer = call(server, request("POST", "/v1/chat/completions", free_body));
  ASSERT_EQ(free_answer.status, 200) << free_answer.body;
  EXPECT_EQ(content_of(free_answer.json()), content_of(expected.json()));
  EXPECT_EQ(content_of(free_answer.json()).find('{'), std::string::npos);

  const FakeResponder llama =
      call(server, request("POST", "/v1/chat/completions",
                           chat_body(messages, std::string("\"max_tokens\": 64, \"json_schema\": ") + kPetSchema)));
  ASSERT_EQ(llama.status, 200) << llama.body;
  expect_pet(content_of(llama.json()));
  const FakeResponder grammar = call(server, request("POST", "/v1/chat/completions",
                                                     chat_body(messages, R"("grammar": "root ::= \"yes\" | \"no\"")")));
  ASSERT_EQ(grammar.status, 200) << grammar.body;
  const std::string yes_no = content_of(grammar.json());
  EXPECT_TRUE(yes_no == "yes" || yes_no == "no") << yes_no;

  // Completions too, on the plain context.
  const FakeResponder completion = call(
      server,
      request("POST", "/v1/completions",
              std::string(R"({"prompt": "Once upon a time", "temperature": 0, "max_tokens": 64, "json_schema": )") +
                  kPetSchema + "}"));
  ASSERT_EQ(completion.status, 200) << completion.body;
  const Value completion_body = completion.json();
  const Value& choice = completion_body.find("choices")->items()[0];
  expect_pet(choice.find("text")->as_string());
  EXPECT_EQ(choice.find("finish_reason")->as_string(), "stop");
}

// A grammar or schema the C API refuses is a 400 with its message, before any
// slot is touched.
TEST(ServerRoutes, AnUnusableSchemaIsRefusedBeforeTheSlot) {
  Server server(settings(), options());
  const std::vector<Msg> messages = {{"user", "Hi"}};
  const char* bad_schema = R"({"type": "object", "properties": {"n": {"type": "string", "format": "email"}}})";
  const std::string format = std::string(R"("response_format": {"type": "json_schema",
      "json_schema": {"name": "n", "schema": )") +
                             bad_schema + "}}";
  expect_error(call(server, request("POST", "/v1/chat/completions", chat_body(messages, format))), 400, "/properties/n",
               "response_format.json_schema.schema");
  expect_error(call(server, request("POST", "/v1/completions", R"({"prompt": "x", "grammar": "root ::= ("})")), 400,
               "'grammar' is not a usable grammar", "grammar");
  expect_error(call(server, request("POST", "/v1/chat/completions",
                                    chat_body(messages, R"("grammar": "root ::= \"a\"", "json_schema": {})"))),
               400, "'grammar' and 'json_schema'", "json_schema");
  expect_error(call(server, request("POST", "/v1/chat/completions",
                                    chat_body(messages, R"("response_format": {"type": "yaml"})"))),
               400, "not \"yaml\"", "response_format.type");
  EXPECT_EQ(server.counters().prompt_tokens_evaluated, 0u);
  EXPECT_EQ(server.counters().completion_tokens, 0u);
}

TEST(ServerRoutes, CompletionsStream) {
  Server server(settings(), options());
  const std::string body = "{\"prompt\": \"Once upon a time\", \"max_tokens\": 12, \"temperature\": 0";
  const Value whole = call(server, request("POST", "/v1/completions", body + "}")).json();
  const FakeResponder out = call(server, request("POST", "/v1/completions",
                                                 body + ", \"stream\": true, \"stream_options\": {\"include_usage\": true}}"));
  EXPECT_EQ(out.content_type, "text/event-stream");
  const std::vector<std::string> events = out.events();
  ASSERT_GE(events.size(), 3u);
  EXPECT_EQ(events.back(), "[DONE]");
  std::string text, finish;
  for (size_t i = 0; i + 1 < events.size(); ++i) {
    Value chunk;
    ASSERT_TRUE(peak::json::parse(events[i], &chunk, nullptr));
    EXPECT_EQ(chunk.find("object")->as_string(), "text_completion");
    const Value& choice = chunk.find("choices")->items()[0];
    text += choice.find("text")->as_string();
    if (choice.find("finish_reason")->is_string()) {
      finish = choice.find("finish_reason")->as_string();
      EXPECT_EQ(chunk.find("usage")->find("completion_tokens")->as_int(), 12);
    }
  }
  EXPECT_EQ(text, whole.find("choices")->items()[0].find("text")->as_string());
  EXPECT_EQ(finish, "length");
}

TEST(ServerRoutes, APerRequestTimeLimitEndsTheAnswer) {
  ServerOptions o = options();
  o.request_timeout_ms = 1;
  Server server(settings(), o);
  const std::string body = chat_body({{"user", "Once upon a time"}}, "\"max_tokens\": 60");
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  const Value v = call(server, request("POST", "/v1/chat/completions", body)).json();
  // The prompt and a few tokens take the millisecond (how many depends on the
  // machine, and on the tiny model's prompt a ms is close): the answer ends
  // early, far from its 60 tokens.
  EXPECT_EQ(v.find("choices")->items()[0].find("finish_reason")->as_string(), "length");
  EXPECT_LT(v.find("usage")->find("completion_tokens")->as_int(), 60);
}

// At most max_conversations are kept: the least recently used one that is not
// in a slot is forgotten, so its next request starts afresh.
TEST(ServerRoutes, ConversationsAreBounded) {
  ServerOptions o = options(1);
  o.max_conversations = 2;
  Server server(settings(), o);
  const auto send = [&](const std::string& id) {
    const FakeResponder out = call(server, request("POST", "/v1/chat/completions",
                                                   chat_body({{"user", "Lily went to the park."}},
                                                             "\"max_tokens\": 4, \"conversation\": \"" + id + "\"")));
    EXPECT_EQ(out.status, 200) << out.body;
    return out.json().find("usage")->find("prompt_tokens")->as_int();
  };
  const int64_t first_turn = send("a");
  EXPECT_GT(send("a"), first_turn);  // a second turn reads the first
  send("b");                         // a is saved away
  send("c");                         // a, the oldest not in a slot, is forgotten
  EXPECT_EQ(send("a"), first_turn);  // so it starts again
  EXPECT_GT(send("c"), first_turn);  // c, restored, still reads its first turn
}

// A sampled (temperature 1) chat request for "Once upon a time", with `extra`
// fields.
std::string sampled_chat_body(const std::string& extra = "") {
  return chat_body({{"user", "Once upon a time"}}, "\"max_tokens\": 24" + extra, 1);
}

std::string completion_body() { return "{\"prompt\": \"Once upon a time\", \"max_tokens\": 24, \"temperature\": 1}"; }

// peak serve --seed N: a request without "seed" samples with N, as one giving
// "seed": N does on a server without it; yet every response keeps an id of its own.
TEST(ServerRoutes, ADefaultSeedRepeatsSampledAnswersButNoId) {
  ServerOptions o = options();
  o.sampler.seed = 1234;
  o.random_seed = false;
  Server seeded(settings(), o);
  const FakeResponder first = call(seeded, request("POST", "/v1/chat/completions", sampled_chat_body()));
  const FakeResponder second = call(seeded, request("POST", "/v1/chat/completions", sampled_chat_body()));
  ASSERT_EQ(first.status, 200) << first.body;
  ASSERT_EQ(second.status, 200) << second.body;
  EXPECT_EQ(content_of(first.json()), content_of(second.json()));
  EXPECT_NE(first.json().find("id")->as_string(), second.json().find("id")->as_string());

  Server unseeded(settings(), options());
  const FakeResponder given =
      call(unseeded, request("POST", "/v1/chat/completions", sampled_chat_body(", \"seed\": 1234")));
  ASSERT_EQ(given.status, 200) << given.body;
  EXPECT_EQ(content_of(given.json()), content_of(first.json()));

  const FakeResponder raw_first = call(seeded, request("POST", "/v1/completions", completion_body()));
  const FakeResponder raw_second = call(seeded, request("POST", "/v1/completions", completion_body()));
  ASSERT_EQ(raw_first.status, 200) << raw_first.body;
  ASSERT_EQ(raw_second.status, 200) << raw_second.body;
  EXPECT_EQ(raw_first.json().find("choices")->items()[0].find("text")->as_string(),
            raw_second.json().find("choices")->items()[0].find("text")->as_string());
  EXPECT_NE(raw_first.json().find("id")->as_string(), raw_second.json().find("id")->as_string());
}

TEST(ServerRoutes, WithoutADefaultSeedIdsDifferToo) {
  Server server(settings(), options());
  const FakeResponder first = call(server, request("POST", "/v1/chat/completions", sampled_chat_body()));
  const FakeResponder second = call(server, request("POST", "/v1/chat/completions", sampled_chat_body()));
  ASSERT_EQ(first.status, 200) << first.body;
  ASSERT_EQ(second.status, 200) << second.body;
  EXPECT_NE(first.json().find("id")->as_string(), second.json().find("id")->as_string());
}

// A fresh directory under the test's temporary one, removed at the end.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& name) : path_(std::filesystem::path(::testing::TempDir()) / name) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() { std::filesystem::remove_all(path_); }
  const std::filesystem::path& path() const { return path_; }
  size_t count(const std::string& extension) const {
    size_t n = 0;
    for (const auto& entry : std::filesystem::directory_iterator(path_)) n += entry.path().extension() == extension;
    return n;
  }

 private:
  std::filesystem::path path_;
};

// Under a fixed default seed, each conversation saved away gets a file of its
// own, and one restored continues its own turns (as the whole history resent
// to a server without conversations reads them).
TEST(ServerRoutes, ConversationsSavedUnderADefaultSeedKeepTheirOwnFiles) {
  const ScratchDir dir("peak_serve_seeded_conversations");
  ServerOptions o = options(1);
  o.sampler.seed = 1234;
  o.random_seed = false;
  o.conversation_dir = dir.path().string();
  Server server(settings(), o);
  const auto send = [&](const std::string& id, const std::string& line) {
    const FakeResponder out =
        call(server, request("POST", "/v1/chat/completions",
                             chat_body({{"user", line}}, "\"max_tokens\": 8, \"conversation\": \"" + id + "\"")));
    EXPECT_EQ(out.status, 200) << out.body;
    return out.json();
  };
  const Value alpha = send("alpha", "Lily went to the park.");
  send("beta", "Tom had a red ball and a big, big kite.");  // alpha is saved away
  send("gamma", "Sue sang.");                               // beta too
  EXPECT_EQ(dir.count(".pkss"), 2u);

  const Value alpha_again = send("alpha", "She saw a big dog.");
  Server replay(settings(), options(1));
  const FakeResponder full = call(replay, request("POST", "/v1/chat/completions",
                                                  chat_body({{"user", "Lily went to the park."},
                                                             {"assistant", content_of(alpha)},
                                                             {"user", "She saw a big dog."}},
                                                            "\"max_tokens\": 8")));
  ASSERT_EQ(full.status, 200) << full.body;
  EXPECT_EQ(alpha_again.find("usage")->find("prompt_tokens")->as_int(),
            full.json().find("usage")->find("prompt_tokens")->as_int());
  EXPECT_EQ(content_of(alpha_again), content_of(full.json()));
}

// The tiny Gemma 3 image encoder at stories260K's width that tests/runtime
// writes (4 image tokens a picture); nullptr where it is not built.
// The projector file at `path`, null when tests/runtime did not write it.
peak_projector* load_projector(const char* path) {
  peak_projector* p = nullptr;
  if (std::string(path).empty()) return p;
  EXPECT_EQ(peak_projector_load(path, nullptr, &p), PEAK_OK) << peak_last_error();
  return p;
}

const peak_projector* tiny_projector() {
  static peak_projector* projector = load_projector(PEAK_IMAGE_PROJECTOR_64);
  return projector;
}

// A tiny SmolVLM encoder that cuts pictures into tiles (of 32 pixels, the longest edge 96).
const peak_projector* tiled_projector() {
  static peak_projector* projector = load_projector(PEAK_IMAGE_TILED_PROJECTOR_64);
  return projector;
}

// The tiny Qwen2.5-VL pair (tests/runtime writes it): a qwen2vl model, which
// places a picture's tokens by row and column, and its encoder; null where not written.
const peak_model* qwen2vl_model() {
  static peak_model* model = [] {
    peak_model* m = nullptr;
    if (std::string(PEAK_QWEN2VL_MODEL).empty()) return m;
    EXPECT_EQ(peak_model_load(PEAK_QWEN2VL_MODEL, nullptr, &m), PEAK_OK) << peak_last_error();
    return m;
  }();
  return model;
}

const peak_projector* qwen2vl_projector() {
  static peak_projector* projector = load_projector(PEAK_QWEN2VL_PROJECTOR);
  return projector;
}

SlotSettings vision_settings(const peak_projector* projector = tiny_projector()) {
  SlotSettings s = settings();
  s.session.projector = projector;
  return s;
}

std::string png_url(const std::string& bytes) { return "data:image/png;base64," + peak_server::base64_encode(bytes); }

Value text_message(const char* role, const std::string& text) {
  return Value::object().set("role", role).set("content", text);
}

Value picture_part(const std::string& url) {
  return Value::object().set("type", "image_url").set("image_url", Value::object().set("url", url));
}

// A user message of a text part and a picture's part.
Value picture_message(const std::string& text, const std::string& url) {
  return Value::object()
      .set("role", "user")
      .set("content",
           Value::array().push(Value::object().set("type", "text").set("text", text)).push(picture_part(url)));
}

std::string vision_body(const Value& messages, int max_tokens = 16) {
  return peak::json::write(
      Value::object().set("messages", messages).set("temperature", 0).set("max_tokens", max_tokens));
}

int64_t peak_member(const Value& response, const char* name) {
  const Value* v = response.find("peak")->find(name);
  EXPECT_NE(v, nullptr) << name << " in " << peak::json::write(response);
  return v ? v->as_int() : -1;
}

// The answer of a session of the server's slots' parameters to `text` with
// `picture` attached (its marker after the text), the picture decoded and
// encoded here by an encoder of its own: greedy, as the server's.
std::string session_answer(const std::string& text, const std::string& picture, size_t max_tokens,
                           const SlotSettings& slots = vision_settings()) {
  const peak_projector* projector = slots.session.projector;
  peak_session* session = nullptr;
  EXPECT_EQ(peak_session_create(slots.model, &slots.session, &session), PEAK_OK) << peak_last_error();
  peak_sampler_params sp = peak_sampler_default_params();
  sp.temperature = 0;
  EXPECT_EQ(peak_session_set_sampler(session, &sp), PEAK_OK);
  peak_image_encoder_params ep = peak_image_encoder_default_params();
  ep.n_threads = 1;
  peak_image_encoder* encoder = nullptr;
  EXPECT_EQ(peak_image_encoder_create(projector, &ep, &encoder), PEAK_OK) << peak_last_error();
  peak_image* image = nullptr;
  EXPECT_EQ(peak_image_decode(reinterpret_cast<const uint8_t*>(picture.data()), picture.size(), &image), PEAK_OK);
  uint32_t width = 0, height = 0;
  EXPECT_EQ(peak_image_get_size(image, &width, &height, nullptr), PEAK_OK);
  size_t n_floats = 0;
  EXPECT_EQ(peak_image_encode(encoder, image, nullptr, 0, &n_floats), PEAK_ERR_BUFFER_TOO_SMALL);
  std::vector<float> rows(n_floats);
  EXPECT_EQ(peak_image_encode(encoder, image, rows.data(), rows.size(), &n_floats), PEAK_OK) << peak_last_error();
  EXPECT_EQ(peak_session_attach_picture(session, rows.data(), rows.size(), width, height), PEAK_OK)
      << peak_last_error();
  std::string out;
  peak_generate_params gp = peak_generate_default_params();
  gp.max_tokens = max_tokens;
  gp.user_data = &out;
  gp.on_text = [](const char* t, size_t len, void* self) {
    static_cast<std::string*>(self)->append(t, len);
    return 1;
  };
  const std::string message = text + peak_server::kImageMarker;
  EXPECT_EQ(peak_session_chat(session, message.data(), message.size(), &gp, nullptr), PEAK_OK) << peak_last_error();
  peak_image_free(image);
  peak_image_encoder_free(encoder);
  peak_session_free(session);
  return out;
}

// A picture is answered as a session given its rows answers, and encoded
// once: the same request again takes it from the cache and answers the same.
TEST(ServerVision, APictureIsAnsweredAsBySessionAndEncodedOnce) {
  if (!tiny_projector()) GTEST_SKIP() << "the tiny image encoder is written by tests/runtime, not built here";
  Server server(vision_settings(), options());
  const Value models = call(server, request("GET", "/v1/models")).json();
  EXPECT_TRUE(models.find("data")->items()[0].find("vision")->as_bool());

  const std::string photo = peak_server::testing::test_picture("png/photo_256x192.png");
  const std::string body = vision_body(Value::array().push(picture_message("Once upon a time", png_url(photo))));
  const FakeResponder first = call(server, request("POST", "/v1/chat/completions", body));
  ASSERT_EQ(first.status, 200) << first.body;
  const Value v = first.json();
  const std::string expected = session_answer("Once upon a time", photo, 16);
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(content_of(v), expected);
  EXPECT_EQ(peak_member(v, "images_encoded"), 1);
  EXPECT_EQ(peak_member(v, "images_cached"), 0);
  // The picture is read: the text alone is answered otherwise.
  const FakeResponder text_only =
      call(server, request("POST", "/v1/chat/completions",
                           vision_body(Value::array().push(text_message("user", "Once upon a time")))));
  ASSERT_EQ(text_only.status, 200) << text_only.body;
  EXPECT_NE(content_of(text_only.json()), expected);

  for (const char* stream : {"false", "true"}) {
    std::string again_body = body;
    again_body.insert(again_body.size() - 1, std::string(", \"stream\": ") + stream);
    const FakeResponder again = call(server, request("POST", "/v1/chat/completions", again_body));
    ASSERT_EQ(again.status, 200) << again.body;
    EXPECT_EQ(chat_answer(again).content, expected) << stream;
  }
  // The picture twice in one message: two pictures, both from the cache.
  const Value parts = Value::array().push(picture_part(png_url(photo))).push(picture_part(png_url(photo)));
  const Value message = Value::object().set("role", "user").set("content", parts);
  const Value twice =
      call(server, request("POST", "/v1/chat/completions", vision_body(Value::array().push(message)))).json();
  EXPECT_EQ(peak_member(twice, "images_encoded"), 0);
  EXPECT_EQ(peak_member(twice, "images_cached"), 2);
  const peak_server::ServerCounters c = server.counters();
  EXPECT_EQ(c.images_encoded, 1u);
  EXPECT_EQ(c.images_cached, 4u);
  const Value metrics = call(server, request("GET", "/metrics")).json();
  EXPECT_EQ(metrics.find("images_encoded")->as_int(), 1);
  EXPECT_EQ(metrics.find("images_cached")->as_int(), 4);
}

// A server of `slots` asked twice about the photo (encoded, then from the
// cache) answers as a session of the same settings given the picture's size.
void expect_photo_answered_as_by_session(const SlotSettings& slots, const ServerOptions& o) {
  Server server(slots, o);
  const std::string photo = peak_server::testing::test_picture("png/photo_256x192.png");
  const std::string body = vision_body(Value::array().push(picture_message("Once upon a time", png_url(photo))));
  const std::string expected = session_answer("Once upon a time", photo, 16, slots);
  ASSERT_FALSE(expected.empty());
  for (const int64_t encoded : {1, 0}) {
    const FakeResponder out = call(server, request("POST", "/v1/chat/completions", body));
    ASSERT_EQ(out.status, 200) << out.body;
    EXPECT_EQ(content_of(out.json()), expected);
    EXPECT_EQ(peak_member(out.json(), "images_encoded"), encoded);
  }
}

// SmolVLM's tiles: the server frames each tile as a session given the
// picture's size does, from the cache too.
TEST(ServerVision, APictureOfTilesIsAnsweredAsBySession) {
  if (!tiled_projector()) GTEST_SKIP() << "the tiny image encoder is written by tests/runtime, not built here";
  expect_photo_answered_as_by_session(vision_settings(tiled_projector()), options());
}

// Qwen2.5-VL: the picture keeps its own size (9 x 6 tokens here), and the
// qwen2vl model places its tokens by row and column, as a session given the
// picture's size does, from the cache too.
TEST(ServerVision, AQwenPictureIsPlacedAsBySession) {
  if (!qwen2vl_model() || !qwen2vl_projector()) GTEST_SKIP() << "the tiny Qwen2.5-VL pair is written by tests/runtime";
  SlotSettings slots = vision_settings(qwen2vl_projector());
  slots.model = qwen2vl_model();
  slots.session.summary_max = 160;  // the synthetic vocabulary spells the summary's framing letter by letter
  ServerOptions o = options();
  o.model_id = "qwen2vl_tiny.gguf";
  expect_photo_answered_as_by_session(slots, o);
}

// A front-end resends the history with its pictures: the slot holding it
// evaluates the new message alone and encodes nothing. The same texts with
// another picture are another history: the slot then holds exactly that one,
// answering as a fresh server does.
TEST(ServerVision, AResentHistoryReusesTheSlotAndAnotherPictureDoesNot) {
  if (!tiny_projector()) GTEST_SKIP() << "the tiny image encoder is written by tests/runtime, not built here";
  Server server(vision_settings(), options());
  const std::string photo = png_url(peak_server::testing::test_picture("png/photo_256x192.png"));
  const std::string other = png_url(peak_server::testing::test_picture("png/pil_rgb.png"));
  const auto post = [](Server& s, const Value& messages) {
    const FakeResponder out = call(s, request("POST", "/v1/chat/completions", vision_body(messages, 8)));
    EXPECT_EQ(out.status, 200) << out.body;
    return out.json();
  };
  const Value first = post(server, Value::array().push(picture_message("Lily saw a cat.", photo)));
  const auto history = [&](const std::string& url) {
    return Value::array()
        .push(picture_message("Lily saw a cat.", url))
        .push(text_message("assistant", content_of(first)))
        .push(text_message("user", "The end."));
  };
  const Value resent = post(server, history(photo));
  EXPECT_EQ(peak_member(resent, "images_encoded"), 0);
  EXPECT_EQ(peak_member(resent, "images_cached"), 1);
  // Only the new message (and the prompt after it) was evaluated.
  EXPECT_LE(evaluated_of(resent), count_tokens("<|im_start|>user\nThe end.<|im_end|>\n<|im_start|>assistant\n"));

  // A slot holding the first turn (the one picture and its answer), asked
  // for the same texts with another picture.
  Server second(vision_settings(), options());
  EXPECT_EQ(content_of(post(second, Value::array().push(picture_message("Lily saw a cat.", photo)))),
            content_of(first));
  const Value swapped = post(second, history(other));
  EXPECT_EQ(peak_member(swapped, "images_encoded"), 1);
  Server fresh(vision_settings(), options());
  const Value replayed = post(fresh, history(other));
  EXPECT_EQ(evaluated_of(swapped), evaluated_of(replayed));
  EXPECT_GT(evaluated_of(swapped), evaluated_of(resent));
  EXPECT_EQ(content_of(swapped), content_of(replayed));
  EXPECT_EQ(swapped.find("usage")->find("prompt_tokens")->as_int(),
            replayed.find("usage")->find("prompt_tokens")->as_int());
}

// A file the decoder refuses: a 400 naming the URL's field and the
// decoder's reason, before any slot; it is not kept, and refused again.
TEST(ServerVision, APictureTheDecoderRefusesIsA400NamingItsField) {
  if (!tiny_projector()) GTEST_SKIP() << "the tiny image encoder is written by tests/runtime, not built here";
  Server server(vision_settings(), options());
  std::string png = peak_server::testing::test_picture("png/pil_rgb.png");
  png[20] = static_cast<char>(png[20] ^ 0x01);  // the IHDR chunk's height: its CRC no longer matches
  const std::string body = vision_body(Value::array()
                                           .push(text_message("user", "Hi"))
                                           .push(text_message("assistant", "Hello"))
                                           .push(picture_message("What is it?", png_url(png))));
  for (int attempt = 0; attempt < 2; ++attempt) {
    expect_error(call(server, request("POST", "/v1/chat/completions", body)), 400,
                 "'messages[2].content[1].image_url.url': PNG: bad CRC in chunk IHDR",
                 "messages[2].content[1].image_url.url");
  }
  EXPECT_EQ(server.counters().prompt_tokens_evaluated, 0u);
  EXPECT_EQ(server.counters().images_encoded, 0u);
}

// A message that fails to enter the session (here: two pictures for its one
// marker) leaves no picture attached for the next one.
TEST(ServerVision, AMessageThatFailsLeavesNoPictureAttached) {
  if (!tiny_projector()) GTEST_SKIP() << "the tiny image encoder is written by tests/runtime, not built here";
  peak_server::ImageCache cache(tiny_projector(), 1);
  bool cached = false;
  peak_server::ChatMessage two;
  two.content = std::string("Look: ") + peak_server::kImageMarker;
  two.encoded = {cache.get(peak_server::testing::test_picture("png/pil_rgb.png"), "f", &cached),
                 cache.get(peak_server::testing::test_picture("png/pil_l.png"), "f", &cached)};
  ChatSlot slot(vision_settings());
  EXPECT_THROW(slot.append({two}), peak_server::PeakError);
  EXPECT_EQ(peak_session_n_attached_images(slot.session()), 0u);
  EXPECT_EQ(peak_session_n_messages(slot.session()), 0u);
  peak_server::ChatMessage plain;
  plain.content = "Lily went to the park.";
  slot.append({plain});
  peak_session_message m{};
  m.struct_size = sizeof m;
  ASSERT_EQ(peak_session_get_message(slot.session(), 0, &m), PEAK_OK);
  EXPECT_EQ(m.n_images, 0u);
  // A turn's pictures attached, then dropped (as after a failed turn).
  slot.attach_images(two);
  EXPECT_EQ(peak_session_n_attached_images(slot.session()), 2u);
  slot.clear_images();
  EXPECT_EQ(peak_session_n_attached_images(slot.session()), 0u);
}

// A conversation (the `conversation` extension) holding a picture is saved
// away for another and restored: it answers as its history replayed does.
TEST(ServerVision, AConversationWithAPictureIsSavedAndRestored) {
  if (!tiny_projector()) GTEST_SKIP() << "the tiny image encoder is written by tests/runtime, not built here";
  const ScratchDir dir("peak_serve_picture_conversations");
  ServerOptions o = options(1);
  o.conversation_dir = dir.path().string();
  Server server(vision_settings(), o);
  const std::string photo = png_url(peak_server::testing::test_picture("png/photo_256x192.png"));
  const auto post = [](Server& s, const Value& messages, const std::string& id) {
    Value body = Value::object().set("messages", messages).set("temperature", 0).set("max_tokens", 8);
    if (!id.empty()) body.set("conversation", id);
    const FakeResponder out = call(s, request("POST", "/v1/chat/completions", peak::json::write(body)));
    EXPECT_EQ(out.status, 200) << out.body;
    return out.json();
  };
  const Value first = post(server, Value::array().push(picture_message("Lily saw a cat.", photo)), "a");
  post(server, Value::array().push(text_message("user", "Tom.")), "b");  // a is saved away
  EXPECT_EQ(dir.count(".pkss"), 1u);
  const Value restored = post(server, Value::array().push(text_message("user", "The end.")), "a");

  Server fresh(vision_settings(), options(1));
  const Value replayed = post(fresh,
                              Value::array()
                                  .push(picture_message("Lily saw a cat.", photo))
                                  .push(text_message("assistant", content_of(first)))
                                  .push(text_message("user", "The end.")),
                              "");
  EXPECT_EQ(content_of(restored), content_of(replayed));
  EXPECT_EQ(restored.find("usage")->find("prompt_tokens")->as_int(),
            replayed.find("usage")->find("prompt_tokens")->as_int());
}

// The cache on its own: a hit compares the bytes and gives the rows kept; the
// least recently used picture goes first when the bound is reached; a
// picture larger than the bound is encoded and not kept.
TEST(ServerImageCache, KeepsTheLatestPicturesWithinItsBound) {
  if (!tiny_projector()) GTEST_SKIP() << "the tiny image encoder is written by tests/runtime, not built here";
  const std::string a = peak_server::testing::test_picture("png/pil_rgb.png"),
                    b = peak_server::testing::test_picture("png/pil_l.png"),
                    c = peak_server::testing::test_picture("png/pil_1bit.png");
  const size_t rows_bytes = 4 * 64 * sizeof(float);  // 4 image tokens of stories260K's 64
  const auto size = [&](const std::string& file) { return file.size() + rows_bytes; };
  peak_server::ImageCache cache(tiny_projector(), 1, size(a) + size(b) + size(c) - 1);  // two of the three
  const auto get = [&](const std::string& file) {
    bool cached = false;
    const std::shared_ptr<const peak_server::EncodedImage> image = cache.get(file, "f", &cached);
    EXPECT_EQ(image->bytes, file);
    EXPECT_EQ(image->rows.size(), 4u * 64u);
    return std::make_pair(image, cached);
  };
  const auto first_a = get(a);
  EXPECT_FALSE(first_a.second);
  EXPECT_EQ(first_a.first->hash, peak_server::fnv1a(a));
  EXPECT_FALSE(get(b).second);
  const auto again_a = get(a);  // a is now the latest, b the oldest
  EXPECT_TRUE(again_a.second);
  EXPECT_EQ(again_a.first, first_a.first);
  EXPECT_EQ(cache.held_bytes(), size(a) + size(b));
  EXPECT_FALSE(get(c).second);  // b leaves
  EXPECT_EQ(cache.held_bytes(), size(a) + size(c));
  EXPECT_TRUE(get(a).second);
  EXPECT_TRUE(get(c).second);
  const auto b_again = get(b);  // encoded again, as it was: a leaves
  EXPECT_FALSE(b_again.second);
  EXPECT_TRUE(get(c).second);
  EXPECT_FALSE(get(a).second);

  peak_server::ImageCache small(tiny_projector(), 1, size(c) - 1);
  bool cached = true;
  const auto whole = small.get(c, "f", &cached);
  EXPECT_FALSE(cached);
  EXPECT_EQ(whole->rows, get(c).first->rows);
  EXPECT_EQ(small.held_bytes(), 0u);
  small.get(c, "f", &cached);
  EXPECT_FALSE(cached);
}

// A model tests/runtime writes, loaded; nullptr when `path` is "" (not built here).
peak_model* load_fixture(const char* path) {
  peak_model* m = nullptr;
  if (std::string(path).empty()) return m;
  EXPECT_EQ(peak_model_load(path, nullptr, &m), PEAK_OK) << peak_last_error();
  return m;
}

// The tiny bert model (tests/runtime).
const peak_model* embedding_model() {
  static peak_model* model = load_fixture(PEAK_EMBED_MODEL);
  return model;
}

// An embedding model's or a reranker's slots: an embedder on one thread each.
SlotSettings encoder_settings(const peak_model* model) {
  SlotSettings s;
  s.model = model;
  s.context.n_threads = 1;
  return s;
}

SlotSettings embedding_settings() { return encoder_settings(embedding_model()); }

// peak_embed's vectors for `texts` on an embedder of its own (one thread, as the server's).
std::vector<std::vector<float>> library_vectors(const std::vector<std::string>& texts, size_t dimensions = 0) {
  peak_embedder_params ep = peak_embedder_default_params();
  ep.n_threads = 1;
  peak_embedder* embedder = nullptr;
  EXPECT_EQ(peak_embedder_create(embedding_model(), &ep, &embedder), PEAK_OK) << peak_last_error();
  std::vector<const char*> pointers;
  std::vector<size_t> lengths;
  for (const std::string& t : texts) {
    pointers.push_back(t.c_str());
    lengths.push_back(t.size());
  }
  peak_embed_params params = peak_embed_default_params();
  params.dimensions = dimensions;
  const size_t d = dimensions ? dimensions : peak_embedder_n_embd(embedder);
  std::vector<float> floats(texts.size() * d);
  size_t n_floats = 0;
  EXPECT_EQ(peak_embed(embedder, pointers.data(), lengths.data(), texts.size(), &params, floats.data(), floats.size(),
                       &n_floats, nullptr),
            PEAK_OK)
      << peak_last_error();
  peak_embedder_free(embedder);
  std::vector<std::vector<float>> out;
  for (size_t i = 0; i < texts.size(); ++i) out.emplace_back(floats.begin() + i * d, floats.begin() + (i + 1) * d);
  return out;
}

// RFC 4648 base64 to bytes, then each 4 bytes as a little-endian float32.
std::vector<float> floats_from_base64(const std::string& text) {
  const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::vector<uint8_t> bytes;
  uint32_t bits = 0;
  int n_bits = 0;
  for (const char c : text) {
    if (c == '=') break;
    const size_t v = alphabet.find(c);
    EXPECT_NE(v, std::string::npos) << "not base64: " << c;
    bits = (bits << 6) | static_cast<uint32_t>(v);
    n_bits += 6;
    if (n_bits >= 8) {
      n_bits -= 8;
      bytes.push_back(static_cast<uint8_t>((bits >> n_bits) & 0xff));
    }
  }
  EXPECT_EQ(bytes.size() % 4, 0u);
  std::vector<float> out;
  for (size_t i = 0; i + 4 <= bytes.size(); i += 4) {
    const uint32_t word =
        bytes[i] | (bytes[i + 1] << 8) | (bytes[i + 2] << 16) | (static_cast<uint32_t>(bytes[i + 3]) << 24);
    float f;
    std::memcpy(&f, &word, sizeof f);
    out.push_back(f);
  }
  return out;
}

std::vector<float> floats_of(const Value& embedding) {
  if (embedding.is_string()) return floats_from_base64(embedding.as_string());
  std::vector<float> out;
  for (const Value& x : embedding.items()) out.push_back(static_cast<float>(x.as_double()));
  return out;
}

// The embeddings of a 200 response, each checked to be OpenAI's shape.
std::vector<std::vector<float>> embeddings_of(const FakeResponder& out, size_t prompt_tokens) {
  EXPECT_EQ(out.status, 200) << out.body;
  const Value v = out.json();
  EXPECT_EQ(v.find("object")->as_string(), "list");
  EXPECT_EQ(v.find("model")->as_string(), "embed_tiny_bert.gguf");
  EXPECT_EQ(v.find("usage")->find("prompt_tokens")->as_int(), static_cast<int64_t>(prompt_tokens));
  EXPECT_EQ(v.find("usage")->find("total_tokens")->as_int(), static_cast<int64_t>(prompt_tokens));
  std::vector<std::vector<float>> vectors;
  for (size_t i = 0; i < v.find("data")->items().size(); ++i) {
    const Value& item = v.find("data")->items()[i];
    EXPECT_EQ(item.find("object")->as_string(), "embedding");
    EXPECT_EQ(item.find("index")->as_int(), static_cast<int64_t>(i));
    vectors.push_back(floats_of(*item.find("embedding")));
  }
  return vectors;
}

std::vector<int32_t> embedding_tokens(const std::string& text) {
  std::vector<int32_t> ids(256);
  size_t n = 0;
  EXPECT_EQ(peak_tokenize(embedding_model(), text.data(), text.size(), 1, 0, ids.data(), ids.size(), &n), PEAK_OK);
  ids.resize(n);
  return ids;
}

void expect_close(const std::vector<std::vector<float>>& actual, const std::vector<std::vector<float>>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    ASSERT_EQ(actual[i].size(), expected[i].size()) << "vector " << i;
    for (size_t j = 0; j < actual[i].size(); ++j) EXPECT_NEAR(actual[i][j], expected[i][j], 1e-6) << i << "," << j;
  }
}

ServerOptions embedding_options(size_t parallel = 1) {
  ServerOptions o = options(parallel);
  o.model_id = "embed_tiny_bert.gguf";
  return o;
}

// Strings, token ids and token-id lists in, peak_embed's vectors out (as
// floats and as base64 bytes alike), cut to `dimensions`, usage counting the
// tokens with [CLS]/[SEP] or BOS as peak_tokenize adds them.
TEST(ServerEmbeddings, VectorsEqualPeakEmbedInEveryInputShape) {
  if (!embedding_model()) GTEST_SKIP() << "the tiny bert model is written by tests/runtime, not built here";
  Server server(embedding_settings(), embedding_options(2));
  const std::vector<std::string> texts = {"the cat sat on the mat", "hello", "search the notes for the recipe"};
  const auto expected = library_vectors(texts);
  size_t all_tokens = 0;
  std::string lists = "[";
  for (size_t i = 0; i < texts.size(); ++i) {
    const std::vector<int32_t> ids = embedding_tokens(texts[i]);
    all_tokens += ids.size();
    lists += i ? ",[" : "[";
    for (size_t k = 0; k < ids.size(); ++k) lists += (k ? "," : "") + std::to_string(ids[k]);
    lists += "]";
  }
  lists += "]";
  const std::string input =
      R"({"model": "m", "input": ["the cat sat on the mat", "hello", "search the notes for the recipe"])";
  expect_close(embeddings_of(call(server, request("POST", "/v1/embeddings", input + "}")), all_tokens), expected);
  const auto base64 = embeddings_of(
      call(server, request("POST", "/v1/embeddings", input + R"(, "encoding_format": "base64"})")), all_tokens);
  const auto floats = embeddings_of(call(server, request("POST", "/embeddings", input + "}")), all_tokens);
  EXPECT_EQ(base64, floats);  // the same float32 values, bit for bit
  expect_close(
      embeddings_of(call(server, request("POST", "/v1/embeddings", R"({"input": )" + lists + "}")), all_tokens),
      expected);

  const std::vector<int32_t> hello = embedding_tokens("hello");
  std::string one_list = "[";
  for (size_t k = 0; k < hello.size(); ++k) one_list += (k ? "," : "") + std::to_string(hello[k]);
  one_list += "]";
  expect_close(
      embeddings_of(call(server, request("POST", "/v1/embeddings", R"({"input": )" + one_list + "}")), hello.size()),
      {expected[1]});
  expect_close(embeddings_of(call(server, request("POST", "/v1/embeddings", R"({"input": "hello"})")), hello.size()),
               {expected[1]});

  expect_close(
      embeddings_of(call(server, request("POST", "/v1/embeddings", input + R"(, "dimensions": 5})")), all_tokens),
      library_vectors(texts, 5));
  const Value metrics = call(server, request("GET", "/metrics")).json();
  EXPECT_EQ(metrics.find("prompt_tokens")->as_int(), static_cast<int64_t>(5 * all_tokens + 2 * hello.size()));
}

TEST(ServerEmbeddings, ErrorsNameTheFieldAndEachModelRefusesTheOthersRoutes) {
  if (!embedding_model()) GTEST_SKIP() << "the tiny bert model is written by tests/runtime, not built here";
  Server server(embedding_settings(), embedding_options());
  peak_model_info info{};
  info.struct_size = sizeof info;
  ASSERT_EQ(peak_model_get_info(embedding_model(), &info), PEAK_OK);
  const auto embed = [&](const std::string& body) { return call(server, request("POST", "/v1/embeddings", body)); };
  std::string long_text;
  for (size_t i = 0; i <= info.n_ctx_train; ++i) long_text += "cat ";
  const size_t long_tokens = embedding_tokens(long_text).size();
  ASSERT_GT(long_tokens, info.n_ctx_train);
  expect_error(embed(R"({"input": ["fine", ")" + long_text + R"("]})"), 400,
               "'input[1]' is " + std::to_string(long_tokens) + " tokens; the embedding model takes at most " +
                   std::to_string(info.n_ctx_train),
               "input[1]");
  expect_error(embed(R"({"input": ")" + long_text + R"("})"), 400, "'input' is", "input");
  expect_error(embed(R"({"input": ["fine", ""]})"), 400, "'input[1]' is an empty string", "input[1]");
  expect_error(embed(R"({"input": "x", "dimensions": )" + std::to_string(info.n_embd + 1) + "}"), 400,
               "'dimensions' must be between 1 and " + std::to_string(info.n_embd), "dimensions");
  expect_error(embed(R"({"input": "x", "encoding_format": "int8"})"), 400, "'encoding_format' must be",
               "encoding_format");
  expect_error(embed(R"({"input": [[1, 2], [)" + std::to_string(info.n_vocab) + "]]}"), 400,
               "'input[1][0]' is " + std::to_string(info.n_vocab) + ", not a token id", "input[1][0]");
  expect_error(embed("{\"input\": "), 400, "not valid JSON");

  // The chat routes on an embedding model, and /v1/embeddings on a chat model.
  expect_error(call(server, request("POST", "/v1/chat/completions", chat_body({{"user", "Hi"}}))), 400,
               "this server runs an embedding model (bert)", "model");
  expect_error(call(server, request("POST", "/v1/completions", R"({"prompt": "Once"})")), 400,
               "this server runs an embedding model (bert)", "model");
  const Value models = call(server, request("GET", "/v1/models")).json();
  EXPECT_EQ(models.find("data")->items()[0].find("id")->as_string(), "embed_tiny_bert.gguf");
  EXPECT_EQ(call(server, request("GET", "/health")).json().find("slots_idle")->as_int(), 1);
  Server chat(settings(), options());
  expect_error(call(chat, request("POST", "/v1/embeddings", R"({"input": "x"})")), 400,
               "this server runs a chat model (llama), which makes no embeddings", "model");
}

// The tiny bert reranker (tests/runtime).
const peak_model* rerank_model() {
  static peak_model* model = load_fixture(PEAK_RERANK_MODEL);
  return model;
}

SlotSettings rerank_settings() { return encoder_settings(rerank_model()); }

ServerOptions rerank_options(size_t parallel = 1) {
  ServerOptions o = options(parallel);
  o.model_id = "rerank_tiny_bert.gguf";
  return o;
}

// peak_rerank's scores (logits) for the documents, on an embedder of its own.
std::vector<float> library_scores(const std::string& query, const std::vector<std::string>& documents) {
  peak_embedder_params ep = peak_embedder_default_params();
  ep.n_threads = 1;
  peak_embedder* embedder = nullptr;
  EXPECT_EQ(peak_embedder_create(rerank_model(), &ep, &embedder), PEAK_OK) << peak_last_error();
  std::vector<const char*> pointers;
  std::vector<size_t> lengths;
  for (const std::string& d : documents) {
    pointers.push_back(d.c_str());
    lengths.push_back(d.size());
  }
  std::vector<float> scores(documents.size());
  EXPECT_EQ(peak_rerank(embedder, query.data(), query.size(), pointers.data(), lengths.data(), documents.size(),
                        nullptr, scores.data()),
            PEAK_OK)
      << peak_last_error();
  peak_embedder_free(embedder);
  return scores;
}

// Tokens of a text without special tokens, on the reranker.
size_t rerank_tokens(const std::string& text) {
  size_t n = 0;
  peak_tokenize(rerank_model(), text.data(), text.size(), 0, 0, nullptr, 0, &n);
  return n;
}

// [CLS] query [SEP] document [SEP], summed over the documents: llama.cpp's usage of a rerank request.
size_t pair_tokens(const std::string& query, const std::vector<std::string>& documents) {
  size_t n = 0;
  for (const std::string& d : documents) n += 3 + rerank_tokens(query) + rerank_tokens(d);
  return n;
}

struct RerankResult {
  size_t index;
  double score;
  const Value* document;  // nullptr when the result has none
};

// The results of a 200 rerank response, its shape checked.
std::vector<RerankResult> rerank_results(const FakeResponder& out, const Value& v, size_t prompt_tokens) {
  EXPECT_EQ(out.status, 200) << out.body;
  EXPECT_EQ(v.find("model")->as_string(), "rerank_tiny_bert.gguf");
  EXPECT_EQ(v.find("object")->as_string(), "list");
  EXPECT_EQ(v.find("usage")->find("prompt_tokens")->as_int(), static_cast<int64_t>(prompt_tokens));
  EXPECT_EQ(v.find("usage")->find("total_tokens")->as_int(), static_cast<int64_t>(prompt_tokens));
  std::vector<RerankResult> results;
  for (const Value& r : v.find("results")->items()) {
    results.push_back(
        {static_cast<size_t>(r.find("index")->as_int()), r.find("relevance_score")->as_double(), r.find("document")});
  }
  return results;
}

// Indices by score, best first, equal scores in the order given, cut to top_n
// (0: all), on scores chosen to tie.
TEST(ServerRerank, OrderIsBestFirstTiesInInputOrder) {
  const std::vector<float> scores = {1.0f, 3.0f, 3.0f, -2.0f, 3.0f, 2.5f};
  EXPECT_EQ(peak_server::rerank_order(scores, 0), (std::vector<size_t>{1, 2, 4, 5, 0, 3}));
  EXPECT_EQ(peak_server::rerank_order(scores, 2), (std::vector<size_t>{1, 2}));
  EXPECT_EQ(peak_server::rerank_order(scores, 4), (std::vector<size_t>{1, 2, 4, 5}));
  EXPECT_EQ(peak_server::rerank_order(scores, 6), (std::vector<size_t>{1, 2, 4, 5, 0, 3}));
  EXPECT_EQ(peak_server::rerank_order(scores, 100), (std::vector<size_t>{1, 2, 4, 5, 0, 3}));
  EXPECT_EQ(peak_server::rerank_order({-1.0f}, 1), (std::vector<size_t>{0}));
}

// Each document's relevance_score is peak_rerank's logit for it, the results
// best first, cut to top_n, with or without the documents' text, whichever
// of the routes' names and the documents' two forms the request uses.
TEST(ServerRerank, ScoresEqualPeakRerankBestFirst) {
  if (!rerank_model()) GTEST_SKIP() << "the tiny bert reranker is written by tests/runtime, not built here";
  Server server(rerank_settings(), rerank_options(2));
  const std::string query = "cat";
  const std::vector<std::string> documents = {"a cat", "hello", "the mat", "cat", "the notes on the cat"};
  const std::vector<float> expected = library_scores(query, documents);
  const size_t tokens = pair_tokens(query, documents);
  const std::string request_body =
      R"({"model": "m", "query": "cat", "documents": ["a cat", "hello", "the mat", "cat", "the notes on the cat"])";

  const FakeResponder all = call(server, request("POST", "/v1/rerank", request_body + "}"));
  const Value all_json = all.json();
  const std::vector<RerankResult> results = rerank_results(all, all_json, tokens);
  ASSERT_EQ(results.size(), documents.size());
  std::vector<bool> seen(documents.size(), false);
  for (size_t k = 0; k < results.size(); ++k) {
    const RerankResult& r = results[k];
    ASSERT_LT(r.index, documents.size());
    EXPECT_FALSE(seen[r.index]) << "document " << r.index << " twice";
    seen[r.index] = true;
    EXPECT_NEAR(r.score, expected[r.index], 1e-6) << "document " << r.index;
    ASSERT_NE(r.document, nullptr);
    EXPECT_EQ(r.document->find("text")->as_string(), documents[r.index]);
    if (k > 0) {
      EXPECT_GE(results[k - 1].score, r.score) << "best first";
      if (results[k - 1].score == r.score) {
        EXPECT_LT(results[k - 1].index, r.index) << "ties in input order";
      }
    }
  }
  // The scores differ between documents (a reranker that ranked nothing would pass the above).
  EXPECT_NE(results.front().score, results.back().score);

  const FakeResponder top = call(server, request("POST", "/rerank", request_body + R"(, "top_n": 2})"));
  const std::vector<RerankResult> best = rerank_results(top, top.json(), tokens);
  ASSERT_EQ(best.size(), 2u);
  for (size_t k = 0; k < 2; ++k) {
    EXPECT_EQ(best[k].index, results[k].index);
    EXPECT_EQ(best[k].score, results[k].score);
  }

  const FakeResponder bare =
      call(server, request("POST", "/v1/reranking", request_body + R"(, "return_documents": false})"));
  const std::vector<RerankResult> no_text = rerank_results(bare, bare.json(), tokens);
  ASSERT_EQ(no_text.size(), documents.size());
  for (size_t k = 0; k < no_text.size(); ++k) {
    EXPECT_EQ(no_text[k].index, results[k].index);
    EXPECT_EQ(no_text[k].document, nullptr);
  }

  const std::string objects =
      R"({"query": "cat", "documents": [{"text": "a cat"}, "hello", {"text": "the mat"}, "cat",
          {"text": "the notes on the cat"}], "top_n": 9})";
  const FakeResponder as_objects = call(server, request("POST", "/reranking", objects));
  const std::vector<RerankResult> from_objects = rerank_results(as_objects, as_objects.json(), tokens);
  ASSERT_EQ(from_objects.size(), documents.size());
  for (size_t k = 0; k < from_objects.size(); ++k) {
    EXPECT_EQ(from_objects[k].index, results[k].index);
    EXPECT_EQ(from_objects[k].score, results[k].score);
  }
  const Value metrics = call(server, request("GET", "/metrics")).json();
  EXPECT_EQ(metrics.find("prompt_tokens")->as_int(), static_cast<int64_t>(4 * tokens));
}

TEST(ServerRerank, ErrorsNameTheFieldAndEachModelRefusesTheOthersRoutes) {
  if (!rerank_model() || !embedding_model()) GTEST_SKIP() << "the tiny bert models are written by tests/runtime";
  Server server(rerank_settings(), rerank_options());
  peak_model_info info{};
  info.struct_size = sizeof info;
  ASSERT_EQ(peak_model_get_info(rerank_model(), &info), PEAK_OK);
  ASSERT_EQ(info.pooling, PEAK_POOLING_RANK);
  const auto rank = [&](const std::string& body) { return call(server, request("POST", "/v1/rerank", body)); };
  std::string long_text;
  while (rerank_tokens(long_text) + rerank_tokens("cat") + 3 <= info.n_ctx_train) long_text += "cat ";
  const size_t long_pair = rerank_tokens(long_text) + rerank_tokens("cat") + 3;
  expect_error(rank(R"({"query": "cat", "documents": ["fine", ")" + long_text + R"("]})"), 400,
               "'documents[1]' with the query is " + std::to_string(long_pair) +
                   " tokens as the model reads them; the reranker takes at most " + std::to_string(info.n_ctx_train),
               "documents[1]");
  expect_error(rank(R"({"query": "cat", "documents": ["a", "b", "c", ""]})"), 400, "'documents[3]' is an empty string",
               "documents[3]");
  expect_error(rank(R"({"documents": ["a"]})"), 400, "'query' is required", "query");
  expect_error(rank(R"({"query": "cat", "documents": ["a"], "top_n": 0})"), 400, "'top_n' must be between 1 and",
               "top_n");
  expect_error(rank(R"({"query": "cat", "documents": ["a"], "top_n": 1.5})"), 400, "'top_n' must be an integer",
               "top_n");
  expect_error(rank("{\"query\": "), 400, "not valid JSON");
  EXPECT_EQ(call(server, request("GET", "/v1/rerank")).status, 405);

  // The other models' routes on a reranker, and /v1/rerank on the other models.
  expect_error(call(server, request("POST", "/v1/embeddings", R"({"input": "x"})")), 400,
               "this server runs a reranker (bert), which makes no embeddings: use POST /v1/rerank", "model");
  expect_error(call(server, request("POST", "/v1/chat/completions", chat_body({{"user", "Hi"}}))), 400,
               "this server runs a reranker (bert), which generates no text: use POST /v1/rerank", "model");
  EXPECT_EQ(call(server, request("GET", "/health")).json().find("slots_idle")->as_int(), 1);
  const std::string rerank_body = R"({"query": "q", "documents": ["a"]})";
  Server embed(embedding_settings(), embedding_options());
  expect_error(call(embed, request("POST", "/v1/rerank", rerank_body)), 400,
               "this server runs an embedding model (bert), which ranks no documents", "model");
  Server chat(settings(), options());
  expect_error(call(chat, request("POST", "/rerank", rerank_body)), 400,
               "this server runs a chat model (llama), which ranks no documents", "model");
}

// A conversation whose file name is taken already is not saved over that file.
TEST(ServerConversationStore, ANameWhoseFileExistsIsRefused) {
  const ScratchDir dir("peak_serve_taken_name");
  const std::filesystem::path taken = dir.path() / "taken.pkss";
  std::ofstream(taken) << "another file";
  ConversationStore store(1, 4, dir.path().string(), [] { return std::string("taken"); });
  ChatSlot slot(settings());
  store.load(0, slot, "alpha", std::nullopt);
  EXPECT_THROW(store.evict(0, slot), peak_server::PeakError);
  std::string kept(static_cast<size_t>(std::filesystem::file_size(taken)), '\0');
  std::ifstream(taken, std::ios::binary).read(kept.data(), static_cast<std::streamsize>(kept.size()));
  EXPECT_TRUE(kept == "another file") << "the file was saved over";
}

}  // namespace
