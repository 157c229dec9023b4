// Softmax numerators (ExpSumFn): the scalar reference against std::exp in
// double precision over the whole range a softmax sees (0 down to below the
// float range, and -inf for masked keys), and every SIMD path against the
// scalar one, on lengths that leave vector tails.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "kernel_test_util.h"

namespace peak {
namespace {

using testing_util::available_isas;

// Values relative to a row maximum `max`: x - max spans [-100, 0], plus the
// maximum itself, -inf, and values just around the float range's end.
std::vector<float> scores(int64_t n, float max, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> below(-100.0f, 0.0f);
  std::vector<float> x(static_cast<size_t>(n));
  for (float& v : x) v = max + below(rng);
  const float specials[] = {max, -std::numeric_limits<float>::infinity(), max - 86.9f, max - 87.1f, max - 0.5f};
  for (size_t i = 0; i < x.size() && i < 5; ++i) x[i * 3 % x.size()] = specials[i];
  return x;
}

constexpr int64_t kLengths[] = {1, 7, 16, 33, 130};

TEST(SoftmaxExp, ScalarMatchesStdExp) {
  for (int64_t n : kLengths) {
    const float max = 3.5f;
    std::vector<float> x = scores(n, max, 7);
    const std::vector<float> input = x;
    const float sum = float_kernels_for_isa(Isa::Scalar).exp_sum(x.data(), n, max);
    double want_sum = 0.0;
    for (size_t i = 0; i < x.size(); ++i) {
      const double want = input[i] - max < -87.0f ? 0.0 : std::exp(static_cast<double>(input[i]) - max);
      EXPECT_NEAR(x[i], want, 1e-6 * want + 1e-37) << "x - max = " << input[i] - max;
      want_sum += want;
    }
    EXPECT_NEAR(sum, want_sum, 1e-6 * want_sum);
  }
}

TEST(SoftmaxExp, EveryPathMatchesScalar) {
  for (Isa isa : available_isas()) {
    for (int64_t n : kLengths) {
      std::vector<float> want = scores(n, -2.0f, 9);
      std::vector<float> got = want;
      const float want_sum = float_kernels_for_isa(Isa::Scalar).exp_sum(want.data(), n, -2.0f);
      const float got_sum = float_kernels_for_isa(isa).exp_sum(got.data(), n, -2.0f);
      for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6f * want[i]) << isa_name(isa) << " " << i;
      EXPECT_NEAR(got_sum, want_sum, 1e-6f * want_sum) << isa_name(isa);
    }
  }
}

}  // namespace
}  // namespace peak
