// Speculative decoding (generate()) by prompt lookup (runtime/prompt_lookup.h)
// and by a draft model (runtime/draft_model.h): the drafts, and generation
// with them against generation without, on the real stories260K model. Greedy
// from BOS it must still give the 300 reference ids of
// shared/models/stories260K.greedy-ids.txt (an independent float64
// implementation); sampled by prompt lookup, the same tokens as without drafts
// for the same seed; sampled with a draft model, pairs of tokens whose counts
// pass a chi-square test against the probabilities computed from the model's
// logits; and the context left as generation without drafts leaves it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/model.h"
#include "model/quantize.h"
#include "runtime/generator.h"
#include "runtime/prompt_lookup.h"

namespace peak::runtime {
namespace {

const std::string kShared = PEAK_SHARED_DIR;

const model::Model& stories() {
  static const auto m = model::Model::load(kShared + "/models/stories260K.gguf");
  return *m;
}

// stories260K quantized to Q4_0: the same vocabulary, slightly other
// distributions, so that some of its drafts are refused.
const model::Model& stories_q4_0() {
  static const auto m = [] {
    const std::string path = ::testing::TempDir() + "peak_speculative_stories_q4_0.gguf";
    model::QuantizeOptions o;
    o.type = "Q4_0";
    o.pure = true;
    model::quantize_model(kShared + "/models/stories260K.gguf", path, o);
    return model::Model::load(path);
  }();
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

std::vector<int32_t> reference_ids() {
  std::ifstream in(kShared + "/models/stories260K.greedy-ids.txt");
  std::vector<int32_t> ids;
  for (int32_t id; in >> id;) ids.push_back(id);
  return ids;
}

TEST(SpeculativeDraftModel, GreedyFromBosStillGivesTheReferenceIds) {
  const std::vector<int32_t> expected = reference_ids();
  ASSERT_EQ(expected.size(), 300u);
  for (int32_t draft_max : {1, 4, 8}) {
    DraftModel draft(stories_q4_0(), context_params(1));
    Context ctx(stories(), context_params(draft_max + 1));
    sampling::SamplerChain greedy = sampler(0.0f, 0);
    GenerateOptions o;
    o.max_tokens = 300;
    o.stop_at_eog = false;
    o.draft_model = &draft;
    o.draft_max = draft_max;
    o.draft_p_min = 0.0f;
    const GenerateResult r = generate(ctx, greedy, {1}, o);
    EXPECT_EQ(r.tokens, expected) << "draft_max " << draft_max;
    EXPECT_GT(r.n_accepted, 0);
    EXPECT_LE(r.n_accepted, r.n_drafted);
    EXPECT_EQ(ctx.kv().used(), 301);
    std::printf("draft model, greedy from BOS, draft_max %d: %d drafted, %d accepted\n", draft_max, r.n_drafted,
                r.n_accepted);
  }
}

// A draft model at temperature 0 drafts fixed tokens, as prompt lookup does:
// the text and the context after it are those without drafts, whatever
// draft_p_min cuts off, also when generation goes on in the same context.
TEST(SpeculativeDraftModel, GreedyTextAndContextAreThoseWithoutDrafts) {
  GenerateOptions o;
  o.max_tokens = 100;
  const Outcome plain = run(o, 0.0f, 0);
  for (float p_min : {0.0f, 0.5f, 0.9f}) {
    DraftModel draft(stories_q4_0(), context_params(1));
    GenerateOptions d = o;
    d.draft_model = &draft;
    d.draft_p_min = p_min;
    const Outcome drafted = run(d, 0.0f, 0);
    EXPECT_EQ(drafted.result.tokens, plain.result.tokens) << "draft_p_min " << p_min;
    EXPECT_EQ(drafted.positions, plain.positions);
    EXPECT_LT(max_abs_diff(drafted.logits, plain.logits), 1e-4);
    if (p_min < 0.9f) {
      EXPECT_GT(drafted.result.n_accepted, 0);
    }
  }
  // Two generations in one context, the second continuing the first: the
  // draft model follows its own record of the first.
  DraftModel draft(stories_q4_0(), context_params(1));
  Context ctx(stories(), context_params(5));
  Context plain_ctx(stories(), context_params(1));
  sampling::SamplerChain chain = sampler(0.0f, 0), plain_chain = sampler(0.0f, 0);
  GenerateOptions d = o;
  d.max_tokens = 30;
  d.draft_model = &draft;
  d.draft_p_min = 0.0f;
  o.max_tokens = 30;
  const std::vector<int32_t> more = stories().tokenizer().encode(" The dog", false, false);
  for (const std::vector<int32_t>& prompt : {retelling_prompt(), more}) {
    const GenerateResult a = generate(ctx, chain, prompt, d);
    const GenerateResult b = generate(plain_ctx, plain_chain, prompt, o);
    EXPECT_EQ(a.tokens, b.tokens);
  }
  EXPECT_EQ(ctx.kv().positions(), plain_ctx.kv().positions());
}

// The draft model holds the text it follows (or a window of its end) and its
// logits are those of a context that evaluated just that.
TEST(SpeculativeDraftModel, FollowsTheTextByItsCommonPrefixOrAWindowOfItsEnd) {
  const std::vector<int32_t> text = retelling_prompt();
  ASSERT_GT(text.size(), 80u);
  ContextParams small = context_params(1);
  small.n_ctx = 64;
  DraftModel draft(stories(), small);
  auto logits_after = [&](const int32_t* tokens, size_t n) {
    Context fresh(stories(), context_params(1));
    fresh.eval(tokens, static_cast<int64_t>(n));
    return std::vector<float>(fresh.logits(), fresh.logits() + fresh.n_vocab());
  };
  auto held = [&] { return std::vector<float>(draft.logits(), draft.logits() + stories().hparams().n_vocab); };
  draft.follow(text.data(), 40, 4);
  EXPECT_EQ(draft.tokens(), std::vector<int32_t>(text.begin(), text.begin() + 40));
  EXPECT_LT(max_abs_diff(held(), logits_after(text.data(), 40)), 1e-4);
  // Shorter: the prefix is kept, its last token evaluated again for its logits.
  draft.follow(text.data(), 30, 4);
  EXPECT_EQ(draft.tokens().size(), 30u);
  EXPECT_LT(max_abs_diff(held(), logits_after(text.data(), 30)), 1e-4);
  // Another token at 20: the cells from there are evaluated again.
  std::vector<int32_t> other(text.begin(), text.begin() + 45);
  other[20] = text[21];
  draft.follow(other.data(), other.size(), 4);
  EXPECT_EQ(draft.tokens(), other);
  EXPECT_LT(max_abs_diff(held(), logits_after(other.data(), other.size())), 1e-4);
  // 80 tokens with 4 cells left: a window of the last 30, kept while it grows.
  draft.follow(text.data(), 80, 4);
  ASSERT_EQ(draft.tokens().size(), 30u);
  EXPECT_EQ(draft.tokens(), std::vector<int32_t>(text.begin() + 50, text.begin() + 80));
  EXPECT_LT(max_abs_diff(held(), logits_after(text.data() + 50, 30)), 1e-4);
  draft.follow(text.data(), 85, 4);
  EXPECT_EQ(draft.tokens(), std::vector<int32_t>(text.begin() + 50, text.begin() + 85));
  EXPECT_LT(max_abs_diff(held(), logits_after(text.data() + 50, 35)), 1e-4);
  EXPECT_EQ(draft.context().kv().used(), 35);
  EXPECT_THROW(draft.follow(text.data(), 0, 4), std::invalid_argument);
}

TEST(SpeculativeDraftModel, ADraftModelOfAnotherVocabularyIsRefused) {
  const auto other = model::Model::load(kShared + "/models/llama-2-tiny-random.gguf");
  DraftModel draft(*other, context_params(1));
  Context ctx(stories(), context_params(5));
  sampling::SamplerChain chain = sampler(0.0f, 0);
  GenerateOptions o;
  o.draft_model = &draft;
  try {
    generate(ctx, chain, {1}, o);
    FAIL() << "a draft model of 32000 tokens drafted for one of 512";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("32000 tokens, the target's 512"), std::string::npos) << e.what();
  }
  EXPECT_EQ(ctx.kv().used(), 0) << "refused before the prompt was evaluated";
  DraftModel same(stories_q4_0(), context_params(1));
  o.draft_model = &same;
  o.lookup_ngram = 3;
  EXPECT_THROW(generate(ctx, chain, {1}, o), std::invalid_argument) << "prompt lookup and a draft model";
  o.lookup_ngram = 0;
  o.draft_p_min = 1.5f;
  EXPECT_THROW(generate(ctx, chain, {1}, o), std::invalid_argument);
  EXPECT_EQ(ctx.kv().used(), 0);
}

// The distribution of the first two tokens after a prompt, sampled at
// temperature 1.5 among the 4 best: the first without a draft, the second
// kept from the Q4_0 model's draft or drawn from the residual. Its counts over
// many seeds against the probabilities from the F32 model's logits, computed
// here in double precision.
TEST(SpeculativeDraftModel, SampledPairsFollowTheTargetsDistribution) {
  constexpr float kTemperature = 1.5f;
  constexpr int kTopK = 4;
  constexpr int kTrials = 3000;
  const std::vector<int32_t> prompt = stories().tokenizer().encode("Once upon a time, there was a", true, false);
  const auto n_vocab = static_cast<size_t>(stories().hparams().n_vocab);
  // The k best tokens after `tokens` and their probabilities.
  auto top = [&](const std::vector<int32_t>& tokens) {
    Context c(stories(), context_params(1));
    c.eval(tokens.data(), static_cast<int64_t>(tokens.size()));
    std::vector<int32_t> ids(n_vocab);
    for (size_t i = 0; i < n_vocab; ++i) ids[i] = static_cast<int32_t>(i);
    const float* l = c.logits();
    std::partial_sort(ids.begin(), ids.begin() + kTopK, ids.end(),
                      [&](int32_t a, int32_t b) { return l[a] > l[b] || (l[a] == l[b] && a < b); });
    ids.resize(kTopK);
    std::vector<double> p(kTopK);
    double total = 0;
    for (int i = 0; i < kTopK; ++i)
      total += p[static_cast<size_t>(i)] =
          std::exp((l[ids[static_cast<size_t>(i)]] - l[ids[0]]) / double{kTemperature});
    for (double& x : p) x /= total;
    return std::make_pair(ids, p);
  };
  std::vector<std::pair<int32_t, int32_t>> pairs;
  std::vector<double> expected;
  const auto first = top(prompt);
  for (int i = 0; i < kTopK; ++i) {
    std::vector<int32_t> longer = prompt;
    longer.push_back(first.first[static_cast<size_t>(i)]);
    const auto second = top(longer);
    for (int j = 0; j < kTopK; ++j) {
      pairs.emplace_back(first.first[static_cast<size_t>(i)], second.first[static_cast<size_t>(j)]);
      expected.push_back(first.second[static_cast<size_t>(i)] * second.second[static_cast<size_t>(j)]);
    }
  }
  std::vector<int> counts(pairs.size(), 0);
  DraftModel draft(stories_q4_0(), context_params(1));
  Context ctx(stories(), context_params(2));
  int drafted = 0, accepted = 0;
  for (int trial = 0; trial < kTrials; ++trial) {
    ctx.kv().clear();
    sampling::SamplerParams sp;
    sp.temperature = kTemperature;
    sp.top_k = kTopK;
    sp.top_p = 1.0f;
    sp.min_p = 0.0f;
    sp.seed = static_cast<uint32_t>(1000 + trial);
    sampling::SamplerChain chain(static_cast<int32_t>(n_vocab), sp);
    GenerateOptions o;
    o.max_tokens = 2;
    o.stop_at_eog = false;
    o.draft_model = &draft;
    o.draft_max = 1;
    o.draft_p_min = 0.0f;
    const GenerateResult r = generate(ctx, chain, prompt, o);
    ASSERT_EQ(r.tokens.size(), 2u);
    drafted += r.n_drafted;
    accepted += r.n_accepted;
    const auto at = std::find(pairs.begin(), pairs.end(), std::make_pair(r.tokens[0], r.tokens[1]));
    ASSERT_NE(at, pairs.end()) << "a pair outside the 4 best: " << r.tokens[0] << " " << r.tokens[1];
    ++counts[static_cast<size_t>(at - pairs.begin())];
  }
  double x2 = 0;
  for (size_t i = 0; i < pairs.size(); ++i) {
    const double e = expected[i] * kTrials;
    x2 += (counts[i] - e) * (counts[i] - e) / e;
  }
  // The upper 0.1 % point of chi-square with 15 degrees of freedom.
  EXPECT_LT(x2, 37.70);
  EXPECT_EQ(drafted, kTrials) << "every second token was drafted";
  EXPECT_LT(accepted, drafted) << "some drafts were refused: the residual was drawn from";
  EXPECT_GT(accepted, drafted / 2);
  std::printf("sampled pairs: chi-square %.1f (15 degrees of freedom), %d of %d drafts kept\n", x2, accepted, drafted);
}

}  // namespace
}  // namespace peak::runtime
