#include "sampling/truncation.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace peak::sampling {

void apply_top_k(Candidates& candidates, int32_t k) {
  if (k <= 0) return;
  const size_t keep = std::min(static_cast<size_t>(k), candidates.size);
  sort_best(candidates, keep);
  candidates.size = keep;
  candidates.sorted = true;
}

void apply_top_p(Candidates& candidates, float p) {
  if (p >= 1.0f) return;
  softmax(candidates);
  // Sorting the whole vocabulary is wasted work when the nucleus is small, so
  // order it in growing chunks, each the best of what is left, until the
  // cumulative probability reaches p.
  constexpr size_t kFirstChunk = 64;
  size_t ordered = candidates.sorted ? candidates.size : 0;
  float cumulative = 0.0f;
  size_t keep = candidates.size;
  for (size_t i = 0; i < candidates.size; ++i) {
    if (i == ordered) {
      const size_t chunk_end = std::min(candidates.size, i + std::max(kFirstChunk, ordered));
      std::partial_sort(candidates.data + i, candidates.data + chunk_end, candidates.data + candidates.size,
                        ranks_before);
      ordered = chunk_end;
    }
    cumulative += candidates.data[i].p;
    if (cumulative >= p) {
      keep = i + 1;
      break;
    }
  }
  candidates.size = keep;
  candidates.sorted = true;
}

void apply_min_p(Candidates& candidates, float p) {
  if (p <= 0.0f || candidates.size == 0) return;
  float max_logit = -std::numeric_limits<float>::infinity();
  for (size_t i = 0; i < candidates.size; ++i) max_logit = std::max(max_logit, candidates.data[i].logit);
  const float min_logit = max_logit + std::log(p);
  size_t kept = 0;
  for (size_t i = 0; i < candidates.size; ++i) {
    if (candidates.data[i].logit >= min_logit) candidates.data[kept++] = candidates.data[i];
  }
  candidates.size = kept;  // never 0: the maximum itself passes since ln(p) <= 0
}

void apply_temperature(Candidates& candidates, float temperature) {
  for (size_t i = 0; i < candidates.size; ++i) candidates.data[i].logit /= temperature;
}

}  // namespace peak::sampling
