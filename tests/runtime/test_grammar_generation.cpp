// Grammar-constrained generation on real and synthetic models, judged by what
// we did not write: the model's own unconstrained greedy output (a grammar that
// allows it must not change it), plain string checks of what a grammar
// forbids, and an independent JSON Schema validator
// (tests/sampling/json_schema_validator.h) for every output sampled under a
// schema. Preserved control tokens: stories260K with one of the tokens its
// greedy output writes made a control token named "<|tool_call|>" (type and
// text edited, the weights as they were, so the same tokens come out).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "json/json.h"
#include "json_schema_validator.h"
#include "model/model.h"
#include "model/synth.h"
#include "runtime/generator.h"
#include "sampling/grammar.h"
#include "sampling/json_schema.h"
#include "tiny_models.h"

namespace peak::runtime {
namespace {

constexpr int32_t kBos = 1;  // of stories260K and of the synthetic vocabulary

const model::Model& stories() {
  static const auto m = model::Model::load(test::stories_path());
  return *m;
}

struct Generation {
  std::vector<int32_t> ids;
  std::string text;  // as generate() streams it
  StopReason reason = StopReason::MaxTokens;
};

std::unique_ptr<Context> new_context(const model::Model& m) {
  ContextParams cp;
  cp.n_ctx = 512;
  cp.n_threads = 1;
  return std::make_unique<Context>(m, cp);
}

// Generates from BOS, on the context emptied first.
Generation generate_from_bos(Context& ctx, const sampling::SamplerParams& params, int32_t max_tokens) {
  const model::Model& m = ctx.model();
  ctx.kv().clear();
  const bool reads_vocabulary = params.grammar || !params.preserved_tokens.empty();
  sampling::SamplerChain sampler(static_cast<int32_t>(m.hparams().n_vocab), params,
                                 reads_vocabulary ? m.grammar_vocabulary() : nullptr);
  Generation g;
  GenerateOptions o;
  o.max_tokens = max_tokens;
  o.on_text = [&g](const std::string& text) {
    g.text += text;
    return true;
  };
  const GenerateResult r = generate(ctx, sampler, {kBos}, o);
  g.ids = r.tokens;
  g.reason = r.reason;
  return g;
}

sampling::SamplerParams greedy(const std::string& gbnf = {}) {
  sampling::SamplerParams p;
  p.temperature = 0.0f;
  if (!gbnf.empty()) p.grammar = sampling::Grammar::parse(gbnf);
  return p;
}

// `text` as a GBNF string literal.
std::string gbnf_literal(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '\n') {
      out += "\\n";
    } else {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
  }
  return out + "\"";
}

std::string hex_escape(unsigned char c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\x%02X", c);
  return buf;
}

// A GBNF character class of exactly these bytes (each as \xHH).
std::string gbnf_class(const std::set<unsigned char>& bytes) {
  std::string out = "[";
  for (unsigned char c : bytes) out += hex_escape(c);
  return out + "]";
}

bool printable_or_newline(char c) { return c == '\n' || (c >= 0x20 && c <= 0x7E); }

std::set<unsigned char> printable_bytes() {
  std::set<unsigned char> bytes = {'\n'};
  for (unsigned char c = 0x20; c <= 0x7E; ++c) bytes.insert(c);
  return bytes;
}

constexpr int32_t kGreedyTokens = 64;

const Generation& unconstrained_greedy() {
  static const Generation g = generate_from_bos(*new_context(stories()), greedy(), kGreedyTokens);
  return g;
}

TEST(GrammarGeneration, StoriesGreedyTextIsPlainPrintableText) {
  // What the grammars below are built on: no end of generation within the
  // tokens, printable ASCII and newlines only.
  const Generation& g = unconstrained_greedy();
  ASSERT_EQ(g.reason, StopReason::MaxTokens);
  ASSERT_EQ(g.ids.size(), static_cast<size_t>(kGreedyTokens));
  for (char c : g.text) ASSERT_TRUE(printable_or_newline(c)) << g.text;
}

TEST(GrammarGeneration, AnyPrintableTextLeavesGreedyOutputAsItIs) {
  const Generation& plain = unconstrained_greedy();
  const Generation g = generate_from_bos(*new_context(stories()),
                                         greedy("root ::= " + gbnf_class(printable_bytes()) + "*"), kGreedyTokens);
  EXPECT_EQ(g.ids, plain.ids);
  EXPECT_EQ(g.text, plain.text);
  EXPECT_EQ(g.reason, StopReason::MaxTokens);
}

TEST(GrammarGeneration, TheGreedyTextAsALiteralLeavesItAsItIsAndEndsThere) {
  const Generation& plain = unconstrained_greedy();
  // More tokens allowed than the literal needs: the grammar ends it.
  const Generation g =
      generate_from_bos(*new_context(stories()), greedy("root ::= " + gbnf_literal(plain.text)), 2 * kGreedyTokens);
  EXPECT_EQ(g.ids, plain.ids);
  EXPECT_EQ(g.text, plain.text);
  EXPECT_EQ(g.reason, StopReason::GrammarEnd);
}

TEST(GrammarGeneration, OnlyTheGreedyTextsOwnCharactersLeaveItAsItIs) {
  const Generation& plain = unconstrained_greedy();
  const std::set<unsigned char> used(plain.text.begin(), plain.text.end());
  ASSERT_LT(used.size(), printable_bytes().size());  // a tighter class than the printable one
  const Generation g =
      generate_from_bos(*new_context(stories()), greedy("root ::= " + gbnf_class(used) + "+"), kGreedyTokens);
  EXPECT_EQ(g.ids, plain.ids);
  EXPECT_EQ(g.text, plain.text);
}

TEST(GrammarGeneration, ForbiddingTheGreedyChoiceChangesTheOutputThereAndItObeys) {
  const Generation& plain = unconstrained_greedy();
  const tokenizer::Tokenizer& tok = stories().tokenizer();
  for (size_t k : {size_t{0}, size_t{5}, size_t{17}, size_t{40}}) {
    std::string prefix;
    for (size_t i = 0; i < k; ++i) prefix += tok.token_to_piece(plain.ids[i], false);
    const unsigned char forbidden = static_cast<unsigned char>(tok.token_to_piece(plain.ids[k], false)[0]);
    std::set<unsigned char> next = printable_bytes();
    next.erase(forbidden);
    // The greedy text up to token k, then any printable character but the
    // first one of greedy token k, then printable text.
    const std::string gbnf =
        "root ::= " + gbnf_literal(prefix) + " " + gbnf_class(next) + " " + gbnf_class(printable_bytes()) + "*";
    const Generation g = generate_from_bos(*new_context(stories()), greedy(gbnf), kGreedyTokens);
    SCOPED_TRACE("forbidden first byte of token " + std::to_string(k) + ": " + hex_escape(forbidden));
    ASSERT_EQ(g.ids.size(), static_cast<size_t>(kGreedyTokens));
    EXPECT_EQ(std::vector<int32_t>(g.ids.begin(), g.ids.begin() + static_cast<ptrdiff_t>(k)),
              std::vector<int32_t>(plain.ids.begin(), plain.ids.begin() + static_cast<ptrdiff_t>(k)));
    EXPECT_NE(g.ids[k], plain.ids[k]);
    ASSERT_GT(g.text.size(), prefix.size());
    EXPECT_EQ(g.text.compare(0, prefix.size(), prefix), 0) << g.text;
    EXPECT_NE(static_cast<unsigned char>(g.text[prefix.size()]), forbidden) << g.text;
    for (char c : g.text) EXPECT_TRUE(printable_or_newline(c)) << g.text;
  }
}

// Schemas whose every instance the grammar allows is short (lengths, counts,
// ranges and enums bound them), so that every sample completes within
// kSchemaTokens even at one byte per token: the longest, of the nested object,
// has at most 22 bytes of whitespace at each of its 17 places and about 50
// bytes besides.
const char* const kSchemas[] = {
    R"({"type":"object","properties":{"name":{"type":"string","minLength":1,"maxLength":4},
        "age":{"type":"integer","minimum":0,"maximum":120},"pet":{"enum":["cat","dog","fish"]}},
        "required":["name","age"]})",
    R"({"type":"array","items":{"type":"integer","minimum":-5,"maximum":5},"minItems":1,"maxItems":3})",
    R"({"type":"string","pattern":"^[a-z]{2,4}-[0-9]{1,3}$"})",
    R"({"type":"object","properties":{"point":{"type":"object","properties":{
        "x":{"type":"integer","minimum":0,"maximum":9},"y":{"type":"integer","minimum":-9,"maximum":0}},
        "required":["x","y"]},"tags":{"type":"array","items":{"enum":["a","bc"]},"maxItems":2}},
        "required":["point"]})",
    R"({"anyOf":[{"type":"boolean"},{"type":"null"},{"type":"integer","minimum":10,"maximum":99},
        {"type":"string","maxLength":3},{"const":"done"}]})",
};
constexpr int kSeedsPerSchema = 20;
constexpr int32_t kSchemaTokens = 480;

// The sample reached the end of its grammar, parses and satisfies the schema.
void expect_complete_and_valid(const json::Value& schema, const Generation& g) {
  EXPECT_TRUE(g.reason == StopReason::GrammarEnd || g.reason == StopReason::EndOfGeneration)
      << static_cast<int>(g.reason);
  json::Value instance;
  std::string error;
  ASSERT_TRUE(json::parse(g.text, &instance, &error)) << error;
  std::string why;
  EXPECT_TRUE(sampling::testing::schema_accepts(schema, instance, &why)) << why;
}

// Samples kSeedsPerSchema outputs per schema at temperature 1 (half of them
// from the whole distribution, half after the default top-k, top-p and min-p);
// each must reach the end of its grammar, parse and satisfy its schema.
// Returns how many were sampled.
int sample_under_schemas(const model::Model& m) {
  const auto ctx = new_context(m);
  int sampled = 0;
  for (const char* schema_text : kSchemas) {
    json::Value schema;
    std::string error;
    if (!json::parse(schema_text, &schema, &error)) {
      ADD_FAILURE() << error;
      return sampled;
    }
    const auto grammar = sampling::Grammar::parse(sampling::json_schema_to_gbnf(schema));
    for (int seed = 0; seed < kSeedsPerSchema; ++seed) {
      sampling::SamplerParams p;
      p.temperature = 1.0f;
      p.seed = static_cast<uint64_t>(seed);
      p.grammar = grammar;
      if (seed % 2 == 0) {
        p.top_k = 0;
        p.top_p = 1.0f;
        p.min_p = 0.0f;
      }
      const Generation g = generate_from_bos(*ctx, p, kSchemaTokens);
      ++sampled;
      SCOPED_TRACE(std::string("schema ") + schema_text + ", seed " + std::to_string(seed) + ": " + g.text);
      expect_complete_and_valid(schema, g);
    }
  }
  return sampled;
}

TEST(GrammarGeneration, EverySchemaSampleOfStories260KValidates) { EXPECT_GE(sample_under_schemas(stories()), 100); }

TEST(GrammarGeneration, EverySchemaSampleOfASyntheticModelValidates) {
  // Random weights over a SentencePiece vocabulary: the 256 byte tokens spell
  // any JSON, and the near-uniform logits pick tokens a trained model would not.
  const std::string path = test::test_temp_path("synth.gguf");
  model::write_synth_model(model::SynthSpec{}, model::SynthOptions{}, path);
  const auto m = model::Model::load(path);
  EXPECT_GE(sample_under_schemas(*m), 100);
  std::remove(path.c_str());
}

const char* const kMarker = "<|tool_call|>";

int32_t most_frequent(const std::vector<int32_t>& ids) {
  std::map<int32_t, int> counts;
  for (const int32_t id : ids) ++counts[id];
  return std::max_element(counts.begin(), counts.end(),
                          [](const auto& a, const auto& b) { return a.second < b.second; })
      ->first;
}

// stories260K with token `id` a control token spelled kMarker.
std::unique_ptr<model::Model> stories_with_marker(int32_t id) {
  return model::Model::load(test::stories_with_control_token(id, kMarker));
}

// The unedited model's pieces of `ids`, token marker_id's written as `marker`.
std::string spelled(const std::vector<int32_t>& ids, int32_t marker_id, const std::string& marker) {
  std::string text;
  for (const int32_t id : ids) text += id == marker_id ? marker : stories().tokenizer().token_to_piece(id, false);
  return text;
}

sampling::SamplerParams preserving(int32_t token, const std::string& gbnf = {}) {
  sampling::SamplerParams p = greedy(gbnf);
  p.preserved_tokens = {token};
  return p;
}

TEST(GrammarGeneration, APreservedControlTokenWritesItsTextAndOthersNothing) {
  const Generation& plain = unconstrained_greedy();
  ASSERT_EQ(spelled(plain.ids, -1, ""), plain.text);  // the pieces make the stream
  const int32_t marker = most_frequent(plain.ids);
  const auto edited = stories_with_marker(marker);
  ASSERT_NE(edited->tokenizer().vocab().token(marker).attr & tokenizer::kAttrControl, 0u);

  const Generation dropped = generate_from_bos(*new_context(*edited), greedy(), kGreedyTokens);
  EXPECT_EQ(dropped.ids, plain.ids);
  EXPECT_EQ(dropped.text, spelled(plain.ids, marker, ""));

  const Generation kept = generate_from_bos(*new_context(*edited), preserving(marker), kGreedyTokens);
  EXPECT_EQ(kept.ids, plain.ids);
  EXPECT_EQ(kept.text, spelled(plain.ids, marker, kMarker));
  EXPECT_NE(kept.text.find(kMarker), std::string::npos);
}

TEST(GrammarGeneration, AGrammarSpellingTheMarkerTakesThePreservedTokenOnly) {
  const Generation& plain = unconstrained_greedy();
  const int32_t marker = most_frequent(plain.ids);
  const auto edited = stories_with_marker(marker);
  const std::string expected = spelled(plain.ids, marker, kMarker);
  // The greedy text with the marker, as a literal: the greedy tokens fit it
  // when the token is preserved, and it ends there.
  const std::string gbnf = "root ::= " + gbnf_literal(expected);
  const Generation kept = generate_from_bos(*new_context(*edited), preserving(marker, gbnf), 2 * kGreedyTokens);
  EXPECT_EQ(kept.ids, plain.ids);
  EXPECT_EQ(kept.text, expected);
  EXPECT_EQ(kept.reason, StopReason::GrammarEnd);
  // Not preserved, the token is refused: other tokens spell the marker.
  const Generation spelled_out = generate_from_bos(*new_context(*edited), greedy(gbnf), 8 * kGreedyTokens);
  EXPECT_EQ(std::find(spelled_out.ids.begin(), spelled_out.ids.end(), marker), spelled_out.ids.end());
  EXPECT_EQ(spelled_out.text, expected);
  EXPECT_EQ(spelled_out.reason, StopReason::GrammarEnd);
}

}  // namespace
}  // namespace peak::runtime
