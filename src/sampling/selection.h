// The final step of a chain: choosing one token from the candidates.
#pragma once

#include <cstdint>

#include "sampling/candidates.h"
#include "sampling/pcg32.h"

namespace peak::sampling {

// The candidate of highest logit; on ties the lowest token id.
// Throws std::invalid_argument when no candidate is above -inf.
int32_t select_greedy(const Candidates& candidates);

// Draws a token with probability softmax(logit), using one uniform draw from rng
// and walking the candidates in their current order (deterministic: see
// candidates.h). Candidates of probability 0 are never drawn.
int32_t select_from_distribution(Candidates& candidates, Pcg32& rng);

// The draw select_from_distribution makes, over weights weight(candidate) >= 0
// (not normalised) whose sum is `total` > 0: one uniform draw from rng, the
// candidates walked in their order, those of weight 0 never drawn.
template <typename Weight>
int32_t select_by_weight(const Candidates& candidates, double total, Pcg32& rng, const Weight& weight) {
  const double target = rng.next_unit_double() * total;
  // Strictly above the target (llama.cpp uses >=): with a draw of exactly 0 a
  // leading candidate of weight 0 would otherwise be chosen.
  double cumulative = 0.0;
  size_t last_possible = 0;
  for (size_t i = 0; i < candidates.size; ++i) {
    const double w = weight(candidates.data[i]);
    if (w <= 0.0) continue;
    cumulative += w;
    last_possible = i;
    if (cumulative > target) return candidates.data[i].id;
  }
  // Rounding left the target at the very top of the range.
  return candidates.data[last_possible].id;
}

}  // namespace peak::sampling
