// Speculative sampling: a token drafted by another model is checked against
// the distribution the target samples from, so that speculative decoding at a
// temperature above 0 keeps the target's distribution exactly.
//
// A token x drawn from the draft's distribution q is kept with probability
// min(1, p(x) / q(x)); when it is refused, the token is drawn from the
// residual max(0, p - q), normalised. Whatever q is, the token that comes out
// has distribution p (Leviathan, Kalman and Matias 2023; Chen et al. 2023), and
// a draft close to p is kept most of the time.
#pragma once

#include <cstdint>

#include "sampling/candidates.h"
#include "sampling/pcg32.h"

namespace peak::sampling {

// `p`: the target's candidates with their probabilities (softmax() done; ids
// in [0, n_vocab)). `q`: the draft's probability of every token id, dense
// (n_vocab entries), q[drafted] > 0 as the draft drew it. Returns `drafted` or
// a token of the residual. Uses one uniform draw to decide, a second only on
// refusal. When rounding leaves no residual (p and q equal where p is
// positive), or q[drafted] is 0 (no draw of q), the token is drawn from p.
int32_t keep_or_resample(const Candidates& p, int32_t drafted, const float* q, Pcg32& rng);

}  // namespace peak::sampling
