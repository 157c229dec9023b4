// Recognising the tool-call format in the real chat templates of
// ../shared/fixtures/templates, and Phi-4-mini's (tests/data), by the markers
// each renders past calls with (tests/data/jinja_tool_renders.json).
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "chat/tool_call.h"
#include "template_fixtures.h"

namespace peak::chat {
namespace {

TEST(ToolCallDetect, RecognisesEachFixtureTemplate) {
  const struct {
    const char* template_name;
    const char* format;
  } expected[] = {
      {"Qwen-Qwen2.5-7B-Instruct", "hermes"},
      {"Qwen-Qwen3-0.6B", "hermes"},
      {"meta-llama-Llama-3.1-8B-Instruct", "llama3-json"},
      {"meta-llama-Llama-3.2-3B-Instruct", "llama3-json"},
      {"mistralai-Mistral-Nemo-Instruct-2407", "mistral"},
      {"ibm-granite-granite-3.3-2B-Instruct", "granite"},
      {"deepseek-ai-DeepSeek-R1-Distill-Qwen-32B", "deepseek-r1"},
      {"Qwen3.5-4B", "qwen3-xml"},
      {"openbmb-MiniCPM5-1B", "minicpm-xml"},
      // LFM2.5's template lists the tools ("List of tools: ") but renders no
      // calls; its models write Pythonic ones.
      {"LFM2.5-Instruct", "lfm2"},
      // Templates that render no tool calls: the model knows no format.
      {"google-gemma-2-2b-it", "generic"},
      {"microsoft-Phi-3.5-mini-instruct", "generic"},
      // This SmolLM3 template is a variant without SmolLM3's tool section.
      {"HuggingFaceTB-SmolLM3-3B", "generic"},
  };
  for (const auto& item : expected) {
    EXPECT_EQ(detect_tool_call_format(test::fixture_template(item.template_name)).name, item.format)
        << item.template_name;
  }
}

TEST(ToolCallDetect, RecognisesPhi4Mini) {
  const std::string source = test::read_file(std::string(PEAK_TEST_DATA_DIR) + "/phi4_mini_chat_template.jinja");
  EXPECT_EQ(detect_tool_call_format(source).name, "phi4");
}

TEST(ToolCallDetect, NoTemplateIsGeneric) { EXPECT_EQ(detect_tool_call_format("").name, "generic"); }

TEST(ToolCallFormats, ByNameAndUnknownNames) {
  for (const ToolCallFormat& format : tool_call_formats()) {
    EXPECT_EQ(&tool_call_format(format.name), &format);
  }
  try {
    tool_call_format("hermes2");
    FAIL() << "an unknown name was accepted";
  } catch (const std::invalid_argument& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("'hermes2'"), std::string::npos) << message;
    EXPECT_NE(message.find("hermes, llama3-json, mistral"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace peak::chat
