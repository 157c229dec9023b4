// Expected probabilities of the first two tests come from llama.cpp's
// tests/test-sampling.cpp (test_penalties: five tokens of probability 0.2, the
// window holding exactly the listed tokens); the rest are hand computations.
#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "candidate_fixture.h"
#include "sampling/penalties.h"

namespace peak::sampling {
namespace {

using testing::CandidateFixture;

std::vector<float> penalised(const std::vector<int32_t>& accepted, const PenaltyStrengths& strengths) {
  CandidateFixture fixture = CandidateFixture::from_probabilities({0.2f, 0.2f, 0.2f, 0.2f, 0.2f});
  PenaltyWindow window(5, static_cast<int32_t>(accepted.size()));
  for (int32_t token : accepted) window.accept(token);
  apply_penalties(fixture.candidates, window, strengths);
  return fixture.probabilities();
}

void expect_near(const std::vector<float>& actual, const std::vector<float>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(actual[i], expected[i], 1e-5) << "at " << i;
}

TEST(Penalties, RepeatPenaltyMatchesLlamaCpp) {
  const PenaltyStrengths repeat{50.0f, 0.0f, 0.0f};
  expect_near(penalised({0}, repeat), {0.0f, 0.25f, 0.25f, 0.25f, 0.25f});
  expect_near(penalised({0, 1, 2}, repeat), {0.0f, 0.0f, 0.0f, 0.5f, 0.5f});
  expect_near(penalised({0, 1, 2, 0, 0}, repeat), {0.0f, 0.0f, 0.0f, 0.5f, 0.5f});
}

TEST(Penalties, FrequencyAndPresenceMatchLlamaCpp) {
  const PenaltyStrengths both{1.0f, 5.0f, 5.0f};
  expect_near(penalised({0}, both), {0.000011f, 0.249997f, 0.249997f, 0.249997f, 0.249997f});
  expect_near(penalised({0, 1, 2}, both), {0.000023f, 0.000023f, 0.000023f, 0.499966f, 0.499966f});
  expect_near(penalised({0, 1, 2, 0, 0}, both), {0.000000f, 0.000023f, 0.000023f, 0.499977f, 0.499977f});
}

TEST(Penalties, ExactLogitsForPositiveAndNegativeScores) {
  // Token 0 seen twice, token 1 once; repeat 2, frequency 0.5, presence 0.25:
  //   token 0:  2 / 2 - (2 * 0.5 + 0.25) = -0.25
  //   token 1: -2 * 2 - (1 * 0.5 + 0.25) = -4.75
  //   token 2: unseen, stays 1
  CandidateFixture fixture({2.0f, -2.0f, 1.0f});
  PenaltyWindow window(3, 8);
  for (int32_t token : {0, 1, 0}) window.accept(token);
  apply_penalties(fixture.candidates, window, {2.0f, 0.5f, 0.25f});
  EXPECT_EQ(fixture.logits(), (std::vector<float>{-0.25f, -4.75f, 1.0f}));
  EXPECT_FALSE(fixture.candidates.sorted);
}

TEST(PenaltyWindow, ForgetsTokensOlderThanTheWindow) {
  PenaltyWindow window(4, 2);
  for (int32_t token : {0, 1, 2}) window.accept(token);  // 0 falls out
  EXPECT_EQ(window.count(0), 0);
  EXPECT_EQ(window.count(1), 1);
  EXPECT_EQ(window.count(2), 1);
  window.accept(2);  // 1 falls out
  EXPECT_EQ(window.count(1), 0);
  EXPECT_EQ(window.count(2), 2);
  EXPECT_EQ(window.size(), 2);
}

TEST(PenaltyWindow, ResetForgetsEverything) {
  PenaltyWindow window(4, 3);
  for (int32_t token : {3, 3, 1}) window.accept(token);
  window.reset();
  EXPECT_EQ(window.size(), 0);
  EXPECT_EQ(window.count(3), 0);
  window.accept(1);
  EXPECT_EQ(window.count(1), 1);
}

TEST(PenaltyWindow, EmptyWindowPenalisesNothing) {
  CandidateFixture fixture({2.0f, -2.0f});
  PenaltyWindow window(2, 0);
  window.accept(0);
  apply_penalties(fixture.candidates, window, {2.0f, 1.0f, 1.0f});
  EXPECT_EQ(fixture.logits(), (std::vector<float>{2.0f, -2.0f}));
}

TEST(PenaltyWindow, RefusesTokensOutsideTheVocabulary) {
  PenaltyWindow window(4, 2);
  EXPECT_THROW(window.accept(4), std::out_of_range);
  EXPECT_THROW(window.accept(-1), std::out_of_range);
}

}  // namespace
}  // namespace peak::sampling
