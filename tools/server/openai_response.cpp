#include "openai_response.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <utility>

#include "base64.h"

namespace peak_server {

namespace {

using peak::json::Value;

bool is_chat(const ResponseHead& head) { return head.endpoint == Endpoint::Chat; }

// id, object, created, model: the members every response and chunk starts with.
Value head_object(const ResponseHead& head, const char* object) {
  return Value::object().set("id", head.id).set("object", object).set("created", head.created).set("model", head.model);
}

Value whole_object(const ResponseHead& head) {
  return head_object(head, is_chat(head) ? "chat.completion" : "text_completion");
}

Value chunk_object(const ResponseHead& head) {
  return head_object(head, is_chat(head) ? "chat.completion.chunk" : "text_completion");
}

// A chat choice: `part` is "delta" (streamed) or "message" (whole).
Value chat_choice(const char* part, Value body, Value finish_reason) {
  return Value::object().set("index", 0).set(part, std::move(body)).set("finish_reason", std::move(finish_reason));
}

Value completion_choice(const std::string& text, Value finish_reason) {
  return Value::object()
      .set("text", text)
      .set("index", 0)
      .set("logprobs", nullptr)
      .set("finish_reason", std::move(finish_reason));
}

Value chunk(const ResponseHead& head, Value choice) {
  Value v = chunk_object(head);
  v.set("choices", Value::array().push(std::move(choice)));
  return v;
}

Value usage(const ResponseEnd& end) {
  return Value::object()
      .set("prompt_tokens", end.prompt_tokens)
      .set("completion_tokens", end.completion_tokens)
      .set("total_tokens", end.prompt_tokens + end.completion_tokens);
}

Value function_object(const ChatToolCall& call) {
  return Value::object().set("name", call.name).set("arguments", call.arguments);
}

// A chunk whose delta is one entry of tool_calls.
Value tool_call_chunk(const ResponseHead& head, Value entry) {
  Value delta = Value::object().set("tool_calls", Value::array().push(std::move(entry)));
  return chunk(head, chat_choice("delta", std::move(delta), nullptr));
}

std::string data_event(const std::string& json_text) { return "data: " + json_text + "\n\n"; }
std::string event(const Value& data) { return data_event(peak::json::write(data)); }

const char* error_type(int status) {
  switch (status) {
    case 400: return "invalid_request_error";
    case 401: return "authentication_error";
    case 404: return "not_found_error";
    case 405: return "invalid_request_error";
    case 503: return "unavailable_error";
    default: return "server_error";
  }
}

}  // namespace

const char kDoneEvent[] = "data: [DONE]\n\n";

Value assistant_message(const std::string& content, const std::string& reasoning,
                        const std::vector<ChatToolCall>& tool_calls) {
  const bool only_calls = content.empty() && !tool_calls.empty();
  Value message = Value::object().set("role", "assistant").set("content", only_calls ? Value() : Value(content));
  if (!reasoning.empty()) message.set("reasoning_content", reasoning);
  if (!tool_calls.empty()) {
    Value calls = Value::array();
    for (const ChatToolCall& c : tool_calls) {
      calls.push(Value::object().set("id", c.id).set("type", "function").set("function", function_object(c)));
    }
    message.set("tool_calls", std::move(calls));
  }
  return message;
}

const char* finish_reason(peak_stop_reason reason, bool stop_string) {
  if (stop_string) return "stop";
  return reason == PEAK_STOP_EOG || reason == PEAK_STOP_CALLBACK || reason == PEAK_STOP_ABORTED ? "stop" : "length";
}

std::string response_body(const ResponseHead& head, const ResponseEnd& end, const std::string& content,
                          const std::string& reasoning, const std::vector<ChatToolCall>& tool_calls) {
  Value choice;
  if (is_chat(head)) {
    choice = chat_choice("message", assistant_message(content, reasoning, tool_calls), end.finish_reason);
  } else {
    choice = completion_choice(content, end.finish_reason);
  }
  Value v = whole_object(head);
  v.set("choices", Value::array().push(std::move(choice))).set("usage", usage(end)).set("peak", end.extension);
  return peak::json::write(v);
}

std::vector<std::string> opening_events(const ResponseHead& head) {
  if (!is_chat(head)) return {};
  Value delta = Value::object().set("role", "assistant").set("content", "");
  return {event(chunk(head, chat_choice("delta", std::move(delta), nullptr)))};
}

std::string text_event(const ResponseHead& head, const std::string& content, const std::string& reasoning) {
  if (!is_chat(head)) return event(chunk(head, completion_choice(content, nullptr)));
  Value delta = Value::object();
  if (!content.empty()) delta.set("content", content);
  if (!reasoning.empty()) delta.set("reasoning_content", reasoning);
  return event(chunk(head, chat_choice("delta", std::move(delta), nullptr)));
}

std::vector<std::string> tool_call_events(const ResponseHead& head, size_t index, const ChatToolCall& call) {
  ChatToolCall opening = call;
  opening.arguments.clear();
  const Value start = Value::object()
                          .set("index", index)
                          .set("id", call.id)
                          .set("type", "function")
                          .set("function", function_object(opening));
  const Value arguments =
      Value::object().set("index", index).set("function", Value::object().set("arguments", call.arguments));
  return {event(tool_call_chunk(head, start)), event(tool_call_chunk(head, arguments))};
}

std::vector<std::string> closing_events(const ResponseHead& head, const ResponseEnd& end, bool include_usage) {
  const bool chat = is_chat(head);
  Value last = chunk(
      head, chat ? chat_choice("delta", Value::object(), end.finish_reason) : completion_choice("", end.finish_reason));
  last.set("peak", end.extension);
  // A completion's usage rides on its last chunk; chat's comes in a chunk of
  // its own with no choices (OpenAI's shapes).
  if (include_usage && !chat) last.set("usage", usage(end));
  std::vector<std::string> events{event(last)};
  if (include_usage && chat) {
    Value u = chunk_object(head);
    u.set("choices", Value::array()).set("usage", usage(end));
    events.push_back(event(u));
  }
  return events;
}

std::string base64_floats(const float* floats, size_t n) {
  std::string bytes;
  bytes.reserve(n * 4);
  for (size_t i = 0; i < n; ++i) {
    uint32_t bits = 0;
    static_assert(sizeof bits == sizeof floats[i], "float is 32 bits");
    std::memcpy(&bits, &floats[i], sizeof bits);
    for (int b = 0; b < 4; ++b)
      bytes.push_back(static_cast<char>((bits >> (8 * b)) & 0xff));  // least significant first
  }
  return base64_encode(bytes);
}

std::string embeddings_body(const std::string& model, const std::vector<float>& floats, size_t dimensions, bool base64,
                            size_t prompt_tokens) {
  Value data = Value::array();
  for (size_t i = 0; dimensions > 0 && i * dimensions < floats.size(); ++i) {
    const float* v = floats.data() + i * dimensions;
    Value embedding;
    if (base64) {
      embedding = Value(base64_floats(v, dimensions));
    } else {
      embedding = Value::array();
      for (size_t j = 0; j < dimensions; ++j) embedding.push(static_cast<double>(v[j]));
    }
    data.push(Value::object().set("object", "embedding").set("index", i).set("embedding", std::move(embedding)));
  }
  return peak::json::write(
      Value::object()
          .set("object", "list")
          .set("data", std::move(data))
          .set("model", model)
          .set("usage", Value::object().set("prompt_tokens", prompt_tokens).set("total_tokens", prompt_tokens)));
}

std::vector<size_t> rerank_order(const std::vector<float>& scores, size_t top_n) {
  std::vector<size_t> order(scores.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return scores[a] > scores[b]; });
  if (top_n > 0 && top_n < order.size()) order.resize(top_n);
  return order;
}

std::string rerank_body(const std::string& model, const RerankRequest& request, const std::vector<float>& scores,
                        size_t prompt_tokens) {
  Value results = Value::array();
  for (const size_t i : rerank_order(scores, request.top_n)) {
    Value result = Value::object().set("index", i).set("relevance_score", static_cast<double>(scores[i]));
    if (request.return_documents) result.set("document", Value::object().set("text", request.documents[i]));
    results.push(std::move(result));
  }
  return peak::json::write(
      Value::object()
          .set("model", model)
          .set("object", "list")
          .set("usage", Value::object().set("prompt_tokens", prompt_tokens).set("total_tokens", prompt_tokens))
          .set("results", std::move(results)));
}

std::string error_body(int status, const std::string& message, const std::string& param) {
  return peak::json::write(Value::object().set("error", Value::object()
                                                            .set("message", message)
                                                            .set("type", error_type(status))
                                                            .set("param", param.empty() ? Value() : Value(param))
                                                            .set("code", status)));
}

std::string error_event(int status, const std::string& message, const std::string& param) {
  return data_event(error_body(status, message, param));
}

}  // namespace peak_server
