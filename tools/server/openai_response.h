// What `peak serve` answers to OpenAI's chat and completion requests, in
// OpenAI's shapes (as llama.cpp's server writes them), for both routes:
//  - whole: {"id","object","created","model","choices":[...],"usage","peak"},
//    the object "chat.completion" or "text_completion";
//  - streamed: server-sent events "data: {...}\n\n" of chunks
//    ("chat.completion.chunk" or "text_completion"), the last one with the
//    finish_reason and the `peak` extension, then "data: [DONE]\n\n";
//  - errors: OpenAI's error object, as the body or as a stream's last event.
// Each event is one string: the routes write them one at a time, so that a
// client gone mid-stream stops the writing at the next event.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "json/json.h"
#include "openai_request.h"
#include "peak/peak.h"

namespace peak_server {

enum class Endpoint { Chat, Completion };

// What every response and chunk of one request repeats.
struct ResponseHead {
  Endpoint endpoint;
  std::string id;   // "chatcmpl-..." or "cmpl-..."
  int64_t created;  // Unix seconds
  std::string model;
};

// How a generation that succeeded ended.
struct ResponseEnd {
  const char* finish_reason;  // finish_reason(), "length" or "tool_calls"
  size_t prompt_tokens;
  size_t completion_tokens;
  peak::json::Value extension;  // the `peak` member: slot, prompt_tokens_evaluated, ...
};

// OpenAI's finish_reason for how peak stopped: "stop" at the end of the turn
// or a stop string, "length" at max_tokens.
const char* finish_reason(peak_stop_reason reason, bool stop_string);

// OpenAI's assistant message: content (null when the answer is only calls),
// reasoning_content (when there is any) and tool_calls (when there are any).
peak::json::Value assistant_message(const std::string& content, const std::string& reasoning,
                                    const std::vector<ChatToolCall>& tool_calls);

// The whole response: the answer text, and for chat its reasoning apart
// (message.reasoning_content, when there is any) and its tool calls
// (message.tool_calls; content null when the answer is only calls).
std::string response_body(const ResponseHead& head, const ResponseEnd& end, const std::string& content,
                          const std::string& reasoning, const std::vector<ChatToolCall>& tool_calls = {});

// The events a stream starts with (chat: the assistant's role).
std::vector<std::string> opening_events(const ResponseHead& head);
// One event of new answer text and new reasoning text (chat:
// delta.content and delta.reasoning_content; completion: text alone).
std::string text_event(const ResponseHead& head, const std::string& content, const std::string& reasoning);
// A chat answer's call `index` as OpenAI streams it: a chunk opening it
// (delta.tool_calls[0]: index, id, type "function", function.name and
// arguments ""), then one with its arguments.
std::vector<std::string> tool_call_events(const ResponseHead& head, size_t index, const ChatToolCall& call);
// The events after the text: the finish_reason, and the usage when asked
// (stream_options.include_usage), "[DONE]" not included.
std::vector<std::string> closing_events(const ResponseHead& head, const ResponseEnd& end, bool include_usage);
// The event that ends every stream.
extern const char kDoneEvent[];  // "data: [DONE]\n\n"

// OpenAI's embeddings response: {"object":"list","data":[{"object":
// "embedding","index":i,"embedding":...}],"model","usage":{"prompt_tokens",
// "total_tokens"}}, `floats` holding the vectors one after another,
// `dimensions` floats each; an embedding is an array of numbers, or with
// `base64` the string base64_floats gives.
std::string embeddings_body(const std::string& model, const std::vector<float>& floats, size_t dimensions, bool base64,
                            size_t prompt_tokens);
// n floats as little-endian IEEE float32 bytes, in base64 (base64_encode):
// OpenAI's encoding_format "base64", which its clients decode as a
// Float32Array.
std::string base64_floats(const float* floats, size_t n);

// The documents of a rerank request by score, best first (equal scores in the
// order given), the best top_n only (0: all): their indices.
std::vector<size_t> rerank_order(const std::vector<float>& scores, size_t top_n);
// The rerank response of llama.cpp's /v1/rerank (Jina's shape): {"model",
// "object":"list","usage":{"prompt_tokens","total_tokens"},"results":[{"index",
// "relevance_score","document":{"text"}}]}, the results in rerank_order, each
// document's text when request.return_documents; scores[i] is document i's.
std::string rerank_body(const std::string& model, const RerankRequest& request, const std::vector<float>& scores,
                        size_t prompt_tokens);

// OpenAI's error object: {"error":{"message","type","param","code"}}.
std::string error_body(int status, const std::string& message, const std::string& param = "");
// The error as a stream's event, for errors after the stream began.
std::string error_event(int status, const std::string& message, const std::string& param = "");

}  // namespace peak_server
