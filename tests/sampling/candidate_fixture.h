// Candidate lists for the sampler tests. from_probabilities builds them as
// llama.cpp's tests/test-sampling.cpp does (logit = ln p), so its expected
// values apply unchanged.
#pragma once

#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "sampling/candidates.h"

namespace peak::sampling::testing {

class CandidateFixture {
 public:
  explicit CandidateFixture(std::vector<float> logits) : logits_(std::move(logits)), buffer_(logits_.size()) {
    candidates = load_logits(logits_.data(), static_cast<int32_t>(logits_.size()), buffer_.data());
  }
  static CandidateFixture from_probabilities(const std::vector<float>& probabilities) {
    std::vector<float> logits;
    for (float p : probabilities) logits.push_back(std::log(p));
    return CandidateFixture(std::move(logits));
  }
  // candidates points into buffer_: the fixture must stay where it was built.
  Candidates candidates;

  CandidateFixture(const CandidateFixture&) = delete;
  CandidateFixture& operator=(const CandidateFixture&) = delete;

  // Probabilities of the candidates left, in their current order (as llama.cpp's
  // tester reads them after its final softmax).
  std::vector<float> probabilities() {
    softmax(candidates);
    std::vector<float> out;
    for (size_t i = 0; i < candidates.size; ++i) out.push_back(candidates.data[i].p);
    return out;
  }

  std::vector<int32_t> ids() const {
    std::vector<int32_t> out;
    for (size_t i = 0; i < candidates.size; ++i) out.push_back(candidates.data[i].id);
    return out;
  }

  std::vector<float> logits() const {
    std::vector<float> out;
    for (size_t i = 0; i < candidates.size; ++i) out.push_back(candidates.data[i].logit);
    return out;
  }

 private:
  std::vector<float> logits_;
  std::vector<TokenCandidate> buffer_;
};

}  // namespace peak::sampling::testing
