// PCG32 (O'Neill's XSH-RR generator, 64-bit state, 32-bit output): peak's own
// random source, so a seed names the same sequence on every platform and standard
// library (std::mt19937 is portable, but std::uniform_real_distribution is not).
#pragma once

#include <cstdint>

namespace peak::sampling {

class Pcg32 {
 public:
  // Seeding as pcg32_srandom_r(seed, stream) of the reference implementation:
  // streams are independent sequences for the same seed.
  explicit Pcg32(uint64_t seed, uint64_t stream = kDefaultStream);

  uint32_t next_u32();
  // Uniform in [0, 1) with 53 random bits (two draws).
  double next_unit_double();

  static constexpr uint64_t kDefaultStream = 54;  // the stream of the reference pcg32-demo

 private:
  uint64_t state_ = 0;
  uint64_t increment_ = 0;  // always odd
};

}  // namespace peak::sampling
