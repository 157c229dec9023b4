// Expected probabilities come from llama.cpp's tests/test-sampling.cpp (inputs
// {0.1, 0.2, 0.3, 0.4} as logits ln p, probabilities read after a final softmax
// in the candidates' order), the rest from hand computation.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "candidate_fixture.h"
#include "sampling/truncation.h"

namespace peak::sampling {
namespace {

using testing::CandidateFixture;

const std::vector<float> kProbabilities = {0.1f, 0.2f, 0.3f, 0.4f};

void expect_probabilities(CandidateFixture& fixture, const std::vector<float>& expected) {
  const std::vector<float> actual = fixture.probabilities();
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(actual[i], expected[i], 1e-5) << "at " << i;
}

TEST(TopK, KeepsTheKBestSorted) {
  CandidateFixture one = CandidateFixture::from_probabilities(kProbabilities);
  apply_top_k(one.candidates, 1);
  expect_probabilities(one, {1.0f});

  CandidateFixture three = CandidateFixture::from_probabilities(kProbabilities);
  apply_top_k(three.candidates, 3);
  expect_probabilities(three, {0.44444f, 0.33333f, 0.22222f});
  EXPECT_EQ(three.ids(), (std::vector<int32_t>{3, 2, 1}));

  CandidateFixture four = CandidateFixture::from_probabilities(kProbabilities);
  apply_top_k(four.candidates, 4);
  expect_probabilities(four, {0.4f, 0.3f, 0.2f, 0.1f});
}

TEST(TopK, ZeroKeepsEverythingInPlace) {
  CandidateFixture fixture = CandidateFixture::from_probabilities(kProbabilities);
  apply_top_k(fixture.candidates, 0);
  expect_probabilities(fixture, {0.1f, 0.2f, 0.3f, 0.4f});
}

TEST(TopK, TwoOfThreeKeepsIdsOneAndTwo) {
  CandidateFixture fixture({1.0f, 3.0f, 2.0f});
  apply_top_k(fixture.candidates, 2);
  EXPECT_EQ(fixture.ids(), (std::vector<int32_t>{1, 2}));
}

TEST(TopK, LargerThanVocabularyKeepsAll) {
  CandidateFixture fixture = CandidateFixture::from_probabilities(kProbabilities);
  apply_top_k(fixture.candidates, 10);
  EXPECT_EQ(fixture.ids(), (std::vector<int32_t>{3, 2, 1, 0}));
}

TEST(TopK, TiesKeepTheLowerIds) {
  CandidateFixture fixture = CandidateFixture::from_probabilities({0.25f, 0.25f, 0.25f, 0.25f});
  apply_top_k(fixture.candidates, 2);
  EXPECT_EQ(fixture.ids(), (std::vector<int32_t>{0, 1}));
}

TEST(TopP, KeepsTheSmallestNucleusReachingP) {
  CandidateFixture seven = CandidateFixture::from_probabilities(kProbabilities);
  apply_top_p(seven.candidates, 0.7f);
  expect_probabilities(seven, {0.571429f, 0.428571f});

  CandidateFixture eight = CandidateFixture::from_probabilities(kProbabilities);
  apply_top_p(eight.candidates, 0.8f);
  expect_probabilities(eight, {0.44444f, 0.33333f, 0.22222f});

  CandidateFixture one = CandidateFixture::from_probabilities(kProbabilities);
  apply_top_p(one.candidates, 1.0f);
  expect_probabilities(one, {0.1f, 0.2f, 0.3f, 0.4f});
}

TEST(TopP, AtLeastOneTokenSurvivesATinyP) {
  CandidateFixture fixture = CandidateFixture::from_probabilities(kProbabilities);
  apply_top_p(fixture.candidates, 1e-6f);
  EXPECT_EQ(fixture.ids(), (std::vector<int32_t>{3}));
}

TEST(TopP, BoundaryJustAboveACumulativeSumTakesOneMore) {
  // Four equal logits: every probability is exactly 1/4 (exp(0) / 4), so the
  // cumulative sums 0.25, 0.5, 0.75 are exact. p = 0.5 stops at two tokens,
  // p just above at three; ties are ordered by id.
  CandidateFixture at({0.0f, 0.0f, 0.0f, 0.0f});
  apply_top_p(at.candidates, 0.5f);
  EXPECT_EQ(at.ids(), (std::vector<int32_t>{0, 1}));

  CandidateFixture above({0.0f, 0.0f, 0.0f, 0.0f});
  apply_top_p(above.candidates, 0.50000006f);
  EXPECT_EQ(above.ids(), (std::vector<int32_t>{0, 1, 2}));
}

TEST(TopP, LargeVocabularyOrdersOnlyWhatItNeedsAndStillFindsTheNucleus) {
  // 1000 tokens with logits descending by id: probabilities form a geometric
  // series of ratio e^-0.01, so the nucleus for p is the first
  // ceil(ln(1 - p (1 - r^1000)) / ln r) tokens (hand formula).
  const int n = 1000;
  std::vector<float> logits(n);
  for (int i = 0; i < n; ++i) logits[static_cast<size_t>(i)] = -0.01f * static_cast<float>(i);
  std::vector<TokenCandidate> buffer(n);
  Candidates candidates = load_logits(logits.data(), n, buffer.data());
  const double r = std::exp(-0.01);
  const double p = 0.5;
  const auto expected = static_cast<size_t>(std::ceil(std::log(1.0 - p * (1.0 - std::pow(r, n))) / std::log(r)));
  apply_top_p(candidates, static_cast<float>(p));
  EXPECT_EQ(candidates.size, expected);
  for (size_t i = 0; i < candidates.size; ++i) EXPECT_EQ(candidates.data[i].id, static_cast<int32_t>(i));
}

TEST(MinP, KeepsTokensAboveAFractionOfTheBest) {
  struct Case {
    float p;
    std::vector<float> expected;
  };
  const Case cases[] = {
      {0.00f, {0.1f, 0.2f, 0.3f, 0.4f}},
      {0.24f, {0.1f, 0.2f, 0.3f, 0.4f}},
      {0.26f, {0.2f / 0.9f, 0.3f / 0.9f, 0.4f / 0.9f}},
      {0.49f, {0.2f / 0.9f, 0.3f / 0.9f, 0.4f / 0.9f}},
      {0.51f, {0.3f / 0.7f, 0.4f / 0.7f}},
      {0.74f, {0.3f / 0.7f, 0.4f / 0.7f}},
      {0.76f, {1.0f}},
      {1.00f, {1.0f}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.p);
    CandidateFixture fixture = CandidateFixture::from_probabilities(kProbabilities);
    apply_min_p(fixture.candidates, c.p);
    expect_probabilities(fixture, c.expected);
  }
}

TEST(Temperature, DividesLogits) {
  CandidateFixture fixture({2.0f, -1.0f, 0.5f});
  apply_temperature(fixture.candidates, 0.5f);
  EXPECT_EQ(fixture.logits(), (std::vector<float>{4.0f, -2.0f, 1.0f}));
}

TEST(Temperature, OneLeavesProbabilitiesUnchanged) {
  CandidateFixture fixture = CandidateFixture::from_probabilities(kProbabilities);
  apply_temperature(fixture.candidates, 1.0f);
  expect_probabilities(fixture, {0.1f, 0.2f, 0.3f, 0.4f});
}

TEST(Temperature, HalfSquaresTheOddsRatios) {
  // Dividing logits by 0.5 squares each probability before renormalising:
  // {0.01, 0.04, 0.09, 0.16} / 0.30.
  CandidateFixture fixture = CandidateFixture::from_probabilities(kProbabilities);
  apply_temperature(fixture.candidates, 0.5f);
  expect_probabilities(fixture, {0.01f / 0.3f, 0.04f / 0.3f, 0.09f / 0.3f, 0.16f / 0.3f});
}

}  // namespace
}  // namespace peak::sampling
