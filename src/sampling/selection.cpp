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
  const double target = rng.next_unit_double() * total;
  // Strictly above the target (llama.cpp uses >=): with a draw of exactly 0 a
  // leading candidate of probability 0 would otherwise be chosen.
  double cumulative = 0.0;
  size_t last_possible = 0;
  for (size_t i = 0; i < candidates.size; ++i) {
    if (candidates.data[i].p <= 0.0f) continue;
    cumulative += candidates.data[i].p;
    last_possible = i;
    if (cumulative > target) return candidates.data[i].id;
  }
  // Rounding left the target at the very top of the range.
  return candidates.data[last_possible].id;
}

}  // namespace peak::sampling
