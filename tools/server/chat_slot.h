// One slot of `peak serve`: a chat session (peak_session, SSSKV-lite) and,
// made on the first /v1/completions request it runs, a plain context, both on
// the one shared model. A slot keeps what its last request left in them, so
// that the next request sharing a prefix with it evaluates only the rest:
//  - chat: the session's messages (system prompt, user with its pictures,
//    assistant, tool) and its tools against the request's; a front-end
//    resending the whole history each turn finds the slot holding all of it
//    but the new message. The tools are in the session's Prefix: a request
//    with other tools (or none where the session has some) gets a new session;
//  - completions: the longest common token prefix of the prompts
//    (llama.cpp's cache_prompt).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "openai_request.h"
#include "peak/peak.h"

namespace peak_server {

// A C API call that failed: its status and message.
class PeakError : public std::runtime_error {
 public:
  PeakError(peak_status code, const std::string& message) : std::runtime_error(message), status(code) {}
  peak_status status;
};

// Throws PeakError with peak_last_error() when `status` is not PEAK_OK.
void check(peak_status status);

// The calls of the session's last answer (peak_session_get_tool_call), in order.
std::vector<ChatToolCall> session_tool_calls(const peak_session* session);

struct SlotSettings {
  const peak_model* model = nullptr;
  peak_session_params session = peak_session_default_params();  // system_prompt is per slot
  peak_context_params context = peak_context_default_params();  // n_ctx: the session's
  const peak_adapter_set_params* adapters = nullptr;             // LoRA / control vectors, or nullptr
  // Speculative decoding with a draft model (or nullptr): each slot has its
  // own peak_draft_model on it, a context of the session's size with the
  // session's threads and cache types, in draft_pass_group when given.
  const peak_model* draft_model = nullptr;
  peak_pass_group* draft_pass_group = nullptr;
};

class ChatSlot {
 public:
  explicit ChatSlot(const SlotSettings& settings);
  ~ChatSlot();
  ChatSlot(const ChatSlot&) = delete;
  ChatSlot& operator=(const ChatSlot&) = delete;

  // How many messages of system + history (the request's messages before the
  // one to answer) the session holds already, when everything it holds is a
  // prefix of them and it has these tools (ChatTools::json); -1 when it holds
  // something else (it would be reset, or made anew).
  long long chat_reuse(const std::optional<std::string>& system, const std::string& tools,
                       const std::vector<ChatMessage>& history) const;
  // Makes the session hold exactly system + history with these tools: keeps
  // what it holds when chat_reuse allows, else resets it (another system
  // prompt or other tools: creates it anew), then appends the missing
  // messages. Returns the tokens that evaluated.
  size_t prepare_chat(const std::optional<std::string>& system, const std::string& tools,
                      const std::vector<ChatMessage>& history);
  // Appends messages[from..] to the session (peak_session_append, a user's
  // pictures attached first, an assistant's calls by
  // peak_session_append_tool_calls, a tool result by
  // peak_session_add_tool_result). Returns the tokens that evaluated.
  size_t append(const std::vector<ChatMessage>& messages, size_t from = 0);
  // After a turn: notes the user message it answered (nullptr: it answered
  // tool results) and the calls of the answer it generated (the session's
  // last message), which chat_reuse compares with the next request's history.
  void note_answer(const ChatMessage* user);
  // Attaches a user message's pictures (ChatMessage::encoded) to the
  // session's next user message, in order; on a failure none stays attached
  // (PeakError). append() does this itself; a turn answering `m` calls it
  // right before peak_session_chat, and clear_images() when that fails.
  void attach_images(const ChatMessage& m);
  // Drops the pictures attached: a failed turn leaves them, and the next
  // request's message must not take them.
  void clear_images();
  // The calls of the session's last answer (peak_session_get_tool_call).
  std::vector<ChatToolCall> answer_calls() const { return session_tool_calls(session_); }
  // The session for the turn (valid until the next prepare_chat or restore).
  peak_session* session() { return session_; }
  // Tokens the session's cache holds (Prefix + Summary + Recent).
  size_t cached_tokens() const;
  // Messages no longer in the cache (summarized, or dropped waiting for a summary).
  size_t summarized_messages() const;
  size_t summary_tokens() const;

  // Conversations (the `conversation` extension): a slot holds at most one.
  const std::string& conversation() const { return conversation_; }
  void set_conversation(std::string id) { conversation_ = std::move(id); }
  void save(const std::string& path);
  // Restores a saved conversation (system prompt included) into this slot.
  void restore(const std::string& path, const std::optional<std::string>& system);
  // Forgets everything (a fresh session without a system prompt).
  void clear();

  // Completions: the length of the common prefix of `tokens` and what the
  // context holds.
  size_t completion_reuse(const std::vector<int32_t>& tokens) const;
  // Makes the plain context hold `tokens` (at least one) and their last logits,
  // evaluating only what differs from what it held. Returns the tokens evaluated.
  size_t prepare_completion(const std::vector<int32_t>& tokens);
  // Drops what a generation appended after the prompt, so that the context
  // holds the prompt alone again (what the next request may share).
  void trim_to_prompt();
  peak_context* context() { return context_; }
  size_t n_ctx() const { return n_ctx_; }
  // This slot's draft model (SlotSettings::draft_model), or nullptr.
  peak_draft_model* draft() { return draft_; }

 private:
  void create_session(const std::optional<std::string>& system, const std::string& tools);
  // No message noted beyond what the session holds (a new or reset session).
  void forget_notes();
  void add_message(const ChatMessage& m);

  SlotSettings settings_;
  peak_session* session_ = nullptr;
  std::optional<std::string> system_;  // the session's system prompt
  std::string tools_;                  // the session's tools (JSON text), "" for none
  // By the session's message index: what its text does not show, an
  // assistant's calls, a tool result's call id or a user's pictures (message_note()).
  std::vector<std::string> notes_;
  std::string conversation_;
  size_t n_ctx_ = 0;
  peak_context* context_ = nullptr;
  std::vector<int32_t> context_tokens_;  // what context_ holds
  peak_draft_model* draft_ = nullptr;
};

}  // namespace peak_server
