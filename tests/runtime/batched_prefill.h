// Batched prefill against token-by-token decoding: the check every model runs.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/context.h"

namespace peak::test {

// Evaluates `prompt` in `batched` (a context with logits_all, so in batches of
// its n_batch with every token's logits) and token by token in `stepwise`;
// returns the largest |difference| between the two over every token's logits.
// Both contexts are left holding the prompt.
double batched_versus_stepwise(runtime::Context& batched, runtime::Context& stepwise,
                               const std::vector<int32_t>& prompt);

}  // namespace peak::test
