// Chat templates: turning a list of messages into the prompt text a chat model
// was trained on, for the common template families, without a Jinja engine.
//
// The family is recognised from the GGUF `tokenizer.chat_template` (a Jinja
// template) by distinctive substrings, as llama.cpp's llm_chat_detect_template
// does, or chosen by name. Each family renders exactly as llama.cpp's built-in
// formatter (llm_chat_apply_template), whose outputs llama.cpp's
// test-chat-template checks against the real templates. The prompt never starts
// with BOS: the tokenizer adds it when the vocabulary asks for it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace peak::chat {

struct ChatMessage {
  std::string role;  // "system", "user" or "assistant"
  std::string content;
};

struct FormatOptions {
  // Thinking models whose template reads `enable_thinking` (Qwen3, SmolLM3):
  // off, the generation prompt tells the model to answer without reasoning.
  bool enable_thinking = false;
  // When the template refuses a system message (Gemma 2 raises), its text goes
  // at the start of the first user message instead, separated by a blank line,
  // as Gemma 3's own template does; otherwise the template's error is thrown.
  bool fold_system = false;
};

enum class ChatTemplateFamily {
  ChatML,           // <|im_start|>role\n...<|im_end|>\n (Qwen, Hermes, ...)
  Llama2,           // [INST] ... [/INST]; a system prompt is glued to the first user turn
  Llama2Sys,        // [INST] <<SYS>>\n...\n<</SYS>>\n\n ... [/INST]
  Llama2SysBos,     // as Llama2Sys, with <s> before every later [INST]
  Llama2SysStrip,   // as Llama2Sys, with every message stripped of surrounding spaces
  Llama3,           // <|start_header_id|>role<|end_header_id|>\n\n...<|eot_id|>
  MistralV1,        // " [INST] ... [/INST]" with spaces around the tags
  MistralV3,        // "[INST] ...[/INST] answer</s>", answers trimmed
  MistralV3Tekken,  // "[INST]...[/INST]answer</s>"
  MistralV7,        // [SYSTEM_PROMPT] ...[/SYSTEM_PROMPT][INST] ...[/INST] answer</s>
  MistralV7Tekken,  // as MistralV7 without the spaces after the tags
  Gemma,            // <start_of_turn>user|model\n...<end_of_turn>\n; no system role
  Phi3,             // <|role|>\n...<|end|>\n
  Zephyr,           // <|role|>\n...<eos>\n
};

class ChatTemplate {
 public:
  // Zephyr closes turns with <|endoftext|> (as llama.cpp does); see zephyr().
  explicit ChatTemplate(ChatTemplateFamily family);
  // Zephyr closes every turn with the model's end-of-sequence text, which
  // depends on the vocabulary: <|endoftext|> (StableLM 2) or </s> (Mistral based).
  static ChatTemplate zephyr(std::string_view end_of_sequence);

  // By llama.cpp's name for the template ("chatml", "llama3", "mistral-v7", ...).
  // Throws std::invalid_argument listing the known names.
  static ChatTemplate from_name(std::string_view name);
  static std::vector<std::string_view> known_names();
  // The known names as one comma-separated list, for messages and help texts.
  static std::string known_names_list();

  ChatTemplateFamily family() const { return family_; }
  std::string_view name() const;

  // The prompt for `messages`. add_generation_prompt appends the header that
  // opens the assistant's turn; families whose user turn already ends with it
  // (Llama 2, Mistral) render the same either way. Throws std::invalid_argument
  // for a role other than system, user or assistant.
  std::string format(const std::vector<ChatMessage>& messages, bool add_generation_prompt,
                     const FormatOptions& options = {}) const;

  // The text that closes a turn in this family: generation stops when the model
  // writes one of them (or its end-of-sequence token).
  std::vector<std::string> end_of_turn_markers() const;

 private:
  ChatTemplateFamily family_;
  std::string end_of_sequence_;  // Zephyr only: the model's EOS text, which closes every turn
};

struct DetectedChatTemplate {
  ChatTemplate chat_template;
  std::string warning;  // empty when the family was recognised; else why ChatML was chosen
};

// Recognises the family of a `tokenizer.chat_template` (empty when the model has
// none). Unknown or missing templates fall back to ChatML with a warning for the
// caller to show.
DetectedChatTemplate detect_chat_template(std::string_view jinja_source);

// The template a session should use: the one named by `override_name` when it is
// not empty (throws std::invalid_argument for an unknown name), else the detected one.
DetectedChatTemplate choose_chat_template(std::string_view override_name, std::string_view jinja_source);

}  // namespace peak::chat
