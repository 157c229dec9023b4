#include "chat/chat_template.h"

#include <stdexcept>

namespace peak::chat {

namespace {

struct NamedFamily {
  std::string_view name;  // llama.cpp's name, so --chat-template values carry over
  ChatTemplateFamily family;
};

constexpr NamedFamily kFamilies[] = {
    {"chatml", ChatTemplateFamily::ChatML},
    {"llama2", ChatTemplateFamily::Llama2},
    {"llama2-sys", ChatTemplateFamily::Llama2Sys},
    {"llama2-sys-bos", ChatTemplateFamily::Llama2SysBos},
    {"llama2-sys-strip", ChatTemplateFamily::Llama2SysStrip},
    {"llama3", ChatTemplateFamily::Llama3},
    {"mistral-v1", ChatTemplateFamily::MistralV1},
    {"mistral-v3", ChatTemplateFamily::MistralV3},
    {"mistral-v3-tekken", ChatTemplateFamily::MistralV3Tekken},
    {"mistral-v7", ChatTemplateFamily::MistralV7},
    {"mistral-v7-tekken", ChatTemplateFamily::MistralV7Tekken},
    {"gemma", ChatTemplateFamily::Gemma},
    {"phi3", ChatTemplateFamily::Phi3},
    {"zephyr", ChatTemplateFamily::Zephyr},
};

constexpr std::string_view kZephyrDefaultEndOfSequence = "<|endoftext|>";

}  // namespace

ChatTemplate::ChatTemplate(ChatTemplateFamily family) : family_(family) {
  if (family == ChatTemplateFamily::Zephyr) end_of_sequence_ = kZephyrDefaultEndOfSequence;
}

ChatTemplate ChatTemplate::zephyr(std::string_view end_of_sequence) {
  ChatTemplate result(ChatTemplateFamily::Zephyr);
  result.end_of_sequence_ = end_of_sequence;
  return result;
}

ChatTemplate ChatTemplate::from_name(std::string_view name) {
  for (const NamedFamily& entry : kFamilies) {
    if (entry.name == name) return ChatTemplate(entry.family);
  }
  throw std::invalid_argument("unknown chat template '" + std::string(name) + "'; known templates: " +
                              known_names_list());
}

std::vector<std::string_view> ChatTemplate::known_names() {
  std::vector<std::string_view> names;
  for (const NamedFamily& entry : kFamilies) names.push_back(entry.name);
  return names;
}

std::string ChatTemplate::known_names_list() {
  std::string list;
  for (const NamedFamily& entry : kFamilies) {
    if (!list.empty()) list += ", ";
    list += entry.name;
  }
  return list;
}

std::string_view ChatTemplate::name() const {
  if (family_ == ChatTemplateFamily::Jinja) return "jinja";
  for (const NamedFamily& entry : kFamilies) {
    if (entry.family == family_) return entry.name;
  }
  return "unknown";
}

std::vector<std::string> ChatTemplate::end_of_turn_markers() const {
  switch (family_) {
    case ChatTemplateFamily::ChatML: return {"<|im_end|>"};
    case ChatTemplateFamily::Llama3: return {"<|eot_id|>"};
    case ChatTemplateFamily::Gemma: return {"<end_of_turn>"};
    case ChatTemplateFamily::Phi3: return {"<|end|>"};
    case ChatTemplateFamily::Zephyr:
    case ChatTemplateFamily::Jinja: return {end_of_sequence_};
    case ChatTemplateFamily::Llama2:
    case ChatTemplateFamily::Llama2Sys:
    case ChatTemplateFamily::Llama2SysBos:
    case ChatTemplateFamily::Llama2SysStrip:
    case ChatTemplateFamily::MistralV1:
    case ChatTemplateFamily::MistralV3:
    case ChatTemplateFamily::MistralV3Tekken:
    case ChatTemplateFamily::MistralV7:
    case ChatTemplateFamily::MistralV7Tekken: return {"</s>"};
  }
  return {};
}

}  // namespace peak::chat
