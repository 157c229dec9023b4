// ChatTemplate::format: one renderer per family, each following llama.cpp's
// llm_chat_apply_template (src/llama-chat.cpp) so prompts match what llama.cpp
// feeds the same model.
#include <stdexcept>
#include <string>

#include "chat/chat_template.h"

namespace peak::chat {

namespace {

std::string_view trimmed(std::string_view text) {
  constexpr std::string_view kSpace = " \t\n\v\f\r";
  const size_t first = text.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(kSpace) - first + 1);
}

void check_roles(const std::vector<ChatMessage>& messages) {
  for (const ChatMessage& m : messages) {
    if (m.role != "system" && m.role != "user" && m.role != "assistant" && m.role != "tool") {
      throw std::invalid_argument("chat template: unknown role '" + m.role +
                                  "' (expected system, user, assistant or tool)");
    }
  }
}

// llama.cpp's built-in formatter knows messages of a role and a text only: its
// ChatML writes a tool result as a turn of role "tool"; the other families would
// write it as a role the model never saw, and no family has a prompt for tool
// definitions or calls, so those need the model's own template.
void check_built_in_can_render(ChatTemplateFamily family, std::string_view name,
                               const std::vector<ChatMessage>& messages, const FormatOptions& options) {
  const auto refuse = [&](const std::string& what) {
    throw std::invalid_argument("chat template " + std::string(name) + ": " + what +
                                " cannot be rendered by this built-in template; use the model's own chat template");
  };
  if (options.tools) refuse("tools");
  for (const ChatMessage& m : messages) {
    if (!m.tool_calls.empty()) refuse("an assistant message with tool_calls");
    if (m.role == "tool" && family != ChatTemplateFamily::ChatML) refuse("a tool message");
  }
}

// A null content (an assistant message that only calls tools) is empty text here.
const std::string& text_of(const ChatMessage& m) {
  static const std::string kNone;
  return m.content ? *m.content : kNone;
}

std::string format_chatml(const std::vector<ChatMessage>& messages, bool add_generation_prompt) {
  std::string out;
  for (const ChatMessage& m : messages) out += "<|im_start|>" + m.role + "\n" + text_of(m) + "<|im_end|>\n";
  if (add_generation_prompt) out += "<|im_start|>assistant\n";
  return out;
}

// Llama 2 and its variants: the first [INST] carries the system prompt (inside
// <<SYS>> when the variant has a system role, else as a plain first line).
std::string format_llama2(ChatTemplateFamily family, const std::vector<ChatMessage>& messages) {
  const bool has_system_role = family != ChatTemplateFamily::Llama2;
  const bool bos_before_later_turns = family == ChatTemplateFamily::Llama2SysBos;
  const bool strip = family == ChatTemplateFamily::Llama2SysStrip;
  std::string out;
  bool inside_turn = false;
  bool first_turn = true;
  for (const ChatMessage& m : messages) {
    const std::string_view content = strip ? trimmed(text_of(m)) : std::string_view(text_of(m));
    if (!inside_turn) {
      out += !first_turn && bos_before_later_turns ? "<s>[INST] " : "[INST] ";
      inside_turn = true;
      first_turn = false;
    }
    if (m.role == "system") {
      if (has_system_role) {
        out.append("<<SYS>>\n").append(content).append("\n<</SYS>>\n\n");
      } else {
        out.append(content).append("\n");
      }
    } else if (m.role == "user") {
      out.append(content).append(" [/INST]");
    } else {
      out.append(content).append("</s>");
      inside_turn = false;
    }
  }
  return out;
}

// Mistral v1, v3 and v3-tekken differ only in the spaces around [INST] / [/INST]
// and in whether answers are trimmed; the system prompt opens the first turn.
std::string format_mistral_v1_v3(ChatTemplateFamily family, const std::vector<ChatMessage>& messages) {
  const std::string_view leading_space = family == ChatTemplateFamily::MistralV1 ? " " : "";
  const std::string_view trailing_space = family == ChatTemplateFamily::MistralV3Tekken ? "" : " ";
  const bool trim_answers = family == ChatTemplateFamily::MistralV3;
  std::string out;
  bool inside_turn = false;
  for (const ChatMessage& m : messages) {
    if (!inside_turn) {
      out.append(leading_space).append("[INST]").append(trailing_space);
      inside_turn = true;
    }
    if (m.role == "system") {
      out.append(text_of(m)).append("\n\n");
    } else if (m.role == "user") {
      out.append(text_of(m)).append(leading_space).append("[/INST]");
    } else {
      out.append(trailing_space)
          .append(trim_answers ? trimmed(text_of(m)) : std::string_view(text_of(m)))
          .append("</s>");
      inside_turn = false;
    }
  }
  return out;
}

std::string format_mistral_v7(ChatTemplateFamily family, const std::vector<ChatMessage>& messages) {
  const std::string_view space = family == ChatTemplateFamily::MistralV7 ? " " : "";
  std::string out;
  for (const ChatMessage& m : messages) {
    if (m.role == "system") {
      out.append("[SYSTEM_PROMPT]").append(space).append(text_of(m)).append("[/SYSTEM_PROMPT]");
    } else if (m.role == "user") {
      out.append("[INST]").append(space).append(text_of(m)).append("[/INST]");
    } else {
      out.append(space).append(text_of(m)).append("</s>");
    }
  }
  return out;
}

std::string format_llama3(const std::vector<ChatMessage>& messages, bool add_generation_prompt) {
  std::string out;
  for (const ChatMessage& m : messages) {
    out.append("<|start_header_id|>").append(m.role).append("<|end_header_id|>\n\n");
    out.append(trimmed(text_of(m))).append("<|eot_id|>");
  }
  if (add_generation_prompt) out += "<|start_header_id|>assistant<|end_header_id|>\n\n";
  return out;
}

// Gemma has no system role: the system prompt goes at the top of the next user
// turn, and the assistant is called "model".
std::string format_gemma(const std::vector<ChatMessage>& messages, bool add_generation_prompt) {
  std::string out;
  std::string system_prompt;
  for (const ChatMessage& m : messages) {
    if (m.role == "system") {
      system_prompt.append(trimmed(text_of(m)));
      continue;
    }
    const bool is_model = m.role == "assistant";
    out.append("<start_of_turn>").append(is_model ? "model" : m.role).append("\n");
    if (!system_prompt.empty() && !is_model) {
      out.append(system_prompt).append("\n\n");
      system_prompt.clear();
    }
    out.append(trimmed(text_of(m))).append("<end_of_turn>\n");
  }
  if (add_generation_prompt) out += "<start_of_turn>model\n";
  return out;
}

// Phi-3 and Zephyr share the <|role|>\n layout and differ in what closes a turn.
std::string format_role_tags(std::string_view turn_end, const std::vector<ChatMessage>& messages,
                             bool add_generation_prompt) {
  std::string out;
  for (const ChatMessage& m : messages) {
    out.append("<|").append(m.role).append("|>\n").append(text_of(m)).append(turn_end).append("\n");
  }
  if (add_generation_prompt) out += "<|assistant|>\n";
  return out;
}

}  // namespace

std::string ChatTemplate::format(const std::vector<ChatMessage>& messages, bool add_generation_prompt,
                                 const FormatOptions& options) const {
  check_roles(messages);
  if (family_ != ChatTemplateFamily::Jinja) check_built_in_can_render(family_, name(), messages, options);
  switch (family_) {
    case ChatTemplateFamily::Jinja: return format_jinja(messages, add_generation_prompt, options);
    case ChatTemplateFamily::ChatML: return format_chatml(messages, add_generation_prompt);
    case ChatTemplateFamily::Llama2:
    case ChatTemplateFamily::Llama2Sys:
    case ChatTemplateFamily::Llama2SysBos:
    case ChatTemplateFamily::Llama2SysStrip: return format_llama2(family_, messages);
    case ChatTemplateFamily::Llama3: return format_llama3(messages, add_generation_prompt);
    case ChatTemplateFamily::MistralV1:
    case ChatTemplateFamily::MistralV3:
    case ChatTemplateFamily::MistralV3Tekken: return format_mistral_v1_v3(family_, messages);
    case ChatTemplateFamily::MistralV7:
    case ChatTemplateFamily::MistralV7Tekken: return format_mistral_v7(family_, messages);
    case ChatTemplateFamily::Gemma: return format_gemma(messages, add_generation_prompt);
    case ChatTemplateFamily::Phi3: return format_role_tags("<|end|>", messages, add_generation_prompt);
    case ChatTemplateFamily::Zephyr: return format_role_tags(end_of_sequence_, messages, add_generation_prompt);
  }
  return {};
}

}  // namespace peak::chat
