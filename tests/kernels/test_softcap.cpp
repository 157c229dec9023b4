// Soft-capping (SoftcapFn), cap * tanh(x / cap): the scalar reference against
// std::tanh in double precision, first as tanh itself (cap 1: relative error
// below 5e-7, about 1.6e-7 measured) over magnitudes from 1e-30 to beyond
// where tanh rounds to 1, then with gemma2's caps (1e-6 relative); and
// every SIMD path against the scalar one on lengths that leave vector tails,
// also in place.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernel_test_util.h"

namespace peak::kernels {
namespace {

using testing_util::available_isas;

// Zeros of both signs, then |x| swept log-evenly over [1e-30, 1e3] with
// alternating signs (small values test the relative error where tanh x ~ x,
// large ones the saturation); `shift` moves the sweep's points.
std::vector<float> arguments(int64_t n, double shift) {
  std::vector<float> x(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const double decade = -30.0 + 33.0 * (static_cast<double>(i) + shift) / static_cast<double>(n);
    const double magnitude = i < 2 ? 0.0 : std::pow(10.0, decade);
    x[static_cast<size_t>(i)] = static_cast<float>(i % 2 == 0 ? magnitude : -magnitude);
  }
  return x;
}

constexpr int64_t kLengths[] = {1, 7, 16, 33, 130, 4099};

TEST(Softcap, ScalarTanhIsWithin5e7OfStdTanh) {
  const std::vector<float> x = arguments(100000, 0.0);
  std::vector<float> out(x.size());
  float_kernels_for_isa(Isa::Scalar).softcap(x.data(), out.data(), static_cast<int64_t>(x.size()), 1.0f);
  for (size_t i = 0; i < x.size(); ++i) {
    const double want = std::tanh(static_cast<double>(x[i]));
    ASSERT_NEAR(out[i], want, 5e-7 * std::fabs(want)) << "x = " << x[i];
  }
}

TEST(Softcap, ScalarMatchesStdTanhForGemmaCaps) {
  for (float cap : {50.0f, 30.0f}) {  // gemma2's attention and final logit caps
    std::vector<float> x = arguments(4099, 0.5);
    for (size_t i = 0; i < x.size(); i += 3) x[i] *= 1000.0f;  // logits far beyond the cap too
    std::vector<float> out(x.size());
    float_kernels_for_isa(Isa::Scalar).softcap(x.data(), out.data(), static_cast<int64_t>(x.size()), cap);
    for (size_t i = 0; i < x.size(); ++i) {
      const double want = cap * std::tanh(static_cast<double>(x[i]) / cap);
      ASSERT_NEAR(out[i], want, 1e-6 * std::fabs(want)) << "cap " << cap << ", x = " << x[i];
    }
  }
}

TEST(Softcap, EveryPathMatchesScalarAlsoInPlace) {
  for (Isa isa : available_isas()) {
    for (int64_t n : kLengths) {
      const std::vector<float> x = arguments(n, 0.25);
      std::vector<float> want(x.size()), got(x.size());
      float_kernels_for_isa(Isa::Scalar).softcap(x.data(), want.data(), n, 30.0f);
      float_kernels_for_isa(isa).softcap(x.data(), got.data(), n, 30.0f);
      for (size_t i = 0; i < want.size(); ++i) {
        EXPECT_NEAR(got[i], want[i], 1e-6f * std::fabs(want[i])) << isa_name(isa) << " x = " << x[i];
      }
      std::vector<float> in_place = x;
      float_kernels_for_isa(isa).softcap(in_place.data(), in_place.data(), n, 30.0f);
      EXPECT_EQ(in_place, got) << isa_name(isa);
    }
  }
}

}  // namespace
}  // namespace peak::kernels
