// The float kernels built on the exp polynomial (softmax numerators, SwiGLU,
// GeGLU, soft-capping) on NaN, +-Inf and huge inputs: NaN in gives NaN out on
// every path, never 0 (a NaN attention score must not read as a masked key)
// and never a NaN converted to an integer (undefined in the scalar code, which
// UBSan reports); Inf and huge values give what the limits of the formulas
// give; and every SIMD path agrees with the scalar one, tails included.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "kernel_test_util.h"

namespace peak::kernels {
namespace {

using testing_util::available_isas;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// Specials among ordinary values, 37 long so that every path has a tail.
std::vector<float> hostile_inputs() {
  const float specials[] = {kNaN, kInf, -kInf, 1e30f, -1e30f, 3.4e38f, -3.4e38f, 200.0f, -200.0f, 88.5f, -88.5f,
                            0.0f, -0.0f, 1e-40f, -1e-40f, 87.0f, -87.0f};
  std::vector<float> x;
  for (int i = 0; i < 37; ++i) x.push_back(i < 17 ? specials[i] : 0.37f * static_cast<float>(i - 27));
  return x;
}

// Equal, counting NaN as equal to NaN; else within a relative 1e-6.
void expect_same(float got, float want, const char* what, Isa isa, size_t i) {
  if (std::isnan(want)) {
    EXPECT_TRUE(std::isnan(got)) << what << " " << isa_name(isa) << " element " << i << ": " << got;
  } else if (std::isinf(want)) {
    EXPECT_EQ(got, want) << what << " " << isa_name(isa) << " element " << i;
  } else {
    EXPECT_NEAR(got, want, 1e-6f * std::fabs(want) + 1e-37f) << what << " " << isa_name(isa) << " element " << i;
  }
}

TEST(NonFiniteFloats, ExpSumGivesNaNForNaNAndZeroForMinusInfinity) {
  const std::vector<float> input = hostile_inputs();
  for (Isa isa : available_isas()) {
    // Against a finite maximum: x - max runs over every special, including
    // positive ones (which the kernels count as 0).
    std::vector<float> x = input;
    const float sum = float_kernels_for_isa(isa).exp_sum(x.data(), static_cast<int64_t>(x.size()), 1.0f);
    EXPECT_TRUE(std::isnan(sum)) << isa_name(isa);
    EXPECT_TRUE(std::isnan(x[0])) << isa_name(isa) << ": NaN score";
    EXPECT_EQ(x[2], 0.0f) << isa_name(isa) << ": -inf score (a masked key)";
    EXPECT_EQ(x[4], 0.0f) << isa_name(isa);
    EXPECT_FLOAT_EQ(x[11], std::exp(-1.0f)) << isa_name(isa);
    std::vector<float> want = input;
    float_kernels_for_isa(Isa::Scalar).exp_sum(want.data(), static_cast<int64_t>(want.size()), 1.0f);
    for (size_t i = 0; i < x.size(); ++i) expect_same(x[i], want[i], "exp_sum", isa, i);
    // Against an infinite maximum (an infinite score): inf - inf is NaN.
    std::vector<float> y = input;
    EXPECT_TRUE(std::isnan(float_kernels_for_isa(isa).exp_sum(y.data(), static_cast<int64_t>(y.size()), kInf)));
  }
}

TEST(NonFiniteFloats, GatesAndSoftcapPropagateNaNAndMatchTheScalarPath) {
  const std::vector<float> x = hostile_inputs();
  const std::vector<float> up(x.size(), 1.5f);
  const auto n = static_cast<int64_t>(x.size());
  std::vector<float> want_swiglu(x.size()), want_geglu(x.size()), want_softcap(x.size());
  const FloatKernels& scalar = float_kernels_for_isa(Isa::Scalar);
  scalar.swiglu(x.data(), up.data(), want_swiglu.data(), n);
  scalar.geglu(x.data(), up.data(), want_geglu.data(), n);
  scalar.softcap(x.data(), want_softcap.data(), n, 30.0f);
  // Against the formulas' limits where they are plain.
  EXPECT_TRUE(std::isnan(want_swiglu[0]) && std::isnan(want_geglu[0]) && std::isnan(want_softcap[0]));
  EXPECT_EQ(want_swiglu[1], kInf);
  EXPECT_EQ(want_softcap[1], 30.0f);
  EXPECT_EQ(want_softcap[2], -30.0f);
  EXPECT_FLOAT_EQ(want_softcap[3], 30.0f);
  EXPECT_FLOAT_EQ(want_swiglu[7], 300.0f);
  EXPECT_EQ(want_swiglu[8], -0.0f * 1.5f);
  for (Isa isa : available_isas()) {
    const FloatKernels& k = float_kernels_for_isa(isa);
    std::vector<float> got(x.size());
    k.swiglu(x.data(), up.data(), got.data(), n);
    for (size_t i = 0; i < x.size(); ++i) expect_same(got[i], want_swiglu[i], "swiglu", isa, i);
    k.geglu(x.data(), up.data(), got.data(), n);
    for (size_t i = 0; i < x.size(); ++i) expect_same(got[i], want_geglu[i], "geglu", isa, i);
    k.softcap(x.data(), got.data(), n, 30.0f);
    for (size_t i = 0; i < x.size(); ++i) expect_same(got[i], want_softcap[i], "softcap", isa, i);
  }
}

}  // namespace
}  // namespace peak::kernels
