// Speculative decoding by prompt lookup (runtime/prompt_lookup.h, generate()):
// the drafts, and generation with them against generation without, on the
// real stories260K model. Greedy from BOS it must still give the 300 reference
// ids of shared/models/stories260K.greedy-ids.txt (an independent float64
// implementation); sampled, the same tokens as without drafts for the same
// seed, and the context left as generation without drafts leaves it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/model.h"
#include "runtime/generator.h"
#include "runtime/prompt_lookup.h"

namespace peak::runtime {
namespace {

const std::string kShared = PEAK_SHARED_DIR;

const model::Model& stories() {
  static const auto m = model::Model::load(kShared + "/models/stories260K.gguf");
  return *m;
}

std::vector<int32_t> draft(const std::vector<int32_t>& seen, int32_t ngram, size_t max_draft) {
  std::vector<int32_t> out(max_draft);
  out.resize(draft_by_lookup(seen, ngram, max_draft, out.data()));
  return out;
}

TEST(PromptLookup, TheLongestNgramsLatestOccurrenceProposesWhatFollowedIt) {
  // "7 8" ends the text: it occurred twice, the later one followed by 5 6.
  EXPECT_EQ(draft({7, 8, 1, 2, 7, 8, 5, 6, 9, 7, 8}, 3, 8), (std::vector<int32_t>{5, 6, 9, 7, 8}));
  EXPECT_EQ(draft({7, 8, 1, 2, 7, 8, 5, 6, 9, 7, 8}, 3, 2), (std::vector<int32_t>{5, 6}));
  // The 3-gram "2 7 8" wins over the later 2-gram "7 8".
  EXPECT_EQ(draft({2, 7, 8, 4, 7, 8, 5, 2, 7, 8}, 3, 1), (std::vector<int32_t>{4}));
  EXPECT_EQ(draft({2, 7, 8, 4, 7, 8, 5, 2, 7, 8}, 2, 1), (std::vector<int32_t>{5}));
  // A run overlaps its own end.
  EXPECT_EQ(draft({3, 3, 3, 3}, 2, 4), (std::vector<int32_t>{3}));
  // No earlier occurrence, single tokens (below kMinLookupNgram), nothing asked.
  EXPECT_TRUE(draft({1, 2, 3, 4}, 3, 4).empty());
  EXPECT_TRUE(draft({5, 1, 2, 5}, 3, 4).empty());
  EXPECT_TRUE(draft({7, 8, 1, 7, 8}, 3, 0).empty());
  EXPECT_TRUE(draft({7, 8, 1, 7, 8}, 0, 4).empty());
  EXPECT_TRUE(draft({}, 3, 4).empty());
}

ContextParams context_params(int64_t logit_rows) {
  ContextParams p;
  p.n_ctx = 512;
  p.n_threads = 1;
  p.type_k = p.type_v = kernels::GgmlType::F32;
  p.max_logit_rows = logit_rows;
  return p;
}

sampling::SamplerChain sampler(float temperature, uint32_t seed) {
  sampling::SamplerParams sp;
  sp.temperature = temperature;
  sp.seed = seed;
  return sampling::SamplerChain(static_cast<int32_t>(stories().hparams().n_vocab), sp);
}

TEST(SpeculativeLookup, GreedyFromBosStillGivesTheReferenceIds) {
  std::ifstream in(kShared + "/models/stories260K.greedy-ids.txt");
  std::vector<int32_t> expected;
  for (int32_t id; in >> id;) expected.push_back(id);
  ASSERT_EQ(expected.size(), 300u);
  for (int32_t draft_max : {1, 4, 8}) {
    Context ctx(stories(), context_params(draft_max + 1));
    sampling::SamplerChain greedy = sampler(0.0f, 0);
    GenerateOptions o;
    o.max_tokens = 300;
    o.stop_at_eog = false;
    o.lookup_ngram = 3;
    o.draft_max = draft_max;
    const GenerateResult r = generate(ctx, greedy, {1}, o);
    EXPECT_EQ(r.tokens, expected) << "draft_max " << draft_max;
    EXPECT_GT(r.n_accepted, 0) << "draft_max " << draft_max;
    EXPECT_LE(r.n_accepted, r.n_drafted);
    EXPECT_EQ(ctx.kv().used(), 301);
    std::printf("greedy from BOS, draft_max %d: %d drafted, %d accepted\n", draft_max, r.n_drafted, r.n_accepted);
  }
}

// A story to retell: its second telling repeats the first, which the lookup finds.
std::vector<int32_t> retelling_prompt() {
  const std::string story =
      "Once upon a time, there was a little girl named Lily. She loved to play outside in the sun. One day, she "
      "saw a big, red ball in the park. She ran to the ball and kicked it very high. Lily was very happy.\n";
  return stories().tokenizer().encode(story + story.substr(0, 60), true, false);
}

struct Outcome {
  GenerateResult result;
  std::vector<int32_t> positions;
  std::vector<float> logits;  // the context's last logits afterwards
};

Outcome run(const GenerateOptions& options, float temperature, uint32_t seed) {
  Context ctx(stories(), context_params(options.draft_max + 1));
  sampling::SamplerChain chain = sampler(temperature, seed);
  Outcome r;
  r.result = generate(ctx, chain, retelling_prompt(), options);
  r.positions = ctx.kv().positions();
  r.logits.assign(ctx.logits(), ctx.logits() + ctx.n_vocab());
  return r;
}

double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double d = 0;
  for (size_t i = 0; i < a.size(); ++i) d = std::max(d, static_cast<double>(std::abs(a[i] - b[i])));
  return d;
}

// Every token is drawn by the same sampler call from the same logits (a
// batch's instead of a single token's), so the same seed gives the same text
// at any temperature, and the context ends as without drafts: the drafted
// tokens the sampler did not draw leave no cell, and its last logits are those
// after the last token evaluated.
TEST(SpeculativeLookup, SampledTextAndTheContextAfterAreThoseWithoutDrafts) {
  struct Case {
    float temperature;
    uint32_t seed;
    int32_t max_tokens;
    int stop_after_pieces;  // the callback stops after this many pieces (0: never)
  };
  for (const Case& c : {Case{0.0f, 0, 120, 0}, Case{0.8f, 7, 120, 0}, Case{1.0f, 3, 120, 0}, Case{0.8f, 11, 5, 0},
                        Case{0.0f, 0, 120, 40}}) {
    SCOPED_TRACE(::testing::Message() << "temperature " << c.temperature << " seed " << c.seed << " max_tokens "
                                      << c.max_tokens << " stop after " << c.stop_after_pieces);
    GenerateOptions o;
    o.max_tokens = c.max_tokens;
    int pieces = 0;
    o.on_text = [&](const std::string&) { return c.stop_after_pieces == 0 || ++pieces < c.stop_after_pieces; };
    const Outcome plain = run(o, c.temperature, c.seed);
    for (int32_t draft_max : {1, 4}) {
      pieces = 0;
      GenerateOptions lookup = o;
      lookup.lookup_ngram = 3;
      lookup.draft_max = draft_max;
      const Outcome drafted = run(lookup, c.temperature, c.seed);
      EXPECT_EQ(drafted.result.tokens, plain.result.tokens) << "draft_max " << draft_max;
      EXPECT_EQ(drafted.result.reason, plain.result.reason);
      EXPECT_EQ(drafted.positions, plain.positions) << "the cells hold the same tokens' positions";
      EXPECT_LT(max_abs_diff(drafted.logits, plain.logits), 1e-4);
      if (c.max_tokens > 5) {
        EXPECT_GT(drafted.result.n_accepted, 0);
      }
    }
  }
}

TEST(SpeculativeLookup, TheContextMustHandOutRowsForTheDraft) {
  Context ctx(stories(), context_params(1));
  sampling::SamplerChain chain = sampler(0.0f, 0);
  GenerateOptions o;
  o.lookup_ngram = 3;
  EXPECT_THROW(generate(ctx, chain, {1}, o), std::invalid_argument);
  EXPECT_EQ(ctx.kv().used(), 0) << "refused before the prompt was evaluated";
  Context roomy(stories(), context_params(5));
  o.draft_max = 0;
  EXPECT_THROW(generate(roomy, chain, {1}, o), std::invalid_argument);
}

// The rows eval_last_rows hands out are the logits every token of the batch
// gets from eval() with all_logits, up to the order of float sums.
TEST(SpeculativeLookup, LastRowsAreThoseOfEveryTokensLogits) {
  const std::vector<int32_t> prompt = retelling_prompt();
  ContextParams all = context_params(1);
  all.logits_all = true;
  Context reference(stories(), all);
  std::vector<float> every(prompt.size() * static_cast<size_t>(reference.n_vocab()));
  reference.eval(prompt.data(), static_cast<int64_t>(prompt.size()), every.data());
  Context ctx(stories(), context_params(5));
  const int64_t n = static_cast<int64_t>(prompt.size());
  ctx.eval(prompt.data(), n - 5);
  std::vector<float> rows(4 * static_cast<size_t>(ctx.n_vocab()));
  ctx.eval_last_rows(prompt.data() + n - 5, 5, 4, rows.data());
  const std::vector<float> last_four(every.end() - static_cast<std::ptrdiff_t>(rows.size()), every.end());
  EXPECT_LT(max_abs_diff(rows, last_four), 1e-4);
  EXPECT_TRUE(std::equal(rows.end() - ctx.n_vocab(), rows.end(), ctx.logits()));
  EXPECT_THROW(ctx.eval_last_rows(prompt.data(), 3, 6, rows.data()), std::invalid_argument);  // more rows than tokens
  EXPECT_THROW(ctx.eval_last_rows(prompt.data(), 6, 6, rows.data()), std::invalid_argument);  // more than reserved
  EXPECT_THROW(ctx.eval_last_rows(prompt.data(), 2, 0, rows.data()), std::invalid_argument);
  EXPECT_EQ(ctx.kv().used(), n) << "refused calls leave the cells";
}

}  // namespace
}  // namespace peak::runtime
