// Softmax numerators (ExpSumFn): the scalar reference against std::exp in
// double precision over the whole range a softmax sees (0 down to below the
// float range, and -inf for masked keys), and every SIMD path against the
// scalar one, on lengths that leave vector tails. Their row maximum
// (ScaleMaxFn): every path against the definition, NaN and -inf scores
// anywhere in a vector or its tail.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <random>
#include <vector>

#include "kernel_test_util.h"

namespace peak::kernels {
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

// Scores with NaN and -inf at the given positions (those outside [0, n) ignored).
std::vector<float> scores_with(int64_t n, std::initializer_list<int64_t> nan_at, std::initializer_list<int64_t> inf_at,
                               uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> value(-40.0f, 40.0f);
  std::vector<float> x(static_cast<size_t>(n));
  for (float& v : x) v = value(rng);
  for (int64_t i : nan_at) {
    if (i >= 0 && i < n) x[static_cast<size_t>(i)] = std::numeric_limits<float>::quiet_NaN();
  }
  for (int64_t i : inf_at) {
    if (i >= 0 && i < n) x[static_cast<size_t>(i)] = -std::numeric_limits<float>::infinity();
  }
  return x;
}

// Whether a and b are the same float, NaN equal to NaN.
bool same(float a, float b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

TEST(ScaleMax, EveryPathScalesInPlaceAndReturnsTheLargestNumber) {
  const float scale = 0.088388f;  // 1 / sqrt(128), as a head of 128 takes
  for (Isa isa : available_isas()) {
    for (int64_t n : {0, 1, 5, 16, 17, 31, 64, 77, 128}) {
      for (uint32_t seed = 1; seed <= 3; ++seed) {
        std::vector<float> x = scores_with(n, {0, 3, 16, 40, n - 1}, {1, 20}, seed);
        const std::vector<float> input = x;
        const float got = float_kernels_for_isa(isa).scale_max(x.data(), n, scale);
        float want = -std::numeric_limits<float>::infinity();
        for (size_t i = 0; i < input.size(); ++i) {
          const float scaled = input[i] * scale;
          EXPECT_TRUE(same(x[i], scaled)) << isa_name(isa) << " n " << n << " i " << i;
          if (!std::isnan(scaled)) want = std::max(want, scaled);
        }
        EXPECT_EQ(got, want) << isa_name(isa) << " n " << n;
      }
    }
  }
}

TEST(ScaleMax, NothingButNaNAndMinusInfinityGivesMinusInfinity) {
  for (Isa isa : available_isas()) {
    for (int64_t n : {0, 3, 16, 35}) {
      std::vector<float> x(static_cast<size_t>(n), std::numeric_limits<float>::quiet_NaN());
      for (int64_t i = 0; i < n; i += 4) x[static_cast<size_t>(i)] = -std::numeric_limits<float>::infinity();
      EXPECT_EQ(float_kernels_for_isa(isa).scale_max(x.data(), n, 2.0f), -std::numeric_limits<float>::infinity())
          << isa_name(isa) << " n " << n;
    }
  }
}

}  // namespace
}  // namespace peak::kernels
