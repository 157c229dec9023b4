#include "batched_prefill.h"

#include <algorithm>
#include <cmath>

namespace peak::test {

double batched_versus_stepwise(runtime::Context& batched, runtime::Context& stepwise,
                               const std::vector<int32_t>& prompt) {
  const auto n = static_cast<int64_t>(prompt.size());
  const int64_t n_vocab = batched.n_vocab();
  std::vector<float> all(static_cast<size_t>(n * n_vocab));
  batched.eval(prompt.data(), n, all.data());
  double max_diff = 0;
  for (int64_t i = 0; i < n; ++i) {
    stepwise.eval(&prompt[static_cast<size_t>(i)], 1);
    for (int64_t v = 0; v < n_vocab; ++v) {
      const float expected = all[static_cast<size_t>(i * n_vocab + v)];
      max_diff = std::max(max_diff, static_cast<double>(std::abs(stepwise.logits()[v] - expected)));
    }
  }
  return max_diff;
}

}  // namespace peak::test
