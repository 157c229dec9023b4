// Internal to kernels/: the constants of e^x for x <= 0 shared by the scalar
// and SIMD kernels, so every path evaluates the same polynomial.
// x = n ln2 + r with |r| <= ln2 / 2 and e^x = 2^n e^r; n is rounded to nearest
// by adding and removing 1.5 * 2^23; e^r is a degree-7 minimax polynomial
// (relative error about 2e-7), written 1 + r + r^2 p(r) so that e^x - 1 can
// also be had without cancelling near 0 (expm1, which tanh needs). Below
// kExpMin e^x is 0 (this also covers -inf, a masked key). Every path gives
// the same answer for any input: x above 0 counts as 0 (callers pass x <= 0),
// and NaN in gives NaN out (a NaN score must reach the caller, never read
// as a masked key; nor may it reach an integer conversion).
#pragma once

#include <cstdint>
#include <cstring>

namespace peak::kernels::exp_poly {

constexpr float kExpMin = -87.0f;
constexpr float kLog2e = 1.44269504f;
constexpr float kRound = 12582912.0f;    // 1.5 * 2^23
constexpr float kLn2High = 0.693145752f;  // ln 2 split so that n * kLn2High is exact
constexpr float kLn2Low = 1.42860677e-6f;
constexpr float kP0 = 1.98756912e-4f;
constexpr float kP1 = 1.39819994e-3f;
constexpr float kP2 = 8.33345205e-3f;
constexpr float kP3 = 4.16657962e-2f;
constexpr float kP4 = 1.66666657e-1f;
constexpr float kP5 = 5.0e-1f;

// gelu_tanh(x) = 0.5 x (1 + tanh(u)) = x sigmoid(2u) with
// 2u = 2 sqrt(2 / pi) (x + 0.044715 x^3) = x (kGeluLinear + kGeluCubic x^2).
constexpr float kGeluLinear = 1.59576912f;
constexpr float kGeluCubic = 0.0713548163f;

}  // namespace peak::kernels::exp_poly

namespace peak::kernels {

// The scalar evaluation (reference and vector tails). `static inline` (here and
// below) for the reason given in kernels/blocks.h: the per-ISA sources use it
// for their tails, and each must keep its own copy.

// x (not NaN) clamped to [kExpMin, 0].
static inline float exp_clamp_scalar(float x) {
  using namespace exp_poly;
  return x < kExpMin ? kExpMin : x > 0.0f ? 0.0f : x;
}

// x clamped to [kExpMin, 0] as n ln2 + r, and p(r) with e^r = 1 + r + r^2 p(r).
struct ExpReducedScalar {
  float n, r, p;
};

static inline ExpReducedScalar exp_reduce_scalar(float clamped) {
  using namespace exp_poly;
  const float n = (clamped * kLog2e + kRound) - kRound;
  const float r = clamped - n * kLn2High - n * kLn2Low;
  float p = kP0;
  p = p * r + kP1;
  p = p * r + kP2;
  p = p * r + kP3;
  p = p * r + kP4;
  p = p * r + kP5;
  return {n, r, p};
}

// 2^n for integral n in [-126, 127].
static inline float pow2_scalar(float n) {
  const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return scale;
}

static inline float exp_nonpositive_scalar(float x) {
  using namespace exp_poly;
  if (x != x) return x;  // NaN
  const ExpReducedScalar e = exp_reduce_scalar(exp_clamp_scalar(x));
  const float p = e.p * e.r * e.r + e.r + 1.0f;
  return x < kExpMin ? 0.0f : p * pow2_scalar(e.n);
}

// e^x - 1 for x <= 0: 2^n (e^r - 1) + (2^n - 1). For |x| <= ln2 / 2, n = 0 and
// this is r + r^2 p(r), accurate relative to x however small x is; further
// down 2^n - 1 <= -1/2 dominates and nothing cancels. Below kExpMin, -1.
static inline float expm1_nonpositive_scalar(float x) {
  if (x != x) return x;  // NaN
  const ExpReducedScalar e = exp_reduce_scalar(exp_clamp_scalar(x));
  const float scale = pow2_scalar(e.n);
  return scale * (e.p * e.r * e.r + e.r) + (scale - 1.0f);
}

// tanh|x| = (1 - e^-2|x|) / (1 + e^-2|x|) = -m / (2 + m) with m = e^-2|x| - 1,
// relative error about 3e-7 over the whole float range (m carries no
// cancellation); the sign is x's.
static inline float tanh_scalar(float x) {
  const float m = expm1_nonpositive_scalar(x < 0.0f ? 2.0f * x : -2.0f * x);
  const float t = -m / (2.0f + m);
  return x < 0.0f ? -t : t;
}

// x sigmoid(z) = x / (1 + e^-z) through e^-|z| (always in the polynomial's
// range): x / (1 + t) for z >= 0, x t / (1 + t) below, with t = e^-|z|; no
// cancellation on either side.
static inline float times_sigmoid_scalar(float x, float z) {
  const float t = exp_nonpositive_scalar(z < 0.0f ? z : -z);
  return x * (z >= 0.0f ? 1.0f : t) / (1.0f + t);
}

// silu(g) = g sigmoid(g).
static inline float silu_scalar(float g) { return times_sigmoid_scalar(g, g); }

// gelu_tanh(x) = x sigmoid(2u), see kGeluLinear.
static inline float gelu_tanh_scalar(float x) {
  using namespace exp_poly;
  return times_sigmoid_scalar(x, x * (kGeluLinear + kGeluCubic * (x * x)));
}

}  // namespace peak::kernels
