// Expected prompts come from llama.cpp's tests/test-chat-template.cpp
// (expected_output for the conversation below, add_generation_prompt = true),
// which llama.cpp checks against the real Jinja templates of the named models.
// The two variants llama.cpp has no test case for (llama2-sys, mistral-v7-tekken)
// and Zephyr are worked out by hand from the templates, as noted where they appear.
// The prompt without the generation header is the same text minus the header the
// template's `{% if add_generation_prompt %}` block writes.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "chat/chat_template.h"

namespace peak::chat {
namespace {

// llama.cpp's test conversation: system, user, assistant, user, assistant (with
// surrounding spaces, to show which templates trim), user.
const std::vector<ChatMessage> kConversation = {
    {"system", "You are a helpful assistant"},
    {"user", "Hello"},
    {"assistant", "Hi there"},
    {"user", "Who are you"},
    {"assistant", "   I am an assistant   "},
    {"user", "Another question"},
};

struct FormatCase {
  const char* template_name;
  const char* source;  // the model whose template llama.cpp's expectation comes from
  std::string with_generation_prompt;
  std::string generation_header;  // empty: the user turn already ends with it
};

const FormatCase kCases[] = {
    {"chatml", "teknium/OpenHermes-2.5-Mistral-7B",
     "<|im_start|>system\nYou are a helpful assistant<|im_end|>\n<|im_start|>user\nHello<|im_end|>\n"
     "<|im_start|>assistant\nHi there<|im_end|>\n<|im_start|>user\nWho are you<|im_end|>\n"
     "<|im_start|>assistant\n   I am an assistant   <|im_end|>\n<|im_start|>user\nAnother question<|im_end|>\n"
     "<|im_start|>assistant\n",
     "<|im_start|>assistant\n"},
    {"llama2", "mistralai/Mistral-7B-Instruct-v0.2 (pre-v1, no system role)",
     "[INST] You are a helpful assistant\nHello [/INST]Hi there</s>[INST] Who are you [/INST]   I am an assistant   "
     "</s>[INST] Another question [/INST]",
     ""},
    {"llama2-sys-bos", "TheBloke/FusionNet_34Bx2_MoE-AWQ",
     "[INST] <<SYS>>\nYou are a helpful assistant\n<</SYS>>\n\nHello [/INST]Hi there</s><s>[INST] Who are you "
     "[/INST]   I am an assistant   </s><s>[INST] Another question [/INST]",
     ""},
    {"llama2-sys-strip", "bofenghuang/vigogne-2-70b-chat",
     "[INST] <<SYS>>\nYou are a helpful assistant\n<</SYS>>\n\nHello [/INST]Hi there</s>[INST] Who are you "
     "[/INST]I am an assistant</s>[INST] Another question [/INST]",
     ""},
    // By hand: llama2-sys-bos without the <s> before later turns.
    {"llama2-sys", "by hand",
     "[INST] <<SYS>>\nYou are a helpful assistant\n<</SYS>>\n\nHello [/INST]Hi there</s>[INST] Who are you "
     "[/INST]   I am an assistant   </s>[INST] Another question [/INST]",
     ""},
    {"llama3", "Llama-3",
     "<|start_header_id|>system<|end_header_id|>\n\nYou are a helpful assistant<|eot_id|>"
     "<|start_header_id|>user<|end_header_id|>\n\nHello<|eot_id|>"
     "<|start_header_id|>assistant<|end_header_id|>\n\nHi there<|eot_id|>"
     "<|start_header_id|>user<|end_header_id|>\n\nWho are you<|eot_id|>"
     "<|start_header_id|>assistant<|end_header_id|>\n\nI am an assistant<|eot_id|>"
     "<|start_header_id|>user<|end_header_id|>\n\nAnother question<|eot_id|>"
     "<|start_header_id|>assistant<|end_header_id|>\n\n",
     "<|start_header_id|>assistant<|end_header_id|>\n\n"},
    {"mistral-v1", "mistralai/Mistral-7B-Instruct-v0.2 (mistralai 'v1' template with a system prompt)",
     " [INST] You are a helpful assistant\n\nHello [/INST] Hi there</s> [INST] Who are you [/INST]    I am an "
     "assistant   </s> [INST] Another question [/INST]",
     ""},
    {"mistral-v3", "Mistral-Large-Instruct-2407 (mistralai 'v3' template)",
     "[INST] You are a helpful assistant\n\nHello[/INST] Hi there</s>[INST] Who are you[/INST] I am an "
     "assistant</s>[INST] Another question[/INST]",
     ""},
    {"mistral-v3-tekken", "Mistral-Nemo-Instruct-2407 (mistralai 'v3-tekken' template)",
     "[INST]You are a helpful assistant\n\nHello[/INST]Hi there</s>[INST]Who are you[/INST]   I am an assistant   "
     "</s>[INST]Another question[/INST]",
     ""},
    {"mistral-v7", "mistralai/Mistral-Large-Instruct-2411 (mistralai 'v7' template)",
     "[SYSTEM_PROMPT] You are a helpful assistant[/SYSTEM_PROMPT][INST] Hello[/INST] Hi there</s>[INST] Who are "
     "you[/INST]    I am an assistant   </s>[INST] Another question[/INST]",
     ""},
    // By hand: Mistral-Small-3.1's v7-tekken template is v7 without the space
    // after each tag.
    {"mistral-v7-tekken", "by hand",
     "[SYSTEM_PROMPT]You are a helpful assistant[/SYSTEM_PROMPT][INST]Hello[/INST]Hi there</s>[INST]Who are "
     "you[/INST]   I am an assistant   </s>[INST]Another question[/INST]",
     ""},
    {"gemma", "google/gemma-7b-it",
     "<start_of_turn>user\nYou are a helpful assistant\n\nHello<end_of_turn>\n<start_of_turn>model\nHi "
     "there<end_of_turn>\n<start_of_turn>user\nWho are you<end_of_turn>\n<start_of_turn>model\nI am an "
     "assistant<end_of_turn>\n<start_of_turn>user\nAnother question<end_of_turn>\n<start_of_turn>model\n",
     "<start_of_turn>model\n"},
    {"phi3", "Phi-3-small",
     "<|system|>\nYou are a helpful assistant<|end|>\n<|user|>\nHello<|end|>\n<|assistant|>\nHi there<|end|>\n"
     "<|user|>\nWho are you<|end|>\n<|assistant|>\n   I am an assistant   <|end|>\n<|user|>\nAnother "
     "question<|end|>\n<|assistant|>\n",
     "<|assistant|>\n"},
    // By hand from stabilityai/stablelm-2-zephyr-1_6b's template ('<|role|>\n' +
    // content + eos_token, then a newline; eos_token is <|endoftext|>) rendered
    // with trim_blocks, as Hugging Face renders chat templates.
    {"zephyr", "by hand",
     "<|system|>\nYou are a helpful assistant<|endoftext|>\n<|user|>\nHello<|endoftext|>\n<|assistant|>\nHi "
     "there<|endoftext|>\n<|user|>\nWho are you<|endoftext|>\n<|assistant|>\n   I am an assistant   "
     "<|endoftext|>\n<|user|>\nAnother question<|endoftext|>\n<|assistant|>\n",
     "<|assistant|>\n"},
};

TEST(ChatTemplateFormat, MatchesLlamaCppExpectations) {
  for (const FormatCase& c : kCases) {
    SCOPED_TRACE(std::string(c.template_name) + " (" + c.source + ")");
    const ChatTemplate chat_template = ChatTemplate::from_name(c.template_name);
    EXPECT_EQ(chat_template.format(kConversation, true), c.with_generation_prompt);
  }
}

TEST(ChatTemplateFormat, WithoutGenerationPromptDropsOnlyTheAssistantHeader) {
  for (const FormatCase& c : kCases) {
    SCOPED_TRACE(c.template_name);
    const std::string& with = c.with_generation_prompt;
    ASSERT_GE(with.size(), c.generation_header.size());
    ASSERT_EQ(with.compare(with.size() - c.generation_header.size(), std::string::npos, c.generation_header), 0);
    const std::string without = with.substr(0, with.size() - c.generation_header.size());
    EXPECT_EQ(ChatTemplate::from_name(c.template_name).format(kConversation, false), without);
  }
}

TEST(ChatTemplateFormat, EveryFamilyHasACase) {
  std::vector<std::string> covered;
  for (const FormatCase& c : kCases) covered.emplace_back(c.template_name);
  for (std::string_view name : ChatTemplate::known_names()) {
    EXPECT_NE(std::find(covered.begin(), covered.end(), std::string(name)), covered.end()) << name;
  }
}

TEST(ChatTemplateFormat, ZephyrClosesTurnsWithTheModelsEndOfSequence) {
  // By hand from HuggingFaceH4/zephyr-7b-beta's template, whose eos_token is </s>.
  const ChatTemplate zephyr = ChatTemplate::zephyr("</s>");
  EXPECT_EQ(zephyr.format({{"user", "Hello"}}, true), "<|user|>\nHello</s>\n<|assistant|>\n");
  EXPECT_EQ(zephyr.end_of_turn_markers(), (std::vector<std::string>{"</s>"}));
}

TEST(ChatTemplateFormat, GemmaSystemPromptWaitsForTheNextUserTurn) {
  // llama.cpp's rule: the system prompt is prepended to the next user turn, never
  // to a model turn.
  const std::string prompt = ChatTemplate(ChatTemplateFamily::Gemma)
                                 .format({{"system", " Be brief. "}, {"assistant", "Hi"}, {"user", "Why?"}}, true);
  EXPECT_EQ(prompt,
            "<start_of_turn>model\nHi<end_of_turn>\n<start_of_turn>user\nBe brief.\n\nWhy?<end_of_turn>\n"
            "<start_of_turn>model\n");
}

TEST(ChatTemplateFormat, EmptyConversationIsJustTheGenerationHeader) {
  EXPECT_EQ(ChatTemplate(ChatTemplateFamily::ChatML).format({}, true), "<|im_start|>assistant\n");
  EXPECT_EQ(ChatTemplate(ChatTemplateFamily::Llama2Sys).format({}, true), "");
}

// "tool" is a role since tool results reach the templates (test_chat_tools.cpp).
TEST(ChatTemplateFormat, RefusesUnknownRoles) {
  try {
    ChatTemplate(ChatTemplateFamily::ChatML).format({{"wizard", "42"}}, true);
    FAIL() << "accepted role 'wizard'";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'wizard'"), std::string::npos) << e.what();
  }
}

TEST(ChatTemplateFormat, EndOfTurnMarkers) {
  const auto markers = [](const char* name) { return ChatTemplate::from_name(name).end_of_turn_markers(); };
  using Markers = std::vector<std::string>;
  EXPECT_EQ(markers("chatml"), Markers{"<|im_end|>"});
  EXPECT_EQ(markers("llama3"), Markers{"<|eot_id|>"});
  EXPECT_EQ(markers("gemma"), Markers{"<end_of_turn>"});
  EXPECT_EQ(markers("phi3"), Markers{"<|end|>"});
  EXPECT_EQ(markers("zephyr"), Markers{"<|endoftext|>"});
  EXPECT_EQ(markers("llama2"), Markers{"</s>"});
  EXPECT_EQ(markers("mistral-v7"), Markers{"</s>"});
}

}  // namespace
}  // namespace peak::chat
