#include "sampling/speculative_sampling.h"

#include <algorithm>

#include "sampling/selection.h"

namespace peak::sampling {

int32_t keep_or_resample(const Candidates& p, int32_t drafted, const float* q, Pcg32& rng) {
  double p_drafted = 0.0;
  double p_total = 0.0;
  for (size_t i = 0; i < p.size; ++i) {
    p_total += p.data[i].p;
    if (p.data[i].id == drafted) p_drafted = p.data[i].p;
  }
  const auto from_p = [](const TokenCandidate& t) { return double{t.p}; };
  const double q_drafted = q[drafted];
  if (q_drafted <= 0.0) return select_by_weight(p, p_total, rng, from_p);  // not a draw of q: no draft to keep
  p_drafted /= p_total;  // the stages' probabilities sum to 1 up to rounding
  if (rng.next_unit_double() * q_drafted < p_drafted) return drafted;
  const auto residual = [&](const TokenCandidate& t) {
    return std::max(0.0, static_cast<double>(t.p) / p_total - static_cast<double>(q[t.id]));
  };
  double residual_total = 0.0;
  for (size_t i = 0; i < p.size; ++i) residual_total += residual(p.data[i]);
  if (residual_total <= 0.0) return select_by_weight(p, p_total, rng, from_p);
  return select_by_weight(p, residual_total, rng, residual);
}

}  // namespace peak::sampling
