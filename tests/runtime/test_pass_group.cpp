// Contexts that share forward passes (runtime/pass_group.h): several
// sequences of different lengths and depths in one pass, each attending to
// its own cache. Each sequence's logits must be those of the naive
// double-precision reference run on it alone, for every architecture (tiny
// synthetic models), with prompts split into chunks beside the others'
// decoding steps; on the real stories260K model, greedy decoding through a
// group must give the 300 reference ids of shared/models/stories260K.greedy-ids.txt
// in every stream, with and without drafts verified in the shared passes.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "model/model.h"
#include "reference_forward.h"
#include "runtime/context.h"
#include "runtime/generator.h"
#include "runtime/pass_group.h"
#include "tiny_models.h"

namespace peak::runtime {
namespace {

using kernels::GgmlType;

const std::string kShared = PEAK_SHARED_DIR;

const model::Arch kAllArchs[] = {model::Arch::Llama,  model::Arch::Qwen2, model::Arch::Qwen3,   model::Arch::Gemma2,
                                 model::Arch::Gemma3, model::Arch::Phi3,  model::Arch::SmolLM3, model::Arch::Qwen2VL};

// Prompts of 40, 14 and 3 tokens: the longest spans five sliding windows of
// the tiny models and five chunks of 8.
const std::vector<std::vector<int32_t>> kPrompts = {
    {1,   17, 250, 3,  99, 42,  7, 280, 64, 5,  5,   123, 200, 11, 140, 33,  298, 2,   77, 61,
     190, 8,  254, 19, 46, 101, 3, 222, 15, 88, 170, 260, 132, 9,  57,  211, 4,   160, 29, 73},
    {1, 8, 90, 91, 17, 250, 3, 2, 60, 61, 62, 9, 270, 14},
    {1, 44, 45}};

PassGroupParams group_params(int64_t n_ctx, int max_sequences) {
  PassGroupParams p;
  p.n_ctx = n_ctx;
  p.max_sequences = max_sequences;
  p.prefill_chunk = 8;
  p.n_threads = 2;
  p.type_k = p.type_v = GgmlType::F32;
  p.gather_wait = std::chrono::milliseconds(200);
  return p;
}

ContextParams member_params(int64_t n_ctx, PassGroup* group) {
  ContextParams p;
  p.n_ctx = n_ctx;
  p.n_threads = 1;
  p.type_k = p.type_v = GgmlType::F32;
  p.pass_group = group;
  return p;
}

uint64_t shared_passes(const PassGroupStats& s) {
  uint64_t n = 0;
  for (size_t k = 1; k < s.passes_by_sequences.size(); ++k) n += s.passes_by_sequences[k];
  return n;
}

class PassGroupArch : public ::testing::TestWithParam<model::Arch> {};

// Three threads, one sequence each: the prompt (chunks of 8), then 12 tokens
// of decoding (each the argmax of the reference's logits, so the sequences
// follow the reference's path), all checked against the reference.
TEST_P(PassGroupArch, EachSequenceOfASharedPassMatchesTheReferenceAlone) {
  const auto m = model::Model::load(test::write_tiny_model(GetParam(), GgmlType::F32));
  const int64_t n_ctx = 64;
  PassGroup group(*m, group_params(n_ctx, 3));
  std::vector<test::ReferenceDeviation> prompt_dev(kPrompts.size()), decode_dev(kPrompts.size());
  std::vector<std::string> errors(kPrompts.size());
  std::vector<std::thread> threads;
  for (size_t s = 0; s < kPrompts.size(); ++s) {
    threads.emplace_back([&, s] {
      try {
        Context ctx(*m, member_params(n_ctx, &group));
        test::ReferenceForward ref(m->file(), m->hparams(), n_ctx);
        std::vector<double> expected;
        for (int32_t t : kPrompts[s]) expected = ref.step(t);
        ctx.eval(kPrompts[s].data(), static_cast<int64_t>(kPrompts[s].size()));
        prompt_dev[s].add(expected, ctx.logits());
        for (int step = 0; step < 12; ++step) {
          const int32_t next =
              static_cast<int32_t>(std::max_element(expected.begin(), expected.end()) - expected.begin());
          expected = ref.step(next);
          ctx.eval(&next, 1);
          decode_dev[s].add(expected, ctx.logits());
        }
      } catch (const std::exception& e) {
        errors[s] = e.what();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (size_t s = 0; s < kPrompts.size(); ++s) {
    ASSERT_EQ(errors[s], "") << "sequence " << s;
    EXPECT_GT(decode_dev[s].max_ref, 1e-3) << "logits are degenerate";
    const double prompt_tolerance = test::prefill_tolerance(*m, 1e-4);
    EXPECT_LT(prompt_dev[s].max_diff, prompt_tolerance * std::max(1.0, prompt_dev[s].max_ref)) << "sequence " << s;
    EXPECT_LT(decode_dev[s].max_diff, 1e-4 * std::max(1.0, decode_dev[s].max_ref)) << "sequence " << s;
  }
  const PassGroupStats stats = group.stats();
  EXPECT_GT(shared_passes(stats), 0u) << "no pass took two sequences";
  EXPECT_EQ(stats.passes_by_sequences.size(), 3u);
}

INSTANTIATE_TEST_SUITE_P(AllArchitectures, PassGroupArch, ::testing::ValuesIn(kAllArchs),
                         [](const auto& param_info) { return std::string(model::arch_name(param_info.param)); });

const model::Model& stories() {
  static const auto m = model::Model::load(kShared + "/models/stories260K.gguf");
  return *m;
}

std::vector<int32_t> reference_ids() {
  std::ifstream in(kShared + "/models/stories260K.greedy-ids.txt");
  std::vector<int32_t> ids;
  for (int32_t id; in >> id;) ids.push_back(id);
  return ids;
}

// Greedy from BOS, `n` tokens, with prompt lookup drafts of up to 4 tokens
// when `lookup` (verified by eval_last_rows in the shared passes).
std::vector<int32_t> greedy_from_bos(Context& ctx, int n, bool lookup) {
  sampling::SamplerParams sp;
  sp.temperature = 0.0f;
  sampling::SamplerChain greedy(static_cast<int32_t>(ctx.n_vocab()), sp);
  GenerateOptions o;
  o.max_tokens = n;
  o.stop_at_eog = false;
  if (lookup) {
    o.lookup_ngram = 3;
    o.draft_max = 4;
  }
  return generate(ctx, greedy, {1}, o).tokens;
}

TEST(PassGroup, EveryStreamOfStories260KDecodesTheReferenceIds) {
  const std::vector<int32_t> want = reference_ids();
  ASSERT_GE(want.size(), 200u);
  for (bool lookup : {false, true}) {
    PassGroupParams gp = group_params(256, 4);
    gp.max_logit_rows = 5;
    PassGroup group(stories(), gp);
    std::vector<std::vector<int32_t>> got(4);
    std::vector<std::string> errors(4);
    std::vector<std::thread> threads;
    for (size_t s = 0; s < got.size(); ++s) {
      threads.emplace_back([&, s] {
        try {
          ContextParams p = member_params(256, &group);
          p.max_logit_rows = 5;
          Context ctx(stories(), p);
          got[s] = greedy_from_bos(ctx, 200, lookup);
        } catch (const std::exception& e) {
          errors[s] = e.what();
        }
      });
    }
    for (std::thread& t : threads) t.join();
    for (size_t s = 0; s < got.size(); ++s) {
      ASSERT_EQ(errors[s], "");
      EXPECT_EQ(got[s], std::vector<int32_t>(want.begin(), want.begin() + 200))
          << "stream " << s << " lookup " << lookup;
    }
    EXPECT_GT(shared_passes(group.stats()), 0u);
  }
}

TEST(PassGroup, RefusesWhatItCannotRun) {
  PassGroup group(stories(), group_params(128, 2));
  // Other cache types.
  ContextParams f16 = member_params(128, &group);
  f16.type_k = GgmlType::F16;
  EXPECT_THROW(Context(stories(), f16), std::invalid_argument);
  // A request larger than a chunk or with more rows than planned.
  Context ctx(stories(), member_params(128, &group));
  std::vector<int32_t> tokens(9, 1);
  std::vector<float> logits(2 * static_cast<size_t>(ctx.n_vocab()));
  EXPECT_THROW(group.run(ctx.kv(), tokens.data(), 9, 0, 1, logits.data()), std::invalid_argument);
  EXPECT_THROW(group.run(ctx.kv(), tokens.data(), 2, 0, 2, logits.data()), std::invalid_argument);
  PassGroupParams bad = group_params(128, 0);
  EXPECT_THROW(PassGroup(stories(), bad), std::invalid_argument);
  bad = group_params(128, 2);
  bad.prefill_chunk = 0;
  EXPECT_THROW(PassGroup(stories(), bad), std::invalid_argument);
}

// A context with a larger cache than the group planned for grows its plan,
// and is served at any depth.
TEST(PassGroup, ALargerCacheGrowsThePlan) {
  PassGroup group(stories(), group_params(16, 2));
  Context ctx(stories(), member_params(200, &group));
  Context alone(stories(), member_params(200, nullptr));
  EXPECT_EQ(group.params().n_ctx, 200);
  std::vector<int32_t> prompt(190);
  for (size_t i = 0; i < prompt.size(); ++i) prompt[i] = static_cast<int32_t>(1 + (i * 37) % 500);
  ctx.eval(prompt.data(), static_cast<int64_t>(prompt.size()));
  alone.eval(prompt.data(), static_cast<int64_t>(prompt.size()));
  for (int64_t v = 0; v < ctx.n_vocab(); ++v) ASSERT_NEAR(ctx.logits()[v], alone.logits()[v], 1e-4) << v;
}

// A prompt longer than a chunk goes through in chunks, alone too; a failed
// one (too long for the cache) leaves the cache as it was.
TEST(PassGroup, AContextAloneEvaluatesInChunksAndFailsCleanly) {
  PassGroup group(stories(), group_params(64, 2));
  Context ctx(stories(), member_params(64, &group));
  Context alone(stories(), member_params(64, nullptr));
  std::vector<int32_t> prompt = {1, 400, 401, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46};
  ctx.eval(prompt.data(), static_cast<int64_t>(prompt.size()));
  alone.eval(prompt.data(), static_cast<int64_t>(prompt.size()));
  for (int64_t v = 0; v < ctx.n_vocab(); ++v) ASSERT_NEAR(ctx.logits()[v], alone.logits()[v], 1e-4) << v;
  EXPECT_EQ(group.stats().passes_by_sequences[0], 3u);  // 8 + 8 + 4
  std::vector<int32_t> too_long(50, 7);
  EXPECT_THROW(ctx.eval(too_long.data(), 50), ContextFull);
  EXPECT_EQ(ctx.kv().used(), 20);
  const int32_t bad = -1;
  EXPECT_THROW(ctx.eval(&bad, 1), std::invalid_argument);
  EXPECT_EQ(ctx.kv().used(), 20);
}

}  // namespace
}  // namespace peak::runtime
