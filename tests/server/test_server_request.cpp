// OpenAI request bodies read into checked structs, and stop strings over
// streamed text.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "json/json.h"
#include "openai_request.h"
#include "stop_filter.h"

namespace {

using peak::json::Value;
using peak_server::ChatRequest;
using peak_server::RequestError;
using peak_server::StopFilter;

Value body(const std::string& text) {
  Value v;
  std::string error;
  EXPECT_TRUE(peak::json::parse(text, &v, &error)) << error;
  return v;
}

TEST(ServerRequest, ChatFields) {
  const ChatRequest r = peak_server::parse_chat_request(body(R"({
    "model": "m", "messages": [
      {"role": "system", "content": "Be brief."},
      {"role": "user", "content": [{"type": "text", "text": "Hel"}, {"type": "text", "text": "lo"}]},
      {"role": "assistant", "content": "Hi."},
      {"role": "user", "content": "Tell me."}],
    "temperature": 0.5, "top_p": 0.9, "top_k": 20, "min_p": 0.1, "max_tokens": 7, "stop": "END",
    "seed": 42, "presence_penalty": 0.5, "frequency_penalty": -0.5, "stream": true,
    "stream_options": {"include_usage": true}, "logprobs": null, "user": "ignored", "conversation": "c1"})"));
  ASSERT_TRUE(r.system.has_value());
  EXPECT_EQ(*r.system, "Be brief.");
  ASSERT_EQ(r.messages.size(), 3u);
  EXPECT_EQ(r.messages[0].content, "Hello");
  EXPECT_EQ(r.messages[1].role, PEAK_ROLE_ASSISTANT);
  EXPECT_EQ(r.messages[2].content, "Tell me.");
  EXPECT_EQ(*r.max_tokens, 7);
  EXPECT_EQ(r.stop, std::vector<std::string>{"END"});
  EXPECT_TRUE(r.stream);
  EXPECT_TRUE(r.include_usage);
  EXPECT_EQ(r.conversation, "c1");
  const peak_sampler_params p = r.sampler(peak_sampler_default_params());
  EXPECT_FLOAT_EQ(p.temperature, 0.5f);
  EXPECT_FLOAT_EQ(p.top_p, 0.9f);
  EXPECT_EQ(p.top_k, 20u);
  EXPECT_FLOAT_EQ(p.min_p, 0.1f);
  EXPECT_EQ(p.seed, 42u);
  EXPECT_FLOAT_EQ(p.presence_penalty, 0.5f);
  EXPECT_FLOAT_EQ(p.frequency_penalty, -0.5f);
  // Unset fields keep the server's defaults.
  const ChatRequest plain = peak_server::parse_chat_request(body(R"({"messages": [{"role": "user", "content": "x"}]})"));
  peak_sampler_params defaults = peak_sampler_default_params();
  defaults.temperature = 0.25f;
  EXPECT_FLOAT_EQ(plain.sampler(defaults).temperature, 0.25f);
  EXPECT_FALSE(plain.max_tokens.has_value());
  EXPECT_FALSE(plain.system.has_value());
}

std::string param_of(const std::string& text) {
  try {
    peak_server::parse_chat_request(body(text));
  } catch (const RequestError& e) {
    return e.param;
  }
  ADD_FAILURE() << "accepted: " << text;
  return "";
}

TEST(ServerRequest, ErrorsNameTheField) {
  const std::string user = R"({"role": "user", "content": "x"})";
  EXPECT_EQ(param_of(R"({"messages": [)" + user + R"(], "seed": "1"})"), "seed");
  EXPECT_EQ(param_of(R"({"messages": [)" + user + R"(], "top_k": -1})"), "top_k");
  EXPECT_EQ(param_of(R"({"messages": [)" + user + R"(], "temperature": -0.1})"), "temperature");
  EXPECT_EQ(param_of(R"({"messages": [)" + user + R"(], "stream": "yes"})"), "stream");
  EXPECT_EQ(param_of(R"({"messages": [)" + user + R"(], "stream_options": []})"), "stream_options");
  EXPECT_EQ(param_of(R"({"messages": [)" + user + R"(], "stop": [""]})"), "stop");
  EXPECT_EQ(param_of(R"({"messages": [)" + user + R"(], "conversation": ""})"), "conversation");
  EXPECT_EQ(param_of(R"({"messages": [)" + user + R"(], "max_tokens": 0})"), "max_tokens");
  EXPECT_EQ(param_of(R"({"messages": [1]})"), "messages[0]");
  EXPECT_EQ(param_of(R"({"messages": [{"role": 1, "content": "x"}]})"), "messages[0].role");
  EXPECT_EQ(param_of(R"({"messages": [{"role": "user", "content": 5}]})"), "messages[0].content");
  EXPECT_EQ(param_of(R"({"messages": [{"role": "assistant", "content": "x"}, )" + user + "]}"), "messages[0].role");
  EXPECT_EQ(param_of(R"({"messages": [{"role": "assistant", "content": "x"}]})"), "messages");
}

std::string run_filter(const std::vector<std::string>& stops, const std::vector<std::string>& pieces, bool* stopped,
                       std::vector<std::string>* sent = nullptr) {
  StopFilter f(stops);
  std::string out;
  *stopped = false;
  for (const std::string& p : pieces) {
    const size_t before = out.size();
    *stopped = f.feed(p, &out);
    if (sent) sent->push_back(out.substr(before));
    if (*stopped) return out;
  }
  f.flush(&out);
  return out;
}

TEST(ServerRequest, StopStrings) {
  bool stopped = false;
  std::vector<std::string> sent;
  // "EN" is held back until "D" shows it is the stop string.
  EXPECT_EQ(run_filter({"END"}, {"abc E", "N", "D more"}, &stopped, &sent), "abc ");
  EXPECT_TRUE(stopped);
  EXPECT_EQ(sent, (std::vector<std::string>{"abc ", "", ""}));
  // A false start is sent once it cannot be one.
  sent.clear();
  EXPECT_EQ(run_filter({"END"}, {"E", "Nx", "y"}, &stopped, &sent), "ENxy");
  EXPECT_FALSE(stopped);
  EXPECT_EQ(sent, (std::vector<std::string>{"", "ENx", "y"}));
  // The earliest of several; a held-back end sent at the end of the text.
  EXPECT_EQ(run_filter({"world", "lo w"}, {"hello world"}, &stopped), "hel");
  EXPECT_EQ(run_filter({"xyz"}, {"abc x"}, &stopped), "abc x");
  EXPECT_FALSE(stopped);
  EXPECT_EQ(run_filter({}, {"a", "b"}, &stopped), "ab");
  // Multi-byte characters: a stop string that starts inside one's bytes never matches mid-character.
  EXPECT_EQ(run_filter({"\xC3\xA9t\xC3\xA9"}, {"l'\xC3\xA9", "t\xC3", "\xA9"}, &stopped), "l'");
  EXPECT_TRUE(stopped);
}

}  // namespace
