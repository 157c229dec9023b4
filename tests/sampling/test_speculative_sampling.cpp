// Speculative sampling (sampling/speculative_sampling.h), checked against its
// definition: whatever the draft's distribution q, the tokens that come out
// follow the target's p. Counts of many seeded trials go through Pearson's
// chi-square test against p; the same test refuses the drafts themselves,
// which follow q, so it can tell the two apart.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <limits>
#include <vector>

#include "sampling/candidates.h"
#include "sampling/pcg32.h"
#include "sampling/speculative_sampling.h"

namespace peak::sampling {
namespace {

constexpr int32_t kVocab = 6;

// Pearson's statistic of `counts` against the probabilities `p`; infinite
// when a token of probability 0 was counted.
double chi_square(const std::array<int, kVocab>& counts, const std::array<double, kVocab>& p, int trials) {
  double x2 = 0;
  for (int32_t i = 0; i < kVocab; ++i) {
    const double expected = p[static_cast<size_t>(i)] * trials;
    if (expected == 0) {
      if (counts[static_cast<size_t>(i)] > 0) return std::numeric_limits<double>::infinity();
      continue;
    }
    const double d = counts[static_cast<size_t>(i)] - expected;
    x2 += d * d / expected;
  }
  return x2;
}

// The upper 0.1 % points of chi-square with 1..5 degrees of freedom.
double critical(int degrees) {
  static const double kPoints[] = {10.83, 13.82, 16.27, 18.47, 20.52};
  return kPoints[degrees - 1];
}

int32_t draw(const std::array<double, kVocab>& q, Pcg32& rng) {
  const double u = rng.next_unit_double();
  double cumulative = 0;
  int32_t last = 0;
  for (int32_t i = 0; i < kVocab; ++i) {
    if (q[static_cast<size_t>(i)] <= 0) continue;
    cumulative += q[static_cast<size_t>(i)];
    last = i;
    if (u < cumulative) return i;
  }
  return last;
}

struct Trial {
  std::array<int, kVocab> kept_or_drawn{};  // the tokens keep_or_resample returned
  std::array<int, kVocab> drafted{};        // the draft's tokens
  int kept = 0;
};

// p in candidate order as a chain leaves them (not sorted, not all of the
// vocabulary: tokens outside the candidates have p 0).
Trial run(const std::array<double, kVocab>& p, const std::array<double, kVocab>& q, int trials) {
  std::vector<TokenCandidate> buffer;
  for (int32_t id : {3, 0, 5, 1, 4, 2}) {
    if (p[static_cast<size_t>(id)] > 0) buffer.push_back({id, 0.0f, static_cast<float>(p[static_cast<size_t>(id)])});
  }
  const Candidates candidates{buffer.data(), buffer.size(), false};
  std::array<float, kVocab> dense{};
  for (size_t i = 0; i < dense.size(); ++i) dense[i] = static_cast<float>(q[i]);
  Pcg32 draft_rng(7, 1001);
  Pcg32 target_rng(7);
  Trial t;
  for (int n = 0; n < trials; ++n) {
    const int32_t x = draw(q, draft_rng);
    const int32_t token = keep_or_resample(candidates, x, dense.data(), target_rng);
    ++t.drafted[static_cast<size_t>(x)];
    ++t.kept_or_drawn[static_cast<size_t>(token)];
    if (token == x) ++t.kept;
  }
  return t;
}

TEST(SpeculativeSampling, TokensFollowTheTargetsDistributionWhateverTheDraft) {
  constexpr int kTrials = 200000;
  const std::array<double, kVocab> p{0.05, 0.40, 0.0, 0.25, 0.20, 0.10};
  struct Case {
    const char* name;
    std::array<double, kVocab> q;
  };
  // q close to p, far from it, with mass where p has none (token 2), and
  // without mass where p has some (tokens 0 and 5).
  for (const Case& c :
       {Case{"close", {0.06, 0.38, 0.0, 0.26, 0.19, 0.11}}, Case{"far", {0.30, 0.05, 0.0, 0.05, 0.30, 0.30}},
        Case{"outside p", {0.05, 0.20, 0.40, 0.15, 0.10, 0.10}}, Case{"narrower", {0.0, 0.70, 0.0, 0.30, 0.0, 0.0}}}) {
    SCOPED_TRACE(c.name);
    const Trial t = run(p, c.q, kTrials);
    EXPECT_LT(chi_square(t.kept_or_drawn, p, kTrials), critical(4));
    EXPECT_GT(chi_square(t.drafted, p, kTrials), critical(4)) << "the drafts themselves follow q, not p";
    // Kept with probability sum_x min(p(x), q(x)).
    double overlap = 0;
    for (size_t i = 0; i < p.size(); ++i) overlap += std::min(p[i], c.q[i]);
    EXPECT_NEAR(static_cast<double>(t.kept) / kTrials, overlap, 0.005);
  }
}

TEST(SpeculativeSampling, AnEqualDraftIsAlwaysKeptAndAnImpossibleOneNever) {
  const std::array<double, kVocab> p{0.05, 0.40, 0.0, 0.25, 0.20, 0.10};
  const Trial same = run(p, p, 20000);
  EXPECT_EQ(same.kept, 20000);
  // Every draft is token 2, which p excludes: always refused, drawn from p.
  const Trial impossible = run(p, {0, 0, 1, 0, 0, 0}, 20000);
  EXPECT_EQ(impossible.kept, 0);
  EXPECT_LT(chi_square(impossible.kept_or_drawn, p, 20000), critical(4));
}

}  // namespace
}  // namespace peak::sampling
