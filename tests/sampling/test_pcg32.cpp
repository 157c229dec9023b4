#include <gtest/gtest.h>

#include <cstdint>

#include "sampling/pcg32.h"

namespace peak::sampling {
namespace {

// The published output of the reference pcg32-demo (pcg-c-basic) for seed 42,
// stream 54: "32bit: 0xa15c02b7 0x7b47f409 0xba1d3330 0x83d2f293 0xbfa4784b 0xcbed606e".
TEST(Pcg32, MatchesReferenceDemoOutput) {
  Pcg32 rng(42, 54);
  const uint32_t expected[] = {0xa15c02b7u, 0x7b47f409u, 0xba1d3330u, 0x83d2f293u, 0xbfa4784bu, 0xcbed606eu};
  for (uint32_t value : expected) EXPECT_EQ(rng.next_u32(), value);
}

TEST(Pcg32, DefaultStreamIsTheDemoStream) {
  Pcg32 with_default(42);
  Pcg32 with_54(42, 54);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(with_default.next_u32(), with_54.next_u32());
}

TEST(Pcg32, UnitDoubleTakesTheTop53BitsOfTwoDraws) {
  Pcg32 rng(42, 54);
  // (0xa15c02b7'7b47f409 >> 11) / 2^53, from the reference values above.
  const double expected = static_cast<double>(0xa15c02b77b47f409ULL >> 11) / 9007199254740992.0;
  EXPECT_EQ(rng.next_unit_double(), expected);
  EXPECT_NEAR(expected, 0.630310, 1e-6);  // 2707161783 / 2^32 = 0.63031...
}

TEST(Pcg32, UnitDoubleStaysInHalfOpenInterval) {
  Pcg32 rng(7);
  for (int i = 0; i < 100000; ++i) {
    const double u = rng.next_unit_double();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
  }
}

TEST(Pcg32, StreamsDiffer) {
  Pcg32 a(42, 1);
  Pcg32 b(42, 2);
  int equal = 0;
  for (int i = 0; i < 16; ++i) equal += a.next_u32() == b.next_u32() ? 1 : 0;
  EXPECT_LT(equal, 2);
}

}  // namespace
}  // namespace peak::sampling
