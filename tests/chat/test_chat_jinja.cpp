// A model's own chat template through ChatTemplate: every template x case of
// ../shared/fixtures/templates renders byte for byte as Jinja2 3.1 rendered it
// with Hugging Face's apply_chat_template settings (expected.json), and the
// one the template refuses throws the template's own message.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "chat/chat_template.h"
#include "jinja/error.h"
#include "template_fixtures.h"

namespace peak::chat {
namespace {

using test::fixture_field;

TEST(ChatTemplateJinja, RendersEveryFixtureAsJinja2Does) {
  int renders = 0, refusals = 0;
  for (const jinja::Value& result : test::fixture_renders().items()) {
    const std::string name = fixture_field(result, "template").as_string();
    const std::string case_name = fixture_field(result, "case").as_string();
    const jinja::Value* conversation = test::fixture_case(case_name);
    ASSERT_NE(conversation, nullptr) << case_name;
    std::vector<ChatMessage> messages;
    for (const jinja::Value& m : fixture_field(*conversation, "messages").items()) {
      messages.push_back({fixture_field(m, "role").as_string(), fixture_field(m, "content").as_string()});
    }
    FormatOptions options;
    options.enable_thinking.reset();
    if (const jinja::Value* thinking = conversation->as_dict().find("enable_thinking")) {
      options.enable_thinking = thinking->as_bool();
    }
    options.strftime_now = test::fixture_clock;
    const ChatTemplate chat =
        ChatTemplate::from_jinja(test::fixture_template(name), fixture_field(result, "bos_token").as_string(),
                                 fixture_field(result, "eos_token").as_string());
    const bool generation_prompt = fixture_field(*conversation, "add_generation_prompt").as_bool();
    const jinja::Value& error = fixture_field(result, "error");
    SCOPED_TRACE(name + " x " + case_name);
    if (error.is_none()) {
      EXPECT_EQ(chat.format(messages, generation_prompt, options), fixture_field(result, "output").as_string());
      ++renders;
    } else {
      try {
        chat.format(messages, generation_prompt, options);
        ADD_FAILURE() << "rendered although the template refuses the conversation";
      } catch (const jinja::TemplateRaised& e) {
        EXPECT_EQ(e.message(), error.as_string());
      }
      ++refusals;
    }
  }
  EXPECT_EQ(renders + refusals, 78);
  EXPECT_EQ(refusals, 1);
}

TEST(ChatTemplateJinja, FoldsTheSystemTextIntoTheFirstUserTurnWhenAsked) {
  const ChatTemplate gemma =
      ChatTemplate::from_jinja(test::fixture_template("google-gemma-2-2b-it"), "<bos>", "<eos>");
  const std::vector<ChatMessage> messages = {{"system", "Be brief."}, {"user", "Hello!"}};
  EXPECT_THROW(gemma.format(messages, true), jinja::TemplateRaised);
  FormatOptions fold;
  fold.fold_system = true;
  // As Gemma's template renders the user message "Be brief.\n\nHello!".
  EXPECT_EQ(gemma.format(messages, true, fold), gemma.format({{"user", "Be brief.\n\nHello!"}}, true));
  EXPECT_EQ(gemma.format({{"system", "Be brief."}}, false, fold), gemma.format({{"user", "Be brief."}}, false));
}

TEST(ChatTemplateJinja, ChoosesTheModelsOwnTemplateAndSaysWhere) {
  const std::string qwen3 = test::fixture_template("Qwen-Qwen3-0.6B");
  const DetectedChatTemplate own = choose_chat_template("", qwen3, "", "<|im_end|>");
  EXPECT_EQ(own.source, TemplateSource::Embedded);
  EXPECT_EQ(own.chat_template.name(), "jinja");
  EXPECT_TRUE(own.warning.empty());
  const DetectedChatTemplate named = choose_chat_template("chatml", qwen3);
  EXPECT_EQ(named.source, TemplateSource::BuiltIn);
  // A template the interpreter cannot read: the family recognised in it, saying why.
  const DetectedChatTemplate unread = choose_chat_template("", "<|im_start|>{% frobnicate %}");
  EXPECT_EQ(unread.source, TemplateSource::BuiltIn);
  EXPECT_EQ(unread.chat_template.name(), "chatml");
  EXPECT_NE(unread.warning.find("cannot be read"), std::string::npos) << unread.warning;
  const DetectedChatTemplate none = choose_chat_template("", "");
  EXPECT_EQ(none.source, TemplateSource::Fallback);
}

// The interpreter's errors say they are about the chat template; the
// template's own raise_exception stays its message.
TEST(ChatTemplateJinja, ErrorsNameTheChatTemplate) {
  const ChatTemplate flood =
      ChatTemplate::from_jinja("{% for i in range(100000) %}{{ 'x' * 1000 }}{% endfor %}", "<s>", "</s>");
  try {
    flood.format({{"user", "Hi"}}, true);
    ADD_FAILURE() << "an output of 100 MB was rendered";
  } catch (const jinja::TemplateError& e) {  // PEAK_ERR_TEMPLATE at the C API
    EXPECT_EQ(std::string(e.what()).rfind("the chat template: line 1", 0), 0u) << e.what();
    EXPECT_NE(std::string(e.what()).find("the output exceeds"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace peak::chat
