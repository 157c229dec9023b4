#include "sampling/selection.h"

#include <stdexcept>

namespace peak::sampling {

int32_t select_greedy(const Candidates& candidates) {
  if (!has_selectable(candidates)) {
    throw std::invalid_argument("sampling: every logit is NaN or -inf, no token can be chosen");
  }
  const TokenCandidate* best = candidates.data;
  for (size_t i = 1; i < candidates.size; ++i) {
    if (ranks_before(candidates.data[i], *best)) best = &candidates.data[i];
  }
  return best->id;
}

int32_t select_from_distribution(Candidates& candidates, Pcg32& rng) {
  softmax(candidates);
  double total = 0.0;
  for (size_t i = 0; i < candidates.size; ++i) total += candidates.data[i].p;
  return select_by_weight(candidates, total, rng, [](const TokenCandidate& c) { return double{c.p}; });
}

}  // namespace peak::sampling
