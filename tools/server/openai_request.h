// The bodies of OpenAI's chat, completion and embedding requests, the rerank
// request (llama.cpp's /v1/rerank, Jina's and Cohere's shape) and llama.cpp's
// /tokenize and /detokenize, read from JSON into checked structs. A field of
// the wrong type or out of range is a RequestError naming it, which the routes
// answer with 400 and OpenAI's error object ("param": the field), as is a
// grammar or JSON Schema the C API cannot use (its message). Fields this
// server does not use (logprobs, user ...) are ignored, as llama.cpp's
// server ignores them, so that clients sending them still work. Pictures in
// user messages come as OpenAI's image_url parts holding data URLs, decoded
// from base64 here; the server never fetches a URL.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "json/json.h"
#include "peak/peak.h"

namespace peak_server {

class RequestError : public std::runtime_error {
 public:
  RequestError(const std::string& message, std::string field) : std::runtime_error(message), param(std::move(field)) {}
  std::string param;  // the field, e.g. "messages[2].role"; "" for the body itself
};

// A tool call of an assistant message in the history (OpenAI's
// messages[i].tool_calls[j]).
struct ChatToolCall {
  std::string id, name;
  std::string arguments;  // JSON text, as the client sent it
  bool operator==(const ChatToolCall& o) const { return id == o.id && name == o.name && arguments == o.arguments; }
};

// The text that holds an image's place in a message's content: the library's
// image marker, the same string as llama.cpp's (mtmd's default marker) and as
// the one `peak run --image` reads in a prompt (tools/image_prompt.h).
constexpr char kImageMarker[] = "<__media__>";

struct EncodedImage;  // image_cache.h

struct ChatMessage {
  peak_role role = PEAK_ROLE_USER;  // user, assistant or tool ("system" is ChatRequest::system)
  std::string content;              // the text parts joined, a kImageMarker where each image part was
  // A user message's pictures, one per marker in `content`, in order: the
  // bytes of a PNG or JPEG file (checked by their first bytes only; the
  // library decodes them).
  std::vector<std::string> images;
  std::vector<std::string> image_fields;  // where each came: its URL's field ("messages[1].content[0].image_url.url")
  // Each picture as the model reads it, filled by the server (Server::chat)
  // before the message enters a session.
  std::vector<std::shared_ptr<const EncodedImage>> encoded;
  std::vector<ChatToolCall> tool_calls;  // an assistant's calls
  std::string tool_call_id;              // a tool result's call
};

// OpenAI's `tools`, `tool_choice` and `parallel_tool_calls`.
struct ChatTools {
  std::string json;  // the tools array as JSON text; "" for none (absent or [])
  peak_tool_choice choice = PEAK_TOOL_CHOICE_AUTO;
  std::string function;  // the function tool_choice names (choice FUNCTION)
  bool parallel = true;
};

// The grammar the generated text must be a whole string of: OpenAI's
// `response_format` (json_object, json_schema) or llama.cpp's `grammar` or
// `json_schema`, checked through the C API while the request is read.
struct TextConstraint {
  std::string field;         // where the request gave it, e.g. "grammar", "response_format.json_schema.schema"
  bool json_schema = false;  // `text` is a JSON Schema (JSON text); else GBNF from the rule "root"
  std::string text;
};

// Sampling and length settings common to both kinds of request; unset fields
// keep the server's defaults (its command-line options).
struct GenerationRequest {
  std::optional<double> temperature, top_p, min_p, presence_penalty, frequency_penalty, repeat_penalty;
  std::optional<int64_t> top_k, seed, max_tokens;
  std::vector<std::string> stop;  // at most kMaxStops, none empty
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage
  std::optional<TextConstraint> constraint;

  // The server's sampler settings with this request's changes (pointing into
  // `constraint`: valid while this request is).
  peak_sampler_params sampler(const peak_sampler_params& defaults) const;
};

struct ChatRequest : GenerationRequest {
  std::optional<std::string> system;  // a leading "system" (or "developer") message
  // user and assistant alternating, an assistant's tool calls followed by
  // their results (tool), ending with a user message or tool results
  std::vector<ChatMessage> messages;
  ChatTools tools;
  std::string conversation;           // the `conversation` extension; "" when not given
};

struct CompletionRequest : GenerationRequest {
  std::string prompt;
};

struct TokenizeRequest {
  std::string content;
  bool add_special = false;
  bool with_pieces = false;
};

// OpenAI's embeddings request. `input` is a string, a list of strings, a list
// of token ids (one input) or a list of such lists; exactly one of `texts`
// and `token_lists` is filled, in the order given.
struct EmbeddingRequest {
  std::vector<std::string> texts;                 // none empty
  std::vector<std::vector<int32_t>> token_lists;  // none empty, every id in the vocabulary
  bool base64 = false;                            // encoding_format "base64"; "float" (default) else
  size_t dimensions = 0;                          // 1..n_embd; 0: not given (all n_embd)
  bool single = false;  // one input (a string, or one list of ids): errors name "input", not "input[i]"
};

// The rerank request of llama.cpp's /v1/rerank, Jina's and Cohere's APIs:
// {"model"?, "query", "documents": [string or {"text": string}], "top_n"?,
// "return_documents"?}.
struct RerankRequest {
  std::string query;                   // not empty
  std::vector<std::string> documents;  // 1 to kMaxRerankDocuments, none empty
  size_t top_n = 0;                    // the best top_n only (at least 1); 0: not given (all)
  bool return_documents = true;        // each result's document.text (Jina's default; Cohere's v1 is false)
};

constexpr size_t kMaxStops = 16;
// Inputs in one embeddings request, as OpenAI's API allows.
constexpr size_t kMaxEmbeddingInputs = 2048;
// Documents in one rerank request: Cohere's stated most per request.
constexpr size_t kMaxRerankDocuments = 1000;
constexpr size_t kMaxConversationIdBytes = 128;
// A picture's bytes, decoded from its data URL, and a request's pictures in
// all. The body's own bounds come first: the HTTP body's (--max-body-bytes, 8
// MiB by default), and the JSON text's 64 MiB (peak::json::ParseLimits), in
// which base64 holds 48 MiB at most.
constexpr size_t kMaxImageBytes = size_t{32} << 20;
constexpr size_t kMaxRequestImageBytes = size_t{40} << 20;

// Each throws RequestError on a body that is not what the route takes.
ChatRequest parse_chat_request(const peak::json::Value& body);
CompletionRequest parse_completion_request(const peak::json::Value& body);
TokenizeRequest parse_tokenize_request(const peak::json::Value& body);
std::vector<int32_t> parse_detokenize_request(const peak::json::Value& body, size_t n_vocab);
EmbeddingRequest parse_embedding_request(const peak::json::Value& body, size_t n_vocab, size_t n_embd);
RerankRequest parse_rerank_request(const peak::json::Value& body);

}  // namespace peak_server
