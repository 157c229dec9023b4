#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "sampling/pcg32.h"
#include "sampling/sampler_chain.h"

namespace peak::sampling {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// Everything off but the distribution draw.
SamplerParams plain(float temperature) {
  SamplerParams params;
  params.temperature = temperature;
  params.top_k = 0;
  params.top_p = 1.0f;
  params.min_p = 0.0f;
  return params;
}

std::vector<float> pseudo_random_logits(Pcg32& rng, int n) {
  std::vector<float> logits(static_cast<size_t>(n));
  for (float& l : logits) l = static_cast<float>(rng.next_unit_double() * 8.0 - 4.0);
  return logits;
}

void expect_refused(const SamplerParams& params, const std::string& named) {
  try {
    SamplerChain chain(10, params);
    FAIL() << "accepted invalid " << named;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(named), std::string::npos) << e.what();
  }
}

TEST(SamplerChain, RefusesParametersOutOfRange) {
  const auto with = [](auto change) {
    SamplerParams params;
    change(params);
    return params;
  };
  expect_refused(with([](SamplerParams& p) { p.temperature = -0.5f; }), "temperature");
  expect_refused(with([](SamplerParams& p) { p.temperature = kNaN; }), "temperature");
  expect_refused(with([](SamplerParams& p) { p.temperature = kInf; }), "temperature");
  expect_refused(with([](SamplerParams& p) { p.top_k = -1; }), "top_k");
  expect_refused(with([](SamplerParams& p) { p.top_p = 0.0f; }), "top_p");
  expect_refused(with([](SamplerParams& p) { p.top_p = 1.5f; }), "top_p");
  expect_refused(with([](SamplerParams& p) { p.top_p = kNaN; }), "top_p");
  expect_refused(with([](SamplerParams& p) { p.min_p = -0.1f; }), "min_p");
  expect_refused(with([](SamplerParams& p) { p.min_p = 1.1f; }), "min_p");
  expect_refused(with([](SamplerParams& p) { p.min_p = kNaN; }), "min_p");
  expect_refused(with([](SamplerParams& p) { p.penalty_last_n = -1; }), "penalty_last_n");
  expect_refused(with([](SamplerParams& p) { p.repeat_penalty = 0.0f; }), "repeat_penalty");
  expect_refused(with([](SamplerParams& p) { p.repeat_penalty = kNaN; }), "repeat_penalty");
  expect_refused(with([](SamplerParams& p) { p.frequency_penalty = kInf; }), "frequency_penalty");
  expect_refused(with([](SamplerParams& p) { p.presence_penalty = kNaN; }), "presence_penalty");
  expect_refused(with([](SamplerParams& p) { p.order = {SamplerStage::TopK, SamplerStage::TopK}; }), "top-k");
  EXPECT_THROW(SamplerChain(0, SamplerParams{}), std::invalid_argument);
}

TEST(SamplerChain, AcceptsTheBoundaries) {
  SamplerParams params;
  params.temperature = 0.0f;
  params.top_p = 1.0f;
  params.min_p = 1.0f;
  params.top_k = 0;
  params.penalty_last_n = 0;
  EXPECT_NO_THROW(SamplerChain(10, params));
}

TEST(SamplerChain, TemperatureZeroIsGreedyWithLowestIdOnTies) {
  SamplerChain chain(4, plain(0.0f));
  const float logits[] = {0.5f, 2.0f, 2.0f, 1.0f};
  for (int i = 0; i < 20; ++i) EXPECT_EQ(chain.sample(logits), 1);
}

TEST(SamplerChain, GreedyStillAppliesPenalties) {
  SamplerParams params = plain(0.0f);
  params.repeat_penalty = 10.0f;  // token 1: 2 / 10 = 0.2 drops below token 2
  SamplerChain chain(4, params);
  const float logits[] = {0.5f, 2.0f, 2.0f, 1.0f};
  chain.accept(1);
  EXPECT_EQ(chain.sample(logits), 2);
}

TEST(SamplerChain, SameSeedSameTokens) {
  SamplerParams params;  // llama.cpp defaults: every stage active
  params.seed = 1234;
  params.repeat_penalty = 1.1f;
  SamplerChain a(300, params);
  SamplerChain b(300, params);
  Pcg32 logits_source(77);
  for (int step = 0; step < 200; ++step) {
    const std::vector<float> logits = pseudo_random_logits(logits_source, 300);
    const int32_t token_a = a.sample(logits.data());
    const int32_t token_b = b.sample(logits.data());
    ASSERT_EQ(token_a, token_b) << "step " << step;
    a.accept(token_a);
    b.accept(token_b);
  }
}

TEST(SamplerChain, ResetReplaysTheSameSequence) {
  SamplerParams params = plain(1.0f);
  params.seed = 9;
  params.presence_penalty = 0.5f;
  SamplerChain chain(50, params);
  Pcg32 logits_source(1);
  const std::vector<float> logits = pseudo_random_logits(logits_source, 50);
  std::vector<int32_t> first;
  for (int i = 0; i < 30; ++i) {
    first.push_back(chain.sample(logits.data()));
    chain.accept(first.back());
  }
  chain.reset();
  for (int i = 0; i < 30; ++i) {
    const int32_t token = chain.sample(logits.data());
    ASSERT_EQ(token, first[static_cast<size_t>(i)]) << "step " << i;
    chain.accept(token);
  }
}

TEST(SamplerChain, DifferentSeedsDiverge) {
  SamplerParams params = plain(1.0f);
  params.seed = 1;
  SamplerChain a(100, params);
  params.seed = 2;
  SamplerChain b(100, params);
  const std::vector<float> flat(100, 0.0f);
  int same = 0;
  for (int i = 0; i < 50; ++i) same += a.sample(flat.data()) == b.sample(flat.data()) ? 1 : 0;
  EXPECT_LT(same, 10);  // 50 draws from 100 equally likely tokens: about 0.5 expected
}

// A turn taken back: the penalty window returns to what it was before the
// turn, while the random sequence goes on, so the next draw is the one after
// those the turn made (not a repeat of them).
TEST(SamplerChain, TakingAPenaltyWindowKeepsTheRandomSequence) {
  SamplerParams params = plain(1.0f);
  params.seed = 5;
  params.repeat_penalty = 1e6f;  // an accepted token is never drawn again (its logit becomes about 0)
  const std::vector<float> logits(20, 10.0f);
  SamplerChain live(20, params), reference(20, params);
  live.accept(3);
  reference.accept(3);
  const SamplerChain before = live;
  for (int i = 0; i < 6; ++i) live.accept(live.sample(logits.data()));
  live.take_penalty_window(before);
  // The reference skips the same six draws without accepting them: both chains
  // are at the same point of the random sequence with the same window.
  for (int i = 0; i < 6; ++i) reference.sample(logits.data());
  for (int i = 0; i < 10; ++i) {
    const int32_t token = live.sample(logits.data());
    ASSERT_EQ(token, reference.sample(logits.data())) << "draw " << i;
    ASSERT_NE(token, 3) << "the window taken back still holds token 3";
    live.accept(token);
    reference.accept(token);
  }
  params.penalty_last_n = 8;
  EXPECT_THROW(live.take_penalty_window(SamplerChain(20, params)), std::invalid_argument);
  EXPECT_THROW(live.take_penalty_window(SamplerChain(21, plain(1.0f))), std::invalid_argument);
}

TEST(SamplerChain, StageOrderIsHonoured) {
  // Logits {0, -1}, min-p 0.5 (threshold: max - ln 2 = -0.69) and temperature 2.
  // Min-p first removes token 1; temperature first halves its distance to -0.5,
  // which then passes the threshold.
  SamplerParams params = plain(2.0f);
  params.min_p = 0.5f;
  params.order = {SamplerStage::MinP, SamplerStage::Temperature};
  SamplerChain min_p_first(2, params);
  params.order = {SamplerStage::Temperature, SamplerStage::MinP};
  SamplerChain temperature_first(2, params);
  const float logits[] = {0.0f, -1.0f};
  int ones_min_p_first = 0;
  int ones_temperature_first = 0;
  for (int i = 0; i < 200; ++i) {
    ones_min_p_first += min_p_first.sample(logits);
    ones_temperature_first += temperature_first.sample(logits);
  }
  EXPECT_EQ(ones_min_p_first, 0);
  EXPECT_GT(ones_temperature_first, 20);
}

TEST(SamplerChain, TopKLeavesKCandidates) {
  SamplerParams params = plain(1.0f);
  params.top_k = 3;
  SamplerChain chain(10, params);
  const float logits[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  const int32_t token = chain.sample(logits);
  EXPECT_EQ(chain.last_candidates().size, 3u);
  EXPECT_GE(token, 7);
}

TEST(SamplerChain, CandidateBufferIsNeverReallocated) {
  SamplerParams params;
  params.repeat_penalty = 1.2f;
  params.frequency_penalty = 0.1f;
  SamplerChain chain(1000, params);
  const size_t capacity = chain.candidate_capacity();
  EXPECT_EQ(capacity, 1000u);
  Pcg32 logits_source(4);
  const TokenCandidate* buffer = nullptr;
  for (int step = 0; step < 100; ++step) {
    const std::vector<float> logits = pseudo_random_logits(logits_source, 1000);
    chain.accept(chain.sample(logits.data()));
    if (buffer == nullptr) buffer = chain.last_candidates().data;
    ASSERT_EQ(chain.last_candidates().data, buffer);
    ASSERT_EQ(chain.candidate_capacity(), capacity);
  }
}

TEST(SamplerChain, NaNAndInfiniteLogitsAreHandled) {
  SamplerChain chain(5, SamplerParams{});
  const float with_nan[] = {kNaN, 1.0f, kNaN, 0.5f, -kInf};
  for (int i = 0; i < 50; ++i) {
    const int32_t token = chain.sample(with_nan);
    EXPECT_TRUE(token == 1 || token == 3) << token;
  }
  const float with_inf[] = {1.0f, kInf, 3.0f, kNaN, 2.0f};
  for (int i = 0; i < 50; ++i) EXPECT_EQ(chain.sample(with_inf), 1);
  const float nothing_possible[] = {kNaN, -kInf, kNaN, -kInf, kNaN};
  EXPECT_THROW(chain.sample(nothing_possible), std::invalid_argument);
  SamplerChain greedy(5, plain(0.0f));
  EXPECT_THROW(greedy.sample(nothing_possible), std::invalid_argument);
  EXPECT_EQ(greedy.sample(with_nan), 1);
}

TEST(SamplerChain, AcceptRefusesTokensOutsideTheVocabulary) {
  SamplerChain chain(5, SamplerParams{});
  EXPECT_THROW(chain.accept(5), std::out_of_range);
}

}  // namespace
}  // namespace peak::sampling
