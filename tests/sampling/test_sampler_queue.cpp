// llama.cpp's test_sampler_queue (tests/test-sampling.cpp), ported: a vocabulary
// of 10000 tokens with logit ln(id), so each token's probability is proportional
// to its id, run through chains of top-k (k), top-p (p) and min-p (m) in every
// order. The expected sizes and boundary ids are llama.cpp's closed-form
// formulas, checked after each stage as llama.cpp does. (Its top_p = 0 case is
// left out: peak refuses top_p outside (0, 1].)
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "sampling/sampler_chain.h"

namespace peak::sampling {
namespace {

constexpr int kVocab = 10000;

struct QueueCase {
  std::string stages;
  int top_k;
  float top_p;
  float min_p;
};

SamplerStage stage_of(char letter) {
  switch (letter) {
    case 'k': return SamplerStage::TopK;
    case 'p': return SamplerStage::TopP;
    default: return SamplerStage::MinP;
  }
}

// What llama.cpp's test asserts after one more stage, given the state before it.
struct Expected {
  int size = kVocab;
  int min_token_id = 0;
};

// `actual_size` is what the sampler left: llama.cpp's min-p formula clamps by it
// (the formula ignores that token 0, of probability 0, always falls below min-p).
Expected after_stage(char letter, const Expected& before, int actual_size, const QueueCase& c) {
  Expected next;
  if (letter == 'k') {
    next.size = std::min(before.size, c.top_k);
    next.min_token_id = std::max(before.min_token_id, kVocab - c.top_k);
  } else if (letter == 'p') {
    const int softmax_divisor = kVocab * (kVocab - 1) / 2 - before.min_token_id * (before.min_token_id - 1) / 2;
    const auto numerator_target = static_cast<int>(std::ceil(c.top_p * static_cast<float>(softmax_divisor)));
    next.min_token_id = kVocab;
    next.size = 0;
    int cumulative = 0;
    do {
      --next.min_token_id;
      ++next.size;
      cumulative += next.min_token_id;
    } while (cumulative < numerator_target);
    if (next.min_token_id == 1) {  // token 0 has probability 0 and comes along
      --next.min_token_id;
      ++next.size;
    }
  } else {
    next.size = static_cast<int>(std::ceil((1.0f - c.min_p) * static_cast<float>(kVocab)));
    next.size = std::min(std::max(next.size, 1), actual_size);
    next.min_token_id = static_cast<int>(std::floor(c.min_p * static_cast<float>(kVocab)));
    next.min_token_id = std::max(next.min_token_id, 1);
    next.min_token_id = std::max(next.min_token_id, kVocab - actual_size);
    next.min_token_id = std::min(next.min_token_id, kVocab - 1);
  }
  return next;
}

TEST(SamplerQueue, SizesAndBoundariesMatchLlamaCppFormulas) {
  const QueueCase cases[] = {
      {"k", 10000, 1.0f, 1.0f},  {"k", 1, 1.0f, 1.0f},       {"p", 10000, 1.0f, 1.0f},
      {"m", 10000, 1.0f, 1.0f},  {"m", 10000, 1.0f, 1e-12f}, {"k", 100, 1.0f, 1.0f},
      {"p", 10000, 0.0003f, 1.0f}, {"p", 10000, 0.8f, 1.0f}, {"m", 10000, 1.0f, 9997.9f / 9999.0f},
      {"m", 10000, 1.0f, 0.1f},  {"kp", 100, 0.8f, 0.1f},    {"km", 100, 0.8f, 0.1f},
      {"pk", 100, 0.8f, 0.1f},   {"pm", 100, 0.8f, 0.1f},    {"mk", 100, 0.8f, 0.1f},
      {"mp", 100, 0.8f, 9997.9f / 9999.0f}, {"mp", 100, 0.8f, 0.1f}, {"kpm", 100, 0.8f, 0.1f},
      {"kmp", 100, 0.8f, 0.1f},  {"pkm", 100, 0.8f, 0.1f},   {"pmk", 100, 0.8f, 0.1f},
      {"mkp", 100, 0.8f, 0.1f},  {"mpk", 100, 0.8f, 0.1f},
  };
  std::vector<float> logits(kVocab);
  for (int id = 0; id < kVocab; ++id) logits[static_cast<size_t>(id)] = std::log(static_cast<float>(id));

  for (const QueueCase& c : cases) {
    Expected expected;
    for (size_t n_stages = 1; n_stages <= c.stages.size(); ++n_stages) {
      const char letter = c.stages[n_stages - 1];
      SCOPED_TRACE(c.stages + " after " + letter + " (top_k " + std::to_string(c.top_k) + ", top_p " +
                   std::to_string(c.top_p) + ", min_p " + std::to_string(c.min_p) + ")");

      SamplerParams params;
      params.temperature = 1.0f;
      params.top_k = c.top_k;
      params.top_p = c.top_p;
      params.min_p = c.min_p;
      params.order.clear();
      for (size_t i = 0; i < n_stages; ++i) params.order.push_back(stage_of(c.stages[i]));
      SamplerChain chain(kVocab, params);
      chain.sample(logits.data());
      const Candidates& left = chain.last_candidates();
      expected = after_stage(letter, expected, static_cast<int>(left.size), c);
      ASSERT_EQ(left.size, static_cast<size_t>(expected.size));
      if (left.sorted) {
        EXPECT_EQ(left.data[0].id, kVocab - 1);
        EXPECT_EQ(left.data[left.size - 1].id, expected.min_token_id);
      }
    }
  }
}

}  // namespace
}  // namespace peak::sampling
