// The SwiGLU gate (SwiGluFn): the scalar reference against silu(g) * u in
// double precision with std::exp, over gates from far below to far above zero
// (where e^-g leaves the float range), and every SIMD path against the scalar
// one on lengths that leave vector tails, also in place.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernel_test_util.h"

namespace peak {
namespace {

using testing_util::available_isas;

std::vector<float> gates(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> range(-12.0f, 12.0f);
  std::vector<float> g(static_cast<size_t>(n));
  for (float& v : g) v = range(rng);
  const float specials[] = {0.0f, -0.0f, 100.0f, -100.0f, 1e-8f, -88.0f, 88.0f};
  for (size_t i = 0; i < g.size() && i < 7; ++i) g[i * 5 % g.size()] = specials[i];
  return g;
}

constexpr int64_t kLengths[] = {1, 7, 16, 33, 130, 3072};

TEST(SwiGlu, ScalarMatchesStdExp) {
  for (int64_t n : kLengths) {
    const std::vector<float> g = gates(n, 3), u = gates(n, 4);
    std::vector<float> out(static_cast<size_t>(n));
    float_kernels_for_isa(Isa::Scalar).swiglu(g.data(), u.data(), out.data(), n);
    for (size_t i = 0; i < out.size(); ++i) {
      const double want = g[i] / (1.0 + std::exp(-static_cast<double>(g[i]))) * u[i];
      EXPECT_NEAR(out[i], want, 1e-6 * std::fabs(want) + 1e-30) << "g = " << g[i] << ", u = " << u[i];
    }
  }
}

TEST(SwiGlu, EveryPathMatchesScalarAlsoInPlace) {
  for (Isa isa : available_isas()) {
    for (int64_t n : kLengths) {
      const std::vector<float> g = gates(n, 5), u = gates(n, 6);
      std::vector<float> want(static_cast<size_t>(n)), got(static_cast<size_t>(n));
      float_kernels_for_isa(Isa::Scalar).swiglu(g.data(), u.data(), want.data(), n);
      float_kernels_for_isa(isa).swiglu(g.data(), u.data(), got.data(), n);
      for (size_t i = 0; i < want.size(); ++i) {
        EXPECT_NEAR(got[i], want[i], 1e-6f * std::fabs(want[i]) + 1e-30f) << isa_name(isa) << " " << i;
      }
      std::vector<float> in_place = g;
      float_kernels_for_isa(isa).swiglu(in_place.data(), u.data(), in_place.data(), n);
      EXPECT_EQ(in_place, got) << isa_name(isa);
    }
  }
}

}  // namespace
}  // namespace peak
