// How a session writes its conversation as tokens: the chat template, the
// model's tokenizer and the render settings, all fixed at construction.
//
// Every method is const and reads only what construction set (the tokenizer
// is immutable, and a template renders without changing itself: a Jinja
// template's body is shared and const), so one encoder serves the session and
// its summary worker at once: they share it as a std::shared_ptr<const TurnEncoder>.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/model.h"
#include "chat/chat_template.h"
#include "chat/conversation_images.h"

namespace peak::chat {

class TurnEncoder {
 public:
  // `template_name`: "" the model's own, "raw" no template (plain text), else
  // a family's name (std::invalid_argument for an unknown one, from
  // chat_template_for). `enable_thinking`: see SessionSettings. `tools`:
  // OpenAI's tools array as JSON text, written into the Prefix (nullopt: none);
  // std::invalid_argument without a template (raw), and when the template
  // writes them nowhere before the conversation (it may put them into the
  // first user message) unless `tools_as_text` allows the generic format's
  // text (tools_as_text.h) in their place: the tools then go into the system
  // prompt, and calls and results into texts the template renders.
  // A message's images (ChatMessage::images) enter each at its marker: for
  // each frame, the text before it (control tokens parsed) and the
  // image_token()s of its rows, then the text after the last.
  TurnEncoder(const model::Model& model, const std::string& template_name, bool enable_thinking,
              std::optional<std::string> tools = std::nullopt, bool tools_as_text = false);

  const ChatTemplate& chat_template() const { return chat_; }
  bool raw() const { return raw_; }
  // Whether the output of a generation prompt starts inside the reasoning
  // block (DeepSeek-R1's prompt opens it).
  bool generation_opens_reasoning() const { return generation_opens_reasoning_; }

  // The Prefix: BOS and what the template writes for `system_prompt` (or for
  // no message at all when it is empty).
  std::vector<int32_t> prefix(const std::string& system_prompt) const;
  // A user message with the header that opens its answer (its images at their markers).
  std::vector<int32_t> user_segment(const std::string& text, const ImageList& images = {}) const;
  // A finished turn as later prompts show it.
  std::vector<int32_t> history_tokens(const std::string& user_text, const std::string& answer) const;
  // Messages as later prompts show them (followed by more).
  std::vector<int32_t> history_tokens(const std::vector<ChatMessage>& messages) const;
  // An exchange goes on after an answer with tool calls: `context` is the
  // exchange so far (its user message, then answers and tool results), already
  // in the cells as history_tokens() writes it. The tokens that follow it for
  // `prompt` (tool results) and the header that opens the next answer; and for
  // `messages` as later prompts show them. Templates render tool results by
  // what surrounds them (Qwen3 groups consecutive ones in one user turn), so
  // each is the render of the whole exchange less the context's tokens;
  // std::runtime_error when a template renders the context otherwise once
  // something follows it.
  std::vector<int32_t> prompt_after(const std::vector<ChatMessage>& context,
                                    const std::vector<ChatMessage>& prompt) const;
  std::vector<int32_t> history_after(const std::vector<ChatMessage>& context,
                                     const std::vector<ChatMessage>& messages) const;
  // The Summary segment for `summary`, framed as a system message.
  std::vector<int32_t> summary_segment(const std::string& summary) const;
  // The same as the cells hold it: clipped to `summary_max` tokens.
  std::vector<int32_t> summary_cells(const std::string& summary, int64_t summary_max) const;

 private:
  FormatOptions format_options() const;
  FormatOptions prefix_options() const;  // with the tools
  void check_tools_in_prefix() const;
  // The Prefix's text (its BOS text included).
  std::string prefix_text(const std::string& system_prompt) const;
  // `tokens` less `context`, which must start them.
  static std::vector<int32_t> after_context(std::vector<int32_t> tokens, const std::vector<int32_t>& context);
  // A render of `turn` less what every render starts with (render_base_, else
  // the BOS text the tokenizer adds).
  std::string format_turn(const std::vector<ChatMessage>& turn, bool add_generation_prompt) const;
  // A message's text as written, its images (when it has some) in place of their markers.
  void append_message_text(std::vector<int32_t>& out, const std::string& text, const ImageList& images) const;
  // Its tokens, control tokens parsed in the template's text only.
  std::vector<int32_t> encode_turn(const std::vector<ChatMessage>& turn, bool add_generation_prompt) const;

  const model::Model& model_;
  ChatTemplate chat_;
  bool raw_;
  bool enable_thinking_;
  std::optional<std::string> tools_;  // the Prefix writes them; turns render without them
  bool tools_as_text_ = false;        // the template cannot: tools_as_text.h writes them
  std::string render_base_;           // what the template writes for no messages (BOS text, a dated system block)
  std::string system_role_;           // "system", or "user" when the template has no system role
  bool generation_opens_reasoning_ = false;
};

}  // namespace peak::chat
