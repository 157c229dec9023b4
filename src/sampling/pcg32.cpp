#include "sampling/pcg32.h"

namespace peak::sampling {

namespace {
constexpr uint64_t kMultiplier = 6364136223846793005ULL;
}

Pcg32::Pcg32(uint64_t seed, uint64_t stream) : increment_((stream << 1u) | 1u) {
  next_u32();
  state_ += seed;
  next_u32();
}

uint32_t Pcg32::next_u32() {
  const uint64_t old = state_;
  state_ = old * kMultiplier + increment_;
  const auto xorshifted = static_cast<uint32_t>(((old >> 18u) ^ old) >> 27u);
  const auto rotation = static_cast<uint32_t>(old >> 59u);
  return (xorshifted >> rotation) | (xorshifted << ((32u - rotation) & 31u));
}

double Pcg32::next_unit_double() {
  const uint64_t high = next_u32();
  const uint64_t low = next_u32();
  const uint64_t bits53 = ((high << 32u) | low) >> 11u;
  return static_cast<double>(bits53) * 0x1.0p-53;
}

}  // namespace peak::sampling
