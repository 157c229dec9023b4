// Detection from the real templates of three fixture vocabularies, and from
// template excerpts for the other families: each excerpt is copied from the
// template of the model named beside it, as quoted in llama.cpp's
// tests/test-chat-template.cpp, unless marked as written for this test.
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>

#include "gguf/gguf_reader.h"
#include "chat/chat_template.h"

namespace peak::chat {
namespace {

std::string fixture_template(const std::string& vocab) {
  const auto file = gguf::GgufFile::open(std::string(PEAK_SHARED_DIR) + "/fixtures/vocab/ggml-vocab-" + vocab + ".gguf");
  const auto value = file->find("tokenizer.chat_template");
  if (!value) throw std::runtime_error(vocab + " has no tokenizer.chat_template");
  return std::string(value->str());
}

void expect_detected(std::string_view source, ChatTemplateFamily family) {
  const DetectedChatTemplate detected = detect_chat_template(source);
  EXPECT_EQ(detected.chat_template.family(), family) << detected.chat_template.name();
  EXPECT_EQ(detected.warning, "");
}

TEST(ChatTemplateDetect, RealQwen3TemplateIsChatML) {
  expect_detected(fixture_template("qwen3"), ChatTemplateFamily::ChatML);
}

TEST(ChatTemplateDetect, RealLlama32TemplateIsLlama3) {
  expect_detected(fixture_template("llama-bpe"), ChatTemplateFamily::Llama3);
}

TEST(ChatTemplateDetect, RealPhi3TemplateIsPhi3) {
  expect_detected(fixture_template("phi-3"), ChatTemplateFamily::Phi3);
}

TEST(ChatTemplateDetect, Llama2Variants) {
  // mistralai/Mistral-7B-Instruct-v0.2 (pre-v1): [INST] without <<SYS>>.
  expect_detected("{% if message['role'] == 'user' %}{{ '[INST] ' + message['content'] + ' [/INST]' }}",
                  ChatTemplateFamily::Llama2);
  // TheBloke/FusionNet_34Bx2_MoE-AWQ: BOS before every later [INST].
  expect_detected(
      "{{- bos_token + '[INST] ' + messages[idx]['content'] + ' [/INST]' -}}"
      "{{- '[INST] <<SYS>>\\n' + messages[idx]['content'] + '\\n<</SYS>>\\n\\n' -}}",
      ChatTemplateFamily::Llama2SysBos);
  // bofenghuang/vigogne-2-70b-chat: strips every message.
  expect_detected("{{ '[INST] ' + content.strip() + ' [/INST]' }}{{ '<<SYS>>\\n' + content.strip() }}",
                  ChatTemplateFamily::Llama2SysStrip);
  // Written for this test: <<SYS>> with neither BOS inside nor stripping.
  expect_detected("{{ '[INST] <<SYS>>\\n' + system_message + '\\n<</SYS>>\\n\\n' }}", ChatTemplateFamily::Llama2Sys);
}

TEST(ChatTemplateDetect, MistralVersions) {
  // mistralai 'v1' template.
  expect_detected("{{- ' [INST] ' + system_message + '\\n\\n' + message['content'] + ' [/INST]' }}",
                  ChatTemplateFamily::MistralV1);
  // Mistral-Large-Instruct-2407, 'v3'.
  expect_detected("{{- \"[AVAILABLE_TOOLS] [\" }}{{- \"[INST] \" + message[\"content\"] + \"[/INST]\" }}",
                  ChatTemplateFamily::MistralV3);
  // Mistral-Nemo-Instruct-2407, 'v3-tekken'.
  expect_detected("{{- \"[AVAILABLE_TOOLS][\" }}{{- \"[INST]\" + message[\"content\"] + \"[/INST]\" }}",
                  ChatTemplateFamily::MistralV3Tekken);
  // mistralai/Mistral-Large-Instruct-2411, 'v7'.
  expect_detected("{{ '[INST] ' + message['content'] + '[/INST]' }}{{ '[SYSTEM_PROMPT] ' + message['content'] }}",
                  ChatTemplateFamily::MistralV7);
}

TEST(ChatTemplateDetect, Gemma) {
  // google/gemma-7b-it.
  expect_detected("{{ '<start_of_turn>' + role + '\\n' + message['content'] | trim + '<end_of_turn>\\n' }}",
                  ChatTemplateFamily::Gemma);
}

TEST(ChatTemplateDetect, ZephyrTakesTheEndOfSequenceItSpellsOut) {
  // Written for this test, in the layout of the Zephyr templates.
  const DetectedChatTemplate stablelm = detect_chat_template("{{ '<|user|>\\n' + message['content'] + '<|endoftext|>' }}");
  EXPECT_EQ(stablelm.chat_template.family(), ChatTemplateFamily::Zephyr);
  EXPECT_EQ(stablelm.chat_template.end_of_turn_markers(), (std::vector<std::string>{"<|endoftext|>"}));
  const DetectedChatTemplate mistral_based = detect_chat_template("{{ '<|user|>\\n' + message['content'] + '</s>' }}");
  EXPECT_EQ(mistral_based.chat_template.family(), ChatTemplateFamily::Zephyr);
  EXPECT_EQ(mistral_based.chat_template.end_of_turn_markers(), (std::vector<std::string>{"</s>"}));
  EXPECT_EQ(mistral_based.warning, "");
}

TEST(ChatTemplateDetect, MissingTemplateFallsBackToChatMLWithAWarning) {
  const DetectedChatTemplate detected = detect_chat_template("");
  EXPECT_EQ(detected.chat_template.family(), ChatTemplateFamily::ChatML);
  EXPECT_NE(detected.warning.find("no tokenizer.chat_template"), std::string::npos) << detected.warning;
  EXPECT_NE(detected.warning.find("chatml"), std::string::npos) << detected.warning;
}

TEST(ChatTemplateDetect, UnknownTemplateFallsBackToChatMLWithAWarning) {
  // Written for this test: no family's markers.
  const DetectedChatTemplate detected =
      detect_chat_template("{% for message in messages %}{{ message['role'] + ': ' + message['content'] }}{% endfor %}");
  EXPECT_EQ(detected.chat_template.family(), ChatTemplateFamily::ChatML);
  EXPECT_NE(detected.warning.find("matches no template family"), std::string::npos) << detected.warning;
  EXPECT_NE(detected.warning.find("llama3"), std::string::npos) << "the warning lists the names to choose from";
}

TEST(ChatTemplateDetect, FamiliesPeakDoesNotRenderAreNotMistakenForChatML) {
  // phi-4: ChatML's tags with <|im_sep|>, which ChatML formatting would get wrong.
  const DetectedChatTemplate detected =
      detect_chat_template("{{'<|im_start|>system<|im_sep|>' + message['content'] + '<|im_end|>'}}");
  EXPECT_EQ(detected.chat_template.family(), ChatTemplateFamily::ChatML);
  EXPECT_NE(detected.warning.find("Phi-4"), std::string::npos) << detected.warning;
}

TEST(ChatTemplateChoose, OverrideByNameWins) {
  const DetectedChatTemplate chosen = choose_chat_template("gemma", fixture_template("qwen3"));
  EXPECT_EQ(chosen.chat_template.family(), ChatTemplateFamily::Gemma);
  EXPECT_EQ(chosen.warning, "");
}

TEST(ChatTemplateChoose, EmptyOverrideTakesTheModelsOwnTemplate) {
  for (const char* vocab : {"llama-bpe", "qwen3", "phi-3"}) {
    const DetectedChatTemplate chosen = choose_chat_template("", fixture_template(vocab));
    EXPECT_EQ(chosen.source, TemplateSource::Embedded) << vocab << ": " << chosen.warning;
    EXPECT_EQ(chosen.chat_template.family(), ChatTemplateFamily::Jinja) << vocab;
  }
}

TEST(ChatTemplateChoose, UnknownNameIsRefusedWithTheKnownNames) {
  try {
    choose_chat_template("vicuna", "");
    FAIL() << "accepted an unknown template name";
  } catch (const std::invalid_argument& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("'vicuna'"), std::string::npos) << message;
    for (std::string_view name : ChatTemplate::known_names()) {
      EXPECT_NE(message.find(std::string(name)), std::string::npos) << name << " missing from: " << message;
    }
  }
}

TEST(ChatTemplateChoose, EveryKnownNameRoundTrips) {
  EXPECT_EQ(ChatTemplate::known_names().size(), 14u);
  for (std::string_view name : ChatTemplate::known_names()) EXPECT_EQ(ChatTemplate::from_name(name).name(), name);
}

}  // namespace
}  // namespace peak::chat
