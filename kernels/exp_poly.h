// Internal to kernels/: the constants of e^x for x <= 0 shared by the scalar
// and SIMD softmax kernels, so every path evaluates the same polynomial.
// x = n ln2 + r with |r| <= ln2 / 2 and e^x = 2^n e^r; n is rounded to nearest
// by adding and removing 1.5 * 2^23; e^r is a degree-7 minimax polynomial
// (relative error about 2e-7). Below kExpMin the result is 0 (this also covers
// -inf, a masked key).
#pragma once

#include <cstdint>
#include <cstring>

namespace peak::exp_poly {

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

}  // namespace peak::exp_poly

namespace peak {

// The scalar evaluation (reference and vector tails). `static inline` (here and
// below) for the reason given in kernels/blocks.h: the per-ISA sources use it
// for their tails, and each must keep its own copy.
static inline float exp_nonpositive_scalar(float x) {
  using namespace exp_poly;
  const float clamped = x < kExpMin ? kExpMin : x;
  const float n = (clamped * kLog2e + kRound) - kRound;
  const float r = clamped - n * kLn2High - n * kLn2Low;
  float p = kP0;
  p = p * r + kP1;
  p = p * r + kP2;
  p = p * r + kP3;
  p = p * r + kP4;
  p = p * r + kP5;
  p = p * r * r + r + 1.0f;
  const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return x < kExpMin ? 0.0f : p * scale;
}

// silu(g) = g / (1 + e^-g) through e^-|g| (always in the polynomial's range):
// g / (1 + t) for g >= 0, g t / (1 + t) below, with t = e^-|g|.
static inline float silu_scalar(float g) {
  const float t = exp_nonpositive_scalar(g < 0.0f ? g : -g);
  return g * (g >= 0.0f ? 1.0f : t) / (1.0f + t);
}

}  // namespace peak
