// Chat templates: turning a list of messages into the prompt text a chat model
// was trained on.
//
// A model's own template (the Jinja source in the GGUF `tokenizer.chat_template`)
// is rendered by peak's Jinja interpreter as Hugging Face's apply_chat_template
// renders it, BOS and EOS texts included. Built-in families serve models without
// a template, templates the interpreter cannot read, and a choice by name: each
// renders exactly as llama.cpp's built-in formatter (llm_chat_apply_template)
// and never starts with BOS.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace peak::jinja {
class Template;
}

namespace peak::chat {

struct SessionImage;  // conversation_images.h

// A call of a tool an assistant message makes, as OpenAI's API writes it
// ({"id", "type": "function", "function": {"name", "arguments"}}).
struct ToolCall {
  std::optional<std::string> id;  // nullopt: the call has none (the template sees no `id`)
  std::string name;
  // The arguments as JSON text, as OpenAI's API carries them. Templates read
  // them as a mapping (`arguments | tojson`, `arguments.items()`), the dict
  // Hugging Face's documentation asks for; so text that is a JSON object reaches
  // the template as that object (as llama.cpp does for templates that need one),
  // anything else as the text itself.
  std::string arguments;
};

// A message as Hugging Face's apply_chat_template takes it: the template sees
// `role` and `content`, and each optional field below only when it is set.
struct ChatMessage {
  std::string role;  // "system", "user", "assistant" or "tool"
  // nullopt: None, as for OpenAI's null content of an assistant message that
  // only calls tools (templates test `message.content is none`).
  std::optional<std::string> content;
  // Given defaults, so {role, content} initialises a message of text alone.
  std::vector<ToolCall> tool_calls = {};         // assistant; empty: no `tool_calls` key
  std::optional<std::string> tool_call_id = {};  // tool: the call this result answers
  std::optional<std::string> name = {};          // tool: the tool's name (OpenAI: any role's author name)
  // user: the pictures its content shows, one at each kImageMarker in order
  // (conversation_images.h). Templates see the marker as text; a session's
  // turn encoder puts the image's framing and tokens in its place.
  std::vector<std::shared_ptr<const SessionImage>> images = {};
};

struct FormatOptions {
  // Thinking models whose template reads `enable_thinking` (Qwen3, SmolLM3):
  // off, the generation prompt tells the model to answer without reasoning.
  // nullopt: not passed to the template, which then does what it does by default.
  std::optional<bool> enable_thinking = false;
  // When the template refuses a system message (Gemma 2 raises), its text goes
  // at the start of the first user message instead, separated by a blank line,
  // as Gemma 3's own template does; otherwise the template's error is thrown.
  bool fold_system = false;
  // What a Jinja template's strftime_now(format) returns; empty: the local time.
  std::function<std::string(const std::string& format)> strftime_now;
  // OpenAI's tools array as JSON text ([{"type": "function", "function":
  // {"name", "description", "parameters"}}], checked by tools_from_json),
  // passed to a Jinja template as `tools` as Python's json.loads reads it;
  // nullopt: `tools` is not defined. Kept as text so the template sees the
  // numbers as written (1.0 stays a float, which peak::json does not record).
  std::optional<std::string> tools;
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
  Jinja,            // the model's own template, rendered by the Jinja interpreter
};

class ChatTemplate {
 public:
  // Zephyr closes turns with <|endoftext|> (as llama.cpp does); see zephyr().
  explicit ChatTemplate(ChatTemplateFamily family);
  // Zephyr closes every turn with the model's end-of-sequence text, which
  // depends on the vocabulary: <|endoftext|> (StableLM 2) or </s> (Mistral based).
  static ChatTemplate zephyr(std::string_view end_of_sequence);
  // A Jinja template (a model's tokenizer.chat_template) and the BOS and EOS
  // texts it may write. Throws jinja::TemplateError when the source cannot be read.
  static ChatTemplate from_jinja(std::string_view source, std::string bos_text, std::string eos_text);

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
  // for a role other than system, user, assistant or tool, and for tools, tool
  // calls or tool messages a built-in family cannot render (only ChatML renders
  // a tool message, as llama.cpp does; tool prompts need the model's own
  // template); a Jinja template throws jinja::TemplateError,
  // jinja::TemplateRaised with the template's own message.
  std::string format(const std::vector<ChatMessage>& messages, bool add_generation_prompt,
                     const FormatOptions& options = {}) const;

  // The text that closes a turn in this family: generation stops when the model
  // writes one of them (or its end-of-sequence token).
  std::vector<std::string> end_of_turn_markers() const;

 private:
  std::string format_jinja(const std::vector<ChatMessage>& messages, bool add_generation_prompt,
                           const FormatOptions& options) const;

  ChatTemplateFamily family_;
  std::string end_of_sequence_;  // Zephyr and Jinja: the model's EOS text
  std::string begin_of_sequence_;  // Jinja: the model's BOS text
  std::shared_ptr<const jinja::Template> jinja_;
};

// Where the template a model is chatted with comes from.
enum class TemplateSource {
  Embedded,  // the model's own tokenizer.chat_template, rendered by the Jinja interpreter
  BuiltIn,   // a built-in family: named, or recognised in a template the interpreter cannot read
  Fallback,  // ChatML: the model has no template peak can use
};
const char* template_source_name(TemplateSource source);  // "embedded", "built-in", "fallback"

struct DetectedChatTemplate {
  ChatTemplate chat_template;
  std::string warning;  // empty when the family was recognised; else why ChatML was chosen
  TemplateSource source = TemplateSource::BuiltIn;
};

// Recognises the family of a `tokenizer.chat_template` (empty when the model has
// none). Unknown or missing templates fall back to ChatML with a warning for the
// caller to show.
DetectedChatTemplate detect_chat_template(std::string_view jinja_source);

// The template a session should use: the one named by `override_name` when it is
// not empty (throws std::invalid_argument for an unknown name), else the model's
// own Jinja template, else (none, or one the interpreter cannot read, with a
// warning saying why) the family detected in it.
DetectedChatTemplate choose_chat_template(std::string_view override_name, std::string_view jinja_source,
                                          const std::string& bos_text = {}, const std::string& eos_text = {});

}  // namespace peak::chat
