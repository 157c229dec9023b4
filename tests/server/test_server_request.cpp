// OpenAI request bodies read into checked structs (pictures in data URLs
// too), and stop strings over streamed text.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "json/json.h"
#include "test_pictures.h"
#include "openai_request.h"
#include "stop_filter.h"

namespace {

using peak::json::Value;
using peak_server::ChatRequest;
using peak_server::EmbeddingRequest;
using peak_server::RequestError;
using peak_server::RerankRequest;
using peak_server::StopFilter;

Value body(const std::string& text) {
  Value v;
  std::string error;
  EXPECT_TRUE(peak::json::parse(text, &v, &error)) << error;
  return v;
}

// n_vocab 100, n_embd 8.
EmbeddingRequest embedding(const std::string& text) { return peak_server::parse_embedding_request(body(text), 100, 8); }

std::string embedding_error(const std::string& text) {
  try {
    embedding(text);
  } catch (const RequestError& e) {
    return e.param + ": " + e.what();
  }
  return "";
}

TEST(ServerRequest, EmbeddingInputShapes) {
  EmbeddingRequest r = embedding(R"({"model": "m", "input": "hello"})");
  EXPECT_EQ(r.texts, std::vector<std::string>{"hello"});
  EXPECT_TRUE(r.token_lists.empty() && r.single && !r.base64);
  EXPECT_EQ(r.dimensions, 0u);
  r = embedding(R"({"input": ["a", "b c"], "encoding_format": "base64", "dimensions": 8})");
  EXPECT_EQ(r.texts, (std::vector<std::string>{"a", "b c"}));
  EXPECT_TRUE(r.base64 && !r.single);
  EXPECT_EQ(r.dimensions, 8u);
  r = embedding(R"({"input": [3, 0, 99], "encoding_format": "float", "dimensions": null})");
  EXPECT_TRUE(r.texts.empty() && r.single && !r.base64);
  EXPECT_EQ(r.token_lists, (std::vector<std::vector<int32_t>>{{3, 0, 99}}));
  r = embedding(R"({"input": [[1, 2], [5]]})");
  EXPECT_EQ(r.token_lists, (std::vector<std::vector<int32_t>>{{1, 2}, {5}}));
  EXPECT_FALSE(r.single);
  std::string many = R"({"input": [)";
  for (size_t i = 0; i < peak_server::kMaxEmbeddingInputs; ++i) many += i ? ",\"x\"" : "\"x\"";
  EXPECT_EQ(embedding(many + "]}").texts.size(), peak_server::kMaxEmbeddingInputs);
  EXPECT_EQ(embedding_error(many + R"(, "y"]})"), "input: 'input' has 2049 inputs; at most 2048 go in one request");
}

TEST(ServerRequest, EmbeddingErrorsNameTheFieldAndIndex) {
  EXPECT_EQ(embedding_error(R"({"model": "m"})"), "input: 'input' is required");
  EXPECT_EQ(embedding_error(R"({"input": ""})"), "input: 'input' is an empty string");
  EXPECT_EQ(embedding_error(R"({"input": []})"), "input: 'input' is an empty list");
  EXPECT_EQ(embedding_error(R"({"input": 5})"),
            "input: 'input' must be a string, a list of strings, a list of token ids or a list of token-id lists, "
            "not a number");
  EXPECT_EQ(embedding_error(R"({"input": ["a", ""]})"), "input[1]: 'input[1]' is an empty string");
  EXPECT_EQ(embedding_error(R"({"input": ["a", 3]})"),
            "input[1]: 'input[1]' must be a string (as input[0] is), not a number");
  EXPECT_EQ(embedding_error(R"({"input": [1, "a"]})"),
            "input[1]: 'input[1]' must be an integer (a token id), not a string");
  EXPECT_EQ(embedding_error(R"({"input": [1, 100]})"), "input[1]: 'input[1]' is 100, not a token id (0 to 99)");
  EXPECT_EQ(embedding_error(R"({"input": [[1], []]})"), "input[1]: 'input[1]' is an empty list");
  EXPECT_EQ(embedding_error(R"({"input": [[1], [2, -1]]})"),
            "input[1][1]: 'input[1][1]' is -1, not a token id (0 to 99)");
  EXPECT_EQ(embedding_error(R"({"input": [[1], "a"]})"),
            "input[1]: 'input[1]' must be a list of token ids (as input[0] is), not a string");
  EXPECT_EQ(embedding_error(R"({"input": [{"text": "a"}]})"),
            "input[0]: 'input[0]' must be a string, a token id or a list of token ids, not an object");
  EXPECT_EQ(embedding_error(R"({"input": "a", "encoding_format": "int8"})"),
            "encoding_format: 'encoding_format' must be \"float\" or \"base64\", not \"int8\"");
  EXPECT_EQ(embedding_error(R"({"input": "a", "encoding_format": 1})"),
            "encoding_format: 'encoding_format' must be a string, not a number");
  EXPECT_EQ(embedding_error(R"({"input": "a", "dimensions": 9})"),
            "dimensions: 'dimensions' must be between 1 and 8, not 9");
  EXPECT_EQ(embedding_error(R"({"input": "a", "dimensions": 0})"),
            "dimensions: 'dimensions' must be between 1 and 8, not 0");
  EXPECT_EQ(embedding_error(R"({"input": "a", "dimensions": 2.5})"),
            "dimensions: 'dimensions' must be an integer, not a number");
}

RerankRequest rerank(const std::string& text) { return peak_server::parse_rerank_request(body(text)); }

std::string rerank_error(const std::string& text) {
  try {
    rerank(text);
  } catch (const RequestError& e) {
    return e.param + ": " + e.what();
  }
  return "";
}

// llama.cpp's, Jina's and Cohere's rerank request: documents as strings or
// {"text": ...} objects, top_n and return_documents optional (all of them,
// with their text, by default).
TEST(ServerRequest, RerankFields) {
  RerankRequest r = rerank(R"({"model": "m", "query": "q", "documents": ["a", "b c"]})");
  EXPECT_EQ(r.query, "q");
  EXPECT_EQ(r.documents, (std::vector<std::string>{"a", "b c"}));
  EXPECT_EQ(r.top_n, 0u);
  EXPECT_TRUE(r.return_documents);
  r = rerank(R"({"query": "q", "documents": [{"text": "a"}, "b"], "top_n": 5, "return_documents": false})");
  EXPECT_EQ(r.documents, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(r.top_n, 5u);  // more than the documents: all of them, as llama.cpp's server answers
  EXPECT_FALSE(r.return_documents);
  r = rerank(R"({"query": "q", "documents": ["a"], "top_n": null, "return_documents": null})");
  EXPECT_EQ(r.top_n, 0u);
  EXPECT_TRUE(r.return_documents);

  std::string many = R"({"query": "q", "documents": [)";
  for (size_t i = 0; i < peak_server::kMaxRerankDocuments; ++i) many += i ? ",\"x\"" : "\"x\"";
  EXPECT_EQ(rerank(many + "]}").documents.size(), peak_server::kMaxRerankDocuments);
  EXPECT_EQ(rerank_error(many + R"(, "y"]})"),
            "documents: 'documents' has 1001 documents; at most 1000 go in one request");
}

TEST(ServerRequest, RerankErrorsNameTheFieldAndIndex) {
  EXPECT_EQ(rerank_error(R"({"documents": ["a"]})"), "query: 'query' is required");
  EXPECT_EQ(rerank_error(R"({"query": "", "documents": ["a"]})"), "query: 'query' is an empty string");
  EXPECT_EQ(rerank_error(R"({"query": ["q"], "documents": ["a"]})"), "query: 'query' must be a string, not an array");
  EXPECT_EQ(rerank_error(R"({"query": "q"})"), "documents: 'documents' is required");
  EXPECT_EQ(rerank_error(R"({"query": "q", "documents": "a"})"),
            "documents: 'documents' must be a list of strings, not a string");
  EXPECT_EQ(rerank_error(R"({"query": "q", "documents": []})"), "documents: 'documents' is an empty list");
  EXPECT_EQ(rerank_error(R"({"query": "q", "documents": ["a", "b", "c", ""]})"),
            "documents[3]: 'documents[3]' is an empty string");
  EXPECT_EQ(rerank_error(R"({"query": "q", "documents": ["a", 7]})"),
            "documents[1]: 'documents[1]' must be a string (or an object with a string \"text\"), not a number");
  EXPECT_EQ(rerank_error(R"({"query": "q", "documents": ["a", {"title": "b"}]})"),
            "documents[1].text: 'documents[1].text' is required");
  EXPECT_EQ(rerank_error(R"({"query": "q", "documents": [{"text": ""}]})"),
            "documents[0].text: 'documents[0].text' is an empty string");
  EXPECT_EQ(rerank_error(R"({"query": "q", "documents": ["a"], "top_n": 0})"),
            "top_n: 'top_n' must be between 1 and 2147483647, not 0");
  EXPECT_EQ(rerank_error(R"({"query": "q", "documents": ["a"], "top_n": -2})"),
            "top_n: 'top_n' must be between 1 and 2147483647, not -2");
  EXPECT_EQ(rerank_error(R"({"query": "q", "documents": ["a"], "top_n": 1.5})"),
            "top_n: 'top_n' must be an integer, not a number");
  EXPECT_EQ(rerank_error(R"({"query": "q", "documents": ["a"], "top_n": "2"})"),
            "top_n: 'top_n' must be an integer, not a string");
  EXPECT_EQ(rerank_error(R"({"query": "q", "documents": ["a"], "return_documents": 1})"),
            "return_documents: 'return_documents' must be a boolean, not a number");
  EXPECT_EQ(rerank_error(R"(["q"])"), ": the body must be a JSON object, not an array");
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

// The C API's own message for a grammar or schema it refuses.
std::string grammar_error(const char* text, bool json_schema) {
  peak_grammar* g = nullptr;
  const peak_status status =
      json_schema ? peak_grammar_from_json_schema(text, &g) : peak_grammar_create(text, nullptr, &g);
  peak_grammar_free(g);
  EXPECT_EQ(status, PEAK_ERR_INVALID_ARGUMENT) << text;
  return peak_last_error();
}

std::string message_of(const std::string& text) {
  try {
    peak_server::parse_chat_request(body(text));
  } catch (const RequestError& e) {
    return e.what();
  }
  ADD_FAILURE() << "accepted: " << text;
  return "";
}

const std::string kUser = R"({"messages": [{"role": "user", "content": "x"}], )";

const std::string kTools =
    R"("tools": [{"type": "function", "function": {"name": "get_weather", "description": "Weather",
       "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}},
     {"type": "function", "function": {"name": "get_time"}}])";

// A history with a call and its result: user, assistant with tool_calls
// (content null or absent), tool, then `tail` (more messages, "" for none).
std::string tool_history(const std::string& tail = "", const std::string& call_id = "call_1") {
  return R"({"role": "user", "content": "Weather in Paris?"},
    {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
      "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
    {"role": "tool", "tool_call_id": ")" +
         call_id + R"(", "content": "Sunny"})" + tail;
}

TEST(ServerRequest, ToolsChoiceAndToolMessages) {
  const ChatRequest r = peak_server::parse_chat_request(body(
      R"({"messages": [)" + tool_history() + "], " + kTools +
      R"(, "tool_choice": {"type": "function", "function": {"name": "get_time"}}, "parallel_tool_calls": false})"));
  const Value tools = body(r.tools.json);
  ASSERT_EQ(tools.items().size(), 2u);
  EXPECT_EQ(tools.items()[0].find("function")->find("name")->as_string(), "get_weather");
  EXPECT_EQ(r.tools.choice, PEAK_TOOL_CHOICE_FUNCTION);
  EXPECT_EQ(r.tools.function, "get_time");
  EXPECT_FALSE(r.tools.parallel);
  ASSERT_EQ(r.messages.size(), 3u);
  EXPECT_EQ(r.messages[1].role, PEAK_ROLE_ASSISTANT);
  EXPECT_EQ(r.messages[1].content, "");
  ASSERT_EQ(r.messages[1].tool_calls.size(), 1u);
  EXPECT_EQ(r.messages[1].tool_calls[0].id, "call_1");
  EXPECT_EQ(r.messages[1].tool_calls[0].name, "get_weather");
  EXPECT_EQ(r.messages[1].tool_calls[0].arguments, R"({"city": "Paris"})");
  EXPECT_EQ(r.messages[2].role, PEAK_ROLE_TOOL);
  EXPECT_EQ(r.messages[2].tool_call_id, "call_1");
  EXPECT_EQ(r.messages[2].content, "Sunny");

  const auto choice = [](const std::string& c) {
    return peak_server::parse_chat_request(body(kUser + kTools + R"(, "tool_choice": )" + c + "}")).tools.choice;
  };
  EXPECT_EQ(choice("\"none\""), PEAK_TOOL_CHOICE_NONE);
  EXPECT_EQ(choice("\"auto\""), PEAK_TOOL_CHOICE_AUTO);
  EXPECT_EQ(choice("\"required\""), PEAK_TOOL_CHOICE_REQUIRED);
  EXPECT_EQ(choice("null"), PEAK_TOOL_CHOICE_AUTO);
  // Without tools (or with none), as before; the answer to results, then a user message.
  const ChatRequest plain = peak_server::parse_chat_request(body(R"({"messages": [{"role": "user", "content": "x"}],
      "tools": [], "tool_choice": "auto"})"));
  EXPECT_TRUE(plain.tools.json.empty());
  const ChatRequest after = peak_server::parse_chat_request(
      body(R"({"messages": [)" +
           tool_history(R"(, {"role": "assistant", "content": "Sunny."}, {"role": "user", "content": "Thanks"}]})")));
  ASSERT_EQ(after.messages.size(), 5u);
  EXPECT_TRUE(after.messages[3].tool_calls.empty());
}

TEST(ServerRequest, AMalformedToolOrToolMessageNamesTheField) {
  const std::string user = R"({"messages": [{"role": "user", "content": "x"}], )";
  EXPECT_EQ(param_of(user + R"("tools": {}})"), "tools");
  EXPECT_EQ(param_of(user + R"("tools": [1]})"), "tools[0]");
  EXPECT_EQ(param_of(user + R"("tools": [{"type": "retrieval", "function": {"name": "f"}}]})"), "tools[0].type");
  EXPECT_EQ(param_of(user + R"("tools": [{"type": "function"}]})"), "tools[0].function");
  EXPECT_EQ(param_of(user + R"("tools": [{"type": "function", "function": {}}]})"), "tools[0].function.name");
  EXPECT_EQ(param_of(user + R"("tools": [{"type": "function", "function": {"name": "a b"}}]})"),
            "tools[0].function.name");
  EXPECT_EQ(param_of(user + R"("tools": [{"type": "function", "function": {"name": "f", "parameters": 1}}]})"),
            "tools[0].function.parameters");
  EXPECT_EQ(param_of(user + R"("tools": [{"type": "function", "function": {"name": "f"}},
                                         {"type": "function", "function": {"name": "f"}}]})"),
            "tools[1].function.name");
  EXPECT_EQ(param_of(user + kTools + R"(, "tool_choice": "sometimes"})"), "tool_choice");
  EXPECT_EQ(param_of(user + kTools + R"(, "tool_choice": {"type": "function", "function": {"name": "get_news"}}})"),
            "tool_choice");
  EXPECT_NE(message_of(user + kTools + R"(, "tool_choice": {"type": "function", "function": {"name": "get_news"}}})")
                .find("get_news"),
            std::string::npos);
  EXPECT_EQ(param_of(user + R"("tool_choice": "required"})"), "tool_choice");
  EXPECT_EQ(param_of(user + kTools + R"(, "parallel_tool_calls": 1})"), "parallel_tool_calls");
  // Tools and a grammar of the answer's text: both named.
  EXPECT_EQ(param_of(user + kTools + R"(, "response_format": {"type": "json_object"}})"), "response_format");
  const std::string both = message_of(user + kTools + R"(, "grammar": "root ::= \"x\""})");
  EXPECT_NE(both.find("'tools'"), std::string::npos) << both;
  EXPECT_NE(both.find("'grammar'"), std::string::npos) << both;
  // Messages.
  EXPECT_EQ(param_of(R"({"messages": [)" + tool_history("", "call_2") + "]}"), "messages[2].tool_call_id");
  EXPECT_EQ(param_of(R"({"messages": [)" +
                     tool_history(R"(, {"role": "tool", "tool_call_id": "call_1", "content": "x"})") + "]}"),
            "messages[3].tool_call_id");
  EXPECT_EQ(param_of(R"({"messages": [{"role": "user", "content": "x"}, {"role": "assistant", "content": "y"},
      {"role": "tool", "tool_call_id": "c", "content": "z"}]})"),
            "messages[2].role");
  EXPECT_EQ(param_of(R"({"messages": [{"role": "user", "content": "x"}, {"role": "assistant", "tool_calls": [
      {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
      {"role": "tool", "content": "z"}]})"),
            "messages[2].tool_call_id");
  EXPECT_EQ(param_of(R"({"messages": [{"role": "user", "content": "x"}, {"role": "assistant", "tool_calls": [
      {"id": "c", "type": "function", "function": {"name": "f", "arguments": {}}}]},
      {"role": "tool", "tool_call_id": "c", "content": "z"}]})"),
            "messages[1].tool_calls[0].function.arguments");
  EXPECT_EQ(param_of(R"({"messages": [{"role": "user", "content": "x"}, {"role": "assistant", "tool_calls": [
      {"type": "function", "function": {"name": "f", "arguments": "{}"}}]},
      {"role": "tool", "tool_call_id": "c", "content": "z"}]})"),
            "messages[1].tool_calls[0].id");
  EXPECT_EQ(param_of(R"({"messages": [{"role": "user", "content": "x"}, {"role": "assistant"},
      {"role": "user", "content": "z"}]})"),
            "messages[1].content");
  // The calls are answered by their results before anything else.
  EXPECT_EQ(param_of(R"({"messages": [{"role": "user", "content": "x"}, {"role": "assistant", "tool_calls": [
      {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
      {"role": "user", "content": "z"}]})"),
            "messages[2].role");
}

TEST(ServerRequest, TextConstraints) {
  const auto constraint = [](const std::string& fields) {
    return peak_server::parse_chat_request(body(kUser + fields + "}")).constraint;
  };
  EXPECT_FALSE(constraint(R"("response_format": {"type": "text"})").has_value());
  EXPECT_FALSE(constraint(R"("response_format": null, "grammar": "")").has_value());  // llama.cpp's "" is none

  const auto object = constraint(R"("response_format": {"type": "json_object"})");
  ASSERT_TRUE(object.has_value());
  EXPECT_TRUE(object->json_schema);
  EXPECT_EQ(object->field, "response_format");
  const Value object_schema = body(object->text);
  EXPECT_EQ(object_schema.find("type")->as_string(), "object");
  EXPECT_EQ(object_schema.members().size(), 1u);

  const auto named = constraint(R"("response_format": {"type": "json_schema", "json_schema": {"name": "a_B-1",
      "strict": true, "schema": {"type": "integer", "maximum": 9}}})");
  ASSERT_TRUE(named.has_value());
  EXPECT_TRUE(named->json_schema);
  EXPECT_EQ(named->field, "response_format.json_schema.schema");
  const Value schema = body(named->text);
  EXPECT_EQ(schema.find("type")->as_string(), "integer");
  EXPECT_EQ(schema.find("maximum")->as_int(), 9);

  const auto llama_schema = constraint(R"("json_schema": {"enum": ["a", "b"]}, "response_format": {"type": "text"})");
  ASSERT_TRUE(llama_schema.has_value());
  EXPECT_TRUE(llama_schema->json_schema);
  EXPECT_EQ(body(llama_schema->text).find("enum")->items().size(), 2u);

  const auto grammar = constraint(R"("grammar": "root ::= \"yes\" | \"no\"")");
  ASSERT_TRUE(grammar.has_value());
  EXPECT_FALSE(grammar->json_schema);
  EXPECT_EQ(grammar->text, "root ::= \"yes\" | \"no\"");

  // Into the sampler, in place of a grammar the defaults may hold; completions take them too.
  const peak_server::CompletionRequest completion =
      peak_server::parse_completion_request(body(R"({"prompt": "x", "response_format": {"type": "json_object"}})"));
  ASSERT_TRUE(completion.constraint.has_value());
  peak_sampler_params defaults = peak_sampler_default_params();
  defaults.grammar = "root ::= \"x\"";
  defaults.grammar_root = "root";
  const peak_sampler_params p = completion.sampler(defaults);
  EXPECT_EQ(p.grammar, nullptr);
  EXPECT_EQ(p.grammar_root, nullptr);
  ASSERT_NE(p.json_schema, nullptr);
  EXPECT_EQ(std::string(p.json_schema), completion.constraint->text);
  // The parameters point into the request, which outlives them.
  const auto with_grammar = peak_server::parse_chat_request(body(kUser + R"("grammar": "root ::= \"a\""})"));
  const peak_sampler_params g = with_grammar.sampler(peak_sampler_default_params());
  EXPECT_STREQ(g.grammar, "root ::= \"a\"");
  EXPECT_EQ(g.json_schema, nullptr);
  EXPECT_EQ(peak_server::parse_chat_request(body(kUser + "\"seed\": 1}")).sampler(defaults).grammar, defaults.grammar);
}

TEST(ServerRequest, TextConstraintErrorsNameTheField) {
  const std::string schema_format = R"("response_format": {"type": "json_schema", "json_schema": )";
  EXPECT_EQ(param_of(kUser + R"("response_format": "json_object"})"), "response_format");
  EXPECT_EQ(param_of(kUser + R"("response_format": {}})"), "response_format.type");
  EXPECT_EQ(param_of(kUser + R"("response_format": {"type": 1}})"), "response_format.type");
  EXPECT_EQ(param_of(kUser + R"("response_format": {"type": "xml"}})"), "response_format.type");
  EXPECT_EQ(param_of(kUser + R"("response_format": {"type": "json_schema"}})"), "response_format.json_schema");
  EXPECT_EQ(param_of(kUser + schema_format + R"("s"}})"), "response_format.json_schema");
  EXPECT_EQ(param_of(kUser + schema_format + R"({"schema": {}}}})"), "response_format.json_schema.name");
  EXPECT_EQ(param_of(kUser + schema_format + R"({"name": "a b", "schema": {}}}})"), "response_format.json_schema.name");
  EXPECT_EQ(param_of(kUser + schema_format + R"({"name": 1, "schema": {}}}})"), "response_format.json_schema.name");
  EXPECT_EQ(param_of(kUser + schema_format + R"({"name": "n", "strict": "yes", "schema": {}}}})"),
            "response_format.json_schema.strict");
  EXPECT_EQ(param_of(kUser + schema_format + R"({"name": "n"}}})"), "response_format.json_schema.schema");
  EXPECT_EQ(param_of(kUser + schema_format + R"({"name": "n", "schema": "{}"}}})"),
            "response_format.json_schema.schema");
  EXPECT_EQ(param_of(kUser + R"("grammar": 5})"), "grammar");
  EXPECT_EQ(param_of(kUser + R"("json_schema": "{}"})"), "json_schema");
  EXPECT_NE(message_of(kUser + R"("response_format": {"type": "xml"}})").find("\"xml\""), std::string::npos);

  // Two at once: both named.
  const std::string two = kUser + R"("grammar": "root ::= \"a\"", "json_schema": {}})";
  EXPECT_EQ(param_of(two), "json_schema");
  EXPECT_NE(message_of(two).find("'grammar' and 'json_schema'"), std::string::npos) << message_of(two);
  const std::string format_and_grammar =
      kUser + R"("response_format": {"type": "json_object"}, "grammar": "root ::= \"a\""})";
  EXPECT_NE(message_of(format_and_grammar).find("'response_format' and 'grammar'"), std::string::npos)
      << message_of(format_and_grammar);

  // What the C API refuses, with its message.
  const std::string gbnf = "root ::= \"a\" undefined_rule";
  const std::string bad_grammar = kUser + "\"grammar\": " + peak::json::write(Value(gbnf)) + "}";
  EXPECT_EQ(param_of(bad_grammar), "grammar");
  EXPECT_NE(message_of(bad_grammar).find(grammar_error(gbnf.c_str(), false)), std::string::npos)
      << message_of(bad_grammar);
  const char* bad_schema = R"({"type": "object", "properties": {"n": {"type": "string", "format": "email"}}})";
  const std::string schema_text = kUser + schema_format + R"({"name": "n", "schema": )" + bad_schema + "}}}";
  EXPECT_EQ(param_of(schema_text), "response_format.json_schema.schema");
  const std::string expected = grammar_error(peak::json::write(body(bad_schema)).c_str(), true);
  EXPECT_NE(expected.find("/properties/n"), std::string::npos) << expected;
  EXPECT_NE(message_of(schema_text).find(expected), std::string::npos) << message_of(schema_text);
  EXPECT_EQ(param_of(kUser + R"("json_schema": {"type": "no-such-type"}})"), "json_schema");
}

// Pictures as OpenAI's image_url parts holding data URLs. The files are from
// tests/data/images, written by PIL (each folder's README.md): png/pil_1bit.png
// (19 x 11, 1-bit grey) and jpeg/grey_1x1.jpg; their base64 is Python's:
// base64.b64encode(open(f, 'rb').read()).decode().
const std::string kPngBase64 =
    "iVBORw0KGgoAAAANSUhEUgAAABMAAAALAQAAAAC1rouXAAAAN0lEQVR4nAEsANP/AayRIwFIAfcB0v7wABj0oAC3qiAAbwtABO9HbgCX1CACDs0A"
    "BMQCIALxswB4Mg/rNB8T9wAAAABJRU5ErkJggg==";
const std::string kJpegBase64 =
    "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAgGBgcGBQgHBwcJCQgKDBQNDAsLDBkSEw8UHRofHh0aHBwgJC4nICIsIxwcKDcpLDAxNDQ0Hyc5PTgy"
    "PC4zNDL/wAALCAABAAEBAREA/8QAHwAAAQUBAQEBAQEAAAAAAAAAAAECAwQFBgcICQoL/8QAtRAAAgEDAwIEAwUFBAQAAAF9AQIDAAQRBRIhMUEG"
    "E1FhByJxFDKBkaEII0KxwRVS0fAkM2JyggkKFhcYGRolJicoKSo0NTY3ODk6Q0RFRkdISUpTVFVWV1hZWmNkZWZnaGlqc3R1dnd4eXqDhIWGh4iJ"
    "ipKTlJWWl5iZmqKjpKWmp6ipqrKztLW2t7i5usLDxMXGx8jJytLT1NXW19jZ2uHi4+Tl5ufo6erx8vP09fb3+Pn6/9oACAEBAAA/AODr/9k=";
const std::string kPngUrl = "data:image/png;base64," + kPngBase64;
const std::string kJpegUrl = "data:image/jpeg;base64," + kJpegBase64;

std::string quoted(const std::string& text) { return peak::json::write(Value(text)); }
std::string text_part(const std::string& text) { return R"({"type": "text", "text": )" + quoted(text) + "}"; }
std::string image_part(const std::string& url, const std::string& detail = "") {
  return R"({"type": "image_url", "image_url": {"url": )" + quoted(url) +
         (detail.empty() ? "" : R"(, "detail": )" + quoted(detail)) + "}}";
}
// A request of one user message with these content parts.
std::string user_parts(const std::string& parts) {
  return R"({"messages": [{"role": "user", "content": [)" + parts + "]}]}";
}

std::string chat_error(const std::string& text) {
  try {
    peak_server::parse_chat_request(body(text));
  } catch (const RequestError& e) {
    return e.param + ": " + e.what();
  }
  ADD_FAILURE() << "accepted: " << text.substr(0, 200);
  return "";
}

TEST(ServerRequest, ImagePartsAreDecodedAndMarkedInOrder) {
  const std::string png = peak_server::testing::test_picture("png/pil_1bit.png"),
                    jpeg = peak_server::testing::test_picture("jpeg/grey_1x1.jpg");
  ASSERT_EQ(png.size(), 112u);
  ASSERT_EQ(jpeg.size(), 332u);
  const std::string marker = peak_server::kImageMarker;
  EXPECT_EQ(marker, "<__media__>");
  // Text, a PNG, text, a JPEG given as the URL alone, text; then a user
  // message of a picture alone, after an answer.
  const ChatRequest r = peak_server::parse_chat_request(
      body(R"({"messages": [{"role": "system", "content": "Look."}, {"role": "user", "content": [)" + text_part("Is ") +
           "," + image_part(kPngUrl, "auto") + "," + text_part(" like ") + R"(, {"type": "image_url", "image_url": )" +
           quoted(kJpegUrl) + "}," + text_part("?") + R"(]}, {"role": "assistant", "content": "No."},
      {"role": "user", "content": [)" +
           image_part(kPngUrl, "high") + "]}]}"));
  ASSERT_EQ(r.messages.size(), 3u);
  EXPECT_EQ(r.messages[0].content, "Is " + marker + " like " + marker + "?");
  ASSERT_EQ(r.messages[0].images.size(), 2u);
  EXPECT_EQ(r.messages[0].images[0], png);
  EXPECT_EQ(r.messages[0].images[1], jpeg);
  // Where each came, for the decoder's errors: the system message is messages[0].
  EXPECT_EQ(r.messages[0].image_fields,
            (std::vector<std::string>{"messages[1].content[1].image_url.url", "messages[1].content[3].image_url"}));
  EXPECT_TRUE(r.messages[1].images.empty());
  EXPECT_EQ(r.messages[2].content, marker);
  EXPECT_EQ(r.messages[2].images, std::vector<std::string>{png});
  EXPECT_EQ(r.messages[2].image_fields, std::vector<std::string>{"messages[3].content[0].image_url.url"});
  // image/jpg, the type and ";base64" in capitals, a parameter before
  // ";base64", detail "low", the padding left out: the same bytes.
  std::string unpadded = kJpegBase64;
  unpadded.pop_back();
  for (const std::string& url :
       {"data:image/jpg;base64," + kJpegBase64, "data:IMAGE/JPEG;BASE64," + kJpegBase64,
        "data:image/jpeg;name=cat.jpg;base64," + kJpegBase64, "data:image/jpeg;base64," + unpadded}) {
    const ChatRequest one = peak_server::parse_chat_request(body(user_parts(image_part(url, "low"))));
    EXPECT_EQ(one.messages[0].images, std::vector<std::string>{jpeg}) << url.substr(0, 40);
  }
}

TEST(ServerRequest, ImageErrorsNameTheField) {
  const std::string url = "messages[0].content[1].image_url.url";
  const std::string fetch =
      "; this server never fetches URLs: send the picture itself as a data URL (data:image/png;base64,...)";
  const auto with_url = [](const std::string& u) { return user_parts(text_part("See") + "," + image_part(u)); };
  EXPECT_EQ(chat_error(with_url("https://example.com/cat.png")),
            url + ": '" + url + "' is not a data URL (its scheme is https)" + fetch);
  EXPECT_EQ(chat_error(with_url("cat.png")), url + ": '" + url + "' is not a data URL" + fetch);
  EXPECT_EQ(chat_error(user_parts(R"({"type": "image_url", "image_url": "http://example.com/cat.png"})")),
            "messages[0].content[0].image_url: 'messages[0].content[0].image_url' is not a data URL (its scheme is "
            "http)" +
                fetch);
  EXPECT_EQ(chat_error(with_url("data:image/gif;base64,R0lGODlhAQABAA==")),
            url + ": '" + url + "' is a data URL of \"image/gif\"; the supported images are image/png and image/jpeg");
  EXPECT_EQ(chat_error(with_url("data:image/webp;base64,UklGRg==")),
            url + ": '" + url + "' is a data URL of \"image/webp\"; the supported images are image/png and image/jpeg");
  EXPECT_EQ(chat_error(with_url("data:;base64," + kPngBase64)),
            url + ": '" + url + "' is a data URL of no media type; the supported images are image/png and image/jpeg");
  EXPECT_EQ(chat_error(with_url("data:image/png,%89PNG")),
            url + ": '" + url +
                "' is a data URL without ';base64': send the picture's bytes in base64 "
                "(data:image/png;base64,...)");
  EXPECT_EQ(chat_error(with_url("data:image/png;base64")),
            url + ": '" + url + "' is a data URL without a ',' before its data");
  const std::string invalid = url + ": '" + url + "' is not valid base64 after its ',': ";
  EXPECT_EQ(chat_error(with_url("data:image/png;base64,iVBORw0KG%goAAAA")),
            invalid +
                "the character '%' at offset 9 is not base64 (A-Z, a-z, 0-9, '+' and '/', then '=' padding at the "
                "end)");
  EXPECT_EQ(chat_error(with_url("data:image/png;base64,iVBORw0K\nGgoAAAA")),
            invalid +
                "the character byte 0x0A at offset 8 is not base64 (A-Z, a-z, 0-9, '+' and '/', then '=' padding at "
                "the end)");
  EXPECT_EQ(chat_error(with_url("data:image/png;base64," + kPngBase64 + "=")),
            invalid +
                "the padding at offset 150 (3 '=') does not complete the last 4-character group, which has 2 "
                "characters of data");
  EXPECT_EQ(chat_error(with_url("data:image/png;base64,iVBORw0KGgoA=AAA")),
            invalid + "'=' at offset 12 is padding before the end of the data");
  // Not a PNG or a JPEG, whatever the type says (Python: base64.b64encode(b'GIF89a\x01\x00\x01\x00')).
  EXPECT_EQ(chat_error(with_url("data:image/png;base64,R0lGODlhAQABAA==")),
            url + ": '" + url +
                "' holds neither a PNG nor a JPEG file (its bytes begin 47 49 46 38 39 61 01 00; a PNG's begin 89 50 "
                "4E 47 0D 0A 1A 0A, a JPEG's FF D8 FF)");
  EXPECT_EQ(chat_error(with_url("data:image/png;base64,")),
            url + ": '" + url +
                "' holds neither a PNG nor a JPEG file (its data is empty; a PNG's begin 89 50 4E 47 0D 0A 1A 0A, a "
                "JPEG's FF D8 FF)");
  EXPECT_EQ(chat_error(user_parts(image_part(kPngUrl, "medium"))),
            "messages[0].content[0].image_url.detail: 'messages[0].content[0].image_url.detail' must be \"auto\", "
            "\"low\" or \"high\", not \"medium\"");
  EXPECT_EQ(chat_error(user_parts(R"({"type": "image_url"})")),
            "messages[0].content[0].image_url: 'messages[0].content[0].image_url' is required");
  EXPECT_EQ(chat_error(user_parts(R"({"type": "image_url", "image_url": {"detail": "low"}})")),
            "messages[0].content[0].image_url.url: 'messages[0].content[0].image_url.url' is required");
  EXPECT_EQ(chat_error(user_parts(R"({"type": "image_url", "image_url": 5})")),
            "messages[0].content[0].image_url: 'messages[0].content[0].image_url' must be an object (or the URL as a "
            "string), not a number");
  EXPECT_EQ(chat_error(user_parts(R"({"type": "input_audio", "input_audio": {}})")),
            "messages[0].content[0].type: 'messages[0].content[0].type' must be \"text\" or \"image_url\", not "
            "\"input_audio\"");
}

TEST(ServerRequest, ImagesGoInUserMessagesOnly) {
  const std::string image = image_part(kPngUrl);
  EXPECT_EQ(chat_error(R"({"messages": [{"role": "system", "content": [)" + text_part("Look") + "," + image +
                       R"(]}, {"role": "user", "content": "x"}]})"),
            "messages[0].content[1]: 'messages[0].content[1]' is an image; images go in user messages only");
  EXPECT_EQ(chat_error(R"({"messages": [{"role": "user", "content": "x"}, {"role": "assistant", "content": [)" + image +
                       R"(]}, {"role": "user", "content": "y"}]})"),
            "messages[1].content[0]: 'messages[1].content[0]' is an image; images go in user messages only");
  EXPECT_EQ(chat_error(R"({"messages": [{"role": "user", "content": "x"}, {"role": "assistant", "content": null,
      "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
      {"role": "tool", "tool_call_id": "c1", "content": [)" +
                       image + "]}]}"),
            "messages[2].content[0]: 'messages[2].content[0]' is an image; images go in user messages only");
}

TEST(ServerRequest, TheImageMarkerIsNoText) {
  const std::string why = " holds the text <__media__>, which marks an image's place: send pictures as image_url parts";
  EXPECT_EQ(chat_error(user_parts(text_part("a") + "," + text_part("b <__media__> c"))),
            "messages[0].content[1].text: 'messages[0].content[1].text'" + why);
  EXPECT_EQ(chat_error(R"({"messages": [{"role": "user", "content": "<__media__>"}]})"),
            "messages[0].content: 'messages[0].content'" + why);
  EXPECT_EQ(
      chat_error(R"({"messages": [{"role": "system", "content": "x<__media__>"}, {"role": "user", "content": "y"}]})"),
      "messages[0].content: 'messages[0].content'" + why);
  // Its pieces apart are text like any other.
  const ChatRequest r =
      peak_server::parse_chat_request(body(user_parts(text_part("<__med") + "," + text_part("ia__>"))));
  EXPECT_EQ(r.messages[0].content, "<__media__>");
  EXPECT_TRUE(r.messages[0].images.empty());
}

// A PNG's signature and zero bytes, `size` bytes in all (a multiple of 3), as a data URL.
std::string zero_png_url(size_t size) {
  return "data:image/png;base64,iVBORw0KGgoA" + std::string((size - 9) / 3 * 4, 'A');
}

TEST(ServerRequest, PicturesAreBounded) {
  const size_t most = peak_server::kMaxImageBytes;
  ASSERT_EQ(most % 3, 2u);  // 32 MiB: the largest multiple of 3 below is most - 2
  const ChatRequest r = peak_server::parse_chat_request(body(user_parts(image_part(zero_png_url(most - 2)))));
  EXPECT_EQ(r.messages[0].images[0].size(), most - 2);
  const std::string url = "messages[0].content[0].image_url.url";
  EXPECT_EQ(chat_error(user_parts(image_part(zero_png_url(most + 1)))),
            url + ": '" + url + "' holds a picture of 33554433 bytes; at most 33554432 (32 MiB) go in one picture");
  // Two of 21 MiB, in two messages: the second is past the request's 40 MiB.
  const std::string big = image_part(zero_png_url(size_t{21} << 20));
  EXPECT_EQ(chat_error(R"({"messages": [{"role": "user", "content": [)" + big +
                       R"(]}, {"role": "assistant", "content": "x"}, {"role": "user", "content": [)" + big + "]}]}"),
            "messages[2].content[0].image_url.url: 'messages[2].content[0].image_url.url' brings the request's "
            "pictures to 44040192 bytes; at most 41943040 (40 MiB) go in one request");
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
