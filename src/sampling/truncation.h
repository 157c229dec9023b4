// Samplers that reshape or shrink the candidate list before the final choice,
// with llama.cpp's semantics (src/llama-sampling.cpp). None allocates.
#pragma once

#include <cstdint>

#include "sampling/candidates.h"

namespace peak::sampling {

// Keeps the k candidates of highest logit, sorted. k <= 0 keeps everything.
void apply_top_k(Candidates& candidates, int32_t k);

// Nucleus: keeps the smallest prefix of the candidates sorted by probability
// whose cumulative probability reaches p (at least one). p >= 1 keeps everything.
void apply_top_p(Candidates& candidates, float p);

// Keeps the candidates whose probability is at least p times the highest one,
// i.e. logit >= max_logit + ln(p); order is kept. p <= 0 keeps everything.
void apply_min_p(Candidates& candidates, float p);

// Divides every logit by temperature (> 0): below 1 sharpens, above 1 flattens.
void apply_temperature(Candidates& candidates, float temperature);

}  // namespace peak::sampling
