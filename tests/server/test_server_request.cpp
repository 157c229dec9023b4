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
