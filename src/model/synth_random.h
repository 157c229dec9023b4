// The random numbers of synthetic files (models, adapters): the same seed
// gives the same values on every platform and standard library.
#pragma once

#include <cmath>
#include <cstdint>

namespace peak::model {

// splitmix64: a tiny, portable generator, so the same seed gives the same
// weights on every platform and standard library.
struct SplitMix64 {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  // Box-Muller: one standard normal sample per call.
  float normal() {
    const double u1 = uniform() + 0x1.0p-54, u2 = uniform();
    return static_cast<float>(std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2));
  }
};

}  // namespace peak::model
