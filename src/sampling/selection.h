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

}  // namespace peak::sampling
