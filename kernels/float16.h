// Scalar conversions between float and the two 16-bit float formats GGUF uses:
// IEEE binary16 ("F16", ggml_half) and bfloat16 ("BF16"). Both directions round
// to nearest even, which is what the hardware converters (F16C, NEON fcvt) and
// ggml's reference quantizers do, so quantized scales come out bit-identical.
#pragma once

#include <cstdint>
#include <cstring>

namespace peak::kernels {

// `static inline` for the reason given in kernels/blocks.h: per-ISA sources use
// these too, and each must keep its own copy.

static inline uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

static inline float float_from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// binary16 -> float: exact (every half is representable as a float).
static inline float fp16_to_fp32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  const uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0) {
    // Zero or subnormal: mantissa * 2^-24, exact in float.
    const float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-8f;
    return float_from_bits(sign | float_bits(magnitude));
  }
  if (exponent == 31) return float_from_bits(sign | 0x7f800000u | (mantissa << 13));  // inf, NaN
  return float_from_bits(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

// float -> binary16, round to nearest even; overflow gives infinity, NaN stays NaN.
static inline uint16_t fp32_to_fp16(float f) {
  uint32_t x = float_bits(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  x &= 0x7fffffffu;
  if (x >= 0x7f800000u) return static_cast<uint16_t>(sign | (x > 0x7f800000u ? 0x7e00u : 0x7c00u));
  if (x >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 65520 rounds to inf
  if (x < 0x38800000u) {
    // Below 2^-14: the half is subnormal. Adding 0.5 puts the value's 2^-24 units
    // into the low mantissa bits of the sum, and the float adder rounds them to
    // nearest even for us.
    const float shifted = float_from_bits(x) + 0.5f;
    return static_cast<uint16_t>(sign | (float_bits(shifted) - 0x3f000000u));
  }
  // Normal: rebias the exponent (127 -> 15) and round the 13 dropped bits to even.
  const uint32_t odd = (x >> 13) & 1u;
  x += 0xc8000fffu + odd;  // -(112 << 23) + 0xfff + odd, modulo 2^32
  return static_cast<uint16_t>(sign | (x >> 13));
}

static inline float bf16_to_fp32(uint16_t h) { return float_from_bits(static_cast<uint32_t>(h) << 16); }

// float -> bfloat16, round to nearest even; NaN is kept quiet (as ggml does).
static inline uint16_t fp32_to_bf16(float f) {
  const uint32_t x = float_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

}  // namespace peak::kernels
