// Calls sampled under tool_choice "required" (tool_call_grammar.h) on a real
// model (stories260K) and on a synthetic one, at temperature 1: every answer
// must end with its grammar, parse (tool_call.h) into calls of the request's
// tools only, and each call's arguments must satisfy its tool's `parameters`
// schema, judged by the tests' own validator
// (tests/sampling/json_schema_validator.h).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "chat/session_tools.h"
#include "chat/tool_call.h"
#include "chat/tool_call_grammar.h"
#include "json/json.h"
#include "json_schema_validator.h"
#include "model/model.h"
#include "model/synth.h"
#include "runtime/context.h"
#include "runtime/generator.h"
#include "tiny_models.h"

namespace peak::chat {
namespace {

constexpr int32_t kBos = 1;  // of stories260K and of the synthetic vocabulary

// Arguments bounded by lengths, ranges and enums, so that every call completes
// within kCallTokens even at one byte per token.
const char* const kTools = R"([
  {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object",
    "properties": {"city": {"type": "string", "minLength": 1, "maxLength": 6},
                   "unit": {"enum": ["c", "f"]}}, "required": ["city"]}}},
  {"type": "function", "function": {"name": "set_alarm", "parameters": {"type": "object",
    "properties": {"hour": {"type": "integer", "minimum": 0, "maximum": 23},
                   "minute": {"type": "integer", "minimum": 0, "maximum": 59},
                   "days": {"type": "array", "items": {"enum": ["mon", "sat"]}, "maxItems": 2}},
    "required": ["hour", "minute"]}}},
  {"type": "function", "function": {"name": "stop_music", "parameters": {"type": "object", "properties": {}}}}
])";
constexpr int kSamplesPerModel = 100;
constexpr int32_t kCallTokens = 900;

json::Value parsed_json(const std::string& text) {
  json::Value value;
  std::string error;
  if (!json::parse(text, &value, &error)) ADD_FAILURE() << "not JSON: " << text << ": " << error;
  return value;
}

const json::Value* parameters_of(const json::Value& tools, const std::string& name) {
  for (const json::Value& tool : tools.items()) {
    const json::Value& function = *tool.find("function");
    if (function.find("name")->as_string() == name) return function.find("parameters");
  }
  return nullptr;
}

// Samples kSamplesPerModel answers, alternating the formats and whether
// parallel calls are allowed; half from the whole distribution, half after the
// default top-k, top-p and min-p.
void sample_calls(const model::Model& m) {
  const json::Value tools = parsed_json(kTools);
  runtime::ContextParams cp;
  cp.n_ctx = 1024;
  cp.n_threads = 1;
  runtime::Context ctx(m, cp);
  const char* const formats[] = {"generic", "hermes", "mistral", "llama3-json"};
  for (int seed = 0; seed < kSamplesPerModel; ++seed) {
    const ToolCallFormat& format = tool_call_format(formats[seed % 4]);
    const bool parallel = seed % 3 != 0;
    // Up to three calls: these models never end a turn of their own accord.
    const ToolCallGrammar calls = tool_call_grammar(format, tools, {ToolChoice::Mode::Required, "", parallel, 3});
    sampling::SamplerParams p;
    p.temperature = 1.0f;
    p.seed = static_cast<uint64_t>(seed);
    p.grammar = calls.grammar;
    if (seed % 2 == 0) {
      p.top_k = 0;
      p.top_p = 1.0f;
      p.min_p = 0.0f;
    }
    ctx.kv().clear();
    sampling::SamplerChain sampler(static_cast<int32_t>(m.hparams().n_vocab), p, m.grammar_vocabulary());
    std::string text;
    runtime::GenerateOptions o;
    o.max_tokens = kCallTokens;
    o.on_text = [&text](const std::string& piece) {
      text += piece;
      return true;
    };
    const runtime::GenerateResult r = runtime::generate(ctx, sampler, {kBos}, o);
    SCOPED_TRACE(std::string(format.name) + ", seed " + std::to_string(seed) + ": " + text);
    EXPECT_TRUE(r.reason == runtime::StopReason::GrammarEnd || r.reason == runtime::StopReason::EndOfGeneration)
        << static_cast<int>(r.reason);
    const ParsedResponse parsed = parse_response(format, text);
    EXPECT_EQ(parsed.content, "");
    ASSERT_FALSE(parsed.tool_calls.empty());
    EXPECT_LE(parsed.tool_calls.size(), parallel ? 3u : 1u);
    for (const ToolCall& call : parsed.tool_calls) {
      const json::Value* schema = parameters_of(tools, call.name);
      ASSERT_NE(schema, nullptr) << call.name;
      std::string why;
      EXPECT_TRUE(sampling::testing::schema_accepts(*schema, parsed_json(call.arguments), &why)) << why;
    }
  }
}

TEST(ToolCallGeneration, EveryRequiredCallOfStories260KValidates) {
  const auto m = model::Model::load(test::stories_path());
  sample_calls(*m);
}

TEST(ToolCallGeneration, EveryRequiredCallOfASyntheticModelValidates) {
  // Random weights over a SentencePiece vocabulary: the 256 byte tokens spell
  // any call, and the near-uniform logits pick tokens a trained model would not.
  const std::string path = test::test_temp_path("tool_calls_synth.gguf");
  model::write_synth_model(model::SynthSpec{}, model::SynthOptions{}, path);
  const auto m = model::Model::load(path);
  sample_calls(*m);
  std::remove(path.c_str());
}

// A format whose marker is one control token of the vocabulary: the session
// preserves it (it writes its text for the parser, and the grammar may take
// it); markers the vocabulary spells with text tokens preserve nothing.
TEST(ToolCallGeneration, ASessionPreservesTheFormatsMarkerTokens) {
  const int32_t marker = 300;
  const auto m = model::Model::load(test::stories_with_control_token(marker, "<|tool_call|>"));
  SessionSettings s;
  s.template_name = "chatml";
  s.tools = kTools;
  s.tool_choice = ToolChoiceMode::Required;
  for (const char* format : {"granite", "phi4"}) {
    s.tool_call_format = format;
    EXPECT_EQ(session_tools(*m, s).preserved_tokens, std::vector<int32_t>{marker}) << format;
  }
  s.tool_call_format = "hermes";
  EXPECT_TRUE(session_tools(*m, s).preserved_tokens.empty());
  s.tool_call_format = "granite";
  const auto plain = model::Model::load(test::stories_path());
  EXPECT_TRUE(session_tools(*plain, s).preserved_tokens.empty());
}

}  // namespace
}  // namespace peak::chat
