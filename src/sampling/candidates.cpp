#include "sampling/candidates.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace peak::sampling {

Candidates load_logits(const float* logits, int32_t n_vocab, TokenCandidate* buffer) {
  for (int32_t id = 0; id < n_vocab; ++id) {
    const float logit = logits[id];
    buffer[id] = TokenCandidate{id, std::isnan(logit) ? -std::numeric_limits<float>::infinity() : logit, 0.0f};
  }
  return Candidates{buffer, static_cast<size_t>(n_vocab), false};
}

bool has_selectable(const Candidates& candidates) {
  for (size_t i = 0; i < candidates.size; ++i) {
    if (candidates.data[i].logit > -std::numeric_limits<float>::infinity()) return true;
  }
  return false;
}

void sort_best(Candidates& candidates, size_t k) {
  if (candidates.sorted) return;
  k = std::min(k, candidates.size);
  std::partial_sort(candidates.data, candidates.data + k, candidates.data + candidates.size, ranks_before);
  if (k == candidates.size) candidates.sorted = true;
}

void softmax(Candidates& candidates) {
  float max_logit = -std::numeric_limits<float>::infinity();
  for (size_t i = 0; i < candidates.size; ++i) max_logit = std::max(max_logit, candidates.data[i].logit);
  if (!(max_logit > -std::numeric_limits<float>::infinity())) {
    throw std::invalid_argument("sampling: every logit is NaN or -inf, no token can be chosen");
  }
  const bool infinite_max = std::isinf(max_logit);
  double sum = 0.0;
  for (size_t i = 0; i < candidates.size; ++i) {
    TokenCandidate& c = candidates.data[i];
    if (infinite_max) {
      c.p = c.logit == max_logit ? 1.0f : 0.0f;
    } else {
      c.p = std::exp(c.logit - max_logit);
    }
    sum += c.p;
  }
  for (size_t i = 0; i < candidates.size; ++i) {
    candidates.data[i].p = static_cast<float>(candidates.data[i].p / sum);
  }
}

}  // namespace peak::sampling
