// Recognising a template family from the Jinja source in the GGUF metadata, by
// the substrings llama.cpp's llm_chat_detect_template looks for, in its order.
// Templates llama.cpp recognises as a family peak does not render (Phi-4,
// ChatGLM, Falcon 3, DeepSeek, Command-R, ...) fall back to ChatML with a warning.
#include <string>
#include <utility>

#include "chat/chat_template.h"
#include "jinja/error.h"

namespace peak::chat {

namespace {

class Source {
 public:
  explicit Source(std::string_view text) : text_(text) {}
  bool has(std::string_view needle) const { return text_.find(needle) != std::string_view::npos; }
  bool starts_with(std::string_view prefix) const { return text_.substr(0, prefix.size()) == prefix; }

 private:
  std::string_view text_;
};

ChatTemplateFamily mistral_or_llama2(const Source& source) {
  if (source.has("[SYSTEM_PROMPT]")) return ChatTemplateFamily::MistralV7;
  // Mistral's official v1 template builds "' [INST] ' + system_message"; v3 and
  // v3-tekken mention [AVAILABLE_TOOLS]. v7-tekken cannot be told from v7 by
  // the template text: choose it by name.
  if (source.has("' [INST] ' + system_message") || source.has("[AVAILABLE_TOOLS]")) {
    if (source.has(" [INST]")) return ChatTemplateFamily::MistralV1;
    if (source.has("\"[INST]\"")) return ChatTemplateFamily::MistralV3Tekken;
    return ChatTemplateFamily::MistralV3;
  }
  if (source.has("content.strip()")) return ChatTemplateFamily::Llama2SysStrip;
  if (source.has("bos_token + '[INST]")) return ChatTemplateFamily::Llama2SysBos;
  if (source.has("<<SYS>>")) return ChatTemplateFamily::Llama2Sys;
  return ChatTemplateFamily::Llama2;
}

DetectedChatTemplate recognised(ChatTemplate chat_template) {
  return {std::move(chat_template), std::string(), TemplateSource::BuiltIn};
}

DetectedChatTemplate fallback(const std::string& reason) {
  return {ChatTemplate(ChatTemplateFamily::ChatML),
          reason + "; using chatml (choose another by name: " + ChatTemplate::known_names_list() + ")",
          TemplateSource::Fallback};
}

}  // namespace

DetectedChatTemplate detect_chat_template(std::string_view jinja_source) {
  if (jinja_source.empty()) return fallback("the model has no tokenizer.chat_template");
  const Source source(jinja_source);
  if (source.has("<|im_start|>")) {
    if (source.has("<|im_sep|>")) return fallback("tokenizer.chat_template is Phi-4's, which peak does not render");
    if (source.has("<end_of_utterance>")) {
      return fallback("tokenizer.chat_template is SmolVLM's, which peak does not render");
    }
    return recognised(ChatTemplate(ChatTemplateFamily::ChatML));
  }
  if (source.starts_with("mistral") || source.has("[INST]")) return recognised(ChatTemplate(mistral_or_llama2(source)));
  if (source.has("<|assistant|>") && source.has("<|end|>")) return recognised(ChatTemplate(ChatTemplateFamily::Phi3));
  // Zephyr closes turns with the end-of-sequence text, which its templates
  // spell out: <|endoftext|> (StableLM 2 Zephyr, llama.cpp's rule) or </s>.
  // llama.cpp reads <|user|> + <|assistant|> + </s> as Falcon 3, which peak does
  // not render; Zephyr's is the nearest layout peak has.
  if (source.has("<|user|>") && !source.has("[gMASK]")) {
    if (source.has("<|endoftext|>")) return recognised(ChatTemplate::zephyr("<|endoftext|>"));
    if (source.has("</s>")) return recognised(ChatTemplate::zephyr("</s>"));
  }
  if (source.has("<start_of_turn>")) return recognised(ChatTemplate(ChatTemplateFamily::Gemma));
  if (source.has("<|start_header_id|>") && source.has("<|end_header_id|>")) {
    return recognised(ChatTemplate(ChatTemplateFamily::Llama3));
  }
  return fallback("tokenizer.chat_template matches no template family peak knows");
}

DetectedChatTemplate choose_chat_template(std::string_view override_name, std::string_view jinja_source,
                                          const std::string& bos_text, const std::string& eos_text) {
  if (!override_name.empty()) return recognised(ChatTemplate::from_name(override_name));
  if (jinja_source.empty()) return detect_chat_template(jinja_source);
  try {
    return {ChatTemplate::from_jinja(jinja_source, bos_text, eos_text), std::string(), TemplateSource::Embedded};
  } catch (const jinja::TemplateError& e) {
    DetectedChatTemplate detected = detect_chat_template(jinja_source);
    const std::string unread = std::string("the model's chat template cannot be read (") + e.what() + ")";
    detected.warning = detected.warning.empty()
                           ? unread + "; using the built-in '" + std::string(detected.chat_template.name()) + "' family"
                           : unread + "; " + detected.warning;
    return detected;
  }
}

}  // namespace peak::chat
