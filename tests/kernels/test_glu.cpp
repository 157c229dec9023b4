// The gated linear units' gates, SwiGluFn (silu) and GeGluFn (gelu_tanh): each
// scalar reference against its definition in double precision, over gates
// from far below to far above zero (where e^-g leaves the float range), and
// every SIMD path against the scalar one on lengths that leave vector tails,
// also in place.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernel_test_util.h"

namespace peak::kernels {
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

// Both activations are g sigmoid(z): silu with z = g; gelu_tanh, defined as
// 0.5 g (1 + tanh(u)) with u = sqrt(2/pi) (g + 0.044715 g^3), with z = 2u
// (1 + tanh(u) = 2 / (1 + e^-2u)). The reference takes that form because in
// double 1 + tanh(u) cancels to nothing where u is far below zero.
double silu_argument(double g) { return g; }
constexpr double kPi = 3.14159265358979323846;
double gelu_argument(double g) { return 2.0 * std::sqrt(2.0 / kPi) * (g + 0.044715 * g * g * g); }

struct Gate {
  const char* name;
  SwiGluFn FloatKernels::*kernel;  // GeGluFn is the same function type
  double (*sigmoid_argument)(double);
};
const Gate kGates[] = {{"swiglu", &FloatKernels::swiglu, silu_argument},
                       {"geglu", &FloatKernels::geglu, gelu_argument}};

// 1e-6 relative, plus what rounding z to float costs: the result moves by
// (1 - sigmoid(z)) |dz| relative, and the kernels' z carries about two float
// roundings (z = g for silu carries none).
double allowed_error(const Gate& gate, float g, double want) {
  const double z = gate.sigmoid_argument(g);
  const double z_rounding = gate.sigmoid_argument == silu_argument ? 0.0 : std::fabs(z) * 0x1p-22;
  return (1e-6 + z_rounding) * std::fabs(want) + 1e-30;
}

TEST(GatedUnits, ScalarMatchesDefinitionInDouble) {
  for (const Gate& gate : kGates) {
    for (int64_t n : kLengths) {
      const std::vector<float> g = gates(n, 3), u = gates(n, 4);
      std::vector<float> out(static_cast<size_t>(n));
      (float_kernels_for_isa(Isa::Scalar).*gate.kernel)(g.data(), u.data(), out.data(), n);
      for (size_t i = 0; i < out.size(); ++i) {
        const double z = gate.sigmoid_argument(g[i]);
        const double want = g[i] / (1.0 + std::exp(-z)) * u[i];
        EXPECT_NEAR(out[i], want, allowed_error(gate, g[i], want)) << gate.name << ": g = " << g[i] << ", u = " << u[i];
      }
    }
  }
}

TEST(GatedUnits, EveryPathMatchesScalarAlsoInPlace) {
  for (const Gate& gate : kGates) {
    for (Isa isa : available_isas()) {
      for (int64_t n : kLengths) {
        const std::vector<float> g = gates(n, 5), u = gates(n, 6);
        std::vector<float> want(static_cast<size_t>(n)), got(static_cast<size_t>(n));
        (float_kernels_for_isa(Isa::Scalar).*gate.kernel)(g.data(), u.data(), want.data(), n);
        (float_kernels_for_isa(isa).*gate.kernel)(g.data(), u.data(), got.data(), n);
        for (size_t i = 0; i < want.size(); ++i) {
          EXPECT_NEAR(got[i], want[i], allowed_error(gate, g[i], want[i])) << gate.name << " " << isa_name(isa) << " " << i;
        }
        std::vector<float> in_place = g;
        (float_kernels_for_isa(isa).*gate.kernel)(in_place.data(), u.data(), in_place.data(), n);
        EXPECT_EQ(in_place, got) << gate.name << " " << isa_name(isa);
      }
    }
  }
}

}  // namespace
}  // namespace peak::kernels
