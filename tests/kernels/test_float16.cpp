#include "kernels/float16.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace peak::kernels {
namespace {

TEST(Float16, KnownValues) {
  EXPECT_EQ(fp32_to_fp16(0.0f), 0x0000);
  EXPECT_EQ(fp32_to_fp16(-0.0f), 0x8000);
  EXPECT_EQ(fp32_to_fp16(1.0f), 0x3c00);
  EXPECT_EQ(fp32_to_fp16(-2.0f), 0xc000);
  EXPECT_EQ(fp32_to_fp16(65504.0f), 0x7bff);
  EXPECT_EQ(fp32_to_fp16(65520.0f), 0x7c00);  // rounds up to infinity
  EXPECT_EQ(fp32_to_fp16(5.9604645e-8f), 0x0001);  // smallest subnormal
  EXPECT_EQ(fp32_to_fp16(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_EQ(fp32_to_fp16(std::nanf("")) & 0x7c00, 0x7c00);
  EXPECT_FLOAT_EQ(fp16_to_fp32(0x3555), 0.33325195f);
  EXPECT_EQ(fp16_to_fp32(0x0001), 5.9604645e-8f);
}

TEST(Float16, TiesRoundToEven) {
  // 1 + 2^-11 lies halfway between 1 and 1 + 2^-10: even mantissa (1) wins.
  EXPECT_EQ(fp32_to_fp16(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  // 1 + 3 * 2^-11 lies halfway between 1 + 2^-10 and 1 + 2^-9: 0x3c02 is even.
  EXPECT_EQ(fp32_to_fp16(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  // Subnormal tie: 1.5 * 2^-24 rounds to 2 * 2^-24.
  EXPECT_EQ(fp32_to_fp16(1.5f * 5.9604645e-8f), 0x0002);
}

TEST(Float16, EveryHalfRoundTrips) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const uint16_t half = static_cast<uint16_t>(h);
    const float f = fp16_to_fp32(half);
    if (std::isnan(f)) continue;
    ASSERT_EQ(fp32_to_fp16(f), half) << std::hex << h;
  }
}

TEST(BFloat16, RoundTripAndRounding) {
  EXPECT_EQ(fp32_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(bf16_to_fp32(0x3f80), 1.0f);
  // 1 + 2^-8 is halfway between bf16 neighbours 1 and 1 + 2^-7: rounds to even (1).
  EXPECT_EQ(fp32_to_bf16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);
  EXPECT_EQ(fp32_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);
  EXPECT_EQ(fp32_to_bf16(std::nanf("")) & 0x7fc0, 0x7fc0);
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = bf16_to_fp32(static_cast<uint16_t>(h));
    if (std::isnan(f)) continue;
    ASSERT_EQ(fp32_to_bf16(f), h);
  }
}

}  // namespace
}  // namespace peak::kernels
